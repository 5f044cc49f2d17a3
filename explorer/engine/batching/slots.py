"""Several generations decoded together: one forward pass of the body per step for every live sequence, each
row's tokens and numbers those of the request alone (generation.py's `sampled`). The rows' KV cache is the
DecodeBatch's `cache` (interface.BatchRows, the engine's `batch_cache`): on the torch engine `PaddedCache` (explorer/engine/local/padded_cache.py), on the
llama.cpp engine its KV sequences (explorer/engine/llamacpp/sequences.py); the steps below are the torch engine's.

A `DecodeBatch` holds slots, one per sequence (one sample of a request: `n > 1` is n slots, sample indices 0..n-1):
1. `add(ids, s, sample, more=...)`: the prompt read alone by generation.py's `prefill` (the same KV cache, the
   same last hidden state and prompt numbers as the request alone), its cache joined to the batch's at a step
   boundary, left-padded (zeros, masked out) to the longest row;
2. `step()`: the output layer on every row's last hidden state at once (B, V); per row, as `sampled` does, the
   distribution and the draw with the row's own seeded generator (`draw`), EOS, the stop ids, `more` and the
   budget; then one forward pass of the body for the rows that go on (`TorchEngine.body_rows`: the padded cache, a
   (B, L + 1) attention mask and each row's own position ids), after the rows' numbers (`step_numbers`: stats or the
   listed ids, as alone; the rows of one k in one call) were computed on every core (ForwardEngine.compute); returns
   each row's DrawnToken (its id, its one row of numbers, ends);
3. a row that ended (EOS, a stop id, `more` False, its budget) leaves its slot at once; `remove(slot)` drops any
   other between steps (cancelled, disconnected, past its deadline) without touching the others' rows. Columns
   that every row pads are cut off.

Padding changes no row's numbers beyond float rounding: masked keys get probability exactly 0, zero vectors add
exactly 0; only the BLAS's blocking for B rows instead of one may differ in the last bits (tests/test_batched_decode.py:
ids identical, every number within 1e-5 of `generate`'s).

What the scheduler brings: the text layer (stop strings, held-back text: pass `TextLayer(engine, s).more` as `more`,
which also tells the loop, before the next forward pass, to stop), the request's bound (`more` may raise; this
module never calls `bounds.check()`, a per-thread bound), the seed (`with_seed`, once per request, as `generate`
does), the lock (one DecodeBatch per model, stepped from one thread; `TorchEngine.lock` is taken per forward pass) and the
limits (how many slots; the cache holds B x L x layers x 2 x kv_heads x head_dim values in the model's dtype).
transformers' own continuous batching (`generation/continuous_batching`) samples with one generator and gives
only the chosen token's logprob, so the slots here are our own. Full-attention caches only (DynamicLayer):
a sliding-window model is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import torch

from explorer.engine.interface import BatchRows, Forward
from explorer.engine.passes.generation import (
    DrawnToken,
    Prefilled,
    Rules,
    draw,
    prefill,
    rules,
    seeded_generator,
    step_numbers,
)
from explorer.results.scores import Rows
from explorer.rules.sampler import SamplerSettings

__all__ = ["DecodeBatch", "Slot"]


@dataclass(eq=False)
class Slot:
    """One sequence of a batch: its prompt, settings, generator and the ids drawn so far."""

    s: SamplerSettings
    sample: int
    start: Prefilled  # its prompt read alone (x (1, T), prompt_rows; its cache is the batch's once joined)
    rules: Rules
    gen: torch.Generator | None
    more: Callable[[int, bool], bool] | None = None  # asked per token (the text layer), as in `sampled`
    out_ids: list[int] = field(default_factory=list)
    finished: bool = False  # ended or removed: no longer in the batch

    @property
    def prompt_rows(self) -> Rows | None:
        return self.start.prompt_rows


def _rows_numbers(engine: Forward, drawn: list[tuple[torch.Tensor, torch.Tensor]], slots: list[Slot]) -> list[Rows]:
    """Each row's numbers, as `sampled` computes them for the request alone: the rows of one k together."""
    out: list[Rows | None] = [None] * len(slots)
    groups: dict[int, list[int]] = {}
    for i, sl in enumerate(slots):
        if sl.rules.wanted is None:
            groups.setdefault(sl.rules.k, []).append(i)
        else:
            out[i] = step_numbers(engine, *drawn[i], sl.rules.k, sl.rules.wanted)
    for k, rows in groups.items():
        lg = torch.cat([drawn[i][0] for i in rows])
        block = step_numbers(engine, lg, torch.cat([drawn[i][1] for i in rows]), k, None)
        for j, i in enumerate(rows):
            out[i] = block.sliced(slice(j, j + 1))
    return cast(list[Rows], out)


class DecodeBatch:
    """Live sequences decoded together on `engine`; see the module."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.slots: list[Slot] = []  # in the order of the cache's rows
        self.cache: BatchRows = engine.batch_cache()  # PaddedCache, or the llama.cpp engine's KV sequences

    def __len__(self) -> int:
        return len(self.slots)

    @torch.inference_mode()
    def add(
        self,
        ids: list[int],
        s: SamplerSettings,
        sample: int = 0,
        want_prompt: bool = True,
        more: Callable[[int, bool], bool] | None = None,
    ) -> Slot:
        """A new slot for sample `sample` of prompt `ids`: read alone, joined to the batch for the next step
        (already finished when the context leaves it no token)."""
        return self.join(prefill(self.engine, ids, s, want_prompt), s, sample, more)

    def join(
        self,
        start: Prefilled,
        s: SamplerSettings,
        sample: int = 0,
        more: Callable[[int, bool], bool] | None = None,
        shared: bool = False,
    ) -> Slot:
        """A new slot for sample `sample` from a prompt already read (`prefill`, on the request's own thread); its
        cache becomes the batch's (a fresh one: never a branch's, which its owner keeps), or, `shared` (the other
        samples of an n > 1 request start from it too), a copy of it does."""
        slot = Slot(s, sample, start, rules(self.engine, start, s), seeded_generator(self.engine, s, sample), more)
        if slot.rules.budget <= 0:
            slot.finished = True
            return slot
        self.cache.join(start, shared, start.x.shape[1] + slot.rules.budget)
        self.slots.append(slot)
        return slot

    def remove(self, slot: Slot) -> None:
        """Drop `slot` between steps (cancelled, disconnected, past its deadline); the other rows go on unchanged."""
        if slot.finished:
            return
        slot.finished = True
        self._keep([i for i, sl in enumerate(self.slots) if sl is not slot])

    def _keep(self, rows: list[int]) -> None:
        """Only rows `rows`: their slots and their cache rows."""
        if len(rows) == len(self.slots):
            return
        self.slots = [self.slots[i] for i in rows]
        self.cache.keep(rows)

    @torch.inference_mode()
    def step(self) -> list[tuple[Slot, DrawnToken]]:
        """One token for every live slot (see the module, step 2); ended slots have left when it returns."""
        if not self.slots:
            return []
        eng, slots = self.engine, list(self.slots)
        raw = eng.head(self.cache.last).float()  # (B, V)
        drawn = [draw(raw[i : i + 1], sl.s, sl.rules, sl.start.x, sl.out_ids, sl.gen) for i, sl in enumerate(slots)]
        toks = torch.cat([tok for _, tok in drawn])  # (B,)
        tids = toks.tolist()  # the one host sync per step
        # the numbers on every core, then the next pass: beside it on a thread of their own they took a core from it
        # (8 clients through /v1 on 2 cores, llama.cpp engine: 164 -> 176 tokens/s, torch 105 -> 112)
        numbers = eng.compute_numbers(_rows_numbers, eng, drawn, slots)
        ends, going = [], []
        for i, (sl, tid) in enumerate(zip(slots, tids)):
            sl.out_ids.append(tid)
            ends.append(tid in sl.rules.enders)
            go = (sl.more is None or sl.more(tid, ends[-1])) and not ends[-1]
            if go and len(sl.out_ids) < sl.rules.budget:
                going.append(i)
            else:
                sl.finished = True
        self._keep(going)
        if going:  # the fed token's position per row
            self.cache.advance(toks[going], [sl.start.x.shape[1] + len(sl.out_ids) - 1 for sl in self.slots])
        return [(sl, DrawnToken(tid, row, e)) for sl, tid, row, e in zip(slots, tids, numbers, ends)]
