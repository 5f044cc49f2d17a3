"""The live page (`logprob-explorer site --live`) in real headless Chromium on the default model's GGUF, served on
loopback with the two cross-origin isolation headers (several threads) and without them (one thread): its token ids
equal the llama.cpp engine's on the same file; per-token logprobs within 0.5 nats at most and 0.1 on average (wllama's
WebAssembly kernels against native ones); the top guess equal at >= 90% of positions; a 20-token greedy generation
equal to the engine's (flash attention on both sides); a bad model URL and a file that is not a GGUF get plain
messages; no page error; a fixed view links to it; screenshots at 1366x768 and 390x844."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.engine import generate, score_text
from explorer.notebook.live import LiveOptions
from explorer.notebook.site import build_site
from explorer.rules.sampler import SamplerSettings
from tests.helpers.browser import require_chromium, screens_dir
from tests.helpers.live_page import open_live, run, served

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.slow]
TEXTS = (
    "The quick brown fox jumps over the lazy dog. Scientists found that sleep helps the brain keep new memories.",
    "def add(a, b):\n    return a + b\n\nprint(add(2, 3))  # prints 5",
)
PROMPT = "The three primary colours are"
SERVER = "https://example.org/logprob-explorer"  # the server's page, linked where the browser cannot run the model
NO_MEMORY64 = """(() => { const M = WebAssembly.Memory;
  WebAssembly.Memory = function (d) { if (d && d.address === 'i64') throw new TypeError('no memory64'); return new M(d); };
})();"""  # a browser without WebAssembly Memory64 (Safari's today)
WIDE, PHONE = {"width": 1366, "height": 768}, {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def site(smollm_gguf, tmp_path_factory):
    """A site with one fixed view (the first text, scored by the engine) and the live page, the GGUF beside it."""
    root = tmp_path_factory.mktemp("live-site")
    view = root / "fox.json"
    view.write_text(json.dumps(score_text(smollm_gguf, TEXTS[0], k=5).to_dict()))
    out = root / "site"
    live = LiveOptions("SmolLM2-135M-Instruct", smollm_gguf.path, server_url=SERVER)
    build_site(str(out), [str(view)], "Live test", live=live)
    (out / "not-a-model.gguf").write_text("this is text, not a model\n")
    return str(out)


def agree(page_result: dict, ref) -> None:
    """The page's numbers against the engine's result `ref` on the same text (see the module)."""
    assert page_result["token_ids"] == ref.token_ids.tolist()
    lp = np.array(page_result["logprobs"][1:], dtype=np.float64)
    diff = np.abs(lp - ref.logprobs[1:].astype(np.float64))
    assert diff.max() <= 0.5 and diff.mean() <= 0.1, (diff.max(), diff.mean())
    top1 = np.array([row[0] for row in page_result["top_ids"][1:]]) == ref.top_ids[1:, 0]
    assert top1.mean() >= 0.9, top1.mean()
    assert not page_result["underflow"]["positions"] or min(lp) < -90  # only far-down tokens can underflow
    assert "WebAssembly" in page_result["engine"]


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "plain"])
def test_scores_like_the_engine(browser, site, smollm_gguf, isolate, tmp_path):
    with served(site, isolate) as base:
        ctx = browser.new_context(viewport=WIDE)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        status = open_live(page, base)
        assert status.startswith("Ready") and "computed in your browser (llama.cpp, WebAssembly)" in status, status
        threads = page.locator("#live-threads").inner_text()
        assert ("2 threads" in threads or "cross-origin isolated" in threads) if isolate else "1 thread" in threads
        for text in TEXTS:
            agree(run(page, text), score_text(smollm_gguf, text, k=5))
        summary = page.locator("#live-summary").inner_text()
        assert "computed in your browser (llama.cpp, WebAssembly)" in summary
        if isolate:  # the card and the detail: the page's own renderer on the browser's numbers
            page.locator('#heatmap [data-pos="3"]').hover()
            assert "position 3" in page.locator("#lx-card").inner_text()
            page.locator('#heatmap [data-pos="3"]').click()
            page.locator('.lx-detail .td[data-pos="3"]').wait_for(timeout=5000)
            shots = screens_dir(tmp_path)
            page.screenshot(path=str(shots / "live-page-wide.png"))
            page.set_viewport_size(PHONE)
            page.screenshot(path=str(shots / "live-page-phone.png"), full_page=True)
        ctx.close()
        assert not errors, errors


def test_greedy_generation_like_the_engine(browser, site, smollm_gguf):
    ref = generate(smollm_gguf, smollm_gguf.encode(PROMPT), SamplerSettings(max_tokens=20, temperature=0))[0]
    with served(site, True) as base:
        ctx = browser.new_context(viewport=WIDE)
        page = ctx.new_page()
        open_live(page, base)
        got = run(page, PROMPT, "generate", max=20, temp=0)
        assert got["n_prompt"] == ref.n_prompt
        assert got["token_ids"][got["n_prompt"] :] == ref.token_ids[ref.n_prompt :].tolist()
        assert page.locator("#heatmap .role.reply").count() == 1  # the generated part marked, as the server's page
        page.close()
        # a second visit: the model comes from the browser's cache (only the 4-byte GGUF check goes out)
        again = ctx.new_page()
        fetched: list[str] = []
        again.on(
            "request", lambda r: fetched.append(r.url) if r.url.endswith(".gguf") and "range" not in r.headers else None
        )
        assert open_live(again, base).startswith("Ready")
        assert fetched == []
        ctx.close()


@pytest.mark.parametrize(
    ("query", "words"),
    [("?model=missing.gguf", "could not be downloaded"), ("?model=not-a-model.gguf", "is not a GGUF model")],
    ids=["missing", "not-gguf"],
)
def test_bad_model_says_so(browser, site, query, words):
    with served(site, False) as base:
        page = browser.new_page(viewport=WIDE)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        status = open_live(page, base, query, timeout_s=60)
        assert words in status, status
        assert page.locator("#live-score").is_disabled()
        page.close()
        assert not errors, errors


def test_a_model_from_the_link_is_named_by_its_file_not_as_the_site_s_model(browser, site):
    """?model=URL runs another GGUF: the page names that file and says it is not the site's model, so a crafted link
    cannot show another model's numbers under the author's model's name."""
    with served(site, False) as base:
        page = browser.new_page(viewport=WIDE)
        status = open_live(page, base, "?model=./model.gguf")
        assert status.startswith("Ready: model.gguf (the link's ?model=, not SmolLM2-135M-Instruct)"), status
        page.close()


def test_fixed_view_links_to_the_live_page(browser, site):
    with served(site, False) as base:
        page = browser.new_page(viewport=WIDE)
        page.goto(base + "index.html")
        page.get_by_role("link", name="fox").click()
        page.get_by_role("link", name="Try your own sentence").click()
        page.wait_for_url("**/live.html?text=*")
        assert page.locator("#live-text").input_value() == TEXTS[0]
        page.close()


def test_too_long_text_says_so(browser, site):
    with served(site, False) as base:
        page = browser.new_page(viewport=WIDE)
        open_live(page, base)
        got = run(page, "word " * 2100)
        assert got["error"].startswith("Too long: the text is 2,1") or got["error"].startswith(
            "Too long: the text is 21"
        )
        assert "holds 2048: shorten it" in got["error"], got
        page.close()


def test_no_memory64_says_so(browser, site):
    with served(site, False) as base:
        page = browser.new_page(viewport=WIDE)
        page.add_init_script(NO_MEMORY64)
        status = open_live(page, base, timeout_s=30)
        assert "no WebAssembly Memory64" in status and SERVER in status, status
        assert page.get_by_role("link", name=SERVER).count() == 1
        page.close()
