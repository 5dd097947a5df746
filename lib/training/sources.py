"""Where a run's batches come from: any accepted form of ``data`` as one function ``step -> batch``.

:func:`batch_source` serves one model (under ``torchrun``: this rank's share of every batch);
:func:`ensemble_source` serves M models, from one shared source or one source per model (their
batches stacked, ``[M, B, ...]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch
import torch.nn.functional as F

from . import distributed
from .batching import Batch, LMBatch, Seq2SeqDataset, to_lm_batch
from .data import TaskStream
from .losses import lm_loss

Data = Seq2SeqDataset | Iterable[Batch | LMBatch] | Callable[[int], Batch | LMBatch]
Source = Callable[[int], Batch | LMBatch]


def batch_source(data: Data, batch_size: int, device: torch.device | None = None) -> Source:
    """Turn ``data`` into a function ``step -> batch`` (steps count from 1), on ``device`` if given.

    ``data`` is a :class:`~lib.training.batching.Seq2SeqDataset` (``batch_size`` examples a step,
    reshuffled every epoch: epoch ``e`` is ``torch.randperm`` seeded with ``s + e``, where ``s`` is the
    seed given to torch, e.g. by :func:`~lib.training.device.seed_everything`, read with
    ``torch.initial_seed()`` so no random number is drawn), an iterable of batches (started again
    when it ends, e.g. a list; an endless :class:`~lib.training.data.TaskStream` draws fresh examples
    every step), a function ``step -> batch``, or a single batch (to check that a model can overfit it).
    In one process (no ``torch.distributed`` group) a step's batch is the whole batch; under torchrun
    it is this rank's share (see :mod:`lib.training.distributed`).
    """
    source = _source(data, batch_size)
    return source if device is None else lambda step: source(step).to(device)


def _source(data: Data, batch_size: int) -> Source:
    if isinstance(data, Seq2SeqDataset):
        batches = distributed.dataset_batches(data, batch_size, seed=distributed.shuffle_seed())
        return lambda step: next(batches)
    if isinstance(data, TaskStream):
        stream = distributed.rank_stream(data)  # the stream itself in one process
        return lambda step: next(stream)
    if isinstance(data, (Batch, LMBatch)):
        return lambda step: distributed.shard(data)
    if callable(data):
        return lambda step: distributed.shard(data(step))
    if not isinstance(data, Iterable):
        raise TypeError(
            f"data must be a Seq2SeqDataset, an iterable of batches or a function step -> batch, "
            f"got {type(data).__name__}"
        )
    iterator = iter(data)

    def next_batch(step: int) -> Batch | LMBatch:
        nonlocal iterator
        try:
            return distributed.shard(next(iterator))
        except StopIteration:
            iterator = iter(data)  # start the iterable again
            try:
                return distributed.shard(next(iterator))
            except StopIteration:
                raise ValueError(
                    f"data ran out at step {step}: a one-shot iterator cannot be restarted; pass a list "
                    "of batches, a Seq2SeqDataset, a TaskStream or a function step -> batch"
                ) from None

    return next_batch


def ensemble_source(
    data: Data | list[Data], n_models: int, batch_size: int, loss_fn: Callable, device: torch.device
) -> tuple[Source, bool]:
    """The batches of M models as one function ``step -> batch`` on ``device``, and whether each model
    has its own source (``per_model``).

    ``data`` is one source for all models (every model sees the same batch at every step), or a list of
    M sources, one per model, whose batches are stacked, ``[M, B, ...]`` (right-padded with ``pad_id``
    to one length); a list of batches is one source, not one per model. With ``loss_fn=lm_loss`` a
    seq2seq batch is converted once here, not once per model (``to_lm_batch`` runs on the host).
    """
    per_model = isinstance(data, (list, tuple)) and len(data) > 0 and not isinstance(data[0], (Batch, LMBatch))
    if per_model and len(data) != n_models:
        raise ValueError(f"data holds {len(data)} sources for {n_models} models; expected one per model, or one source")
    sources = [_source(d, batch_size) for d in data] if per_model else [_source(data, batch_size)]

    def next_batch(step: int) -> Batch | LMBatch:
        batches = [source(step) for source in sources]
        if loss_fn is lm_loss:
            batches = [to_lm_batch(b) if isinstance(b, Batch) else b for b in batches]
        return (stack_batches(batches) if per_model else batches[0]).to(device)

    return next_batch, per_model


def stack_batches(batches: list[Batch | LMBatch]) -> Batch | LMBatch:
    """The models' batches stacked, ``[M, B, ...]``, right-padded with ``pad_id`` to one length."""
    kinds = {type(b) for b in batches}
    if len(kinds) != 1 or not kinds <= {Batch, LMBatch}:
        raise TypeError(
            f"per-model sources must all give Batch or all LMBatch, got {sorted(k.__name__ for k in kinds)}"
        )
    pad_id = batches[0].pad_id
    fields = {}
    for name in ("src", "tgt_in", "tgt_out") if isinstance(batches[0], Batch) else ("input", "target"):
        tensors = [getattr(b, name) for b in batches]
        if len({t.shape[0] for t in tensors}) != 1:
            raise ValueError(f"the models' batches have {[t.shape[0] for t in tensors]} rows; expected one batch size")
        length = max(t.shape[1] for t in tensors)
        fields[name] = torch.stack(
            [F.pad(t, (0, 0) * (t.dim() - 2) + (0, length - t.shape[1]), value=pad_id) for t in tensors]
        )
    return type(batches[0])(**fields, pad_id=pad_id)
