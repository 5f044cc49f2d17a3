"""Two JSON bodies compared key by key, as a client would notice: keys and their order, null placement, types,
numbers within a tolerance, ranks equal except at near ties. Used by the real-vLLM oracle (test_vllm_shapes.py).

A difference is `(path, what)`; a path is dotted (`choices.0.logprobs.tokens`), list indices as numbers.
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase

TOL = 1e-4
VOLATILE = {"id", "created", "system_fingerprint"}  # differ between any two answers: compared by type only
LOGPROB_MAPS = re.compile(r"(^|\.)(top_logprobs\.\d+|prompt_logprobs\.\d+|logprobs\.\d+)$")  # {token: number|entry}


def _kind(x) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    return type(x).__name__


def _value(v) -> float | None:
    """The logprob a top-logprobs map holds for one key: a number, or vLLM's {logprob, rank, decoded_token}."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, dict) and isinstance(v.get("logprob"), (int, float)):
        return float(v["logprob"])
    return None


def _tied(a: dict, b: dict, key: str) -> bool:
    """Whether `key`, in one map and not the other (or placed differently), sits at a near tie: some entry of the
    other map has a logprob within TOL of its own, so either order is right."""
    mine = _value((a if key in a else b)[key])
    other = b if key in a else a
    return mine is not None and any((v := _value(x)) is not None and abs(v - mine) <= TOL for x in other.values())


def diff(ours, theirs, path: str = "") -> list[tuple[str, str]]:
    """Every difference between `ours` and `theirs` (the reference), paths first to last."""
    name = path.rsplit(".", 1)[-1]
    if name in VOLATILE:
        return [] if _kind(ours) == _kind(theirs) else [(path, f"type {_kind(ours)} vs {_kind(theirs)}")]
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return _dicts(ours, theirs, path)
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [(path, f"length {len(ours)} vs {len(theirs)}")]
        if name == "top_logprobs":  # chat's sorted list: neighbours within TOL may come in either order
            ours = _untie(ours, theirs)
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in diff(a, b, f"{path}.{i}" if path else str(i))]
    ka, kb = _kind(ours), _kind(theirs)
    if {ka, kb} <= {"int", "float"} and ka != kb:
        return [(path, f"type {ka} vs {kb}")]
    if ka != kb:
        return [(path, f"{ka} vs {kb}" + (f" ({_short(theirs)})" if kb != "null" else f" ({_short(ours)})"))]
    if ka == "float":
        return [] if abs(ours - theirs) <= TOL else [(path, f"{ours!r} vs {theirs!r}")]
    return [] if ours == theirs else [(path, f"{_short(ours)} vs {_short(theirs)}")]


def _untie(ours: list, theirs: list) -> list:
    """`ours` with entries swapped where they sit at a near tie and `theirs` has them the other way."""
    ours = list(ours)
    for i in range(len(ours) - 1):
        a, b = _value(ours[i]), _value(ours[i + 1])
        if (
            a is not None
            and b is not None
            and abs(a - b) <= TOL
            and _tok(ours[i + 1]) == _tok(theirs[i]) != _tok(ours[i])
        ):
            ours[i], ours[i + 1] = ours[i + 1], ours[i]
    return ours


def _tok(entry):
    return entry.get("token") if isinstance(entry, dict) else entry


def _dicts(a: dict, b: dict, path: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    tops = bool(LOGPROB_MAPS.search(path))
    ka, kb = list(a), list(b)
    if ka != kb:
        if tops:  # a top-k map: keys may differ or swap only at near ties
            moved = [k for k in set(ka) ^ set(kb) if not _tied(a, b, k)]
            order_a = [k for k in ka if k in b]
            order_b = [k for k in kb if k in a]
            swapped = [x for x, y in zip(order_a, order_b) if x != y and not (_tied(a, b, x) and _tied(a, b, y))]
            if moved or swapped:
                out.append((path, f"keys {_short(ka)} vs {_short(kb)}"))
        else:
            out.append((path, f"keys {ka} vs {kb}"))
    for k in a:
        if k not in b:
            continue
        sub = f"{path}.{k}" if path else str(k)
        x, y = a[k], b[k]
        if tops and isinstance(x, dict) and isinstance(y, dict) and "rank" in x and "rank" in y:
            # a vLLM entry {logprob, rank, decoded_token}: the rank is equal unless its logprob has a near tie
            if x["rank"] != y["rank"] and not _tied_rank(a, b, k):
                out.append((f"{sub}.rank", f"{x['rank']} vs {y['rank']}"))
            x = {n: v for n, v in x.items() if n != "rank"}
            y = {n: v for n, v in y.items() if n != "rank"}
        out += diff(x, y, sub)
    return out


def _tied_rank(a: dict, b: dict, key: str) -> bool:
    """A rank may differ at a near tie: another entry (of either map) has a logprob within TOL of this one."""
    mine = _value(b[key])
    return mine is not None and any(
        k != key and (v := _value(x)) is not None and abs(v - mine) <= TOL for m in (a, b) for k, x in m.items()
    )


def _short(x) -> str:
    s = json.dumps(x, ensure_ascii=False)
    return s if len(s) <= 120 else s[:117] + "..."


def allowed(path: str, request: str, rules: list[tuple[str, str]]) -> bool:
    """Whether a documented rule (request glob, path glob) covers this difference."""
    return any(fnmatchcase(request, r) and fnmatchcase(path, p) for r, p in rules)
