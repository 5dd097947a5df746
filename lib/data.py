"""Toy sequence-to-sequence tasks, generated in `lib`: no downloads, deterministic given a seed.

Every example is a pair (source, target) of token-id lists. A batch feeds the decoder the
target shifted right by one (*teacher forcing*)::

    src     =        x_1 … x_S                     [B, S]
    tgt_in  = <bos>  y_1 … y_T                     [B, T+1]
    tgt_out =        y_1 … y_T  <eos>              [B, T+1]

so that position ``t`` of the decoder reads ``y_<t`` and is trained to predict ``y_t``.
Sequences are right-padded with ``<pad>`` (id 0), which the loss ignores.

Tasks (see :func:`make_task`):

- ``"copy"``    ``3 1 4 1 5``  →  ``3 1 4 1 5``
- ``"reverse"`` ``3 1 4 1 5``  →  ``5 1 4 1 3``
- ``"sort"``    ``3 1 4 1 5``  →  ``1 1 3 4 5``
- ``"dates"``   ``n o v e m b e r   2 9 ,   2 0 2 6``  →  ``2 0 2 6 - 1 1 - 2 9``  (per character)
- ``"recall"``  ``a 3 c 7 f 1 ? c``  →  ``7``  (associative recall: a long-range dependency)

And one per-token task on points of the plane, :func:`centered_xor_batch`: is each point on the
same side of its sequence's mean in both coordinates? (It needs attention *and* a nonlinearity.)
"""
from __future__ import annotations

import datetime
import inspect
import random
import string
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import torch
from torch import Tensor

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
            raise TypeError(
                f"tokens must be a sequence of strings (e.g. list('abc')), got the single str {tokens!r}"
            )
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
        ids = []
        for token in tokens:
            if token not in self.stoi:
                raise ValueError(f"unknown token {token!r}; the vocabulary has {self.itos[len(SPECIALS):]}")
            ids.append(self.stoi[token])
        return ids

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

    def to(self, device: torch.device | str | None) -> "Batch":
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

    def to(self, device: torch.device | str | None) -> "LMBatch":
        return LMBatch(self.input.to(device), self.target.to(device), self.pad_id)

    def __len__(self) -> int:
        return self.input.shape[0]


def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int = PAD_ID) -> Tensor:
    """Right-pad lists of ids into a ``[len(seqs), max_len]`` long tensor."""
    if len(seqs) == 0:
        raise ValueError("seqs must hold at least one sequence, got none")
    out = torch.full((len(seqs), max(len(s) for s in seqs)), pad_id, dtype=torch.long)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
    return out


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
    inputs, targets = [], []
    for src, tgt_in, tgt_out in zip(batch.src, batch.tgt_in, batch.tgt_out):
        src = src[src != pad].tolist()
        keep = tgt_out != pad
        inputs.append(src + tgt_in[keep].tolist())
        targets.append([pad] * len(src) + tgt_out[keep].tolist())
    return LMBatch(pad_sequences(inputs, pad), pad_sequences(targets, pad), pad).to(batch.src.device)


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
        """One epoch of padded batches (the last one may be smaller). ``seed`` fixes the shuffle."""
        _check_int("batch_size", batch_size, minimum=1)
        order = list(range(len(self)))
        if shuffle:
            random.Random(seed).shuffle(order)
        for begin in range(0, len(order), batch_size):
            pairs = [self[i] for i in order[begin : begin + batch_size]]
            yield collate(pairs, self.src_vocab.pad_id, self.tgt_vocab.bos_id, self.tgt_vocab.eos_id).to(device)


# ----------------------------------------------------------------------------------------------
# The tasks
# ----------------------------------------------------------------------------------------------


def _check_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value} must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}={value} must be <= {maximum}")


def _symbol_task(name: str, transform: Callable[[list[str]], list[str]]):
    """A task on strings of symbols ``0 … n_symbols-1`` whose target is ``transform(source)``."""

    def make(rng: random.Random, n: int, *, n_symbols: int = 10, min_len: int = 3, max_len: int = 10):
        _check_int("n_symbols", n_symbols, minimum=1)
        _check_int("min_len", min_len, minimum=1)
        _check_int("max_len", max_len, minimum=min_len)
        symbols = [str(i) for i in range(n_symbols)]
        vocab = Vocab(symbols)
        src, tgt = [], []
        for _ in range(n):
            tokens = [rng.choice(symbols) for _ in range(rng.randint(min_len, max_len))]
            src.append(vocab.encode(tokens))
            tgt.append(vocab.encode(transform(tokens)))
        return Seq2SeqDataset(src, tgt, vocab, vocab, name)

    return make


# Sorting the strings "0" … "9" by their vocabulary id is sorting by value, also beyond 10 symbols.
_copy = _symbol_task("copy", lambda tokens: list(tokens))
_reverse = _symbol_task("reverse", lambda tokens: tokens[::-1])
_sort = _symbol_task("sort", lambda tokens: sorted(tokens, key=int))


MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)

#: Source formats of the ``dates`` task. Fields: ``{day}`` 29 / 3, ``{dd}`` 29 / 03, ``{mm}`` 11,
#: ``{month}`` november, ``{mon}`` nov, ``{year}`` 2026.
DATE_FORMATS = (
    "{day} {mon} {year}",      # 29 nov 2026
    "{mm}/{dd}/{year}",        # 11/29/2026
    "{month} {day}, {year}",   # november 29, 2026
    "{year}.{mm}.{dd}",        # 2026.11.29
    "{dd}.{mm}.{year}",        # 29.11.2026
    "{day} {month} {year}",    # 29 november 2026
)

# Fixed vocabularies (not read off the sampled data), so every sample of the task shares them.
_DATE_SRC_CHARS = list(string.digits + string.ascii_lowercase + " ,./-")
_DATE_TGT_CHARS = list(string.digits + "-")


def format_date(date: datetime.date, fmt: str) -> str:
    """Write ``date`` in format ``fmt`` (see :data:`DATE_FORMATS`)."""
    month = MONTHS[date.month - 1]
    fields = dict(day=date.day, dd=f"{date.day:02d}", mm=f"{date.month:02d}",
                  month=month, mon=month[:3], year=f"{date.year:04d}")
    try:
        return fmt.format(**fields)
    except (KeyError, IndexError, ValueError) as error:
        raise ValueError(
            f"date format {fmt!r} is invalid ({error!r}); it may use the fields {sorted(fields)}"
        ) from None


def _dates(
    rng: random.Random,
    n: int,
    *,
    formats: Sequence[str] = DATE_FORMATS,
    min_year: int = 1950,
    max_year: int = 2049,
    shared_vocab: bool = False,
) -> Seq2SeqDataset:
    if isinstance(formats, str) or len(formats) == 0:
        raise ValueError(f"formats must be a non-empty list of format strings, got {formats!r}")
    _check_int("min_year", min_year, minimum=1)
    _check_int("max_year", max_year, minimum=min_year, maximum=9999)
    if shared_vocab:
        src_vocab = tgt_vocab = Vocab(_DATE_SRC_CHARS)  # the target characters are a subset
    else:
        src_vocab, tgt_vocab = Vocab(_DATE_SRC_CHARS), Vocab(_DATE_TGT_CHARS)
    first = datetime.date(min_year, 1, 1).toordinal()
    last = datetime.date(max_year, 12, 31).toordinal()
    src, tgt = [], []
    for _ in range(n):
        date = datetime.date.fromordinal(rng.randint(first, last))  # a valid date by construction
        src.append(src_vocab.encode(format_date(date, rng.choice(formats))))
        tgt.append(tgt_vocab.encode(date.isoformat()))
    return Seq2SeqDataset(src, tgt, src_vocab, tgt_vocab, "dates", token_sep="")


def _recall(rng: random.Random, n: int, *, n_pairs: int = 4, n_keys: int = 26, n_values: int = 10) -> Seq2SeqDataset:
    _check_int("n_keys", n_keys, minimum=1, maximum=26)
    _check_int("n_values", n_values, minimum=1, maximum=10)
    _check_int("n_pairs", n_pairs, minimum=1, maximum=n_keys)
    keys = list(string.ascii_lowercase[:n_keys])
    values = list(string.digits[:n_values])
    vocab = Vocab(keys + values + ["?"])
    src, tgt = [], []
    for _ in range(n):
        pair_keys = rng.sample(keys, n_pairs)  # distinct keys
        pair_values = [rng.choice(values) for _ in pair_keys]
        query = rng.randrange(n_pairs)
        tokens = [token for pair in zip(pair_keys, pair_values) for token in pair]
        src.append(vocab.encode(tokens + ["?", pair_keys[query]]))
        tgt.append(vocab.encode([pair_values[query]]))
    return Seq2SeqDataset(src, tgt, vocab, vocab, "recall")


TASKS = {"copy": _copy, "reverse": _reverse, "sort": _sort, "dates": _dates, "recall": _recall}


def _task(name: str, kw: dict):
    """The generator of task ``name``, after checking that it takes the keywords ``kw``."""
    if name not in TASKS:
        raise ValueError(f"unknown task name={name!r}; expected one of {sorted(TASKS)}")
    make = TASKS[name]
    accepted = [p.name for p in inspect.signature(make).parameters.values() if p.kind == p.KEYWORD_ONLY]
    unknown = sorted(set(kw) - set(accepted))
    if unknown:
        raise TypeError(f"task {name!r} got unexpected keyword(s) {unknown}; it takes {accepted}")
    return make


def make_task(name: str, n: int, *, seed: int = 0, **kw) -> Seq2SeqDataset:
    """Generate ``n`` examples of the toy task ``name``; the same seed gives the same data.

    Keywords by task (defaults in brackets):

    - ``"copy"``, ``"reverse"``, ``"sort"``: ``n_symbols`` [10] symbols ``0 … n_symbols-1``,
      source lengths uniform in ``min_len`` [3] … ``max_len`` [10].
    - ``"dates"``: ``formats`` [:data:`DATE_FORMATS`], dates uniform between ``min_year`` [1950]
      and ``max_year`` [2049]; per-character tokens; ``shared_vocab`` [False] gives source and
      target one vocabulary (for shared embeddings or a decoder-only LM).
    - ``"recall"``: ``n_pairs`` [4] key-value pairs over ``n_keys`` [26] letters and ``n_values``
      [10] digits, then ``?`` and a query key; the target is that key's value. The source has
      ``2 · n_pairs + 2`` tokens.

    Two data sets with different seeds may share examples (the tasks are small).
    """
    make = _task(name, kw)
    _check_int("n", n, minimum=1)
    _check_int("seed", seed)
    return make(random.Random(seed), n, **kw)


class TaskStream:
    """An endless stream of fresh batches of task ``name``, for training on new samples every step.

    >>> stream = TaskStream("reverse", batch_size=32, seed=0, max_len=12)
    >>> batch = next(stream)            # a Batch; the next call gives new examples
    >>> len(stream.src_vocab)           # for sizing the model
    13

    Bad arguments fail here (the first batch is made at construction), not at the first ``next``.
    """

    def __init__(self, name: str, batch_size: int, *, seed: int = 0,
                 device: torch.device | str | None = None, **kw):
        self.make = _task(name, kw)
        _check_int("batch_size", batch_size, minimum=1)
        _check_int("seed", seed)
        self.name, self.batch_size, self.device, self.kw = name, batch_size, device, kw
        self.rng = random.Random(seed)
        self._next = self.make(self.rng, batch_size, **kw)
        self.src_vocab, self.tgt_vocab = self._next.src_vocab, self._next.tgt_vocab

    def __iter__(self) -> "TaskStream":
        return self

    def __next__(self) -> Batch:
        dataset, self._next = self._next, self.make(self.rng, self.batch_size, **self.kw)
        return next(dataset.batches(self.batch_size, shuffle=False, device=self.device))

    def __repr__(self) -> str:
        return f"TaskStream({self.name!r}, batch_size={self.batch_size}, {self.kw})"


def task_batches(name: str, batch_size: int, *, seed: int = 0,
                 device: torch.device | str | None = None, **kw) -> TaskStream:
    """An endless iterator of fresh batches of task ``name`` (same keywords as :func:`make_task`)."""
    return TaskStream(name, batch_size, seed=seed, device=device, **kw)


# ----------------------------------------------------------------------------------------------
# A per-token task on continuous inputs: mixing (attention) and a nonlinearity (feed-forward)
# ----------------------------------------------------------------------------------------------


def centered_xor_batch(
    batch_size: int,
    seq_len: int = 16,
    *,
    offset_std: float = 2.0,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> LMBatch:
    r"""A batch of the *centered XOR* task: is token ``j`` on the same side of the
    sequence's mean in both features?

    Each sequence is ``seq_len`` points of the plane around a random centre:
    ``x_j = μ + ε_j`` with ``μ ~ N(0, offset_std² I)`` (one per sequence) and
    ``ε_j ~ N(0, I)``. With ``x̄`` the sequence's own mean, token ``j``'s label is

    .. math::
        y_j = \mathbb{1}\left[(x_{j,1} - \bar x_1)\,(x_{j,2} - \bar x_2) > 0\right],

    the XOR of the two signs of ``x_j - x̄``. A model needs the whole sequence to
    find ``x̄`` (a job for attention: ``μ`` is random, so ``x_j`` alone says little)
    *and* a nonlinearity for the XOR, which no linear function of ``(x_j, x̄)``
    computes. The two classes are equally likely.

    Returns an :class:`LMBatch`: ``input`` holds the features, float ``[B, T, 2]``;
    ``target`` the labels, long ``[B, T]`` in ``{0, 1}``; ``pad_id`` is ``-100``
    (no token is padding). So :func:`lib.lm_loss` and :func:`lib.evaluate` apply
    to a ``model(input) -> logits [B, T, 2]``. The same ``seed`` gives the same
    batch (generated on the CPU, then moved to ``device``).
    """
    _check_int("batch_size", batch_size, minimum=1)
    _check_int("seq_len", seq_len, minimum=2)
    _check_int("seed", seed)
    if isinstance(offset_std, bool) or not isinstance(offset_std, (int, float)):
        raise TypeError(f"offset_std must be a number, got {offset_std!r} ({type(offset_std).__name__})")
    if offset_std < 0:
        raise ValueError(f"offset_std={offset_std!r} must be >= 0")
    generator = torch.Generator().manual_seed(seed)
    centre = offset_std * torch.randn(batch_size, 1, 2, generator=generator)  # μ    [B, 1, 2]
    x = centre + torch.randn(batch_size, seq_len, 2, generator=generator)     # x_j  [B, T, 2]
    deviation = x - x.mean(dim=1, keepdim=True)                               # x_j - x̄
    y = (deviation[..., 0] * deviation[..., 1] > 0).long()                    # y_j  [B, T]
    return LMBatch(x, y, pad_id=-100).to(device)
