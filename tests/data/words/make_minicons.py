"""Regenerate minicons.json: minicons' per-word summed surprisal (nats) of TEXT on the tiny GPT-2 folder.

Run with a venv that has minicons (never the project's): python make_minicons.py MODEL_DIR > minicons.json
(the tiny model is the one tests/conftest.py's gpt2_dir builds; seeded, so its numbers are fixed).
"""

import json
import sys

from minicons import scorer

TEXT = "The cat sat on the mat and the dog ran far away"  # words split on spaces, as minicons does
m = scorer.IncrementalLMScorer(sys.argv[1], "cpu")
[pairs] = m.word_score_tokenized([TEXT], str.split, bos_token=False, surprisal=True, bow_correction=False)
print(json.dumps({"text": TEXT, "words": [[w, float(s)] for w, s in pairs]}, indent=1))
