"""Sampler controls shared by Generate and Chat, and the streaming run that fills the inspector."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import astuple, dataclass
from typing import Any

import gradio as gr

from explorer.engine import Done, ModelEngine, Step, stream, with_seed
from explorer.engine.generation import collect
from explorer.links import CONTROL_BOUNDS, DEFAULT_SAMPLER
from explorer.models import Models
from explorer.render.heatmap import Marks
from explorer.settings import SamplerSettings, page_k
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import Inspector, new_rid, parse_thresholds

MODE_CHOICES = ["raw: the model's own distribution", "processed: after temperature / top-k / top-p"]
PARTIAL_EVERY_S = 0.2  # at most five heatmap refreshes a second while streaming


@dataclass(frozen=True)
class RunOptions:
    """A generation's options as the page's controls give them (`sampler_controls`' order, then the inspector's
    look): what Generate and Chat run with, and what a link's rerun builds."""

    max_tokens: Any = DEFAULT_SAMPLER["max_tokens"]
    temperature: Any = DEFAULT_SAMPLER["temperature"]
    top_p: Any = DEFAULT_SAMPLER["top_p"]
    top_k: Any = DEFAULT_SAMPLER["top_k"]
    seed: Any = ""  # empty: a new random seed
    stop: Any = ""  # one a line, \\n for a newline
    mode: Any = MODE_CHOICES[0]
    score_prompt: Any = True
    metric: str = "logprob"
    thresholds_text: str = "1, 10, 100, 1000"
    k: int = 10

    def settings(self) -> SamplerSettings:
        """SamplerSettings from the controls' values, with a concrete seed."""
        return settings(*astuple(self)[:8])


def _slider(key: str, most: float, value: float, step: float, label: str) -> gr.Slider:
    """A sampler slider over the page's range for `key` (explorer/links.py's CONTROL_BOUNDS, which links keep to)."""
    lo, hi = CONTROL_BOUNDS[key]
    return gr.Slider(lo, min(hi, most), value=min(value, most), step=step, label=label)


def sampler_controls(cap: int = 0) -> list:
    """Max tokens (up to the server's `cap` where it has one), temperature, top-p, top-k, seed, stop strings, mode,
    score-the-prompt (in that order)."""
    most = cap or CONTROL_BOUNDS["max_tokens"][1]
    d = DEFAULT_SAMPLER
    with gr.Row():
        max_tokens = _slider("max_tokens", most, d["max_tokens"], 1, "Max tokens")
        temperature = _slider("temperature", math.inf, d["temperature"], 0.05, "Temperature (0 = greedy)")
        top_p = _slider("top_p", math.inf, d["top_p"], 0.01, "Top-p (1 = off)")
        top_k = _slider("top_k", math.inf, d["top_k"], 1, "Top-k (0 = off)")
    with gr.Row():
        seed = gr.Textbox(
            "",
            label="Seed",
            placeholder="empty: a new random seed each run",
            info="The seed used is shown with the result; “Reuse seed” puts it here.",
        )
        stop = gr.Textbox(label="Stop strings (one per line; \\n for a newline)", lines=1)
        mode = gr.Radio(
            MODE_CHOICES,
            value=MODE_CHOICES[0],
            label="Numbers shown for generated tokens",
            info="raw = what the model believes; processed = what the sampler drew from. Prompt numbers are raw.",
        )
        score_prompt = gr.Checkbox(value=True, label="Also score the prompt's tokens")
    return [max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt]


def run_buttons(label: str) -> tuple[gr.Button, gr.Button, gr.Button]:
    """The run button, Stop, and Reuse seed (hidden until a run shows its seed)."""
    with gr.Row():
        go = gr.Button(label, variant="primary", scale=3)
        stop = gr.Button("Stop", variant="stop", scale=1)
        reuse = gr.Button("Reuse seed", visible=False, scale=1)
    return go, stop, reuse


def wire_reuse(reuse: gr.Button, seed: gr.Textbox, inspector: Inspector) -> None:
    """'Reuse seed' puts the last result's seed into the seed box."""

    def last_seed(state: list):
        s = state[0].sampler.get("seed") if state else None
        return "" if s is None else str(s)

    reuse.click(last_seed, [inspector.result], [seed], api_visibility="private")


def reuse_button(r) -> gr.Button:
    """The Reuse button after a run: labelled with the seed it used (hidden for greedy runs, which need none)."""
    seed = r.sampler.get("seed")
    return gr.Button(f"Reuse seed {seed}", visible=seed is not None and r.sampler.get("temperature") != 0)


def parse_seed(seed) -> int | None:
    """The seed box's value: empty means random (None)."""
    if seed is None or (isinstance(seed, str) and not seed.strip()):
        return None
    try:  # its range is SamplerSettings' rule, as for the CLI and the API
        return int(str(seed).strip())
    except ValueError:
        raise ValueError(
            f"the seed must be a whole number, or empty for a random one (got {str(seed)[:40]!r})"
        ) from None


def settings(max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt) -> SamplerSettings:
    """SamplerSettings from the controls' values, with a concrete seed."""
    stops = tuple(s.replace("\\n", "\n") for s in (stop or "").splitlines() if s)
    try:  # the controls' values as numbers; the rules themselves are SamplerSettings' alone
        numbers: dict[str, Any] = dict(
            max_tokens=int(max_tokens),
            temperature=float(temperature),
            top_p=float(top_p),
            top_k=int(top_k),
            seed=parse_seed(seed),
        )
    except (ValueError, TypeError) as err:  # a number field that is not a number
        raise error(f"Check the sampler settings: {err}.") from None
    k = page_k()  # compute the top-k once (at most the server's cap); the k slider only slices it
    with user_errors():
        return with_seed(
            SamplerSettings(
                **numbers,
                stop=stops,
                logprobs=k,
                prompt_logprobs=k if score_prompt else None,
                mode="processed" if str(mode).startswith("processed") else "raw",
            )
        )


def run(
    models: Models,
    name: str,
    encode: Callable[[ModelEngine], tuple[list[int], Marks]],
    s: SamplerSettings,
    inspector: Inspector,
    metric: str,
    thresholds_text: str,
    k: int,
    finish: Callable[..., dict] | None = None,
) -> Iterator[dict]:
    """Stream a generation from `encode(engine)` (ids and marks): the heatmap alone while it runs, every view at
    the end, plus `finish(result)`'s own outputs."""
    t = parse_thresholds(thresholds_text)
    steps: list[Step] = []
    last, rid = 0.0, new_rid()
    with user_errors(), models.use(name) as engine:
        ids, marks = encode(engine)
        for ev in stream(engine, ids, s):
            if isinstance(ev, Done):
                r = collect(engine, ids, s, steps, ev)
                yield {**inspector.show(r, metric, thresholds_text, k, marks, rid), **(finish(r) if finish else {})}
                return
            steps.append(ev)
            if time.monotonic() - last > PARTIAL_EVERY_S:
                first, last = last == 0.0, time.monotonic()
                yield inspector.partial(collect(engine, ids, s, steps), metric, t, marks, rid, first=first)
