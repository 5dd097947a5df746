"""Toy sequence-to-sequence tasks, generated in `lib`: no downloads, deterministic given a seed.

Every example is a pair (source, target) of token-id lists, batched with teacher forcing by
:mod:`lib.training.batching` (whose names this module re-exports: ``Vocab``, ``Batch``, ``collate``, ...).

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
from collections.abc import Callable, Sequence

import torch

from ..model.checks import check_choice, check_int, check_number
from .batching import (  # noqa: F401  (re-exported: lib.training.data is where readers look for them)
    BOS,
    BOS_ID,
    EOS,
    EOS_ID,
    PAD,
    PAD_ID,
    SPECIALS,
    Batch,
    LMBatch,
    Seq2SeqDataset,
    Vocab,
    collate,
    pad_sequences,
    to_lm_batch,
)
from .device import check_seed

# ----------------------------------------------------------------------------------------------
# The tasks
# ----------------------------------------------------------------------------------------------


def _symbol_task(name: str, transform: Callable[[list[str]], list[str]]):
    """A task on strings of symbols ``0 … n_symbols-1`` whose target is ``transform(source)``."""

    def make(rng: random.Random, n: int, *, n_symbols: int = 10, min_len: int = 3, max_len: int = 10):
        check_int("n_symbols", n_symbols, minimum=1)
        check_int("min_len", min_len, minimum=1)
        check_int("max_len", max_len, minimum=min_len)
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
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

#: Source formats of the ``dates`` task. Fields: ``{day}`` 29 / 3, ``{dd}`` 29 / 03, ``{mm}`` 11,
#: ``{month}`` november, ``{mon}`` nov, ``{year}`` 2026.
DATE_FORMATS = (
    "{day} {mon} {year}",  # 29 nov 2026
    "{mm}/{dd}/{year}",  # 11/29/2026
    "{month} {day}, {year}",  # november 29, 2026
    "{year}.{mm}.{dd}",  # 2026.11.29
    "{dd}.{mm}.{year}",  # 29.11.2026
    "{day} {month} {year}",  # 29 november 2026
)

# Fixed vocabularies (not read off the sampled data), so every sample of the task shares them.
_DATE_SRC_CHARS = list(string.digits + string.ascii_lowercase + " ,./-")
_DATE_TGT_CHARS = list(string.digits + "-")


def format_date(date: datetime.date, fmt: str) -> str:
    """Write ``date`` in format ``fmt`` (see :data:`DATE_FORMATS`)."""
    month = MONTHS[date.month - 1]
    fields = dict(
        day=date.day, dd=f"{date.day:02d}", mm=f"{date.month:02d}", month=month, mon=month[:3], year=f"{date.year:04d}"
    )
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
    check_int("min_year", min_year, minimum=1)
    check_int("max_year", max_year, minimum=min_year, maximum=9999)
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
    check_int("n_keys", n_keys, minimum=1, maximum=26)
    check_int("n_values", n_values, minimum=1, maximum=10)
    check_int("n_pairs", n_pairs, minimum=1, maximum=n_keys)
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
    check_choice("name", name, sorted(TASKS))
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
    check_int("n", n, minimum=1)
    check_seed("seed", seed, bits=None)  # Python's random.Random keeps every bit
    return make(random.Random(seed), n, **kw)


class TaskStream:
    """An endless stream of fresh batches of task ``name``, for training on new samples every step.

    >>> stream = TaskStream("reverse", batch_size=32, seed=0, max_len=12)
    >>> batch = next(stream)            # a Batch; the next call gives new examples
    >>> len(stream.src_vocab)           # for sizing the model
    13

    Bad arguments fail here (the first batch is made at construction), not at the first ``next``.
    """

    def __init__(self, name: str, batch_size: int, *, seed: int = 0, device: torch.device | str | None = None, **kw):
        self.make = _task(name, kw)
        check_int("batch_size", batch_size, minimum=1)
        check_seed("seed", seed, bits=None)  # Python's random.Random keeps every bit
        self.name, self.batch_size, self.device, self.kw = name, batch_size, device, kw
        self.rng = random.Random(seed)
        self._next = self.make(self.rng, batch_size, **kw)
        self.src_vocab, self.tgt_vocab = self._next.src_vocab, self._next.tgt_vocab

    def __iter__(self) -> TaskStream:
        return self

    def __next__(self) -> Batch:
        dataset, self._next = self._next, self.make(self.rng, self.batch_size, **self.kw)
        return next(dataset.batches(self.batch_size, shuffle=False, device=self.device))

    def __repr__(self) -> str:
        return f"TaskStream({self.name!r}, batch_size={self.batch_size}, {self.kw})"


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
    check_int("batch_size", batch_size, minimum=1)
    check_int("seq_len", seq_len, minimum=2)
    check_seed("seed", seed)
    check_number("offset_std", offset_std, 0.0)
    generator = torch.Generator().manual_seed(seed)
    centre = offset_std * torch.randn(batch_size, 1, 2, generator=generator)  # μ    [B, 1, 2]
    x = centre + torch.randn(batch_size, seq_len, 2, generator=generator)  # x_j  [B, T, 2]
    deviation = x - x.mean(dim=1, keepdim=True)  # x_j - x̄
    y = (deviation[..., 0] * deviation[..., 1] > 0).long()  # y_j  [B, T]
    return LMBatch(x, y, pad_id=-100).to(device)
