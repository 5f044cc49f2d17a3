"""A view as a link: the inputs and settings that make a result, packed into one URL-safe string and read back.

A `ViewState` is `{version, tab, base, tool, source}`: `base` (a `Base`) is what every view of the inspector's result
shares (its model, the colour settings, the selected token); `tool` is the shown tab's own part and `source` the part
of the tab that made the result (Score, Generate or Chat: its inputs and settings). Each part is a `TabLink`, one
small class in its tab's own module (explorer/ui/tabs/<tab>.py) holding its fields, their checks, the ranges its
sliders are built from, and how its tab reads, sets and reruns them (a `ResultLink` for the three tabs that make a
result). Defining such a class registers it in `LINKS`: a new tab's link is that one class.

On the wire a link is one flat JSON object (the base's fields and the result's inputs in WIRE_ORDER, `base`, then the
tool's fields; fields left at their defaults omitted), raw-deflated and written as URL-safe base64 without padding after a version prefix (`2.`; links
of version `1.` still open, and every `2.` link made before the per-tab link states opens to the same state).
`decode(s)` reads anything a visitor can paste: it is strict and bounded (the encoded length, the decompressed size,
every type and range, every registered tab's fields whichever the tab: a link is one whole; the sampler's rules are
SamplerSettings' own) and everything wrong with it is one ExplorerError saying what. A link names a model at most:
the page resolves that name through `Models.resolve`, like any name a visitor types.

No gradio, no torch: the page, the tests and a script can all build and read links (a tool tab's link once its
module is imported; the page imports them all).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from itertools import pairwise
from typing import Any, ClassVar

from explorer.errors import ExplorerError
from explorer.results.colour_by import DEFAULT_METRIC, DEFAULT_THRESHOLDS, METRIC_NAMES
from explorer.rules.sampler import MAX_K

VERSION = "2"
VERSIONS = ("1", "2")  # a version 1 link (Score, Generate, Chat only) reads as the same view
QUERY_KEY = "view"  # the page reads ?view=... and no other query key
MAX_LINK_CHARS = 8000  # longer URLs are cut by browsers, chat apps and proxies
MAX_JSON_BYTES = 256 * 1024  # the decompressed JSON (a link's deflate cannot expand past this: no zip bombs)
MAX_TEXT_CHARS = 100_000
MAX_MESSAGES = 64
MAX_POSITION = 1_000_000
MAX_TOKEN_CHARS = 200
TABS = ("score", "generate", "chat")  # the tabs that make the inspector's result (their link: a `ResultLink`)
ROLES = ("user", "assistant")
# the order links have always written their first keys in (the base's, then the result's inputs): a view's link
# keeps its bytes whichever class now holds a field; the other keys follow in their classes' order
WIRE_ORDER = ("tab", "model", "text", "system", "messages", "metric", "thresholds", "k", "sampler", "score_prompt",
              "from_start", "start", "selected", "base")  # fmt: skip


@dataclass(frozen=True)
class Base:
    """What every view of a result shares: the tab that made it (one of TABS; '' = none), its model, the colour
    settings and the selected token. The inputs that made it are that tab's `ResultLink`. (Compare, which works on
    no result, keeps its model A and its compared token here.)"""

    tab: str = ""
    model: str = ""  # the model's public name ('' = the page's default)
    metric: str = DEFAULT_METRIC
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    k: int = 10
    selected: int = 0  # the inspector's token

    @property
    def thresholds_text(self) -> str:
        """The thresholds as the page's box writes them."""
        return ", ".join(map(str, self.thresholds))

    @property
    def look(self) -> dict:
        """The colour settings by the names a run takes them (the page's RunOptions, Inspector.look)."""
        return {"metric": self.metric, "thresholds_text": self.thresholds_text, "k": self.k}

    def to_dict(self) -> dict:
        """The link's base fields (flat), `base` naming the tab, after them."""
        d = asdict(self)
        d["thresholds"] = list(self.thresholds)
        return {**{k: v for k, v in d.items() if k != "tab"}, "base": self.tab}

    @classmethod
    def read(cls, d: dict, tab: str) -> Base:
        """The base fields of a link's object `d`, checked (made by `tab`)."""
        metric = d.get("metric", DEFAULT_METRIC)
        if not isinstance(metric, str) or metric not in METRIC_NAMES:
            raise damaged(f"`metric` must be one of {', '.join(METRIC_NAMES)}, got {str(metric)[:40]!r}")
        return cls(
            tab=tab,
            model=text(d, "model", 200),
            metric=metric,
            thresholds=_thresholds(d.get("thresholds", list(DEFAULT_THRESHOLDS))),
            k=whole(d, "k", 1, MAX_K, 10),
            selected=whole(d, "selected", 0, MAX_POSITION, 0),
        )


@dataclass(frozen=True)
class Rerun:
    """What a tab's rerun gets: the link's model and the other models it names (`TabLink.models`), both resolved,
    the inspector's result it works on ([] when none) and the link's token within that result."""

    name: str
    others: tuple[str, ...]
    result: list
    selected: int


LINKS: dict[str, type[TabLink]] = {}  # tab id -> its link state class (filled by defining the class)


@dataclass(frozen=True)
class TabLink:
    """One tab's own part of a link. A subclass is a frozen dataclass in its tab's module: its fields (their names are
    the link's keys, their defaults the defaults) with `tab` (the tab's id), `read` (the checks) and the page side:
    `inputs` / `to_link` (what *Copy link* reads), `apply` (a link's values into the tab's controls), `rerun` (the
    tab's own handlers on them) and `outputs` (every control those set). Defining it registers it in LINKS."""

    tab: ClassVar[str] = ""
    on_result: ClassVar[bool] = True  # it works on the inspector's result (its link carries that result's base)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("tab"):
            LINKS[cls.tab] = cls

    @classmethod
    def read(cls, d: dict) -> TabLink:
        """This tab's fields of a link's object `d`, checked (a missing one takes its default)."""
        return cls()

    def to_dict(self) -> dict:
        return asdict(self)

    def needs_result(self) -> bool:
        """Whether this link must carry the result it works on (a `base`)."""
        return self.on_result

    def models(self) -> tuple[str, ...]:
        """The model names the link runs besides its base's (resolved by the page before anything runs)."""
        return ()

    # ---- the page side (explorer/ui/: `tab` is the tab's object, `values` its controls' values by component) ----
    @classmethod
    def inputs(cls, tab: Any) -> list:
        """The tab's controls *Copy link* reads."""
        return []

    @classmethod
    def to_link(cls, tab: Any, values: Mapping, base: Base, model: str) -> tuple[Base, TabLink]:
        """The link's base and this tab's part from its controls' `values` (`base`: the inspector's result's, or
        `Base(model=model)` when there is none; `model`: the session's). Raises ExplorerError when there is nothing
        to share."""
        return base, cls()

    def apply(self, tab: Any, v: ViewState) -> dict:
        """The tab's controls set to this link's values (before the rerun)."""
        return {}

    def rerun(self, tab: Any, v: ViewState, run: Rerun) -> Iterator[dict]:
        """The tab's own handlers on this link's values, then its selection (a gr.Error: the run's message)."""
        return iter(())

    @classmethod
    def outputs(cls, tab: Any) -> list:
        """Every control `apply` and `rerun` set."""
        return []

    def check(self) -> None:
        """The rules this part keeps when it is used (the tab shown, or the result's maker): ExplorerError if not."""


@dataclass(frozen=True)
class ResultLink(TabLink):
    """The part of a link made by a tab that makes the inspector's result (Score, Generate, Chat: one of TABS): the
    inputs and settings that made it. Besides TabLink's page side: `of_result` (the part of a result shown, from
    the tab's controls and the result itself), `empty` and `run` (the tab's own run, filling the inspector)."""

    @classmethod
    def of_result(cls, tab: Any, values: Mapping, r: Any) -> ResultLink:
        """This tab's part of the link of result `r` (a TokenScores), its inputs read from `values` by component."""
        return cls()

    def empty(self) -> bool:
        """Whether it holds no input (a result opened from a file, with its inputs not on the page)."""
        return False

    def run(self, tab: Any, name: str, base: Base) -> Iterator[dict]:
        """The tab's run of these inputs with model `name` at `base`'s look: the inspector's outputs, streamed."""
        return iter(())


@dataclass(frozen=True)
class ViewState:
    """Everything that makes a view: the tab shown, the result's `base`, the shown tab's own part `tool` and the
    part of the tab that made the result, `source` (the same object when that tab is shown; None: no result), and
    the link format's version it was read from."""

    version: str = field(default=VERSION, compare=False)
    tab: str = "score"
    base: Base = field(default_factory=Base)
    tool: TabLink | None = None
    source: ResultLink | None = None

    def __post_init__(self):
        if self.tab in TABS:  # a tab that makes the result is its own base, and its part the result's source
            if self.tool is not None and self.source is not None and self.tool is not self.source:
                raise ValueError(f"a {self.tab} view's tool and source are one part: give one")
            object.__setattr__(self, "tool", self.tool or self.source)
        if self.tool is None and self.tab in LINKS:  # a tab's part left out: its defaults
            object.__setattr__(self, "tool", LINKS[self.tab]())
        if self.tab in TABS:
            object.__setattr__(self, "base", replace(self.base, tab=self.tab))
            object.__setattr__(self, "source", self.tool)
        elif self.tool is not None and not self.tool.on_result:
            object.__setattr__(self, "base", replace(self.base, tab=""))
            object.__setattr__(self, "source", None)
        elif self.source is None and self.base.tab in LINKS:
            object.__setattr__(self, "source", LINKS[self.base.tab]())

    def parts(self) -> list[TabLink]:
        """The result's maker's part, then the shown tab's (once each)."""
        parts = [self.source] if self.source is not None else []
        return parts + ([self.tool] if self.tool is not None and self.tool is not self.source else [])

    def to_dict(self) -> dict:
        """The flat object a link carries: tab, the base's fields and the result's inputs (in WIRE_ORDER), then the
        tab's own."""
        d = {"tab": self.tab, **self.base.to_dict()}
        for part in self.parts():
            d.update(part.to_dict())
        return wire_ordered(d)

    def compact(self) -> dict:
        """`to_dict` less the fields left at their defaults (tab and base kept): what a link carries."""
        default = {"tab": self.tab, **Base().to_dict()}
        for part in self.parts():
            default.update(type(part)().to_dict())
        return {k: v for k, v in self.to_dict().items() if k in ("tab", "base") or v != default[k]}

    @classmethod
    def from_dict(cls, d: object) -> ViewState:
        """Checked field by field; unknown keys are ignored, a missing one takes its default."""
        return _checked(d)


def wire_ordered(d: dict) -> dict:
    """`d` with WIRE_ORDER's keys first, in that order."""
    first = {k: d[k] for k in WIRE_ORDER if k in d}
    return {**first, **{k: v for k, v in d.items() if k not in first}}


def link_fields() -> list[str]:
    """Every key a link may carry (the base's, then each registered tab's)."""
    return list(dict.fromkeys(["tab", *Base().to_dict(), *(f.name for cls in LINKS.values() for f in fields(cls))]))


def damaged(why: str) -> ExplorerError:
    return ExplorerError(f"This link is damaged or cut short: {why}. The page opens as usual.")


def too_long(n: int) -> ExplorerError:
    return ExplorerError(
        f"This view is too long for a link ({n:,} characters; a link carries at most {MAX_LINK_CHARS:,}): "
        "use *Download session* and share the file instead (it opens with *Open a session*)."
    )


def encode(state: ViewState) -> str:
    """`2.` + URL-safe base64 (no padding) of the raw-deflated compact JSON of `state`."""
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
    return replace(_checked(d), version=version)


# ---- checks (each tab's `read` uses them) ------------------------------------------------------
def count(x: object, default: int = 0) -> int:
    """A control's value as a whole number >= 0 (a page control's value read for a link; `default` when unreadable)."""
    try:
        return max(int(x), 0)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default


def text(d: dict, key: str, cap: int = MAX_TEXT_CHARS) -> str:
    v = d.get(key, "")
    if not isinstance(v, str):
        raise damaged(f"`{key}` must be text, got {type(v).__name__}")
    if len(v) > cap:
        raise damaged(f"`{key}` is longer than {cap:,} characters")
    return v


def whole(d: dict, key: str, lo: int, hi: int, default: int) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise damaged(f"`{key}` must be a whole number, got {str(v)[:40]!r}")
    if not lo <= v <= hi:
        raise damaged(f"`{key}` (={v}) must be from {lo} to {hi}")
    return v


def flag(d: dict, key: str, default: bool) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise damaged(f"`{key}` must be true or false")
    return v


def choice(d: dict, key: str, options: tuple[str, ...], default: str) -> str:
    v = d.get(key, default)
    if not isinstance(v, str) or v not in options:
        raise damaged(f"`{key}` must be one of {', '.join(options)}, got {str(v)[:40]!r}")
    return v


def slider(name: str, x: object, lo: float, hi: float, whole_number: bool) -> int | float:
    """A slider's value `x` (named `name` in messages): a (whole) finite number within the slider's range."""
    ok = isinstance(x, int) if whole_number else isinstance(x, (int, float)) and math.isfinite(x)
    if isinstance(x, bool) or not ok:
        raise damaged(f"`{name}` must be a {'whole ' if whole_number else ''}number")
    assert isinstance(x, (int, float))
    if not lo <= x <= hi:
        raise damaged(f"`{name}` (={x}) is outside the slider's range {lo} to {hi}")
    return x


def _thresholds(v: object) -> tuple[int, ...]:
    ok = isinstance(v, list) and 1 <= len(v) <= 4
    t = tuple(v) if ok and isinstance(v, list) else ()
    ok = ok and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 10**9 for x in t)
    if not ok or any(b <= a for a, b in pairwise(t)):
        raise damaged("`thresholds` must be 1 to 4 increasing whole numbers ≥ 1")
    return t


def messages(v: object) -> tuple[tuple[str, str], ...]:
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


def _checked(d: object) -> ViewState:
    """1. the tab; 2. the base (which tab made it, then its fields); 3. every registered tab's fields (a link is
    one whole), the shown tab's and the result's maker's kept; 4. the rules between them."""
    if not isinstance(d, dict):
        raise damaged("its content is not an object")
    if missing := [t for t in TABS if t not in LINKS]:  # their checks are theirs: never read a link without them
        raise RuntimeError(f"the link classes of {', '.join(missing)} are not defined: import explorer.ui.layout")
    tab = choice(d, "tab", tuple(LINKS), "score")
    made_by = tab if tab in TABS else _choice_base(d) if LINKS[tab].on_result else ""
    base = Base.read(d, made_by)
    parts = {name: cls.read(d) for name, cls in LINKS.items()}
    tool, source = parts.get(tab), parts.get(made_by)
    if not made_by and tool is not None and tool.needs_result():
        raise damaged(f"a {tab} link must carry the result it works on (`base`)")
    for part in (source, tool):
        if part is not None:
            part.check()
    return ViewState(tab=tab, base=base, tool=tool, source=source if isinstance(source, ResultLink) else None)


def _choice_base(d: dict) -> str:
    return choice(d, "base", ("", *TABS), "")
