"""Links and session files: hand-made link states, a raw `1.` link packer, a page whose registry records every load
it is asked for (`built`), a link restored through the page's own handler, and the JSON values fuzzing draws from."""

from __future__ import annotations

import base64
import json
import zlib
from dataclasses import fields, replace
from dataclasses import fields as dataclass_fields
from types import SimpleNamespace

import pytest
from hypothesis import strategies as st

import explorer.ui.layout  # noqa: F401 - every tab's link state registered (the page imports them all)
from explorer.errors import ExplorerError
from explorer.ui.links import LINKS, TABS, Base, ViewState
from explorer.ui.sampler import Sampler

BASE_FIELDS = {f.name for f in fields(Base)}

SCRIPT = "<script>alert(1)</script>${alert(2)}`x`"
GEN = {
    "max_tokens": 20,
    "temperature": 0.9,
    "top_p": 0.95,
    "top_k": 40,
    "seed": 7,
    "stop": ["\n\n"],
    "mode": "processed",
}


def pack(obj, raw: bytes | None = None) -> str:
    data = raw if raw is not None else json.dumps(obj).encode()
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    return "1." + base64.urlsafe_b64encode(z.compress(data) + z.flush()).rstrip(b"=").decode()


def mine(cls, values: dict) -> dict:
    """The `values` that are fields of link class `cls`: a field of another tab's inputs (which the flat link state
    once held for every tab) left out, a name no link has refused."""
    if unknown := set(values) - {f.name for c in LINKS.values() for f in dataclass_fields(c)}:
        raise TypeError(f"no link field {sorted(unknown)}")
    return {k: v for k, v in values.items() if k in {f.name for f in dataclass_fields(cls)}}


def view(shown: str = "score", tool=None, source=None, **fields) -> ViewState:
    """A ViewState of tab `shown` from fields by name: the base's (`tab`: the tab that made it; `shown` when that
    makes a result) and the result's inputs (its maker's link's), and the tab's own part, `tool`."""
    made_by = shown if shown in TABS else fields.get("tab", "")
    base = {k: v for k, v in fields.items() if k in BASE_FIELDS}
    own = {k: v for k, v in fields.items() if k not in BASE_FIELDS}
    if made_by and source is None:
        own = {k: tuple(map(tuple, v)) if k == "messages" else v for k, v in mine(LINKS[made_by], own).items()}
        if isinstance(own.get("sampler"), dict):
            own["sampler"] = Sampler.of(own["sampler"])
        source = LINKS[made_by](**own)
    elif own:  # a tab that works on no result (Compare: its text)
        tool = replace(tool, **own)
    if shown in TABS:
        return ViewState(tab=shown, base=Base(**base), tool=source)
    return ViewState(tab=shown, base=Base(**base), tool=tool, source=source)


STATES = {
    "score": view("score", model="tiny-gpt2", text="Bonjour 東京 👋\n" * 3, metric="rank", thresholds=(1, 5, 50), k=7,
                  from_start=True, start="<|endoftext|>", selected=4),
    "generate": view("generate", text="The capital of France is", sampler=GEN, score_prompt=False, selected=9),
    "chat": view("chat", system="Be terse.", messages=(("user", "Hi"), ("assistant", "Hello!"), ("user", "Why?")),
                 sampler={**GEN, "seed": 2**63 - 1, "stop": []}, metric="entropy", selected=12),
}  # fmt: skip


def with_base(s: ViewState, **fields) -> ViewState:
    """`s` with some of its base's fields, or its result's inputs, replaced (a field of another tab's inputs, which
    the flat link state once held for every tab, left out)."""
    base = {k: v for k, v in fields.items() if k in BASE_FIELDS}
    own = {k: v for k, v in fields.items() if k not in BASE_FIELDS}
    part = s.source if s.source is not None else s.tool
    own = mine(type(part), own) if part is not None else {}
    b = replace(s.base, **base)
    if s.source is not None:
        source = replace(s.source, **own)
        return ViewState(tab=s.tab, base=b, tool=source if s.tool is s.source else s.tool, source=source)
    return ViewState(tab=s.tab, base=b, tool=replace(s.tool, **own) if own else s.tool)


def page_values(p, base: list, **named) -> dict:
    """What the page gives *Copy link* / the session file: the base's inputs (`Share.inputs` order) by component,
    then `named` components' values (`current`: the tab shown, `model`: the session's model, else a component)."""
    out = dict(zip(p.share.inputs, base))
    if "current" in named:
        out[p.share.current] = named.pop("current")
    if "model" in named:
        out[p.share.picker.name] = named.pop("model")
    return {**out, **named.pop("components", {})}


@pytest.fixture(scope="module")
def built(gpt2):
    from explorer.serving.models import Models
    from explorer.ui.layout import page

    calls: list[str] = []

    def loader(spec):
        calls.append(spec.name)
        raise ExplorerError("not loading in this test")

    models = Models(["tiny-gpt2", "other-model"], allow_hub=False, loader=loader)
    models.add(gpt2)
    return page(models), models, calls


def restore(built, code) -> list[dict]:
    p = built[0]
    return list(p.share.restore(SimpleNamespace(query_params={"view": code, "__theme": "dark", "logs": "x"})))


def last(outs: list[dict], component):
    """The last value the restore gave `component`."""
    return [o[component] for o in outs if component in o][-1]


def shown_tab(p, outs: list[dict]) -> str:
    """The tab the restore shows: the top row's, or in a group (ui/tab_bar.py) the group's row's."""
    top = last(outs, p.share.bar.block).selected
    return last(outs, p.share.bar.rows[top]).selected if top in p.share.bar.rows else top


def note_of(p, outs) -> str:
    return "".join(o.get(p.share.note, "") for o in outs)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=12), kids, max_size=5),
    max_leaves=30,
)
