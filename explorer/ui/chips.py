"""Clickable chips in a gr.HTML (compare, words; the branch tree's nodes): a click or Enter on `[data-pos]` fires the
component's click event."""

from __future__ import annotations

import gradio as gr


def click_js(key: str, selected: str = ".sel") -> str:
    """The `js_on_load` of a gr.HTML whose `[data-KEY]` elements are picked by a click, Enter or Space: the one
    picked gets the class `sel` (the last pick, found by `selected`, loses it) and the component's click event
    fires with {KEY: its number} (read back by `clicked`)."""
    return f"""
const pick = (t) => {{
  element.querySelectorAll('{selected}').forEach((x) => x.classList.remove('sel'));
  t.classList.add('sel');
  trigger('click', {{{key}: Number(t.dataset.{key})}});
}};
element.addEventListener('click', (e) => {{ const t = e.target.closest('[data-{key}]'); if (t) pick(t); }});
element.addEventListener('keydown', (e) => {{
  if (e.key !== 'Enter' && e.key !== ' ') return;
  const t = e.target.closest('[data-{key}]');
  if (t) {{ e.preventDefault(); pick(t); }}
}});
"""


CLICK_JS = click_js("pos")


def clicked(evt: gr.EventData) -> int:
    """The `data-pos` of the chip a click event came from (0 when the event carries none)."""
    data = getattr(evt, "_data", None) or {}
    try:
        return int(data.get("pos", 0))
    except (TypeError, ValueError):
        return 0
