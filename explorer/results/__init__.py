"""The result types: numpy records of what the engine computed, one per view (no torch, no gradio).

`scores.TokenScores` is the central one (every token's logprob, rank, entropy and top-k); beside it the
smaller results of the tool tabs: compare, lens, lookup, step_view, branch (the branch tree), whatif,
words, attribution. Exporters and renderers are pure functions of these."""
