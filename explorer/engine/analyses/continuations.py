"""f of continuations: each continuation's teacher-forced logprobs summed, the target's less the contrast's
(explorer.engine.analyses.attribution, for a contrast of several tokens).

A continuation w after a text x: log p(w | x) = sum_i log p(w_i | x + w[:i]). Three ways to read it, one per method:
1. `f_after`: after one text, by Answers' scoring (explorer.engine.analyses.answers.continuation_logprobs).
2. `f_after_rows`: after each of B rows continuing one KV cache (occlusion's blocks): every row + every
   continuation less its last token, right-padded, in one batch of C*B rows, each read at its own positions.
3. `forward_of`: embeddings (B, T, H) -> (B,) f for Captum: the continuations' embeddings fixed after the text's.
"""

from __future__ import annotations

import numpy as np
import torch

from explorer.engine.analyses.answers import continuation_logprobs
from explorer.engine.passes import blocks

Conts = list[list[int]]  # the continuations whose summed logprobs make f: [target] or [target, contrast]


def f_sums(sums: torch.Tensor) -> torch.Tensor:
    """(C, B) summed logprobs of each continuation after each row -> (B,) f: the target's, less the contrast's."""
    return sums[0] - sums[1] if len(sums) > 1 else sums[0]


def read_on(rows: list[list[int]], conts: Conts) -> tuple[list[list[int]], list[tuple[int, int, int]]]:
    """(every row + every continuation less its last token, right-padded to one length; (seq, position, token) of
    every teacher-forced read, continuation-major): what `gather` sums."""
    seqs = [r + w[:-1] for w in conts for r in rows]
    longest = max(len(q) for q in seqs)
    reads = [(c * len(rows) + j, len(r) - 1 + i, t) for c, w in enumerate(conts) for j, r in enumerate(rows)
             for i, t in enumerate(w)]  # fmt: skip
    return [q + [q[0]] * (longest - len(q)) for q in seqs], reads


def gather(lp_of, reads: list[tuple[int, int, int]], n_conts: int, b: int) -> torch.Tensor:
    """(C, B) each continuation's summed logprob after each of b rows; lp_of(seq, pos) (N,) -> (N, V) logprobs."""
    seq = [q for q, _, _ in reads]
    pos = [p for _, p, _ in reads]
    lp = lp_of(seq, pos)  # (N, V)
    got = lp.gather(1, torch.tensor([t for _, _, t in reads], device=lp.device)[:, None])[:, 0]  # (N,)
    return got.new_zeros(n_conts * b).index_add(0, torch.tensor(seq, device=lp.device), got).view(n_conts, b)


def forward_of(engine, conts: Conts):
    """embeddings (B, T, H) -> (B,) f: each row followed by each continuation's fixed embeddings (right-padded, one
    batch of C*B rows), each continuation's tokens read teacher-forced from position T-1 on."""
    table = engine.model.get_input_embeddings()

    def forward(emb: torch.Tensor) -> torch.Tensor:
        b, t = emb.shape[:2]
        seqs, reads = read_on([[0] * t], conts)  # one row's reads; the text's T placeholders stand for emb
        tail = table(torch.tensor([q[t:] for q in seqs], device=emb.device)).to(emb.dtype)  # (C, L'-T, H)
        x = torch.cat([torch.cat([emb, tail[c].expand(b, -1, -1)], 1) for c in range(len(conts))])  # (C*B, L', H)
        keep = x.shape[1] - t + 1  # the positions read: T-1 on
        if engine.split_head:
            h = engine.model.base_model(inputs_embeds=x).last_hidden_state[:, -keep:]  # (C*B, keep, H)
        else:
            h = engine.model(inputs_embeds=x, **({"logits_to_keep": keep} if engine.last_only else {})).logits
            h = h[:, -keep:]  # (C*B, keep, V)
        every = [(q * b + j, p - (t - 1), tok) for q, p, tok in reads for j in range(b)]  # row j of each c

        def lp_of(seq: list[int], pos: list[int]) -> torch.Tensor:
            flat = h[torch.tensor(seq, device=h.device), torch.tensor(pos, device=h.device)]  # (N, H) or (N, V)
            return (engine.head(flat) if engine.split_head else flat).float().log_softmax(-1)  # (N, V)

        return f_sums(gather(lp_of, every, len(conts), b))

    return forward


def f_after(engine, ctx: list[int], conts: Conts) -> float:
    """f after `ctx`: each continuation's teacher-forced logprobs summed (Answers' scoring), the target's less the
    contrast's."""
    sums = [float(np.sum(lp)) for lp in continuation_logprobs(engine, ctx, conts)]
    return sums[0] - sums[1] if len(sums) > 1 else sums[0]


def f_after_rows(engine, rows: list[list[int]], past, conts: Conts) -> torch.Tensor:
    """(B,) f after each row, every row continuing the KV cache `past`: one forward pass of C*B rows."""
    seqs, reads = read_on(rows, conts)
    h = engine.continue_rows(torch.tensor(seqs, device=engine.device), past)  # (C*B, L', H) or (C*B, L', V)

    def lp_of(seq: list[int], pos: list[int]) -> torch.Tensor:
        flat = h[torch.tensor(seq, device=h.device), torch.tensor(pos, device=h.device)]  # (N, H)
        parts = [blocks.logits(engine, flat[a : a + 64]).float().log_softmax(-1) for a in range(0, len(flat), 64)]
        return torch.cat(parts)  # (N, V)

    return f_sums(gather(lp_of, reads, len(conts), len(rows)))
