"""The training losses: cross-entropy of a model's logits against the targets, padding ignored."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .batching import Batch, LMBatch, to_lm_batch


def logits_and_targets(model: nn.Module, batch: Batch | LMBatch) -> tuple[Tensor, Tensor]:
    """Run the model on a batch: ``model(src, tgt_in)`` for a :class:`Batch`, ``model(input)`` for an
    :class:`LMBatch`; return the logits ``[B, T, V]`` and the targets ``[B, T]``."""
    if isinstance(batch, Batch):
        logits, target, call = model(batch.src, batch.tgt_in), batch.tgt_out, "model(src, tgt_in)"
    elif isinstance(batch, LMBatch):
        logits, target, call = model(batch.input), batch.target, "model(input)"
    else:
        raise TypeError(f"batch must be a Batch or an LMBatch, got {type(batch).__name__}")
    if not isinstance(logits, Tensor):
        raise TypeError(f"{call} must return a logits tensor [B, T, V], got {type(logits).__name__}")
    if logits.dim() != 3 or logits.shape[:2] != target.shape:
        raise ValueError(
            f"{call} returned shape {tuple(logits.shape)}; expected logits [B, T, V] with "
            f"(B, T) = {tuple(target.shape)}"
        )
    return logits, target


def cross_entropy(
    logits: Tensor, target: Tensor, pad_id: int, label_smoothing: float = 0.0, reduction: str = "mean"
) -> Tensor:
    """``F.cross_entropy`` of logits ``[B, T, V]`` against targets ``[B, T]``, positions holding ``pad_id`` ignored."""
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        target.reshape(-1),
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
        reduction=reduction,
    )


def seq2seq_loss(model: nn.Module, batch: Batch, label_smoothing: float = 0.0) -> Tensor:
    """Mean cross-entropy of ``model(src, tgt_in)`` against ``tgt_out``, padding ignored.

    With label smoothing ε (paper §5.4: ε = 0.1) the target distribution puts 1 - ε on the right
    token and spreads ε uniformly over the vocabulary (``F.cross_entropy(label_smoothing=ε)``).
    """
    if not isinstance(batch, Batch):
        raise TypeError(
            f"seq2seq_loss needs a Batch (src, tgt_in, tgt_out), got {type(batch).__name__}; "
            "for a decoder-only model use lm_loss"
        )
    logits, target = logits_and_targets(model, batch)
    return cross_entropy(logits, target, batch.pad_id, label_smoothing)


def lm_loss(model: nn.Module, batch: LMBatch | Batch, label_smoothing: float = 0.0) -> Tensor:
    """Mean next-token cross-entropy of a decoder-only ``model(input)``, on the answer tokens only.

    A seq2seq :class:`Batch` is converted first with :func:`lib.training.batching.to_lm_batch`.
    """
    if isinstance(batch, Batch):
        batch = to_lm_batch(batch)
    if not isinstance(batch, LMBatch):
        raise TypeError(f"lm_loss needs an LMBatch or a Batch, got {type(batch).__name__}")
    logits, target = logits_and_targets(model, batch)
    return cross_entropy(logits, target, batch.pad_id, label_smoothing)
