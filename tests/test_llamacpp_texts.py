"""Several texts in one llama_decode on the llama.cpp engine (explorer/engine/llamacpp/texts.py): each text in a KV
sequence of its own, so its numbers are those it gets decoded alone; the decodes are fewer than the texts."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")

from explorer.engine import score_ids, score_prompts
from explorer.engine.analyses.batch import run_batch
from explorer.engine.llamacpp import texts as texts_mod
from explorer.results.batch import BatchItem

TEXTS = [
    "The cat sat.",
    "The dog ran.",
    "The capital of France is Paris.",
    "The capital of Spain is Madrid.",
    "a",
    "Grüße aus Köln! 👋",
    "The cat sat.",
]


def _alone_logprobs(engine, ids: list[int]) -> np.ndarray:
    """log_softmax + gather of the logits llama.cpp gives the text decoded alone (the engine's own context)."""
    logits, _ = engine.body(torch.tensor([ids]))
    return torch.log_softmax(logits[:-1].double(), -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].numpy()


def _decodes(monkeypatch) -> list[int]:
    """The rows of each llama_decode of the texts' context, as they happen."""
    seen: list[int] = []
    real = texts_mod.Texts._decode

    def counted(self, rows):
        seen.append(len(rows))
        return real(self, rows)

    monkeypatch.setattr(texts_mod.Texts, "_decode", counted)
    return seen


def _check(engine, texts: list[str], monkeypatch, atol: float) -> None:
    seqs = [engine.encode(t) for t in texts]
    seen = _decodes(monkeypatch)
    together = score_prompts(engine, seqs, 5)
    shared = sorted(n for n in {len(s) for s in seqs} if n > 1 and sum(len(s) == n for s in seqs) > 1)
    assert len(seen) == len(shared) and sum(seen) < len(seqs)  # one decode per length held by several texts
    for ids, r in zip(seqs, together):
        alone = score_ids(engine, ids, k=5)
        assert r.n == len(ids)
        np.testing.assert_allclose(r.logprobs[1:], alone.logprobs[1:], atol=atol)
        np.testing.assert_allclose(r.logprobs[1:], _alone_logprobs(engine, ids), atol=atol)
        np.testing.assert_allclose(r.top_logprobs[1:], alone.top_logprobs[1:], atol=atol)
        np.testing.assert_allclose(r.entropy[1:], alone.entropy[1:], atol=10 * atol)


def test_texts_decoded_together_equal_each_alone(tiny_gguf, monkeypatch):
    """The tiny GGUF (float32 weights): a text's logprobs decoded beside others equal its own to 1e-4 (measured:
    0.0, bit for bit)."""
    _check(tiny_gguf, TEXTS, monkeypatch, 1e-4)


def test_a_batch_equals_the_rows_scored_alone(tiny_gguf, monkeypatch):
    """The Batch tab's rows (`run_batch`) on llama.cpp: the same as with texts scored one at a time."""
    items = [BatchItem(i + 1, t, str(i)) for i, t in enumerate(TEXTS)]
    together = run_batch(tiny_gguf, items)
    monkeypatch.setattr(type(tiny_gguf), "batches_texts", False)
    alone = run_batch(tiny_gguf, items)
    for a, b in zip(together.rows, alone.rows):
        assert (a.error, a.tokens, a.scored) == (b.error, b.tokens, b.scored)
        if not a.error:
            assert a.total_logprob == pytest.approx(b.total_logprob, abs=1e-4)


def test_a_text_longer_than_a_sequence_is_read_alone(tiny_gguf, monkeypatch):
    monkeypatch.setattr(texts_mod, "POSITIONS", 4)
    seen = _decodes(monkeypatch)
    seqs = [tiny_gguf.encode(t) for t in ("The cat sat.", "The capital of France is Paris.")]
    assert len(seqs[0]) == len(seqs[1]) > 4
    for ids, r in zip(seqs, score_prompts(tiny_gguf, seqs, 0)):
        np.testing.assert_allclose(r.logprobs[1:], score_ids(tiny_gguf, ids, k=0).logprobs[1:], atol=1e-4)
    assert seen == []


@pytest.mark.slow
def test_the_default_gguf_scores_texts_together_as_alone(smollm_gguf, monkeypatch):
    """The default model (SmolLM2-135M Q4_1): measured 0.0 difference for 8 texts of 9 tokens, 24 of 11-16 and 48
    of 7-8 tokens."""
    texts = ["The key to the cabinets is on the table.", "The keys to the cabinet are on the table.",
             "A dog ran into the old house.", "A cat ran into the old barn.", "Hello"]  # fmt: skip
    _check(smollm_gguf, texts, monkeypatch, 1e-4)


def test_a_group_holds_one_decode_of_logits(tiny_gguf, monkeypatch):
    """llama.cpp hands back every position's logits, so a group of many texts holds at most one llama_decode's
    positions (N_BATCH) at once (40 texts of 122 tokens on the default model raised the peak RSS by 1.5 GB when a
    group could hold 4,096), and each text still equals itself alone."""
    from explorer.engine.llamacpp.engine import N_BATCH
    from explorer.engine.passes import many

    assert many.group_tokens(tiny_gguf) == N_BATCH < many.TOKENS
    seqs = [tiny_gguf.encode(" ".join(["word"] * 30) + " end.")] * 40  # one length: one group, were it not bounded
    n = len(seqs[0])
    groups = list(many.groups([n] * len(seqs), many.group_tokens(tiny_gguf)))
    assert len(groups) > 1 and all(len(g) * n <= N_BATCH for g in groups)
    held: list[int] = []
    real = many.score_group

    def seen(engine, group, **kw):
        held.append(sum(len(s) for s in group))
        return real(engine, group, **kw)

    monkeypatch.setattr(many, "score_group", seen)
    together = score_prompts(tiny_gguf, seqs, 3)
    assert held and max(held) <= N_BATCH
    for ids, r in zip(seqs[:3], together[:3]):
        np.testing.assert_allclose(r.logprobs[1:], score_ids(tiny_gguf, ids, k=3).logprobs[1:], atol=1e-4)
