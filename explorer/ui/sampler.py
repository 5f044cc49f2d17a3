"""Sampler controls shared by Generate and Chat, and the streaming run that fills the inspector."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import gradio as gr

from explorer.engine import Done, Engine, stream, with_seed
from explorer.engine.generation import collect
from explorer.runtime import Models
from explorer.settings import MAX_K, SamplerSettings
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import Inspector, parse_thresholds

UI_K = MAX_K  # compute the top-20 once; the k slider only slices it
MODE_CHOICES = ["raw: the model's own distribution", "processed: after temperature / top-k / top-p"]
PARTIAL_EVERY_S = 0.2  # at most five heatmap refreshes a second while streaming


def sampler_controls() -> list:
    """Max tokens, temperature, top-p, top-k, seed, stop strings, mode, score-the-prompt (in that order)."""
    with gr.Row():
        max_tokens = gr.Slider(1, 512, value=48, step=1, label="Max tokens")
        temperature = gr.Slider(0, 2, value=0.7, step=0.05, label="Temperature (0 = greedy)")
        top_p = gr.Slider(0.01, 1, value=1.0, step=0.01, label="Top-p (1 = off)")
        top_k = gr.Slider(0, 200, value=0, step=1, label="Top-k (0 = off)")
    with gr.Row():
        seed = gr.Number(value=None, precision=0, label="Seed (empty = random, shown in the summary)")
        stop = gr.Textbox(label="Stop strings (one per line; \\n for a newline)", lines=1)
        mode = gr.Radio(MODE_CHOICES, value=MODE_CHOICES[0], label="Numbers shown",
                        info="raw = what the model believes; processed = what the sampler actually drew from")
        score_prompt = gr.Checkbox(value=True, label="Also score the prompt's tokens")
    return [max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt]


def settings(max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt) -> SamplerSettings:
    """SamplerSettings from the controls' values, with a concrete seed."""
    stops = tuple(s.replace("\\n", "\n") for s in (stop or "").splitlines() if s)
    try:  # the controls' values as numbers; the rules themselves are SamplerSettings' alone
        numbers = dict(max_tokens=int(max_tokens), temperature=float(temperature), top_p=float(top_p), top_k=int(top_k),
                       seed=None if seed in (None, "") else int(seed))
    except (ValueError, TypeError) as err:  # a number field that is not a number
        raise error(f"Check the sampler settings: {err}.") from None
    with user_errors():
        return with_seed(SamplerSettings(**numbers, stop=stops, logprobs=UI_K, prompt_logprobs=UI_K if score_prompt else None,
                                         mode="processed" if str(mode).startswith("processed") else "raw"))


def run(models: Models, name: str, encode: Callable[[Engine], list[int]], s: SamplerSettings, inspector: Inspector,
        metric: str, thresholds_text: str, k: int) -> Iterator[dict]:
    """Stream a generation from `encode(engine)`: the heatmap alone while it runs, every view at the end."""
    t = parse_thresholds(thresholds_text)
    steps, last = [], 0.0
    with user_errors(), models.use(name) as engine:
        ids = encode(engine)
        for ev in stream(engine, ids, s):
            if isinstance(ev, Done):
                yield inspector.show(collect(engine, ids, s, steps, ev), metric, thresholds_text, k)
                return
            steps.append(ev)
            if time.monotonic() - last > PARTIAL_EVERY_S:
                last = time.monotonic()
                yield inspector.partial(collect(engine, ids, s, steps), metric, t)
