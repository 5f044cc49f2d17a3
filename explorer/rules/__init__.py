"""The rules every face shares, below the engine: what a request may ask (`sampler.py`: SamplerSettings, the
top-k counts, the version a request is answered under)."""
