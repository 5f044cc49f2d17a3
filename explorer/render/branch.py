"""BranchTree -> a compact HTML tree, one node's detail, two leaves side by side.

Pure functions, no torch, no gradio. Chains of only children are drawn as one line of token
chips; a fork opens a nested list. Each chip carries `data-node` (the page opens its detail on
click) and is coloured by the rank of its token; each leaf ends with its path's cumulative
logprob and perplexity. Token text is always escaped.
"""

from __future__ import annotations

import math

import pandas as pd

from explorer.render.tables import alternatives_table
from explorer.render.text import escape, visible
from explorer.results.branch import BranchTree
from explorer.rules.sampler import is_greedy

RANK_EDGES = (1, 10, 100, 1000)  # GLTR's buckets
CSS = """
.bt, .bt ul { list-style: none; margin: 0; padding-left: 14px; }
.bt { padding-left: 0; font-family: monospace; font-size: 13px; line-height: 1.9; }
.bt li { border-left: 1px dashed rgba(128,128,128,0.5); padding-left: 6px; }
.bt .tn { padding: 1px 1px; border-radius: 3px; cursor: pointer; white-space: pre-wrap; }
.bt .tn:focus, .bt .tn.sel { outline: 2px solid currentColor; }
.bt .fork { border: 1px solid currentColor; font-weight: bold; }
.bt li { overflow-wrap: anywhere; }
.bt .r0 { background: rgba(95,159,214,0.45); } .bt .r1 { background: rgba(181,211,236,0.55); }
.bt .r2 { background: rgba(246,177,127,0.5); } .bt .r3 { background: rgba(214,96,77,0.5); }
.bt .r4 { background: rgba(168,85,247,0.45); } .bt .u { opacity: 0.6; }
.bt .leaf { margin-left: 6px; padding: 0 6px; border-radius: 8px; font-size: 12px; background: rgba(128,128,128,0.2); }
.cmp { display: flex; gap: 16px; } .cmp > div { flex: 1; min-width: 0; font-family: monospace; white-space: pre-wrap; }
.cmp .shared { opacity: 0.55; } .cmp .num { font-family: sans-serif; font-size: 13px; margin-bottom: 4px; }
"""


_MD = str.maketrans({c: f"&#{ord(c)};" for c in "*_[]\\~|"})  # applied after escape(), whose entities stay intact


def md_code(text: str) -> str:
    """A token for Markdown: whitespace visible, HTML and Markdown characters as entities, in <code>."""
    return f"<code>{escape(visible(text)).translate(_MD) or '▯'}</code>"


def _bucket(rank: int) -> int:
    return next((i for i, edge in enumerate(RANK_EDGES) if rank <= edge), len(RANK_EDGES))


def _chip(tree: BranchTree, i: int, selected: int | None) -> str:
    rank = int(tree.ranks[i])
    cls = "u" if rank == 0 else f"r{_bucket(rank)}"
    first = any(b["first_node"] == i for b in tree.branches[1:])
    lp = float(tree.logprobs[i])
    title = f"node {i} · pos {tree.depth(i)}" + ("" if math.isnan(lp) else f" · logprob {lp:.3f} · rank {rank}")
    extra = (" fork" if first else "") + (" sel" if i == selected else "")
    return (
        f'<span class="tn {cls}{extra}" data-node="{i}" tabindex="0" title="{title}">'
        f"{escape(visible(tree.piece(i))) or '▯'}</span><wbr>"  # a line may break between tokens, never inside one
    )


def leaf_label(tree: BranchTree, leaf: int) -> str:
    """'Σ logprob -12.34 · perplexity 5.67 · 23 tokens' of the path ending at `leaf`."""
    return (
        f"Σ logprob {tree.cumulative_logprob(leaf):.2f} · perplexity {tree.perplexity(leaf):.2f} · "
        f"{tree.depth(leaf) + 1} tokens"
    )


def tree_html(tree: BranchTree | None, selected: int | None = None) -> str:
    """The whole tree, forks as nested lists, each leaf with its path's cumulative logprob and perplexity."""
    if tree is None or tree.n == 0:
        return '<div class="bt-empty">No tree yet: pick a token, tick alternatives and press <b>Continue from here</b>.</div>'
    kids: dict[int, list[int]] = {}
    for i, p in enumerate(tree.parent.tolist()):
        kids.setdefault(p, []).append(i)
    leaves = {leaf: j for j, leaf in enumerate(tree.leaves(), start=1)}
    out, stack = ['<ul class="bt">'], [("open", kids[-1][0])]
    while stack:  # iterative depth-first walk: segments of only children, a nested list at each fork
        what, node = stack.pop()
        if what == "close":
            out.append("</ul></li>")
            continue
        out.append("<li>")
        while True:
            out.append(_chip(tree, node, selected))
            nxt = kids.get(node, [])
            if len(nxt) != 1:
                break
            node = nxt[0]
        if not nxt:
            out.append(
                f'<span class="leaf" data-leaf="{leaves[node]}">leaf {leaves[node]}: {escape(leaf_label(tree, node))}</span></li>'
            )
            continue
        out.append("<ul>")
        stack.append(("close", -1))
        stack.extend(("open", c) for c in reversed(nxt))
    out.append("</ul>")
    return "".join(out)


def leaf_choices(tree: BranchTree | None) -> list[tuple[str, int]]:
    """(label, node id) of every leaf, for a menu."""
    if tree is None:
        return []
    return [
        (f"leaf {j} (node {leaf}): {leaf_label(tree, leaf)}", leaf) for j, leaf in enumerate(tree.leaves(), start=1)
    ]


def node_markdown(tree: BranchTree, node: int) -> str:
    """One paragraph on `node`: its token, numbers, where it came from, and its path's totals."""
    b = tree.branches[int(tree.branch[node])]
    origin = (
        "the text the tree grew from"
        if b["id"] == 0
        else (
            f"branch {b['id']} (token at position {b['at']}, then "
            + escape(_sampler_text(b.get("sampler") or {}))
            + ")"
        )
    )
    head = f"**Node {node}**, position {tree.depth(node)}, token {md_code(tree.piece(node))} (id {int(tree.token_ids[node])}), from {origin}"
    lp = float(tree.logprobs[node])
    if math.isnan(lp):
        return head + ". The first token has no context, so it is not scored."
    return (
        f"{head}: rank **{int(tree.ranks[node])}**, probability {100 * math.exp(lp):.3g}%, logprob {lp:.4f}, entropy "
        f"{float(tree.entropy[node]):.3f} nats. Path to here: {escape(leaf_label(tree, node))}."
    )


def _sampler_text(s: dict) -> str:
    if not s:
        return "no sampler"
    if is_greedy(s.get("temperature")):
        return "greedy"
    return f"temperature {s.get('temperature')}, top-p {s.get('top_p')}, top-k {s.get('top_k')}, seed {s.get('seed')}"


def node_table(tree: BranchTree, node: int) -> pd.DataFrame:
    """The top-k at the node's position (its alternatives), the node's own token marked, and an `(others)` row."""
    return alternatives_table(tree.top(node), tree.pieces, int(tree.token_ids[node]), "◀ this node")


def _side(tree: BranchTree, leaf: int, shared: int, name: str) -> str:
    path = tree.path(leaf)
    common = "".join(escape(visible(tree.piece(i))) for i in path[max(0, shared - 24) : shared])
    own = "".join(_chip(tree, i, None) for i in path[shared:])
    diverged = float(sum(tree.logprobs[i] for i in path[shared:] if not math.isnan(tree.logprobs[i])))
    return (
        f'<div><div class="num"><b>{escape(name)}</b> (node {leaf}): {escape(leaf_label(tree, leaf))}; '
        f"after the fork: Σ logprob {diverged:.2f} over {len(path) - shared} tokens</div>"
        f'<span class="shared">…{common}</span><span class="bt">{own}</span></div>'
    )


def compare_html(tree: BranchTree, a: int, b: int) -> str:
    """Two leaves side by side: the shared text faded, then each one's own tokens with their numbers."""
    pa, pb = tree.path(a), tree.path(b)
    shared = next((i for i, (x, y) in enumerate(zip(pa, pb)) if x != y), min(len(pa), len(pb)))
    return f'<div class="cmp">{_side(tree, a, shared, "A")}{_side(tree, b, shared, "B")}</div>'
