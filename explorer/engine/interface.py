"""What callers use of an engine, written down: `ModelEngine` (every engine: tokens, scoring, generation),
`Forward` (an engine whose forward pass runs here, torch or llama.cpp: hidden states or logits rows, KV caches) and
`Batching` (a Forward whose generations decode together: what explorer/engine/batching/scheduler.py asks of it, and the
`BatchRows` each DecodeBatch keeps its rows' KV cache in).

A served model (explorer/engine/remote/engine.py) is a ModelEngine and not a Forward: its server scores and generates
(`score`, `stream`). What an engine can give is its `capabilities` record; `forward_pass` says, for the code that
needs the model's insides, that a served model has none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, cast, runtime_checkable

from explorer.engine.capabilities import Capabilities
from explorer.engine.kernels.metrics import Stats
from explorer.engine.passes.events import Done, Step
from explorer.errors import ExplorerError
from explorer.results.scores import TokenScores
from explorer.rules.sampler import SamplerSettings

STAT_ROWS = 16  # rows per fused-sums call: a few MB of float32 logits, warm in cache
HEAD_ROWS = 128  # most positions per output-layer call (more buys no speed on a CPU; fewer bytes alive)
HEAD_MIN_ROWS = 64  # the output layer always sees >= 64 rows: the same BLAS kernel, so chunking cannot change a logit
STAT_BLOCK = 1 << 19  # float32 entries per block of many texts' statistics (2 MB: warm in cache, no fresh pages)


def block_size(vocab_size: int) -> int:
    """Rows per block of many texts' statistics (explorer/engine/passes/many.py, word_ends.py): STAT_BLOCK entries,
    a multiple of STAT_ROWS (at least STAT_ROWS)."""
    return STAT_ROWS * max(1, STAT_BLOCK // (STAT_ROWS * max(vocab_size, 1)))


@runtime_checkable
class ModelEngine(Protocol):
    """Every engine, as the views, the API, the CLI and the engine's own modules use it."""

    name: str
    tokenizer: Any  # a transformers tokenizer, or None (a served model tokenized on its server)
    vocab_size: int  # 0: not known yet (a served model's)
    context: int  # most tokens per text
    eos_ids: set[int]
    special_ids: set[int]
    weights_mb: float

    @property
    def vocab(self) -> Sequence[bytes]:
        """id -> raw bytes (a served model's may be learnt as texts come)."""
        ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def adds_bos(self) -> bool: ...

    def placement(self) -> str: ...

    def encode(self, text: str) -> list[int]: ...

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """`encode` of each text (one tokenizer call where one loads here)."""
        ...

    def tokenize(self, text: str, add_special_tokens: bool = True) -> list[int]: ...

    def detokenize(self, ids: list[int]) -> str: ...

    def token_strs(self, ids: list[int]) -> list[str]: ...

    def encode_chat(
        self,
        messages: list[dict],
        *,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        template_kwargs: dict | None = None,
    ) -> list[int]: ...

    def special_tokens(self) -> list[str]: ...

    def context_start_ids(self, mode: str | None) -> list[int]: ...

    def check_ids(self, ids: list[int]) -> None: ...

    def score(self, ids: list[int], k: int, listed: Any = None) -> TokenScores:
        """`ids` scored as given (position 0 unscored); `listed`: these ids' entries instead of the top-k."""
        ...

    def stream(
        self, ids: list[int], s: SamplerSettings, sample: int = 0, want_prompt: bool = True
    ) -> Iterator[Step | Done]:
        """Steps, then one Done, generated from prompt `ids` (sample i uses seed + i)."""
        ...


@runtime_checkable
class Forward(ModelEngine, Protocol):
    """An engine whose forward pass runs here (explorer/engine/local/forward.py): body and head apart, our statistics."""

    device: Any  # a torch.device
    dtype: Any  # a torch.dtype
    lock: threading.Lock  # one forward at a time on the shared model
    split_head: bool  # body gives hidden states (the head separate), else logits
    scheduler: Any  # the Scheduler that decodes its generations together once the server `attach`es one, else None
    one_at_a_time: Any  # a lock its lone generations take turns on (llama.cpp's: they must not interleave), or None

    @property
    def compiled(self) -> bool: ...

    def body(self, ids: Any, past: Any = None, cache: bool = False, last: bool = False) -> tuple[Any, Any]: ...

    def last_rows(self, ids: Any, past: Any = None) -> Any: ...

    def continue_rows(self, ids: Any, past: Any = None) -> Any: ...

    def head(self, hidden: Any) -> Any: ...

    def chunk_size(self, positions: int) -> int: ...

    def stats(self, logits: Any, targets: Any, k: int, full: bool = False) -> Stats: ...

    def background(self, fn, *args) -> Any: ...

    def compute(self, fn, *args, **kwargs) -> Any:
        """fn(*args, **kwargs) where this model's parallel work runs (on a CPU, the process's team thread)."""
        ...

    def compute_numbers(self, fn, *args) -> Any:
        """fn(*args), the numbers of a block of rows (its output layer and statistics), where this model computes
        them: `compute`'s thread, or the caller's where the model computes on fewer threads than that one."""
        ...

    def for_batch(self) -> AbstractContextManager: ...

    def block_stats(self, logits: Any, targets: Any) -> tuple[Any, Any, Any, Any]:
        """(logprob, rank, entropy, varentropy), each (c,), of logits rows (c, V) for `targets` (c,): `stats`'
        numbers without the top-k, block_size(V) rows a kernel call (compiled where this engine compiles)."""
        ...

    def row_sums(self, logits: Any, m: Any) -> tuple[Any, Any, Any]:
        """(s, q, r), each (c, 1): the sums over the vocabulary of e = exp(x - m), e * (x - m) and e * (x - m)^2 for
        logits rows x (c, V) under their maxima `m` (c, 1), by this engine's kernel (compiled where it compiles).
        s.log() is each row's log-normaliser beyond m; `stats` builds entropy and varentropy from q and r."""
        ...


class BatchRows(Protocol):
    """The KV cache of a DecodeBatch's rows (explorer/engine/batching/slots.py): PaddedCache on torch, SequenceCache on llama.cpp."""

    last: Any  # (B, H) hidden states or (B, V) logits: each row's last position

    def join(self, start: Any, shared: bool, positions: int) -> None:
        """A prompt read (`generation.Prefilled`) as the last row; it may grow to `positions`."""
        ...

    def keep(self, rows: list[int]) -> None:
        """Only rows `rows`, in that order."""
        ...

    def advance(self, toks: Any, positions: list[int]) -> None:
        """One forward pass: token toks[b] (B,) at positions[b] of row b."""
        ...


@runtime_checkable
class Batching(Forward, Protocol):
    """A Forward whose generations decode together (explorer/engine/batching/scheduler.py)."""

    batch_positions: int  # the most positions (prompt + tokens) of one batched generation
    batch_allocated: bool  # the rows' KV cells are set aside up front (`reserve`), else the cache grows with them

    def batch_refusal(self) -> str | None:
        """Why this model's generations cannot decode together (for the server's log); None where they can."""
        ...

    def kv_position_bytes(self) -> int:
        """Bytes one position of one sequence takes in the KV cache (keys and values of every layer)."""
        ...

    def reserve(self, size: int, positions: int) -> Any:
        """Set aside `size` sequences of `positions` positions before the batch starts (nothing to do where the
        cache grows with its rows: not `batch_allocated`)."""
        ...

    def batch_cache(self) -> BatchRows:
        """The rows' cache of a new DecodeBatch."""
        ...


class HiddenStatesEngine(Forward, Protocol):
    """A Forward whose residual stream can be read (the torch engine; `capabilities.hidden_states`): what the logit
    lens and `return_hidden_states` (explorer/engine/analyses/lens.py, hidden.py) ask of it."""

    model: Any  # the transformers model: its final norm is found in it

    @property
    def n_layers(self) -> int: ...

    @property
    def hidden_size(self) -> int: ...

    def body_states(self, ids: Any, norm: Any, past: Any = None, cache: bool = False) -> tuple[Any, list[Any], Any]:
        """`body(ids, past, cache)` (every row) and, from the same forward pass, the residual stream."""
        ...


def forward_pass(engine: ModelEngine) -> Forward:
    """`engine` as a forward pass run here (its capabilities say so), or the ExplorerError saying a served model
    exposes none."""
    if engine.capabilities.forward:
        return cast(Forward, engine)
    raise ExplorerError(
        f"{engine.name} runs on a remote backend, which does not expose hidden states or logits "
        "(needed for this view): use a model loaded here (drop --backend).",
        code="not_available_remote",
    )
