"""The logit lens against plain torch (`output_hidden_states=True`, final norm and head applied by hand), its bounds and its CLI."""

from __future__ import annotations

import json
import types
import weakref

import numpy as np
import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from explorer.engine import score_ids
from explorer.engine.analyses.lens import find_final_norm, lens_ids, lens_text
from explorer.errors import ExplorerError
from explorer.results.lens import LensGrid
from explorer.rules.sampler import check_k
from tests.helpers.cli import run
from tests.helpers.reference import assert_rank_close, ref_row
from tests.helpers.shapes import recorded

TEXT = "The quick brown fox jumps over the lazy dog. Grüße 東京 👋"


@torch.no_grad()
def ref_lens(model, ids: list[int]) -> list[torch.Tensor]:
    """Per layer 0..L, (T-1, V) float64 log_softmax of the lens logits, written out by hand per family."""
    out = model(torch.tensor([ids]), output_hidden_states=True)
    hs = out.hidden_states  # L+1 of (1, T, H); the last is already through the final norm
    norm = model.transformer.ln_f if hasattr(model, "transformer") else model.model.norm
    rows = []
    for layer, h in enumerate(hs):
        x = h[0] if layer == len(hs) - 1 else norm(h[0])
        rows.append(torch.log_softmax((x @ model.lm_head.weight.T).double(), -1)[:-1])
    assert torch.allclose(rows[-1], torch.log_softmax(out.logits[0].double(), -1)[:-1], atol=1e-5)
    return rows


def test_every_layer_matches_hidden_states_by_hand(engine):
    g = lens_text(engine, TEXT, k=5)
    ref = ref_lens(engine.model, g.token_ids.tolist())
    assert g.n_layers == engine.model.config.num_hidden_layers == len(ref) - 1
    assert np.isnan(g.logprobs[:, 0]).all() and (g.ranks[:, 0] == 0).all() and (g.top_ids[:, 0] == -1).all()
    for layer, lp in enumerate(ref):
        for pos in range(1, g.n):
            row, actual = lp[pos - 1].float(), int(g.token_ids[pos])
            want = ref_row(row, actual)
            assert abs(g.logprobs[layer, pos] - want["logprob"]) < 1e-4, (layer, pos)
            assert abs(g.entropy[layer, pos] - want["entropy"]) < 1e-4, (layer, pos)
            assert_rank_close(int(g.ranks[layer, pos]), row, actual)
            np.testing.assert_allclose(g.top_logprobs[layer, pos], want["sorted"][:5], atol=1e-4)
            np.testing.assert_allclose(
                row[torch.tensor(g.top_ids[layer, pos])].numpy(), g.top_logprobs[layer, pos], atol=1e-4
            )


def test_lower_layers_differ_from_the_output(engine):
    """The lens reads different layers (a lens that repeated the last row would pass the last-layer test)."""
    g = lens_text(engine, TEXT, k=3)
    assert np.nanmax(np.abs(g.logprobs[0] - g.logprobs[-1])) > 1e-2


@pytest.mark.parametrize("k", [0, 1, 20])
def test_last_layer_equals_scoring(engine, k):
    ids = engine.encode(TEXT)
    g, r = lens_ids(engine, ids, k=k), score_ids(engine, ids, k=k)
    np.testing.assert_allclose(g.logprobs[-1, 1:], r.logprobs[1:], atol=1e-4)
    np.testing.assert_allclose(g.entropy[-1, 1:], r.entropy[1:], atol=1e-4)
    assert (g.ranks[-1] == r.ranks).all()
    assert (g.top_ids[-1, 1:] == r.top_ids[1:]).all() and g.k == k
    np.testing.assert_allclose(g.top_logprobs[-1, 1:], r.top_logprobs[1:], atol=1e-4)


def test_edge_sizes(gpt2):
    one = lens_ids(gpt2, [5], k=3)
    assert one.logprobs.shape == (3, 1) and np.isnan(one.logprobs).all()
    assert one.to_dict()["layers"][2] == {
        "layer": 2,
        "logprobs": [None],
        "ranks": [None],
        "entropy": [None],
        "top_ids": [None],
        "top_logprobs": [None],
    }
    ids = (gpt2.encode("fox jumps over the lazy dog. ") * 40)[: gpt2.context]  # the context limit
    full = lens_ids(gpt2, ids, k=2)
    r = score_ids(gpt2, ids, k=2)
    np.testing.assert_allclose(full.logprobs[-1, 1:], r.logprobs[1:], atol=1e-4)
    with pytest.raises(ExplorerError, match="reads at most"):
        lens_ids(gpt2, ids + [5], k=2)
    with pytest.raises(ExplorerError, match="empty"):
        lens_text(gpt2, "", k=2)
    with pytest.raises(ExplorerError, match="at most 20"):
        check_k(21, "logprobs", allow_full=False)  # the faces check k (the engine takes a valid one)
    with pytest.raises(ExplorerError, match="from 0 to 20"):
        check_k(-1, "logprobs", allow_full=False)
    with pytest.raises(ExplorerError, match="outside the vocabulary"):
        lens_ids(gpt2, [1, 10**6], k=1)


def test_json_round_trip(llama):
    g = lens_text(llama, TEXT, k=4)
    d = json.loads(json.dumps(g.to_dict(), allow_nan=False))
    assert d["n_layers"] == 2 and len(d["layers"]) == 3 and d["layers"][0]["logprobs"][0] is None
    back = LensGrid.from_dict(d)
    assert back.to_dict() == d
    np.testing.assert_array_equal(back.logprobs, g.logprobs)
    np.testing.assert_array_equal(back.top_ids, g.top_ids)
    np.testing.assert_array_equal(back.ranks, g.ranks)
    assert back.token_text == g.token_text and back.pieces == g.pieces


class LiveBytes(TorchDispatchMode):
    """Peak bytes of the tensors ops return while active, each storage counted once and dropped when freed."""

    def __init__(self):
        super().__init__()
        self.live, self.peak, self.refs = 0, 0, {}

    def _drop(self, key, nbytes):
        self.refs[key] -= 1
        if not self.refs[key]:
            del self.refs[key]
            self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                st = t.untyped_storage()
                key = st.data_ptr()
                if key not in self.refs:
                    self.refs[key] = 0
                    self.live += st.nbytes()
                    self.peak = max(self.peak, self.live)
                self.refs[key] += 1
                weakref.finalize(t, self._drop, key, st.nbytes())
        return out


def test_memory_stays_bounded(long_gpt2):
    """1,024 positions: no [layers, positions, V] tensor, one block of rows at most, and a peak over the
    body's own (with its hidden states) under one [T, V] float32 matrix."""
    ids = (long_gpt2.encode("fox jumps over the lazy dog. ") * 150)[:1024]
    t, v = len(ids), long_gpt2.vocab_size
    g, rec = recorded(lens_ids, long_gpt2, ids, k=20)
    assert g.logprobs.shape == (2, t)
    rows = [s[-2] for s in rec.shapes if len(s) >= 2 and s[-1] == v]
    assert rows, "no vocabulary-wide tensor seen: the recorder is not working"
    assert max(rows) <= long_gpt2.chunk_size(2 * (t - 1)) <= 320
    _, short = recorded(lens_ids, long_gpt2, ids[:100], k=20)  # 2 x 99 rows: blocks of at most 99 (one [T, V] matrix)
    assert max(s[-2] for s in short.shapes if len(s) >= 2 and s[-1] == v) <= 99
    assert not any(len(s) == 3 and s[-1] == v for s in rec.shapes)
    _, body = recorded(
        long_gpt2.model.base_model,
        input_ids=torch.tensor([ids]),
        output_hidden_states=True,
        use_cache=False,
        record=LiveBytes,
    )
    _, mem = recorded(lens_ids, long_gpt2, ids, k=20, record=LiveBytes)
    matrix = t * v * 4
    assert body.peak > 0 and mem.peak < body.peak + matrix, (mem.peak - body.peak) / matrix


class _Bare(torch.nn.Module):
    """A model without a final norm, or with one its body never applies last."""

    def __init__(self, with_norm: bool):
        super().__init__()
        self.emb = torch.nn.Embedding(8, 4)
        if with_norm:
            self.norm = torch.nn.LayerNorm(4)

    @property
    def base_model(self):
        return self

    def forward(self, input_ids, output_hidden_states=False):
        h = self.emb(input_ids)
        return types.SimpleNamespace(last_hidden_state=2 * h, hidden_states=(h, 2 * h))


@pytest.mark.parametrize(
    ("with_norm", "needle"), [(False, "no final norm found"), (True, "does not end with the final norm")]
)
def test_unknown_architecture_is_a_clear_message(with_norm, needle):
    with pytest.raises(ExplorerError, match=needle) as err:
        find_final_norm(_Bare(with_norm))
    assert "_Bare" in str(err.value) and "GPT-2" in str(err.value)


def test_final_norm_found_by_structure(gpt2, llama):
    assert find_final_norm(gpt2.model) is gpt2.model.transformer.ln_f
    assert find_final_norm(llama.model) is llama.model.model.norm


def test_cli_lens(gpt2, gpt2_dir):
    p = run("lens", "--model", gpt2_dir, "--device", "cpu", "--text", "The quick brown fox", "--logprobs", "3")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    ids = body["token_ids"]
    assert body["model"] and body["n_layers"] == 2 and [x["layer"] for x in body["layers"]] == [0, 1, 2]
    r = score_ids(gpt2, ids, k=3)
    last = body["layers"][-1]
    assert last["logprobs"][0] is None and last["ranks"][0] is None and last["top_ids"][0] is None
    np.testing.assert_allclose(last["logprobs"][1:], r.logprobs[1:], atol=1e-4)
    assert last["ranks"][1:] == r.ranks[1:].tolist() and last["top_ids"][1:] == r.top_ids[1:].tolist()
    for layer in body["layers"]:
        assert len(layer["logprobs"]) == len(layer["entropy"]) == len(layer["top_logprobs"]) == len(ids)
        assert all(len(row) == 3 for row in layer["top_ids"][1:])
    p = run("lens", "--model", gpt2_dir, "--ids", ",".join(map(str, ids)))
    assert json.loads(p.stdout)["token_ids"] == ids


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--text", "hi", "--logprobs", "21"], "at most 20"),
        (["--text", "hi", "--logprobs", "-1"], "from 0 to 20"),
        (["--text", ""], "empty"),
        (["--ids", ""], "--ids is empty"),
        (["--ids", "1,1000000"], "outside the vocabulary"),
        (["--text", "fox jumps " * 200], "reads at most"),
    ],
)
def test_cli_bad_input_is_one_clear_line(gpt2_dir, args, needle):
    p = run("lens", "--model", gpt2_dir, *args)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and needle in last, last


@pytest.mark.slow
def test_default_model_last_layer_equals_scoring(smollm):
    ids = smollm.encode("The capital of France is Paris, and the capital of Italy is Rome.")
    g, r = lens_ids(smollm, ids, k=5), score_ids(smollm, ids, k=5)
    assert g.n_layers == smollm.model.config.num_hidden_layers
    np.testing.assert_allclose(g.logprobs[-1, 1:], r.logprobs[1:], atol=1e-4)
    assert (g.ranks[-1] == r.ranks).all() and (g.top_ids[-1] == r.top_ids).all()
    assert np.nanmean(g.ranks[0, 1:]) > np.nanmean(g.ranks[-1, 1:])  # the embeddings guess worse than the output


def test_heatmap_html_and_cell_detail(gpt2):
    from explorer.render.lens import buckets, cell_markdown, cell_table, lens_html

    g = lens_text(gpt2, "<script>alert(1)</script> & <b>bold</b>", k=4)
    page = lens_html(g, "rank", selected=(1, 2))
    assert "<script>" not in page and "<b>" not in page and "&lt;" in page
    assert page.count("<tr data-l=") == g.n_layers + 1 and page.count("<td") == (g.n_layers + 1) * g.n
    assert page.count('<td class="u">') == g.n_layers + 1  # position 0 of every layer
    assert page.count(" sel") == 1
    b = buckets(g, "rank")
    assert (b[:, 0] == -1).all() and ((b[:, 1:] >= 0) & (b[:, 1:] <= 7)).all()
    assert ((g.ranks[:, 1:] == 1) == (b[:, 1:] == 0)).all()
    lp = buckets(g, "logprob")
    assert ((g.logprobs[:, 1:] >= -0.7) == (lp[:, 1:] == 0)).all()
    df = cell_table(g, 1, 3)
    assert df["id"].tolist()[:4] == g.top_ids[1, 3].tolist() and df["token"].iloc[-1] == "(others)"
    np.testing.assert_allclose(df["probability %"].sum(), 100, atol=0.01)
    assert "rank **" in cell_markdown(g, 1, 3) and "no context" in cell_markdown(g, 0, 0)
    with pytest.raises(ValueError, match="unknown metric"):
        buckets(g, "nope")


def test_lens_tab_handlers(gpt2, llama, monkeypatch):
    import gradio as gr

    from explorer.engine import score_text
    from explorer.ui.tabs import lens as lens_tab
    from tests.helpers.page import make_page

    tab = make_page([gpt2, llama]).tabs["lens"]
    out = tab.run("tiny-gpt2", "The quick brown fox", [], "entropy")
    g = out[tab.state]
    assert g.token_ids.tolist() == gpt2.encode("The quick brown fox") and out[tab.grid].count("<tr data-l=") == 3
    assert out[tab.layer] == 2 and out[tab.pos] == g.n - 1 and "output" in out[tab.cell_md]
    r = score_text(gpt2, "fox jumps over", k=5)
    from_result = tab.run("tiny-gpt2", "", [r], "rank")[tab.state]
    assert from_result.token_ids.tolist() == r.token_ids.tolist()
    cell = tab.cell(g, 0, 2)
    assert cell[tab.cell_df]["id"].tolist()[: g.k] == g.top_ids[0, 2].tolist() and "embeddings" in cell[tab.cell_md]
    assert tab.restyle(g, "logprob")[tab.grid].count("<td") == 3 * g.n
    for call, needle in [
        (lambda: tab.run("tiny-gpt2", "", [], "rank"), "score or generate"),
        (lambda: tab.run("tiny-llama", "", [r], "rank"), "comes from tiny-gpt2"),
        (lambda: tab.cell(None, 0, 1), "Run the logit lens first"),
        (lambda: tab.cell(g, 3, 1), "outside the grid"),
        (lambda: tab.cell(g, "x", 1), "Pick a cell"),
        (lambda: tab.restyle(g, "nope"), "Colour by"),
    ]:
        with pytest.raises(gr.Error, match=needle):
            call()
    monkeypatch.setattr(lens_tab, "MAX_LENS_TOKENS", 3)
    with pytest.raises(gr.Error, match="at most 3"):
        tab.run("tiny-gpt2", "The quick brown fox", [], "rank")


def test_no_full_distributions_even_without_a_cap(gpt2, monkeypatch):
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "-1")
    with pytest.raises(ExplorerError, match="never whole distributions"):
        lens_ids(gpt2, gpt2.encode("fox jumps"), k=-1)
