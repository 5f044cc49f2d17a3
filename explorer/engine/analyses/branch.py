"""Branches: put another token at a position and continue from there, reusing the KV cache of the shared prefix.

Steps of `branch(prefix, token)`:
1. take a KV cache of prefix[:-1] from the kept ones (`Prefixes`): the longest kept path that
   shares it, copied and cut (the kept one stays as it is); only positions no kept path
   covers are computed.
2. one forward pass over [prefix[-1], token]: the first hidden state gives the token's
   numbers (logprob, rank, entropy, top-k), the second starts the decode loop.
3. `stream` continues from that cache with the sampler settings.
4. the cache of the branched path is kept for later branches from it.
So a branch computes 2 positions plus its continuation, however long the prefix.

A served model (explorer/engine/remote/engine.py) keeps no cache here: its branch is a generation from the ids of
prefix + token, and the token's numbers are that prompt's last scored position.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import torch

from explorer.engine.interface import Forward, ModelEngine, forward_pass
from explorer.engine.kernels.sampling import process
from explorer.engine.passes import blocks
from explorer.engine.passes.events import Done, Step
from explorer.engine.passes.generation import collect, generate, stream, with_seed
from explorer.engine.passes.scoring import chunked_rows, score_ids
from explorer.errors import ExplorerError
from explorer.results.branch import BranchTree
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.rules.sampler import MAX_K, SamplerSettings

KEEP = 6  # KV caches kept per Prefixes (most recent first)


def _cut(cache, n: int):
    """A copy of `cache` holding its first n positions, or None when n = 0 or the cache cannot be cut (sliding windows)."""
    if n == 0 or any(getattr(layer, "is_sliding", False) for layer in getattr(cache, "layers", [])):
        return None
    out = copy.deepcopy(cache)
    extra = out.get_seq_length() - n
    if extra > 0:
        out.crop(-extra)  # a negative count removes that many positions
    return out


class Prefixes:
    """KV caches of token paths one model has read, most recent first (at most `keep`), to branch without recomputing."""

    def __init__(self, model: str, keep: int = KEEP):
        self.model, self.keep = model, keep
        self.kept: list[tuple[np.ndarray, object, int]] = []  # (ids, cache, positions it covers)

    def remember(self, ids: list[int], cache) -> None:
        if cache is None:
            return
        self.kept.insert(0, (np.asarray(ids, np.int64), cache, min(len(ids), cache.get_seq_length())))
        del self.kept[self.keep :]

    def take(self, engine: Forward, ids: list[int], n: int):
        """A new KV cache of ids[:n] (None for n = 0): the longest kept prefix, cut, then whatever is missing computed."""
        want = np.asarray(ids[:n], np.int64)
        best, got = None, 0
        for j, (kept, _, covered) in enumerate(self.kept):
            m = min(covered, n, len(kept))
            same = np.flatnonzero(kept[:m] != want[:m])
            m = int(same[0]) if same.size else m
            if m > got:
                best, got = j, m
        cache = None
        if best is not None:
            self.kept.insert(0, self.kept.pop(best))
            cache = _cut(self.kept[0][1], got)
            got = got if cache is not None else 0
        if got < n:
            x = torch.tensor([ids[got:n]], device=engine.device)  # (1, n - got)
            _, cache = blocks.prefill(engine, x, cache)
        return cache


@dataclass
class Branch:
    ids: list[int]  # the branched text: the prefix, the token, the continuation
    at: int  # the token's position
    row: Rows  # the token's numbers at `at` (one row)
    steps: list[Step]  # the continuation
    done: Done


def _drain(events: Iterator[Step | Done]) -> tuple[list[Step], Done]:
    steps: list[Step] = []
    for ev in events:
        if isinstance(ev, Done):
            return steps, ev
        steps.append(ev)
    raise RuntimeError("the decode loop ended without Done")


@torch.inference_mode()
def branch(
    engine: ModelEngine,
    prefixes: Prefixes,
    prefix: list[int],
    token: int,
    s: SamplerSettings,
    k: int | None = None,
) -> Branch:
    """`prefix` + `token`, continued with sampler `s`; the token's numbers with `k` top entries (default s.logprobs)."""
    if not prefix:
        raise ExplorerError(
            "A branch needs at least one token before it: position 0 has no context.", param="branch_at"
        )
    if prefixes.model != engine.name:
        raise ExplorerError(f"These caches belong to {prefixes.model!r}, not {engine.name!r}.", param="model")
    head = list(prefix) + [token]
    engine.check_ids(head)
    kk = s.top_entries if k is None else k
    if not engine.capabilities.forward:  # a served model: no KV caches here
        return _served_branch(engine, head, s, kk)
    engine = forward_pass(engine)
    past = prefixes.take(engine, head, len(prefix) - 1)
    x = torch.tensor([head[-2:]], device=engine.device)  # (1, 2): the prefix's last token, then `token`
    hidden, past = blocks.prefill(engine, x, past)  # (2, H)
    raw = engine.head(hidden[:1]).float()  # (1, V)
    dist = raw if s.mode == "raw" else process(raw, s, torch.tensor(prefix, device=engine.device))
    row = engine.stats(dist, x[0, 1:], kk).to_rows()
    steps, done = _drain(stream(engine, head, s, resume=(past, hidden[1:])))
    path = head + [st.token_id for st in steps]
    prefixes.remember(path, past)
    return Branch(path, len(prefix), row, steps, done)


def _served_branch(engine: ModelEngine, head: list[int], s: SamplerSettings, k: int) -> Branch:
    """A served model's branch: the continuation generated from `head`, then the token's numbers scored."""
    steps, done = _drain(stream(engine, head, s))  # first: the server refuses what it cannot give
    row = score_ids(engine, head, k).rows.sliced(slice(len(head) - 1, None))  # the token's position
    return Branch(head + [st.token_id for st in steps], len(head) - 1, row, steps, done)


# ---- a generation and its branch, as TokenScores (the CLI's generate --branch-at) ----------------
def _pad(rows: Rows, width: int) -> Rows:
    m, kk = len(rows), rows.top_ids.shape[1]
    ids, lps = np.full((m, width), -1, np.int64), np.full((m, width), -np.inf, np.float32)
    ids[:, :kk], lps[:, :kk] = rows.top_ids[:, :width], rows.top_logprobs[:, :width]
    return Rows(rows.logprobs, rows.ranks, rows.entropy, ids, lps, varentropy=rows.varentropy)


@torch.inference_mode()
def generate_kept(engine: ModelEngine, prefixes: Prefixes, ids: list[int], s: SamplerSettings) -> TokenScores:
    """One sample of prompt `ids` (as `generate`), its KV cache kept in `prefixes` (none for a served model)."""
    if not engine.capabilities.forward:  # a served model: no KV cache to keep
        return generate(engine, ids, s)[0]
    engine = forward_pass(engine)
    engine.check_ids(ids)
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    hidden, past = blocks.prefill(engine, x)  # (T, H)
    prompt = chunked_rows(engine, hidden[:-1], x[0, 1:], s.prompt_logprobs) if s.prompt_logprobs is not None else None
    steps, done = _drain(stream(engine, ids, s, resume=(past, hidden[-1:])))
    r = collect(engine, ids, s, steps, replace(done, prompt_rows=prompt))
    prefixes.remember(r.token_ids.tolist(), past)
    return r


def branch_scores(engine: ModelEngine, r: TokenScores, b: Branch, s: SamplerSettings) -> TokenScores:
    """TokenScores of branch `b` of result `r`: r's numbers before `b.at`, then the token's and the continuation's."""
    width = r.top_ids.shape[1]
    head = slice(1, b.at)  # r's positions before the branch
    parts = [
        Rows(
            r.logprobs[head],
            r.ranks[head],
            r.entropy[head],
            r.top_ids[head],
            r.top_logprobs[head],
            varentropy=r.rows.varentropy_or_nan()[head],
        ),
        _pad(b.row, width),
    ]
    parts += [_pad(st.rows, width) for st in b.steps]
    n_prompt = r.n_prompt if b.at >= r.n_prompt else b.at + 1
    out = b"".join(engine.vocab[i] for i in b.ids[b.at + 1 :]).decode("utf-8", "replace")
    given = b"".join(engine.vocab[i] for i in b.ids[n_prompt : b.at + 1]).decode("utf-8", "replace")
    return assemble(
        engine.name,
        engine.vocab,
        b.ids,
        n_prompt,
        Rows.concat(parts),
        first=1,
        mode=s.mode,
        sampler=s.to_dict(),
        prompt_k=r.prompt_k,
        output_k=r.output_k,
        finish_reason=b.done.finish_reason,
        output_text=given + b.done.text if b.done.text != out else None,
        stop_reason=b.done.stop_reason,
        stop_token=b.done.stop_token,
    )


def generate_then_branch(
    engine: ModelEngine, ids: list[int], s: SamplerSettings, at: int, token: int
) -> tuple[TokenScores, TokenScores]:
    """Generate from `ids`, then put `token` at position `at` of the result (prompt + generated) and continue with `s`."""
    if s.n != 1 or s.logprob_ids or s.prompt_logprobs == -1:
        raise ExplorerError(
            "--branch-at branches one sample with top-k numbers: use --n 1, no listed logprob ids "
            "and --prompt-logprobs 0..20.",
            param="branch_at",
        )
    s = with_seed(s)
    prefixes = Prefixes(engine.name)
    r = generate_kept(engine, prefixes, ids, s)
    if not 1 <= at < r.n:
        raise ExplorerError(
            f"--branch-at {at} is outside the result: it has {r.n} tokens ({r.n_prompt} prompt + "
            f"{r.n - r.n_prompt} generated); pick 1..{r.n - 1}.",
            param="branch_at",
        )
    b = branch(engine, prefixes, r.token_ids[:at].tolist(), token, s, k=r.top_ids.shape[1])
    return r, branch_scores(engine, r, b, s)


# ---- trees -------------------------------------------------------------------------------------
def tree_settings(s: SamplerSettings, k: int = MAX_K) -> SamplerSettings:
    """`s` as a tree records it: raw numbers with k top entries, one sample, a concrete seed."""
    return with_seed(replace(s, logprobs=k, prompt_logprobs=None, mode="raw", n=1, logprob_ids=()))


@torch.inference_mode()
def plant(
    engine: ModelEngine,
    prefixes: Prefixes,
    ids: list[int],
    n_prompt: int = 0,
    sampler: dict | None = None,
    k: int = MAX_K,
) -> BranchTree:
    """A tree of the text `ids` (raw numbers, one scoring pass whose KV cache is kept for the branches)."""
    if not engine.capabilities.forward:  # a served model: no KV cache to keep
        rows = score_ids(engine, ids, k).rows.sliced(slice(1, None))
        return BranchTree.planted(engine.name, engine.vocab, ids, rows, n_prompt, sampler)
    engine = forward_pass(engine)
    engine.check_ids(ids)
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    hidden, past = blocks.prefill(engine, x)  # (T, H)
    rows = chunked_rows(engine, hidden[:-1], x[0, 1:], k)
    prefixes.remember(ids, past)
    return BranchTree.planted(engine.name, engine.vocab, ids, rows, n_prompt, sampler)


def grow(
    engine: ModelEngine,
    prefixes: Prefixes,
    tree: BranchTree,
    after: int,
    token: int,
    s: SamplerSettings,
) -> tuple[BranchTree, int]:
    """The tree with a branch: `token` after node `after`, then what sampler `s` draws; also the new leaf's id."""
    if tree.model != engine.name:
        raise ExplorerError(f"This tree was grown by {tree.model!r}: pick that model to branch it.", param="model")
    if not 0 <= after < tree.n:
        raise ExplorerError(f"Node {after} is not in this tree (0..{tree.n - 1}).", param="node")
    s = tree_settings(s, tree.k)
    b = branch(engine, prefixes, tree.ids_to(after), token, s, k=tree.k)
    rows = Rows.concat([b.row] + [st.rows for st in b.steps])
    grown = tree.grown(
        after, b.ids[b.at :], rows, engine.vocab, {"sampler": s.to_dict(), "finish_reason": b.done.finish_reason}
    )
    return grown, grown.n - 1


def regrow(engine: ModelEngine, tree: BranchTree) -> BranchTree:
    """The same tree grown again from its seed text and each branch's token and sampler settings (seeds included)."""
    if tree.model != engine.name:
        raise ExplorerError(f"This tree was grown by {tree.model!r}: pick that model to regrow it.", param="model")
    prefixes = Prefixes(engine.name)
    out = plant(engine, prefixes, tree.seed_ids(), tree.n_prompt, tree.branches[0]["sampler"], tree.k)
    for b in tree.branches[1:]:
        out, _ = grow(engine, prefixes, out, b["from"], b["token_id"], SamplerSettings.from_dict(b["sampler"]))
    return out
