"""M models of one architecture as one computation with ``torch.vmap``: any architecture, any loss.

``torch.func.functional_call`` runs the architecture with one model's weights (its slice ``[m]`` of
every stacked parameter and buffer, ``[M, ...]``), and ``torch.vmap`` maps that over the M slices.
:func:`~lib.training.ensemble.train_ensemble` uses it where the models do not fold
(:mod:`lib.training.folded`, faster on a CPU). With dropout each model draws its own masks
(``randomness="different"``).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch.func import functional_call
from torch.nn.attention import SDPBackend, sdpa_kernel

from .batching import Batch, LMBatch


class _LossOf(nn.Module):
    """``loss_fn(model, batch)`` as a module, so that ``functional_call`` can swap in one model's weights."""

    def __init__(self, model: nn.Module, loss_fn: Callable[..., Tensor], loss_kw: dict):
        super().__init__()
        self.model, self.loss_fn, self.loss_kw = model, loss_fn, loss_kw

    def forward(self, batch: Batch | LMBatch) -> Tensor:
        return self.loss_fn(self.model, batch, **self.loss_kw)


class Vmapped:
    """The vmapped loss of M models: ``losses(batch) -> [M]``.

    ``params`` and ``buffers`` map each name of the architecture's ``named_parameters()`` and
    ``named_buffers()`` to its stack ``[M, ...]`` (``torch.func.stack_module_state``); buffers that
    the forward pass updates (a batch norm's running statistics) are updated in their stacks.
    """

    def __init__(
        self,
        template: nn.Module,
        params: dict[str, Tensor],
        buffers: dict[str, Tensor],
        loss_fn: Callable[..., Tensor],
        loss_kw: dict,
    ):
        self.params = {f"model.{k}": v for k, v in params.items()}
        self.buffers = {f"model.{k}": v for k, v in buffers.items()}
        self.module = _LossOf(copy.deepcopy(template), loss_fn, loss_kw).train()  # the architecture, run functionally

    def losses(self, batch: Batch | LMBatch, per_model: bool) -> Tensor:
        """The M models' losses, ``[M]``: model ``m`` on ``batch`` (or on row ``m`` of a stacked batch)."""
        tensors = {k: v for k, v in vars(batch).items() if isinstance(v, Tensor)}

        def one(params: dict, buffers: dict, tensors: dict) -> Tensor:  # one model on its batch
            return functional_call(self.module, (params, buffers), (type(batch)(**tensors, pad_id=batch.pad_id),))

        batched = torch.vmap(one, in_dims=(0, 0, 0 if per_model else None), randomness="different")
        try:
            with _batchable_attention(batch):
                return batched(self.params, self.buffers, tensors)
        except RuntimeError as error:
            if per_model and ".item()" in str(error):
                raise ValueError(
                    f"data: one source per model needs a model whose forward runs under torch.vmap with batched "
                    f"inputs, but {type(self.module.model).__name__}'s reads tensor values on the host (.item(), "
                    "e.g. a range check of its token ids); pass one shared source instead"
                ) from error
            raise


def _batchable_attention(batch: Batch | LMBatch) -> contextlib.AbstractContextManager:
    """On the CPU, ``F.scaled_dot_product_attention`` restricted to its math backend (matrix products
    and a softmax, which ``vmap`` batches); its fused CPU kernel has no batching rule, and ``vmap``
    would run it once per model. Elsewhere nothing changes (CUDA's fused kernels batch)."""
    device = next(v for v in vars(batch).values() if isinstance(v, Tensor)).device
    return sdpa_kernel(SDPBackend.MATH) if device.type == "cpu" else contextlib.nullcontext()
