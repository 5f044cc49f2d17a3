"""Continuous batching for a served local model: one thread per model decodes every live generation together
(explorer/engine/batching/slots.py's DecodeBatch: torch's padded KV cache, or llama.cpp's KV sequences, llamacpp/sequences.py),
whichever face asked (the page, `/v1`, `logprob-explorer serve`).

A generation goes through it from generation.py's `decode_text` when the engine has a scheduler (`attach`):
1. the request's own thread reads its prompt (`prefill`: its bound applies, its cache and prompt numbers are the
   request's alone), then hands the scheduler a ticket: the prompt read, the settings, the sample index and its
   text layer (`TextLayer`, whose `more` the decode loop asks per token);
2. the scheduler's thread, at each step boundary, drops the tickets whose request went away (`close`d: stopped,
   past its deadline, the client disconnected; the request's thread notices, as it waits, through its own
   `bounds.check()`), joins waiting tickets while the batch has room (`size`, EXPLORER_WORKERS), then runs one
   step for all rows and hands each ticket its token with the text layer's findings for it (`TokenText`);
3. a row leaves the batch when it ends (EOS, a stop id or string, its budget): no one waits for the longest.
A generation the batch cannot hold (on llama.cpp, longer than a batch sequence) decodes on its own thread, in
turn with the engine's other lone ones (`one_at_a_time`).
The `n` samples of one request (generation.py's `samples`) share one prompt read: each is a ticket `submit`ted
at once (`shared`: the batch copies the cache instead of taking it), read in order with `receive`.
With nothing to decode the thread sleeps on a condition (no polling: an idle server uses no CPU), and ends after
IDLE_EXIT_S (so a model the server evicts is freed); the next request starts another.

Every number is what the request alone gives (tests/test_scheduler.py): the same `draw` with the request's own
seeded generator, the same statistics per row; only the BLAS's blocking for B rows may change the last bits.
The batch's KV cache is at most `size` x context positions (`kv_mb`, said at start-up): `attach` lowers `size`
where the device cannot hold that beside the weights. llama.cpp allocates its sequences' cells there and then,
each at most BATCH_POSITIONS (llamacpp/engine.py).
"""

from __future__ import annotations

import copy
import logging
import os
import queue
import threading
import weakref
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from explorer.engine.batching.slots import DecodeBatch, Slot
from explorer.engine.interface import Batching
from explorer.engine.llamacpp.sequences import TOO_LONG
from explorer.engine.local.memory import device_memory_mb
from explorer.engine.passes import bounds
from explorer.engine.passes.generation import WAIT_S, DrawnToken, Prefilled, TextLayer, TokenText, holding, solo_tokens
from explorer.errors import ExplorerError
from explorer.rules.sampler import SamplerSettings

__all__ = ["Scheduler", "attach"]

log = logging.getLogger(__name__)

IDLE_EXIT_S = 30.0  # an idle batch thread ends after this long; the next request starts another
_END = object()  # the ticket's generation ended
_ALONE = object()  # the model cannot be batched: the request decodes on its own thread


@dataclass(eq=False)
class _Ticket:
    start: Prefilled
    s: SamplerSettings
    sample: int
    text: TextLayer
    out: queue.SimpleQueue = field(
        default_factory=queue.SimpleQueue
    )  # (DrawnToken, TokenText), an error, _END or _ALONE
    views: deque = field(default_factory=deque)  # the text layer's findings, one per token not yet handed on
    shared: bool = False  # its prompt read is other tickets' too (n > 1): the batch copies its cache
    slot: Slot | None = None
    closed: bool = False

    def more(self, tid: int, ends: bool) -> bool:
        """The text layer's answer for token `tid` (asked on the scheduler's thread), its findings kept."""
        go = self.text.more(tid, ends)
        self.views.append(self.text.view())
        return go


class Scheduler:
    """The decode loop of one served model; see the module."""

    def __init__(self, engine: Any, size: int, positions: int = 0):
        self.engine, self.size = engine, max(1, size)
        self.kv_mb = self.size * _sequence_mb(engine, positions or engine.context)
        self._cond = threading.Condition()
        self._waiting: deque[_Ticket] = deque()
        self._closed: list[_Ticket] = []
        self._thread: threading.Thread | None = None
        self.alone = False  # set when the model turned out not to batch (a sliding-window cache)
        self.steps = self.rows = self.widest = 0  # batch steps run, rows decoded in them, the most in one step
        _SCHEDULERS.add(self)

    def forget_threads(self) -> None:
        """In a forked child: the parent's batch thread is not there (only the forking thread is copied), its lock
        may have been held by it, and its tickets are the parent's requests; the child's first generation starts a
        thread of its own."""
        self._cond, self._waiting, self._closed, self._thread = threading.Condition(), deque(), [], None

    # ---- the request's side ------------------------------------------------------------
    def tokens(
        self, start: Prefilled, s: SamplerSettings, sample: int, text: TextLayer
    ) -> Iterator[tuple[DrawnToken, TokenText]]:
        """The tokens of one sample from `start`, decoded in the batch; closing the iterator leaves the batch."""
        yield from self.receive(self.submit(start, s, sample, text))

    def submit(
        self, start: Prefilled, s: SamplerSettings, sample: int, text: TextLayer, shared: bool = False
    ) -> _Ticket:
        """A ticket for one sample from `start`, waiting to join the batch at its next step (`receive` its tokens;
        `close` it if they are not read to the end). `shared`: other tickets start from the same prompt read, so
        the batch copies its cache instead of taking it."""
        t = _Ticket(start, s, sample, text, shared=shared)
        if self.alone:
            t.out.put(_ALONE)
            return t
        with self._cond:
            self._waiting.append(t)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"batch-{self.engine.name}", daemon=True)
                self._thread.start()
            self._cond.notify()
        return t

    def receive(self, t: _Ticket) -> Iterator[tuple[DrawnToken, TokenText]]:
        """Ticket `t`'s tokens with the text layer's findings, as the batch decodes them; waiting, the request's
        own bound is asked every WAIT_S; leaving (the end, an error, closed early) closes the ticket."""
        try:
            while True:
                bounds.check()  # the request's own stop and deadline, on its own thread
                try:
                    item = t.out.get(timeout=WAIT_S)
                except queue.Empty:
                    continue
                if item is _END:
                    return
                if item is _ALONE:
                    start = replace(t.start, past=copy.deepcopy(t.start.past)) if t.shared else t.start
                    with holding(self.engine.one_at_a_time):  # llama.cpp's lone generations take turns
                        yield from solo_tokens(self.engine, start, t.s, t.sample, t.text)
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.close(t)

    def close(self, t: _Ticket) -> None:
        """Ticket `t` leaves: dropped from the waiting line, or from the batch at its next step boundary."""
        with self._cond:
            if t.closed:
                return
            t.closed = True
            if t in self._waiting:
                self._waiting.remove(t)
            else:
                self._closed.append(t)
                self._cond.notify()

    # ---- the scheduler's thread ----------------------------------------------------------
    def _run(self) -> None:
        batch, live = DecodeBatch(self.engine), dict[Slot, _Ticket]()
        while True:
            with self._cond:
                while not self._waiting and not live and not self._closed:
                    if not self._cond.wait(timeout=IDLE_EXIT_S):  # idle: asleep until a request comes, or gone
                        self._thread = None  # (a model evicted from the server must not be kept alive by it)
                        return
                closed, self._closed = self._closed, []
                room = self.size - len(live)
                new = [self._waiting.popleft() for _ in range(min(room, len(self._waiting)))]
            for t in closed:
                if t.slot is not None and live.pop(t.slot, None) is not None:
                    batch.remove(t.slot)
            for t in new:
                self._join(batch, live, t)
            if live:
                batch = self._step(batch, live)

    def _join(self, batch: DecodeBatch, live: dict[Slot, _Ticket], t: _Ticket) -> None:
        if t.closed:
            return
        try:
            t.slot = batch.join(t.start, t.s, t.sample, t.more, shared=t.shared)
        except ExplorerError as err:
            if err.code == TOO_LONG:  # longer than a batch sequence (llama.cpp's): this one decodes on its own
                t.out.put(_ALONE)
                return
            if err.code != "not_available":
                t.out.put(err)
                return
            log.info("%s: %s Each generation decodes on its own.", self.engine.name, err)
            self.alone = True
            t.out.put(_ALONE)
            return
        except Exception as err:  # noqa: BLE001 - the request's error, not the scheduler's
            t.out.put(err)
            return
        if t.slot.finished:  # no room left in the context
            t.out.put(_END)
        else:
            live[t.slot] = t

    def _step(self, batch: DecodeBatch, live: dict[Slot, _Ticket]) -> DecodeBatch:
        """One step of every live row; a failure is every live request's, and the batch starts again empty."""
        try:
            out = batch.step()
        except Exception as err:
            log.exception("batch step failed")
            for t in live.values():
                t.out.put(err)
            live.clear()
            return DecodeBatch(self.engine)
        self.steps, self.rows, self.widest = self.steps + 1, self.rows + len(out), max(self.widest, len(out))
        for slot, tok in out:
            t = live[slot]
            t.out.put((tok, t.views.popleft()))
            if slot.finished:
                del live[slot]
                t.out.put(_END)
        return batch


_SCHEDULERS: weakref.WeakSet[Scheduler] = weakref.WeakSet()  # every scheduler of this process


def _forget() -> None:
    """After a fork (a ZeroGPU worker runs the page's actions in one): every scheduler starts its thread anew."""
    for sched in list(_SCHEDULERS):
        sched.forget_threads()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def _sequence_mb(engine: Batching, positions: int) -> float:
    """MB the KV cache of one sequence of `positions` takes."""
    return positions * engine.kv_position_bytes() / 2**20


def attach(engine: Any, size: int, positions: int = 0) -> str | None:
    """Give a local engine a scheduler of `size` sequences of at most `positions` (0: the context) each, fewer
    sequences where the device cannot hold their KV cache beside the weights; what it takes, for the server's
    log, or None where the engine decodes each request alone (a served model, a sliding window on torch)."""
    if not engine.capabilities.forward or engine.scheduler is not None:
        return None  # batched already, or a served model (which batches on its own side)
    if not engine.capabilities.batching:
        return (
            f"{engine.name}: each generation decodes on its own (the {engine.capabilities.engine} engine does not "
            "batch them; --engine torch decodes them together)."
        )
    why = engine.batch_refusal()
    if why is not None:
        return f"{engine.name}: each generation decodes on its own ({why})."
    asked = positions = min(positions or engine.context, engine.context)
    positions = min(positions, engine.batch_positions)  # llama.cpp's sequences: a bounded length, allocated now
    per_seq_mb = _sequence_mb(engine, positions)
    room = device_memory_mb(str(engine.device)) - 2 * engine.weights_mb
    fits = max(1, int(room // per_seq_mb)) if room > 0 and per_seq_mb > 0 else size
    longer = f"; generations longer than {positions:,} positions decode on their own" if positions < asked else ""
    engine.reserve(min(size, fits), positions)  # llama.cpp allocates the cells now; torch's cache grows later
    sched = Scheduler(engine, min(size, fits), positions)
    engine.scheduler = sched
    lowered = f" (lowered from {size}: the device's memory)" if sched.size < size else ""
    taken = "takes" if engine.batch_allocated else "takes at most"
    return (
        f"{engine.name}: up to {sched.size} generations decode together{lowered}; their KV cache {taken} "
        f"{sched.kv_mb:,.1f} MB ({sched.size} x {positions:,} positions x {per_seq_mb / positions * 1024:.1f} KB)"
        f"{longer}."
    )
