"""A remote engine: a model served by vLLM (or any OpenAI-compatible logprobs server, ours included) behind the
same interface as the local one, so every view, the CLI and our own /v1 run on it.

- Tokens: the model's tokenizer loaded here when it can be (`--backend-tokenizer`, else the folder the server
  names as its model card's `root`, else the served model id), checked to tokenize as the server does; without
  one (or `--backend-tokenizer server`), the server's `/tokenize` and `/detokenize` (explorer/engine/remote/vocab.py).
- Scoring asks `/v1/completions` for `prompt_logprobs` of the prompt sent as token ids (`echo`, `max_tokens: 0`):
  true ranks; the full vocabulary (`prompt_logprobs: -1`, exact entropy) only where the server allows it,
  else the entropy is unavailable (NaN, never guessed).
- Generation streams `/v1/completions` with `return_tokens_as_token_ids`, so every token is an id; a generated
  token's rank is read off the top-k where it is in it, else unknown (0). The EOS or stop token that ends a text
  is kept as its last token, as vLLM sends it. Numbers are raw (vLLM's default `--logprobs-mode raw_logprobs`;
  a request cannot ask for processed ones, so processed mode is refused).
- A branch is a generation from a prefix of ids (explorer/engine/analyses/branch.py). What needs the model's insides
  (hidden states, logits rows, KV caches) is not here: this engine is a ModelEngine, not a Forward
  (explorer/engine/interface.py), its capabilities say so and `forward_pass` refuses it with an ExplorerError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import numpy as np

from explorer.engine.capabilities import Capabilities
from explorer.engine.kernels.listed import listed_width
from explorer.engine.passes import bounds
from explorer.engine.passes.events import Done, Step
from explorer.engine.remote.http import Backend, error_message
from explorer.engine.remote.stream import generation_body, listed_row, num, top_row
from explorer.engine.remote.vocab import RemoteVocab
from explorer.engine.text.side import TokenizerText
from explorer.engine.text.tokens import vocab_bytes
from explorer.errors import ExplorerError
from explorer.floats import from_json
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.rules.sampler import SamplerSettings

FULL_VOCAB_BUDGET = 4_000_000  # positions x vocabulary entries asked as JSON for exact entropy (~300 MB of JSON)
SERVER = "server"  # --backend-tokenizer server: tokenize on the server, load no tokenizer here
PROBE_TEXT = "Hello world, 課 👋"  # tokenized here and there: a local tokenizer must agree with the server's
VLLM_CAP = re.compile(r"Requested prompt logprobs of (\d+), which is greater than max allowed: (-?\d+)")


class RemoteEngine(TokenizerText):
    """The ModelEngine interface (explorer/engine/interface.py) over HTTP: `score` and `stream` ask the server;
    no forward pass here, so no body, head, statistics or device (`capabilities` says what the server gives).
    The text side is TokenizerText's (explorer/engine/text/side.py) with the server's answers where no tokenizer
    loads here."""

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        key: str | None = None,
        tokenizer: str | None = None,
        timeout: float = 120.0,
        name: str | None = None,
    ):
        self.backend = Backend(base_url, key, timeout)
        card = self._card(model)
        self.model_id = card.get("id") or model or "remote"
        self.name = name or self.model_id
        self.context = int(card.get("max_model_len") or 2048)
        self.weights_mb = 0.0
        self.tokenizer = self._tokenizer(tokenizer, card.get("root"))
        vocab, max_lp, full_cap = self._vocabulary_and_caps(card)
        caps = card.get("capabilities") or {}  # a backend that announces `return_hidden_states` (ours): its caps
        self.backend_hidden_states = (
            int(caps.get("hidden_states_max_tokens") or 0),
            int(caps.get("hidden_states_max_bytes") or 0),
        )
        self._capabilities = Capabilities.remote(max_logprobs=max_lp, full_vocab_max_prompt_tokens=full_cap)
        if self.tokenizer is not None:
            self.vocab_size = max(len(self.tokenizer), vocab)  # the head may be padded past the tokenizer
            self.vocab: Sequence[bytes] = vocab_bytes(self.tokenizer, self.vocab_size)
            self.known_vocab = None
        else:
            self.vocab_size = vocab  # 0: unknown (then learnt from a full-vocabulary answer)
            self.known_vocab = RemoteVocab(self.backend, self.model_id, vocab)
            self.vocab = self.known_vocab
        eos = getattr(self.tokenizer, "eos_token_id", None)
        self.eos_ids = {eos} if eos is not None else set()  # without a tokenizer: learnt from the texts that end
        self.special_ids = set(getattr(self.tokenizer, "all_special_ids", []) or []) | self.eos_ids

    def forward(self, route: str, body: dict) -> dict:
        """`body` sent whole to the backend's `route` (its model named), the answer under this engine's name: a request
        for what no forward pass here can give (`return_hidden_states`, where the backend announces it)."""
        out = self.backend.post(route, {**body, "model": self.model_id})
        return {**out, "model": self.name}

    # ---- connecting ----------------------------------------------------------------------
    def _card(self, model: str | None) -> dict:
        listed = self.backend.get("/v1/models").get("data") or []
        ids = [m.get("id") for m in listed]
        if model is not None and model not in ids:
            raise ExplorerError(
                f"The backend serves {', '.join(map(str, ids)) or 'no model'}, not {model!r}.",
                param="model",
                code="model_not_found",
            )
        return listed[ids.index(model)] if model is not None else (listed[0] if listed else {})

    def _tokenizer(self, asked: str | None, root: str | None):
        """The tokenizer asked for (an error when it cannot be had), else the card's root's or the model id's
        when one loads here and tokenizes as the server does, else None (the server tokenizes)."""
        if asked == SERVER:
            return None
        for source in [asked] if asked else [root, self.model_id]:
            tok = _local_tokenizer(source) if source else None
            if tok is not None and self._agrees(tok):
                return tok
            if asked:
                why = "does not load here" if tok is None else f"does not tokenize {PROBE_TEXT!r} as the server does"
                raise ExplorerError(
                    f"--backend-tokenizer {asked!r} {why}: give the served model's folder or hub id, or "
                    f"`{SERVER}` to tokenize on the server.",
                    param="backend_tokenizer",
                )
        return None

    def _agrees(self, tok) -> bool:
        """Whether `tok` tokenizes a probe text as the server does (True where the server has no /tokenize)."""
        here = list(tok(PROBE_TEXT, add_special_tokens=True)["input_ids"])
        try:
            there = self.backend.post("/tokenize", {"model": self.model_id, "prompt": PROBE_TEXT})
        except ExplorerError as err:
            if err.code in ("backend_unreachable", "backend_timeout", "backend_unauthorized"):
                raise
            return True  # an OpenAI-compatible server without vLLM's /tokenize: nothing to check against
        return here == there.get("tokens")

    def _vocabulary_and_caps(self, card: dict) -> tuple[int, int, int]:
        """(vocabulary size or 0, most top-k per request (-1: no cap), full-vocabulary cap in prompt tokens).

        Our own server's card says all three. Of vLLM's, one full-vocabulary request of two tokens tells: its
        answer has an entry per vocabulary id; a capped server (`--max-logprobs`) refuses it, naming the
        vocabulary size and its cap."""
        caps = card.get("capabilities") or {}
        if card.get("vocab_size") and "max_logprobs" in caps:
            return int(card["vocab_size"]), int(caps["max_logprobs"]), int(caps.get("full_vocab_max_prompt_tokens", 0))
        refused: list[str] = []

        def read(r):  # a refusal is an answer here, not an error
            refused.append(error_message(r) or "")
            return {}

        body = {"model": self.model_id, "prompt": [0, 0], "max_tokens": 0, "echo": True, "prompt_logprobs": -1}
        answer = self.backend.call("POST", "/v1/completions", body, answer=read)
        if refused:
            m = VLLM_CAP.search(refused[0])
            vocab = int(m.group(1)) if m else int(card.get("vocab_size") or 0)
            return vocab, int(m.group(2)) if m else int(caps.get("max_logprobs", 20)), 0
        entries = ((answer.get("choices") or [{}])[0].get("prompt_logprobs") or [None])[1:]
        vocab = len(entries[0]) if entries and entries[0] else int(card.get("vocab_size") or 0)
        return vocab, int(caps.get("max_logprobs", -1)), int(caps.get("full_vocab_max_prompt_tokens", self.context))

    # ---- what this engine is -----------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """What the server gives: no hidden states; ranks of generated tokens only within the top-k."""
        return self._capabilities

    def placement(self) -> str:
        return f"a remote server ({self.backend.shown})"

    # ---- text <-> ids: TokenizerText's where a tokenizer loaded here, else the server's -----------
    def tokenize(self, text: str, add_special_tokens: bool = True) -> list[int]:
        if self.tokenizer is not None:
            return super().tokenize(text, add_special_tokens)
        ids = self.backend.post(
            "/tokenize", {"model": self.model_id, "prompt": text, "add_special_tokens": add_special_tokens}
        )["tokens"]
        self._learn(ids)
        return ids

    def detokenize(self, ids: list[int]) -> str:
        if self.tokenizer is not None:
            return super().detokenize(ids)
        return self.backend.post("/detokenize", {"model": self.model_id, "tokens": list(ids)})["prompt"]

    def token_strs(self, ids: list[int]) -> list[str]:
        """Vocabulary strings: the local tokenizer's, else the server's (/tokenize of the ids' text, when it gives
        the same ids back), else their decoded text."""
        if self.tokenizer is not None:
            return super().token_strs(ids)
        back = self.backend.post(
            "/tokenize",
            {
                "model": self.model_id,
                "prompt": self.detokenize(ids),
                "add_special_tokens": False,
                "return_token_strs": True,
            },
        )
        if back.get("tokens") == list(ids) and len(back.get("token_strs") or []) == len(ids):
            return list(back["token_strs"])
        return [self.detokenize([i]) for i in ids]

    def template_ids(self, messages: list[dict], reply: bool, continue_last: bool, kwargs: dict | None) -> list[int]:
        """Token ids of `messages` through the server's own chat template (even with a tokenizer here): nothing
        shifts between the ids scored and the ids the server would read."""
        body = {
            "model": self.model_id,
            "messages": messages,
            "add_generation_prompt": reply,
            "continue_final_message": continue_last,
        }
        if kwargs:
            body["chat_template_kwargs"] = kwargs
        ids = self.backend.post("/tokenize", body)["tokens"]
        self._learn(ids)
        return ids

    def _learn(self, ids, others=()) -> None:
        """Without a tokenizer: the bytes of the tokens of a sequence `ids` and of `others` (see remote_vocab)."""
        if self.known_vocab is not None:
            self.known_vocab.fetch([*ids, *others])
            self.known_vocab.learn(ids)

    @property
    def adds_bos(self) -> bool:
        return self.tokenizer is not None and super().adds_bos

    def special_tokens(self) -> list[str]:
        return super().special_tokens() if self.tokenizer is not None else []

    def context_start_ids(self, mode: str | None) -> list[int]:
        if mode in (None, "", "none"):
            return []
        if self.tokenizer is None:
            raise ExplorerError(
                "A context start needs the model's tokenizer here: pass --backend-tokenizer.", param="context_start"
            )
        return super().context_start_ids(mode)

    # ---- scoring -------------------------------------------------------------------------
    def score(self, ids: list[int], k: int, listed=None) -> TokenScores:
        """Score `ids` as sent; the full vocabulary (exact entropy) when the server's cap allows it."""
        self.check_ids(ids)
        if k == -1 and not self.capabilities.full_vocab:
            raise ExplorerError(
                f"The backend {self.backend.shown} gives no full-vocabulary distributions (it caps logprobs at "
                f"{self.capabilities.max_logprobs}): ask for a top-k, or start vLLM with --max-logprobs -1.",
                param="prompt_logprobs",
                code="full_vocab_unavailable",
            )
        bounds.check()
        body, full = self.score_body(ids, k, listed)
        entries = self.backend.post("/v1/completions", body)["choices"][0].get("prompt_logprobs")
        if listed is None and not entries:
            raise ExplorerError(
                f"The backend {self.backend.shown} sent no `prompt_logprobs`: scoring needs a vLLM-compatible "
                "logprobs server.",
                code="backend_bad_answer",
            )
        if listed is not None and not entries:
            raise ExplorerError(
                f"The backend {self.backend.shown} ignored `prompt_logprob_token_ids` (vLLM's /v1/completions does "
                "not take it): ask for a top-k, or use a model loaded here.",
                param="prompt_logprob_token_ids",
                code="not_available_remote",
            )
        if self.known_vocab is not None and body.get("prompt_logprobs") == -1 and len(entries) > 1:
            self.vocab_size = self.known_vocab.size = max(len(e) for e in entries[1:])
        width = listed_width(listed) if listed is not None else k
        if listed is not None:
            rows = _listed_prompt_rows(entries[1:], ids[1:], listed)
        else:
            rows = self._prompt_rows(entries[1:], ids[1:], width, full)
        self._learn(ids, rows.top_ids[rows.top_ids >= 0].tolist() if k != -1 else range(self.vocab_size))
        return assemble(self.name, self.vocab, list(ids), len(ids), rows, first=1, prompt_k=width)

    def score_body(self, ids: list[int], k: int, listed=None) -> tuple[dict, bool]:
        """The completions request that scores `ids`, and whether it asks for the full vocabulary."""
        cap = self.capabilities.full_vocab_max_prompt_tokens
        full = k == -1 or (cap > 0 and len(ids) <= cap and 0 < len(ids) * self.vocab_size <= FULL_VOCAB_BUDGET)
        body = {
            "model": self.model_id,
            "prompt": list(ids),
            "max_tokens": 0,
            "echo": True,
            "prompt_logprobs": -1 if full else max(k, 0),
        }
        if listed is not None:
            body["prompt_logprob_token_ids"] = listed
            body.pop("prompt_logprobs")
        return body, full and listed is None

    def _prompt_rows(self, entries: list[dict], targets: list[int], k: int, full: bool) -> Rows:
        """Rows from vLLM `prompt_logprobs` entries (actual first, ranks given): top-k by rank, entropy when full.

        Vectorised per entry: a full-vocabulary entry holds every id, so no per-id Python work but reading it.
        """
        m, kk = len(entries), max(k, 0)
        lp, ent = np.full(m, np.nan, np.float32), np.full(m, np.nan, np.float32)
        var = np.full(m, np.nan, np.float32)  # known only from a full-vocabulary entry
        rank = np.zeros(m, np.int64)
        top_ids, top_lp = np.full((m, kk), -1, np.int64), np.full((m, kk), -np.inf, np.float32)
        top_ranks = np.zeros((m, kk), np.int64)
        full_rows = np.full((m, self.vocab_size), np.nan, np.float32) if k == -1 else None
        for j, (entry, t) in enumerate(zip(entries, targets)):
            values = list(entry.values())
            ids = np.fromiter(map(int, entry), np.int64, len(entry))  # keys are ids as text
            lps = from_json(
                np.fromiter((v["logprob"] for v in values), np.float64, len(values)), np.float64, clamped=True
            )
            ranks = np.fromiter((v["rank"] for v in values), np.int64, len(values))
            mine = entry[str(t)]
            lp[j], rank[j] = num(mine["logprob"]), int(mine["rank"])
            if full:
                p = np.exp(lps)
                plp = np.where(p > 0, p * lps, 0.0)  # (V,)
                ent[j] = float(-np.sum(plp))
                var[j] = float(np.sum(np.where(p > 0, plp * lps, 0.0)) - ent[j] ** 2)  # E[(log p)^2] - H^2
            if full_rows is not None:
                full_rows[j, ids] = lps
            if len(ranks) > 4 * (kk + 2):  # a long (full) entry: only the k + 2 best need ordering
                part = np.argpartition(ranks, kk + 1)[: kk + 2]
                order = part[np.argsort(ranks[part], kind="stable")]
            else:
                order = np.argsort(ranks, kind="stable")
            keep = order[~((ids[order] == t) & (ranks[order] > kk))][:kk]  # the actual only when it ranks within k
            n = len(keep)
            top_ids[j, :n], top_lp[j, :n], top_ranks[j, :n] = ids[keep], lps[keep], ranks[keep]
        return Rows(lp, rank, ent, top_ids, top_lp, full_rows, top_ranks, var)

    # ---- generation ----------------------------------------------------------------------
    def check_sampler(self, s: SamplerSettings) -> None:
        """Refuse what the server cannot answer truthfully: processed logprobs (no request field asks for them)."""
        if s.mode == "processed":
            raise ExplorerError(
                "Processed logprobs cannot be asked of a remote server (vLLM sends raw ones unless started with "
                "--logprobs-mode processed_logprobs, for every request): ask for raw logprobs (--logprobs-mode raw), or use a model loaded here (drop --backend).",
                param="logprobs_mode",
                code="not_available_remote",
            )

    def stream(
        self, ids: list[int], s: SamplerSettings, sample: int = 0, want_prompt: bool = True
    ) -> Iterator[Step | Done]:
        """Steps, then Done, as explorer.engine.passes.generation.stream yields them, from a streamed completions call."""
        self.check_sampler(s)
        self.check_ids(ids)
        prompt_rows = None
        if want_prompt and s.prompt_logprobs is not None:
            prompt_rows = self.score(ids, s.prompt_logprobs).rows
            prompt_rows = prompt_rows.sliced(slice(1, None))
        text, finish, stop_reason, steps, piece = "", "length", None, [], ""
        with self.backend.events("/v1/completions", generation_body(self.model_id, ids, s, sample)) as events:
            for event in events:
                bounds.check()
                ch = event["choices"][0] if event.get("choices") else None
                if ch is None:
                    continue
                for step in self._steps(ch, s, len(text)):
                    text, piece = text + step.text, step.text
                    steps.append(step)
                    yield step
                if ch.get("finish_reason"):
                    finish, stop_reason = ch["finish_reason"], ch.get("stop_reason")
        ended = finish == "stop" and not isinstance(stop_reason, str) and bool(steps)  # by EOS or a stop id
        if ended and stop_reason is None:
            self.eos_ids.add(steps[-1].token_id)  # vLLM's EOS (a stop id names itself in stop_reason)
            self.special_ids.add(steps[-1].token_id)
        out = [st.token_id for st in steps]
        self._learn([*ids, *out], [int(i) for st in steps for i in st.rows.top_ids[0] if i >= 0])
        silent = ended and (not s.include_stop_str_in_output or piece == "")  # the ending token adds no text
        yield Done(finish, text, prompt_rows, stop_reason, silent)

    def _steps(self, ch: dict, s: SamplerSettings, start: int):
        """One Step per token of a streamed chunk; the chunk's text rides on its last token."""
        lp = ch.get("logprobs")
        if not lp or not lp.get("tokens"):
            return
        for j, (tok, value, top) in enumerate(zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"])):
            tid = int(tok.removeprefix("token_id:"))
            pairs = {int(key.removeprefix("token_id:")): num(v) for key, v in (top or {}).items()}
            row = listed_row(tid, value, pairs, s.logprob_ids) if s.logprob_ids else top_row(tid, value, pairs, s)
            piece = ch.get("text", "") if j == len(lp["tokens"]) - 1 else ""
            yield Step(tid, row, piece, start)


def _local_tokenizer(source: str):
    """The model's tokenizer from a folder or the local cache (no download here), or None."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source, local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means: ask the server instead
        return None


def _listed_prompt_rows(entries: list[dict], targets: list[int], listed: list[int] | list[list[int]]) -> Rows:
    """Rows for `prompt_logprob_token_ids`: each position's asked ids in the order asked (the actual token too when
    it is one of them: vLLM's entry holds it once), with the logprob and rank the server sent for each."""
    per: list = listed if listed and isinstance(listed[0], list) else [listed] * len(entries)
    m, q = len(entries), len(per[0]) if per else 0
    lp, rank = np.full(m, np.nan, np.float32), np.zeros(m, np.int64)
    top_ids, top_lp = np.full((m, q), -1, np.int64), np.full((m, q), -np.inf, np.float32)
    top_ranks = np.zeros((m, q), np.int64)
    for j, (entry, t, asked) in enumerate(zip(entries, targets, per)):
        mine = entry[str(t)]
        lp[j], rank[j] = num(mine["logprob"]), int(mine["rank"])
        for c, i in enumerate(asked):
            got = entry.get(str(i))
            if got is None:
                raise ExplorerError(
                    f"The backend sent no logprob for the asked token id {i}.", code="backend_bad_answer"
                )
            top_ids[j, c], top_lp[j, c], top_ranks[j, c] = int(i), num(got["logprob"]), int(got["rank"])
    return Rows(lp, rank, np.full(m, np.nan, np.float32), top_ids, top_lp, None, top_ranks)
