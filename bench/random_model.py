"""A random Llama shaped like SmolLM2-135M (30 blocks, 576 wide, float32), saved to a folder with the tests' tiny
byte-level tokenizer: a model of the default's cost per token that needs no download.

    python bench/random_model.py /tmp/random-135m
    python bench/run.py --model /tmp/random-135m --only hidden --json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from tests.helpers.tiny import byte_level_tokenizer


def main(out: str) -> int:
    tok = byte_level_tokenizer()
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(cfg).eval().save_pretrained(out)
    tok.save_pretrained(out)
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
