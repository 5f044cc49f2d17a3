"""The llama.cpp engine: a GGUF model run by llama.cpp (`engine`), its KV sequences for continuous batching
(`sequences`), GGUF files and their tokenizer (`gguf`)."""
