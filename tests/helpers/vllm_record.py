"""Record the response bodies of a real vLLM into tests/data/vllm/ (the files *Open a session* is tested on).

    python tests/helpers/vllm_record.py --url http://127.0.0.1:8100            # the server bodies (JSON and SSE)
    /work/vllm-venv/bin/python tests/helpers/vllm_record.py --offline MODEL_DIR  # vllm.LLM(...).generate outputs (minutes)

Server bodies are saved byte for byte as received (a stream as its SSE text, `data: {...}` through
`data: [DONE]`). Offline outputs have no JSON form of their own: they are saved the two ways users do it,
`json.dumps(outputs, default=vars)` (every attribute, Logprob objects as {logprob, rank, decoded_token}) and
an explicit dict of the fields that matter (the shape our `vllm-offline` export writes).

Standard library only (plus vllm for --offline): it runs in the vLLM venv as well as ours, and nothing in the
app imports it. tests/test_vllm_bodies.py uses it to record the same bodies live and compare them with the files.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "vllm"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
PROMPT = "The capital of France is"
MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
COMPLETION = {"model": MODEL, "prompt": PROMPT, "max_tokens": 8, "temperature": 0, "logprobs": 5}
CHAT = {"model": MODEL, "messages": MESSAGES, "max_tokens": 8, "temperature": 0, "logprobs": True, "top_logprobs": 5}
IDS = {"return_token_ids": True}
STREAM = {"stream": True}
USAGE = {"stream_options": {"include_usage": True}}

# file name -> (route, request body). A stream (.sse) is saved as the text received.
REQUESTS: dict[str, tuple[str, dict]] = {
    "completions.json": ("/v1/completions", COMPLETION),
    "completions.token-ids.json": ("/v1/completions", {**COMPLETION, **IDS}),
    "completions.echo.json": ("/v1/completions", {**COMPLETION, "echo": True}),
    "completions.echo.token-ids.json": ("/v1/completions", {**COMPLETION, "echo": True, **IDS}),
    "completions.prompt-logprobs.json": ("/v1/completions", {**COMPLETION, "prompt_logprobs": 5}),
    "completions.prompt-logprobs.token-ids.json": ("/v1/completions", {**COMPLETION, "prompt_logprobs": 5, **IDS}),
    "completions.stream.sse": ("/v1/completions", {**COMPLETION, **STREAM}),
    "completions.stream.token-ids.sse": ("/v1/completions", {**COMPLETION, **STREAM, **USAGE, **IDS}),
    "completions.stream.echo.sse": ("/v1/completions", {**COMPLETION, **STREAM, "echo": True}),
    "chat.json": ("/v1/chat/completions", CHAT),
    "chat.prompt-logprobs.json": ("/v1/chat/completions", {**CHAT, "prompt_logprobs": 5}),
    "chat.prompt-logprobs.token-ids.json": ("/v1/chat/completions", {**CHAT, "prompt_logprobs": 5, **IDS}),
    "chat.stream.sse": ("/v1/chat/completions", {**CHAT, **STREAM}),
    "chat.stream.token-ids.sse": ("/v1/chat/completions", {**CHAT, **STREAM, **USAGE, **IDS}),
}

# the offline run: prompts and SamplingParams keyword arguments. prompt_logprobs -1 = the full vocabulary, 49,152
# entries a position, about 1 MB a position once gzipped: a 2-token prompt (one scored position) keeps it small.
SAMPLING = {"logprobs": 5, "prompt_logprobs": 5, "max_tokens": 8, "temperature": 0}
OFFLINE = {
    "offline.vars.json": ([PROMPT], SAMPLING),
    "offline.dict.json": ([PROMPT], SAMPLING),
    "offline.full-vocab.json.gz": (["The capital"], {**SAMPLING, "prompt_logprobs": -1, "max_tokens": 1}),
}


def fetch(url: str, route: str, body: dict, timeout: float = 300) -> bytes:
    """The server's answer to POST `route` with `body`, as the bytes received (a stream's SSE text whole)."""
    req = urllib.request.Request(
        url.rstrip("/") + route, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read()
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"{route} answered {err.code}: {err.read()[:500]!r}") from None


def parsed(name: str, data: bytes) -> object:
    """A recorded file's JSON: a stream (.sse) as the list of its events' JSON, `data: [DONE]` included as None."""
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    if not name.endswith(".sse"):
        return json.loads(data)
    events = [ln[len("data: ") :] for ln in data.decode().split("\n") if ln.startswith("data: ")]
    return [None if e == "[DONE]" else json.loads(e) for e in events]


VOLATILE = {"id", "created", "system_fingerprint"}  # new on every answer; a hash of the server's config


def differences(a: object, b: object, tol: float = 1e-4, path: str = "$") -> list[str]:
    """Where two bodies differ: keys (and their order), lengths, strings, whole numbers; other numbers beyond
    `tol`. The values of VOLATILE keys are not compared."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} != {list(b)}"]
        return [d for k in a if k not in VOLATILE for d in differences(a[k], b[k], tol, f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, tol, f"{path}[{i}]")]
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        if isinstance(a, int) and isinstance(b, int):
            return [] if a == b else [f"{path}: {a} != {b}"]
        return [] if abs(a - b) <= tol else [f"{path}: {a} != {b}"]
    return [] if a == b and type(a) is type(b) else [f"{path}: {str(a)[:80]!r} != {str(b)[:80]!r}"]


def fetch_stable(url: str, name: str, tries: int = 4) -> bytes:
    """REQUESTS[name]'s answer, asked until two answers in a row agree (to 1e-6): a batch-mate of another client
    once gave this server's top_logprobs -inf alternatives for a few steps; such an answer is not recorded."""
    route, body = REQUESTS[name]
    last = fetch(url, route, body)
    for _ in range(tries - 1):
        data = fetch(url, route, body)
        if not differences(parsed(name, last), parsed(name, data), tol=1e-6):
            return data
        last = data
    raise RuntimeError(f"{name}: the server's answers to the same request kept changing")


def record_server(url: str, only: list[str] | None = None) -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for name in only or REQUESTS:
        data = fetch_stable(url, name)
        (DATA / name).write_bytes(data)
        print(f"{name}: {len(data):,} bytes")


# ---- offline: runs inside the vLLM venv ----------------------------------------------------------------------
def as_dict(out) -> dict:
    """A RequestOutput as the dict users write by hand: the fields that matter, Logprob objects as dicts."""

    def position(d):
        return None if d is None else {str(i): vars(lp) for i, lp in d.items()}

    return {
        "request_id": out.request_id,
        "prompt": out.prompt,
        "prompt_token_ids": list(out.prompt_token_ids),
        "prompt_logprobs": None if out.prompt_logprobs is None else [position(d) for d in out.prompt_logprobs],
        "outputs": [
            {
                "index": o.index,
                "text": o.text,
                "token_ids": list(o.token_ids),
                "cumulative_logprob": o.cumulative_logprob,
                "logprobs": None if o.logprobs is None else [position(d) for d in o.logprobs],
                "finish_reason": o.finish_reason,
            }
            for o in out.outputs
        ],
        "finished": out.finished,
    }


def record_offline(model_dir: str) -> None:
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    from vllm import LLM, SamplingParams

    llm = LLM(model=model_dir, dtype="float32", max_logprobs=-1, max_model_len=512, seed=0, enforce_eager=True)
    DATA.mkdir(parents=True, exist_ok=True)
    for name, (prompts, kw) in OFFLINE.items():
        outputs = llm.generate(prompts, SamplingParams(**kw))
        if name.startswith("offline.vars"):
            text = json.dumps(outputs, default=vars)
        else:
            text = json.dumps([as_dict(o) for o in outputs])
        data = text.encode()
        (DATA / name).write_bytes(gzip.compress(data, 9, mtime=0) if name.endswith(".gz") else data)
        print(f"{name}: {len(data):,} bytes")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="a running vLLM server serving " + MODEL)
    ap.add_argument("--offline", metavar="MODEL_DIR", help="run vllm.LLM on this folder (in the vLLM venv)")
    ap.add_argument("--only", nargs="+", choices=sorted(REQUESTS), help="record just these server bodies")
    args = ap.parse_args()
    if not (args.url or args.offline):
        ap.error("give --url or --offline")
    if args.url:
        record_server(args.url, args.only)
    if args.offline:
        record_offline(args.offline)
    sys.exit(0)
