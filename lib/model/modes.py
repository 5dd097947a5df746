"""Switching a model to evaluation mode for a while, and back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torch import nn


@contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """``model.eval()`` inside the ``with`` block; the mode it had is restored on exit, even on error.

    >>> with eval_mode(model):
    ...     logits = model(tokens)   # dropout off
    """
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
