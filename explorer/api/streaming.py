"""`stream: true`: server-sent events, one chunk per token, logprobs in every chunk.

Every chunk is shaped by the exporters (the same per-token functions as the
non-streamed bodies), so the concatenated chunk logprobs equal the non-stream
body for the same seeded request. As vLLM does, `finish_reason` travels on the
chunk of the last token (so `max_tokens: N` gives at most N content chunks), then
the usage chunk when asked, then `[DONE]`. Each function validates everything
before it returns; the iterator it returns computes one token per `next()`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from explorer.api.framing import sse
from explorer.api.handlers import asked, chat_plan, completion_plan
from explorer.api.runner import HERE, Runner, Work
from explorer.engine import Done, score_ids
from explorer.engine.passes.generation import collect, samples, step_scores
from explorer.export import openai_chat, openai_completion
from explorer.export.common import envelope, last_chunk, usage_chunk, usage_of
from explorer.results.scores import TokenScores


def _tokens(events):
    """(Step, Done or None) per generated token of one sample's `events`, the Done riding on the last one;
    (None, Done) when none came.

    The last token's text also carries what only the end of the text decodes (a split character's `\ufffd`),
    so the streamed texts join to the non-streamed `text`.
    """
    held, sent = None, ""
    for ev in events:
        if isinstance(ev, Done):
            if held is not None:
                joined = sent + held.text
                if ev.text.startswith(joined) and len(ev.text) > len(joined):
                    held = replace(held, text=held.text + ev.text[len(joined) :])
            yield held, ev
            return
        if held is not None:
            sent += held.text
            yield held, None
        held = ev


def _scores(engine, step, s, done, wanted: bool):
    """The step as a one-token TokenScores for the exporters (marked when it is the EOS that ended the text)."""
    if step is None or not wanted:
        return None
    r = step_scores(engine, step, s)
    return replace(r, stop_token=done.stop_token) if done is not None else r


def _ended(chunks: Iterator[dict]) -> Iterator[dict]:
    """The chunks, the final one marked with `system_fingerprint` (vLLM's), held back one chunk to know it."""
    held = None
    for c in chunks:
        if held is not None:
            yield held
        held = c
    if held is not None:
        yield last_chunk(held)


def _echoed(engine, ids, s, step, done, prompt: TokenScores):
    """The first chunk's result with `echo`: the scored prompt and the first token in one TokenScores."""
    steps = [step] if step is not None else []
    end = done or Done("length", step.text if step else "", None)
    return collect(engine, ids, s, steps, replace(end, prompt_rows=prompt.rows.sliced(slice(1, None))))


def completion_events(engine, req, limits, run: Runner = HERE) -> Iterator[bytes]:
    """Completions chunks for every prompt x n sample (validated now, computed as they are read, by `run`)."""
    p = completion_plan(engine, req, limits)
    tokens = asked(p.prompts, p.settings)
    if req.echo:  # each prompt is scored for its echo, then read again for its generation
        tokens["tokens_in"] *= 2
    return run.steps(engine, Work(completion_chunks, (req, p.prompts, p.settings, p.options), **tokens))


def completion_chunks(engine, req, prompts: list[list[int]], s, o: openai_completion.Options) -> Iterator[bytes]:
    """The chunks of `completion_events`; with `echo`, each choice's first chunk leads with its prompt."""
    head = envelope("text_completion", engine.name, None, None, "cmpl")
    # the echoed prompt is scored even with no logprobs asked: k 0 (its own tokens' logprobs), never written then
    pk = o.prompt_logprobs if o.prompt_logprobs is not None else (o.logprobs or 0)

    def gen():
        index, n_prompt, n_out = 0, 0, 0
        for ids in prompts:
            n_prompt += len(ids)
            prompt = score_ids(engine, ids, k=pk) if req.echo else None
            with samples(engine, ids, s, want_prompt=False) as streams:  # decoded together where batched
                for events in streams:
                    first = True
                    for step, done in _tokens(events):
                        n_out += step is not None
                        echo = first and prompt is not None
                        if echo and prompt is not None:
                            r = _echoed(engine, ids, s, step, done, prompt) if o.logprobs is not None else None
                            text = prompt.prompt_text + (step.text if step else "")
                        else:
                            r = _scores(engine, step, s, done, o.logprobs is not None)
                            text = step.text if step else ""
                        piece = openai_completion.Piece(
                            text=text,
                            offset=(len(prompt.prompt_text) if prompt is not None and not echo else 0)
                            + (step.start if step and not echo else 0),
                            finish_reason=done.finish_reason if done else None,
                            stop_reason=done.stop_reason if done else None,
                            token_ids=[step.token_id] if step and o.return_token_ids else None,
                            tokens_as_ids=o.tokens_as_ids,
                            prompt_token_ids=ids if first and (o.return_token_ids or echo) else None,
                            echo=echo,
                            prompt_k=pk,
                        )
                        c = openai_completion.chunk(head, index, r, piece)
                        first = False
                        if req.continuous_usage():
                            c["usage"] = usage_of(n_prompt, n_out, details=False)
                        yield c
                    index += 1
        if req.include_usage():
            yield usage_chunk(head, n_prompt, n_out)

    return sse(_ended(gen()))


def chat_events(engine, req, limits, run: Runner = HERE) -> Iterator[bytes]:
    """Chat chunks (validated now, computed as they are read, by `run`)."""
    p = chat_plan(engine, req, limits)
    return run.steps(
        engine, Work(chat_chunks, (req, *p.prompts, p.settings, p.options), **asked(p.prompts, p.settings))
    )


def chat_chunks(engine, req, ids: list[int], s, o: openai_chat.Options) -> Iterator[bytes]:
    """The chunks of `chat_events`: role first, then one chunk per token with its logprobs, the last one with
    finish_reason."""
    head = envelope("chat.completion.chunk", engine.name, None, None, "chatcmpl")

    def gen():
        n_out = 0
        with samples(engine, ids, s, want_prompt=False) as streams:  # decoded together where batched
            for sample, events in enumerate(streams):
                yield openai_chat.role_chunk(
                    head, sample, o.echo_text, ids if sample == 0 and o.return_token_ids else None
                )
                for step, done in _tokens(events):
                    n_out += step is not None
                    r = _scores(engine, step, s, done, o.logprobs)
                    piece = openai_chat.Piece(
                        text=step.text if step else "",
                        top_logprobs=o.top_logprobs,
                        finish_reason=done.finish_reason if done else None,
                        stop_reason=done.stop_reason if done else None,
                        token_ids=[step.token_id] if step and o.return_token_ids else None,
                        tokens_as_ids=o.tokens_as_ids,
                    )
                    c = openai_chat.chunk(head, sample, r, piece)
                    if req.continuous_usage():
                        c["usage"] = usage_of(len(ids), n_out, details=False)
                    yield c
        if req.include_usage():
            yield usage_chunk(head, len(ids), n_out)

    return sse(_ended(gen()))
