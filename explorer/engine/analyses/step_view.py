"""One generated step recomputed on demand: the raw logits at that position and the sampler's view of them.

Generation keeps one distribution per token (raw or processed, as asked); to show both for
one step, the prefix runs through the model again and `sampling.process` is applied with
the same settings and the same ids so far (penalties see them), giving exactly what the
sampler drew from.
"""

from __future__ import annotations

import torch

from explorer.engine.interface import ModelEngine, forward_pass
from explorer.engine.kernels.sampling import process
from explorer.engine.passes import blocks
from explorer.errors import ExplorerError
from explorer.results.scores import TokenScores
from explorer.results.step_view import StepView
from explorer.rules.sampler import SamplerSettings


@torch.inference_mode()
def step_view(engine: ModelEngine, r: TokenScores, pos: int, k: int = 20) -> StepView:
    """Raw and processed distributions of generated position `pos` of `r` (top-k of each)."""
    if r.output_k is None or not r.n_prompt <= pos < r.n:
        raise ExplorerError(f"Position {pos} is not a generated token: pick one after the prompt.", param="pos")
    if r.model != engine.name:
        raise ExplorerError(f"This result came from {r.model}, not {engine.name}.", param="model")
    s = SamplerSettings.from_dict(r.sampler)
    ids = r.token_ids.tolist()
    engine = forward_pass(engine)
    x = torch.tensor([ids[:pos]], device=engine.device)  # (1, pos)
    hidden, _ = blocks.prefill(engine, x, keep=False)  # (pos, H)
    raw = blocks.logits(engine, hidden[-1:]).float()  # (1, V)
    dev = raw.device
    proc = process(
        raw,
        s,
        torch.tensor(ids[: r.n_prompt], device=dev),
        torch.tensor(ids[r.n_prompt : pos], dtype=torch.long, device=dev),
    )
    if pos - r.n_prompt < s.min_tokens:  # before min_tokens, EOS and the stop ids cannot be drawn
        enders = sorted(set(s.stop_token_ids) | (set() if s.ignore_eos else engine.eos_ids))
        proc = proc.index_fill(-1, torch.tensor(enders, device=dev), float("-inf"))
    tok = torch.tensor([ids[pos]], device=dev)
    a, b = engine.stats(raw, tok, k).to_rows(), engine.stats(proc, tok, k).to_rows()
    kept = torch.isfinite(proc[0])  # (V,)
    lp_proc = proc[0].log_softmax(-1)  # (V,); -inf where cut
    top = torch.as_tensor(a.top_ids[0], device=dev)
    mass = raw[0].softmax(-1)[kept].sum()
    listed = {int(i) for i in (*a.top_ids[0].tolist(), *b.top_ids[0].tolist()) if i >= 0}
    return StepView(
        pos,
        ids[pos],
        a,
        b,
        lp_proc[top].cpu().numpy(),
        int(kept.sum()),
        float(mass),
        s.greedy,
        raw.shape[-1],
        {i: engine.vocab[i] for i in listed},
    )
