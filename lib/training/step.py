r"""One optimizer step, of one model: what the training loop (:mod:`lib.training.loop`) repeats.

The loop is written once; what it repeats is a *step object*. :class:`ModelStep` trains one model
(under ``torchrun``, its DDP replica); :class:`~lib.training.ensemble.EnsembleStep` trains M models of
one architecture as one batched computation. Both do the same five things (the :class:`Step` protocol):

1. ``losses(batch)``: forward and loss, ``[M]`` (``M = 1`` for one model);
2. ``logged(losses)``: the values the history records (under ``torchrun``: the mean over the ranks);
3. ``update(losses)``: backward, the key biases' gradients set to exact zeros
   (:func:`inert_parameters`), gradient clipping, the optimizer's and the scheduler's step; returns each
   model's gradient norm before clipping, ``[M]``;
4. ``sync()``: the models hold the trained weights (before an evaluation, a checkpoint and at the end);
5. ``state_dict()`` / ``load_state_dict()``: the weights a checkpoint saves and restores;
6. ``stop(models)``: train these models (whose loss was not finite) no further, the others on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

import torch
from torch import Tensor, nn
from torch.optim.lr_scheduler import LRScheduler

from ..model.attention import attention_layers
from . import distributed
from .batching import Batch, LMBatch
from .options import TrainingOptions


class Step(Protocol):
    """What the training loop needs of a step object (see the module's docstring)."""

    models: list[nn.Module]
    optimizer: torch.optim.Optimizer
    scheduler: LRScheduler

    def training(self) -> AbstractContextManager: ...
    def losses(self, batch: Batch | LMBatch) -> Tensor: ...
    def logged(self, losses: Tensor) -> Tensor: ...
    def update(self, losses: Tensor) -> Tensor: ...
    def sync(self) -> None: ...
    def state_dict(self) -> dict[str, Tensor]: ...
    def load_state_dict(self, state: dict[str, Tensor]) -> None: ...
    def stop(self, models: list[int]) -> None: ...


class ModelStep:
    """The step of one model: ``loss_fn(model, batch)``, backward, clipping, the optimizer's step.

    Under ``torchrun`` the model is wrapped in ``DistributedDataParallel`` for the forward pass
    (:func:`~lib.training.distributed.wrap`), which averages the gradients over the ranks during
    ``backward``; the recorded loss is the mean over the ranks.
    """

    def __init__(self, model: nn.Module, options: TrainingOptions):
        self.model, self.models, self.options = model, [model], options
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.inert = [p for p in inert_parameters(model).values() if p.requires_grad]
        self.optimizer = options.build_optimizer(self.params)
        self.scheduler = options.build_scheduler(self.optimizer)
        self.wrapped = distributed.wrap(model)  # DistributedDataParallel under torchrun, else model itself

    def training(self) -> AbstractContextManager:
        return training_mode(self.model)

    def losses(self, batch: Batch | LMBatch) -> Tensor:
        """The loss of this rank's share of the batch, ``[1]``."""
        return self.options.loss_fn(self.wrapped, batch, **self.options.loss_kw).reshape(1)

    def logged(self, losses: Tensor) -> Tensor:
        """The loss to record: detached, the mean over the ranks under torchrun."""
        return distributed.mean_over_ranks(losses)

    def update(self, losses: Tensor) -> Tensor:
        """Backward, exact zeros for the inert gradients, clipping, the optimizer's and the scheduler's
        step; returns the gradient norm before clipping, ``[1]``."""
        self.optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()  # under DDP the gradients are averaged over the ranks here
        zero_inert_gradients(self.inert)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.params, self.options.max_norm)
        self.optimizer.step()
        self.scheduler.step()
        return grad_norm.reshape(1)

    def sync(self) -> None:
        """Nothing to do: the model trains in place."""

    def state_dict(self) -> dict[str, Tensor]:
        return self.model.state_dict()

    def load_state_dict(self, state: dict[str, Tensor]) -> None:
        self.model.load_state_dict(state)

    def stop(self, models: list[int]) -> None:
        """Never called: when its one model diverges, the loop stops the run."""


@contextmanager
def training_mode(model: nn.Module) -> Iterator[None]:
    """``model.train()`` for the block; the mode the model was in afterwards, even if the block raises."""
    was_training = model.training
    model.train()
    try:
        yield
    finally:
        model.train(was_training)


def inert_parameters(model: nn.Module) -> dict[str, Tensor]:
    r"""The parameters whose gradient is zero in exact arithmetic, by name: the key biases ``b_K`` of
    softmax attention (every :class:`~lib.MultiHeadAttention` without rotary positions, computed by
    the softmax itself or by a kernel that declares ``shift_invariant = True``, e.g. the exact
    ``"memory_efficient"``, ``"sliding_window"`` and ``"bigbird"`` kernels of :func:`lib.use_attention`).

    .. math::
        \mathrm{softmax}_j\!\left(\frac{q_i \cdot (k_j + b_K)}{\sqrt{d_k}}\right)
        = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}}\right)

    since ``b_K`` shifts every score of row ``i`` by the same ``q_i · b_K``; so ``∂L/∂b_K = 0``.
    In floating point that gradient is rounding noise (about 1e-9), and Adam divides it by its own
    running size: the bias would take steps of size ``lr`` and wander (about 0.02 in 60 steps)
    without changing anything the model computes, and two runs that round differently (one model
    alone, or five in one batch, :func:`~lib.training.ensemble.train_ensemble`) would end with
    different biases. The loop sets these gradients to exact zeros, so Adam leaves the biases where
    they are (weight decay, if any, still acts). With rotary positions ``R_i q · R_j b_K`` depends
    on ``j``, and a kernel that is not a softmax over the scores (Performer, Linformer) need not be
    invariant to the shift: there the bias is trained.
    """
    return {
        f"{name}.k_proj.bias".lstrip("."): layer.k_proj.bias
        for name, layer in attention_layers(model).items()
        if layer.k_proj.bias is not None
        and layer.rotary is None
        and (layer.kernel is None or getattr(layer.kernel, "shift_invariant", False) is True)
    }


@torch.no_grad()
def zero_inert_gradients(inert: Iterable[Tensor]) -> None:
    """Set the gradients of ``inert`` (:func:`inert_parameters`) to exact zeros, where backward gave one."""
    for p in inert:
        if p.grad is not None:
            p.grad.zero_()
