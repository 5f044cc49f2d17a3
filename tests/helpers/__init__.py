"""What the test modules share: they import it from here, never from one another (pytest rewrites the asserts here).

- `api`: the `openai` client on the module's live server, and the API tests every engine passes;
- `cli`: the command line run as a user runs it;
- `exports`: the checks every completions and `prompt_logprobs` body passes;
- `page`: the page over loaded engines, its handlers driven directly (no browser);
- `shapes`: the shape of every tensor a block of torch code makes;
- `share`: link states, a raw link packer, the page that records what it is asked to load;
- `threads`: many callers at once (`at_once`), as a classroom or an evaluation client asks.

Beside this package, by the same rule: `tests/browser.py` (Chromium, and the page as a person drives it),
`tests/reference.py` (the independent computations), `tests/samples.py` (hand-made results), `tests/recorded.py`
(recorded vLLM bodies), `tests/views.py`, `tests/repo.py`, and the peers' installers and recorders.
"""
