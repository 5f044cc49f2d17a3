"""A slider's numbers in one record, and its widget: the sampler's fields (ui/sampler.py) and the What-if tab's
sliders are built from it, and a link's value is checked against the same range."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

import gradio as gr

from explorer.rules.sampler import Knob, default, knobs


@dataclass(frozen=True)
class Range:
    """A slider over lo..hi in steps of `step`, starting at `default`; of whole numbers where all four are ints."""

    lo: float
    hi: float
    step: float
    default: float

    @classmethod
    def of(cls, knob: Knob) -> Range:
        """The slider a SamplerSettings field's knob describes (explorer/rules/sampler.py owns its numbers)."""
        return cls(knob.lo, knob.hi, knob.step, knob.default)

    @property
    def whole(self) -> bool:
        return all(isinstance(x, int) for x in (self.lo, self.hi, self.step, self.default))

    def number(self, x: Any) -> int | float:
        """A slider's value `x` as the number it stands for: whole where the range is (ValueError, TypeError: none)."""
        return int(x) if self.whole else float(x)

    def widget(self, label: str, most: float = math.inf, **kw: Any) -> gr.Slider:
        """The slider, its top at most `most` (a server's cap) and its value too."""
        return gr.Slider(self.lo, min(self.hi, most), value=min(self.default, most), step=self.step, label=label, **kw)


def at_model_temperature() -> Range:
    """The page's temperature slider starting at the model's own odds (Score's *What comes next?*, What-if)."""
    return Range.of(knobs()["temperature"].at(default("temperature")))


def ranged(r: Range) -> Any:
    """A dataclass field shown as the slider `r`: its default is the slider's, and a link's value must lie in it."""
    return field(default=r.default, metadata={"slider": r})


def sliders_of(record: type) -> dict[str, Range]:
    """Each `ranged` field of the dataclass `record`: its name -> its Range."""
    return {f.name: f.metadata["slider"] for f in fields(record) if "slider" in f.metadata}
