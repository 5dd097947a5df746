"""``train``: one model, trained by the loop (:mod:`lib.training.loop`) with a :class:`~lib.training.step.ModelStep`.

The losses are in :mod:`lib.training.losses`, evaluation in :mod:`lib.training.evaluation`, the
options in :mod:`lib.training.options`, the learning-rate schedules (the paper's among them) in
:mod:`lib.training.schedules`; several models in one pass: :mod:`lib.training.ensemble`.
"""

from __future__ import annotations

import torch._dynamo  # noqa: F401  (see below)
from torch import nn

from . import loop
from .evaluation import model_device
from .loop import History
from .options import TrainingOptions
from .sources import Data, batch_source
from .step import ModelStep

# ``torch._dynamo`` is imported above, with this module, because ``torch.optim`` imports it anyway when
# the first optimizer of a process is built (``Optimizer.add_param_group`` is wrapped by
# ``torch._disable_dynamo``). That takes about a second, once; here it is paid on the first use of
# ``lib.training`` (a task, a seed), not inside the first training run, which it would slow down by
# that second, and so the first of two runs timed one after the other.


def train(model: nn.Module, data: Data, **options) -> History:
    """Train ``model`` for ``steps`` optimizer steps and return the :class:`~lib.training.loop.History`.

    ``options`` are the keyword options of :class:`~lib.training.options.TrainingOptions`, shared with
    :func:`~lib.training.ensemble.train_ensemble`: ``steps`` (required), ``loss_fn``, ``optimizer``,
    ``lr``, ``schedule``, ``warmup_steps``, ``label_smoothing``, ``clip_grad_norm``, ``batch_size``,
    ``eval_fn``, ``eval_every``, ``device``, ``progress``, ``desc``, ``checkpoint``, ``checkpoint_every``.

    data
        a :class:`~lib.training.batching.Seq2SeqDataset`, an iterable of batches, a
        :class:`~lib.training.data.TaskStream`, a function ``step -> batch`` or a single batch
        (:func:`~lib.training.sources.batch_source`).

    Each step: ``loss_fn(model, batch)``, backward, the gradients of the key biases of softmax
    attention (zero in exact arithmetic) set to exact zeros (:func:`~lib.training.step.inert_parameters`),
    the global gradient norm clipped to ``clip_grad_norm`` (recorded before clipping), Adam's step
    (the paper's β = (0.9, 0.98), ε = 1e-9, unless ``optimizer`` says otherwise), the schedule's step.
    Batches are moved to the model's device (or to ``device``, where the model is moved first). The
    model is in ``train()`` mode while training (``eval()`` mode while ``eval_fn`` runs) and back in
    the mode it was in when this returns. If the loss becomes NaN or infinite, training stops with a
    warning and the history so far is returned.

    **Under torchrun** (an initialised ``torch.distributed`` process group, see
    :mod:`lib.training.distributed`) the same call trains data-parallel: ``batch_size`` (and a
    ``TaskStream``'s batch size) is the *global* batch, of which each of the N ranks trains on
    ``1/N``; the model is wrapped in ``DistributedDataParallel`` for the steps (``loss_fn`` must call
    the model, ``model(...)``, not its submodules); the recorded loss is the mean over the ranks;
    rank 0 alone evaluates, shows progress and writes the checkpoint; every rank returns rank 0's
    history.
    """
    options = TrainingOptions(**options)
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if options.device is not None:
        model.to(options.device)
    device = model_device(model)  # a model without parameters is refused here
    step = ModelStep(model, options)
    (history,) = loop.run(step, batch_source(data, options.batch_size, device), options)
    return history
