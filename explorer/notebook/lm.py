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
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from explorer.errors import ExplorerError

if TYPE_CHECKING:
    import pandas as pd

    from explorer.engine.interface import ModelEngine
    from explorer.engine.select import EngineSpec
    from explorer.results.answers import Answers
    from explorer.results.attribution import Attribution
    from explorer.results.batch import Batch
    from explorer.results.branch import BranchTree
    from explorer.results.compare import Comparison
    from explorer.results.hidden import HiddenStates
    from explorer.results.lens import LensGrid
    from explorer.results.lookup import Lookups
    from explorer.results.scores import TokenScores
    from explorer.results.stimuli import Stimulus
    from explorer.results.word_scores import WordScores
    from explorer.results.word_table import WordTable

ENGINES = ("auto", "torch", "llama.cpp")  # explorer.engine.select.ENGINES, said here so that no torch loads to check
ContextStart = bool | str | int  # True / "document" / "bos" / "eos": the model's document start; a token or id


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
    shown = select.display_name(path)  # the default model's id, not its copy's site-packages path
    spec = select.EngineSpec(path, choice, device=device, dtype=dtype, trust_remote_code=trust_remote_code, name=shown)
    try:
        return LM(select.load(spec), spec=spec)
    except ExplorerError as e:
        raise in_python(e) from None


CLI_WORDS = (
    (re.compile(r"(?:load it |serve the model(?:'s folder)? (?:here )?)?with --engine (torch|llama\.cpp)", re.I),
     r'with explorer.load(..., engine="\1")'),
    (re.compile(r"(?:use|or use) --engine (torch|llama\.cpp)"), r'use explorer.load(..., engine="\1")'),
    (re.compile(r"a remote server \(--backend\)"), "a served model (explorer.load(..., engine=URL))"),
    (re.compile(r" \(this server's --max-logprobs\)"), ""),  # no server in Python
)  # fmt: skip  # the engine's messages name the command line's flags; in Python they name load()'s arguments


def in_python(e: ExplorerError) -> ExplorerError:
    """`e` with the command-line flags its message names said as the Python arguments that do the same."""
    message = e.message
    for pattern, words in CLI_WORDS:
        message = pattern.sub(words, message)
    return e if message == e.message else ExplorerError(message, param=e.param, code=e.code)


def _text(value: object, param: str, verb: str) -> str:
    """`value` when it is a non-empty text, else an ExplorerError that says so."""
    if not isinstance(value, str):
        raise ExplorerError(f"`{param}` must be a text (str), got {type(value).__name__}.", param=param)
    if not value:
        raise ExplorerError(f"`{param}` is empty: give some text to {verb}.", param=param, code="empty_text")
    return value


def stimuli_of(stimuli: object, text_column: str = "text", capped: bool = True) -> list[Stimulus]:
    """A stimulus list, checked (explorer/results/stimuli.py): from a CSV or JSONL path, a pandas DataFrame, a list
    of records (dicts) or texts, or stimuli already read; `capped` False: a file of any size (`words --file` to csv
    or jsonl, written row by row)."""
    from explorer.results.stimuli import MAX_BYTES, Stimulus, from_frame, from_records, read_stimuli

    if isinstance(stimuli, (str, os.PathLike)):
        path = os.fspath(stimuli)
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_BYTES + 1) if capped else f.read()
        except OSError as e:
            raise ExplorerError(
                f"{path!r}: {e.strerror}; give a CSV or JSONL file that exists.", param="file"
            ) from None
        return read_stimuli(raw, path, text_column, capped)
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

    def __init__(self, engine: ModelEngine, spec: EngineSpec | None = None):
        self.engine = engine
        self.spec = spec  # what loaded it (None: an engine built elsewhere): its torch twin loads the same weights
        self.twin: ModelEngine | None = None  # the torch engine on the same weights, loaded on first use (`_local`)

    @property
    def name(self) -> str:
        """The model's name as results and exports carry it."""
        return self.engine.name

    def __repr__(self) -> str:
        return f"<explorer.LM {self.name!r} ({self.engine.capabilities.engine})>"

    # ---- shared checks --------------------------------------------------------------------------------------
    def _start(self, context_start: ContextStart) -> str | None:
        """The engine's `start` for `context_start`: None (no start), "document" for True (the token the model was
        trained to see at a document's start: explorer/engine/text/context_start.py), or the named token or id."""
        if context_start is False or context_start is None:
            return None
        if context_start is True:
            return "document"
        if isinstance(context_start, str):
            return context_start
        if isinstance(context_start, int):
            return str(context_start) if context_start >= 0 else f"-{-context_start}"
        raise ExplorerError(
            f"`context_start` must be True, False, 'document', one of the model's special tokens or a token id, got "
            f"{context_start!r}.",
            param="context_start",
        )

    @staticmethod
    def _k(k: int, param: str = "k", *, allow_full: bool = True) -> int:
        from explorer.rules.sampler import check_k

        try:
            checked = check_k(k, param, allow_full=allow_full)
        except ExplorerError as e:
            raise in_python(e) from None
        if checked is None:
            raise ExplorerError(f"`{param}` must be a whole number, got None.", param=param)
        return checked

    def _ids(self, ids: Sequence[int]) -> list[int]:
        """`ids` as a list of token ids of this model's vocabulary, else an ExplorerError."""
        if isinstance(ids, (bytes, bytearray, dict, set)) or not hasattr(ids, "__iter__"):
            raise ExplorerError(
                f"`text` must be a text (str) or a list of token ids, got {type(ids).__name__}.", param="text"
            )
        out = [i.item() if hasattr(i, "item") and not isinstance(i, (bool, int)) else i for i in ids]  # numpy's ids
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

    def _ids_of(self, engine, text: str | Sequence[int], context_start: ContextStart, verb: str) -> list[int]:
        """The ids `engine` reads for `text` after `context_start`; token ids as given (no start may be asked)."""
        from explorer.engine.passes.scoring import text_ids

        if isinstance(text, str):
            return text_ids(engine, _text(text, "text", verb), self._start(context_start))[0]
        if self._start(context_start) is not None:
            raise ExplorerError(
                "`context_start` applies to a text: with token ids, put the start token's id first.",
                param="context_start",
            )
        return self._ids(text)

    # ---- the views --------------------------------------------------------------------------------------------
    def score(self, text: str | Sequence[int], k: int = 5, context_start: ContextStart = False) -> TokenScores:
        """Every token of `text` (or a list of token ids, scored exactly as given) with its logprob, rank, entropy
        and top-`k` alternatives (0..20, -1: the full vocabulary), as `logprob-explorer score` gives it.

        `context_start`: True puts the model's document-start token before the text (the page's *Score from the
        start of a document*) so its first token is scored too: the token the model was trained to see there (SmolLM2's
        `<|endoftext|>`; nothing where the tokenizer adds a BOS itself), as "document", "bos" and "eos" do; any
        other special token (a chat turn's `<|im_start|>`) only by its text or id; False: none.
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

        engine = local_engine(self._local("hidden_states")[0], "hidden_states")  # refuse before tokenizing
        ids = self._ids_of(engine, text, context_start, "read")
        return read_states(engine, ids, None if layers is None else list(layers), positions)

    def words(self, text: str, context_start: ContextStart = True) -> WordScores:
        """Per-word surprisal of `text`: each word's summed logprob and the corrected one (Pimentel & Meister 2024:
        including that the word ends there), as `logprob-explorer words` gives it. Needs a model loaded here.
        `context_start` as in `score`, True (the document start) by default, so the first word is scored too."""
        from explorer.engine.passes.word_ends import score_text_words
        from explorer.results.word_scores import WordScores
        from explorer.results.words import leading, with_ends, words

        r, ends = score_text_words(self.engine, _text(text, "text", "split into words"), 1, self._start(context_start))
        return WordScores(r, with_ends(words(r), ends), leading(ends.special))

    def word_table(self, stimuli: object, context_start: ContextStart = True, text_column: str = "text") -> WordTable:
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
        self, stimuli: object, context_start: ContextStart = True, text_column: str = "text"
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(words, regions): `word_table(...)` as two DataFrames, one row per word of every text (the input's own
        columns, row, word_index, word_text, region, then the Words view's columns) and one row per region (its
        words' sums). `logprob-explorer words --file` writes the same tables."""
        table = self.word_table(stimuli, context_start, text_column)
        return table.to_pandas(), table.regions_pandas()

    def score_many(
        self, texts: Iterable[str], context_start: ContextStart = False, min_k_percent: float = 20.0, stats: bool = True
    ) -> Batch:
        """Many texts, one row per text (tokens, total and mean logprob, perplexity, the text statistics), each with
        the numbers `score` gives it alone, several texts a forward pass (torch, llama.cpp), as the Batch tab and
        `logprob-explorer batch` give them. `stats` False: the sums only (no ranks, entropy or text statistics:
        what minicons' sequence_score gives, faster). A text that cannot be scored (empty, too long) gets its
        reason in its row's `error`."""
        from explorer.engine.analyses.batch import run_batch
        from explorer.results.batch import BatchItem

        if isinstance(texts, str):
            raise ExplorerError("`texts` is one text: pass a list of texts (or use score).", param="texts")
        items = list(texts)
        if not items:
            raise ExplorerError("`texts` is empty: give a list of texts to score.", param="texts", code="empty_text")
        bad = next((i for i, t in enumerate(items) if not isinstance(t, str)), None)
        if bad is not None:
            raise ExplorerError(f"`texts[{bad}]` is not a text: {items[bad]!r}.", param="texts")
        batch = [BatchItem(line=i + 1, text=t, id=str(i)) for i, t in enumerate(items)]
        return run_batch(self.engine, batch, self._start(context_start), min_k_percent, stats=stats)

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
        contrast: int | str | Sequence[int] | None = None,
        method: str = "occlusion",
        units: str = "token",
        **settings: Any,
    ) -> Attribution:
        """Why the model expected token `position` of `text` (-1: the last): each earlier token's (or word's,
        `units="word"`) share of its logprob, by `method` (occlusion, ig, gxi, attention), as the Why tab and
        `logprob-explorer why`. With `contrast`, of log p(target) - log p(contrast) instead: a token id, a list of
        ids, or a text read as typed right after the text before the target (a leading space is part of it:
        " dogs", not "dogs"); a contrast of several tokens is scored as a continuation, the sum of its tokens'
        logprobs, as `answers` scores an answer. More settings of explorer.engine.analyses.attribution.attribute
        (detail, mode, steps, baseline, layers, neutral) go in `settings`."""
        from explorer.engine.analyses.attribution import DETAIL, attribute
        from explorer.engine.passes.scoring import score_text

        engine, note = (self.engine, "") if method == "occlusion" else self._local(f"why(method={method!r})")
        r = score_text(engine, _text(text, "text", "explain"), 0)
        pos = position + r.n if isinstance(position, int) and position < 0 else position
        if isinstance(position, bool) or not isinstance(position, int) or not 1 <= pos < r.n:
            raise ExplorerError(
                f"`position` {position!r} is outside the text: it has {r.n} tokens, so positions 1..{r.n - 1} "
                f"(or -1..-{r.n - 1} from the end) have text before them.",
                param="position",
            )
        settings.setdefault("detail", DETAIL)
        if isinstance(contrast, str):
            _text(contrast, "contrast", "compare with")
        try:
            a = attribute(engine, r, pos, contrast=contrast, method=method, units=units, **settings)
        except ExplorerError as e:
            raise in_python(e) from None
        a.note = note
        return a

    # ---- the views that need hidden states, and the torch twin that gives them ------------------------------------
    def _local(self, view: str) -> tuple[ModelEngine, str]:
        """(the engine for a view that needs hidden states and gradients, the note its numbers carry): this model's
        own engine when it has them; else the torch engine on the same weights (the default model's GGUF,
        de-quantized by transformers offline, as the page does), loaded on first use and kept; else an ExplorerError
        that says which argument of explorer.load to change."""
        kind = self.engine.capabilities.engine
        if self.engine.capabilities.hidden_states:
            return self.engine, ""
        if self.twin is None:
            from explorer.engine import select

            spec = select.twin(self.spec, kind) if self.spec is not None else None
            if spec is None:
                where = (
                    "a served model (explorer.load(..., engine=URL)) does not send them"
                    if not self.engine.capabilities.forward  # no forward pass here: a served model
                    else f"the {kind} engine does not expose them, and the torch engine cannot read this model's file"
                )
                raise ExplorerError(
                    f"`lm.{view}` needs the model's hidden states and gradients: {where}. Load the model's folder or "
                    'hub id here with explorer.load(model, engine="torch") (on the command line: --engine torch).',
                    param="engine",
                    code="not_available",
                )
            try:
                self.twin = select.load(spec)
            except ExplorerError as e:
                raise in_python(e) from None
        from explorer.engine.select import twin_note

        return self.twin, twin_note(kind)

    def lens(self, text: str | Sequence[int], k: int = 5, context_start: ContextStart = False) -> LensGrid:
        """The logit lens of `text` (or token ids, read exactly as given): the residual stream after every layer read
        through the model's final norm and output layer, each token's logprob, rank, entropy and top-`k` (0..20) at
        every layer (layer 0: the embeddings, the last: the model's own output), as the Logit lens tab and
        `logprob-explorer lens`. On a llama.cpp model the torch twin computes it (its `note` says so)."""
        k = self._k(k, allow_full=False)
        from explorer.engine.analyses.lens import lens_ids

        engine, note = self._local("lens()")
        ids = self._ids_of(engine, text, context_start, "read")
        try:
            g = lens_ids(engine, ids, k)
        except ExplorerError as e:
            raise in_python(e) from None
        g.note = note
        return g

    def lookup(self, text: str, queries: str | Sequence[str], context_start: ContextStart = False) -> Lookups:
        """How likely each query (a text, or a token id as "42" / "id:42") was at every position of `text`, beyond
        the top-k: its first token's logprob and rank, and the joint logprob of all its tokens where the text
        continues with them (a query of several tokens is scored as that continuation). As the Lookup tab."""
        from explorer.engine.analyses.lookup import lookup
        from explorer.engine.passes.scoring import score_text
        from explorer.results.lookup import Lookups

        asked = [queries] if isinstance(queries, str) else list(queries)
        if not asked or not all(isinstance(q, str) for q in asked):
            raise ExplorerError(
                "`queries` must be a text or a list of texts (a token id as '42'), at least one.", param="queries"
            )
        r = score_text(self.engine, _text(text, "text", "look along"), 0, start=self._start(context_start))
        try:
            found = lookup(self.engine, r.token_ids.tolist(), asked)
        except ExplorerError as e:
            said = re.sub(r"\b(a|A) lookup\b", r"\1 query", e.message).replace("Lookup ", "Query ")
            raise ExplorerError(said.replace("lookups", "queries"), param="queries", code=e.code) from None
        return Lookups(r, found)

    def branch(
        self,
        text: str,
        alternatives: str | int | Sequence[str | int] = (),
        position: int = -1,
        *,
        max_tokens: int = 16,
        temperature: float = 0.0,
        seed: int | None = 0,
        k: int = 5,
    ) -> BranchTree:
        """A tree of `text` with a branch for each alternative put at token `position` (-1: the last; the text before
        it is kept), each continued for `max_tokens` (greedy at `temperature` 0, else sampled with `seed`), every
        node with its logprob, rank, entropy and top-`k`, as the Branch tab. An alternative is a text (of one or
        more tokens: several are put in as a continuation, then the model goes on) or a token id."""
        from explorer.engine.analyses.branch import Prefixes, grow, plant
        from explorer.engine.passes.scoring import text_ids
        from explorer.rules.sampler import SamplerSettings

        k = self._k(k, allow_full=False)
        ids, _ = text_ids(self.engine, _text(text, "text", "branch"), None)
        pos = position + len(ids) if isinstance(position, int) and position < 0 else position
        if isinstance(position, bool) or not isinstance(position, int) or not 1 <= pos <= len(ids):
            raise ExplorerError(
                f"`position` {position!r} is outside the text: it has {len(ids)} tokens, so a branch goes at 1.."
                f"{len(ids)} (or -1..-{len(ids) - 1} from the end; {len(ids)}: after the text).",
                param="position",
            )
        alts = [alternatives] if isinstance(alternatives, (str, int)) else list(alternatives)
        if not alts:
            raise ExplorerError(
                "`alternatives` is empty: give at least one token text (such as ' dog') or id to branch with.",
                param="alternatives",
            )
        tokens = [self._alternative(a) for a in alts]
        s = SamplerSettings(max_tokens=max_tokens, temperature=temperature, seed=seed, logprobs=k)
        forced = SamplerSettings(max_tokens=0, temperature=0.0, seed=seed, logprobs=k)
        prefixes = Prefixes(self.engine.name)
        tree = plant(self.engine, prefixes, ids, n_prompt=len(ids), sampler=s.to_dict(), k=k)
        for toks in tokens:
            after = pos - 1
            for j, t in enumerate(toks):  # a continuation of several tokens: each put in, the model goes on after
                tree, after = grow(self.engine, prefixes, tree, after, t, s if j == len(toks) - 1 else forced)
        return tree

    def _alternative(self, value: str | int) -> list[int]:
        """The token ids an alternative of `branch` names: an id, or the tokens of a text."""
        if isinstance(value, int) and not isinstance(value, bool):
            return self._ids([value])
        ids = self.engine.tokenize(_text(value, "alternatives", "branch with"), add_special_tokens=False)
        if not ids:
            raise ExplorerError(
                f"The alternative {value!r} has no tokens: give a text or a token id.", param="alternatives"
            )
        return list(ids)

    def batch(
        self, texts: Iterable[str], context_start: ContextStart = False, min_k_percent: float = 20.0, stats: bool = True
    ) -> Batch:
        """`score_many` under the Batch tab's name: many texts, one row per text (`stats` False: the sums only)."""
        return self.score_many(texts, context_start, min_k_percent, stats)


def _view_methods() -> None:
    """Each registered view's method on LM (explorer/notebook/registry.py): `lm.<view>(text, **options)`."""
    from explorer.notebook.registry import VIEWS
    from explorer.notebook.view import lm_method

    for v in VIEWS:
        if hasattr(LM, v.method):
            raise RuntimeError(f"the registered view {v.id!r} would hide LM.{v.method}: give it another `method`")
        setattr(LM, v.method, lm_method(v))


_view_methods()

__all__ = ["LM", "load"]
