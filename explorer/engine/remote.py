"""A remote engine: a model served by vLLM (or any OpenAI-compatible logprobs server, ours included) behind the
same interface as the local one, so every view, the CLI and our own /v1 run on it.

Scoring asks `/v1/completions` for `prompt_logprobs` of the prompt sent as token ids (`echo`, `max_tokens: 0`);
the full vocabulary (`prompt_logprobs: -1`) only within the server's cap, which gives the entropy exactly; beyond
it the entropy is unavailable (NaN, never guessed). Generation streams `/v1/completions` with
`return_tokens_as_token_ids`, so every token is an id; ranks of generated tokens are read off the top-k where the
token is in it, else unknown (0). What needs the model's insides (hidden states, logits rows) raises a clear
ExplorerError naming the capability.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator, Sequence
from types import SimpleNamespace

import httpx
import numpy as np

from explorer.engine.capabilities import Capabilities
from explorer.engine.listed import listed_width
from explorer.engine.model import Engine
from explorer.errors import ExplorerError
from explorer.result import Rows, TokenScores, assemble
from explorer.settings import SamplerSettings

RETRIES = 3  # idempotent calls (models, tokenize, scoring) retried on 429 / 5xx / connection errors
FULL_VOCAB_BUDGET = 4_000_000  # positions x vocabulary entries asked as JSON for exact entropy (~300 MB of JSON)


class RemoteVocab(Sequence):
    """id -> raw bytes: from the local tokenizer when there is one, else learnt from the server (decoded text)."""

    def __init__(self, engine: RemoteEngine, table: list[bytes] | None, size: int):
        self.engine, self.table, self.size = engine, table, size
        self.known: dict[int, bytes] = {}

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> bytes:  # type: ignore[override]  # ids only: a vocabulary is not sliced
        if self.table is not None:
            return self.table[i]
        if i not in self.known:
            self.known[i] = self.engine.post("/detokenize", {"model": self.engine.model_id, "tokens": [int(i)]})[
                "prompt"
            ].encode()
        return self.known[i]

    def learn(self, i: int, text: str) -> None:
        if self.table is None:
            self.known.setdefault(int(i), text.encode())


class RemoteEngine(Engine):
    """Engine's interface over HTTP: scoring and generation go to the server (the Served protocol routes them here);
    what needs the model's insides (body, head, stats) raises an ExplorerError naming the capability."""

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        key: str | None = None,
        tokenizer: str | None = None,
        timeout: float = 120.0,
        name: str | None = None,
    ):
        self.device = SimpleNamespace(type="a remote server")  # what the page's status line reads
        self.dtype = "served"
        self._connect(base_url, model, key, tokenizer, timeout, name)

    def _connect(
        self, base_url: str, model: str | None, key: str | None, tokenizer: str | None, timeout: float, name: str | None
    ) -> None:
        """Read the server's model card; load the model's tokenizer here when it can be (exact token bytes)."""
        self.base = base_url.rstrip("/")
        self.http = httpx.Client(timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else {})
        listed = self.get("/v1/models").get("data") or []
        ids = [m.get("id") for m in listed]
        if model is not None and model not in ids:
            raise ExplorerError(
                f"The backend serves {', '.join(map(str, ids)) or 'no model'}, not {model!r}.",
                param="model",
                code="model_not_found",
            )
        card = listed[ids.index(model)] if model is not None else (listed[0] if listed else {})
        self.model_id = card.get("id") or model or "remote"
        self.name = name or self.model_id
        self.context = int(card.get("max_model_len") or 2048)
        caps = card.get("capabilities") or {}
        self._capabilities = Capabilities.remote(
            max_logprobs=int(caps.get("max_logprobs", 20)),
            full_vocab_max_prompt_tokens=int(caps.get("full_vocab_max_prompt_tokens", 0)),
        )
        self.tokenizer = _local_tokenizer(tokenizer or self.model_id)
        table = None
        if self.tokenizer is not None:
            from explorer.engine.tokens import vocab_bytes

            self.vocab_size = max(len(self.tokenizer), int(card.get("vocab_size") or 0))  # the head may be padded
            table = vocab_bytes(self.tokenizer, self.vocab_size)
        else:
            self.vocab_size = int(card.get("vocab_size") or 0)  # 0: unknown (learnt from a full-vocabulary answer)
        self.known_vocab = RemoteVocab(self, table, self.vocab_size)
        self.vocab = self.known_vocab
        eos = getattr(self.tokenizer, "eos_token_id", None)
        self.eos_ids = {eos} if eos is not None else set()
        self.special_ids = set(getattr(self.tokenizer, "all_special_ids", []) or []) | self.eos_ids
        self.weights_mb = 0.0

    # ---- HTTP ---------------------------------------------------------------------------
    def get(self, path: str) -> dict:
        return self._call("GET", path, None)

    def post(self, path: str, body: dict) -> dict:
        return self._call("POST", path, body)

    def _call(self, method: str, path: str, body: dict | None) -> dict:
        """One JSON call, retried with backoff on 429 / 5xx / connection errors; clear ExplorerErrors otherwise."""
        url = _route(self.base, path)
        for attempt in range(RETRIES + 1):
            try:
                r = self.http.request(method, url, json=body)
            except httpx.TimeoutException:
                raise ExplorerError(
                    f"The backend {self.base} did not answer within {self.http.timeout.read:g} s.",
                    code="backend_timeout",
                ) from None
            except httpx.HTTPError as err:
                if attempt < RETRIES:
                    time.sleep(0.2 * 2**attempt)
                    continue
                raise ExplorerError(
                    f"Cannot reach the backend {self.base}: {err}.", code="backend_unreachable"
                ) from None
            if r.status_code in (429, 500, 502, 503, 504) and attempt < RETRIES:
                time.sleep(min(float(r.headers.get("retry-after") or 0.2 * 2**attempt), 5.0))
                continue
            return _json_of(r, self.base)
        raise AssertionError("unreachable")

    # ---- text -> ids --------------------------------------------------------------------
    @property
    def capabilities(self) -> Capabilities:
        """What the server gives: no hidden states; ranks of generated tokens only within the top-k."""
        return self._capabilities

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str) or text == "":
            raise ExplorerError(
                "The text is empty: type or paste some text to score.", param="prompt", code="empty_text"
            )
        if self.tokenizer is not None:
            return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])
        return self.post("/tokenize", {"model": self.model_id, "prompt": text})["tokens"]

    def encode_chat(
        self,
        messages: list[dict],
        *,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        template_kwargs: dict | None = None,
    ) -> list[int]:
        body = {
            "model": self.model_id,
            "messages": messages,
            "add_generation_prompt": add_generation_prompt,
            "continue_final_message": continue_final_message,
        }
        if template_kwargs:
            body["chat_template_kwargs"] = template_kwargs
        return self.post("/tokenize", body)["tokens"]  # the server's own template: nothing shifts

    @property
    def adds_bos(self) -> bool:
        from explorer.engine import context_start

        return context_start.adds_bos(self.tokenizer) if self.tokenizer is not None else False

    def special_tokens(self) -> list[str]:
        from explorer.engine import context_start

        return context_start.special_tokens(self.tokenizer, self.vocab_size) if self.tokenizer is not None else []

    def context_start_ids(self, mode: str | None) -> list[int]:
        if mode in (None, "", "none"):
            return []
        if self.tokenizer is None:
            raise ExplorerError(
                "A context start needs the model's tokenizer locally: pass --backend-tokenizer.", param="context_start"
            )
        from explorer.engine import context_start

        return context_start.context_start_ids(self.tokenizer, self.vocab_size, self.name, mode)

    # ---- what a remote server cannot give ------------------------------------------------
    def body(self, *a, **kw):
        raise ExplorerError(
            f"{self.name} runs on a remote backend, which does not expose hidden states or logits "
            "(needed for this view): use a local model.",
            code="not_available_remote",
        )

    head = stats = body

    # ---- scoring -------------------------------------------------------------------------
    def score_ids(self, ids: list[int], k: int, check=None, listed=None) -> TokenScores:
        """Score `ids` as sent; the full vocabulary (exact entropy) when the server's cap allows it."""
        self.check_ids(ids)
        if check is not None:
            check()
        body, full = self.score_body(ids, k, listed)
        ask = body.get("prompt_logprobs")
        entries = self.post("/v1/completions", body)["choices"][0]["prompt_logprobs"]
        if self.tokenizer is None and ask == -1 and len(entries) > 1:
            self.vocab_size = self.known_vocab.size = max(len(e) for e in entries[1:])
        rows = self._prompt_rows(entries[1:], ids[1:], k if listed is None else listed_width(listed), full)
        width = listed_width(listed) if listed is not None else k
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
        rank = np.zeros(m, np.int64)
        top_ids, top_lp = np.full((m, kk), -1, np.int64), np.full((m, kk), -np.inf, np.float32)
        top_ranks = np.zeros((m, kk), np.int64)
        full_rows = np.full((m, self.vocab_size), np.nan, np.float32) if k == -1 else None
        for j, (entry, t) in enumerate(zip(entries, targets)):
            values = list(entry.values())
            ids = np.fromiter(map(int, entry), np.int64, len(entry))  # keys are ids as text
            lps = np.fromiter((v["logprob"] for v in values), np.float64, len(values))
            lps[lps <= -9999.0] = -np.inf  # the JSON clamp of -inf
            ranks = np.fromiter((v["rank"] for v in values), np.int64, len(values))
            mine = entry[str(t)]
            lp[j], rank[j] = _num(mine["logprob"]), int(mine["rank"])
            if full:
                p = np.exp(lps)
                ent[j] = float(-np.sum(np.where(p > 0, p * lps, 0.0)))
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
            for i in ids if k == -1 else [t, *ids[keep].tolist()]:  # token texts the result will show
                self.known_vocab.learn(int(i), entry[str(int(i))].get("decoded_token") or "")
        return Rows(lp, rank, ent, top_ids, top_lp, full_rows, top_ranks)

    # ---- generation ----------------------------------------------------------------------
    def stream(self, ids: list[int], s: SamplerSettings, sample: int = 0, want_prompt: bool = True, check=None):
        """Steps, then Done, as explorer.engine.generation.stream yields them, from a streamed completions call."""
        from explorer.engine.generation import Done

        self.check_ids(ids)
        prompt_rows = None
        if want_prompt and s.prompt_logprobs is not None:
            prompt_rows = self.score_ids(ids, s.prompt_logprobs, check).rows
            prompt_rows = prompt_rows.sliced(slice(1, None))
        k = len(s.logprob_ids) if s.logprob_ids else (s.logprobs or 0)
        body = _generation_body(self.model_id, ids, s, sample, k)
        text, finish, stop_reason, last = "", "length", None, None
        with self.http.stream("POST", _route(self.base, "/v1/completions"), json=body) as r:
            if r.status_code != 200:
                r.read()
                _json_of(r, self.base)
            for event in _sse(r):
                if check is not None:
                    check()
                ch = event["choices"][0] if event.get("choices") else None
                if ch is None:
                    continue
                for step in self._steps(ch, k, len(text)):
                    text, last = text + step.text, step.token_id
                    yield step
                if ch.get("finish_reason"):
                    finish, stop_reason = ch["finish_reason"], ch.get("stop_reason")
        ended = (
            finish == "stop" and stop_reason is None and last in self.eos_ids
        )  # the EOS: in the ids, not in the text
        yield Done(finish, text, prompt_rows, stop_reason, ended)

    def _steps(self, ch: dict, k: int, start: int):
        from explorer.engine.generation import Step

        lp = ch.get("logprobs")
        if not lp or not lp.get("tokens"):
            return
        for j, (tok, value, top) in enumerate(zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"])):
            tid = int(tok.removeprefix("token_id:"))
            pairs = sorted(
                ((int(key.removeprefix("token_id:")), _num(v)) for key, v in (top or {}).items()), key=lambda x: -x[1]
            )
            alts = pairs[:k] if k > 0 else []
            rank = next((n for n, (i, _) in enumerate(pairs, start=1) if i == tid), 0) if k > 0 else 0
            row = Rows(
                np.array([_num(value)], np.float32),
                np.array([rank if rank <= k else 0], np.int64),
                np.array([np.nan], np.float32),
                np.array([[i for i, _ in alts] + [-1] * (k - len(alts))], np.int64),
                np.array([[v for _, v in alts] + [-np.inf] * (k - len(alts))], np.float32),
            )
            piece = ch.get("text", "") if j == len(lp["tokens"]) - 1 else ""
            yield Step(tid, row, piece, start)


def _num(v) -> float:
    v = float(v)
    return -math.inf if v <= -9999.0 else v


def _route(base: str, path: str) -> str:
    """`base` is the server's /v1 URL: /v1/... paths go under it; the utility routes (/tokenize) at its root, as vLLM's."""
    if path.startswith("/v1/"):
        return base + path[3:]
    return (base[: -len("/v1")] if base.endswith("/v1") else base) + path


def _json_of(r: httpx.Response, base: str) -> dict:
    """The body of a backend answer, or an ExplorerError that says what the backend said."""
    try:
        body = r.json()
    except (json.JSONDecodeError, ValueError):
        raise ExplorerError(
            f"The backend {base} answered HTTP {r.status_code} with something that is not JSON.",
            code="backend_bad_answer",
        ) from None
    if r.status_code >= 400:
        err = body.get("error") if isinstance(body, dict) else None
        msg = (err or {}).get("message") if isinstance(err, dict) else None
        msg = msg or (body.get("message") if isinstance(body, dict) else None) or str(body)[:200]
        code = {401: "backend_unauthorized", 404: "model_not_found", 429: "server_busy"}.get(
            r.status_code, "backend_error"
        )
        raise ExplorerError(
            f"The backend answered HTTP {r.status_code}: {msg}",
            param=(err or {}).get("param") if err else None,
            code=code if r.status_code >= 401 else ((err or {}).get("code") or "backend_error"),
        )
    return body


def _sse(r: httpx.Response) -> Iterator[dict]:
    """The JSON events of a server-sent-events body until `[DONE]`; an error event or a cut stream is an ExplorerError."""
    done = False
    try:
        for line in r.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                break
            event = json.loads(data)
            if isinstance(event, dict) and "error" in event:
                raise ExplorerError(
                    f"The backend stopped the stream: {event['error'].get('message')}", code="backend_error"
                )
            yield event
    except (httpx.HTTPError, json.JSONDecodeError) as err:
        raise ExplorerError(f"The backend's stream broke off ({type(err).__name__}).", code="backend_error") from None
    if not done:
        raise ExplorerError(
            "The backend's stream ended without [DONE]: the answer is incomplete.", code="backend_error"
        )


def _generation_body(model: str, ids: list[int], s: SamplerSettings, sample: int, k: int) -> dict:
    body = {
        "model": model,
        "prompt": list(ids),
        "max_tokens": s.max_tokens,
        "temperature": s.temperature,
        "top_p": s.top_p,
        "top_k": s.top_k,
        "min_p": s.min_p,
        "repetition_penalty": s.repetition_penalty,
        "frequency_penalty": s.frequency_penalty,
        "presence_penalty": s.presence_penalty,
        "stream": True,
        "logprobs": k,
        "return_tokens_as_token_ids": True,
        "return_token_ids": True,
        "n": 1,
        "ignore_eos": s.ignore_eos,
        "min_tokens": s.min_tokens,
        "skip_special_tokens": s.skip_special_tokens,
        "include_stop_str_in_output": s.include_stop_str_in_output,
    }
    if s.seed is not None:
        body["seed"] = (s.seed + sample) % 2**63
    if s.stop:
        body["stop"] = list(s.stop)
    if s.stop_token_ids:
        body["stop_token_ids"] = list(s.stop_token_ids)
    if s.logprob_ids:
        body["logprob_token_ids"] = list(s.logprob_ids)
    return body


def _local_tokenizer(source: str):
    """The model's tokenizer from a folder or the local cache (no download here), or None."""
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source, local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means: ask the server instead
        return None
