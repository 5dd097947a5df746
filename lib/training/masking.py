r"""Corrupting text for pretraining an encoder: BERT's masking and T5's span corruption.

**Masked language modelling** (Devlin et al., 2019). Each position that holds text (not padding, not a
special token) is *selected* with probability ``rate`` (15 %), independently. A selected token is
replaced by ``<mask>`` with probability 0.8, by a random text token with probability 0.1, and kept with
probability 0.1; the model is trained to predict the original token at every selected position, and
only there:

.. math::
    \mathcal{L} = -\frac{1}{|S|} \sum_{t \in S} \log p_\theta(x_t \mid \tilde{x}), \qquad
    S = \{t : \text{selected}\}, \quad \tilde{x} = \text{the corrupted sequence}.

The random and the kept tokens make the model predict every input token, not only ``<mask>``, which it
never sees after pretraining.

**Span corruption** (Raffel et al., 2020). About ``rate`` of a sequence's tokens, in spans of mean length
``mean_span``, are cut out; each span becomes one sentinel in the input, and the target lists the
sentinels, each followed by the span it replaced::

    x       = Kato was born in Lima and works as a pilot .
    input   = Kato was <extra_0> Lima and works as <extra_1> .
    target  = <extra_0> born in <extra_1> a pilot

The two together give back the sequence (:func:`restore_spans`). An encoder-decoder learns to write
the target from the input (:func:`span_corruption_batch` gives its teacher-forced :class:`Batch`).

**Span infilling for a decoder** (CS224N's Assignment 5). One span is cut out and moved to the end,
behind the one sentinel ``⁇`` written twice, so that a decoder-only model trained with the plain
next-token loss on the whole row learns to write the span from the words on *both* of its sides::

    x       = Kato was born in Lima .
    row     = Kato was born in ⁇ . ⁇ Lima

(:func:`corrupt_span` for one span, :func:`span_infilling_batch` for a batch of random spans).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ..model.checks import check_int, check_number, check_tensor
from .batching import PAD_ID, Batch, LMBatch, collate, pad_sequences


def _check_ids(name: str, ids: object) -> list[int]:
    if isinstance(ids, Tensor):
        ids = ids.tolist()
    if not isinstance(ids, (list, tuple)):
        raise TypeError(f"{name} must be a list of token ids, got {type(ids).__name__}")
    return [check_int(name, i, minimum=0) for i in ids]


def _check_generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator (seeded by the caller), got {type(generator).__name__}")
    return generator


def mask_tokens(
    tokens: Tensor,
    *,
    mask_id: int,
    vocab_size: int,
    special_ids: Sequence[int] = (),
    pad_id: int = PAD_ID,
    rate: float = 0.15,
    generator: torch.Generator,
) -> LMBatch:
    """BERT's masking of ``tokens [B, T]`` (see the module docstring): an :class:`LMBatch` whose ``input``
    is the corrupted ``[B, T]`` and whose ``target`` holds the original token at each selected position
    and ``pad_id`` elsewhere, so that :func:`~lib.training.losses.lm_loss` trains an encoder on the
    selected positions only.

    Positions holding ``pad_id`` or one of ``special_ids`` are never selected. A random replacement is
    drawn uniformly from the ids of ``[0, vocab_size)`` that are neither ``pad_id`` nor special. The
    draws come from ``generator`` (on the CPU): the same seed gives the same batch.

    A batch always has a position to predict: when no position of the whole batch is selected (a
    short batch: its ``n`` text positions are all left out with probability ``(1 − rate)ⁿ``, about half
    the time for one row of 4), one text position, drawn uniformly, is selected, since
    :func:`~lib.training.losses.lm_loss` of a batch with no target is a mean over nothing, NaN. A
    batch that holds some selection is exactly as drawn (and takes no extra draw). ``tokens`` without
    any text position is refused.
    """
    check_tensor("tokens", tokens)
    if tokens.dim() != 2 or tokens.dtype != torch.long:
        raise ValueError(f"tokens must be a [B, T] long tensor, got shape {tuple(tokens.shape)} and {tokens.dtype}")
    check_int("vocab_size", vocab_size, minimum=2)
    check_int("mask_id", mask_id, minimum=0, maximum=vocab_size - 1)
    check_int("pad_id", pad_id, minimum=0, maximum=vocab_size - 1)
    specials = {*_check_ids("special_ids", special_ids), pad_id, mask_id}
    check_number("rate", rate, 0.0, 1.0, low_open=True)
    _check_generator(generator)
    text = [i for i in range(vocab_size) if i not in specials]
    if not text:
        raise ValueError(f"special_ids leave no text token in a vocabulary of {vocab_size} to draw replacements from")
    cpu = tokens.cpu()
    maskable = ~torch.isin(cpu, torch.tensor(sorted(specials)))
    selected = (torch.rand(cpu.shape, generator=generator) < rate) & maskable
    how = torch.rand(cpu.shape, generator=generator)  # < 0.8: <mask>; < 0.9: a random token; else kept
    random_ids = torch.tensor(text)[torch.randint(len(text), cpu.shape, generator=generator)]
    if not selected.any():  # nothing to predict: lm_loss would average over no target (NaN)
        selected = _one_position(maskable, generator)
    corrupted = torch.where(selected & (how < 0.8), mask_id, cpu)
    corrupted = torch.where(selected & (how >= 0.8) & (how < 0.9), random_ids, corrupted)
    target = torch.where(selected, cpu, pad_id)
    return LMBatch(corrupted, target, pad_id).to(tokens.device)


def _one_position(maskable: Tensor, generator: torch.Generator) -> Tensor:
    """``[B, T]`` bool: one of the ``maskable`` positions, drawn uniformly from ``generator``."""
    candidates = maskable.flatten().nonzero().flatten()
    if len(candidates) == 0:
        raise ValueError(
            "tokens hold no text position to mask: every position is pad_id, mask_id or one of special_ids"
        )
    chosen = torch.zeros(maskable.numel(), dtype=torch.bool)
    chosen[candidates[torch.randint(len(candidates), (1,), generator=generator)]] = True
    return chosen.view(maskable.shape)


def _segments(n_items: int, n_segments: int, generator: torch.Generator) -> list[int]:
    """``n_items`` split at random into ``n_segments`` non-empty runs: their lengths."""
    cuts = torch.randperm(n_items - 1, generator=generator)[: n_segments - 1].add(1).sort().values.tolist()
    bounds = [0, *cuts, n_items]
    return [b - a for a, b in zip(bounds, bounds[1:])]


def corrupt_spans(
    tokens: Sequence[int],
    sentinel_ids: Sequence[int],
    *,
    rate: float = 0.15,
    mean_span: float = 3.0,
    generator: torch.Generator,
) -> tuple[list[int], list[int]]:
    """T5's span corruption of one sequence of text ids: ``(input, target)`` (see the module docstring).

    ``round(rate · n)`` tokens (at least 1, at most ``n − 1``) are corrupted, in
    ``round(noise / mean_span)`` spans (at least 1); the spans and the runs of kept tokens between them
    have random lengths (at least 1; the runs before the first span and after the last may be empty:
    T5's draw, randomly rolled, so that a single span can fall anywhere). Span ``k`` becomes
    ``sentinel_ids[k]`` in the input, and the target is ``sentinel_ids[0]``, span 0, ``sentinel_ids[1]``,
    span 1, … Needs ``n >= 2`` tokens and as many sentinels as spans.
    """
    tokens = _check_ids("tokens", tokens)
    sentinels = _check_ids("sentinel_ids", sentinel_ids)
    check_number("rate", rate, 0.0, 1.0, low_open=True, high_open=True)
    check_number("mean_span", mean_span, 1.0)
    _check_generator(generator)
    if len(tokens) < 2:
        raise ValueError(f"tokens must hold at least 2 ids to corrupt a span and keep one, got {len(tokens)}")
    if set(tokens) & set(sentinels):
        raise ValueError("tokens must not contain a sentinel id: the corruption could not be undone")
    n = len(tokens)
    n_noise = min(max(round(rate * n), 1), n - 1)
    n_kept = n - n_noise
    n_spans = min(max(round(n_noise / mean_span), 1), n_kept + 1)
    if n_spans > len(sentinels):
        raise ValueError(f"{n_spans} spans need {n_spans} sentinels, got {len(sentinels)} sentinel_ids")
    noise = _segments(n_noise, n_spans, generator)
    kept = _segments(n_kept + 2, n_spans + 1, generator)  # runs between the spans: the two ends may be empty
    kept[0], kept[-1] = kept[0] - 1, kept[-1] - 1
    source, target, start = [], [], 0
    for k, cut in enumerate(noise):
        source += [*tokens[start : start + kept[k]], sentinels[k]]
        target += [sentinels[k], *tokens[start + kept[k] : start + kept[k] + cut]]
        start += kept[k] + cut
    source += tokens[start:]
    return source, target


def restore_spans(source: Sequence[int], target: Sequence[int], sentinel_ids: Sequence[int]) -> list[int]:
    """The sequence that :func:`corrupt_spans` turned into ``(source, target)``: every sentinel of the
    source replaced by the span that follows the same sentinel in the target."""
    source, target = _check_ids("source", source), _check_ids("target", target)
    sentinels = set(_check_ids("sentinel_ids", sentinel_ids))
    spans, current = {}, None
    for token in target:
        if token in sentinels:
            current = spans.setdefault(token, [])
        elif current is None:
            raise ValueError("target must start with a sentinel: each span follows the sentinel that replaced it")
        else:
            current.append(token)
    missing = [s for s in source if s in sentinels and s not in spans]
    if missing:
        raise ValueError(f"source holds sentinels {missing} that the target does not define")
    return [t for s in source for t in (spans[s] if s in sentinels else [s])]


def span_corruption_batch(
    tokens: Tensor,
    sentinel_ids: Sequence[int],
    *,
    special_ids: Sequence[int] = (),
    pad_id: int = PAD_ID,
    rate: float = 0.15,
    mean_span: float = 3.0,
    generator: torch.Generator,
) -> Batch:
    """Span corruption of every row of ``tokens [B, T]`` (its ``pad_id`` and ``special_ids`` dropped first)
    as a teacher-forced :class:`~lib.training.batching.Batch` for an encoder-decoder: ``src`` the
    corrupted rows, ``tgt_in`` = ``<bos>`` + target, ``tgt_out`` = target + ``<eos>``
    (:func:`~lib.training.batching.collate`), on ``tokens``' device."""
    check_tensor("tokens", tokens)
    if tokens.dim() != 2 or tokens.dtype != torch.long:
        raise ValueError(f"tokens must be a [B, T] long tensor, got shape {tuple(tokens.shape)} and {tokens.dtype}")
    drop = {*_check_ids("special_ids", special_ids), check_int("pad_id", pad_id, minimum=0)}
    rows = [[t for t in row if t not in drop] for row in tokens.tolist()]
    pairs = [corrupt_spans(row, sentinel_ids, rate=rate, mean_span=mean_span, generator=generator) for row in rows]
    return collate(pairs, pad_id=pad_id).to(tokens.device)


def corrupt_span(tokens: Sequence[int], start: int, length: int, sentinel: int) -> list[int]:
    """Assignment 5's span corruption of one list of ids: ``prefix ⁇ suffix ⁇ span`` (module docstring),
    where ``span = tokens[start : start + length]`` (``1 <= length``, inside ``tokens``) and ``⁇`` is
    ``sentinel``; ``len(tokens) + 2`` ids. The input is left as it was."""
    tokens = _check_ids("tokens", tokens)
    check_int("length", length, minimum=1, maximum=max(len(tokens), 1))
    check_int("start", start, minimum=0, maximum=len(tokens) - length)
    check_int("sentinel", sentinel, minimum=0)
    return [*tokens[:start], sentinel, *tokens[start + length :], sentinel, *tokens[start : start + length]]


def span_infilling_batch(
    tokens: Tensor,
    sentinel: int,
    *,
    bos_id: int,
    eos_id: int,
    special_ids: Sequence[int] = (),
    pad_id: int = PAD_ID,
    max_span: int = 3,
    generator: torch.Generator,
) -> LMBatch:
    """Assignment 5's pretraining batch for a decoder-only model, from rows ``tokens [B, T]``.

    Each row's text (its ``pad_id``, ``bos_id``, ``eos_id``, ``sentinel`` and ``special_ids`` dropped) loses one span,
    of a length uniform in ``1 … min(max_span, n − 1)`` at a uniform start (two draws a row from
    ``generator``), and becomes ``<bos>`` :func:`corrupt_span` ``<eos>``; the :class:`LMBatch` is the
    next-token pair of that row: ``input [B, L]`` = row without its last id, ``target [B, L]`` = row
    without its first (``L`` = the longest text + 3), ``pad_id`` after the end, on ``tokens``' device.
    Every row needs at least 2 text ids.
    """
    check_tensor("tokens", tokens)
    if tokens.dim() != 2 or tokens.dtype != torch.long:
        raise ValueError(f"tokens must be a [B, T] long tensor, got shape {tuple(tokens.shape)} and {tokens.dtype}")
    check_int("sentinel", sentinel, minimum=0)
    check_int("max_span", max_span, minimum=1)
    _check_generator(generator)
    ends = {check_int("pad_id", pad_id, minimum=0), check_int("bos_id", bos_id, minimum=0)}
    ends.add(check_int("eos_id", eos_id, minimum=0))
    if sentinel in ends:
        raise ValueError(f"sentinel {sentinel} is also pad_id, bos_id or eos_id")
    drop = {*_check_ids("special_ids", special_ids), *ends, sentinel}
    rows = []
    for row in tokens.tolist():
        text = [t for t in row if t not in drop]
        if len(text) < 2:
            raise ValueError(f"every row needs at least 2 text ids to cut a span and keep one, got {len(text)}")
        length = 1 + int(torch.randint(min(max_span, len(text) - 1), (1,), generator=generator))
        start = int(torch.randint(len(text) - length + 1, (1,), generator=generator))
        rows.append([bos_id, *corrupt_span(text, start, length, sentinel), eos_id])
    padded = pad_sequences(rows, pad_id)
    return LMBatch(padded[:, :-1], padded[:, 1:], pad_id).to(tokens.device)
