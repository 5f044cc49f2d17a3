"""Server-sent events for `stream: true`: one chunk per token, logprobs in every chunk.

The chunks reuse the exporters' per-token entries, so the concatenated chunk
logprobs equal the non-stream body for the same seeded request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from explorer.api.common import prompts_of, settings_of
from explorer.engine import Done, stream
from explorer.errors import ExplorerError
from explorer.export.common import envelope, num, token_str
from explorer.export.openai_chat import entry
from explorer.export.openai_completion import top_dict
from explorer.settings import SamplerSettings


def sse(events: Iterable[dict]) -> Iterator[str]:
    """`data: {...}` lines, then `data: [DONE]`."""
    for ev in events:
        yield f"data: {json.dumps(ev, ensure_ascii=False, allow_nan=False)}\n\n"
    yield "data: [DONE]\n\n"


def _steps(engine, ids: list[int], s: SamplerSettings, sample: int):
    """(Step or None, Done or None) pairs of one sample."""
    for ev in stream(engine, ids, s, sample=sample, want_prompt=False):
        yield (None, ev) if isinstance(ev, Done) else (ev, None)


def _top(step, k: int) -> list[tuple[int, float]]:
    return [(int(i), float(lp)) for i, lp in zip(step.top_ids[:k].tolist(), step.top_logprobs[:k].tolist())]


def completion_events(engine, req) -> Iterator[dict]:
    """Completions chunks for every prompt x n sample (validated eagerly by the caller's first next())."""
    if req.echo:
        raise ExplorerError("`echo` cannot be combined with `stream: true` here.", param="echo", code="invalid_value")
    prompts = prompts_of(engine, req.prompt)
    for ids in prompts:
        engine.check_ids(ids)
    s = settings_of(req, 16 if req.max_tokens is None else req.max_tokens, req.logprobs, None)
    head = envelope("text_completion", engine.name, None, None, "cmpl")

    def gen():
        index, usage = 0, [0, 0]
        for ids in prompts:
            usage[0] += len(ids)
            for sample in range(s.n):
                offset = 0
                for step, done in _steps(engine, ids, s, sample):
                    if done is not None:
                        yield {**head, "choices": [{"index": index, "text": "", "logprobs": None, "finish_reason": done.finish_reason}]}
                        break
                    usage[1] += 1
                    lp = None
                    if req.logprobs is not None:
                        piece = engine.vocab[step.token_id]
                        top = top_dict([(engine.vocab[i], v) for i, v in _top(step, req.logprobs)], piece, step.logprob)
                        lp = {"tokens": [token_str(piece)], "token_logprobs": [num(step.logprob)], "top_logprobs": [top],
                              "text_offset": [offset]}
                    offset += len(step.text)
                    yield {**head, "choices": [{"index": index, "text": step.text, "logprobs": lp, "finish_reason": None}]}
                index += 1
        if req.include_usage():
            yield {**head, "choices": [], "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}

    return gen()


def chat_events(engine, req, ids: list[int], s: SamplerSettings, top: int | None) -> Iterator[dict]:
    """Chat chunks: role first, then one chunk per token with its logprobs, then finish_reason."""
    head = envelope("chat.completion.chunk", engine.name, None, None, "chatcmpl")
    completion_tokens = 0
    for sample in range(s.n):
        yield {**head, "choices": [{"index": sample, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}]}
        for step, done in _steps(engine, ids, s, sample):
            if done is not None:
                yield {**head, "choices": [{"index": sample, "delta": {}, "logprobs": None, "finish_reason": done.finish_reason}]}
                break
            completion_tokens += 1
            lp = None
            if top is not None:
                e = entry(engine.vocab[step.token_id], step.logprob)
                e["top_logprobs"] = [entry(engine.vocab[i], v) for i, v in _top(step, top)]
                lp = {"content": [e], "refusal": None}
            yield {**head, "choices": [{"index": sample, "delta": {"content": step.text}, "logprobs": lp, "finish_reason": None}]}
    if req.include_usage():
        yield {**head, "choices": [], "usage": {"prompt_tokens": len(ids), "completion_tokens": completion_tokens,
                                                "total_tokens": len(ids) + completion_tokens}}

