"""Every tool tab's view of TEXT on the tiny models, as its HTML file (explorer/notebook/views.py) and its result:
shared by tests/test_view_files.py and the browser test that opens the files."""

from __future__ import annotations

from explorer.engine.analyses.batch import run_batch
from explorer.engine.analyses.branch import Prefixes, grow, plant
from explorer.engine.analyses.lens import lens_ids
from explorer.notebook import views
from explorer.notebook.lm import LM
from explorer.results.batch import BatchItem
from explorer.rules.sampler import SamplerSettings

TEXT = "The cat sat on the mat because it was warm."


def view_files(gpt2, llama) -> dict[str, tuple[str, object]]:
    """name -> (the view's HTML file, its result)."""
    lm = LM(gpt2)
    ws = lm.words(TEXT, context_start=True)
    c = lm.compare(lm, TEXT)  # the same model twice: a paired comparison
    c2 = lm.compare(LM(llama), TEXT)  # different tokenizers: spans
    res = lm.answers("The capital of France is", [[" Paris", " paris"], " London", " Rome"])
    a = lm.why(TEXT, -1)
    g = lens_ids(gpt2, gpt2.encode(TEXT), k=5)
    prefixes = Prefixes(gpt2.name)
    tree = plant(gpt2, prefixes, gpt2.encode(TEXT))
    tree, _ = grow(gpt2, prefixes, tree, 5, int(tree.top_ids[5][1]), SamplerSettings(max_tokens=3, temperature=0))
    texts = [TEXT, "The capital of France is Paris.", "x"]
    b = run_batch(gpt2, [BatchItem(i + 1, t, f"t{i}") for i, t in enumerate(texts)], start="<|endoftext|>")
    return {
        "batch": (views.batch_page(b), b),
        "words": (views.words_page(ws.scores, ws.words, ws.lead), ws),
        "compare": (views.compare_page(c, "js"), c),
        "compare-spans": (views.compare_page(c2), c2),
        "answers": (views.answers_page(res), res),
        "why": (views.why_page(a), a),
        "lens": (views.lens_page(g), g),
        "branch": (views.branch_page(tree), tree),
    }
