"""Links recorded from the flat ViewState (before each tab owned its link state, tests/data/links/recorded.json):
each still opens to the same state, field by field, and the code today writes the very same link for it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import explorer.ui.layout  # noqa: F401 - every tab's link state registered
from explorer.ui.links import LINKS, decode, encode, link_fields

RECORDED = json.loads((Path(__file__).parent / "data" / "links" / "recorded.json").read_text())


@pytest.mark.parametrize("name", list(RECORDED))
def test_a_recorded_link_opens_to_the_same_state(name):
    link, old = RECORDED[name]["link"], RECORDED[name]["state"]
    v = decode(link)
    new = v.to_dict()
    assert new == {k: old[k] for k in new}  # its tab's fields and the base's, as they were
    dropped = {k: old[k] for k in old if k not in new}  # other tabs' fields: at their defaults, as a link leaves them
    defaults = {k: x for cls in LINKS.values() for k, x in cls().to_dict().items()}
    assert dropped == {k: defaults[k] for k in dropped} and set(dropped) <= set(link_fields())
    assert decode(encode(v)) == v
    if link.startswith("2."):
        assert encode(v) == link  # the same state writes the same link


def test_the_recorded_links_cover_every_tab():
    assert {RECORDED[n]["state"]["tab"] for n in RECORDED} == {"score", "generate", "chat", *LINKS}
