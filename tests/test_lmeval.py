"""EleutherAI's lm-evaluation-harness scores the same both ways: `local-completions` on our /v1/completions (our
server in a second process, its tokenizer read through /tokenizer_info and /tokenize) and `hf` in process on the
same folder. Small local tasks (tests/data/lmeval/): 60 multiple-choice questions, 21 paragraphs and one long
essay in rolling windows of the same length both ways. `make test-lmeval`; tests/helpers/lmeval_peer.py installs lm-eval.

Both sides run the model in float32 on the CPU, and two things differ (measured on " Canberra", one token, against
float64 log_softmax of transformers' own logits over the whole text): our logits come from the body once and the
output layer in blocks of 64 rows, transformers' from one output layer over every position, and float32 products
blocked differently round differently (ours 3.4e-5 nats off, with an exact log-softmax); lm-eval's `hf` path takes
log_softmax of float32 logits in float32, in its own batch (2.3e-5 off). So a token's logprob may differ by up to
about 6e-5 both ways (5.7e-5 measured). Hence the tolerances: the contract's 1e-4 nats per token, summed over a
multiple-choice continuation's tokens; 1e-4 relative on a paragraph's or the essay's total and on perplexities.
"""

from __future__ import annotations

import json
import math

import httpx
import pytest

from tests.helpers.lmeval_peer import TASKS, Run, Unavailable, run_lmeval, venv_python
from tests.helpers.servers import ServerProcess

pytestmark = pytest.mark.lmeval

WINDOW = 1024  # tokens per rolling window, both ways: the essay takes five
# lm-eval keeps one token of `max_length` for generation on an API model, and one more for the window's context
API_MAX_LENGTH = WINDOW + 2
PERPLEXITIES = ("word_perplexity", "byte_perplexity", "bits_per_byte")
REL = 1e-4


@pytest.fixture(scope="module")
def runs(default_model_dir, tmp_path_factory) -> dict[str, Run]:
    """lm-eval both ways on the three tasks: {"api": local-completions on our server, "hf": in process}."""
    try:
        venv_python()
    except Unavailable as why:
        pytest.skip(f"lm-eval cannot run here: {why}")
    out = tmp_path_factory.mktemp("lmeval")
    tasks = ["lx_facts", "lx_paragraphs", "lx_long"]
    server = ServerProcess(default_model_dir)
    try:
        served = httpx.get(server.url + "/v1/models", timeout=30).json()["data"][0]["id"]
        api_args = {"base_url": server.url + "/v1/completions", "model": served, "num_concurrent": 1}
        api_args |= {"max_retries": 1, "max_length": API_MAX_LENGTH}  # no `tokenizer`: lm-eval asks the server
        api = run_lmeval("local-completions", api_args, tasks, out / "api")
    finally:
        server.stop()
    hf_args = {"pretrained": default_model_dir, "dtype": "float32", "max_length": WINDOW}
    hf = run_lmeval("hf", hf_args, tasks, out / "hf", device="cpu")
    summary = {side: {"seconds": round(r.seconds, 1), **r.results} for side, r in (("api", api), ("hf", hf))}
    print(f"\nlm-eval both ways (outputs in {out}):", json.dumps(summary, indent=1))  # for `pytest -s`
    return {"api": api, "hf": hf}


def choices(sample: dict) -> list[tuple[float, bool]]:
    """(loglikelihood, is_greedy) of each choice of one logged multiple-choice sample (lm-eval logs them as text)."""
    return [(float(ll), greedy == "True") for ll, greedy in sample["filtered_resps"]]


def test_lm_eval_tokenizes_through_our_tokenizer_info(runs):
    """With /tokenizer_info answered (eos_token in it) and /tokenize working, lm-eval picks its remote tokenizer:
    every id it sends was made by our /tokenize, and the rolling windows start with the BOS it read there."""
    log = runs["api"].log
    assert "Auto-detected remote tokenizer support. Using remote tokenizer backend." in log, log[-3000:]
    assert "Remote tokenizer not supported" not in log


def continuation_tokens(tokenizer, sample: dict) -> list[int]:
    """How many tokens each choice's continuation is, as lm-eval splits it (the whole minus the context)."""
    args = sample["arguments"]
    out = []
    for i in range(len(args)):
        context, continuation = args[f"gen_args_{i}"]["arg_0"], args[f"gen_args_{i}"]["arg_1"]
        whole, head = tokenizer(context + continuation)["input_ids"], tokenizer(context)["input_ids"]
        out.append(len(whole) - len(head))
    return out


def test_multiple_choice_is_the_same_both_ways(runs, default_model_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(default_model_dir)
    api, hf = runs["api"], runs["hf"]
    a, b = api.samples["lx_facts"], hf.samples["lx_facts"]
    assert len(a) == len(b) == 60 and [s["doc_id"] for s in a] == [s["doc_id"] for s in b]
    worst = 0.0  # nats per continuation token
    for sa, sb in zip(a, b):
        ca, cb = choices(sa), choices(sb)
        assert len(ca) == len(cb) == 4
        sizes = continuation_tokens(tokenizer, sa)
        assert min(sizes) >= 1
        worst = max(worst, *(abs(x[0] - y[0]) / n for x, y, n in zip(ca, cb, sizes)))
        assert [g for _, g in ca] == [g for _, g in cb], f"is_greedy differs on question {sa['doc_id']}"
        assert (sa["acc"], sa["acc_norm"]) == (sb["acc"], sb["acc_norm"]), f"question {sa['doc_id']}"
    assert worst <= 1e-4, f"a choice's loglikelihood differs by {worst:.2e} nats a token"
    for metric in ("acc,none", "acc_norm,none"):
        assert api.results["lx_facts"][metric] == hf.results["lx_facts"][metric], metric
    print(f"\nmax |Δ loglikelihood| a token over {4 * len(a)} choices: {worst:.2e} nats")


@pytest.mark.parametrize("task", ["lx_paragraphs", "lx_long"])
def test_perplexities_are_the_same_both_ways(runs, task):
    api, hf = runs["api"], runs["hf"]
    a, b = api.samples[task], hf.samples[task]
    assert len(a) == len(b) == (21 if task == "lx_paragraphs" else 1)
    for sa, sb in zip(a, b):
        la, lb = float(sa["filtered_resps"][0]), float(sb["filtered_resps"][0])
        assert math.isclose(la, lb, rel_tol=REL), f"document {sa['doc_id']}: {la} vs {lb}"
    for metric in PERPLEXITIES:
        x, y = api.results[task][f"{metric},none"], hf.results[task][f"{metric},none"]
        assert math.isclose(x, y, rel_tol=REL), f"{task} {metric}: {x} (API) vs {y} (in process)"


def test_the_essay_spans_several_windows(smollm):
    """The long task is long: more than four windows' worth of tokens, so both ways roll over it."""
    text = json.loads((TASKS / "long.jsonl").read_text())["text"]
    assert len(smollm.tokenizer(text, add_special_tokens=False)["input_ids"]) > 4 * WINDOW
