"""A word-level tokenizer: one whitespace-separated word is one token.

Real models split text into sub-word pieces (BPE); the course model's language is small enough
that every word gets its own id, so a prompt reads the same as its tokens::

    >>> tok.encode("<BOS> 我 喜欢")        # three words, three tokens
    [1, 3, 10]
    >>> tok.decode([1, 3, 10, 25])
    '<BOS> 我 喜欢 猫'

The special tokens come first, in a fixed order: ``<PAD>`` = 0, ``<BOS>`` = 1, ``<EOS>`` = 2.
The prompt text carries ``<BOS>`` itself; ``encode`` adds nothing.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

import torch

from .i18n import tr
from .validate import is_int

PAD, BOS, EOS = "<PAD>", "<BOS>", "<EOS>"


class Tokenizer:
    """Maps words to ids and back. ``vocab[i]`` is the word with id ``i``."""

    def __init__(self, vocab: Sequence[str]) -> None:
        vocab = list(vocab)
        if vocab[:3] != [PAD, BOS, EOS]:
            raise ValueError(tr("the vocabulary must start with {special}, got {first}", special=[PAD, BOS, EOS],
                                first=vocab[:3]))
        if len(set(vocab)) != len(vocab):
            dupes = sorted({w for w in vocab if vocab.count(w) > 1})
            raise ValueError(tr("the vocabulary lists these words more than once: {words}", words=dupes))
        bad = [w for w in vocab if not isinstance(w, str) or not w or any(c.isspace() for c in w)]
        if bad:
            raise ValueError(tr("words must be non-empty strings without whitespace, got {words}", words=bad))
        self.vocab: list[str] = vocab
        self._ids = {w: i for i, w in enumerate(vocab)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    @property
    def vocab_size(self) -> int:
        """V: the number of distinct tokens."""
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def __repr__(self) -> str:
        return f"Tokenizer(vocab_size={self.vocab_size})"

    def encode(self, text: str) -> list[int]:
        """Ids of the whitespace-separated words of ``text``. An unknown word raises ``ValueError``."""
        if not isinstance(text, str):
            raise ValueError(tr("encode needs a string, got {type}", type=type(text).__name__))
        ids = []
        for word in text.split():
            if word not in self._ids:
                raise ValueError(tr("unknown word {word!r}; see tokenizer.vocab for the {n} known words (words are "
                                    "separated by spaces, e.g. '<BOS> 我 喜欢')", word=word, n=self.vocab_size))
            ids.append(self._ids[word])
        return ids

    def decode(self, ids: Iterable[int] | torch.Tensor, skip_special: bool = False) -> str:
        """The words of ``ids`` joined with single spaces (``skip_special`` drops <PAD> <BOS> <EOS>)."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() > 1:
                raise ValueError(tr("decode takes one sequence of ids, got a tensor of shape {shape}",
                                    shape=tuple(ids.shape)))
            ids = ids.tolist()
        words = []
        for i in ids:
            if not is_int(i) or not 0 <= i < self.vocab_size:
                raise ValueError(tr("token id {id!r} is not in the vocabulary [0, {last}]", id=i,
                                    last=self.vocab_size - 1))
            if skip_special and i <= self.eos_id:
                continue
            words.append(self.vocab[i])
        return " ".join(words)

    def tokens(self, ids: Iterable[int] | torch.Tensor) -> list[str]:
        """The word of each id, one per token (handy for plot labels)."""
        return self.decode(ids).split()

    def encode_batch(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """Left-padded ``input_ids`` ``[B, T]`` and ``attention_mask`` ``[B, T]`` (0 = padding).

        Left padding puts every prompt's last token in the last column, which is what
        ``prefill``/``generate`` expect.
        """
        from .generate import left_pad

        rows = [self.encode(t) for t in texts]
        if not rows or any(not r for r in rows):
            raise ValueError(tr("encode_batch needs at least one text, and no empty texts"))
        return left_pad(rows, self.pad_id)

    # --- a JSON file: {"vocab": [...]} ---------------------------------------------------------
    def to_json(self, path: str | Path) -> None:
        """Write the vocabulary as UTF-8 JSON (readable: Chinese stays Chinese)."""
        data = {"type": "word-level", "special_tokens": {PAD: 0, BOS: 1, EOS: 2}, "vocab": self.vocab}
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, path: str | Path) -> "Tokenizer":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("vocab"), list):
            raise ValueError(tr("{path}: expected a JSON object with a 'vocab' list", path=path))
        return cls(data["vocab"])
