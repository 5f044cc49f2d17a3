"""The Python API: `explorer.load(...)` gives an `LM`, whose methods are the page's views on one model.

    import explorer
    lm = explorer.load("HuggingFaceTB/SmolLM2-135M-Instruct")   # engine="auto" | "torch" | "llama.cpp" | a /v1 URL
    s = lm.score("The cat sat on the mat.", k=5, context_start=True)   # a TokenScores
    s.to_pandas(); s.to_json("vllm"); s.to_html(); s.save_html("cat.html"); s   # (in Jupyter: the heatmap)

A face like the CLI and the page: it checks its arguments (an ExplorerError says what to change), then calls the
same engine functions they call (explorer.engine: scoring, generation, word ends, batch, compare, answers,
attribution) and returns their result types. Importing this module loads neither torch nor gradio: the engine is
imported when a model loads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from explorer.errors import ExplorerError

if TYPE_CHECKING:
    import pandas as pd

    from explorer.engine.interface import ModelEngine
    from explorer.results.answers import Answers
    from explorer.results.attribution import Attribution
    from explorer.results.batch import Batch
    from explorer.results.compare import Comparison
    from explorer.results.hidden import HiddenStates
    from explorer.results.scores import TokenScores
    from explorer.results.stimuli import Stimulus
    from explorer.results.word_scores import WordScores
    from explorer.results.word_table import WordTable

ENGINES = ("auto", "torch", "llama.cpp")  # explorer.engine.select.ENGINES, said here so that no torch loads to check
ContextStart = bool | str  # True: the model's document-start token (as the page); a str: "bos", "eos" or a token


def _is_url(value: str | None) -> bool:
    return bool(value) and str(value).lower().startswith(("http://", "https://"))


def load(
    model: str | None = None,
    *,
    engine: str = "auto",
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    api_key: str | None = None,
    tokenizer: str | None = None,
) -> LM:
    """An `LM` for `model` (a hub id or a local folder or .gguf file; None: the default SmolLM2-135M-Instruct).

    `engine`: "auto" (llama.cpp for a .gguf, torch otherwise: explorer/engine/select.py), "torch", "llama.cpp", or
    the URL of a vLLM / OpenAI-compatible server's /v1, which then serves `model` (its first model when None;
    `api_key` and `tokenizer` as the CLI's --backend-key and --backend-tokenizer). A URL given as `model` is the
    same as `engine=URL` with the server's first model. `device` ("cpu", "cuda", "mps" ...) and `dtype`
    ("float32", "bfloat16" ...) apply to a model loaded here.
    """
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise ExplorerError(
            f"`model` must be a hub id, a local folder or file, or a server URL (or None for the default), got "
            f"{model!r}.",
            param="model",
        )
    if not isinstance(engine, str):
        raise ExplorerError(f"`engine` must be one of {', '.join(ENGINES)} or a server URL.", param="engine")
    if _is_url(model) and engine == "auto":
        model, engine = None, str(model)
    if _is_url(engine):
        from explorer.engine import select  # torch loads here, once the arguments are checked

        return LM(select.load(select.EngineSpec(model, select.REMOTE, engine.rstrip("/"), api_key, tokenizer)))
    choice = {"llamacpp": "llama.cpp", "llama_cpp": "llama.cpp", "transformers": "torch"}.get(engine.lower(), engine)
    if choice not in ENGINES:
        raise ExplorerError(
            f"Unknown engine {engine!r}: use auto, torch or llama.cpp, or a server URL (http://host:8000/v1).",
            param="engine",
        )
    if model is not None and model.startswith((".", "/", "~")) and not os.path.exists(os.path.expanduser(model)):
        raise ExplorerError(
            f"There is no model at {model!r}: give the path of a model folder (config.json and weights) or a .gguf "
            "file that exists, or a hub id.",
            param="model",
            code="model_not_found",
        )
    from explorer.engine import select

    path = os.path.expanduser(model) if model is not None else None
    spec = select.EngineSpec(path, choice, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
    return LM(select.load(spec))


def _text(value: object, param: str, verb: str) -> str:
    """`value` when it is a non-empty text, else an ExplorerError that says so."""
    if not isinstance(value, str):
        raise ExplorerError(f"`{param}` must be a text (str), got {type(value).__name__}.", param=param)
    if not value:
        raise ExplorerError(f"`{param}` is empty: give some text to {verb}.", param=param, code="empty_text")
    return value


def stimuli_of(stimuli: object, text_column: str = "text") -> list[Stimulus]:
    """A stimulus list, checked (explorer/results/stimuli.py): from a CSV or JSONL path, a pandas DataFrame, a list
    of records (dicts) or texts, or stimuli already read."""
    from explorer.results.stimuli import MAX_BYTES, Stimulus, from_frame, from_records, read_stimuli

    if isinstance(stimuli, (str, os.PathLike)):
        path = os.fspath(stimuli)
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_BYTES + 1)
        except OSError as e:
            raise ExplorerError(
                f"{path!r}: {e.strerror}; give a CSV or JSONL file that exists.", param="file"
            ) from None
        return read_stimuli(raw, path, text_column)
    if hasattr(stimuli, "to_dict") and hasattr(stimuli, "columns"):
        return from_frame(stimuli, text_column)
    if isinstance(stimuli, Iterable) and not isinstance(stimuli, (bytes, dict)):
        items = list(stimuli)
        if items and all(isinstance(s, Stimulus) for s in items):
            return items
        return from_records(items, text_column)
    raise ExplorerError(
        "`stimuli` must be a CSV or JSONL path, a pandas DataFrame, or a list of records or texts.", param="stimuli"
    )


class LM:
    """One loaded model (any engine: torch, llama.cpp, a served model) and the views of the page as methods.

    Each method checks its arguments, calls the engine function the page's tab and the CLI call, and returns that
    view's result type: `score` and `generate` a TokenScores, `words` WordScores, `score_many` a Batch, `compare`
    a Comparison, `answers` Answers, `why` an Attribution (each with `to_pandas()`), `hidden_states` a HiddenStates
    (a numpy array [tokens, layers, hidden] with its names).
    """

    def __init__(self, engine: ModelEngine):
        self.engine = engine

    @property
    def name(self) -> str:
        """The model's name as results and exports carry it."""
        return self.engine.name

    def __repr__(self) -> str:
        return f"<explorer.LM {self.name!r} ({self.engine.capabilities.engine})>"

    # ---- shared checks --------------------------------------------------------------------------------------
    def _start(self, context_start: ContextStart) -> str | None:
        """The engine's `start` for `context_start`: None (no start), the page's default document token for True
        (the model's end-of-text / document separator, else "eos"), or the named token."""
        if context_start is False or context_start is None:
            return None
        if context_start is True:
            specials = self.engine.special_tokens()
            return specials[0] if specials else "eos"
        if isinstance(context_start, str):
            return context_start
        raise ExplorerError(
            f"`context_start` must be True, False, 'bos', 'eos' or one of the model's special tokens, got "
            f"{context_start!r}.",
            param="context_start",
        )

    @staticmethod
    def _k(k: int, param: str = "k", *, allow_full: bool = True) -> int:
        from explorer.rules.sampler import check_k

        checked = check_k(k, param, allow_full=allow_full)
        if checked is None:
            raise ExplorerError(f"`{param}` must be a whole number, got None.", param=param)
        return checked

    def _ids(self, ids: Sequence[int]) -> list[int]:
        """`ids` as a list of token ids of this model's vocabulary, else an ExplorerError."""
        out = list(ids)
        if not out:
            raise ExplorerError("The token ids are empty: give at least one id.", param="text", code="empty_text")
        top = self.engine.vocab_size
        for i in out:
            if isinstance(i, bool) or not isinstance(i, int) or (top and not 0 <= i < top):
                raise ExplorerError(
                    f"Token id {i!r} is not an id of {self.name}'s vocabulary (0..{top - 1}).",
                    param="text",
                    code="invalid_token_id",
                )
        return out

    # ---- the views --------------------------------------------------------------------------------------------
    def score(self, text: str | Sequence[int], k: int = 5, context_start: ContextStart = False) -> TokenScores:
        """Every token of `text` (or a list of token ids, scored exactly as given) with its logprob, rank, entropy
        and top-`k` alternatives (0..20, -1: the full vocabulary), as `logprob-explorer score` gives it.

        `context_start`: True puts the model's document-start token before the text (the page's *Score from the
        start of a document*) so its first token is scored too; "bos", "eos" or a special token's text name one.
        """
        k = self._k(k)
        from explorer.engine import score_ids, score_text

        if not isinstance(text, str):
            if self._start(context_start) is not None:
                raise ExplorerError(
                    "`context_start` applies to a text: with token ids, put the start token's id first.",
                    param="context_start",
                )
            return score_ids(self.engine, self._ids(text), k)
        return score_text(self.engine, _text(text, "text", "score"), k, start=self._start(context_start))

    def generate(
        self,
        prompt: str | list[dict],
        max_tokens: int | None = None,
        temperature: float | None = None,
        *,
        stop: Sequence[str] | str = (),
        **sampler: Any,
    ) -> TokenScores:
        """Sample from `prompt` (a text, or chat messages [{"role", "content"}, ...] through the chat template),
        every generated token with its logprob, rank, entropy and top-`logprobs` alternatives (0..20), as
        `logprob-explorer generate` gives it. Every field of explorer.rules.sampler.SamplerSettings is an argument
        by its name, with its default there (max_tokens 32, temperature 1, top_p, top_k, min_p, the penalties,
        seed, logprobs 5, prompt_logprobs, mode, ...): `temperature` 0 is greedy; `seed` makes sampling
        repeatable; `prompt_logprobs` also scores the prompt; `mode` "raw" (the model's distribution) or
        "processed" (after the sampler). `max_tokens` and `temperature` may come by position (None: the default)."""
        from explorer.rules.sampler import SamplerSettings

        known = {f for f in SamplerSettings.__dataclass_fields__ if f != "n"}
        unknown = sorted(set(sampler) - known)
        if unknown:
            raise ExplorerError(
                f"Unknown sampler setting {unknown[0]!r}: use one of {', '.join(sorted(known))}.", param=unknown[0]
            )
        given: dict[str, Any] = {
            k: v for k, v in (("max_tokens", max_tokens), ("temperature", temperature)) if v is not None
        }
        s = SamplerSettings(**given, **sampler, stop=(stop,) if isinstance(stop, str) else tuple(stop))
        from explorer.engine import generate

        if isinstance(prompt, list):
            if not prompt or not all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in prompt):
                raise ExplorerError(
                    "Chat messages must be a non-empty list of {'role': ..., 'content': ...} dicts.", param="prompt"
                )
            ids = self.engine.encode_chat(prompt)
        else:
            ids = self.engine.encode(_text(prompt, "prompt", "continue"))
        return generate(self.engine, ids, s)[0]

    def hidden_states(
        self,
        text: str | Sequence[int],
        layers: Sequence[int | str] | None = None,
        positions: str | Sequence[int] = "all",
        context_start: ContextStart = False,
    ) -> HiddenStates:
        """The residual stream of `text` (or token ids, read exactly as given): a HiddenStates whose `values` is a
        numpy array (tokens, layers, hidden) float32, with `layers`, `hook_names` (TransformerLens's), `token_ids`
        and `positions`, from the forward passes that score the text (the API's `return_hidden_states`).

        `layers`: Hugging Face's numbering (0 = the embeddings' output, k = after k blocks, negative from the end)
        and "final_norm" (the final norm's output); None: all of them. `positions`: "all" (every token), "last",
        or (start, end), end excluded. `context_start` as in `score`. Torch engine only (an ExplorerError says so);
        no server caps here: memory is tokens x layers x hidden x 4 bytes.
        """
        from explorer.engine.analyses.hidden import local_engine, read_states
        from explorer.engine.passes.scoring import text_ids

        engine = local_engine(self.engine, "hidden_states")  # refuse before tokenizing
        if isinstance(text, str):
            ids, _ = text_ids(engine, _text(text, "text", "read"), self._start(context_start))
        elif self._start(context_start) is not None:
            raise ExplorerError(
                "`context_start` applies to a text: with token ids, put the start token's id first.",
                param="context_start",
            )
        else:
            ids = self._ids(text)
        return read_states(engine, ids, None if layers is None else list(layers), positions)

    def words(self, text: str, context_start: ContextStart = False) -> WordScores:
        """Per-word surprisal of `text`: each word's summed logprob and the corrected one (Pimentel & Meister 2024:
        including that the word ends there), as `logprob-explorer words` gives it. Needs a model loaded here."""
        from explorer.engine.passes.word_ends import score_text_words
        from explorer.results.word_scores import WordScores
        from explorer.results.words import leading, with_ends, words

        r, ends = score_text_words(self.engine, _text(text, "text", "split into words"), 1, self._start(context_start))
        return WordScores(r, with_ends(words(r), ends), leading(ends.special))

    def word_table(self, stimuli: object, context_start: ContextStart = False, text_column: str = "text") -> WordTable:
        """The per-word table of a stimulus list (a CSV or JSONL path, a pandas DataFrame, a list of records or
        texts; explorer/results/stimuli.py says the columns and regions): each text scored alone exactly as `words`
        scores it, its rows carrying the input's own columns. Every row is checked before the first is scored."""
        from explorer.engine.analyses.batch import fill_word_table
        from explorer.results.word_table import WordTable

        items = stimuli_of(stimuli, text_column)
        table = WordTable(self.name)
        for _ in fill_word_table(self.engine, items, self._start(context_start), table):
            pass
        return table

    def words_many(
        self, stimuli: object, context_start: ContextStart = False, text_column: str = "text"
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(words, regions): `word_table(...)` as two DataFrames, one row per word of every text (the input's own
        columns, row, word_index, word_text, region, then the Words view's columns) and one row per region (its
        words' sums). `logprob-explorer words --file` writes the same tables."""
        table = self.word_table(stimuli, context_start, text_column)
        return table.to_pandas(), table.regions_pandas()

    def score_many(
        self, texts: Iterable[str], context_start: ContextStart = False, min_k_percent: float = 20.0
    ) -> Batch:
        """Many texts, each scored exactly as `score` scores it alone, one row per text (tokens, total and mean
        logprob, perplexity, the text statistics), as the Batch tab and `logprob-explorer batch` give them. A text
        that cannot be scored (empty, too long) gets its reason in its row's `error`."""
        from explorer.engine.analyses.batch import run_batch
        from explorer.results.batch import MAX_TEXTS, BatchItem

        if isinstance(texts, str):
            raise ExplorerError("`texts` is one text: pass a list of texts (or use score).", param="texts")
        items = list(texts)
        if not items:
            raise ExplorerError("`texts` is empty: give a list of texts to score.", param="texts", code="empty_text")
        if len(items) > MAX_TEXTS:
            raise ExplorerError(f"At most {MAX_TEXTS} texts at once, got {len(items)}: split them.", param="texts")
        bad = next((i for i, t in enumerate(items) if not isinstance(t, str)), None)
        if bad is not None:
            raise ExplorerError(f"`texts[{bad}]` is not a text: {items[bad]!r}.", param="texts")
        batch = [BatchItem(line=i + 1, text=t, id=str(i)) for i, t in enumerate(items)]
        return run_batch(self.engine, batch, self._start(context_start), min_k_percent)

    def compare(self, other: LM, text: str, k: int = 5) -> Comparison:
        """This model (a) and `other` (b) on `text`: per token both logprobs and ranks, KL both ways and
        Jensen-Shannon (nats); models with different tokenizers per aligned character span. As the Compare tab."""
        from explorer.engine.analyses.compare import compare_text

        if not isinstance(other, LM):
            raise ExplorerError("`other` must be another model: explorer.load(...).", param="other")
        return compare_text(self.engine, other.engine, _text(text, "text", "compare"), self._k(k, allow_full=False))

    def compare_prompts(self, prompt_a: str, prompt_b: str, continuation: str, k: int = 5) -> Comparison:
        """The same `continuation` after two prompts (either may be ""), token by token, as the Compare tab."""
        from explorer.engine.analyses.compare import compare_prompt_texts

        return compare_prompt_texts(
            self.engine, prompt_a, prompt_b, _text(continuation, "continuation", "score"), self._k(k, allow_full=False)
        )

    def answers(self, prompt: str, answers: Sequence[str | Sequence[str]]) -> Answers:
        """Which answer the model prefers after `prompt`: each answer a text or a list of variant texts (a leading
        space is part of the token: [" Paris", " paris"]), its probability summed over the variants, raw and
        normalised over the set. As the Answers tab and `logprob-explorer answers`."""
        from explorer.engine.analyses.answers import score_answers

        sets = [[a] if isinstance(a, str) else list(a) for a in answers]
        return score_answers(self.engine, _text(prompt, "prompt", "continue"), sets)

    def why(
        self,
        text: str,
        position: int = -1,
        *,
        contrast: int | str | None = None,
        method: str = "occlusion",
        units: str = "token",
        **settings: Any,
    ) -> Attribution:
        """Why the model expected token `position` of `text` (-1: the last; or rather than `contrast`, a token id
        or its one-token text): each earlier token's (or word's, `units="word"`) share of its logprob, by
        `method` (occlusion, ig, gxi, attention), as the Why tab and `logprob-explorer why`. More settings of
        explorer.engine.analyses.attribution.attribute (detail, mode, steps, baseline, layers, neutral) go in `settings`."""
        from explorer.engine.analyses.attribution import DETAIL, attribute
        from explorer.engine.passes.scoring import score_text

        r = score_text(self.engine, _text(text, "text", "explain"), 0)
        pos = position + r.n if isinstance(position, int) and position < 0 else position
        if isinstance(position, bool) or not isinstance(position, int) or not 1 <= pos < r.n:
            raise ExplorerError(
                f"`position` {position!r} is outside the text: it has {r.n} tokens, so positions 1..{r.n - 1} "
                f"(or -1..-{r.n - 1} from the end) have text before them.",
                param="position",
            )
        settings.setdefault("detail", DETAIL)
        return attribute(self.engine, r, pos, contrast=self._token(contrast), method=method, units=units, **settings)

    def _token(self, value: int | str | None) -> int | None:
        """The one token id `value` names (an id, or a text that is exactly one token)."""
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        ids = self.engine.tokenize(_text(value, "contrast", "compare with"), add_special_tokens=False)
        if len(ids) != 1:
            raise ExplorerError(
                f"`contrast` {value!r} is {len(ids)} tokens of {self.name}: give one token's text or its id.",
                param="contrast",
            )
        return int(ids[0])


__all__ = ["LM", "load"]
