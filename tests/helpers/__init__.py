"""What the test modules share: they import it from here, never from one another or from tests/conftest.py, and
never a `_private` name (tests/test_helpers_home.py holds them to it; pytest rewrites the asserts here).

- `api`: the `openai` client on the module's live server, and the API tests every engine passes;
- `browser`: Chromium, and the page as a person drives it;
- `cli`: the command line run as a user runs it;
- `exports`: the checks every completions and `prompt_logprobs` body passes;
- `page`: the page over loaded engines (or one tab alone), its handlers driven directly (no browser);
- `reference`: the independent plain-torch computations every number is compared with;
- `repo`: the repository's own files;
- `rooms_load`: a classroom of clients guessing at once;
- `samples`: hand-made results (the golden JSON's inputs); `scores_match`: two results' numbers compared;
- `servers`: the app served in this process or a second one;
- `shapes`: the shape of every tensor a block of torch code makes;
- `share`: link states, a raw link packer, the page that records what it is asked to load;
- `threads`: many callers at once (`at_once`), as a classroom or an evaluation client asks;
- `tiny`: the tiny models and tokenizers built offline (tests/conftest.py makes its fixtures of them);
- `views`: every tool tab's HTML view on the tiny models;
- the peers: `vllm_peer`, `vllm_requests`, `vllm_record` (a script too: `python tests/helpers/vllm_record.py`),
  `recorded` (the recorded vLLM bodies), `shape_diff`, `lmeval_peer`, `zerogpu` and `zerogpu_serve` (run as
  `python -m tests.helpers.zerogpu_serve`).
"""
