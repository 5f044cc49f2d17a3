"""A view as a link: the inputs and settings that make a result, packed into one URL-safe string and read back.

`encode(state)` writes compact JSON (fields left at their defaults omitted), compresses it with raw deflate and
writes URL-safe base64 without padding after a version prefix (`2.`; links of version `1.` still open). `decode(s)` reads anything a visitor can paste: it is strict and bounded (the
encoded length, the decompressed size, every type and range; the sampler's rules are SamplerSettings' own) and
everything wrong with it is one ExplorerError saying what. A link names a model at most: the page resolves that
name through `Models.resolve`, like any name a visitor types.

No gradio, no torch: the page, the tests and a script can all build and read links.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import zlib
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

from explorer.attribution import BASELINES, METHODS, OCCLUSION_MODES, UNITS
from explorer.errors import ExplorerError
from explorer.render.heatmap import DEFAULT_METRIC, DEFAULT_THRESHOLDS, METRICS
from explorer.render.lens import METRICS as LENS_METRICS
from explorer.render.words import METRICS as WORD_METRICS
from explorer.settings import MAX_K, SamplerSettings

VERSION = "2"
VERSIONS = ("1", "2")  # a version 1 link (Score, Generate, Chat only) reads as the same view
QUERY_KEY = "view"  # the page reads ?view=... and no other query key
MAX_LINK_CHARS = 8000  # longer URLs are cut by browsers, chat apps and proxies
MAX_JSON_BYTES = 256 * 1024  # the decompressed JSON (a link's deflate cannot expand past this: no zip bombs)
MAX_TEXT_CHARS = 100_000
MAX_MESSAGES = 64
MAX_POSITION = 1_000_000
TABS = ("score", "generate", "chat")  # the tabs that make the inspector's result (a link's `base`)
TOOLS = ("compare", "whatif", "why", "lookup", "words", "branch", "lens")  # the tabs that work beside it
ON_RESULT = (
    "whatif",
    "why",
    "lookup",
    "words",
    "branch",
)  # ... those that read the inspector's result (lens: when no text)
COMPARE_MODES = ("models", "prompts")
COLOURS = ("delta", "js")
MAX_QUERY_CHARS = 2000
MAX_LAYER = 4096
# the What-if tab's sliders (explorer/ui/tabs/whatif.py): name -> (low, high, whole number)
SLIDERS = {"temperature": (0.0, 2.0, False), "top_k": (0, 200, True), "top_p": (0.01, 1.0, False),
           "min_p": (0.0, 1.0, False), "repetition_penalty": (0.5, 3.0, False), "top_n": (5, 50, True)}  # fmt: skip
DEFAULT_SLIDERS: dict[str, Any] = {
    "temperature": 1.0,
    "top_k": 0,
    "top_p": 1.0,
    "min_p": 0.0,
    "repetition_penalty": 1.0,
    "top_n": 15,
}
# the Why tab's settings (explorer/ui/tabs/why.py, explorer/attribution.py): name -> the values allowed
WHY_CHOICES = {"why_method": METHODS, "why_units": UNITS, "why_mode": OCCLUSION_MODES, "why_baseline": BASELINES}
WHY_NUMBERS = {"why_detail": (0, 1024, 128), "why_steps": (2, 256, 32)}  # name -> (low, high, default)
MAX_TOKEN_CHARS = 200
ROLES = ("user", "assistant")
# the page's sampler controls (explorer/ui/sampler.py): a link outside them would not fit the sliders
CONTROL_BOUNDS = {"max_tokens": (1, 512), "temperature": (0.0, 2.0), "top_p": (0.01, 1.0), "top_k": (0, 200)}
SAMPLER_KEYS = ("max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "mode")
DEFAULT_SAMPLER: dict[str, Any] = {
    "max_tokens": 48,
    "temperature": 0.7,
    "top_p": 1.0,
    "top_k": 0,
    "seed": None,
    "stop": [],
    "mode": "raw",
}


@dataclass(frozen=True)
class ViewState:
    """Everything that makes a view: the tab and its inputs, the colour settings and the selected token."""

    tab: str = "score"
    model: str = ""  # the model's public name ('' = the page's default)
    text: str = ""  # Score: the text; Generate: the prompt
    system: str = ""  # Chat: the system message
    messages: tuple[tuple[str, str], ...] = ()  # Chat: (role, content) up to and including the last user message
    metric: str = DEFAULT_METRIC
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    k: int = 10
    sampler: dict = field(default_factory=lambda: dict(DEFAULT_SAMPLER))  # SAMPLER_KEYS (seed set: it replays)
    score_prompt: bool = True
    from_start: bool = False  # Score: put a document-start token first
    start: str = "eos"  # that token's menu value
    selected: int = 0  # the inspector's token (What-if's position, Branch's position); Compare: the compared token
    base: str = ""  # which of TABS made the inspector's result ('' = none; for those tabs, the tab itself)
    # Compare (`model` is model A, `text` the compared text, `selected` the compared token)
    compare_mode: str = "models"
    model_b: str = ""
    prompt_a: str = ""
    prompt_b: str = ""
    colour: str = "delta"
    sliders: dict = field(default_factory=lambda: dict(DEFAULT_SLIDERS))  # What-if
    query: str = ""  # Look up: one query a line
    word_metric: str = "probability"  # Words
    word: int = 0
    lens_text: str = ""  # Logit lens ('' = the inspector's result)
    lens_metric: str = "rank"
    layer: int = 0
    lens_pos: int = 0
    why_contrast: str = ""  # Why: the token the target is compared with ('' = none)
    why_method: str = "occlusion"
    why_units: str = "token"
    why_detail: int = 128
    why_mode: str = "remove"
    why_steps: int = 32
    why_baseline: str = "neutral"

    def __post_init__(self):
        if self.tab in TABS:  # a tab that makes the result is its own base
            object.__setattr__(self, "base", self.tab)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["messages"] = [list(m) for m in self.messages]
        d["thresholds"] = list(self.thresholds)
        return d

    def compact(self) -> dict:
        """`to_dict` less the fields left at their defaults (tab and base kept): what a link carries."""
        default = ViewState().to_dict()
        return {k: v for k, v in self.to_dict().items() if k in ("tab", "base") or v != default[k]}

    @classmethod
    def from_dict(cls, d: object) -> ViewState:
        """Checked field by field; unknown keys are ignored, a missing one takes its default."""
        return _checked(d)


def damaged(why: str) -> ExplorerError:
    return ExplorerError(f"This link is damaged or cut short: {why}. The page opens as usual.")


def too_long(n: int) -> ExplorerError:
    return ExplorerError(
        f"This view is too long for a link ({n:,} characters; a link carries at most {MAX_LINK_CHARS:,}): "
        "use *Download session* and share the file instead (it opens with *Open a session*)."
    )


def encode(state: ViewState) -> str:
    """`1.` + URL-safe base64 (no padding) of the raw-deflated compact JSON of `state`."""
    raw = json.dumps(state.compact(), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = base64.urlsafe_b64encode(z.compress(raw) + z.flush()).rstrip(b"=").decode("ascii")
    out = f"{VERSION}.{packed}"
    if len(out) > MAX_LINK_CHARS:
        raise too_long(len(out))
    return out


def decode(s: object) -> ViewState:
    """The ViewState in a link's `view` value; anything wrong is one ExplorerError saying what."""
    if not isinstance(s, str) or not s.strip():
        raise damaged("it carries no view")
    s = s.strip()
    if len(s) > MAX_LINK_CHARS:
        raise damaged(f"it is {len(s):,} characters long, more than a link may carry ({MAX_LINK_CHARS:,})")
    version, dot, packed = s.partition(".")
    if not dot or version not in VERSIONS:
        raise damaged(f"it does not start with the version `{VERSION}.`; it may come from another program")
    try:
        blob = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
    except (binascii.Error, ValueError):
        raise damaged("its text is not URL-safe base64") from None
    z = zlib.decompressobj(-15)
    try:
        raw = z.decompress(blob, MAX_JSON_BYTES + 1)
    except zlib.error:
        raise damaged("its compressed data is broken") from None
    if len(raw) > MAX_JSON_BYTES or z.unconsumed_tail:
        raise damaged(f"it unpacks to more than {MAX_JSON_BYTES // 1024} KB")
    if not z.eof:
        raise damaged("its compressed data ends early")
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise damaged("its content is not JSON") from None
    return _checked(d)


# ---- checks ------------------------------------------------------------------------------------
def _text(d: dict, key: str, cap: int = MAX_TEXT_CHARS) -> str:
    v = d.get(key, "")
    if not isinstance(v, str):
        raise damaged(f"`{key}` must be text, got {type(v).__name__}")
    if len(v) > cap:
        raise damaged(f"`{key}` is longer than {cap:,} characters")
    return v


def _int(d: dict, key: str, lo: int, hi: int, default: int) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise damaged(f"`{key}` must be a whole number, got {str(v)[:40]!r}")
    if not lo <= v <= hi:
        raise damaged(f"`{key}` (={v}) must be from {lo} to {hi}")
    return v


def _bool(d: dict, key: str, default: bool) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise damaged(f"`{key}` must be true or false")
    return v


def _thresholds(v: object) -> tuple[int, ...]:
    ok = isinstance(v, list) and 1 <= len(v) <= 4
    t = tuple(v) if ok and isinstance(v, list) else ()
    ok = ok and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 10**9 for x in t)
    if not ok or any(b <= a for a, b in pairwise(t)):
        raise damaged("`thresholds` must be 1 to 4 increasing whole numbers ≥ 1")
    return t


def _messages(v: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(v, list) or len(v) > MAX_MESSAGES:
        raise damaged(f"`messages` must be a list of at most {MAX_MESSAGES} [role, text] pairs")
    out = []
    for m in v:
        if not (
            isinstance(m, list) and len(m) == 2 and isinstance(m[0], str) and m[0] in ROLES and isinstance(m[1], str)
        ):
            raise damaged("each message must be a pair [role, text] with role user or assistant")
        if len(m[1]) > MAX_TEXT_CHARS:
            raise damaged(f"a message is longer than {MAX_TEXT_CHARS:,} characters")
        out.append((m[0], m[1]))
    return tuple(out)


def _sampler(v: object) -> dict:
    """The link's sampler settings: SamplerSettings' rules, then the page controls' ranges."""
    if not isinstance(v, dict):
        raise damaged("`sampler` must be an object")
    s = {**DEFAULT_SAMPLER, **{k: v[k] for k in SAMPLER_KEYS if k in v}}
    if not isinstance(s["stop"], list):
        raise damaged("`sampler.stop` must be a list of strings")
    try:
        checked = SamplerSettings.from_dict({**s, "logprobs": None}).to_dict()
    except ExplorerError as err:
        raise damaged(f"its sampler settings are out of range: {err.message}") from None
    except TypeError:
        raise damaged("its sampler settings have the wrong types") from None
    out = {k: checked[k] for k in SAMPLER_KEYS}
    for key, (lo, hi) in CONTROL_BOUNDS.items():
        if not lo <= out[key] <= hi:
            raise damaged(f"`{key}` (={out[key]}) is outside the page's range {lo} to {hi}")
    return out


def _choice(d: dict, key: str, options: tuple[str, ...], default: str) -> str:
    v = d.get(key, default)
    if not isinstance(v, str) or v not in options:
        raise damaged(f"`{key}` must be one of {', '.join(options)}, got {str(v)[:40]!r}")
    return v


def _sliders(v: object) -> dict:
    """What-if's slider values, each in its slider's range (top_k and top_n whole numbers)."""
    if not isinstance(v, dict):
        raise damaged("`sliders` must be an object")
    out = dict(DEFAULT_SLIDERS)
    for key, (lo, hi, whole) in SLIDERS.items():
        x = v.get(key, out[key])
        ok = isinstance(x, int) if whole else isinstance(x, (int, float)) and math.isfinite(x)
        if isinstance(x, bool) or not ok:
            raise damaged(f"`sliders.{key}` must be a {'whole ' if whole else ''}number")
        if not lo <= x <= hi:
            raise damaged(f"`sliders.{key}` (={x}) is outside the slider's range {lo} to {hi}")
        out[key] = x
    return out


def _tools(d: dict, tab: str, base: str) -> dict:
    """The fields of the tabs beside the result (all checked, whichever the tab: a link is one whole)."""
    out: dict[str, Any] = {
        "compare_mode": _choice(d, "compare_mode", COMPARE_MODES, "models"),
        "model_b": _text(d, "model_b", 200),
        "prompt_a": _text(d, "prompt_a"),
        "prompt_b": _text(d, "prompt_b"),
        "colour": _choice(d, "colour", COLOURS, "delta"),
        "sliders": _sliders(d.get("sliders", {})),
        "query": _text(d, "query", MAX_QUERY_CHARS),
        "word_metric": _choice(d, "word_metric", tuple(WORD_METRICS), "probability"),
        "word": _int(d, "word", 0, MAX_POSITION, 0),
        "lens_text": _text(d, "lens_text"),
        "lens_metric": _choice(d, "lens_metric", tuple(LENS_METRICS), "rank"),
        "layer": _int(d, "layer", 0, MAX_LAYER, 0),
        "lens_pos": _int(d, "lens_pos", 0, MAX_POSITION, 0),
        "why_contrast": _text(d, "why_contrast", MAX_TOKEN_CHARS),
        **{k: _choice(d, k, options, options[0]) for k, options in WHY_CHOICES.items()},
        **{k: _int(d, k, lo, hi, default) for k, (lo, hi, default) in WHY_NUMBERS.items()},
    }
    if not base and (tab in ON_RESULT or (tab == "lens" and not out["lens_text"].strip())):
        raise damaged(f"a {tab} link must carry the result it works on (`base`)")
    return out


def _checked(d: object) -> ViewState:
    if not isinstance(d, dict):
        raise damaged("its content is not an object")
    tab = _choice(d, "tab", TABS + TOOLS, "score")
    base = tab if tab in TABS else "" if tab == "compare" else _choice(d, "base", ("", *TABS), "")
    metric = d.get("metric", DEFAULT_METRIC)
    if not isinstance(metric, str) or metric not in METRICS:
        raise damaged(f"`metric` must be one of {', '.join(METRICS)}, got {str(metric)[:40]!r}")
    state = ViewState(
        tab=tab,
        model=_text(d, "model", 200),
        text=_text(d, "text"),
        system=_text(d, "system"),
        messages=_messages(d.get("messages", [])),
        metric=metric,
        thresholds=_thresholds(d.get("thresholds", list(DEFAULT_THRESHOLDS))),
        k=_int(d, "k", 1, MAX_K, 10),
        sampler=_sampler(d.get("sampler", {})),
        score_prompt=_bool(d, "score_prompt", True),
        from_start=_bool(d, "from_start", False),
        start=_text(d, "start", 64) or "eos",
        selected=_int(d, "selected", 0, MAX_POSITION, 0),
        base=base,
        **_tools(d, tab, base),
    )
    if base == "chat" and (not state.messages or state.messages[-1][0] != "user"):
        raise damaged("a chat link must end with the user's message")
    return state
