"""Hidden states with a request: the residual stream of the forward passes that compute its logprobs.

A request that asks for them runs on `Recording`, the torch engine seen through a recorder: every forward pass
(`body`) runs with the model's hidden states on (`TorchEngine.body_states`), hands back what `body` gives, and keeps
the layers and positions the request's `Capture` names. So no second pass runs and the logprobs are those of the
same forward passes:
1. scoring (`score_states`): the prompt a block of positions at a time through the KV cache, exactly as
   scoring.py reads it, then its last token (which scores no position) for its own states;
2. generation (`generate_states`): the decode loop of generation.py, on the request's own thread: the batch
   of explorer/engine/batching/scheduler.py steps many requests in one pass and is left out (`scheduler` None), so the
   numbers are the request's alone, as the batch gives them to the last bits. The prompt's states come from its
   prefill, a generated token's from the step that reads it (the one that draws the next token); the last
   generated token has none.
Each sequence (a sample of n) starts with a pass without a KV cache, so `Recording` keeps one list per sequence.
Each result carries its sequence's states in `TokenScores.hidden_states`, where the exporters read them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any, cast

import numpy as np
import torch

from explorer.engine.analyses.lens import final_norm
from explorer.engine.interface import HiddenStatesEngine, ModelEngine
from explorer.engine.kernels.listed import listed_width
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.events import Done, Step
from explorer.engine.passes.generation import decode_text, generate
from explorer.engine.passes.scoring import chunked_rows, listed_ids, score_forward
from explorer.errors import ExplorerError
from explorer.results.hidden import FINAL_NORM, Capture, HiddenStates, capture_of, read_positions, resolve_layers
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.rules.sampler import SamplerSettings

__all__ = ["Recording", "generate_states", "local_engine", "read_states", "score_states"]


def local_engine(engine: ModelEngine, param: str = "return_hidden_states") -> HiddenStatesEngine:
    """`engine` as the torch engine, or the ExplorerError (400) saying which engine gives hidden states."""
    if engine.capabilities.hidden_states:  # the torch engine's alone
        return cast(HiddenStatesEngine, engine)
    remote = not engine.capabilities.forward
    where = (
        "a remote server (--backend), which does not send them"
        if remote
        else (f"{engine.capabilities.engine}, which does not expose them")
    )
    raise ExplorerError(
        f"`{param}` needs the model's hidden states, which only the torch engine gives: {engine.name} runs on "
        f"{where}. Serve the model here with --engine torch to get them.",
        param=param,
        code="not_available_remote" if remote else "not_available",
    )


class Recording:
    """`engine` for one request: its forward passes keep the layers and positions `capture` names (see the module).

    Everything but `body`, `score` and `stream` is the engine's own; `scheduler` is None so that generations
    decode on the request's thread, where `body` runs."""

    scheduler = None  # the batch's steps (body_rows, on its thread) would keep nothing
    one_at_a_time = None

    def __init__(self, engine: HiddenStatesEngine, capture: Capture):
        self.engine, self.capture = engine, capture
        self.norm = final_norm(engine)
        top = engine.n_layers + 1  # body_states' index of the final norm's output
        self.index = [top if x == FINAL_NORM else int(x) for x in capture.layers]
        self.kept: list[list[tuple[int, np.ndarray]]] = []  # per sequence: (first position, (c, layers, H) float32)
        self.at = 0  # position of the next token of the current sequence

    def __getattr__(self, name: str) -> Any:
        if name == "engine":  # not set yet: never ask the engine for itself
            raise AttributeError(name)
        return getattr(self.engine, name)

    def body(self, ids: torch.Tensor, past=None, cache: bool = False, last: bool = False) -> tuple[torch.Tensor, Any]:
        """The engine's `body`, its states kept; a pass without a KV cache starts a new sequence."""
        if past is None:
            self.kept.append([])
            self.at = 0
        rows, states, past = self.engine.body_states(ids, self.norm, past, cache)
        self._keep(states, ids.shape[1])
        return (rows[-1:] if last else rows), past

    def _keep(self, states: list[torch.Tensor], t: int) -> None:
        """The asked layers at the asked positions among this pass's `t` (each state (t, H))."""
        lo, hi = self.capture.span(self.at, self.at + t)
        self.at += t
        if lo >= hi:
            return
        if self.capture.last:  # only the latest position counts: keep one row
            lo = hi - 1
        block = torch.stack([states[i][lo:hi] for i in self.index], dim=1)  # (c, layers, H)
        row = (self.at - t + lo, block.float().cpu().numpy())
        if self.capture.last:
            self.kept[-1][:] = [row]
        else:
            self.kept[-1].append(row)

    def states(self, sequence: int, token_ids: np.ndarray) -> HiddenStates:
        """The kept states of sequence `sequence`, whose tokens are `token_ids`."""
        rows = self.kept[sequence] if sequence < len(self.kept) else []
        h = self.engine.hidden_size
        values = np.concatenate([v for _, v in rows]) if rows else np.zeros((0, len(self.index), h), np.float32)
        positions = np.concatenate([np.arange(a, a + len(v)) for a, v in rows]) if rows else np.zeros(0, np.int64)
        return HiddenStates(
            layers=list(self.capture.layers),
            token_ids=np.asarray(token_ids, np.int64)[positions],
            positions=positions.astype(np.int64),
            values=values,
        )

    def score(self, ids: list[int], k: int, listed: Any = None) -> TokenScores:
        return score_forward(self, ids, k, listed=listed)  # type: ignore[arg-type]  # a Forward by delegation

    def stream(
        self, ids: list[int], s: SamplerSettings, sample: int = 0, want_prompt: bool = True
    ) -> Iterator[Step | Done]:
        return decode_text(self, ids, s, sample, want_prompt)  # type: ignore[arg-type]


@torch.inference_mode()
def score_states(engine: ModelEngine, ids: list[int], k: int, capture: Capture, listed: Any = None) -> TokenScores:
    """`ids` scored as scoring.score_ids scores them, with their `hidden_states` from the same forward passes.

    Scoring reads positions 0..T-2 (the last token scores nothing); here the last block keeps its KV cache and
    the last token is read after it, for its states only: the scored blocks are exactly scoring's.
    """
    rec = Recording(local_engine(engine), capture)
    rec.engine.check_ids(ids)
    fwd: Any = rec  # a Forward by delegation
    t = len(ids) - 1
    q = listed_ids(fwd, listed, t) if listed is not None else None
    x = torch.tensor([ids], device=rec.engine.device)  # (1, T)
    parts: list[Rows] = []
    past = None  # the KV cache of the prompt, read below
    for a, b, hidden, past in blocks.prefill_blocks(fwd, x[:, :t]):  # noqa: B007 (its last cache reads on)
        parts.append(chunked_rows(fwd, hidden, x[0, a + 1 : b + 1], k, None, q[a:b] if q is not None else None))
    bounds.check()
    rec.body(x[:, t:], past)  # the last token: its states only
    rows = Rows.concat(parts) if parts else Rows.empty(k, rec.engine.vocab_size)
    width = listed_width(listed) if listed else k
    return assemble(
        rec.engine.name,
        rec.engine.vocab,
        ids,
        len(ids),
        rows,
        first=1,
        prompt_k=width if listed is not None else k,
        hidden_states=rec.states(0, np.asarray(ids)),
    )


def generate_states(engine: ModelEngine, ids: list[int], s: SamplerSettings, capture: Capture) -> list[TokenScores]:
    """generation.generate's n samples, each with its `hidden_states` from the decode loop's own forward passes."""
    rec = Recording(local_engine(engine), capture)
    results = generate(rec, ids, s)  # type: ignore[arg-type]  # a Forward by delegation
    return [replace(r, hidden_states=rec.states(i, r.token_ids)) for i, r in enumerate(results)]


def read_states(
    engine: ModelEngine, ids: list[int], layers: list | None = None, positions: Any = "all", param: str = "layers"
) -> HiddenStates:
    """`ids`' hidden states at `layers` (as asked: ints, negative from the end, "final_norm"; None: every one,
    0..L and "final_norm") and `positions` ("all", "last", [start, end]), from score_states' passes: the Python
    API's and the CLI's reading, the API's code path."""
    here = local_engine(engine, param)
    asked = [*range(here.n_layers + 1), FINAL_NORM] if layers is None else list(layers)
    where = read_positions(list(positions) if not isinstance(positions, str) else positions, "positions")
    capture = capture_of(resolve_layers(asked, here.n_layers, param), where, len(ids))
    states = score_states(here, ids, 0, capture).hidden_states
    assert states is not None  # score_states always keeps them
    return states
