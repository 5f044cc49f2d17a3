"""`stream: true`: server-sent events, one chunk per token, logprobs in every chunk.

Every chunk is shaped by the exporters (the same per-token functions as the
non-streamed bodies), so the concatenated chunk logprobs equal the non-stream
body for the same seeded request. Each function validates everything before it
returns; the iterator it returns computes one token per `next()`.
"""

from __future__ import annotations

from collections.abc import Iterator

from explorer.api.framing import sse
from explorer.engine import Done, stream
from explorer.engine.generation import step_scores
from explorer.export import openai_chat, openai_completion
from explorer.export.common import envelope, usage_chunk


def _steps(engine, ids, s, sample, check):
    """(Step or None, Done or None) pairs of one sample."""
    for ev in stream(engine, ids, s, sample=sample, want_prompt=False, check=check):
        yield (None, ev) if isinstance(ev, Done) else (ev, None)


def completion_events(engine, req, limits, check) -> Iterator[bytes]:
    """Completions chunks for every prompt x n sample."""
    from explorer.api.routes import completion_setup

    prompts, s = completion_setup(engine, req, limits)
    head = envelope("text_completion", engine.name, None, None, "cmpl")

    def gen():
        index, n_prompt, n_out = 0, 0, 0
        for ids in prompts:
            n_prompt += len(ids)
            for sample in range(s.n):
                for step, done in _steps(engine, ids, s, sample, check):
                    if done is not None:
                        yield openai_completion.chunk(head, index, None, "", 0, done.finish_reason)
                        break
                    n_out += 1
                    r = step_scores(engine, step, s) if req.logprobs is not None else None
                    yield openai_completion.chunk(head, index, r, step.text, step.start, None)
                index += 1
        if req.include_usage():
            yield usage_chunk(head, n_prompt, n_out)

    return sse(gen())


def chat_events(engine, req, limits, check) -> Iterator[bytes]:
    """Chat chunks: role first, then one chunk per token with its logprobs, then finish_reason."""
    from explorer.api.routes import chat_setup

    ids, s = chat_setup(engine, req, limits)
    head = envelope("chat.completion.chunk", engine.name, None, None, "chatcmpl")
    top = req.top()

    def gen():
        n_out = 0
        for sample in range(s.n):
            yield openai_chat.role_chunk(head, sample)
            for step, done in _steps(engine, ids, s, sample, check):
                if done is not None:
                    yield openai_chat.chunk(head, sample, None, None, None, done.finish_reason)
                    break
                n_out += 1
                r = step_scores(engine, step, s) if top is not None else None
                yield openai_chat.chunk(head, sample, r, step.text, top, None)
        if req.include_usage():
            yield usage_chunk(head, len(ids), n_out)

    return sse(gen())
