"""The What-if tab: the selected token's distribution, raw and after sampler settings you choose, side by side."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
import numpy as np
import pandas as pd

from explorer.engine.analyses.whatif import MAX_SHOWN, logits_row, whatif
from explorer.links import Base, Rerun, TabLink, ViewState, damaged, slider
from explorer.render.whatif import WHATIF_COLUMNS, whatif_figure, whatif_markdown, whatif_table
from explorer.results.whatif import context_of
from explorer.settings import SamplerSettings
from explorer.ui.actions import uses_model
from explorer.ui.errors import error, picked, user_errors
from explorer.ui.sliders import Range
from explorer.ui.tabs import Shared

SLIDERS = ("temperature", "top_k", "top_p", "min_p", "repetition_penalty")
# the tab's sliders (built from these, checked in a link by these)
RANGES = {"temperature": Range(0.0, 2.0, 0.05, 1.0), "top_k": Range(0, 200, 1, 0), "top_p": Range(0.01, 1.0, 0.01, 1.0),
          "min_p": Range(0.0, 1.0, 0.01, 0.0), "repetition_penalty": Range(0.5, 3.0, 0.05, 1.0),
          "top_n": Range(5, MAX_SHOWN, 1, 15)}  # fmt: skip


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
            with gr.Row():
                self.temperature = RANGES["temperature"].widget("Temperature (0 = greedy)")
                self.top_k = RANGES["top_k"].widget("Top-k (0 = off)")
                self.top_p = RANGES["top_p"].widget("Top-p (1 = off)")
                self.min_p = RANGES["min_p"].widget("Min-p (0 = off)")
                self.repetition = RANGES["repetition_penalty"].widget("Repetition penalty (1 = off)")
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
    def named(self) -> dict:
        """The tab's sliders by their names in RANGES (the link's keys)."""
        return {"temperature": self.temperature, "top_k": self.top_k, "top_p": self.top_p, "min_p": self.min_p,
                "repetition_penalty": self.repetition, "top_n": self.top_n}  # fmt: skip

    @property
    def sliders(self) -> list:
        return [self.temperature, self.top_k, self.top_p, self.min_p, self.repetition]

    @property
    def inputs(self) -> list:
        return [self.inspector.result, self.inspector.selected, *self.sliders, self.top_n, self.cache]

    @property
    def outputs(self) -> list:
        return [self.summary, self.plot, self.table, self.cache]

    def _wire(self) -> None:
        inputs, outputs = self.inputs, self.outputs
        self.button.click(self.run, inputs, outputs, api_name="whatif")
        gr.on(  # a person's change, typed or dragged (a link's restore sets them without running)
            [s.input for s in (*self.sliders, self.top_n)], self.run, inputs, outputs, api_visibility="private",
            trigger_mode="always_last",
        )  # fmt: skip
        self.from_result.click(self.settings_of_result, [self.inspector.result], self.sliders, api_visibility="private")

    @uses_model
    def follow(self, current: str, *args) -> dict:
        """The what-if again when another token is picked while the tab is shown (nothing otherwise)."""
        unchanged = {c: gr.skip() for c in self.outputs}
        if current != self.tab.id or not args[0]:
            return unchanged
        try:
            return self.run(*args)
        except gr.Error:  # a token without a distribution (the first): the view stays as it was
            return unchanged

    # ---- handlers ------------------------------------------------------------------------
    def settings_of_result(self, state: list) -> dict:
        """The sliders set to the settings the current result was generated with."""
        if not state or state[0].output_k is None:
            raise error("The current result was scored, not generated: it has no sampler settings.")
        s = state[0].sampler
        defaults = SamplerSettings(logprobs=None)  # no top-k: the server's cap may be below the default's
        return {c: s.get(name, getattr(defaults, name)) for c, name in zip(self.sliders, SLIDERS)}

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
    def run(self, state: list, selected, temperature, top_k, top_p, min_p, repetition, top_n, cache) -> dict:
        """The what-if at the selected position of the current result."""
        if not state:
            raise error("Score a text or generate first, then pick a token in the heatmap below.")
        r = state[0]
        outside = "Pick a token after the first: position {i} has no distribution ({first}..{last} do)."
        pos = picked(selected, r.n, "Pick a token by clicking it in the heatmap below.", outside, first=1)
        with user_errors():
            s = SamplerSettings(
                temperature=float(temperature),
                top_k=int(top_k),
                top_p=float(top_p),
                min_p=float(min_p),
                repetition_penalty=float(repetition),
                logprobs=None,  # the what-if draws from the whole row: no top-k to ask of the server's cap
            )
        row, vocab, cache = self._row(r, pos, cache)
        prompt, output = context_of(r, pos)
        w = whatif(row, s, prompt, output, int(r.token_ids[pos]), int(top_n), pos, vocab)
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
    sliders: dict = field(default_factory=lambda: {k: r.default for k, r in RANGES.items()})

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
        got = {k: values.get(c) for k, c in tab.named.items()}
        got = {k: RANGES[k].default if x is None else int(x) if RANGES[k].whole else float(x) for k, x in got.items()}
        return base, cls(got)

    def apply(self, tab: WhatIfTab, v: ViewState) -> dict:
        return {c: self.sliders[k] for k, c in tab.named.items()}

    def rerun(self, tab: WhatIfTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        yield tab.run(run.result, run.selected, *(self.sliders[k] for k in RANGES), None)

    @classmethod
    def outputs(cls, tab: WhatIfTab) -> list:
        return [*cls.inputs(tab), tab.summary, tab.plot, tab.table, tab.cache]
