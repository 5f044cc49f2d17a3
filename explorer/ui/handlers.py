"""The web app's actions as plain functions: inputs -> outputs, errors as gr.Error.

Every statistic comes from the engine; these functions only call it and the
renderers. Results live in the per-session gr.State as a list of TokenScores.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import gradio as gr

from explorer.engine import Done, score_text, stream, with_seed
from explorer.engine.generation import collect
from explorer.errors import ExplorerError
from explorer.export import dumps, export
from explorer.render.charts import curves, rank_histogram
from explorer.render.heatmap import DEFAULT_THRESHOLDS, heatmap_html, legend_html
from explorer.render.tables import detail_markdown, detail_table, summary_markdown, token_csv, token_table
from explorer.result import TokenScores
from explorer.runtime import ModelHolder
from explorer.settings import MAX_K, SamplerSettings

UI_K = MAX_K  # compute the top-20 once; the k slider only slices it
EXPORTS = ["vllm", "openai-completion", "openai-chat", "vllm-offline", "native", "csv"]


@contextmanager
def user_errors():
    """Turn the engine's ExplorerError (bad input, unusable model) into a message in the page."""
    try:
        yield
    except ExplorerError as err:
        raise gr.Error(str(err)) from None


class Handlers:
    def __init__(self, holder: ModelHolder):
        self.holder = holder

    # ---- helpers ---------------------------------------------------------------------
    def _engine(self):
        with user_errors():
            return self.holder.get()

    @staticmethod
    def thresholds(text: str) -> tuple[int, ...]:
        try:
            t = tuple(int(x) for x in str(text).replace(" ", "").split(",") if x)
        except ValueError:
            raise gr.Error(f"Rank thresholds must be increasing whole numbers like 1, 10, 100, 1000 (got {text!r}).") from None
        if not 1 <= len(t) <= 4 or any(b <= a for a, b in zip(t, t[1:])) or t[0] < 1:
            raise gr.Error("Rank thresholds must be 1 to 4 increasing whole numbers ≥ 1, like 1, 10, 100, 1000.")
        return t

    def views(self, r: TokenScores, metric: str, thresholds: str, selected: int | None = None) -> tuple:
        """(heatmap, legend, summary, curves, histogram, table) for one result."""
        t = self.thresholds(thresholds)
        return (heatmap_html(r, metric, t, selected), legend_html(metric, t), summary_markdown(r), curves(r),
                rank_histogram(r, t), token_table(r))

    @staticmethod
    def first_detail(r: TokenScores, k: int) -> tuple:
        pos = next((i for i in range(r.n) if r.scored[i]), 0)
        return detail_markdown(r, pos), detail_table(r, pos, int(k)), pos

    # ---- actions ---------------------------------------------------------------------
    def score(self, text: str, metric: str, thresholds: str, k: int):
        """Score `text`; returns the state and every view."""
        if not text or not text.strip():
            raise gr.Error("The text is empty: type or paste some text to score.")
        self.thresholds(thresholds)
        engine = self._engine()
        with user_errors():
            r = score_text(engine, text, k=UI_K)
        return ([r], *self.views(r, metric, thresholds), *self.first_detail(r, k))

    def settings(self, max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt) -> SamplerSettings:
        stops = tuple(s.replace("\\n", "\n") for s in (stop or "").splitlines() if s)
        try:
            with user_errors():
                return with_seed(SamplerSettings(
                    max_tokens=int(max_tokens), temperature=float(temperature), top_p=float(top_p), top_k=int(top_k),
                    seed=None if seed in (None, "") else int(seed), stop=stops, logprobs=UI_K,
                    prompt_logprobs=UI_K if score_prompt else None, mode="processed" if str(mode).startswith("processed") else "raw"))
        except (ValueError, TypeError) as err:  # a number field that is not a number
            raise gr.Error(f"Check the sampler settings: {err}.") from None

    def _run(self, encode, settings: tuple, metric: str, thresholds: str, k: int) -> Iterator[tuple]:
        """Stream a generation from `encode(engine)` ids: partial heatmaps while it runs, every view at the end."""
        s = self.settings(*settings)
        t = self.thresholds(thresholds)
        engine = self._engine()
        steps, last = [], 0.0
        blank = (gr.skip(),) * 8
        with user_errors():
            ids = encode(engine)
            for ev in stream(engine, ids, s):
                if isinstance(ev, Done):
                    r = collect(engine, ids, s, steps, ev, ev.prompt_stats)
                    yield ([r], *self.views(r, metric, thresholds), *self.first_detail(r, k))
                    return
                steps.append(ev)
                if time.monotonic() - last > 0.2:
                    last = time.monotonic()
                    partial = collect(engine, ids, replace(s, prompt_logprobs=None), steps, Done("length", "", None), None)
                    yield (gr.skip(), heatmap_html(partial, metric, t), *blank)

    def generate(self, prompt, max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt, metric, thresholds, k):
        if not prompt or not prompt.strip():
            raise gr.Error("The prompt is empty: type a prompt to continue.")
        settings = (max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt)
        yield from self._run(lambda engine: engine.encode(prompt), settings, metric, thresholds, k)

    def chat(self, system, message, max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt, metric, thresholds, k):
        if not message or not message.strip():
            raise gr.Error("The message is empty: type what the user says.")
        msgs = ([{"role": "system", "content": system}] if system and system.strip() else []) + [{"role": "user", "content": message}]
        settings = (max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt)
        yield from self._run(lambda engine: engine.encode_chat(msgs), settings, metric, thresholds, k)

    def detail(self, state, pos, k):
        """Detail of the token at `pos` of the current result."""
        if not state:
            raise gr.Error("Score a text or generate first, then click a token.")
        r = state[0]
        try:
            pos = int(pos)
        except (TypeError, ValueError):
            raise gr.Error("Pick a token by clicking it in the heatmap.") from None
        if not 0 <= pos < r.n:
            raise gr.Error(f"Position {pos} is outside this text (0..{r.n - 1}).")
        return detail_markdown(r, pos), detail_table(r, pos, int(k)), pos

    def restyle(self, state, metric, thresholds, selected):
        if not state:
            return gr.skip(), legend_html(metric, self.thresholds(thresholds)), gr.skip()
        t = self.thresholds(thresholds)
        r = state[0]
        return heatmap_html(r, metric, t, selected), legend_html(metric, t), rank_histogram(r, t)

    def download(self, state, fmt):
        """Write the current result in shape `fmt`; returns the file path (the exporter's bytes, as is)."""
        if not state:
            raise gr.Error("Nothing to download yet: score a text or generate first.")
        r = state[0]
        if fmt == "openai-chat" and r.output_k is None:
            raise gr.Error("openai-chat needs generated tokens: use Generate or Chat, or pick another format.")
        folder = tempfile.mkdtemp(prefix="logprobs-")
        if fmt == "csv":
            path, data = os.path.join(folder, "tokens.csv"), token_csv(r)
        else:
            path, data = os.path.join(folder, f"logprobs.{fmt}.json"), dumps(export(fmt, state))
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)
        return path

    def load_model(self, model_id, progress=gr.Progress()):
        progress(0.1, desc=f"Loading {model_id or 'the default model'} ...")
        with user_errors():
            engine = self.holder.switch(model_id)
        progress(1.0)
        return self.model_status(engine)

    @staticmethod
    def model_status(engine) -> str:
        return (f"Loaded **{engine.name}** on {engine.device.type} ({str(engine.dtype).replace('torch.', '')}), "
                f"vocabulary {engine.vocab_size:,}, context {engine.context:,} tokens.")


DEFAULT_THRESHOLDS_TEXT = ", ".join(map(str, DEFAULT_THRESHOLDS))
