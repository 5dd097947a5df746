"""Vocabularies, padded batches and data sets of id sequences: what the toy tasks are made of.

Every example is a pair (source, target) of token-id lists. A batch feeds the decoder the
target shifted right by one (*teacher forcing*)::

    src     =        x_1 … x_S                     [B, S]
    tgt_in  = <bos>  y_1 … y_T                     [B, T+1]
    tgt_out =        y_1 … y_T  <eos>              [B, T+1]

so that position ``t`` of the decoder reads ``y_<t`` and is trained to predict ``y_t``.
Sequences are right-padded with ``<pad>`` (id 0), which the loss ignores.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ..model.checks import check_int
from .device import check_seed

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
SPECIALS = (PAD, BOS, EOS)
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2


# ----------------------------------------------------------------------------------------------
# Vocabulary
# ----------------------------------------------------------------------------------------------


class Vocab:
    """A token ↔ id table. The specials come first: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2.

    >>> v = Vocab(["a", "b"])
    >>> v.itos
    ['<pad>', '<bos>', '<eos>', 'a', 'b']
    >>> v.encode(["b", "a"])
    [4, 3]
    """

    def __init__(self, tokens: Sequence[str]):
        if isinstance(tokens, str):
            raise TypeError(f"tokens must be a sequence of strings (e.g. list('abc')), got the single str {tokens!r}")
        tokens = list(tokens)
        for token in tokens:
            if not isinstance(token, str):
                raise TypeError(f"tokens must all be str, got {token!r} ({type(token).__name__})")
            if token in SPECIALS:
                raise ValueError(f"tokens must not contain the special token {token!r}; it is added for you")
        duplicates = sorted({t for t in tokens if tokens.count(t) > 1})
        if duplicates:
            raise ValueError(f"tokens must be unique, got duplicates {duplicates}")
        self.itos: list[str] = [*SPECIALS, *tokens]
        self.stoi: dict[str, int] = {token: i for i, token in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = PAD_ID, BOS_ID, EOS_ID

    def __len__(self) -> int:
        return len(self.itos)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    __hash__ = None  # mutable lists inside: not hashable

    def __repr__(self) -> str:
        shown = " ".join(self.itos[:16]) + (" …" if len(self) > 16 else "")
        return f"Vocab(size={len(self)}: {shown})"

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Token strings → ids (no ``<bos>``/``<eos>`` added)."""
        try:
            return [self.stoi[token] for token in tokens]
        except KeyError as error:
            raise ValueError(
                f"unknown token {error.args[0]!r}; the vocabulary has {self.itos[len(SPECIALS) :]}"
            ) from None

    def decode(self, ids: Sequence[int] | Tensor, strip_special: bool = True) -> list[str]:
        """Ids → token strings. With ``strip_special``, drop ``<pad>``/``<bos>`` and stop at ``<eos>``."""
        if isinstance(ids, Tensor):
            if ids.dim() != 1:
                raise ValueError(f"ids must be a 1-d tensor, got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        tokens = []
        for i in ids:
            if not 0 <= i < len(self):
                raise ValueError(f"id {i} is out of range for a vocabulary of size {len(self)}")
            if strip_special:
                if i == self.eos_id:
                    break
                if i in (self.pad_id, self.bos_id):
                    continue
            tokens.append(self.itos[i])
        return tokens


# ----------------------------------------------------------------------------------------------
# Batches
# ----------------------------------------------------------------------------------------------


@dataclass
class Batch:
    """A padded batch for an encoder-decoder model.

    src ``[B, S]``, tgt_in ``[B, T]`` (``<bos>`` + target), tgt_out ``[B, T]`` (target + ``<eos>``),
    all ``long``, right-padded with ``pad_id``.
    """

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    pad_id: int = PAD_ID

    def to(self, device: torch.device | str | None) -> Batch:
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device), self.pad_id)

    def __len__(self) -> int:
        return self.src.shape[0]

    @property
    def n_tokens(self) -> int:
        """Number of target tokens the loss counts (non-padding positions of ``tgt_out``)."""
        return int((self.tgt_out != self.pad_id).sum())


@dataclass
class LMBatch:
    """A padded batch for a decoder-only language model: ``model(input) -> logits``.

    input ``[B, L]``, target ``[B, L]`` (the next token at each position; ``pad_id`` where no
    loss is taken), both ``long``.
    """

    input: Tensor
    target: Tensor
    pad_id: int = PAD_ID

    def to(self, device: torch.device | str | None) -> LMBatch:
        return LMBatch(self.input.to(device), self.target.to(device), self.pad_id)

    def __len__(self) -> int:
        return self.input.shape[0]


def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> Tensor:
    """Right-pad lists of ids into a ``[len(seqs), max_len]`` long tensor."""
    if len(seqs) == 0:
        raise ValueError("seqs must hold at least one sequence, got none")
    width = max(len(s) for s in seqs)
    return torch.tensor([[*map(int, s), *[pad_id] * (width - len(s))] for s in seqs], dtype=torch.long)


def collate(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
) -> Batch:
    """(source, target) id lists → a :class:`Batch` with ``<bos>``/``<eos>`` added and padding."""
    if len(pairs) == 0:
        raise ValueError("pairs must hold at least one (source, target) pair, got none")
    return Batch(
        src=pad_sequences([src for src, _ in pairs], pad_id),
        tgt_in=pad_sequences([[bos_id, *tgt] for _, tgt in pairs], pad_id),
        tgt_out=pad_sequences([[*tgt, eos_id] for _, tgt in pairs], pad_id),
        pad_id=pad_id,
    )


def to_lm_batch(batch: Batch) -> LMBatch:
    """Turn a seq2seq :class:`Batch` into one sequence per example for a decoder-only LM.

    The source and the decoder's input are simply concatenated; ``<bos>`` marks where the
    answer starts, exactly as it does for the encoder-decoder::

        input  = x_1 … x_S  <bos>  y_1 … y_T             = src ⧺ tgt_in
        target = ·   …  ·   y_1    y_2 … y_T  <eos>       = pad·S ⧺ tgt_out

    The loss is taken on the answer only (``·`` = ``pad_id``, ignored). To generate, prompt the LM
    with ``src ⧺ <bos>`` and stop at ``<eos>``. Source and target must share one vocabulary
    (true for copy, reverse, sort, recall, and for ``dates`` with ``shared_vocab=True``).
    """
    if not isinstance(batch, Batch):
        raise TypeError(f"batch must be a Batch, got {type(batch).__name__}")
    pad = batch.pad_id
    is_src, is_tgt = batch.src != pad, batch.tgt_out != pad  # [B, S], [B, T]
    n_src = is_src.sum(dim=1, keepdim=True)  # [B, 1]
    # column of each kept token in its row: the source's tokens first, then the answer's
    src_col = is_src.cumsum(dim=1) - 1
    tgt_col = n_src + is_tgt.cumsum(dim=1) - 1
    width = int((n_src[:, 0] + is_tgt.sum(dim=1)).max())  # data preparation: a host sync is fine
    inputs = torch.full((len(batch.src), width), pad, dtype=torch.long, device=batch.src.device)
    targets = torch.full_like(inputs, pad)
    src_row, tgt_row = is_src.nonzero()[:, 0], is_tgt.nonzero()[:, 0]
    inputs[src_row, src_col[is_src]] = batch.src[is_src]
    inputs[tgt_row, tgt_col[is_tgt]] = batch.tgt_in[is_tgt]
    targets[tgt_row, tgt_col[is_tgt]] = batch.tgt_out[is_tgt]
    return LMBatch(inputs, targets, pad)


# ----------------------------------------------------------------------------------------------
# Data sets
# ----------------------------------------------------------------------------------------------


@dataclass
class Seq2SeqDataset:
    """Pairs of id sequences (without ``<bos>``/``<eos>``) and their vocabularies.

    ``dataset[i]`` is ``(src_ids, tgt_ids)``; :meth:`batches` yields padded :class:`Batch` es;
    :meth:`text` shows example ``i`` as strings (tokens joined by ``token_sep``).
    """

    src: list[list[int]]
    tgt: list[list[int]]
    src_vocab: Vocab
    tgt_vocab: Vocab
    name: str = "dataset"
    token_sep: str = " "

    def __post_init__(self) -> None:
        if len(self.src) != len(self.tgt):
            raise ValueError(f"src and tgt must have the same length, got {len(self.src)} and {len(self.tgt)}")

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, i: int) -> tuple[list[int], list[int]]:
        return self.src[i], self.tgt[i]

    def __repr__(self) -> str:
        return (
            f"Seq2SeqDataset({self.name!r}, {len(self)} examples, "
            f"src vocab {len(self.src_vocab)}, tgt vocab {len(self.tgt_vocab)})"
        )

    def text(self, i: int) -> tuple[str, str]:
        """Example ``i`` as two strings, e.g. ``('3 1 4', '4 1 3')``."""
        src, tgt = self[i]
        return (
            self.token_sep.join(self.src_vocab.decode(src)),
            self.token_sep.join(self.tgt_vocab.decode(tgt)),
        )

    @property
    def shared_vocab(self) -> bool:
        """Whether source and target use the same vocabulary (needed by :func:`to_lm_batch`)."""
        return self.src_vocab == self.tgt_vocab

    def batches(
        self,
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        device: torch.device | str | None = None,
    ) -> Iterator[Batch]:
        """One epoch of padded batches (the last one may be smaller). ``seed`` (an ``int >= 0``, a seed of
        Python's ``random.Random``) fixes the shuffle."""
        check_int("batch_size", batch_size, minimum=1)
        check_seed("seed", seed, bits=None)
        order = list(range(len(self)))
        if shuffle:
            random.Random(seed).shuffle(order)
        for begin in range(0, len(order), batch_size):
            pairs = [self[i] for i in order[begin : begin + batch_size]]
            yield collate(pairs, self.src_vocab.pad_id, self.tgt_vocab.bos_id, self.tgt_vocab.eos_id).to(device)
