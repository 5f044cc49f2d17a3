"""What a view can colour tokens by: the metric names (the heatmap's palettes, a link's `metric`, the page's menu),
the default one, and the default rank thresholds. Here, beside the result types, so the link codec and the
renderers read the same names without one importing the other."""

from __future__ import annotations

METRIC_NAMES = ("logprob", "rank", "probability", "entropy", "surprisal")  # render/heatmap.py's METRICS, in order
DEFAULT_METRIC = "logprob"
DEFAULT_THRESHOLDS = (1, 10, 100, 1000)  # rank bucket edges: top 1, top 10, top 100, top 1000, the rest
