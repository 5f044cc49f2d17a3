"""A remote model's vocabulary (id -> raw bytes) when no tokenizer of it can be loaded here: asked of the server.

Steps:
1. a token's text from `/detokenize`, many ids per call between separator tokens (checked once to decode the
   same wherever they stand), else one id per call. A token that is part of a character (a CJK character or an
   emoji split over tokens) decodes to U+FFFD there, so its bytes are not known yet.
2. a run of such tokens in a sequence (a prompt, a generated text) is decoded as one text, tokenized again with
   `return_token_strs`, and, when that gives the same ids, its vocabulary strings are turned into the exact bytes
   (explorer/engine/text/tokens.py), checked to join to the text. A top-k alternative that is part of a character
   keeps the U+FFFD text.
Never from a logprobs entry's `decoded_token`: vLLM writes there the text a token adds to the ones before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from explorer.engine.remote.http import Backend
from explorer.engine.text.tokens import piece_bytes

BATCH = 2048  # ids per /detokenize call
SEPARATOR = "\x1f"  # the text put between ids decoded in one call (ASCII unit separator: in no token's text)
LOSSY = "\ufffd"


class RemoteVocab(Sequence):
    """id -> raw bytes, learnt from the server (see the module docstring); `size` ids (0: not known)."""

    def __init__(self, backend: Backend, model: str, size: int):
        self.backend, self.model, self.size = backend, model, size
        self.known: dict[int, bytes] = {}
        self._sep: tuple[list[int], str] | None = None  # ids and decoded text of the separator; ([], "") when unusable

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> bytes:  # type: ignore[override]  # ids only: a vocabulary is not sliced
        i = int(i)
        if i not in self.known:
            self.fetch([i])
        return self.known[i]

    # ---- the server's routes ---------------------------------------------------------------
    def detokenize(self, ids: list[int]) -> str:
        return self.backend.post("/detokenize", {"model": self.model, "tokens": list(ids)})["prompt"]

    def tokenize(self, text: str, add_special_tokens: bool = True, strs: bool = False) -> dict:
        body = {"model": self.model, "prompt": text, "add_special_tokens": add_special_tokens}
        return self.backend.post("/tokenize", {**body, "return_token_strs": True} if strs else body)

    # ---- step 1: texts -----------------------------------------------------------------------
    def fetch(self, ids: Iterable[int]) -> None:
        """Learn the text of every id in `ids` not known yet (a few calls for many ids)."""
        todo = sorted({int(i) for i in ids} - self.known.keys())
        for a in range(0, len(todo), BATCH):
            part = todo[a : a + BATCH]
            texts = self._batch(part) if len(part) > 1 else None
            for i, text in zip(part, texts or [self.detokenize([i]) for i in part]):
                self.known[i] = text.encode()

    def _separator(self) -> tuple[list[int], str]:
        """The separator's ids and text, when three in a row decode to three times its text (else ([], ""))."""
        if self._sep is None:
            ids = self.tokenize(SEPARATOR, add_special_tokens=False).get("tokens") or []
            text = self.detokenize(ids) if ids else ""
            ok = bool(text) and self.detokenize(ids * 3) == text * 3
            self._sep = (ids, text) if ok else ([], "")
        return self._sep

    def _batch(self, ids: list[int]) -> list[str] | None:
        """The texts of `ids` from one call, or None when the separators did not split it cleanly."""
        sep_ids, sep = self._separator()
        if not sep:
            return None
        seq = list(sep_ids)
        for i in ids:
            seq += [i, *sep_ids]
        parts = self.detokenize(seq).split(sep)
        if len(parts) != len(ids) + 2 or parts[0] or parts[-1]:
            return None  # a token's own text holds the separator: one id per call
        return parts[1:-1]

    # ---- step 2: exact bytes of split characters ------------------------------------------
    def learn(self, seq: Sequence[int]) -> None:
        """Exact bytes for the tokens of `seq` that hold part of a character (see the module docstring)."""
        seq = [int(i) for i in seq]
        self.fetch(seq)
        run: list[int] = []
        for i in [*seq, None]:
            if i is not None and LOSSY.encode() in self.known[i]:
                run.append(i)
                continue
            if run:
                self._learn_run(run)
            run = []

    def _learn_run(self, run: list[int]) -> None:
        text = self.detokenize(run)
        if LOSSY in text:  # the run does not complete its characters (a text cut mid-character)
            return
        back = self.tokenize(text, add_special_tokens=False, strs=True)
        if back.get("tokens") != run or len(back.get("token_strs") or []) != len(run):
            return
        for byte_level in (True, False):
            pieces = [piece_bytes(p, byte_level) for p in back["token_strs"]]
            if b"".join(pieces) == text.encode():
                self.known.update(zip(run, pieces))
                return
