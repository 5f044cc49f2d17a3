"""Sampler controls shared by Generate and Chat, and the streaming run that fills the inspector."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, make_dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import gradio as gr

from explorer.engine import Done, ModelEngine, Step, stream, with_seed
from explorer.engine.passes.generation import collect
from explorer.errors import ExplorerError
from explorer.render.heatmap import Marks
from explorer.rules.sampler import SamplerSettings, is_greedy, page_fields, page_k
from explorer.rules.sampler import knobs as knobs_of
from explorer.serving.models import Models
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import Inspector, View, new_rid, parse_thresholds
from explorer.ui.links import damaged
from explorer.ui.sliders import Range, ranged, sliders_of
from explorer.ui.stop import stop_button

MODE_CHOICES = ["raw: the model's own distribution", "processed: after temperature / top-k / top-p"]
PARTIAL_EVERY_S = 0.2  # at most five heatmap refreshes a second while streaming


def stop_line(stop: str) -> str:
    """A stop string as one line of the stop box: a backslash, a new line and a carriage return written \\\\, \\n
    and \\r (read back exactly by `stop_of`)."""
    return stop.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def stop_of(line: str) -> str:
    """The stop string one line of the stop box writes (`stop_line`'s inverse; a lone backslash stays one)."""
    return re.sub(r"\\([\\nr])", lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), "\\"), line)


class _Sampler:
    """The page's sampler, one field per control by the same name (its widget: `sampler_controls`): what Generate,
    Chat and Branch run with and what their links carry (`sampler`). The fields are SamplerSettings' marked `page`
    (explorer/rules/sampler.py `rule`), each slider's Range its knob: a field marked there is a control here, in
    the links and in the endpoints, with nothing written in this module."""

    LINK_V2: ClassVar[tuple[str, ...]] = ("max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "mode")
    if TYPE_CHECKING:  # the fields are made from SamplerSettings' (`Sampler` below)
        __dataclass_fields__: ClassVar[dict[str, Any]]

        def __init__(self, **values: Any) -> None: ...
        def __getattr__(self, name: str) -> Any: ...

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def sliders(cls) -> dict[str, Range]:
        """Each slider's name -> its Range."""
        return sliders_of(cls)

    @classmethod
    def ranges(cls) -> dict[str, tuple[float, float]]:
        """Each slider's name -> (low, high)."""
        return {name: (r.lo, r.hi) for name, r in cls.sliders().items()}

    # ---- a link's `sampler` ----------------------------------------------------------------------
    def to_link(self) -> dict:
        """The link's object: the fields links have written since version 2, then any other set (an older
        link is written the same as before a field was added)."""
        default, out = Sampler(), {}
        for k in self.names():
            v = getattr(self, k)
            if k in self.LINK_V2 or v != getattr(default, k):
                out[k] = list(v) if k == "stop" else v
        return out

    @classmethod
    def read(cls, v: object) -> Sampler:
        """A link's `sampler`: SamplerSettings' rules, then the page controls' ranges (ExplorerError: damaged)."""
        if not isinstance(v, dict):
            raise damaged("`sampler` must be an object")
        s = {**Sampler().to_link(), **{k: v[k] for k in cls.names() if k in v}}
        if not isinstance(s["stop"], list):
            raise damaged("`sampler.stop` must be a list of strings")
        try:
            checked = SamplerSettings.from_dict({**s, "logprobs": None}).to_dict()
        except ExplorerError as err:
            raise damaged(f"its sampler settings are out of range: {err.message}") from None
        except TypeError:
            raise damaged("its sampler settings have the wrong types") from None
        for key, (lo, hi) in cls.ranges().items():
            if not lo <= checked[key] <= hi:
                raise damaged(f"`{key}` (={checked[key]}) is outside the page's range {lo} to {hi}")
        return cls.of(checked)

    @classmethod
    def of(cls, settings: dict) -> Sampler:
        """The fields of a settings object (SamplerSettings.to_dict: a link's, or what a generation ran with)."""
        kw: dict[str, Any] = {k: tuple(x) if k == "stop" else x for k, x in settings.items() if k in cls.names()}
        return cls(**kw)

    # ---- the page's controls ----------------------------------------------------------------------
    def controls(self) -> dict[str, Any]:
        """Each control's value by name (the seed and the stop strings as their boxes write them)."""
        v: dict[str, Any] = {k: getattr(self, k) for k in self.names()}
        v["seed"] = "" if self.seed is None else str(self.seed)
        v["stop"] = "\n".join(stop_line(s) for s in self.stop)
        v["mode"] = MODE_CHOICES[self.mode == "processed"]
        return v

    @classmethod
    def from_controls(cls, values: Mapping[str, Any]) -> Sampler:
        """The controls' values by name as numbers and strings (a gr.Error saying which is not a number); the
        rules themselves are SamplerSettings' (`settings`)."""
        default, out, sliders = cls(), dict[str, Any](), cls.sliders()
        try:
            for k in cls.names():
                x = values.get(k, getattr(default, k))
                if k == "seed":
                    out[k] = parse_seed(x)
                elif k == "stop":
                    out[k] = tuple(stop_of(line) for line in str(x or "").split("\n") if line)
                elif k == "mode":
                    out[k] = "processed" if str(x).startswith("processed") else "raw"
                else:  # a slider: a whole number where its range is one
                    out[k] = sliders[k].number(x)
        except (ValueError, TypeError) as err:  # a number field that is not a number
            raise error(f"Check the sampler settings: {err}.") from None
        return cls(**out)

    def settings(self, score_prompt: bool) -> SamplerSettings:
        """SamplerSettings with a concrete seed; the top-k computed once (at most the server's cap: the k slider
        only slices it), the prompt's too when `score_prompt`."""
        top = page_k()
        values = {name: getattr(self, name) for name in self.names()}
        with user_errors():
            return with_seed(SamplerSettings(**values, logprobs=top, prompt_logprobs=top if score_prompt else None))


def _page_field(name: str) -> tuple[str, Any, Any]:
    """A Sampler field for SamplerSettings' field `name`: its slider where it has a knob, else its default."""
    f = SamplerSettings.__dataclass_fields__[name]
    knob = f.metadata.get("knob")
    return (name, f.type, ranged(Range.of(knob)) if knob else field(default=f.default))


if TYPE_CHECKING:
    Sampler = _Sampler
else:
    Sampler = make_dataclass("Sampler", [_page_field(n) for n in page_fields()], bases=(_Sampler,), frozen=True)
    Sampler.__doc__, Sampler.__module__ = _Sampler.__doc__, __name__


@dataclass(frozen=True)
class RunOptions:
    """A generation's options: the sampler, whether the prompt is scored too, and the inspector's look. What
    Generate, Chat and Branch run with, and what a link's rerun builds."""

    sampler: Sampler = field(default_factory=Sampler)
    score_prompt: bool = True
    metric: str = "logprob"
    thresholds_text: str = "1, 10, 100, 1000"
    k: int = 10

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> RunOptions:
        """From the controls' values by name (the sampler's fields, `score_prompt` and LOOK: as Gradio passes a
        handler's `inputs_kwargs`; the look: Inspector.look); a missing one takes its default."""
        look = {k: values[k] for k in ("metric", "thresholds_text", "k") if k in values}
        return cls(sampler=Sampler.from_controls(values), score_prompt=bool(values.get("score_prompt", True)), **look)

    def settings(self) -> SamplerSettings:
        """SamplerSettings from the controls' values, with a concrete seed."""
        return self.sampler.settings(self.score_prompt)


# the /generate, /chat and /branch endpoints' parameters in the order they have had since a release (presence_penalty:
# 0.3.0): a control added since comes after them all, so a client passing values by position keeps working
ENDPOINT_ORDER = ("max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "mode", "score_prompt", "metric",
                  "thresholds_text", "k", "presence_penalty")  # fmt: skip


def endpoint_inputs(controls: dict[str, Any], look: dict[str, Any] | None = None) -> dict[str, Any]:
    """A handler's keyword inputs: the sampler's `controls` and the inspector's `look` (by name), in ENDPOINT_ORDER,
    then the controls added since."""
    both = {**controls, **(look or {})}
    return {k: both[k] for k in ENDPOINT_ORDER if k in both} | both


def sampler_controls(cap: int = 0) -> dict[str, Any]:
    """Each control by its name (Sampler's fields, then `score_prompt`): max tokens (up to the server's `cap` where
    it has one), temperature, top-p, top-k, presence penalty, seed, stop strings, mode, score-the-prompt."""
    knobs = knobs_of(page=True)
    c: dict[str, Any] = {}
    with gr.Row():  # one slider per knob (SamplerSettings' `page` fields): max tokens capped by the server
        for name, r in Sampler.sliders().items():
            c[name] = r.widget(knobs[name].label, (cap or math.inf) if name == "max_tokens" else math.inf)
    with gr.Row():
        c["seed"] = gr.Textbox(
            "",
            label="Seed",
            placeholder="empty: a new random seed each run",
            info="The seed used is shown with the result; “Reuse seed” puts it here.",
        )
        c["stop"] = gr.Textbox(label="Stop strings (one per line; \\n for a newline)", lines=1)
        c["mode"] = gr.Radio(
            MODE_CHOICES,
            value=MODE_CHOICES[0],
            label="Numbers shown for generated tokens",
            info="raw = what the model believes; processed = what the sampler drew from. Prompt numbers are raw.",
        )
        c["score_prompt"] = gr.Checkbox(value=True, label="Also score the prompt's tokens")
    return c


def run_buttons(label: str) -> tuple[gr.Button, gr.Button, gr.Button]:
    """The run button, Stop (hidden until a run starts: ui/stop.py) and Reuse seed (hidden until a run shows its
    seed)."""
    with gr.Row():
        go = gr.Button(label, variant="primary", scale=3)
        stop = stop_button(scale=1)
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
    return gr.Button(f"Reuse seed {seed}", visible=seed is not None and not is_greedy(r.sampler.get("temperature")))


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


def run(
    models: Models,
    name: str,
    *,
    encode: Callable[[ModelEngine], tuple[list[int], Marks]],
    opts: RunOptions,
    inspector: Inspector,
    finish: Callable[..., dict] | None = None,
) -> Iterator[dict]:
    """Stream a generation from `encode(engine)` (ids and marks) with `opts`: the heatmap alone while it runs, every
    view at the end, plus `finish(result)`'s own outputs."""
    s, metric, thresholds_text, k = opts.settings(), opts.metric, opts.thresholds_text, opts.k
    t = parse_thresholds(thresholds_text)
    steps: list[Step] = []
    last, rid = 0.0, new_rid()
    with user_errors(), models.use(name) as engine:
        ids, marks = encode(engine)
        view = View(marks, rid)
        for ev in stream(engine, ids, s):
            if isinstance(ev, Done):
                r = collect(engine, ids, s, steps, ev)
                yield {**inspector.show(r, metric, thresholds_text, k, view), **(finish(r) if finish else {})}
                return
            steps.append(ev)
            if time.monotonic() - last > PARTIAL_EVERY_S:
                first, last = last == 0.0, time.monotonic()
                yield inspector.partial(collect(engine, ids, s, steps), metric, t, view, first=first)
