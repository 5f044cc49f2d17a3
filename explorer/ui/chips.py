"""Clickable chips in a gr.HTML (compare, words): a click or Enter on `[data-pos]` fires the component's click event."""

from __future__ import annotations

import gradio as gr

CLICK_JS = """
const pick = (t) => {
  element.querySelectorAll('.sel').forEach((x) => x.classList.remove('sel'));
  t.classList.add('sel');
  trigger('click', {pos: Number(t.dataset.pos)});
};
element.addEventListener('click', (e) => { const t = e.target.closest('[data-pos]'); if (t) pick(t); });
element.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' && e.key !== ' ') return;
  const t = e.target.closest('[data-pos]');
  if (t) { e.preventDefault(); pick(t); }
});
"""


def clicked(evt: gr.EventData) -> int:
    """The `data-pos` of the chip a click event came from (0 when the event carries none)."""
    data = getattr(evt, "_data", None) or {}
    try:
        return int(data.get("pos", 0))
    except (TypeError, ValueError):
        return 0
