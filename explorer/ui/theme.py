"""How the page looks: our theme (indigo, system fonts: nothing fetched from the internet), the page CSS and
the heatmap's script, read once from explorer/static/."""

from __future__ import annotations

from functools import cache

import gradio as gr

from explorer.render.heatmap import CSS as PALETTE_CSS
from explorer.static import read  # the page's static files, read once for the page and the HTML views

FONTS = ["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "Helvetica Neue", "Arial", "sans-serif"]
MONO = ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"]


@cache
def theme() -> gr.themes.Base:
    """Indigo and slate, system fonts, firm contrast on buttons."""
    return gr.themes.Default(
        primary_hue=gr.themes.colors.indigo,
        secondary_hue=gr.themes.colors.sky,
        neutral_hue=gr.themes.colors.slate,
        font=FONTS,
        font_mono=MONO,
    ).set(
        button_primary_background_fill="*primary_700",
        button_primary_background_fill_hover="*primary_800",
        button_primary_text_color="white",
        button_primary_background_fill_dark="*primary_400",
        button_primary_background_fill_hover_dark="*primary_300",
        button_primary_text_color_dark="*neutral_950",
        slider_color="*primary_600",
        checkbox_background_color_selected="*primary_600",
        block_title_text_weight="600",
        link_text_color="*primary_700",
        link_text_color_dark="*primary_300",
        # every text at least 4.5:1 against its background (WCAG AA), light and dark
        body_text_color_subdued="*neutral_600",
        body_text_color_subdued_dark="*neutral_300",
        block_info_text_color="*neutral_600",
        block_info_text_color_dark="*neutral_300",
        input_placeholder_color="*neutral_600",
        input_placeholder_color_dark="*neutral_300",
        button_cancel_background_fill="#b91c1c",
        button_cancel_background_fill_hover="#991b1b",
        button_cancel_text_color="white",
        button_cancel_background_fill_dark="#b91c1c",
        button_cancel_background_fill_hover_dark="#991b1b",
        button_cancel_text_color_dark="white",
    )


def launch_options() -> dict:
    """What gr.mount_gradio_app / launch need for this page: theme, CSS and a small page script."""
    return {"theme": theme(), "css": PALETTE_CSS + read("page.css"), "js": PAGE_JS}


# Gradio's empty plot/file placeholders carry an aria-label on a plain div (an ARIA error): give them a role. Each
# chart gets its text alternative: its titles and every series' numbers in words, read by a screen reader.
# The keyboard: a skip link first on the page (to the Score tab's text box), and each tab list one tab stop, its
# tabs reached with the arrow keys, Home and End (the WAI-ARIA tabs pattern).
PAGE_JS = """() => {
  TOUR
  CHART_ALT
  const roving = () => document.querySelectorAll('[role=tablist]').forEach((list) => {
    const tabs = [...list.querySelectorAll('[role=tab]')];
    if (!tabs.length) return;
    const on = tabs.find((t) => t.getAttribute('aria-selected') === 'true') || tabs[0];
    tabs.forEach((t) => t.setAttribute('tabindex', t === on ? '0' : '-1'));
    if (list.dataset.lxRoving) return;
    list.dataset.lxRoving = '1';
    list.addEventListener('keydown', (e) => {
      const all = [...list.querySelectorAll('[role=tab]')].filter((t) => t.offsetParent !== null);
      const i = all.indexOf(document.activeElement);
      if (i < 0) return;
      const j = {ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: all.length - 1}[e.key];
      if (j === undefined) return;
      e.preventDefault();
      const t = all[(j + all.length) % all.length];
      t.click(); t.focus();
    });
  });
  const fix = () => {
    document.querySelectorAll('div.empty[aria-label]:not([role])').forEach((d) => d.setAttribute('role', 'img'));
    document.querySelectorAll('.js-plotly-plot').forEach(describe);
    roving();
  };
  new MutationObserver(fix).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-selected'] });
  fix();
  if (!document.querySelector('.lx-skip-start')) {
    const a = document.createElement('a');
    a.href = '#score-text'; a.className = 'lx-skip lx-skip-start'; a.textContent = 'Skip to the text box';
    a.addEventListener('click', (e) => {
      e.preventDefault();
      const box = [...document.querySelectorAll('textarea')].find((t) => t.offsetParent !== null);
      if (box) box.focus();
    });
    document.body.prepend(a);
  }
}""".replace("TOUR", read("tour.js")).replace("CHART_ALT", read("chart_alt.js"))


HEATMAP_JS = read("heatmap.js")
JUMP_JS = """
element.addEventListener('click', (e) => {
  const b = e.target.closest('[data-jump]');
  if (!b) return;
  const c = document.querySelector('#heatmap [data-pos="' + Number(b.dataset.jump) + '"]');
  if (c) { c.click(); c.focus({preventScroll: true}); }
});
"""
PRESENT_JS = """() => {
  const on = document.body.classList.toggle('lx-present');
  const b = document.querySelector('#present-btn');
  if (b) b.textContent = on ? 'Exit presentation (Esc)' : 'Presentation mode';
  const top = document.querySelector(on ? '#results' : '.lx-main');
  if (top) requestAnimationFrame(() => window.scrollTo({ top: top.getBoundingClientRect().top + window.scrollY - 8, behavior: 'instant' }));
}"""
