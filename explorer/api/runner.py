"""Where the API's model work runs: in this process (`Here`), or on Hugging Face ZeroGPU inside a `spaces.GPU` call
(`OnZeroGpu`), in the package's forked worker that holds the GPU, as the page's actions run there
(explorer/ui/gpu_calls.py; explorer/serving/zerogpu.py says how ZeroGPU runs code).

A handler checks a request in this process (tokenizing is CPU work) and hands the model's part over as a `Work`: a
module-level function of the engine (it crosses to the worker by its name), its arguments (pickled) and the
positions it reads and tokens it generates. On ZeroGPU:
1. the call asks `zerogpu.gpu_seconds` of those tokens at the model's rate, the page's rule;
2. the worker takes the model by its name from its copy of the registry (explorer/serving/models.py renews the
   registry's locks after a fork) and runs the work within the server's time cap (a gate `Token`: the same error as
   here);
3. only CPU objects come back (TokenScores, HiddenStates, bytes); an `ExplorerError` crosses as a value and is raised
   here, so a request gets the status and the words it gets anywhere else;
4. a stream is one generator call, which holds the GPU from its first chunk to its last: the request's bound is
   asked here before each chunk, and closing the stream (the client went away) ends the worker's at its next chunk.
A client going away during a call that does not stream does not reach the worker: the call ends at the time cap.
The package's own refusals (the visitor's quota, no GPU free, the call aborted) answer 503 with its words.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from explorer.api.work import Token
from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits
from explorer.serving import zerogpu

if TYPE_CHECKING:
    from explorer.serving.models import Models

WORKER_BUG = "ZeroGPU worker error"  # the package's title for anything the worker raised, and for an aborted call
ABORTED = "GPU task aborted"  # its words when the worker died or ran past its duration
MARGIN_S = 2.0  # the worker stops its work this long before the duration asked runs out


@dataclass(frozen=True)
class Work:
    """The model's part of a request: `fn(engine, *args)`, reading `tokens_in` positions and generating
    `tokens_out` tokens (what a ZeroGPU call asks for)."""

    fn: Callable[..., Any]
    args: tuple = ()
    tokens_in: int = 0
    tokens_out: int = 0


class Runner(Protocol):
    def call(self, engine: Any, work: Work) -> Any:
        """What `work` returns."""

    def steps(self, engine: Any, work: Work) -> Iterator[Any]:
        """The items of the iterator `work` returns."""


class Here:
    """Anywhere but ZeroGPU: the work runs on the caller's thread, within the caller's bound."""

    def call(self, engine: Any, work: Work) -> Any:
        return work.fn(engine, *work.args)

    def steps(self, engine: Any, work: Work) -> Iterator[Any]:
        return work.fn(engine, *work.args)


HERE = Here()


@dataclass(frozen=True)
class Refused:
    """An ExplorerError raised in the worker, sent back as a value (the package would send its class name only)."""

    error: ExplorerError


class OnZeroGpu:
    """ZeroGPU: each call (each stream) of the API's model work is one `spaces.GPU` call (see the module)."""

    def __init__(self, models: Models, limits: Limits):
        spaces = importlib.import_module("spaces")
        self.models, self.limits = models, limits
        self._once = spaces.GPU(self._in_worker, duration=self.seconds)
        self._each = spaces.GPU(self._steps_in_worker, duration=self.seconds)

    def seconds(self, model: str, work: Work) -> int:
        """The duration a call of `work` on `model` asks: the page's rule at the model's rate, the time cap at most."""
        rate = zerogpu.Rate.of(dict(self.models.in_memory()).get(model, 0.0))
        return zerogpu.gpu_seconds(work.tokens_in, work.tokens_out, rate, self.limits.max_seconds)

    def call(self, engine: Any, work: Work) -> Any:
        bounds.check()  # a request stopped while it waited asks no GPU
        with refusals():
            return returned(self._once(engine.name, work))

    def steps(self, engine: Any, work: Work) -> Iterator[Any]:
        """The worker's items, its first one asked now: the package schedules the GPU at the first item, so its
        refusal (the quota, no GPU free) is a 503 before a stream's headers are sent, not an event inside it."""
        items = self._each(engine.name, work)
        try:
            with refusals():
                first = returned(next(items))
        except StopIteration:
            return iter(())
        except BaseException:
            items.close()
            raise
        return self._rest(items, first)

    @staticmethod
    def _rest(items: Generator[Any, None, None], first: Any) -> Iterator[Any]:
        try:
            yield first
            with refusals():
                for item in items:
                    bounds.check()  # the request's own stop (the client went away) and deadline, between chunks
                    yield returned(item)
        finally:
            items.close()  # the package stops the worker's generator at its next chunk

    # ---- in the worker ---------------------------------------------------------------------------------------
    def _time(self, model: str, work: Work) -> float:
        """The worker's own deadline: a little inside the duration the call asked, which the package enforces by
        aborting the call (a 503 a client retries); past this one the work stops with the time cap's own error."""
        cap = self.limits.max_seconds or math.inf  # 0: no cap of the server's own
        return max(min(cap, self.seconds(model, work) - MARGIN_S), 1.0)

    def _in_worker(self, model: str, work: Work) -> Any:
        try:
            with self.models.use(model) as engine, bounds.within(Token(self._time(model, work)).bound()):
                return zerogpu.cpu_only(work.fn(engine, *work.args))
        except ExplorerError as err:
            return Refused(err)

    def _steps_in_worker(self, model: str, work: Work) -> Iterator[Any]:
        try:
            with self.models.use(model) as engine:
                for item in bounds.iterated(Token(self._time(model, work)).bound(), work.fn(engine, *work.args)):
                    yield zerogpu.cpu_only(item)
        except ExplorerError as err:
            yield Refused(err)


def returned(value: Any) -> Any:
    """What the worker sent back, its refusal raised here."""
    if isinstance(value, Refused):
        raise value.error
    return value


def refusal(err: Exception) -> ExplorerError | None:
    """The `spaces` package's refusal (an error titled "ZeroGPU ...": the quota, no GPU free, the call aborted) as a
    503 in its words; None for anything else (what the work raised: a bug, logged as one)."""
    title, message = getattr(err, "title", None), str(getattr(err, "message", err))
    if not isinstance(title, str) or not title.startswith("ZeroGPU") or (title == WORKER_BUG and message != ABORTED):
        return None
    return ExplorerError(f"{title}: {message}", code="zerogpu_unavailable")


@contextmanager
def refusals() -> Iterator[None]:
    """The package's refusals raised as ExplorerErrors (`refusal`); anything else as it is."""
    try:
        yield
    except ExplorerError:
        raise
    except Exception as err:
        why = refusal(err)
        if why is None:
            raise
        raise why from err


def runner(models: Models, limits: Limits, zero: bool) -> Runner:
    """Where the API's model work runs: on ZeroGPU (`zero`) in the package's worker, else here."""
    return OnZeroGpu(models, limits) if zero else HERE
