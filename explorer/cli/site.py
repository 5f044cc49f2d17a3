"""`logprob-explorer site OUT_DIR FILE...`: a folder of fixed views for a static host (explorer/notebook/site.py).

FILE: session files, native JSON, captured vLLM / OpenAI bodies or HTML views made by `save_html` / `to_html`. No
model is loaded. OUT_DIR gets one self-contained page per file, `index.html` and a `README.md` whose front matter
makes it a Hugging Face static Space.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> None:
    from explorer.notebook.site import TITLE

    p = sub.add_parser(
        "site",
        help="a folder of fixed views (one page per file, an index, a static Space's README) for a static host",
        description="Turn session files, native JSON or HTML views into a folder of self-contained pages with an "
        "index.html and a README.md ready for a Hugging Face static Space or GitHub Pages: push the folder. No "
        "model runs there: the views are fixed.",
    )
    p.add_argument("out_dir", metavar="OUT_DIR", help="the folder to write (new or empty; see --overwrite)")
    p.add_argument("files", metavar="FILE", nargs="*", help="session files, native JSON or HTML views")
    p.add_argument("--title", default=TITLE, help=f"the site's title (default: {TITLE})")
    p.add_argument("--overwrite", action="store_true", help="replace OUT_DIR when it holds files already")
    p.add_argument(
        "--view",
        action="append",
        default=[],
        metavar="ID",
        help="also a page of this registered view of each file (explorer/notebook/registry.py; repeat it, or 'all')",
    )
    from explorer.cli.site_live import add_live_args

    add_live_args(p)


def run(a: argparse.Namespace) -> int:
    from explorer.cli.site_live import live_options, serve_site
    from explorer.notebook.site import build_site

    views = build_site(a.out_dir, a.files, a.title, a.overwrite, live=live_options(a), with_views=a.view)
    print(f"site: wrote {a.out_dir}: index.html, README.md and {len(views)} view(s)", file=sys.stderr)
    return serve_site(a)
