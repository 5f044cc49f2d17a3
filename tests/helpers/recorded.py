"""The bodies recorded from a real vLLM (tests/data/vllm/, made by tests/helpers/vllm_record.py), and each one's positions
read straight off the body, apart from explorer's readers: what opening it must show.

`positions(name, raw)` gives one dict per token in order: id (None where the body has none), text (None where
it has none), logprob (None: unscored), rank (None: the body gives none), alternatives ({id or text: logprob}),
plus the number of prompt tokens.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.vllm_record import DATA, OFFLINE, REQUESTS

NAMES = sorted([*REQUESTS, *OFFLINE])


@dataclass
class Pos:
    id: int | None
    text: str | None
    logprob: float | None
    rank: int | None
    alts: dict  # id (vLLM) or text (OpenAI shapes) -> logprob


def raw(name: str) -> bytes:
    return (DATA / name).read_bytes()


def body(name: str, data: bytes | None = None) -> object:
    """The JSON of a recorded file (a stream: the list of its chunks, `data: [DONE]` left out)."""
    data = raw(name) if data is None else data
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    if name.endswith(".sse"):
        lines = [ln[len("data: ") :] for ln in data.decode().split("\n") if ln.startswith("data: ")]
        assert lines[-1] == "[DONE]", "a stream ends with data: [DONE]"
        return [json.loads(ln) for ln in lines[:-1]]
    return json.loads(data)


def _vllm(entries: list, ids: list | None) -> list[Pos]:
    out = []
    for j, d in enumerate(entries):
        tid = ids[j] if ids else (int(next(iter(d))) if d else None)  # the actual token is the first key
        if d is None:
            out.append(Pos(tid, None, None, None, {}))
            continue
        own = d[str(tid)]
        alts = {int(k): v["logprob"] for k, v in d.items()}
        out.append(Pos(tid, own["decoded_token"], own["logprob"], own["rank"], alts))
    return out


def _openai(lp: dict, ids: list | None, skip: int = 0) -> list[Pos]:
    rows = zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"])
    return [
        Pos(ids[j] if ids else None, t, v, None, dict(top or {})) for j, (t, v, top) in enumerate(list(rows)[skip:])
    ]


def _chat(content: list, ids: list | None) -> list[Pos]:
    return [
        Pos(
            ids[j] if ids else None,
            e["token"],
            e["logprob"],
            None,
            {t["token"]: t["logprob"] for t in e["top_logprobs"]},
        )
        for j, e in enumerate(content)
    ]


def _joined(chunks: list) -> dict:
    """A stream's chunks as one body, by concatenation (first choice only)."""
    chat = chunks[0]["object"] == "chat.completion.chunk"
    parts = [c["choices"][0] for c in chunks if c["choices"]]
    ids = [i for p in parts for i in (p.get("token_ids") or [])] or None
    prompt_ids = next((x for c in chunks for x in [c.get("prompt_token_ids")] + [p.get("prompt_token_ids") for p in
                       c["choices"]] if x), None)  # fmt: skip
    if chat:
        content = [e for p in parts if p["logprobs"] for e in p["logprobs"]["content"]]
        choice = {"logprobs": {"content": content}, "token_ids": ids, "message": {}}
        return {"choices": [choice], "prompt_token_ids": prompt_ids, "prompt_logprobs": None}
    lp = {k: [x for p in parts if p["logprobs"] for x in p["logprobs"][k]] for k in ("tokens", "token_logprobs",
          "top_logprobs")}  # fmt: skip
    return {"choices": [{"logprobs": lp, "token_ids": ids, "prompt_token_ids": prompt_ids, "prompt_logprobs": None}]}


def positions(name: str, data: bytes | None = None) -> tuple[list[Pos], int]:
    """Every token of a recorded body in order, and how many of them are the prompt."""
    doc = body(name, data)
    if name.endswith(".sse"):
        doc = _joined(doc)  # type: ignore[arg-type]
    if isinstance(doc, list):  # offline outputs
        doc = doc[0]
        out = doc["outputs"][0]
        prompt = _vllm(doc["prompt_logprobs"], doc["prompt_token_ids"])
        return prompt + _vllm(out["logprobs"], out["token_ids"]), len(prompt)
    c = doc["choices"][0]
    if "message" in c:
        ids = doc.get("prompt_token_ids")
        prompt = _vllm(doc["prompt_logprobs"], ids) if doc.get("prompt_logprobs") else _bare(ids)
        return prompt + _chat(c["logprobs"]["content"], c.get("token_ids")), len(prompt)
    ids, lp = c.get("prompt_token_ids"), c["logprobs"]
    n = len(c.get("prompt_logprobs") or ids or [])
    echo = n if n and lp["token_logprobs"][0] is None else 0  # only an echoed first prompt token has no logprob
    if c.get("prompt_logprobs"):
        prompt = _vllm(c["prompt_logprobs"], ids)
        if echo and prompt[0].text is None:
            prompt[0].text = lp["tokens"][0]  # an echo gives the first token's text
    elif echo:  # a streamed echo: prompt_token_ids, and the prompt's logprobs as the echoed rows
        prompt = _openai({k: v[:echo] for k, v in lp.items()}, ids)
    else:
        prompt = _bare(ids)
    return prompt + _openai(lp, c.get("token_ids"), echo), len(prompt)


def _bare(ids: list | None) -> list[Pos]:
    return [Pos(i, None, None, None, {}) for i in ids or []]


def request_of(name: str) -> tuple[str, object, int]:
    """The request behind a recorded file: 'completions' and its prompt text, or 'chat' and its messages; and
    its max_tokens."""
    if name in OFFLINE:
        prompts, kw = OFFLINE[name]
        return "completions", prompts[0], kw["max_tokens"]
    route, req = REQUESTS[name]
    kind = "chat" if "chat" in route else "completions"
    return kind, req["messages" if kind == "chat" else "prompt"], req["max_tokens"]


def all_files() -> list[Path]:
    return sorted(p for p in DATA.iterdir() if p.name != "README.md")


def close(a, b, tol: float = 1e-6) -> bool:
    """A body's number (None: unscored, -9999.0: -inf) against ours, in float32."""
    if a is None:
        return math.isnan(b)
    return (a <= -9999.0 and b == -math.inf) or abs(float(a) - float(b)) < tol


def assert_opens_as_recorded(name: str, data: bytes):
    """Open `data` (a body of the kind of file `name`) and check every position against the body: ids and text
    where it gives them, logprobs, ranks, and the alternatives shown (the best the body lists, the actual token
    aside when it is only an extra). Returns what opened."""
    from explorer.export.read.documents import open_document

    o = open_document(data)
    r, (want, n_prompt) = o.results[0], positions(name, data)
    assert r.n == len(want) and r.n_prompt == n_prompt
    for j, w in enumerate(want):
        if w.id is not None:
            assert r.token_ids[j] == w.id, j
        if w.text is not None:
            assert r.token_text[j] == w.text, j
        elif w.id is None:  # neither: the first prompt token of a body without prompt_token_ids
            assert j == 0 and r.token_text[0] == "[?]" and any("return_token_ids" in n for n in o.notes)
        assert close(w.logprob, r.logprobs[j]), j
        assert r.ranks[j] == (w.rank or r.ranks[j]), j  # a rank the body gives is the one shown
        by_id = isinstance(next(iter(w.alts), 0), int)
        shown = {}
        for i, lp in zip(r.top_ids[j].tolist(), r.top_logprobs[j].tolist()):
            if i >= 0:
                shown[i if by_id else r.pieces[i].decode("utf-8", "replace")] = lp
        for key, lp in shown.items():  # every alternative shown is in the body, with its logprob
            assert close(w.alts[key], lp), (j, key)
        if w.logprob is None:
            assert not shown, j
            continue
        best = sorted(w.alts.values(), reverse=True)
        others = sorted((v for k, v in w.alts.items() if k != (w.id if by_id else w.text)), reverse=True)
        got, m = sorted(shown.values(), reverse=True), len(shown)
        assert m >= min(len(others), r.top_ids.shape[1]), j
        assert any(all(close(a, b) for a, b in zip(ref[:m], got)) for ref in (best, others)), j
    return o


def json_paths(x, width: int, prefix: tuple = ()):
    """Every key path into a JSON value (the root's `()` first), lists entered at their first `width` items."""
    yield prefix
    if isinstance(x, dict):
        for k, v in x.items():
            yield from json_paths(v, width, (*prefix, k))
    elif isinstance(x, list):
        for i, v in enumerate(x[:width]):
            yield from json_paths(v, width, (*prefix, i))
