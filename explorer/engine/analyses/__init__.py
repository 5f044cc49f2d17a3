"""Analyses on top of the passes, one module per view; `analyses/X.py` computes the result type of
explorer/results/X.py (answers, attribution, batch, branch, compare, lens, lookup, step_view, whatif, hidden), and
`guesses` the numbers a lesson asks."""
