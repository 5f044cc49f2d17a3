"""Sampler what-if: one position's logits row, raw and through the sampler generation uses.

Steps:
1. `logits_row`: the raw logits that predict token `pos` (one forward over ids[:pos], the
   output layer on the last row only), recomputed on demand for the one selected position.
2. `whatif`: `sampling.process` (THE sampler: penalties, temperature, top-k, top-p, min-p),
   then the same statistics as generation records (`row_stats`) for the raw and the
   processed row; then `process` again with the filters switched on one after another,
   to name the filter that cut each entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from explorer.engine.interface import ModelEngine, forward_pass
from explorer.engine.kernels.metrics import row_stats
from explorer.engine.kernels.sampling import process
from explorer.engine.passes import blocks
from explorer.errors import ExplorerError
from explorer.results.whatif import STEPS, Side, WhatIf
from explorer.rules.sampler import SamplerSettings

MAX_SHOWN = 50  # most entries drawn per side
DRAWS = 10  # tokens drawn from the processed row: which word the sampler would take, ten times


@torch.inference_mode()
def logits_row(engine: ModelEngine, ids: list[int], pos: int) -> np.ndarray:
    """(V,) float32 raw logits predicting ids[pos] from ids[:pos] (1 <= pos < len(ids))."""
    if isinstance(pos, bool) or not isinstance(pos, int) or not 1 <= pos < len(ids):
        raise ExplorerError(
            f"Pick a scored token: position {pos} has no distribution (positions 1..{len(ids) - 1} do).", param="pos"
        )
    engine.check_ids(ids[:pos])
    here = forward_pass(engine)
    hidden, _ = blocks.prefill(here, torch.tensor([ids[:pos]], device=here.device), keep=False)  # (pos, H)
    return blocks.logits(here, hidden[-1:]).float()[0].cpu().numpy()


def _side(logits: torch.Tensor, actual: torch.Tensor, n: int):
    st = row_stats(logits, actual, n)
    return (
        Side(float(st.logprob[0]), int(st.rank[0]), float(st.entropy[0])),
        st.top_ids[0].numpy(),
        st.top_logprobs[0].numpy(),
    )


def _cuts(
    raw: torch.Tensor, s: SamplerSettings, prompt: torch.Tensor, output: torch.Tensor
) -> tuple[torch.Tensor, dict]:
    """(V,) index of the filter that cut each entry (0 = kept, 1.. = STEPS), and how many each cut."""
    off: dict[str, dict[str, Any]] = {"top-k": {"top_k": 0}, "top-p": {"top_p": 1.0}, "min-p": {"min_p": 0.0}}
    alive = torch.isfinite(process(raw, replace(s, top_k=0, top_p=1.0, min_p=0.0), prompt, output))[0]  # (V,)
    which = torch.zeros(raw.shape[-1], dtype=torch.long)
    counts: dict[str, int] = {}
    for j, step in enumerate(STEPS, start=1):
        later = {k: v for name in STEPS[j:] for k, v in off[name].items()}  # filters after this one stay off
        now = torch.isfinite(process(raw, replace(s, **later), prompt, output))[0]
        cut = alive & ~now
        which[cut] = j
        counts[step] = int(cut.sum())
        alive = now
    return which, counts


@torch.inference_mode()
def whatif(
    row: np.ndarray,
    s: SamplerSettings,
    prompt_ids: list[int],
    output_ids: list[int],
    actual_id: int,
    top_n: int = 20,
    pos: int = 0,
    vocab: Sequence[bytes] | None = None,
) -> WhatIf:
    """The raw row (V,) and the same row after sampler `s`, as generation would have seen it
    after `prompt_ids` + `output_ids`; `actual_id` is the token really there (`vocab`: id -> bytes, for labels)."""
    v = row.shape[0]
    if not 0 <= actual_id < v:
        raise ExplorerError(f"Token id {actual_id} is outside the vocabulary (0..{v - 1}).", param="pos")
    n = max(1, min(int(top_n), MAX_SHOWN, v))
    raw = torch.from_numpy(np.ascontiguousarray(row, np.float32))[None]  # (1, V)
    prompt, output = torch.tensor(prompt_ids, dtype=torch.long), torch.tensor(output_ids, dtype=torch.long)
    proc = process(raw, s, prompt, output).float()  # (1, V): what the sampler draws from
    actual = torch.tensor([actual_id])
    raw_side, raw_ids, raw_lp = _side(raw, actual, n)
    proc_side, proc_ids, proc_lp = _side(proc, actual, n)
    which, counts = (torch.zeros(v, dtype=torch.long), {}) if s.greedy else _cuts(raw, s, prompt, output)
    lp_proc = proc.log_softmax(-1)[0]  # (V,)
    draws = _draws(lp_proc, s)
    names = ("",) + STEPS
    shown = {int(actual_id), *raw_ids.tolist(), *proc_ids.tolist(), *draws.tolist()}
    return WhatIf(
        pos,
        int(actual_id),
        s.to_dict(),
        raw_side,
        proc_side,
        raw_ids.astype(np.int64),
        raw_lp.astype(np.float32),
        lp_proc[torch.from_numpy(raw_ids)].numpy().astype(np.float32),
        [names[int(which[i])] for i in raw_ids],
        proc_ids.astype(np.int64),
        proc_lp.astype(np.float32),
        int(torch.isfinite(proc).sum()),
        counts,
        s.greedy,
        {i: vocab[i] for i in shown} if vocab is not None else {},
        draws,
    )


def _draws(lp: torch.Tensor, s: SamplerSettings) -> np.ndarray:
    """DRAWS tokens drawn from the processed log-probabilities `lp` (V,), as the sampler draws one: greedy takes the
    top each time; a set seed draws the same tokens again, none draws new ones on every call."""
    if s.greedy:
        return np.full(DRAWS, int(lp.argmax()), np.int64)
    p = lp.double().exp().numpy()
    return np.random.default_rng(s.seed).choice(p.shape[0], DRAWS, p=p / p.sum()).astype(np.int64)
