"""Numeric kernels on logits, no model: statistics (`metrics`), the sampler (`sampling`), listed ids (`listed`)."""
