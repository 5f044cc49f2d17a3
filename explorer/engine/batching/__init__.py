"""Continuous batching of a served local model: the scheduler thread (`scheduler`) and the rows it decodes
together (`slots`: a Batch of slots, torch's padded KV cache)."""
