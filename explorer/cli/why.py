"""`logprob-explorer why`: why the model expected one token of a text, as each earlier token's (or word's) share.

`--text T --position N` (or `--target TEXT`) picks the token; `--contrast TEXT` asks why it rather than another
token or text (several tokens: scored as a continuation, the sum of its tokens' logprobs, as `answers` does). The body is `explorer.results.attribution.Attribution.to_dict()` (`--format json`) or its `to_csv()` (`--format csv`).
Positions count the scored text's tokens as the page's inspector does (0 is the first, a BOS where the tokenizer
adds one); -1 is the last.
"""

from __future__ import annotations

import argparse
import sys

from explorer.cli.args import (
    check_out,
    check_text,
    hidden_states_engine,
    ids_arg,
    k_arg,
    load_engine,
    model_args,
    source_text,
)
from explorer.errors import ExplorerError

FORMATS = ("json", "csv")
# the flags only some methods read (flag -> those methods), and their defaults (those of engine.attribution.attribute)
ONLY = {
    "steps": ("ig",),
    "baseline": ("ig",),
    "mode": ("occlusion",),
    "neutral": ("occlusion", "ig"),
    "layers": ("attention",),
}
DEFAULTS = {"steps": 32, "baseline": "neutral", "mode": "remove", "layers": 1}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "why",
        help="attribution: why the model expected one token, as each earlier token's (or word's) share",
        description="Explains f = log p(target | text before it) [- log p(contrast | text before it)], in nats: "
        "each unit before the target gets its share (occlusion: f minus f without the unit; ig / gxi: "
        "integrated gradients / gradient x input over the input embeddings; attention: the last layers' "
        "attention weights, not contributions).",
    )
    model_args(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--text-file")
    src.add_argument("--ids", type=ids_arg, help="comma-separated token ids, read exactly as given")
    p.add_argument(
        "--position",
        type=k_arg,
        help="the token to explain: its index in the scored text as the page's inspector numbers them "
        "(1 .. tokens-1; negative counts from the end: -1 is the last token)",
    )
    p.add_argument(
        "--target",
        metavar="TOKEN",
        help="the token to explain, by the characters it completes as the page shows them (or #ID): with --position, "
        "a check that the token there is this one; without, the first such token of the text",
    )
    p.add_argument(
        "--contrast",
        metavar="TOKEN",
        help="why the target rather than this: a text read as typed right after the text before the target (a "
        "leading space is part of it: ' London', ' New York'; several tokens are scored as a continuation, the sum of "
        "their logprobs) or #ID for one token id",
    )
    _method_args(p)
    p.add_argument("--format", choices=FORMATS, default="json")
    p.add_argument("--out", help="write the result here instead of stdout")


def _method_args(p: argparse.ArgumentParser) -> None:
    """The flags that pick the method and its settings (each method's own flags: see ONLY)."""
    from explorer.results.attribution import BASELINES, METHODS, OCCLUSION_MODES, UNITS

    p.add_argument("--method", default="occlusion", metavar="|".join(METHODS), help="default: occlusion")
    p.add_argument("--units", default="token", metavar="|".join(UNITS), help="per token or per word (default: token)")
    p.add_argument(
        "--detail",
        type=k_arg,
        help="how many units nearest the target stand alone; the text before them is cut into a few spans "
        "(default: 128, as on the page; 0: every unit alone)",  # tests/test_cli_why.py checks it is DETAIL
    )
    p.add_argument(
        "--mode",
        metavar="|".join(OCCLUSION_MODES),
        help="occlusion: leave the unit out, or replace its tokens by --neutral (default: remove)",
    )
    p.add_argument(
        "--neutral",
        metavar="TOKEN",
        help="--mode replace: the replacement token's text or #ID (default: the pad, unk or end-of-text token)",
    )
    p.add_argument("--steps", type=k_arg, help="ig: points on the path from the baseline (default: 32)")
    p.add_argument(
        "--baseline",
        choices=BASELINES,
        help="ig: the path's start: the neutral token's embedding at every position (the --neutral token, else the "
        "pad, unk or end-of-text token), or zero embeddings (default: neutral)",
    )
    p.add_argument("--layers", type=k_arg, help="attention: the last N layers, averaged (default: 1)")


# ---- checks that need no model ---------------------------------------------------------------------------
def token_query(value: str | None, flag: str) -> tuple[str, int | str] | None:
    """None, ("id", n) for `#n`, or ("text", s)."""
    if value is None:
        return None
    if value == "":
        raise ExplorerError(f"{flag} is empty: give a token's text (such as ' London') or #ID.", param=flag[2:])
    if value.startswith("#") and len(value) > 1:
        if not (value[1:].isascii() and value[1:].isdigit()):
            raise ExplorerError(f"{flag} {value!r}: #ID takes a whole number, like #42.", param=flag[2:])
        return "id", int(value[1:])
    return "text", value


class _AnyLength:
    n = sys.maxsize  # check_request's stand-in text: every position >= 1 is inside it


def _check(a: argparse.Namespace) -> str:
    """Every check that needs no model; returns the text ('' for --ids)."""
    from explorer.engine.analyses.attribution import DETAIL, check_request

    check_out(a.out, "--out")
    if a.position is None and a.target is None:
        raise ExplorerError(
            "Say which token to explain: --position N (-1: the last token) or --target TEXT.", param="position"
        )
    if a.position == 0:
        raise ExplorerError(
            "--position 0 is the text's first token: nothing comes before it to explain it. Give 1 or more "
            "(or -1 for the last token).",
            param="position",
        )
    # the engine's own checks of the settings, whose messages (naming `steps`, `method` ...) the page and the API
    # show too; a position >= 1 stands in, as the text is not tokenized yet
    a.detail = DETAIL if a.detail is None else a.detail
    mode, steps = a.mode or DEFAULTS["mode"], DEFAULTS["steps"] if a.steps is None else a.steps
    check_request(_AnyLength(), 1, a.method, a.units, mode, steps, a.detail)  # type: ignore[arg-type]
    for name, methods in ONLY.items():
        if getattr(a, name) is not None and a.method not in methods:
            raise ExplorerError(
                f"--{name} applies to --method {' or '.join(methods)}, not {a.method}: drop it or change the method.",
                param=name,
            )
    if a.neutral is not None and mode != "replace" and a.method != "ig":
        raise ExplorerError(
            "--neutral is the replacement token of --mode replace (and IG's baseline token): add one of those or drop "
            "--neutral.",
            param="neutral",
        )
    if a.layers is not None and a.layers < 1:
        raise ExplorerError(f"--layers must be 1 or more, got {a.layers}.", param="layers")
    for flag in ("--target", "--contrast", "--neutral"):
        if getattr(a, flag[2:]) is not None:
            check_text(getattr(a, flag[2:]), flag)
            token_query(getattr(a, flag[2:]), flag)
    for name, value in DEFAULTS.items():
        if getattr(a, name) is None:
            setattr(a, name, value)
    return source_text(a, "explain")


# ---- checks that need the model --------------------------------------------------------------------------
def piece(engine, i: int) -> str:
    """Token `i`'s text, as the vocabulary holds it."""
    try:
        return bytes(engine.vocab[i]).decode("utf-8", "replace")
    except (IndexError, KeyError, TypeError):
        return engine.detokenize([i])


def token_id(engine, value: str | None, flag: str) -> int | None:
    """The one token id `value` (a token's text or #ID) stands for, or an ExplorerError naming `flag`."""
    q = token_query(value, flag)
    if q is None:
        return None
    kind, v = q
    top = engine.vocab_size
    if kind == "id":
        assert isinstance(v, int)
        if top and not 0 <= v < top:
            raise ExplorerError(f"{flag} #{v} is outside the vocabulary (0..{top - 1}).", param=flag[2:])
        return v
    ids = engine.tokenize(str(v), add_special_tokens=False)
    if len(ids) != 1:
        how = "no tokens" if not ids else f"{len(ids)} tokens ({'|'.join(piece(engine, i) for i in ids)})"
        raise ExplorerError(f"{flag} `{v}` is {how}: give one token (its text, or #ID).", param=flag[2:])
    return int(ids[0])


def contrast_of(engine, r, pos: int, value: str | None) -> int | str | None:
    """--contrast checked against token `pos` of `r`: a token id (#ID), the text (read by the engine as a
    continuation, explorer.engine.analyses.attribution.contrast_tokens), or None; an ExplorerError naming the flag."""
    from explorer.engine.analyses.answers import MAX_VARIANT_TOKENS
    from explorer.engine.analyses.attribution import contrast_tokens

    q = token_query(value, "--contrast")
    if q is None:
        return None
    if q[0] == "id":
        one = token_id(engine, value, "--contrast")  # the vocabulary's bounds checked
        ids = [] if one is None else [one]
    else:
        ids = contrast_tokens(engine, r, pos, str(q[1]))[0]
    shown = "|".join(piece(engine, int(i)) for i in ids[:8]) + ("|…" if len(ids) > 8 else "")
    if not ids:
        raise ExplorerError(f"--contrast `{value}` is no tokens: give some text (or #ID).", param="contrast")
    if len(ids) > MAX_VARIANT_TOKENS:
        raise ExplorerError(
            f"--contrast is {len(ids)} tokens ({shown}); at most {MAX_VARIANT_TOKENS}: shorten it.", param="contrast"
        )
    if ids == [int(r.token_ids[pos])]:
        raise ExplorerError(
            f"--contrast `{piece(engine, int(ids[0]))}` is the target itself: pick another token to compare with.",
            param="contrast",
        )
    return q[1]


def position(r, a: argparse.Namespace) -> int:
    """The checked position of the token to explain (from --position and / or --target)."""
    n = r.n
    q = token_query(a.target, "--target")

    def matches(p: int) -> bool:  # the token's id (#ID), else the characters it completes (as the page shows them)
        assert q is not None
        return int(r.token_ids[p]) == q[1] if q[0] == "id" else r.token_text[p] == q[1]

    if a.position is None:
        hits = [p for p in range(1, n) if matches(p)]
        if not hits:
            raise ExplorerError(
                f"--target `{a.target}` is no token of the text after its first (as the page splits it, {n} "
                "tokens): give --position instead.",
                param="target",
            )
        if len(hits) > 1:
            at = ", ".join(map(str, hits[:8])) + (", ..." if len(hits) > 8 else "")
            print(
                f"note: --target is at positions {at}: explaining {hits[0]} (--position picks another)", file=sys.stderr
            )
        return hits[0]
    pos = a.position + n if a.position < 0 else a.position
    if not 1 <= pos < n:
        raise ExplorerError(
            f"--position {a.position} is outside the text: it has {n} tokens, so positions 1..{n - 1} "
            f"(or -1..-{n - 1} from the end) have text before them.",
            param="position",
        )
    if q is not None and not matches(pos):
        raise ExplorerError(
            f"--target `{a.target}` is not the token at position {pos}, which is `{r.token_text[pos]}` "
            f"(#{int(r.token_ids[pos])}).",
            param="target",
        )
    return pos


def _progress(method: str):
    """A progress line on stderr when it is a terminal (occlusion can take minutes on a long text)."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        print(f"\r{method}: {done:,} of {total:,} units", end=end, file=sys.stderr, flush=True)

    return show


def run(a: argparse.Namespace) -> dict | str:
    text = _check(a)
    from explorer.engine.analyses.attribution import attribute
    from explorer.engine.passes.scoring import score_ids, score_text

    # occlusion runs on any engine; the gradient methods and attention on the default GGUF's torch twin
    engine, note = (load_engine(a, a.model), "") if a.method == "occlusion" else hidden_states_engine(a, a.model)
    r = score_ids(engine, a.ids, 0) if a.ids is not None else score_text(engine, text, 0)
    pos = position(r, a)
    contrast = contrast_of(engine, r, pos, a.contrast)
    result = attribute(
        engine,
        r,
        pos,
        contrast=contrast,
        method=a.method,
        units=a.units,
        detail=a.detail,
        mode=a.mode,
        neutral=token_id(engine, a.neutral, "--neutral"),
        steps=a.steps,
        baseline=a.baseline,
        layers=a.layers,
        progress=_progress(a.method),
    )
    result.note = note
    return result.to_csv() if a.format == "csv" else result.to_dict()
