"""Run by tests/helpers/minicons_peer.py in the minicons venv (not the app's): minicons 0.3.39's numbers on texts.

Reads {"model", "texts", "bos_token"} as JSON on stdin; prints one JSON line: per text its token ids (as minicons
encodes them, the BOS included when asked), per-token logprobs (`compute_stats`, the first token unscored), the
space-separated words' summed logprobs (`word_score_tokenized`, split on spaces) without and with
`bow_correction`, and minicons' set of word-starting ids (`bow_subword_idx`), all in nats.
"""

import json
import sys

from minicons import scorer

args = json.loads(sys.stdin.read())
lm = scorer.IncrementalLMScorer(args["model"], "cpu")
texts, bos = args["texts"], args["bos_token"]
encoded, offsets = lm.prepare_text(texts, bos_token=bos)
ids = [
    [i for i, m in zip(row, mask) if m]
    for row, mask in zip(encoded["input_ids"].tolist(), encoded["attention_mask"].tolist())
]
tokens = lm.compute_stats((encoded, offsets))
split = lambda s: s.split(" ")  # noqa: E731
plain = lm.word_score_tokenized(texts, split, bow_correction=False, bos_token=bos)
bow = lm.word_score_tokenized(texts, split, bow_correction=True, bos_token=bos)
print(
    json.dumps(
        {
            "ids": ids,
            "token_logprobs": tokens,
            "words": [[w for w, _ in t] for t in plain],
            "word_logprobs": [[float(s) for _, s in t] for t in plain],
            "word_logprobs_bow": [[float(s) for _, s in t] for t in bow],
            "bow_ids": [int(i) for i in lm.bow_subword_idx],
        }
    )
)
