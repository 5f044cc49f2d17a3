"""The Branch tab: follow the roads not taken. Continue from any alternative; the branches form a tree."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr
import pandas as pd

from explorer.engine.analyses.branch import Prefixes, grow, plant
from explorer.notebook.views import branch_page
from explorer.render.branch import CSS, compare_html, leaf_choices, md_code, node_markdown, node_table, tree_html
from explorer.render.tables import ALT_COLUMNS
from explorer.render.text import visible
from explorer.results.branch import BranchTree
from explorer.results.scores import TokenScores
from explorer.rules.sampler import SamplerSettings, page_k
from explorer.ui.actions import uses_model
from explorer.ui.chips import click_js
from explorer.ui.downloads import view_button, view_file
from explorer.ui.errors import error, picked, user_errors, whole_number
from explorer.ui.links import Base, Rerun, TabLink, ViewState
from explorer.ui.sampler import RunOptions, endpoint_inputs, sampler_controls
from explorer.ui.tabs import Shared

SOURCES = ["the settings that made the text", "the settings below"]
MAX_TICKED = 5  # branches one click may start
INTRO = """Pick a token (click it in the heatmap below, or a node of the tree), tick alternatives the model weighed
there, and **Continue from here**: the text up to that position plus the alternative, then the sampler continues.
The shared prefix is not computed again (its KV cache is reused). Every node shows its token's logprob and rank
under the model (raw numbers); every leaf its path's cumulative logprob and perplexity. Click a node for its detail
and branch again from it."""
TREE_JS = click_js("node", ".tn.sel")


def _choices(top: list[tuple[int, float]], pieces: dict[int, bytes], actual: int) -> list[tuple[str, str]]:
    """(label, id) per alternative: its text (whitespace visible), probability and rank."""
    return [
        (
            f"{visible(pieces[i].decode('utf-8', 'replace')) or '▯'}  ·  {100 * math.exp(lp):.2f}%  ·  rank {r}"
            + ("  (the actual token)" if i == actual else ""),
            str(i),
        )
        for r, (i, lp) in enumerate(top, start=1)
    ]


class BranchTab:
    """Position + alternatives + sampler + Continue; the tree, a node's detail, two leaves compared, the JSON."""

    def __init__(self, shared: Shared):
        self.models, self.result, self.selected = shared.models, shared.inspector.result, shared.inspector.selected
        with gr.Tab("Branch", id="branch") as self.tab:
            gr.Markdown(INTRO)
            with gr.Row():
                self.at = gr.Number(value=1, precision=0, label="Branch at position")
                self.source = gr.Radio(SOURCES, value=SOURCES[0], label="Continue with")
            self.alts = gr.CheckboxGroup([], label="Alternatives to continue from")
            with gr.Accordion("Settings for new branches", open=False):
                self.controls = sampler_controls(shared.models.limits.max_tokens)
            self.button = gr.Button("Continue from here", variant="primary")
            self.tree_view = gr.HTML(tree_html(None), css_template=CSS, js_on_load=TREE_JS, elem_id="branch-tree")
            self.node_md = gr.Markdown()
            self.node_df = gr.Dataframe(
                pd.DataFrame(columns=ALT_COLUMNS), label="Alternatives at this node", interactive=False
            )
            with gr.Row():
                self.leaf_a = gr.Dropdown([], label="Leaf A")
                self.leaf_b = gr.Dropdown([], label="Leaf B")
                self.compare_btn = gr.Button("Compare leaves")
            self.compare_view = gr.HTML("", css_template=CSS, js_on_load=None, elem_id="branch-compare")
            with gr.Row():
                self.dl_btn = gr.Button("Download the tree (JSON)")
                self.dl_file = gr.File(label="Tree JSON", interactive=False)
                self.dl_html = view_button("branch-dl-html")
            self.tree = gr.State(None)  # BranchTree
            self.prefixes = gr.State(None)  # Prefixes: the KV caches branches reuse
            self.node = gr.State(-1)  # the tree node picked, or -1: the position of the current result
        self._wire(shared)

    def _wire(self, shared: Shared) -> None:
        pick_out = [self.at, self.alts, self.node, self.node_md, self.node_df]
        self.selected.change(self.pick_position, [self.result, self.selected], pick_out, api_visibility="private")
        self.at.submit(self.pick_position, [self.result, self.at], pick_out, api_name="branch_position")

        def on_click(tree, evt: gr.EventData):
            return self.pick_node(tree, (evt._data or {}).get("node", -1))

        self.tree_view.click(on_click, [self.tree], [*pick_out, self.tree_view], api_visibility="private")
        # the rest by name, in the `/branch` endpoint's order: where to branch, then the sampler's controls
        where = {"tree": self.tree, "prefixes": self.prefixes, "node": self.node, "at": self.at, "alts": self.alts,
                 "source": self.source}  # fmt: skip
        self.button.click(
            self.branch,
            [shared.model, self.result],
            [self.tree, self.prefixes, self.tree_view, self.leaf_a, self.leaf_b, *pick_out],
            inputs_kwargs={**where, **endpoint_inputs(self.controls)},
            api_name="branch",
        )
        self.compare_btn.click(
            self.compare, [self.tree, self.leaf_a, self.leaf_b], [self.compare_view], api_name="branch_compare"
        )
        self.dl_btn.click(self.download, [self.tree], [self.dl_file], api_name="branch_download")
        self.tree.change(
            lambda t: view_file("", "", None) if t is None else view_file(t.model, "branches", branch_page(t)),
            [self.tree], [self.dl_html], api_visibility="private", show_progress="hidden",
        )  # fmt: skip

    # ---- handlers ------------------------------------------------------------------------
    def pick_position(self, result: list, pos) -> dict:
        """The alternatives at position `pos` of the current result (what a branch there may start with)."""
        pos = whole_number(pos, "Type a position (a whole number), or click a token in the heatmap.")
        out = {self.at: pos, self.node: -1, self.node_df: None}
        if not result:
            return {
                **out,
                self.alts: gr.CheckboxGroup(choices=[], value=[]),
                self.node_md: "Score or generate a text first; then pick a token to branch from.",
            }
        r: TokenScores = result[0]
        if not 0 <= pos < r.n:
            raise error(f"Position {pos} is outside the current result (1..{r.n - 1}).")
        top = r.top(pos, r.top_ids.shape[1]) if pos > 0 else []
        note = (
            f"Position {pos} of the current result, token {md_code(r.token_text[pos])}: tick alternatives, "
            "then press Continue from here."
            if top
            else "Position 0 has no context, so no alternatives: pick a later token."
            if pos == 0
            else "No alternatives: this server runs with --max-logprobs 0, so there is no other token to branch to."
            if page_k() == 0
            else f"No alternatives were recorded at position {pos} (the prompt was not scored): pick a generated token."
        )
        return {
            **out,
            self.alts: gr.CheckboxGroup(choices=_choices(top, r.pieces, int(r.token_ids[pos])), value=[]),
            self.node_md: note,
        }

    def pick_node(self, tree: BranchTree | None, node) -> dict:
        """Node `node`'s detail, and its alternatives to branch from."""
        if tree is None:
            raise error("No tree yet: continue from an alternative first.")
        node = picked(
            node, tree.n, "Pick a node by clicking it in the tree.", "Node {i} is not in this tree ({first}..{last})."
        )
        return {
            self.at: tree.depth(node),
            self.node: node,
            self.node_md: node_markdown(tree, node),
            self.node_df: node_table(tree, node),
            self.tree_view: tree_html(tree, node),
            self.alts: gr.CheckboxGroup(
                choices=_choices(tree.top(node), tree.pieces, int(tree.token_ids[node])), value=[]
            ),
        }

    def _start(self, engine, result: list, tree, prefixes, node: int, at) -> tuple:
        """(tree, prefixes, node the branches hang after, settings that made the text there)."""
        if prefixes is None or prefixes.model != engine.name:
            prefixes = Prefixes(engine.name)
        if node >= 0 and tree is not None and tree.model == engine.name:
            if node == 0:
                raise error("The first token has no context: pick a later node.")
            return tree, prefixes, int(tree.parent[node]), tree.branches[int(tree.branch[node])].get("sampler") or {}
        if not result:
            raise error("Score or generate a text first, then pick a token to branch from.")
        r: TokenScores = result[0]
        if r.model != engine.name:
            raise error(f"The current result comes from {r.model}; pick that model again to branch it.")
        pos = int(at) if at is not None else 0
        if not 1 <= pos < r.n:
            raise error(f"Branch at a position from 1 to {r.n - 1} (position 0 has no context).")
        if tree is None or tree.model != engine.name or tree.seed_ids() != r.token_ids.tolist():
            ids = r.token_ids.tolist()
            tree = plant(engine, prefixes, ids, r.n_prompt, r.sampler, k=page_k())  # one pass, cache kept
        return tree, prefixes, pos - 1, r.sampler  # on the seed path, node i is position i

    @uses_model
    def branch(self, name, result, *, tree, prefixes, node, at, alts, source, **controls: Any) -> dict:
        """One branch per ticked alternative, after the picked position `at` or tree `node` (-1: none), continued
        with the `source`'s settings (the text's, or the sampler's `controls` by name); the grown tree."""
        if not alts:
            raise error("Tick at least one alternative to continue from.")
        if len(alts) > MAX_TICKED:
            raise error(f"Tick at most {MAX_TICKED} alternatives at once.")
        tokens = [int(a) for a in alts]
        with user_errors(), self.models.use(name) as engine:
            tree, prefixes, after, made_by = self._start(
                engine, result, tree, prefixes, int(node if node is not None else -1), at
            )
            if source == SOURCES[0] and made_by:  # its top-k counts give way to the tree's own (page_k)
                s = SamplerSettings.from_dict({**made_by, "logprobs": None, "prompt_logprobs": None})
            else:
                s = RunOptions.from_values(controls).settings()
            for tok in tokens:
                tree, _ = grow(engine, prefixes, tree, after, tok, s)
        first = tree.branches[-len(tokens)]["first_node"]
        leaves = leaf_choices(tree)
        return {
            self.tree: tree,
            self.prefixes: prefixes,
            self.leaf_a: gr.Dropdown(choices=leaves, value=leaves[0][1]),
            self.leaf_b: gr.Dropdown(choices=leaves, value=leaves[-1][1]),
            **self.pick_node(tree, first),
        }

    def compare(self, tree: BranchTree | None, a, b) -> dict:
        """Leaves `a` and `b` side by side from where they part."""
        if tree is None:
            raise error("No tree yet: continue from an alternative first.")
        a, b = (whole_number(x, "Pick two leaves to compare.") for x in (a, b))
        if a not in tree.leaves() or b not in tree.leaves():
            raise error("Pick two leaves of the tree (the menus list them).")
        return {self.compare_view: compare_html(tree, a, b)}

    def download(self, tree: BranchTree | None) -> dict:
        """The tree as JSON (nodes with ids, bytes, logprob, rank, top-k, parent; branches with their seeds)."""
        if tree is None:
            raise error("No tree yet: continue from an alternative first.")
        path = os.path.join(tempfile.mkdtemp(prefix="branches-"), "branch-tree.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(tree.to_dict(), f, ensure_ascii=False, allow_nan=False)
        return {self.dl_file: path}


@dataclass(frozen=True)
class BranchLink(TabLink):
    """A Branch link: its position (the base's `selected`), not the branches made: each would be a rerun of a
    sampler; the alternatives at that position come back, ready to tick."""

    tab = "branch"

    @classmethod
    def inputs(cls, tab: BranchTab) -> list:
        return [tab.at]

    @classmethod
    def to_link(cls, tab: BranchTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, BranchLink]:
        try:
            at = max(int(values.get(tab.at)), 0)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            at = 1
        return replace(base, selected=at), cls()

    def rerun(self, tab: BranchTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        yield tab.pick_position(run.result, run.selected)

    @classmethod
    def outputs(cls, tab: BranchTab) -> list:
        return [tab.at, tab.alts, tab.node, tab.node_md, tab.node_df]
