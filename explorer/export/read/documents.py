"""Open a JSON document as results, without a model: our session file, our native JSON, and the response bodies of
a vLLM or OpenAI server (vLLM `prompt_logprobs` completions and chat bodies, vLLM offline outputs, OpenAI
completions `logprobs` and chat `logprobs.content`), detected by their shape; a streamed answer as its SSE text or
a JSON list of its chunks (explorer/export/read/stream.py merges them into one body); any of them gzipped.

Numbers a body does not carry stay unknown (entropy NaN, rank 0) and `Opened.notes` says so. Token ids a body does
not carry (OpenAI's shapes name tokens by text only) are numbered here, after the largest real id. Everything is
bounded (bytes, positions, alternatives) and anything wrong is one ExplorerError, never another exception.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field

import numpy as np

from explorer.errors import ExplorerError
from explorer.export.read.bodies import MAX_NAME, MAX_POSITIONS, bad, chat_body, completion_body, is_int, offline_body
from explorer.export.read.stream import is_sse, merged, sse_chunks
from explorer.results import answers, attribution, batch, branch, compare, lens, word_table
from explorer.results.scores import TokenScores

SESSION_FORMAT = "logprob-explorer/session"
MAX_FILE_BYTES = 32 * 1024 * 1024  # read, and once decompressed
GZIP_MAGIC = b"\x1f\x8b"
SHAPES = {
    "session": "a logprob-explorer session",
    "native": "logprob-explorer native JSON",
    "vllm": "a vLLM completions body (prompt_logprobs)",
    "vllm-chat": "a vLLM chat body (prompt_logprobs)",
    "vllm-offline": "a vLLM offline RequestOutput",
    "openai-completion": "an OpenAI completions body",
    "openai-chat": "an OpenAI chat body",
    "comparison": "result A of a Compare view",
}
# the tool tabs' own JSON (their JSON downloads, and the logprob-data of their HTML files): each holds its view's
# numbers but no token-by-token result to show, so it opens nowhere here; the message names it
TOOL_FORMATS = {
    answers.FORMAT: "an Answers view",
    answers.QUIZ_FORMAT: "a quiz",
    attribution.FORMAT: "a Why view",
    lens.FORMAT: "a Logit lens view",
    branch.FORMAT: "a Branch view",
    word_table.FORMAT: "a word table (Batch, `words --file`)",
    batch.FORMAT: "a Batch view",
}
OPENS = (
    "what opens is a session file, native JSON, a captured vLLM or OpenAI body, or the HTML or JSON of the "
    "Score, Generate, Chat or Compare views"
)


@dataclass
class Opened:
    """What a document held: its results, the shape it was read as, the view's inputs when it carries them."""

    results: list[TokenScores]
    shape: str  # a key of SHAPES
    view: dict | None = None  # a session's `view` (read with explorer.ui.links.ViewState.from_dict)
    special: tuple[int, ...] = ()  # a session's marker tokens
    turns: tuple[tuple[int, str], ...] = ()  # a session's chat turns: (first position, role)
    notes: list[str] = field(default_factory=list)  # what the document does not carry

    @property
    def about(self) -> str:
        return SHAPES[self.shape]


def open_document(data: bytes | str) -> Opened:
    """The results in `data` (a JSON document of one of SHAPES)."""
    if isinstance(data, str):
        data = data.encode("utf-8", errors="replace")
    if not isinstance(data, bytes):
        raise bad("it is not a file")
    if len(data) > MAX_FILE_BYTES:
        raise bad(f"it is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    if data[:2] == GZIP_MAGIC:
        data = gunzip(data)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise bad("it is not text (UTF-8)") from None
    stream = is_sse(text)
    try:
        doc = None if stream else json.loads(text)
    except (ValueError, RecursionError):
        raise bad("it is not JSON (nor a stream's server-sent events, `data: {...}` lines)") from None
    try:
        doc = merged(sse_chunks(text)) if stream else doc
        opened = _open_list(doc) if isinstance(doc, list) else _open(doc)
    except ExplorerError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as err:
        raise bad(f"a field has the wrong type or shape ({type(err).__name__})") from None
    if stream:
        opened.notes.insert(0, "It is a stream (server-sent events), read as the one body its chunks make.")
    return opened


def gunzip(data: bytes) -> bytes:
    """A gzip file's content, at most MAX_FILE_BYTES of it."""
    z = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = z.decompress(data, MAX_FILE_BYTES + 1)
    except zlib.error:
        raise bad("it starts like gzip but does not decompress") from None
    if len(out) > MAX_FILE_BYTES or z.unconsumed_tail:
        raise bad(f"it is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB once decompressed")
    return out


def _open_list(doc: list) -> Opened:
    """A JSON list: a stream's chunks (as a client collected them) or vLLM offline outputs (`LLM.generate`)."""
    if doc and all(isinstance(x, dict) and isinstance(x.get("outputs"), list) for x in doc):
        opened = _open(doc[0])
        if len(doc) > 1:
            opened.notes.append(f"The file holds {len(doc)} outputs: the first is shown.")
        return opened
    if doc and all(isinstance(x, dict) and ("choices" in x or "error" in x) for x in doc):
        opened = _open(merged(doc))
        opened.notes.insert(0, f"It is a stream's {len(doc)} chunks, read as the one body they make.")
        return opened
    raise bad("a JSON list must hold a stream's chunks or vLLM offline outputs (`LLM.generate`)")


def _open(doc: object) -> Opened:
    if not isinstance(doc, dict):
        raise bad("it is not a JSON object")
    fmt = doc.get("format")
    if fmt == SESSION_FORMAT:
        return _session(doc)
    if fmt == "logprob-explorer/token-scores":
        return Opened([native(doc)], "native")
    if fmt == "logprob-explorer/token-scores-list":
        samples = doc.get("samples")
        if not isinstance(samples, list) or not samples or len(samples) > 64:
            raise bad("`samples` must be a list of 1 to 64 results")
        return Opened([native(s) for s in samples], "native")
    if fmt == compare.FORMAT:
        a, b = native(doc.get("a")), native(doc.get("b"))
        notes = [f"It is a Compare view's file: A's result ({a.model}) is shown; B's ({b.model}) is its second."]
        return Opened([a, b], "comparison", notes=notes)
    tool = TOOL_FORMATS.get(fmt) if isinstance(fmt, str) else None
    if tool is None and fmt is None and isinstance(doc.get("words"), list) and "reference" in doc:
        tool = "a Words view"  # export/words.py's body names no format
    if tool is not None:
        raise bad(
            f"it is {tool}'s own JSON (its download, or the data in its HTML file): that view's numbers, not a "
            f"result a tab can show again; {OPENS}"
        )
    if "error" in doc and "choices" not in doc:
        err = doc["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        raise bad(f"it is an error answer from the server, not a body with logprobs ({str(msg)[:300]})")
    if isinstance(doc.get("outputs"), list) and "prompt_logprobs" in doc:
        r, shape, notes = offline_body(doc)
        return Opened([r], shape, notes=notes)
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise bad(f"it is none of the shapes this page reads: {OPENS}")
    r, shape, notes = chat_body(doc) if "message" in choices[0] else completion_body(doc)
    opened = Opened([r], shape, notes=notes)
    if len(choices) > 1:
        opened.notes.append(f"The body has {len(choices)} choices: the first is shown.")
    return opened


# ---- our own shapes ------------------------------------------------------------------------------
def native(d: object) -> TokenScores:
    if not isinstance(d, dict):
        raise bad("a result is not an object")
    r = TokenScores.from_dict(d)
    check_scores(r)
    return r


def _session(doc: dict) -> Opened:
    results = doc.get("results")
    if not isinstance(results, list) or not 1 <= len(results) <= 64:
        raise bad("a session must hold 1 to 64 results")
    view, marks = doc.get("view"), doc.get("marks") or {}
    if view is not None and not isinstance(view, dict):
        raise bad("the session's `view` must be an object")
    if not isinstance(marks, dict):
        raise bad("the session's `marks` must be an object")
    rs = [native(x) for x in results]
    special, turns = marks.get("special", []), marks.get("turns", [])
    n = rs[0].n
    if not isinstance(special, list) or not all(is_int(i) and i >= 0 for i in special):
        raise bad("`marks.special` must be a list of token ids")
    if not isinstance(turns, list) or not all(
        isinstance(t, list)
        and len(t) == 2
        and is_int(t[0])
        and 0 <= t[0] < n
        and t[1] in ("system", "user", "assistant")
        for t in turns
    ):
        raise bad("`marks.turns` must be a list of [position, role] pairs")
    return Opened(rs, "session", view, tuple(special), tuple((t[0], t[1]) for t in turns))


def check_scores(r: TokenScores) -> None:
    """A result read from a file can be drawn: consistent shapes, known ids, numbers in range."""
    n = r.n
    if not 1 <= n <= MAX_POSITIONS:
        raise bad(f"a result must have 1 to {MAX_POSITIONS:,} tokens, this one has {n:,}")
    if not isinstance(r.model, str) or len(r.model) > MAX_NAME:
        raise bad(f"`model` must be a name of at most {MAX_NAME} characters")
    width = r.top_ids.shape[1] if r.top_ids.ndim == 2 else -1
    shapes_ok = (
        len(r.token_bytes) == n
        and r.logprobs.shape == r.entropy.shape == r.ranks.shape == (n,)
        and r.top_ids.shape == r.top_logprobs.shape == (n, width)
        and 0 <= width <= 1024
        and (r.top_ranks is None or r.top_ranks.shape == r.top_ids.shape)
    )
    if not shapes_ok:
        raise bad("its arrays do not have one entry per token")
    ints = (r.n_prompt, r.vocab_size, r.context_start)
    if not all(is_int(v) for v in ints) or not 0 <= r.n_prompt <= n or not 0 <= r.context_start <= n:
        raise bad("`n_prompt` and `context_start` must be whole numbers within the tokens")
    if not (is_int(r.vocab_size) and 0 <= r.vocab_size <= 10_000_000):
        raise bad("`vocab_size` is out of range")
    for k in (r.prompt_k, r.output_k):
        if k is not None and not (is_int(k) and -1 <= k <= 10_000_000):
            raise bad("`prompt_k` and `output_k` must be null or whole numbers")
    if r.mode not in ("raw", "processed") or not isinstance(r.sampler, dict):
        raise bad("`mode` must be raw or processed and `sampler` an object")
    for v in (r.finish_reason, r.output_text):
        if v is not None and not isinstance(v, str):
            raise bad("`finish_reason` and `output_text` must be text or null")
    if r.stop_reason is not None and not isinstance(r.stop_reason, (str, int)):
        raise bad("`stop_reason` must be text, a token id or null")
    if (r.token_ids < 0).any() or (r.top_ids < -1).any() or (r.ranks < 0).any():
        raise bad("token ids and ranks must not be negative")
    used = set(r.token_ids.tolist()) | set(r.top_ids[r.top_ids >= 0].tolist())
    if not used <= r.pieces.keys():
        raise bad("`pieces` must give the text of every token id it uses")
    for a in (r.logprobs, r.top_logprobs):
        if (a > 1e-3).any() or np.isposinf(a).any():
            raise bad("logprobs must be at most 0")
    if (r.entropy < 0).any() or np.isinf(r.entropy).any():
        raise bad("entropy must be a number ≥ 0")
    if r.full_logprobs is not None and (r.full_logprobs.ndim != 2 or r.full_logprobs.shape[0] != n):
        raise bad("`full_logprobs_f32_b64` must hold one row per token")
