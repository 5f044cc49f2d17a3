"""The Score view as one self-contained HTML string: a page to save (`page_html`) or a notebook output (`view_html`).

What it holds, all inline (no CDN, no request when opened, works from file://):
1. the page's own palette and CSS (explorer/render/heatmap.py's CSS, explorer/static/page.css, read once)
   with the colours Gradio's theme gives them, light, and the page's dark theme under prefers-color-scheme: dark;
2. the summary line, the legend, the heatmap chips (render.heatmap.heatmap_html) and the card's data blob
   (render.page_data: the `.lx-data` element the page's script reads);
3. the result's native JSON, full precision, in `<script type="application/json" id="logprob-data">`;
4. the page's heatmap script (explorer/static/heatmap.js, read once) run by a small host (VIEW_JS) that stands in
   for Gradio: `element` is this view's heatmap, `trigger('click')` fills this view's detail (every listed
   alternative of the clicked token, from the native JSON), and `document.getElementById('token-detail')` finds this
   view's own detail, so several views in one notebook stay apart.
The standalone page adds a Content-Security-Policy that allows nothing but its inline style and script.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from dataclasses import replace
from functools import cache

import numpy as np

from explorer.errors import ExplorerError
from explorer.export import dumps
from explorer.export.native import export as native_export
from explorer.render.heatmap import CSS as PALETTE_CSS
from explorer.render.heatmap import DEFAULT_METRIC, METRICS, heatmap_html, legend_html
from explorer.render.page_data import data_html, page_data
from explorer.results.scores import TokenScores
from explorer.static import read

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
# what Gradio's theme gives the page's CSS (explorer/ui/theme.py: Default, slate), light and dark, for a view outside
# Gradio; the card lives on <body>, so it gets them too (tests/test_browser_score_file.py holds these to the theme)
HOST_COLOURS = {
    "light": {"--background-fill-primary": "#ffffff", "--background-fill-secondary": "#f8fafc",
              "--border-color-primary": "#e2e8f0", "--body-text-color": "#1e293b",
              "--body-text-color-subdued": "#475569", "--block-background-fill": "#ffffff"},
    "dark": {"--background-fill-primary": "#0a0f1e", "--background-fill-secondary": "#0f172a",
             "--border-color-primary": "#334155", "--body-text-color": "#f1f5f9",
             "--body-text-color-subdued": "#cbd5e1", "--block-background-fill": "#1e293b"},
}  # fmt: skip
HOST_CSS = """
.lx-view, #lx-card { font-family: ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.lx-view { font-size: 14px; line-height: 1.5; color: var(--body-text-color); background: var(--background-fill-primary);
  padding: 8px; color-scheme: light; }
.lx-view .lx-summary { margin: 0 0 6px; }
.lx-view .lx-cols { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.lx-view .lx-cols > #heatmap { flex: 3 1 360px; min-width: 0; }
.lx-view .lx-cols > .lx-side { flex: 2 1 260px; min-width: 0; }
.lx-view #heatmap .lx { max-height: 70vh; }
.lx-view .lx-detail:empty::before { content: "Click a token for every listed alternative.";
  color: var(--body-text-color-subdued); }
"""
DETAIL_JS = r"""
function lxHex(h) {  // bytes (hex) as text, a byte that is not UTF-8 as \xNN (Python's backslashreplace, as the page)
  const b = (h.match(/../g) || []).map((x) => parseInt(x, 16)), dec = new TextDecoder('utf-8', { fatal: true });
  let out = '', i = 0;
  while (i < b.length) {
    const n = b[i] < 0x80 ? 1 : b[i] >= 0xf8 ? 0 : b[i] >= 0xf0 ? 4 : b[i] >= 0xe0 ? 3 : b[i] >= 0xc2 ? 2 : 0;
    try {
      if (!n || i + n > b.length) throw new Error('not UTF-8');
      out += dec.decode(new Uint8Array(b.slice(i, i + n))); i += n;
    } catch (e) { out += '\\x' + b[i].toString(16).padStart(2, '0'); i += 1; }
  }
  return out;
}
const lxShow = (t) => t.replace(/ /g, '·').replace(/\n/g, '↵').replace(/\t/g, '→').replace(/\r/g, '␍');  // visible()
function lxPct(p) {  // plain words, never e-notation (as the card)
  if (!(p > 0)) return '0%';
  const x = 100 * p;
  if (x < 1e-4) return '< 0.0001%';
  if (x < 1e-3) return x.toFixed(6).replace(/0+$/, '') + '%';
  return (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : String(Number(x.toPrecision(2)))) + '%';
}
function lxDetail(pos) {  // the clicked token: its numbers and every listed alternative, from the native JSON
  const d = LX_SCORES, box = document.getElementById('token-detail');
  if (!d || !box) return;
  const mk = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  const td = mk('div', 'td'); td.dataset.pos = String(pos);
  const title = mk('h3', 'td-title');
  title.append(mk('code', 'tok', lxShow(d.token_text[pos]) || ' '), mk('span', '', 'position ' + pos + ' · id ' + d.token_ids[pos]));
  td.append(title);
  const lp = d.logprobs[pos];
  if (lp === null) { td.append(mk('p', 'td-note', 'Not scored: nothing before it to predict it from.')); box.replaceChildren(td); return; }
  const nums = mk('dl', 'td-nums');
  [['probability', lxPct(Math.exp(lp))], ['logprob', lp.toFixed(4)], ['rank', d.ranks[pos].toLocaleString('en')],
   ['entropy', d.entropy[pos] === null ? '—' : d.entropy[pos].toFixed(3) + ' nats']].forEach(([k, v]) => {
    const c = mk('div'); c.append(mk('dt', '', k), mk('dd', '', v)); nums.append(c);
  });
  td.append(nums);
  const ids = d.top_ids[pos] || [], lps = d.top_logprobs[pos] || [];
  const t = mk('table', 'alts'), body = mk('tbody');
  t.append(mk('caption', '', ids.filter((i) => i >= 0).length ? 'Listed alternatives (' + d.mode + ')' : 'No alternatives were asked (k = 0)'));
  const head = mk('tr'); ['rank', 'token', 'probability', 'logprob'].forEach((h) => head.append(mk('th', '', h)));
  const thead = mk('thead'); thead.append(head); t.append(thead, body);
  ids.forEach((id, j) => {
    if (id < 0 || lps[j] === null || lps[j] <= -9999) return;
    const p = Math.exp(lps[j]), tr = mk('tr', id === d.token_ids[pos] ? 'act' : '');
    const pb = mk('td', 'pb'), bar = mk('span', 'bar'); bar.style.width = (100 * p).toFixed(1) + '%';
    pb.append(bar, mk('span', 'pv', lxPct(p)));
    const tok = mk('td'); tok.append(mk('code', 'tok', lxShow(lxHex(d.pieces[String(id)] || '')) || ' '));
    tr.append(mk('td', '', String(j + 1)), tok, pb, mk('td', '', lps[j].toFixed(4)));
    body.append(tr);
  });
  td.append(t);
  box.replaceChildren(td);
}
"""
# The page's heatmap script and the detail run on one view, inside a host's function that has defined `view` (the
# view's root) and `LX_SCORES` (its native JSON, or null) first: Gradio's arguments stood in for (`element`: the view's
# heatmap; `trigger('click')`: fill the view's detail; `watch`: keep what the script reruns when the heatmap changes,
# in `hooks.watchers`) and a document whose 'token-detail' is the view's own, so several views on one page stay apart.
# Both hosts use it: HOST_JS here (a saved page, a notebook output) and the live page's (explorer/notebook/live.py).
VIEW_JS = """\
  const detail = view.querySelector('.lx-detail'), hooks = { watchers: [] };  // the detail's functions, once defined
  const scoped = new Proxy(window.document, { get(t, p) {  // this view's detail under the page's id; the rest is the document
    if (p === 'getElementById') return (id) => (id === 'token-detail' ? detail : t.getElementById(id));
    const v = Reflect.get(t, p);
    return typeof v === 'function' ? v.bind(t) : v;
  } });
  (function (element, props, trigger, watch, document) {
HEATMAP_JS
DETAIL_JS
    Object.assign(hooks, { detail: lxDetail, hexText: lxHex, show: lxShow });
  })(view.querySelector('#heatmap'), {}, (name, data) => { if (name === 'click' && hooks.detail) hooks.detail(data.pos); },
     (name, fn) => { hooks.watchers.push(fn); }, scoped);"""
HOST_JS = """
(function () {
  const here = document.currentScript;
  const view = (here && here.closest('.lx-view')) || [...document.querySelectorAll('.lx-view')].pop();
  if (!view || view.dataset.lxReady) return;
  view.dataset.lxReady = '1';
  let LX_SCORES = null;
  try { LX_SCORES = JSON.parse(view.querySelector('script#logprob-data').textContent); } catch (e) { LX_SCORES = null; }
VIEW_JS
})();
"""


def hosted(host: str) -> str:
    """`host`, a script around one view, with VIEW_JS in it: the page's heatmap script and the detail, run there."""
    return host.replace("VIEW_JS", VIEW_JS).replace("HEATMAP_JS", read("heatmap.js")).replace("DETAIL_JS", DETAIL_JS)


def _declare(colours: dict[str, str]) -> str:
    return " ".join(f"{name}: {value};" for name, value in colours.items())


def dark_rules(css: str) -> str:
    """The rules of `css` for Gradio's dark theme (`.dark` and `.dark X`: a class Gradio sets on the page) scoped to
    this view instead (`.lx-view X`; `.dark` itself to the view and the card), to sit under prefers-color-scheme."""
    out = []
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S)):
        parts = [p.strip() for p in selector.split(",")]
        if all(p == ".dark" or p.startswith(".dark ") for p in parts):
            scoped = ", ".join(".lx-view, #lx-card" if p == ".dark" else ".lx-view" + p[len(".dark") :] for p in parts)
            out.append(f"{scoped} {{{body}}}")
    return "\n".join(out)


SCOPE = ".lx-view"  # every view's root element (a notebook output, a saved page's body): its CSS applies under it only
CARD = "#lx-card"  # the hover card the page's script puts on <body>: its rules keep their own id


def _scoped(selector: str, scope: str) -> list[str]:
    """`selector` under `scope`: `:root`, `html` and `body` become the scope (and the card, which needs the same
    variables), a rule already under the scope or the card stays, a `.dark` rule goes (dark_rules places it)."""
    p = selector.strip()
    if p in (":root", "html", "body"):
        return [scope, CARD]
    if p == ".dark" or p.startswith(".dark ") or not p:
        return []
    if p == scope or p.startswith((scope + " ", scope + ".", scope + ":", scope + ">", CARD)):
        return [p]
    return [f"{scope} {p}"]


def scope_css(css: str, scope: str = SCOPE) -> str:
    """`css` with every rule under `scope`, so that a view in a notebook touches nothing outside itself: no `:root`
    variables, no global `.c0` (nbconvert's Pygments classes) or `.dark` (notebook themes). @media and @supports
    blocks are scoped inside; other at-rules are kept as they are."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out, i = [], 0
    while (brace := css.find("{", i)) >= 0:
        head = css[i:brace].strip()
        depth, j = 1, brace + 1
        while depth and j < len(css):
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        body = css[brace + 1 : j - 1]
        if head.startswith(("@media", "@supports")):
            out.append(f"{head} {{{scope_css(body, scope)}}}")
        elif head.startswith("@"):
            out.append(f"{head} {{{body}}}")
        else:
            parts = [q for sel in head.split(",") for q in _scoped(sel, scope)]
            if parts:
                out.append(f"{', '.join(parts)} {{{body}}}")
        i = j
    return "\n".join(out)


@cache
def view_css(scoped: bool = True) -> str:
    """The view's CSS: the page's palette and CSS, Gradio's colours (light), the host's layout; the page's dark theme
    under prefers-color-scheme: dark. `scoped` (a notebook output): every rule of the page's under `.lx-view`
    (scope_css); else (a saved page, the view its whole document) the page's CSS as it is."""
    page = PALETTE_CSS + read("page.css")
    light = f".lx-view, #lx-card {{ {_declare(HOST_COLOURS['light'])} }}"
    dark = f".lx-view, #lx-card {{ {_declare(HOST_COLOURS['dark'])} }}\n.lx-view {{ color-scheme: dark; }}\n"
    own = scope_css(page) + "\n" if scoped else page
    return f"{own}{light}{HOST_CSS}@media (prefers-color-scheme: dark) {{\n{dark}{dark_rules(page)}\n}}\n"


def page_css() -> str:
    """A whole page's CSS around its one view: no margin, the view's background to the edges, light and dark."""
    bg = {scheme: colours["--background-fill-primary"] for scheme, colours in HOST_COLOURS.items()}
    return (
        f"html, body {{ margin: 0; background: {bg['light']}; }} body > .lx-view {{ min-height: 100vh; "
        f"box-sizing: border-box; }} @media (prefers-color-scheme: dark) {{ html, body {{ background: {bg['dark']}; }} }}"
    )


def json_script(data: dict, element_id: str) -> str:
    """`data` as strict JSON in a <script type="application/json">, `<`, `>` and `&` escaped so that no text in it
    can close the element."""
    text = dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def check_metric(metric: str) -> str:
    """`metric` when the heatmap can colour by it, else an ExplorerError naming the ones it can."""
    if metric not in METRICS:
        raise ExplorerError(f"Unknown metric {metric!r}: use one of {', '.join(METRICS)}.", param="metric")
    return metric


def summary_text(r: TokenScores) -> str:
    """One line on the result: model, tokens, total and mean logprob (nats), perplexity."""
    scored = int(r.scored.sum())
    if not scored:
        return f"{r.model} · {r.n} tokens, none scored (a text's first token has no context)"
    return (
        f"{r.model} · {r.n:,} tokens ({scored:,} scored) · total logprob {r.total_logprob:.4f} · "
        f"mean {r.mean_logprob:.4f} nats/token · perplexity {r.perplexity:.2f}"
    )


def view_html(r: TokenScores, metric: str = DEFAULT_METRIC, scoped: bool = True) -> str:
    """The interactive view of `r` as one HTML fragment (a notebook output): its CSS (`scoped` under the view: see
    view_css), data and script inline."""
    check_metric(metric)
    script = hosted(HOST_JS)
    r, cut = viewed(r)
    return (
        f'<div class="lx-view" data-view="{uuid.uuid4().hex[:12]}">'
        f"<style>{view_css(scoped)}</style>"
        f'<p class="lx-summary">{html.escape(summary_text(r) + cut)}</p>{legend_html(metric)}'
        '<div class="lx-cols"><div id="heatmap"><div class="lx-span" hidden></div>'
        f"{heatmap_html(r, metric)}{data_html(page_data(r))}</div>"
        '<div class="lx-side"><div id="token-detail" class="lx-detail"></div></div></div>'
        f"{json_script(native_export(r), 'logprob-data')}"
        f"<script>{script}</script></div>"
    )


VIEW_K = 20  # alternatives a view holds per position: a full-vocabulary result (k = -1) is cut to these


def viewed(r: TokenScores) -> tuple[TokenScores, str]:
    """`r` as a view holds it, and a sentence saying what was left out: a result with the whole vocabulary at each
    position (k = -1: 0.3 MB of HTML a token on the default model) keeps its top VIEW_K there (the result itself,
    its `to_json()` and `full_logprobs` keep them all)."""
    if r.full_logprobs is None and r.top_ids.shape[1] <= VIEW_K:
        return r, ""
    top_ids = np.full((r.n, VIEW_K), -1, np.int64)
    top_lps = np.full((r.n, VIEW_K), -np.inf, np.float32)
    for j in range(r.n):
        pairs = [(i, lp) for i, lp in r.top(j, VIEW_K) if lp != -np.inf]  # [] where unscored
        top_ids[j, : len(pairs)] = [i for i, _ in pairs]
        top_lps[j, : len(pairs)] = [lp for _, lp in pairs]
    used = set(r.token_ids.tolist()) | set(top_ids[top_ids >= 0].tolist())
    cut = replace(
        r,
        top_ids=top_ids,
        top_logprobs=top_lps,
        top_ranks=None,
        full_logprobs=None,
        pieces={i: b for i, b in r.pieces.items() if i in used},
    )
    return cut, f" This view lists each position's top {VIEW_K} of the {r.vocab_size:,} entries (the result holds all)."


def page_html(r: TokenScores, metric: str = DEFAULT_METRIC) -> str:
    """`view_html` as a whole HTML document that opens from a file with no network request (a strict CSP)."""
    title = html.escape(f"{r.model}: {r.n} tokens (logprob-explorer)")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">'
        f"<title>{title}</title><style>{page_css()}</style></head><body>{view_html(r, metric, scoped=False)}</body></html>\n"
    )


DATA_ELEMENT = '<script type="application/json" id="logprob-data">'  # json_script(..., "logprob-data")


def data_of(page: str) -> dict:
    """The native JSON held by a page or view made here (its `logprob-data` element), parsed."""
    start = page.index(DATA_ELEMENT)
    body = page[page.index(">", start) + 1 : page.index("</script>", start)]
    return json.loads(body)
