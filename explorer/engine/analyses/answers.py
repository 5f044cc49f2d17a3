"""Answer sets scored after a prompt (explorer.results.answers.Answers), and quizzes of them.

Steps, for one prompt and its answers (each a list of variants):
1. check the set (no model needed): caps, no empty and no duplicate variant (`check_answers`).
2. tokenise: the prompt's ids P = tokenize(prompt) (BOS where the tokenizer adds one); a variant's ids are those
   of tokenize(prompt + variant) after P when P is their prefix ("joint": what the model reads when the text is
   typed whole, so " Paris" after "is" is one token `ĠParis`); when the joined text merges across the boundary
   (a prompt ending in a space, "is " + "Paris"), P is not a prefix and the variant is tokenised alone
   ("alone", without special tokens): then the ids scored are P + the variant's own ids, as the result says.
3. score: on a forward engine the prompt runs once (its KV cache kept); its last position gives every variant's
   first token; the variants' other tokens run as one batch of rows right-padded to the longest, every row
   continuing a copy of the prompt's cache (`continue_rows`), each row read at its own positions only.
   A served model scores prompt + variant per variant (k 0: the actual tokens' logprobs).
4. the variant's logprob is the sum of its tokens' logprobs; the answer's the logsumexp of its variants'.
A quiz scores each question this way (one batch per question), `bounds.check()` and progress between questions.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable

import numpy as np
import torch

from explorer.engine.interface import Forward, ModelEngine, forward_pass
from explorer.engine.passes import blocks, bounds
from explorer.errors import ExplorerError
from explorer.results.answers import Answer, Answers, Question, Quiz, Variant

Progress = Callable[[int, int], None]  # (questions done, questions in all)
MAX_ANSWERS = 26  # answers per set
MAX_VARIANTS = 64  # variants per set, all answers together (the rows of one batch)
MAX_VARIANT_TOKENS = 64  # tokens per variant
MAX_QUESTIONS = 2000  # questions per quiz


def _bad(msg: str, param: str = "answers") -> ExplorerError:
    return ExplorerError(msg, param=param, code="invalid_value")


def _quote(text: str, most: int = 40) -> str:
    """`text` quoted, cut to its first `most` characters with an ellipsis (a pasted page stays out of the message)."""
    return repr(text) if len(text) <= most else repr(text[:most]) + "…"


def check_answers(answers: list[list[str]]) -> None:
    """Every check of an answer set that needs no model: caps, empty and duplicate variants."""
    if not answers:
        raise _bad("Give at least one answer (one a line, variants separated by `|`).")
    if len(answers) > MAX_ANSWERS:
        raise _bad(f"At most {MAX_ANSWERS} answers a set, got {len(answers)}: drop some.")
    total = sum(len(a) for a in answers)
    if total > MAX_VARIANTS:
        raise _bad(f"At most {MAX_VARIANTS} variants a set (all answers together), got {total}: drop some variants.")
    seen: dict[str, int] = {}
    for i, a in enumerate(answers):
        if not a or any(v == "" for v in a):
            raise _bad(f"Answer {i + 1} has an empty variant: write text between the `|`s, or drop the answer.")
        for v in a:
            if v in seen:
                where = "twice in that answer" if seen[v] == i else f"also in answer {seen[v] + 1}"
                raise _bad(f"The variant {_quote(v)} of answer {i + 1} is {where}: each variant once in the set.")
            seen[v] = i


def variant_ids(engine: ModelEngine, prompt_ids: list[int], prompt: str, text: str) -> tuple[list[int], str]:
    """(the variant's ids after the prompt's, "joint" | "alone"): see step 2 of the module docstring."""
    whole = engine.tokenize(prompt + text)
    p = len(prompt_ids)
    if whole[:p] == prompt_ids and len(whole) > p:
        return whole[p:], "joint"
    return engine.tokenize(text, add_special_tokens=False), "alone"


def token_texts(engine: ModelEngine, ids: list[int]) -> list[str]:
    """Per token, the characters it completes (a character split over tokens sits on its last token)."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return [dec.decode(bytes(engine.vocab[i]), final=(j == len(ids) - 1)) for j, i in enumerate(ids)]


@torch.inference_mode()
def _cached(engine: Forward, prompt_ids: list[int], rows: list[list[int]]) -> list[np.ndarray]:
    """Each row's (L,) token logprobs after the prompt: one pass over the prompt, one batch of all rows."""
    # 1. the prompt, its cache kept; its last position scores every row's first token
    x = torch.tensor([prompt_ids], device=engine.device)  # (1, P)
    hidden, past = blocks.prefill(engine, x)  # (P, H)
    first = blocks.logits(engine, hidden[-1:]).float().log_softmax(-1)[0]  # (V,)
    out = [np.array([float(first[r[0]])]) for r in rows]
    # 2. the rows' other tokens: row j reads r[:-1] (right-padded) and scores r[1:] at its own positions
    longest = max(len(r) for r in rows) - 1
    if longest == 0:
        return out
    bounds.check()
    pad = [r[:-1] + [r[0]] * (longest - len(r) + 1) for r in rows]
    h = engine.continue_rows(torch.tensor(pad, device=engine.device), past)  # (B, longest, H) or (B, longest, V)
    which = [(j, t) for j, r in enumerate(rows) for t in range(len(r) - 1)]  # (N,) the real positions
    if not which:
        return out
    jj = torch.tensor([j for j, _ in which], device=h.device)
    tt = torch.tensor([t for _, t in which], device=h.device)
    targets = torch.tensor([rows[j][t + 1] for j, t in which], device=h.device)  # (N,)
    flat = h[jj, tt]  # (N, H)
    lp = torch.cat([blocks.logits(engine, flat[a : a + 64]).float().log_softmax(-1) for a in range(0, len(flat), 64)])
    got = lp.gather(1, targets[:, None])[:, 0].double().cpu().numpy()  # (N,)
    at = 0
    for j, r in enumerate(rows):
        out[j] = np.concatenate([out[j], got[at : at + len(r) - 1]])
        at += len(r) - 1
    return out


def _scored(engine: ModelEngine, prompt_ids: list[int], rows: list[list[int]]) -> list[tuple[np.ndarray, list[str]]]:
    """Each row's (L,) token logprobs and texts by scoring prompt + row (a served model; k 0)."""
    out = []
    for r in rows:
        bounds.check()
        s = engine.score(prompt_ids + r, 0)
        p = len(prompt_ids)
        out.append((s.logprobs[p:].astype(np.float64), s.token_text[p:]))
    return out


def score_answers(
    engine: ModelEngine, prompt: str, answers: list[list[str]], labels: list[str] | None = None
) -> Answers:
    """Every answer's probability after `prompt`: each a list of variant texts (leading spaces matter)."""
    check_answers(answers)
    prompt_ids = engine.tokenize(prompt)
    if not prompt_ids:
        raise _bad("The prompt is empty: type the text the answers continue.", "prompt")
    texts = [v for a in answers for v in a]
    split = [variant_ids(engine, prompt_ids, prompt, v) for v in texts]
    for v, (ids, _) in zip(texts, split):
        if not ids:
            raise _bad(f"The variant {_quote(v)} has no tokens: write some text.")
        if len(ids) > MAX_VARIANT_TOKENS:
            raise _bad(f"The variant {_quote(v)} is {len(ids)} tokens; at most {MAX_VARIANT_TOKENS}: shorten it.")
    rows = [ids for ids, _ in split]
    engine.check_ids(prompt_ids + max(rows, key=len))
    if engine.capabilities.forward:
        scored = [(lp, token_texts(engine, r)) for lp, r in zip(_cached(forward_pass(engine), prompt_ids, rows), rows)]
    else:
        scored = _scored(engine, prompt_ids, rows)
    variants = [
        Variant(v, np.array(r, np.int64), tt, lp, how) for v, r, (lp, tt), (_, how) in zip(texts, rows, scored, split)
    ]
    out, at = [], 0
    for i, a in enumerate(answers):
        out.append(Answer(variants[at : at + len(a)], labels[i] if labels else ""))
        at += len(a)
    return Answers(engine.name, prompt, np.array(prompt_ids, np.int64), out)


def run_quiz(
    engine: ModelEngine, items: list[dict], template: str = "{question}", progress: Progress | None = None
) -> Quiz:
    """Each question of `items` (from read_quiz: question, choices as variant lists, right index) scored."""
    if "{question}" not in template:
        raise _bad("The quiz template must contain {question} where each question goes.", "template")
    if len(items) > MAX_QUESTIONS:
        raise _bad(f"At most {MAX_QUESTIONS} questions a quiz, got {len(items)}: split the file.", "quiz")
    out = []
    if progress is not None:
        progress(0, len(items))
    for i, q in enumerate(items):
        bounds.check()
        labels = [c[0] for c in q["choices"]]
        try:
            res = score_answers(engine, template.replace("{question}", q["question"]), q["choices"], labels)
        except ExplorerError as e:
            raise ExplorerError(f"Question {i + 1}: {e.message}", param="quiz", code=e.code) from None
        out.append(Question(q["question"], res, int(q["answer"])))
        if progress is not None:
            progress(i + 1, len(items))
    return Quiz(engine.name, out, template)


def continuation_logprobs(engine: ModelEngine, prompt_ids: list[int], rows: list[list[int]]) -> list[np.ndarray]:
    """Each row's (L,) token logprobs after `prompt_ids`, teacher-forced (step 3): on a forward engine one pass over
    the prompt and one batch of the rows; on a served model prompt + row scored per row."""
    if engine.capabilities.forward:
        return _cached(forward_pass(engine), prompt_ids, rows)
    return [lp for lp, _ in _scored(engine, prompt_ids, rows)]
