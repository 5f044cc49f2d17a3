"""The response bodies of a vLLM or OpenAI server read as TokenScores: positions off the body, then one builder.

Used by explorer/export/read/documents.py (which detects the shape); see its docstring for what is kept and what is said.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from explorer.errors import ExplorerError
from explorer.floats import value_from_json
from explorer.results.scores import TokenScores

MAX_POSITIONS = 50_000
MAX_WIDTH = 64  # alternatives kept per position (the best by logprob)
MAX_ENTRIES = 8_000_000  # alternatives read over the whole body (a full-vocabulary body is large)
MAX_NAME = 200
_HEX_ESCAPE = re.compile(rb"\\x([0-9a-fA-F]{2})")
_TOKEN_ID = re.compile(r"^token_id:(\d{1,9})$")
UNKNOWN = b"[?]"  # the text shown for a token the body names neither by id nor by text


def bad(why: str) -> ExplorerError:
    return ExplorerError(f"This file could not be opened: {why}.")


def is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# ---- positions read off a body, then one builder ---------------------------------------------------
@dataclass
class Entry:
    id: int | None  # None: the body names the token by its text only
    piece: bytes | None  # None: the body does not give its text
    logprob: float | None
    rank: int | None = None


@dataclass
class Position:
    token: Entry
    top: list[Entry]
    exact_top: bool = True  # the listed alternatives are the true top-k (OpenAI chat); else the actual may be extra


class Positions:
    """Positions read off a body, bounded."""

    def __init__(self) -> None:
        self.items: list[Position] = []
        self.entries = 0

    def add(self, p: Position) -> None:
        self.entries += len(p.top) + 1
        if len(self.items) >= MAX_POSITIONS or self.entries > MAX_ENTRIES:
            raise bad(f"it holds more than {MAX_POSITIONS:,} tokens or {MAX_ENTRIES:,} alternatives")
        self.items.append(p)


def piece_of(text: object) -> bytes:
    """A token's bytes from its text as vLLM writes it (bytes that are not UTF-8 on their own as literal \\xNN)."""
    if not isinstance(text, str) or len(text) > 1024:
        raise bad("a token's text must be a string of at most 1,024 characters")
    return _HEX_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8", errors="replace"))


def text_entry(text: object, logprob: object, rank: object = None, id_: object = None) -> Entry:
    """One token as a body gives it (text, logprob, rank and id where given)."""
    lp = _logprob(logprob)
    if rank is not None and not (is_int(rank) and 1 <= rank <= 100_000_000):  # type: ignore[operator]
        raise bad("a rank must be a whole number ≥ 1")
    if id_ is None and isinstance(text, str) and (m := _TOKEN_ID.match(text)):
        id_ = int(m.group(1))
    if id_ is not None and not (is_int(id_) and 0 <= id_ < 100_000_000):  # type: ignore[operator]
        raise bad("a token id must be a whole number ≥ 0")
    return Entry(id_, piece_of(text), lp, rank)  # type: ignore[arg-type]


def _logprob(v: object) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or v > 1e-3:
        raise bad(f"a logprob must be a number ≤ 0, got {str(v)[:40]!r}")
    return value_from_json(v, clamped=True)


def _unknown_piece(i: int) -> bytes:
    return f"[{i}]".encode()


class _Ids:
    """Token ids of a body's entries: the ids it gives; else one id per distinct text (the real id where some entry
    gives that text with its id), numbered after the largest real one; neither id nor text: a stand-in id each."""

    def __init__(self, items: list[Position]):
        self.pieces: dict[int, bytes] = {}  # id -> token bytes, every id handed out
        for p in items:
            for e in (p.token, *p.top):
                if e.id is not None and e.piece is not None and e.id not in self.pieces:
                    self.pieces[e.id] = e.piece
        self.by_piece = {b: i for i, b in sorted(self.pieces.items(), reverse=True)}  # the lowest id of a text
        self.next = max((e.id for p in items for e in (p.token, *p.top) if e.id is not None), default=-1) + 1

    def __call__(self, e: Entry) -> int:
        if e.id is not None:
            self.pieces.setdefault(e.id, _unknown_piece(e.id))
            return e.id
        if e.piece is None:  # neither id nor text: a stand-in id of its own, shown as UNKNOWN
            return self._fresh(UNKNOWN)
        known = self.by_piece.get(e.piece)
        if known is not None:
            return known
        fresh = self.by_piece[e.piece] = self._fresh(e.piece)
        return fresh

    def _fresh(self, piece: bytes) -> int:
        fresh, self.next = self.next, self.next + 1
        self.pieces[fresh] = piece
        return fresh


def build(model: object, items: list[Position], n_prompt: int, finish_reason: object = None) -> TokenScores:
    """TokenScores of positions read off a body; ids the body does not give are numbered after the largest real one."""
    if not items:
        raise bad("the body holds no tokens with logprobs")
    # 1. per position: the actual token's id, logprob, rank and entropy, and its alternatives
    id_of = _Ids(items)
    n = len(items)
    ids, lps, ranks = np.zeros(n, np.int64), np.full(n, np.nan, np.float32), np.zeros(n, np.int64)
    ent = np.full(n, np.nan, np.float32)
    rows: list[list[tuple[int, float, int | None]]] = [[] for _ in range(n)]
    for j, p in enumerate(items):
        ids[j] = id_of(p.token)
        if p.token.logprob is not None:
            lps[j] = p.token.logprob
            rows[j], ranks[j], ent[j] = _row(p, ids[j], id_of)
    # 2. the alternatives as [n, width] arrays
    top_ids, top_lp, top_ranks = _top_arrays(items, rows)
    width = top_ids.shape[1]
    # 3. the result
    name = model if isinstance(model, str) and 0 < len(model) <= MAX_NAME else "imported"
    scored_prompt, generated = bool(np.isfinite(lps[:n_prompt]).any()), n_prompt < n
    return TokenScores(
        model=name,
        token_ids=ids,
        token_bytes=[id_of.pieces[i] for i in ids.tolist()],
        n_prompt=n_prompt,
        logprobs=lps,
        ranks=ranks,
        entropy=ent,
        top_ids=top_ids,
        top_logprobs=top_lp,
        pieces=id_of.pieces,
        prompt_k=width if scored_prompt else None,
        output_k=width if generated else None,
        finish_reason=finish_reason if isinstance(finish_reason, str) and generated else None,
        top_ranks=top_ranks,
    )


def _top_arrays(
    items: list[Position], rows: list[list[tuple[int, float, int | None]]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(n, width) top ids (-1: none), logprobs (-inf: none) and, where the body gives ranks, ranks (0: unknown)."""
    n = len(rows)
    width = min(max(len(row) for row in rows), MAX_WIDTH)
    top_ids, top_lp = np.full((n, width), -1, np.int64), np.full((n, width), -np.inf, np.float32)
    top_ranks = np.zeros((n, width), np.int64) if any(e.rank for p in items for e in p.top) else None
    for j, row in enumerate(rows):
        for c, (i, lp, rk) in enumerate(row[:width]):
            top_ids[j, c], top_lp[j, c] = i, lp
            if top_ranks is not None:
                top_ranks[j, c] = rk or 0
    return top_ids, top_lp, top_ranks


def _row(p: Position, tid: int, id_of) -> tuple[list[tuple[int, float, int | None]], int, float]:
    """One position's alternatives (id, logprob, rank) best first, the actual's rank (0: unknown), its entropy."""
    seen: dict[int, tuple[int, float, int | None]] = {}
    for e in p.top:
        i = id_of(e)
        if i not in seen:
            seen[i] = (i, -math.inf if e.logprob is None else e.logprob, e.rank)
    own = p.token.logprob if p.token.logprob is not None else -math.inf
    rank = p.token.rank or 0
    entries = list(seen.values())
    if entries and entries[0][2] is not None:  # ranks given (vLLM): best rank first; the actual may be an extra
        entries.sort(key=lambda t: t[2] or 0)
        others = [t[2] or 0 for t in entries if t[0] != tid]
        if tid in seen and others and (seen[tid][2] or 0) > max(others):
            entries = [t for t in entries if t[0] != tid]
    else:
        entries.sort(key=lambda t: -t[1])
        listed = tid in seen
        count = sum(1 for t in entries if t[1] >= own)
        if listed and (p.exact_top or count < len(entries)):
            rank = rank or count
        elif listed and len(entries) > 1:  # the lowest of a list that may carry it as an extra: rank unknown
            entries = [t for t in entries if t[0] != tid]
    entropy = math.nan
    if len(seen) > 1000:  # a full-vocabulary entry: its entropy is known
        lp = np.array([t[1] for t in seen.values()], np.float64)
        p_ = np.exp(lp)
        if p_.sum() > 0.999:
            entropy = float(-np.sum(np.where(p_ > 0, p_ * lp, 0.0)))
    return entries, rank, entropy


# ---- the bodies ------------------------------------------------------------------------------------
def _ids(v: object, what: str) -> list[int]:
    if not isinstance(v, list) or not all(is_int(i) and 0 <= i < 100_000_000 for i in v):
        raise bad(f"`{what}` must be a list of token ids")
    return v  # type: ignore[return-value]


def _vllm_entries(d: object, tid: int) -> Position:
    """A vLLM logprobs dict {id: {logprob, rank, decoded_token}} at a position whose token is `tid`."""
    if not isinstance(d, dict) or str(tid) not in d:
        raise bad("each vLLM logprobs entry must be an object holding the position's own token")
    top = []
    for key, v in d.items():
        if not isinstance(v, dict) or not key.isdigit():
            raise bad("a vLLM logprobs entry must map token ids to {logprob, rank, decoded_token}")
        top.append(text_entry(v.get("decoded_token") or "", v.get("logprob"), v.get("rank"), int(key)))
    own = next(e for e in top if e.id == tid)
    return Position(own, top)


def _ids_of_prompt_logprobs(logprobs: list) -> list[int | None]:
    """The prompt's ids as `prompt_logprobs` gives them: each entry's first key (the actual token, as vLLM writes
    it); None where the entry is null (entry 0 always: nothing scores the first token)."""
    ids: list[int | None] = []
    for d in logprobs:
        if d is None:
            ids.append(None)
        elif isinstance(d, dict) and d and isinstance(key := next(iter(d)), str) and key.isdigit():
            ids.append(int(key))
        else:
            raise bad("each `prompt_logprobs` entry must be null or an object of token id -> {logprob, rank, ...}")
    return ids


def _vllm_prompt(out: Positions, ids: list[int | None], logprobs: object, first: bytes | None = None) -> None:
    """The prompt's positions; `first`: the first token's text where the body gives it apart (an echo)."""
    if not isinstance(logprobs, list) or len(logprobs) != len(ids):
        raise bad("`prompt_logprobs` must have one entry per prompt token")
    for j, (i, d) in enumerate(zip(ids, logprobs)):
        if d is None:
            out.add(Position(Entry(i, first if j == 0 else None, None), []))
        elif i is None:
            raise bad("a scored `prompt_logprobs` entry needs its token id")
        else:
            out.add(_vllm_entries(d, i))


def _completion_lists(lp: object) -> tuple[list, list, list]:
    """OpenAI completions `logprobs` as its lists tokens, token_logprobs, top_logprobs (checked: one per token)."""
    if not isinstance(lp, dict):
        raise bad("`logprobs` must be an object with tokens, token_logprobs and top_logprobs")
    tokens, values, tops = lp.get("tokens"), lp.get("token_logprobs"), lp.get("top_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(values) != len(tokens):
        raise bad("`logprobs.tokens` and `logprobs.token_logprobs` must be lists of the same length")
    return tokens, values, tops if isinstance(tops, list) else [None] * len(tokens)


def _completion_logprobs(out: Positions, lp: object, ids: list[int | None] | None, skip: int = 0) -> None:
    """OpenAI completions `logprobs`: tokens, token_logprobs, top_logprobs (text -> logprob); the first `skip`
    positions (an echoed prompt that `prompt_logprobs` gives already) left out."""
    tokens, values, tops = (v[skip:] for v in _completion_lists(lp))
    if len(tops) != len(tokens) or (ids is not None and len(ids) != len(tokens)):
        raise bad("`logprobs.top_logprobs` (and `token_ids`) must have one entry per token")
    for j, (t, v, top) in enumerate(zip(tokens, values, tops)):
        if top is not None and not isinstance(top, dict):
            raise bad("each `top_logprobs` entry must be an object of token text -> logprob")
        own = text_entry(t, v, id_=ids[j] if ids else None)
        alts = [text_entry(k, x, id_=own.id if k == t else None) for k, x in (top or {}).items()]
        out.add(Position(own, alts if own.logprob is not None else [], exact_top=False))


def _n_prompt_of_echo(doc: dict, n: int, first_unscored: bool) -> int:
    usage = doc.get("usage")
    p, c = (usage.get("prompt_tokens"), usage.get("completion_tokens")) if isinstance(usage, dict) else (None, None)
    if isinstance(p, int) and isinstance(c, int) and is_int(p) and is_int(c) and p + c == n and p > 0:
        return p
    return n if first_unscored else 0


def _chat_entry(e: object, id_: int | None) -> Entry:
    """An OpenAI chat `logprobs.content` item or one of its `top_logprobs`: token, logprob, bytes."""
    if not isinstance(e, dict):
        raise bad("each `logprobs.content` item must be an object with token, logprob, bytes")
    entry = text_entry(e.get("token"), e.get("logprob"), id_=id_)
    raw = e.get("bytes")
    if raw is not None:
        if not isinstance(raw, list) or len(raw) > 1024 or not all(is_int(b) and 0 <= b <= 255 for b in raw):
            raise bad("a token's `bytes` must be a list of numbers 0 to 255")
        entry.piece = bytes(raw)
    if entry.logprob is None:
        raise bad("each chat token must have a logprob")
    return entry


def _prompt_part(out: Positions, ids: object, logprobs: object, first: bytes | None = None) -> list[str]:
    """vLLM's prompt: its ids, scored by `prompt_logprobs` when the body has them; notes on what it lacks.

    Without `prompt_token_ids` (vLLM sends them only with `return_token_ids: true`) the ids are read off
    `prompt_logprobs`; its entry 0 is null, so the first token is known by its text `first` (an echo) or not at all.
    """
    if logprobs is None:
        for i in _ids(ids, "prompt_token_ids"):
            out.add(Position(Entry(i, None, None), []))
        return []
    if not isinstance(logprobs, list):
        raise bad("`prompt_logprobs` must be a list with one entry per prompt token")
    if ids is not None:
        _vllm_prompt(out, _ids(ids, "prompt_token_ids"), logprobs, first)  # type: ignore[arg-type]
        return []
    read = _ids_of_prompt_logprobs(logprobs)
    _vllm_prompt(out, read, logprobs, first)
    if read and read[0] is None:
        how = "its text is the echoed one, its id numbered here by that text" if first is not None else "shown as [?]"
        return [
            "The body has no `prompt_token_ids` (vLLM sends them with `return_token_ids: true`): the prompt's tokens "
            f"are read from `prompt_logprobs`, which has no entry for the first one ({how})."
        ]
    return []


def _gen_ids(v: object) -> list[int] | None:
    return _ids(v, "token_ids") if isinstance(v, list) and v else None


def _echoed(lp: object, n_prompt: int) -> int:
    """How many positions at the head of vLLM's completions `logprobs` are the echoed prompt (`echo: true`): its
    `n_prompt` when the first logprob is null (only an echoed first prompt token has none), else 0."""
    if lp is None or n_prompt == 0:
        return 0
    tokens, values, _ = _completion_lists(lp)
    return n_prompt if len(tokens) >= n_prompt and values[0] is None else 0


def completion_body(doc: dict) -> tuple[TokenScores, str, list[str]]:
    """A completions body: vLLM's (prompt_logprobs beside the choice) or OpenAI's (logprobs, maybe echoed).

    vLLM's prompt comes from `prompt_logprobs` (ids, ranks) when the body has them, the echoed head of `logprobs`
    then left out; a streamed echo has `prompt_token_ids` and the echoed `logprobs` only, read together."""
    c, out = doc["choices"][0], Positions()
    lp, prompt_lp, prompt_ids = c.get("logprobs"), c.get("prompt_logprobs"), c.get("prompt_token_ids")
    vllm = isinstance(prompt_lp, list) or isinstance(prompt_ids, list)
    if lp is None and not vllm:
        raise bad("the body carries no logprobs (ask the server with `logprobs` or `prompt_logprobs`)")
    notes, skip, gen_ids = [], 0, _gen_ids(c.get("token_ids"))
    ids: list[int | None] | None = list(gen_ids) if gen_ids else None
    if isinstance(prompt_lp, list):
        skip = _echoed(lp, len(prompt_lp))
        first = piece_of(_completion_lists(lp)[0][0]) if skip else None
        notes = _prompt_part(out, prompt_ids, prompt_lp, first)
    elif vllm and (echo := _echoed(lp, len(_ids(prompt_ids, "prompt_token_ids")))):
        rest: list[int | None] = list(gen_ids) if gen_ids else [None] * (len(_completion_lists(lp)[0]) - echo)
        ids = [*prompt_ids, *rest]
    elif vllm:
        _prompt_part(out, prompt_ids, None)
    n_prompt = len(prompt_ids) if vllm and not isinstance(prompt_lp, list) else len(out.items)
    if lp is not None:
        _completion_logprobs(out, lp, ids, skip=skip)
    if not vllm:
        first_unscored = bool(out.items) and out.items[0].token.logprob is None
        n_prompt = _n_prompt_of_echo(doc, len(out.items), first_unscored)
    r = build(doc.get("model"), out.items, n_prompt, c.get("finish_reason"))
    shape = "vllm" if vllm else "openai-completion"
    return r, shape, notes + notes_for(r, openai=not vllm or n_prompt < r.n)


def chat_body(doc: dict) -> tuple[TokenScores, str, list[str]]:
    """A chat body: `logprobs.content` of the reply, and vLLM's top-level `prompt_logprobs` of the prompt."""
    c, out = doc["choices"][0], Positions()
    prompt_lp, prompt_ids = doc.get("prompt_logprobs"), doc.get("prompt_token_ids")
    vllm = isinstance(prompt_lp, list) or isinstance(prompt_ids, list)
    notes = _prompt_part(out, prompt_ids, prompt_lp) if vllm else []
    n_prompt = len(out.items)
    lp = c.get("logprobs")
    content = lp.get("content") if isinstance(lp, dict) else None
    if not isinstance(content, list) and not isinstance(prompt_lp, list):
        raise bad("the chat body carries no `logprobs.content` (ask the server with `logprobs: true`)")
    ids = _gen_ids(c.get("token_ids"))
    if ids is not None and len(ids) != len(content or []):
        ids = None
    for j, e in enumerate(content or []):
        own = _chat_entry(e, ids[j] if ids else None)
        tops = e.get("top_logprobs") or []
        if not isinstance(tops, list):
            raise bad("`top_logprobs` must be a list")
        alts = [
            _chat_entry(t, own.id if isinstance(t, dict) and t.get("token") == e.get("token") else None) for t in tops
        ]
        out.add(Position(own, alts, exact_top=True))
    r = build(doc.get("model"), out.items, n_prompt, c.get("finish_reason"))
    return r, "vllm-chat" if vllm else "openai-chat", notes + notes_for(r, openai=n_prompt < r.n)


def offline_body(doc: dict) -> tuple[TokenScores, str, list[str]]:
    """vLLM's offline RequestOutput: prompt ids and prompt_logprobs, then the first output's ids and logprobs."""
    out = Positions()
    notes = _prompt_part(out, doc.get("prompt_token_ids"), doc.get("prompt_logprobs"))
    n_prompt = len(out.items)
    first = doc["outputs"][0] if doc["outputs"] else {}
    if not isinstance(first, dict):
        raise bad("`outputs` must be a list of objects")
    ids, logprobs = _ids(first.get("token_ids") or [], "token_ids"), first.get("logprobs")
    if logprobs is not None and (not isinstance(logprobs, list) or len(logprobs) != len(ids)):
        raise bad("`outputs[0].logprobs` must have one entry per generated token")
    for j, i in enumerate(ids):
        out.add(_vllm_entries(logprobs[j], i) if logprobs is not None else Position(Entry(i, None, None), []))
    r = build(doc.get("model") or "imported", out.items, n_prompt, first.get("finish_reason"))
    return r, "vllm-offline", notes + notes_for(r, openai=False)


def notes_for(r: TokenScores, openai: bool) -> list[str]:
    """What the body did not carry, in words."""
    notes = []
    if np.isnan(r.entropy[r.scored]).all():
        notes.append("Entropy is not in the body (it needs the whole vocabulary): shown as unavailable.")
    if openai:
        notes.append(
            "OpenAI-style logprobs carry no ranks: a rank is shown where the token is among the listed "
            "alternatives, otherwise as unavailable; tokens without ids are numbered here by their text."
        )
    if any(r.pieces[i] == _unknown_piece(i) for i in set(r.token_ids.tolist())):
        notes.append("Some tokens' text is not in the body (the first prompt token's, for one): shown as [id].")
    if not r.scored.any():
        notes.append("The body has tokens but no logprobs for them.")
    return notes
