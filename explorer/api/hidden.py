"""`return_hidden_states` on /v1/completions and /v1/chat/completions: the field read (SGLang's `true` and `"last"`,
or our object), checked against the model and the limits before any work, and each choice's value.

Steps, for a request that asks:
1. `read`, once per request (schemas.py's `hidden_ask`, first asked by the route choosing the engine or by `check`;
   no model): the field's form, every key and value checked by type; `stream`, `n > 1` and `best_of > 1` refused
   with it (at first, as vLLM's RFC: one sequence's states per request); the handler's Plan carries the Ask;
2. `plan` (the handler, the model known): capture on here, the engine torch's, the layers within the model, the
   positions returned x n counted against `hidden_states_max_tokens` (16 by default, as the seed API; SGLang's
   `true` returns 1, so a chat whose template adds a system prompt fits), and all the positions kept (generated
   ones at most as many as `max_tokens` allows) x layers x hidden x dtype against
   `hidden_states_max_bytes` (32 MiB); off on a public server unless its operator turns it on;
3. the engine computes them (explorer/engine/analyses/hidden.py) into each result's `TokenScores.hidden_states`,
   and the exporter writes each choice's `hidden_states` from its result (explorer/export/hidden_states.py
   `choice_states`, as `Ask.shape` says), like every other field of the body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explorer.engine.analyses.hidden import local_engine
from explorer.errors import ExplorerError
from explorer.export import hidden_states as export
from explorer.results.hidden import FINAL_NORM, Capture, capture_of, read_positions, resolve_layers
from explorer.rules.sampler import Limits

PARAM = "return_hidden_states"
KEYS = ("layers", "positions", "encoding_format", "dtype")


@dataclass(frozen=True)
class Ask:
    """What a request asked: `form` "object" (ours), "sglang" (`true`) or "sglang_last" (`"last"`)."""

    form: str
    layers: tuple = (FINAL_NORM,)
    positions: str | tuple[int, int] = "all"
    dtype: str = "float32"
    encoding_format: str = "base64"

    @property
    def shape(self) -> export.Shape:
        """How the exporter writes each choice's states."""
        return export.Shape(self.form, self.dtype, self.encoding_format)


def _bad(message: str, key: str = "", code: str = "invalid_value") -> ExplorerError:
    return ExplorerError(message, param=f"{PARAM}.{key}" if key else PARAM, code=code)


def read(value: Any) -> Ask | None:
    """The field as sent -> an Ask (None: not asked); an ExplorerError naming the key for anything else."""
    if value is None or value is False:
        return None
    if value is True:
        return Ask("sglang")
    if value == "last":
        return Ask("sglang_last")
    if not isinstance(value, dict):
        raise _bad(f'`{PARAM}` must be true, "last" or an object like {{"layers": [0, -1, "final_norm"]}}.')
    unknown = [k for k in value if k not in KEYS]
    if unknown:
        raise _bad(f"`{PARAM}` has no key `{unknown[0]}`: its keys are {', '.join(KEYS)}.", unknown[0])
    if "layers" not in value:
        raise _bad(
            f'`{PARAM}.layers` is required: a list like [0, -1, "final_norm"].', "layers", "missing_required_parameter"
        )
    layers = value["layers"]
    if not isinstance(layers, list) or not layers or not all(_layer_like(x) for x in layers):
        raise _bad(
            f'`{PARAM}.layers` must be a non-empty list of layer numbers (negative from the end) or "final_norm".',
            "layers",
        )
    return Ask(
        "object",
        tuple(layers),
        _positions(value.get("positions", "all")),
        _choice(value, "dtype", export.DTYPES),
        _choice(value, "encoding_format", export.ENCODINGS),
    )


def check_alone(stream: bool | None, n: int) -> None:
    """Capture serves one sequence, answered whole: `stream` and `n > 1` are refused (as vLLM's RFC does at first;
    `best_of > 1` is refused for every request, schemas.UNSUPPORTED)."""
    if stream:
        raise _bad(
            f"`{PARAM}` cannot be combined with `stream: true`: the states come with the whole answer; ask without "
            "streaming."
        )
    if n > 1:
        raise _bad(
            f"`{PARAM}` captures one sequence per request: `n` (={n}) must be 1; send n requests with different "
            "`seed`s for n samples."
        )


def _layer_like(x: Any) -> bool:
    return x == FINAL_NORM or (isinstance(x, int) and not isinstance(x, bool))


def _choice(value: dict, key: str, allowed: tuple[str, ...]) -> str:
    got = value.get(key, allowed[0])
    if got not in allowed:
        raise _bad(f"`{PARAM}.{key}` must be one of {', '.join(allowed)}; got {got!r}.", key)
    return got


def _positions(x: Any) -> str | tuple[int, int]:
    return read_positions(x, f"{PARAM}.positions")


def capture(ask: Ask, layers: list, prompt: int, new: int) -> tuple[Capture, int]:
    """(what to keep of a sequence of `prompt` tokens and at most `new` generated ones, at most how many positions).

    A sequence has a state at every position but the last generated token's: `prompt + new - 1` with `new` > 0.
    SGLang's `true` keeps the final norm's output at the latest generated position that has one, `"last"` at
    every position whose step drew a token (the prompt's last, then every generated token but the last).
    """
    states = prompt + max(new - 1, 0)
    if ask.form == "sglang":
        return Capture((FINAL_NORM,), start=prompt, last=True), 1
    if ask.form == "sglang_last":
        return Capture((FINAL_NORM,), start=prompt - 1, stop=prompt - 1 + new), new
    c = capture_of(layers, ask.positions, prompt)
    if ask.positions == "last":
        return c, 1
    return c, max(0, min(c.stop if c.stop is not None else states, states) - c.start)


def plan(ask: Ask, engine, prompts: list[list[int]], new: list[int], n: int, limits: Limits) -> list[Capture]:
    """Each prompt's Capture (`new[i]`: the most tokens prompt i may generate), checked against the limits:
    capture served here (`limits.hidden_states`), the engine's, the positions returned x n within
    `hidden_states_max_tokens` (what the request gets back: SGLang's `true` is 1 position whatever the prompt's
    length, which the prompt limits bound as any request's) and the states' bytes (positions x layers x hidden x
    dtype) within `hidden_states_max_bytes`."""
    check_on(limits)
    here = local_engine(engine)
    layers = resolve_layers(list(ask.layers), here.n_layers, f"{PARAM}.layers") if ask.form == "object" else []
    captures, positions = [], 0
    for ids, m in zip(prompts, new):
        c, count = capture(ask, layers, len(ids), m)
        captures.append(c)
        positions += count * n
    item = export.ITEM_BYTES[ask.dtype]
    width = len(captures[0].layers) if captures else 0
    size = positions * width * here.hidden_size * item
    if positions > limits.hidden_states_max_tokens or size > limits.hidden_states_max_bytes:
        too_long = positions > limits.hidden_states_max_tokens
        raise ExplorerError(
            f"{'Text too long' if too_long else 'Too many bytes'} for hidden states: {_tokens_line(positions, limits)}"
            f"; {size:,} bytes ({_count(positions, 'position')} x {_count(width, 'layer')} x {here.hidden_size} x "
            f"{item} bytes), max is {limits.hidden_states_max_bytes:,} (EXPLORER_HIDDEN_STATES_MAX_BYTES). Ask for "
            'fewer `positions` (`"last"`, a [start, end] range), fewer `max_tokens`, fewer layers or a smaller '
            "`dtype`, or shorten the text.",
            param=PARAM,
            code="hidden_states_too_long" if too_long else "hidden_states_too_large",
        )
    return captures


def check_on(limits: Limits) -> None:
    """The ExplorerError (400) of a server where the operator left capture off."""
    if not limits.hidden_states:
        raise ExplorerError(
            f"`{PARAM}` is off on this {'public ' if limits.public else ''}server: its operator can turn it on "
            "with EXPLORER_HIDDEN_STATES=1 (under the same caps).",
            param=PARAM,
            code="hidden_states_off",
        )


def check_forwarded(ask: Ask, prompts: list[list[int]], new: list[int], n: int, limits: Limits) -> None:
    """A request a remote engine sends on (`forwarded`): capture on here and the positions returned x n within this
    server's `hidden_states_max_tokens`; its bytes are the backend's to bound (it knows the layers' width)."""
    check_on(limits)
    positions = sum(capture(ask, [], len(ids), m)[1] for ids, m in zip(prompts, new)) * n
    if positions > limits.hidden_states_max_tokens:
        raise ExplorerError(
            f"Text too long for hidden states: {_tokens_line(positions, limits)}. Ask for fewer `positions` or "
            "`max_tokens`, or shorten the text.",
            param=PARAM,
            code="hidden_states_too_long",
        )


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _tokens_line(positions: int, limits: Limits) -> str:
    """The token cap's part of a refusal: it counts the positions whose states come back (the forward pass over the
    prompt is bounded by the prompt limits as any request's), not the prompt's length."""
    return (
        f"{_count(positions, 'token')}, max is {limits.hidden_states_max_tokens} (positions whose states are "
        "returned, x n: EXPLORER_HIDDEN_STATES_MAX_TOKENS)"
    )


def forwarded(engine) -> bool:
    """Whether `engine` sends a request asking for hidden states on to its backend whole (a remote engine whose
    backend's card announces them: explorer/engine/remote/engine.py)."""
    return bool(getattr(engine, "backend_hidden_states", (0, 0))[0])


def caps(engine, limits: Limits) -> dict:
    """A model card's `return_hidden_states` caps: positions returned x n and bytes per request, both 0 where it is
    not served (off here, or an engine without hidden states; an engine not loaded yet: the server's); a remote engine
    that forwards them: the smaller token cap (both servers check theirs) and its backend's bytes (which it checks)."""
    if not (limits.hidden_states and (engine is None or engine.capabilities.hidden_states or forwarded(engine))):
        return {"hidden_states_max_tokens": 0, "hidden_states_max_bytes": 0}
    if forwarded(engine):
        tokens, size = engine.backend_hidden_states
        return {
            "hidden_states_max_tokens": min(limits.hidden_states_max_tokens, tokens),
            "hidden_states_max_bytes": size,
        }
    return {
        "hidden_states_max_tokens": limits.hidden_states_max_tokens,
        "hidden_states_max_bytes": limits.hidden_states_max_bytes,
    }
