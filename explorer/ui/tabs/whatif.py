"""The What-if tab: the selected token's distribution, raw and after sampler settings you choose, side by side."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from explorer.engine.analyses.whatif import MAX_SHOWN, logits_row, whatif
from explorer.render.whatif import WHATIF_COLUMNS, whatif_figure, whatif_markdown, whatif_table
from explorer.results.whatif import context_of
from explorer.rules.sampler import SamplerSettings, knobs
from explorer.ui.actions import uses_model
from explorer.ui.errors import error, picked, user_errors
from explorer.ui.links import Base, Rerun, TabLink, ViewState, damaged, slider
from explorer.ui.sliders import Range, at_model_temperature, ranged, sliders_of
from explorer.ui.tabs import Shared

KNOBS = knobs()  # SamplerSettings' sliders by name: their ranges, defaults and labels


@dataclass(frozen=True)
class WhatIfSliders:
    """The tab's sliders, one field per slider by SamplerSettings' name (its widget: `whatif_controls`; a link's
    `sliders`): each a SamplerSettings knob (explorer/rules/sampler.py: its range, default and label, the ones
    Generate shows too; the temperature starts at 1 here, the model's own distribution), and how many entries it
    draws."""

    temperature: float = ranged(at_model_temperature())
    top_k: int = ranged(Range.of(KNOBS["top_k"]))
    top_p: float = ranged(Range.of(KNOBS["top_p"]))
    min_p: float = ranged(Range.of(KNOBS["min_p"]))
    repetition_penalty: float = ranged(Range.of(KNOBS["repetition_penalty"]))
    top_n: int = ranged(Range(5, MAX_SHOWN, 1, 15))

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> WhatIfSliders:
        """The sliders' values by name as numbers (a missing one: its default; whole where its Range is)."""
        if unknown := set(values) - set(RANGES):
            raise TypeError(f"no What-if slider is named {', '.join(sorted(unknown))} (they are {', '.join(RANGES)})")
        out: dict[str, Any] = {}
        for k, r in RANGES.items():
            x = values.get(k)
            out[k] = r.default if x is None else r.number(x)
        return cls(**out)

    def settings(self) -> SamplerSettings:
        """The sampler these sliders set (the what-if draws from the whole row: no top-k to ask of a server's cap)."""
        sampler = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "top_n"}
        with user_errors():
            return SamplerSettings(**sampler, logprobs=None)


RANGES = sliders_of(WhatIfSliders)  # each slider's Range by name (built from these, checked in a link by these)


def whatif_controls() -> dict[str, gr.Slider]:
    """Each slider by its name (WhatIfSliders' fields): the sampler's in one row, the entries drawn in the next."""
    s = RANGES
    c: dict[str, gr.Slider] = {}
    with gr.Row():  # each labelled as SamplerSettings' knob is
        for name in (f.name for f in fields(WhatIfSliders) if f.name in KNOBS):
            c[name] = s[name].widget(KNOBS[name].label)
    return c


class WhatIfTab:
    """Sampler sliders + the raw and processed top-N of the token selected in the inspector."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("What-if", id="whatif") as self.tab:
            gr.Markdown(
                "Pick a token in the heatmap below (after Score, Generate or Chat), then move the sliders, the "
                "**temperature** first (typed or dragged, the view follows at once, and follows the token you pick): "
                "the model's **raw** distribution at that token beside the **processed** one the sampler would draw "
                "from, with the entries each setting cuts, the processed entropy and the probability the actual "
                "token would have had. The same sampler code as generation."
            )
            self.controls = whatif_controls()
            with gr.Row():
                self.top_n = RANGES["top_n"].widget("Entries drawn")
                self.from_result = gr.Button("Settings this text was generated with")
                self.button = gr.Button("What if? (at the selected token)", variant="primary")
            self.cache = gr.State(None)  # the selected position's raw logits row, recomputed only when it changes
            self.summary = gr.Markdown()
            self.plot = gr.Plot(show_label=False)
            self.table = gr.Dataframe(
                pd.DataFrame(columns=WHATIF_COLUMNS), label="Raw top entries after the sampler", interactive=False
            )
        self._wire()

    @property
    def named(self) -> dict[str, gr.Slider]:
        """The tab's sliders by their names (WhatIfSliders' fields: the link's keys and the handler's)."""
        return {**self.controls, "top_n": self.top_n}

    @property
    def sliders(self) -> list:
        """The sampler's sliders (what *Settings this text was generated with* sets)."""
        return list(self.controls.values())

    @property
    def inputs(self) -> list:
        return [self.inspector.result, self.inspector.selected]

    @property
    def options(self) -> dict:
        """The handler's keyword inputs, in the `/whatif` endpoint's order: the sliders, then the cached row."""
        return {**self.named, "cache": self.cache}

    @property
    def outputs(self) -> list:
        return [self.summary, self.plot, self.table, self.cache]

    def _wire(self) -> None:
        inputs, outputs, by_name = self.inputs, self.outputs, self.options
        self.button.click(self.run, inputs, outputs, inputs_kwargs=by_name, api_name="whatif")
        gr.on(  # a person's change, typed or dragged (a link's restore sets them without running)
            [s.input for s in self.named.values()], self.run, inputs, outputs, inputs_kwargs=by_name,
            api_visibility="private", trigger_mode="always_last",
        )  # fmt: skip
        self.from_result.click(self.settings_of_result, [self.inspector.result], self.sliders, api_visibility="private")

    @uses_model
    def follow(self, current: str, state: list, selected, **options: Any) -> dict:
        """The what-if again when another token is picked while the tab is shown (nothing otherwise)."""
        unchanged = {c: gr.skip() for c in self.outputs}
        if current != self.tab.id or not state:
            return unchanged
        try:
            return self.run(state, selected, **options)
        except gr.Error:  # a token without a distribution (the first): the view stays as it was
            return unchanged

    # ---- handlers ------------------------------------------------------------------------
    def settings_of_result(self, state: list) -> dict:
        """The sliders set to the settings the current result was generated with."""
        if not state or state[0].output_k is None:
            raise error("The current result was scored, not generated: it has no sampler settings.")
        s = state[0].sampler
        defaults = SamplerSettings(logprobs=None)  # no top-k: the server's cap may be below the default's
        return {c: s.get(name, getattr(defaults, name)) for name, c in self.controls.items()}

    def _row(self, r, pos: int, cache: dict | None) -> tuple[np.ndarray, Sequence[bytes], dict]:
        """The raw logits row at `pos` of `r`, from `cache` when it holds that very position."""
        ids = r.token_ids.tolist()
        key = (r.model, pos, hashlib.sha1(np.asarray(ids[: pos + 1], np.int64).tobytes()).hexdigest())
        if cache and cache.get("key") == key:
            return cache["row"], cache["vocab"], cache
        with user_errors(), self.models.use(r.model) as engine:
            row = logits_row(engine, ids, pos)
            vocab = engine.vocab
        return row, vocab, {"key": key, "row": row, "vocab": vocab}

    @uses_model
    def run(self, state: list, selected, cache: dict | None = None, **sliders: Any) -> dict:
        """The what-if at the selected position of the current result, with the `sliders` by name (WhatIfSliders';
        a missing one: its default) and the `cache`d row of the last call."""
        if not state:
            raise error("Score a text or generate first, then pick a token in the heatmap below.")
        r = state[0]
        outside = "Pick a token after the first: position {i} has no distribution ({first}..{last} do)."
        pos = picked(selected, r.n, "Pick a token by clicking it in the heatmap below.", outside, first=1)
        chosen = WhatIfSliders.of(sliders)
        s = chosen.settings()
        row, vocab, cache = self._row(r, pos, cache)
        prompt, output = context_of(r, pos)
        w = whatif(row, s, prompt, output, int(r.token_ids[pos]), chosen.top_n, pos, vocab)
        return {
            self.summary: whatif_markdown(w),
            self.plot: whatif_figure(w),
            self.table: whatif_table(w),
            self.cache: cache,
        }


@dataclass(frozen=True)
class WhatIfLink(TabLink):
    """A What-if link: the sliders' values (at the base's selected token)."""

    tab = "whatif"
    sliders: dict = field(default_factory=lambda: asdict(WhatIfSliders()))

    @classmethod
    def read(cls, d: dict) -> WhatIfLink:
        v = d.get("sliders", {})
        if not isinstance(v, dict):
            raise damaged("`sliders` must be an object")
        return cls({k: slider(f"sliders.{k}", v.get(k, r.default), r.lo, r.hi, r.whole) for k, r in RANGES.items()})

    @classmethod
    def inputs(cls, tab: WhatIfTab) -> list:
        return list(tab.named.values())

    @classmethod
    def to_link(cls, tab: WhatIfTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, WhatIfLink]:
        return base, cls(asdict(WhatIfSliders.of({k: values.get(c) for k, c in tab.named.items()})))

    def apply(self, tab: WhatIfTab, v: ViewState) -> dict:
        return {c: self.sliders[k] for k, c in tab.named.items()}

    def rerun(self, tab: WhatIfTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        yield tab.run(run.result, run.selected, **self.sliders)

    @classmethod
    def outputs(cls, tab: WhatIfTab) -> list:
        return [*cls.inputs(tab), tab.summary, tab.plot, tab.table, tab.cache]
