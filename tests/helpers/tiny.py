"""Tiny models built offline in a second: a byte-level BPE tokenizer (GPT-2's kind, with a chat template) and a
SentencePiece-style byte-fallback one, trained in-process on CORPUS; a random 2-layer Llama; a model and tokenizer
saved to a folder or written as one GGUF file. tests/conftest.py builds its fixtures from these."""

from __future__ import annotations

import torch

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris. The capital of Italy is Rome.",
    "def add(a, b):\n    return a + b\n",
    "Logprobs tell you what the model expected, token by token.",
    "Grüße aus München! 東京 is big. Emoji: 👋🙂",
    "<script>alert(1)</script> & <b>bold</b>",
] * 20

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def byte_level_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|user|>", "<|assistant|>", "<|system|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(CORPUS, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    tok.chat_template = CHAT_TEMPLATE
    return tok


def byte_fallback_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tk.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tk.pre_tokenizer = pre_tokenizers.Split("▁", behavior="merged_with_next")
    tk.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens, limit_alphabet=60
    )
    tk.train_from_iterator(CORPUS, trainer)
    bos = tk.token_to_id("<s>")
    tk.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", bos)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def save(model, tok, path):
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def tiny_gpt2(tok, seed: int, scale: float, vocab_size: int | None = None):
    """A random 2-layer GPT-2 (128 positions, width 32) for `tok`, its output layer scaled by `scale`: sharper
    logits than the default init, so ranks and top-k are meaningful."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=vocab_size or len(tok),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(scale)
    return model


def tiny_llama(tok, seed: int, context: int, arch: str = "Llama", **extra):
    """A random 2-layer Llama for `tok`, its output layer scaled so the distributions are not flat; `arch` another
    transformers architecture of the same shape ("Mistral"), `extra` more of its config (sliding_window=8)."""
    import transformers

    torch.manual_seed(seed)
    cfg = getattr(transformers, f"{arch}Config")(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=False,
        **extra,
    )
    model = getattr(transformers, f"{arch}ForCausalLM")(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(30)
    return model


def permute_rope(w, n_head: int):
    """Hugging Face's rotary layout of q/k rows -> llama.cpp's (what convert_hf_to_gguf.py does)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(model, tok, path) -> str:
    """A transformers Llama and a byte-level BPE tokenizer written as one float32 GGUF file (with gguf.GGUFWriter)."""
    import json

    import gguf

    cfg = model.config
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-llama-gguf")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(getattr(cfg, "rope_theta", None) or cfg.rope_parameters["rope_theta"])
    w.add_rope_dimension_count(cfg.hidden_size // cfg.num_attention_heads)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    spec = json.loads(tok.backend_tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    special = {t.content for t in tok.added_tokens_decoder.values()}
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    w.add_bos_token_id(tok.bos_token_id)
    w.add_eos_token_id(tok.eos_token_id)
    w.add_add_bos_token(False)
    w.add_chat_template(tok.chat_template)
    heads, kv = cfg.num_attention_heads, cfg.num_key_value_heads
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v"}
    names |= {"self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up"}
    names |= {"mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    for key, t in model.state_dict().items():
        x = t.detach().float().numpy()
        if key == "model.embed_tokens.weight":
            w.add_tensor("token_embd.weight", x)
        elif key == "model.norm.weight":
            w.add_tensor("output_norm.weight", x)
        elif key == "lm_head.weight":
            w.add_tensor("output.weight", x)
        else:
            i, rest = key.split(".")[2], ".".join(key.split(".")[3:-1])
            if rest in ("self_attn.q_proj", "self_attn.k_proj"):
                x = permute_rope(x, heads if rest.endswith("q_proj") else kv)
            w.add_tensor(f"blk.{i}.{names[rest]}.weight", x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)
