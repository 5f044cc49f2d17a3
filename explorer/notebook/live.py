"""The live page of a static site (`logprob-explorer site --live`): the model runs in the visitor's browser.

What `write_live` puts into a site's folder:
1. `live.html`: a text box, Score and Generate (temperature, top-k, top-p, seed, tokens), the status line, the same
   legend, heatmap, hover card and detail as the server's page: the page's own heatmap script
   (explorer/static/heatmap.js) and the fixed views' detail (page.DETAIL_JS), run on the view as the saved views run
   them (page.VIEW_JS), inside a small host (LIVE_HOST_JS) that turns each new result (native JSON,
   TokenScores.to_dict's keys) into the chips and the data blob heatmap.js reads, with the palette's edges from
   explorer/render/heatmap.py;
2. `live.js` (explorer/static/in_browser.js, written as the site's live.js: loading, scoring and generation through wllama) and `wllama/` (wllama
   2.4.0's ESM build and WebAssembly, kept in explorer/static/wllama/ by `make wllama`);
3. the model: a GGUF file copied beside the page (`model.gguf`), unless the author gives a URL (a Hugging Face
   file's resolve URL) for the browser to fetch.
The fixed views link to it (`live_link`: "try your own sentence", their text filled in) and the site's README front
matter sets the two headers that let the page run on several threads (`live_front_matter`).
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import urllib.parse
from dataclasses import dataclass
from importlib import resources

from explorer.errors import ExplorerError
from explorer.notebook.page import hosted, page_css, view_css
from explorer.render.heatmap import LOGPROB_EDGES, legend_html
from explorer.static import path, read

WLLAMA = "2.4.0"  # scripts/wllama.sh pins the same
CARD_K = 5  # alternatives kept per position (the card shows these; the detail lists them)
N_CTX = 2048  # the browser's KV cache positions: a longer text gets a message
PAGE = "live.html"
MODEL_FILE = "model.gguf"
ISOLATION_HEADERS = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}


@dataclass(frozen=True)
class LiveOptions:
    """What the live page runs: a GGUF copied beside it, or one fetched from `model_url`."""

    model_name: str
    model_file: str | None = None  # a local GGUF to copy beside the page
    model_url: str | None = None  # or where the browser fetches it (a Hugging Face file's resolve URL)
    server_url: str | None = None  # the server's page, linked where the browser cannot run the model


def check(o: LiveOptions) -> LiveOptions:
    """`o` when it names exactly one model source and a local file exists, else an ExplorerError saying what to give."""
    if (o.model_file is None) == (o.model_url is None):
        raise ExplorerError(
            "The live page needs one model: a GGUF file (--model) or its URL (--model-url).", param="model"
        )
    if o.model_file is not None and not os.path.isfile(o.model_file):
        raise ExplorerError(f"{o.model_file!r} is not a file: give a GGUF model file.", param="model")
    if o.model_file is not None:
        with open(o.model_file, "rb") as f:
            if f.read(4) != b"GGUF":
                raise ExplorerError(
                    f"{o.model_file!r} is not a GGUF file: the live page runs GGUF models.", param="model"
                )
    if o.model_url is not None and not o.model_url.startswith(("https://", "http://", "./", "/")):
        raise ExplorerError(f"--model-url {o.model_url!r}: give an http(s) URL of a .gguf file.", param="model_url")
    return o


LIVE_CSS = """
.live-form { display: grid; gap: 8px; margin: 0 0 10px; }
.live-form textarea { width: 100%; box-sizing: border-box; min-height: 5.5em; font: 15px/1.4 ui-monospace, monospace;
  padding: 6px; color: inherit; background: var(--background-fill-secondary); border: 1px solid var(--border-color-primary);
  border-radius: 6px; }
.live-row { display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; }
.live-row label { display: inline-flex; gap: 4px; align-items: center; color: var(--body-text-color-subdued); }
.live-row input { width: 5.5em; color: inherit; background: var(--background-fill-secondary);
  border: 1px solid var(--border-color-primary); border-radius: 4px; padding: 2px 4px; }
.live-form button { font: inherit; padding: 6px 16px; border-radius: 6px; border: 1px solid #4338ca; cursor: pointer;
  background: #4338ca; color: #fff; }
.live-form button.secondary { background: transparent; color: inherit; border-color: var(--border-color-primary); }
.live-form button:disabled { opacity: .55; cursor: progress; }
.live-status { margin: 4px 0; color: var(--body-text-color-subdued); }
.live-status.error { color: #b91c1c; font-weight: 600; }
.live-where { font-size: 13px; color: var(--body-text-color-subdued); margin: 0 0 6px; }
.lx-view h1 { font-size: 20px; margin: 0 0 4px; }
details.live-gen summary { cursor: pointer; color: var(--body-text-color-subdued); }
@media (prefers-color-scheme: dark) { .live-status.error { color: #fca5a5; } }
"""

LIVE_HOST_JS = """
(function () {
  const view = document.querySelector('.lx-view'), heat = view.querySelector('#heatmap');
  let LX_SCORES = null;
  const EDGES = EDGES_JSON.map(Math.log);  // explorer/render/heatmap.py LOGPROB_EDGES: the palette's bins, best first
VIEW_JS
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  function bin(lp) { if (lp === null) return 'u'; let b = 7; EDGES.forEach((e) => { if (lp < e) b -= 1; }); return 'c' + b; }
  function chips(d) {  // explorer/render/heatmap.py heatmap_html's markup, metric logprob
    const n = d.token_ids.length, gen = d.output_k !== null && d.n_prompt < n, out = [];
    out.push('<div class="lx" role="group" aria-label="' + n + ' tokens coloured by logprob. Arrow keys move between tokens, Enter opens one, Shift+arrows select a span.">');
    for (let i = 0; i < n; i++) {
      if (gen && i === d.n_prompt) out.push('<span class="role reply">generated</span><span class="gen">');
      const t = d.token_text[i], cls = bin(d.logprobs[i]) + (t === '' ? ' x' : '');
      out.push('<span class="t ' + cls + '" data-pos="' + i + '"' + (i === 0 ? ' tabindex="0"' : '') + '>' + esc(hooks.show(t)).replace(/↵/g, '↵<br>') + '</span><wbr>');
    }
    out.push(gen ? '</span></div>' : '</div>');
    return out.join('');
  }
  function blob(d, rid) {  // explorer/render/page_data.py page_data's keys
    const ti = [], tl = [], pc = {};
    d.top_ids.forEach((ids, i) => {
      const keep = ids.map((id, j) => [id, d.top_logprobs[i][j]]).filter(([id, lp]) => id >= 0 && lp > -9999);
      ti.push(keep.map((x) => x[0])); tl.push(keep.map((x) => Math.round(x[1] * 1e4) / 1e4));
      keep.forEach(([id]) => { pc[String(id)] = hooks.show(hooks.hexText(d.pieces[String(id)])); });
    });
    return { rid: rid, n: d.token_ids.length, n_prompt: d.n_prompt, generated: d.output_k !== null, mode: d.mode,
      lp: d.logprobs, rk: d.ranks, en: d.entropy, ti: ti, tl: tl, pc: pc, ids: d.token_ids };
  }
  window.lxLive = {
    hexText: (h) => hooks.hexText(h),
    update(d, rid) {  // a new or growing result: the chips and data blob, then the page's own watchers
      LX_SCORES = d;
      const data = document.createElement('div');
      data.className = 'lx-data'; data.hidden = true; data.textContent = JSON.stringify(blob(d, rid));
      const span = heat.querySelector('.lx-span');
      heat.innerHTML = chips(d);
      heat.prepend(span); heat.append(data);
      hooks.watchers.forEach((fn) => fn());
      const open = detail.querySelector('.td[data-pos]');
      if (open && Number(open.dataset.pos) < d.token_ids.length) hooks.detail(Number(open.dataset.pos));
    },
  };
})();
"""


def live_html(o: LiveOptions, title: str) -> str:
    """The live page (see the module): its CSS and host inline, live.js and wllama beside it."""
    url = o.model_url or MODEL_FILE
    config = {"model_url": url, "model_name": o.model_name, "server_url": o.server_url, "k": CARD_K, "n_ctx": N_CTX,
              "wllama": WLLAMA}  # fmt: skip
    host = hosted(LIVE_HOST_JS.replace("EDGES_JSON", json.dumps(list(LOGPROB_EDGES))))
    e = html.escape
    server = f' · <a href="{e(o.server_url)}">the server\'s page</a>' if o.server_url else ""
    cfg = json.dumps(config).replace("<", "\\u003c")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">'
        '<link rel="icon" href="data:,">'
        f"<title>{e(title)}: try your own sentence</title><style>{page_css()}{view_css()}{LIVE_CSS}</style></head><body>"
        '<main class="lx-view">'
        f"<h1>{e(title)}: try your own sentence</h1>"
        f'<p class="live-where">{e(o.model_name)} · computed in your browser (llama.cpp, WebAssembly): nothing you type '
        f'leaves this page · <span id="live-threads">…</span> · <a href="index.html">fixed views</a>{server}</p>'
        '<form id="live-form" class="live-form" onsubmit="return false">'
        '<label for="live-text" class="live-where">Text</label>'
        '<textarea id="live-text" rows="4">The capital of France is Paris.</textarea>'
        '<div class="live-row"><button type="button" id="live-score" disabled>Score</button>'
        '<button type="button" id="live-generate" class="secondary" disabled>Generate</button>'
        '<label>tokens <input id="live-max" type="number" min="1" max="512" value="20"></label>'
        '<label>temperature <input id="live-temp" type="number" min="0" max="5" step="0.1" value="0"></label>'
        '<label>top-p <input id="live-topp" type="number" min="0.01" max="1" step="0.01" value="1"></label>'
        '<label>top-k <input id="live-topk" type="number" min="0" step="1" value="0"></label>'
        '<label>seed <input id="live-seed" type="number" min="0" step="1" value="0"></label></div></form>'
        '<p id="live-status" class="live-status" role="status" aria-live="polite">Starting…</p>'
        '<p id="live-summary" class="lx-summary"></p>'
        f"{legend_html('logprob')}"
        '<div class="lx-cols"><div id="heatmap"><div class="lx-span" hidden></div></div>'
        '<div class="lx-side"><div id="token-detail" class="lx-detail"></div></div></div>'
        '<p id="live-downloads" class="live-row" hidden>Download: '
        '<button type="button" class="secondary" id="live-dl-native">native JSON</button> '
        '<button type="button" class="secondary" id="live-dl-openai">OpenAI / vLLM completion</button></p>'
        f'<script type="application/json" id="live-config">{cfg}</script>'
        f"<script>{host}</script>"
        '<script type="module" src="live.js"></script></main></body></html>\n'
    )


def write_live(folder: str, o: LiveOptions, title: str) -> None:
    """The live page, its scripts, wllama and (when local) the model, written into `folder`."""
    check(o)
    with open(os.path.join(folder, PAGE), "w", encoding="utf-8") as f:
        f.write(live_html(o, title))
    with open(os.path.join(folder, "live.js"), "w", encoding="utf-8") as f:
        f.write(read("in_browser.js"))
    with resources.as_file(path("wllama")) as wllama:
        shutil.copytree(wllama, os.path.join(folder, "wllama"))
    if o.model_file is not None:
        shutil.copyfile(o.model_file, os.path.join(folder, MODEL_FILE))


def live_link(page: str, text: str) -> str:
    """A fixed view's page with a link to the live page (its text filled in) at the top of its body."""
    href = f"{PAGE}?{urllib.parse.urlencode({'text': text[:2000]})}"
    bar = (
        '<p style="margin:0;padding:8px;font:14px ui-sans-serif,system-ui,sans-serif">'
        f'<a href="{html.escape(href)}">Try your own sentence</a>: the same model, computed in your browser</p>'
    )
    return page.replace("<body>", "<body>" + bar, 1)


def live_front_matter() -> str:
    """YAML lines for a static Space's README front matter: the headers that allow several threads, and a
    Cross-Origin-Resource-Policy so the page's own files load under them."""
    return (
        "custom_headers:\n  cross-origin-embedder-policy: require-corp\n  cross-origin-opener-policy: same-origin\n"
        "  cross-origin-resource-policy: cross-origin\n"
    )


def serve(folder: str, port: int, isolate: bool = True, host: str = "127.0.0.1"):
    """A loopback server of `folder` (a ThreadingHTTPServer, not yet serving: call serve_forever) that sends the two
    cross-origin isolation headers where `isolate`, so the live page runs on several threads."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Handler(SimpleHTTPRequestHandler):
        def guess_type(self, path) -> str:  # WebAssembly compiles while it streams only when typed as such
            return "application/wasm" if str(path).endswith(".wasm") else super().guess_type(path)

        def end_headers(self) -> None:
            if isolate:
                for name, value in ISOLATION_HEADERS.items():
                    self.send_header(name, value)
            super().end_headers()

        def send_head(self):  # the first bytes only, for a `Range: bytes=0-N` (the page's GGUF check asks 4)
            want = re.fullmatch(r"bytes=0-(\d+)", self.headers.get("Range", ""))
            path = self.translate_path(self.path)
            if not want or not os.path.isfile(path):
                return super().send_head()
            with open(path, "rb") as f:
                body = f.read(int(want[1]) + 1)
            self.send_response(206)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Range", f"bytes 0-{len(body) - 1}/{os.path.getsize(path)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)

        def log_message(self, format, *args) -> None:  # quiet: a page's every file would be a line
            pass

    return ThreadingHTTPServer((host, port), functools.partial(Handler, directory=folder))
