"""A folder of fixed views for a static host (a Hugging Face static Space, GitHub Pages, any web server, or the
folder opened from disk): `logprob-explorer site OUT_DIR FILE...`.

Steps:
1. open every input (explorer.notebook.files.open_file: a session file, native JSON, a captured body, an HTML view
   made by save_html / to_html); the first bad one stops it with an error naming the file, before anything is
   written;
2. write, into a fresh hidden folder beside OUT_DIR: one self-contained page per input (page.page_html: inline CSS,
   script and data, a CSP that allows no request) and, when asked (`--view ID`, `--view all`), one per registered
   view of it (`<page>.<view id>.html`, explorer/notebook/registry.py, linked under its title in the index), `index.html` (a plain table of them: title, model, first words,
   tokens, date; light and dark by prefers-color-scheme; no script) and `README.md` (the front matter of a Hugging
   Face static Space: `sdk: static`, `app_file: index.html`);
3. move that folder to OUT_DIR in one rename (an existing OUT_DIR is replaced only when asked), so a failure leaves
   no half-written site behind.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.errors import ExplorerError
from explorer.notebook.files import open_file
from explorer.notebook.live import PAGE as LIVE_PAGE
from explorer.notebook.live import LiveOptions, live_front_matter, live_link, write_live
from explorer.notebook.page import CSP, page_html
from explorer.notebook.registry import by_id
from explorer.notebook.view import View as ViewRecord
from explorer.results.scores import TokenScores

TITLE = "logprob-explorer views"
FIRST_WORDS = 12  # words of each text the index shows
INDEX_CSS = """
:root { color-scheme: light dark; --bg: #fff; --fg: #111827; --muted: #4b5563; --line: #d1d5db; --link: #1d4ed8; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #111827; --fg: #f3f4f6; --muted: #d1d5db; --line: #374151; --link: #93c5fd; }
}
body { background: var(--bg); color: var(--fg); margin: 0 auto; max-width: 72rem; padding: 1.5rem;
  font: 16px/1.5 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--link); }
a:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
p { color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding-bottom: .5rem; }
th, td { text-align: left; vertical-align: top; padding: .5rem .75rem; border-bottom: 1px solid var(--line); }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
"""


@dataclass(frozen=True)
class View:
    """One input as the site lists it."""

    source: str  # the input's path
    page: str  # its page's file name in the site
    title: str
    scores: TokenScores
    date: str  # the input's modification date, YYYY-MM-DD (UTC)

    @property
    def first_words(self) -> str:
        text = "".join(self.scores.token_text[self.scores.context_start :])
        words = text.split()
        return " ".join(words[:FIRST_WORDS]) + (" …" if len(words) > FIRST_WORDS else "")

    @property
    def full_text(self) -> str:
        return "".join(self.scores.token_text[self.scores.context_start :])


def build_site(
    out_dir: str,
    paths: list[str],
    title: str = TITLE,
    overwrite: bool = False,
    live: LiveOptions | None = None,
    with_views: Sequence[str] = (),
) -> list[View]:
    """Write the site of `paths` to `out_dir` (see the module), with the pages of the registered views named in
    `with_views` (their ids; "all": every one); the inputs, in the order given. `live`: a live page too
    (explorer/notebook/live.py), linked from every view."""
    chosen = registered(with_views)
    if not paths and live is None:
        raise ExplorerError("Give at least one file to put on the site.", param="files")
    target = os.path.abspath(out_dir)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        raise ExplorerError(f"{out_dir!r}: the folder {parent!r} does not exist; create it first.", param="out_dir")
    if os.path.exists(target) and not (os.path.isdir(target) and (overwrite or not os.listdir(target))):
        raise ExplorerError(
            f"{out_dir!r} exists and is not an empty folder: give a new folder, or replace it (--overwrite).",
            param="out_dir",
        )
    views = _views(paths)  # 1. every input opened before anything is written
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.partial-", dir=parent)
    os.chmod(work, 0o755)  # mkdtemp makes it 0700: a web server serving the site must read it
    try:  # 2. the site, in a hidden folder beside the target
        for v in views:
            page = page_html(v.scores)
            _write(os.path.join(work, v.page), page if live is None else live_link(page, v.full_text))
            for name, text in view_pages(v, chosen).items():  # each registered view asked (--view)
                _write(os.path.join(work, name), text)
        _write(os.path.join(work, "index.html"), index_html(views, title, chosen, live is not None))
        _write(os.path.join(work, "README.md"), readme(views, title, live is not None))
        if live is not None:
            write_live(work, live, title)
        _replace(work, target)  # 3. one rename
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return views


def _views(paths: list[str]) -> list[View]:
    """Each input opened, with a page name of its own (its file name's stem, made safe and unique)."""
    views, taken = [], {"index"}
    for path in paths:
        scores = open_file(path)
        stem = os.path.basename(path).split(".")[0]
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-").lower() or "view"
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        taken.add(name)
        mtime = dt.datetime.fromtimestamp(os.path.getmtime(path), dt.timezone.utc)
        views.append(View(path, f"{name}.html", stem or name, scores, mtime.strftime("%Y-%m-%d")))
    return views


def view_page(v: View, view_id: str) -> str:
    """The file name of registered view `view_id`'s page of input `v`: `<page>.<view id>.html` (an input's page name
    has no dot before `.html`, so no two names meet)."""
    return f"{v.page.removesuffix('.html')}.{view_id}.html"


def registered(ids: Sequence[str]) -> tuple[ViewRecord, ...]:
    """The registered views named by `ids` ("all": every one), in the registry's order; an unknown id is an
    ExplorerError naming the known ones."""
    known = by_id()
    if "all" in ids:
        return tuple(known.values())
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise ExplorerError(
            f"There is no view {unknown[0]!r} to add to the site: use one of {', '.join([*known, 'all'])}.",
            param="view",
        )
    return tuple(v for v in known.values() if v.id in ids)


def view_pages(v: View, chosen: Sequence[ViewRecord]) -> dict[str, str]:
    """file name -> page, for each view of `chosen` of input `v` (at its default options)."""
    return {view_page(v, view.id): view.page(view.run(v.scores)) for view in chosen}


def _write(path: str, text: str) -> None:
    """`text` written to `path`, readable by everyone (0644: the site is for a web server to serve)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o644)


def _replace(work: str, target: str) -> None:
    """`work` renamed to `target`; an existing `target` is moved aside first and removed once the rename is done."""
    old = None
    if os.path.exists(target):
        old = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.old-", dir=os.path.dirname(target))
        os.rename(target, os.path.join(old, "site"))
    try:
        os.rename(work, target)
    except OSError:
        if old is not None:
            os.rename(os.path.join(old, "site"), target)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def index_html(views: list[View], title: str = TITLE, chosen: Sequence[ViewRecord] = (), live: bool = False) -> str:
    """The site's front page: one table row per view (a link to it, its model, first words, tokens, date)."""
    e = html.escape
    try_it = f'<a href="{LIVE_PAGE}">Try your own sentence</a>: the model runs in your browser.'
    rows = "".join(
        f'<tr><th scope="row"><a href="{e(v.page)}">{e(v.title)}</a>{_view_links(v, chosen)}</th><td>{e(v.scores.model)}</td>'
        f'<td>{e(v.first_words)}</td><td class="num">{v.scores.n:,}</td><td>{e(v.date)}</td></tr>\n'
        for v in views
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{INDEX_CSS}</style></head><body><main>"
        f"<h1>{e(title)}</h1>"
        f"<p>{len(views)} fixed view{'s' if len(views) != 1 else ''} made with logprob-explorer: each shows every "
        "token of a text coloured by how likely the model found it; hover or click a token for its alternatives. "
        f"{try_it if live else 'No model runs here.'}</p>"
        '<table><caption>The views</caption><thead><tr><th scope="col">Title</th><th scope="col">Model</th>'
        '<th scope="col">First words</th><th scope="col">Tokens</th><th scope="col">Date</th></tr></thead>'
        f"<tbody>\n{rows}</tbody></table></main></body></html>\n"
    )


def _view_links(v: View, chosen: Sequence[ViewRecord]) -> str:
    """The links to input `v`'s pages of the `chosen` views, under its title in the index."""
    links = " · ".join(f'<a href="{html.escape(view_page(v, x.id))}">{html.escape(x.title)}</a>' for x in chosen)
    return f'<br><small class="lx-views">{links}</small>' if links else ""


def readme(views: list[View], title: str = TITLE, live: bool = False) -> str:
    """README.md with a Hugging Face static Space's front matter (YAML; each value a JSON string, which YAML
    reads as it is); with `live`, the headers the live page's threads need."""
    front = {
        "title": title[:60],
        "emoji": "📊",
        "colorFrom": "blue",
        "colorTo": "indigo",
        "sdk": "static",
        "app_file": "index.html",
        "pinned": False,
    }
    lines = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in front.items())
    lines += "\n" + live_front_matter().rstrip("\n") if live else ""
    listed = "\n".join(f"- [{v.title}]({v.page}): {v.scores.model}, {v.scores.n:,} tokens" for v in views)
    return (
        f"---\n{lines}\n---\n\n# {title}\n\nFixed views made with logprob-explorer (`logprob-explorer site`): open "
        f"[index.html](index.html). Each page holds its data and script inline and makes no network request; no "
        f"model runs here.\n\n{listed}\n"
        + (
            f"\n[{LIVE_PAGE}]({LIVE_PAGE}): try your own sentence; the model runs in the visitor's browser.\n"
            if live
            else ""
        )
    )
