"""Teacher-forced evaluation on a finite data set: loss, token accuracy, exact match."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from ..model import eval_mode
from .batching import Batch, LMBatch, Seq2SeqDataset, to_lm_batch
from .data import TaskStream
from .losses import cross_entropy, logits_and_targets


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's first parameter (``TypeError`` for a model without parameters)."""
    try:
        return next(model.parameters()).device
    except StopIteration:
        raise TypeError(f"model ({type(model).__name__}) has no parameters to train") from None


@torch.no_grad()
def evaluate(
    model: nn.Module,
    data: Seq2SeqDataset | Batch | LMBatch | Iterable[Batch | LMBatch],
    *,
    lm: bool = False,
    batch_size: int = 256,
) -> dict[str, float]:
    """Teacher-forced metrics on a finite data set (padding ignored):

    - ``loss``: mean cross-entropy per target token;
    - ``token_accuracy``: fraction of target tokens whose argmax prediction is right;
    - ``exact_match``: fraction of sequences with *every* target token right.

    Teacher forcing feeds the true prefix, so this is an upper bound on what free-running
    (greedy) decoding achieves. ``lm=True`` evaluates a decoder-only ``model(input)`` on
    :func:`~lib.training.batching.to_lm_batch` of each batch. The model's training mode is restored afterwards.
    """
    if isinstance(data, TaskStream):
        raise TypeError("evaluate needs a finite data set, got an endless TaskStream; use make_task(...)")
    if isinstance(data, Seq2SeqDataset):
        data = data.batches(batch_size, shuffle=False)
    elif isinstance(data, (Batch, LMBatch)):
        data = [data]
    device = model_device(model)
    loss = correct = tokens = exact = sequences = 0.0
    with eval_mode(model):
        for batch in data:
            batch = batch.to(device)
            if lm and isinstance(batch, Batch):
                batch = to_lm_batch(batch)
            logits, target = logits_and_targets(model, batch)
            keep = target != batch.pad_id
            right = logits.argmax(dim=-1) == target
            loss += cross_entropy(logits.float(), target, batch.pad_id, reduction="sum").item()
            correct += (right & keep).sum().item()
            tokens += keep.sum().item()
            exact += (right | ~keep).all(dim=1).sum().item()
            sequences += target.shape[0]
    if tokens == 0:
        raise ValueError("data held no target tokens to evaluate on")
    return {"loss": loss / tokens, "token_accuracy": correct / tokens, "exact_match": exact / sequences}
