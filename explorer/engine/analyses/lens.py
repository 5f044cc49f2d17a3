"""The plain logit lens: the residual stream after each layer read through the model's final norm and output layer.

Steps, for ids (T,):
1. one forward pass of the body with `output_hidden_states` (TorchEngine.body_states, the path of the API's
   `return_hidden_states`): L+1 hidden states (T, H), the embeddings first. Row l < L is the residual stream after
   l blocks; row L is the body's own output (already through the final norm), so the last row equals scoring.
2. the rows (layer, position) of positions 0..T-2, layer-major, in blocks of
   `engine.chunk_size` rows, and never more rows than the text has positions (or 64): the
   final norm (rows of layers < L), the output layer, then `engine.stats` for the actual
   next tokens. Blocks span layers, so a short text needs few output-layer calls.
3. only the statistics are kept: (L+1, T) logprob, rank, entropy and (L+1, T, k) top-k.
   The only [rows, V] tensor alive is one block's logits (at most [T, V]); [L+1, T, V] never exists.
The final norm is found by the model's own structure (its base model's `norm`, `ln_f`,
`final_layer_norm` or `final_layernorm`) and checked: it must be the last thing the body applies.
"""

from __future__ import annotations

import weakref
from typing import cast

import numpy as np
import torch

from explorer.engine.interface import HEAD_MIN_ROWS, HiddenStatesEngine, ModelEngine
from explorer.engine.passes import blocks, bounds
from explorer.errors import ExplorerError
from explorer.results.lens import LensGrid
from explorer.results.scores import Rows

NORM_NAMES = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "decoder.final_layer_norm", "model.norm")
_NORMS: weakref.WeakKeyDictionary[torch.nn.Module, torch.nn.Module] = (
    weakref.WeakKeyDictionary()
)  # model -> its final norm


def _unsupported(engine_or_model, why: str) -> ExplorerError:
    arch = type(getattr(engine_or_model, "model", engine_or_model)).__name__
    return ExplorerError(
        f"The logit lens cannot read {arch}: {why}. It works for GPT-2 and the Llama/Qwen/SmolLM family.",
        param="model",
        code="unsupported_architecture",
    )


def final_norm(engine: HiddenStatesEngine) -> torch.nn.Module:
    """The engine's final norm (found once per model, under the engine's lock)."""
    if engine.model not in _NORMS:
        with engine.lock:
            _NORMS[engine.model] = find_final_norm(engine.model)
    return _NORMS[engine.model]


@torch.inference_mode()
def find_final_norm(model) -> torch.nn.Module:
    """The module the body applies last (its final norm), found by name and checked with one tiny forward pass."""
    base = model.base_model
    norm = None
    for name in NORM_NAMES:
        try:
            norm = base.get_submodule(name)
            break
        except AttributeError:
            continue
    if norm is None:
        raise _unsupported(model, "no final norm found (looked for " + ", ".join(NORM_NAMES) + ")")
    seen = []
    hook = norm.register_forward_hook(lambda mod, args, out: seen.append(out))
    try:
        device = next(model.parameters()).device
        out = base(input_ids=torch.tensor([[0, 1, 2]], device=device), output_hidden_states=True)
    finally:
        hook.remove()
    if not seen or not isinstance(seen[-1], torch.Tensor) or not torch.equal(seen[-1], out.last_hidden_state):
        raise _unsupported(model, "its body does not end with the final norm found")
    if getattr(out, "hidden_states", None) is None:
        raise _unsupported(model, "it does not report its hidden states")
    return norm


def _hidden_states(engine: HiddenStatesEngine, norm: torch.nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    """L+1 hidden states (T, H): the embeddings, after each block, and the body's output (final norm applied), read
    as the API's `return_hidden_states` reads them (`TorchEngine.body_states`: one pass, the norm's input and
    output)."""
    _, states, _ = engine.body_states(x, norm)
    return [*states[:-2], states[-1]]  # L+2 there: the norm's input (after L blocks) is not a lens row


def _block(norm, hs: list[torch.Tensor], a: int, b: int) -> torch.Tensor:
    """Rows a..b of the layer-major (layer, position) order of `hs` (each (t, H)), read for the head: (c, H).

    Rows of layers < L go through the final norm; the last layer is the model's output already.
    """
    t, last = hs[0].shape[0], len(hs) - 1
    parts = []
    for layer in range(a // t, (b - 1) // t + 1):
        h = hs[layer][max(a - layer * t, 0) : min(b - layer * t, t)]  # (c_l, H)
        parts.append(h if layer == last else norm(h))
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def _layer_rows(engine: HiddenStatesEngine, norm, hs: list[torch.Tensor], targets: torch.Tensor, k: int) -> Rows:
    """Rows of every (layer, position) of `hs` (each (t, H)) for `targets` (t,), layer-major."""
    t = hs[0].shape[0]
    n_rows = len(hs) * t  # R = (L+1) t
    chunk = min(engine.chunk_size(n_rows), max(t, HEAD_MIN_ROWS))  # a block never outgrows one [t, V] matrix
    parts = []
    for a in range(0, n_rows, chunk):
        bounds.check()
        b = min(a + chunk, n_rows)
        tgt = targets[(torch.arange(a, b, device=targets.device) % t)]  # (c,)
        # the norm, the output layer and the statistics on every core, as scoring's blocks (scoring.chunked_rows)
        parts.append(engine.compute_numbers(_lens_block, engine, norm, hs, a, b, tgt, k))
    return Rows.concat(parts)


def _lens_block(
    engine: HiddenStatesEngine, norm, hs: list[torch.Tensor], a: int, b: int, targets: torch.Tensor, k: int
) -> Rows:
    """Rows a..b of the layer-major order of `hs` for `targets` (b - a,): its logits alive only in here."""
    return engine.stats(blocks.logits(engine, _block(norm, hs, a, b)), targets, k).to_rows()


def _grid(engine: HiddenStatesEngine, ids: list[int], layers: int, rows: Rows | None, k: int) -> LensGrid:
    """LensGrid of `rows` ((L+1)(T-1) rows, layer-major), position 0 unscored."""
    n, shape = len(ids), (layers, len(ids))
    logprobs, entropy = np.full(shape, np.nan, np.float32), np.full(shape, np.nan, np.float32)
    ranks = np.zeros(shape, np.int64)
    top_ids, top_lp = np.full((*shape, k), -1, np.int64), np.full((*shape, k), -np.inf, np.float32)
    if rows is not None and n > 1:
        logprobs[:, 1:] = rows.logprobs.reshape(layers, n - 1)
        ranks[:, 1:] = rows.ranks.reshape(layers, n - 1)
        entropy[:, 1:] = rows.entropy.reshape(layers, n - 1)
        top_ids[:, 1:] = rows.top_ids.reshape(layers, n - 1, k)
        top_lp[:, 1:] = rows.top_logprobs.reshape(layers, n - 1, k)
    used = sorted(set(ids) | set(top_ids[top_ids >= 0].tolist()))
    return LensGrid(
        model=engine.name,
        token_ids=np.array(ids, np.int64),
        token_bytes=[engine.vocab[i] for i in ids],
        logprobs=logprobs,
        ranks=ranks,
        entropy=entropy,
        top_ids=top_ids,
        top_logprobs=top_lp,
        pieces={i: engine.vocab[i] for i in used},
    )


@torch.inference_mode()
def lens_ids(engine: ModelEngine, ids: list[int], k: int = 5) -> LensGrid:
    """The logit lens of `ids`: every layer's logprob, rank, entropy and top-k of each actual token."""
    if k == -1:  # allowed by a server without a top-k cap (the faces check `k`); a lens keeps statistics only
        raise ExplorerError(
            "The logit lens keeps a top-k per cell, never whole distributions: ask for 0 to 20 entries.",
            param="logprobs",
            code="invalid_value",
        )
    why = engine.capabilities.why_not("hidden_states")
    if why:  # a served model (explorer/engine/remote/engine.py)
        raise ExplorerError(f"The logit lens is off for {engine.name}: it {why}.", code="not_available_remote")
    here = cast(
        HiddenStatesEngine, engine
    )  # hidden states: only the transformers engine has them (its capabilities say so)
    here.check_ids(ids)
    if not here.split_head:
        raise _unsupported(here, "its output layer is followed by more (soft-capping or scaling)")
    norm = final_norm(here)
    x = torch.tensor([ids], device=here.device)  # (1, T)
    hs = _hidden_states(here, norm, x)
    if len(ids) == 1:
        return _grid(here, ids, len(hs), None, k)
    rows = _layer_rows(here, norm, [h[:-1] for h in hs], x[0, 1:], k)
    return _grid(here, ids, len(hs), rows, k)


def lens_text(engine: ModelEngine, text: str, k: int = 5) -> LensGrid:
    """The logit lens of `text`, tokenized with the tokenizer's special tokens."""
    return lens_ids(engine, engine.encode(text), k)
