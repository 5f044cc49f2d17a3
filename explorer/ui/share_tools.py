"""Links of the tabs beside the result: Compare, What-if, Why, Look up, Words, Branch and Logit lens.

A link of one of these carries the tab's own inputs and selection (explorer/share.py's ViewState), on top of the
inspector's result it works on (its `base`, rerun first by explorer/ui/share.py). Opening one fills the tab's
inputs and reruns it through the tab's own handlers (the caps, the time limit and the model allowlist apply), then
selects the same token, word or cell. Branch carries its position, not the branches made: each would be a rerun
of a sampler; the alternatives at that position come back, ready to tick.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import gradio as gr

from explorer.errors import ExplorerError
from explorer.share import COMPARE_MODES, DEFAULT_SLIDERS, SLIDERS, TOOLS, ViewState
from explorer.ui.tabs import why
from explorer.ui.tabs.compare import COLOURS, MODES
from explorer.words import words

COLOUR_KEYS = {key: label for label, key in COLOURS.items()}
WHY = (
    "why_contrast",
    "why_method",
    "why_units",
    "why_detail",
    "why_mode",
    "why_steps",
    "why_baseline",
)  # WhyTab.controls
WHY_LABELS = {"why_method": why.METHODS, "why_units": why.UNITS, "why_mode": why.MODES, "why_baseline": why.BASELINES}
# what Copy link reads from the tabs, in this order (after the tab now shown and the session's model)
NAMES = ("compared", "made_from", "colour", "compare_pos", *SLIDERS, "query", "word_metric", "word", "grid",
         "lens_text", "lens_metric", "layer", "lens_pos", "at", *WHY)  # fmt: skip


def _int(x: Any, default: int = 0) -> int:
    try:
        return max(int(x), 0)
    except (TypeError, ValueError):
        return default


class ToolLinks:
    """The link state of the six tabs: what Copy link reads, what a link sets, and the reruns."""

    def __init__(self, tabs: dict, current: gr.State, model: gr.State):
        self.current, self.model = current, model
        self.cmp, self.wi, self.lu = tabs["CompareTab"], tabs["WhatIfTab"], tabs["LookupTab"]
        self.wo, self.br, self.lens = tabs["WordsTab"], tabs["BranchTab"], tabs["LensTab"]
        self.why = tabs["WhyTab"]

    @property
    def inputs(self) -> list:
        c, w, le = self.cmp, self.wi, self.lens
        return [self.current, self.model, c.state, c.made_from, c.colour, c.pos, *w.sliders, w.top_n,
                self.lu.queries, self.wo.metric, self.wo.word, le.state, le.text, le.metric, le.layer, le.pos,
                self.br.at, *self.why.controls]  # fmt: skip

    @property
    def outputs(self) -> list:
        c, w, wo, le, br = self.cmp, self.wi, self.wo, self.lens, self.br
        out = [self.current, c.mode, c.model_a, c.model_b, c.text, c.prompt_a, c.prompt_b, c.colour, *c.outputs,
               *w.sliders, w.top_n, w.summary, w.plot, w.table, w.cache, self.lu.queries, self.lu.notes, self.lu.plot,
               self.lu.table, wo.metric, wo.legend, wo.heatmap, wo.summary, wo.plot, wo.detail, wo.table, wo.word,
               le.text, le.metric, le.state, le.grid, le.legend, le.cell_md, le.cell_df, le.layer, le.pos, br.at,
               br.alts, br.node, br.node_md, br.node_df, *self.why.controls, *self.why.outputs]  # fmt: skip
        return list(dict.fromkeys(out))

    # ---- Copy link --------------------------------------------------------------------------------
    def state_of(self, tab: str, model: str, base: ViewState | None, why: ExplorerError | None, *values) -> ViewState:
        """The ViewState of tab `tab` (one of TOOLS) from its controls' `values` (NAMES order)."""
        v = {**dict.fromkeys(NAMES), **dict(zip(NAMES, values))}  # values left off: None
        if tab == "compare":
            c, made_from = v["compared"], v["made_from"]
            if c is None or made_from is None:
                raise ExplorerError("Compare first: then its link can be shared.")
            text, prompt_a, prompt_b = made_from  # what the shown comparison was computed from, not the boxes now
            prompts = c.kind == "prompts"
            return ViewState(
                tab="compare", model=c.a.model, model_b="" if prompts else c.b.model, text=str(text),
                compare_mode=COMPARE_MODES[prompts], prompt_a=str(prompt_a), prompt_b=str(prompt_b),
                colour=COLOURS.get(v["colour"], "delta"), selected=_int(v["compare_pos"]),
            )  # fmt: skip
        made_by = base.tab if base is not None else ""
        if tab == "lens":
            if v["grid"] is None:
                raise ExplorerError("Run the logit lens first: then its link can be shared.")
            if str(v["lens_text"] or "").strip():  # its own text: no result needed
                base, made_by = ViewState(model=model or ""), ""
        if base is None:
            raise why or ExplorerError("Score a text, generate or chat first: then its link can be shared.")
        sliders = {k: v[k] if v[k] is not None else DEFAULT_SLIDERS[k] for k in SLIDERS}
        extras: dict[str, dict[str, Any]] = {
            "whatif": {"sliders": {k: int(x) if SLIDERS[k][2] else float(x) for k, x in sliders.items()}},
            "lookup": {"query": str(v["query"] or "")},
            "words": {"word_metric": v["word_metric"], "word": _int(v["word"])},
            "branch": {"selected": _int(v["at"], 1)},
            "why": {
                "why_contrast": str(v["why_contrast"] or ""),
                **{k: WHY_LABELS[k].get(v[k], ViewState().to_dict()[k]) for k in WHY_LABELS},
                "why_detail": _int(v["why_detail"], 128),
                "why_steps": max(_int(v["why_steps"], 32), 2),
            },
            "lens": {
                "lens_text": str(v["lens_text"] or ""),
                "lens_metric": v["lens_metric"],
                "layer": _int(v["layer"]),
                "lens_pos": _int(v["lens_pos"]),
            },
        }
        return dataclasses.replace(base, tab=tab, base=made_by, **extras[tab])

    # ---- a link -----------------------------------------------------------------------------------
    def inputs_of(self, v: ViewState) -> dict[Any, Any]:
        """The shown tab's controls set to the link's values (the other tabs keep theirs)."""
        c, w, le = self.cmp, self.wi, self.lens
        prompts = v.compare_mode == "prompts"
        out: dict[Any, Any] = {self.current: v.tab}
        if v.tab == "compare":
            out.update({c.mode: MODES[prompts], c.model_a: v.model, c.text: v.text, c.prompt_a: v.prompt_a,
                        c.prompt_b: v.prompt_b, c.colour: COLOUR_KEYS[v.colour]})  # fmt: skip
            if not prompts:
                out[c.model_b] = v.model_b
        elif v.tab == "whatif":
            out.update({s: v.sliders[k] for s, k in zip([*w.sliders, w.top_n], SLIDERS)})
        elif v.tab == "why":
            labels = {k: {m: label for label, m in WHY_LABELS[k].items()} for k in WHY_LABELS}
            values = {**{k: labels[k][getattr(v, k)] for k in WHY_LABELS}, "why_contrast": v.why_contrast,
                      "why_detail": v.why_detail, "why_steps": v.why_steps}  # fmt: skip
            out.update({c: values[k] for c, k in zip(self.why.controls, WHY)})
        elif v.tab == "lookup":
            out[self.lu.queries] = v.query
        elif v.tab == "words":
            out[self.wo.metric] = v.word_metric
        elif v.tab == "lens":
            out.update({le.text: v.lens_text, le.metric: v.lens_metric})
        return out

    def rerun(self, v: ViewState, name: str, name_b: str, result: list) -> Iterator[dict]:
        """The tab's own handler on the link's inputs, then its selection (a gr.Error: the run's message)."""
        if v.tab not in TOOLS:
            return
        sel = min(v.selected, result[0].n - 1) if result else v.selected
        if v.tab == "compare":
            c, colour = self.cmp, COLOUR_KEYS[v.colour]
            out = c.compare(MODES[v.compare_mode == "prompts"], name, name_b, v.text, v.prompt_a, v.prompt_b, colour)
            cmp = out[c.state]
            j = min(v.selected, max((cmp.m if cmp.paired else len(cmp.spans)) - 1, 0))
            yield {**out, **c.select(cmp, j), **c.restyle(cmp, colour, j)}
        elif v.tab == "whatif":
            yield self.wi.run(result, sel, *(v.sliders[k] for k in SLIDERS), None)
        elif v.tab == "why":
            controls = self.inputs_of(v)
            values = [controls[c] for c in self.why.controls]
            yield from self.why.run(result, sel, *values, False, progress=lambda *a, **kw: None)
        elif v.tab == "lookup":
            yield self.lu.run(result, v.query)
        elif v.tab == "words":
            j = min(v.word, max(words(result[0]).n - 1, 0))
            out = self.wo.show(result, v.word_metric)
            yield {**out, **self.wo.select(result, j), **self.wo.restyle(result, v.word_metric, j)}
        elif v.tab == "branch":
            yield self.br.pick_position(result, sel)
        else:
            out = self.lens.run(name, v.lens_text, result, v.lens_metric)
            g = out[self.lens.state]
            yield {**out, **self.lens.show_cell(g, v.lens_metric, min(v.layer, g.n_layers), min(v.lens_pos, g.n - 1))}
