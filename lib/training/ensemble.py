r"""Train several models of one architecture at once, as one batched computation.

An *ensemble* here is M copies of one architecture that differ only in their weights (e.g. their
seeds). :func:`train_ensemble` runs the training loop of :func:`~lib.training.train.train`
(:mod:`lib.training.loop`) with a step object that trains all M at once, :class:`EnsembleStep`. Its
forward pass runs in one of two ways:

- **folded** (:mod:`lib.training.folded`), when the architecture allows it: the M models run as one
  model on a batch of M·B rows, in which only the layers with weights (linear layers, layer norms,
  embeddings, learned positions) are stacked, ``[M, ...]``, and give each block of B rows its own
  model's weights; everything else runs once on all the rows, with PyTorch's ordinary kernels;
- **vmapped** (:mod:`lib.training.vmapped`), for any other architecture: ``torch.vmap`` over the
  stacked weights.

Either way the per-operation overhead of small models (Python, dispatch, allocation) is paid once per
step, not M times; on a GPU the M models fill the device. Folding is the default: it calls PyTorch's
ordinary kernels and needs no forward pass that runs under ``torch.vmap``.

The optimizer is one ``torch.optim`` optimizer over the stacked parameters. Adam, AdamW, SGD (with
momentum) and RMSprop work elementwise, so the stacked state *is* M independent states: model
``m``'s update reads only slice ``m``. The default Adam goes one step further: every stack lives in
its columns of one buffer ``[M, P]`` (and its gradient in the same columns of the buffer's), so an
update is a few operations on one tensor instead of a few on each of dozens (the same arithmetic).
Gradient clipping is per model (each model's global norm over its own slices, as ``train``
computes it for one model). The learning-rate schedule is shared. As in ``train``, the key biases of
softmax attention get exact zeros for gradients (:func:`~lib.training.step.inert_parameters`).
"""

from __future__ import annotations

import contextlib
import copy
import math
import warnings
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import stack_module_state
from torch.optim.lr_scheduler import LRScheduler

from ..model import eval_mode
from . import distributed, loop
from . import folded as folding
from .architecture import check_models, one_device
from .batching import Batch, LMBatch
from .loop import History
from .options import TrainingOptions
from .sources import Data, ensemble_source
from .step import inert_parameters, zero_inert_gradients
from .vmapped import Vmapped

#: ``torch.optim``'s optimizers that update each element of a tensor from that element's gradient and
#: state alone, so that one of them over the stacked models ``[M, ...]`` is M independent optimizers.
ELEMENTWISE = (
    torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD, torch.optim.RMSprop, torch.optim.Adagrad,
    torch.optim.Adamax, torch.optim.NAdam, torch.optim.RAdam, torch.optim.Adadelta, torch.optim.Rprop,
    torch.optim.ASGD,
)  # fmt: skip


class NotFoldedWarning(UserWarning):
    """The models of an ensemble are vmapped, not folded (:mod:`lib.training.folded`), and why."""


_REPORTED: set[tuple[str, str]] = set()  # (architecture, reason): each is reported once per process


def train_ensemble(
    models: Sequence[nn.Module], data: Data | Sequence[Data], *, fold: bool = True, **options
) -> list[History]:
    """Train M models of one architecture together for ``steps`` steps; one :class:`~lib.training.loop.History` per model.

    ``options`` are those of :func:`~lib.training.train.train` (:class:`~lib.training.options.TrainingOptions`),
    for every model alike: ``eval_fn`` is called on each model (its weights written back first),
    ``clip_grad_norm`` clips each model's own gradient norm, ``optimizer`` is ``None`` or a function
    ``parameters -> Optimizer`` (called once, on the stacked parameters, so it must update
    elementwise: one of :data:`ELEMENTWISE`, such as Adam, AdamW, SGD and RMSprop, or a class that
    says so with ``elementwise = True``; L-BFGS and Adafactor, whose step mixes the elements of a
    tensor, are refused with a ``ValueError``), ``schedule`` a name or a function ``optimizer ->
    LRScheduler``, and the progress bar shows the mean loss. A model whose loss is not finite stops
    there, as it would alone (its history ends, ``History.diverged`` holds the step, a warning names
    it), and the others train on. ``checkpoint`` saves and resumes the whole ensemble. It runs in one
    process (under torchrun, train each model with ``train``).

    **What equals training each model alone.** Without dropout, each model's history (losses,
    gradient norms, learning rates, evaluations) and final weights are those that
    ``train(model, data, ...)`` with the same options gives that model alone, up to float rounding (the
    batched kernels add in another order), every weight included: the key biases of softmax
    attention, whose true gradient is zero, get an exact zero in both loops. **With dropout** each
    model draws its own masks, independent of the other models' and at the model's own rate, but
    not the masks that the same model would draw alone (those depend on what else drew from torch's
    generator before, and on the shape of the batch): each model then trains as it could alone, with
    other draws, and its numbers differ from a run alone as much as two runs with different dropout
    draws do. The trained weights are written back into ``models``.

    models
        a list of M ``nn.Module`` of one class, on one device (or moved to ``device``), that differ
        only in their weights: the same submodules of the same kinds, with parameters and buffers of
        the same names and shapes and the same plain attributes (a dropout rate, a kernel, a replaced
        method); anything else is refused with a ``ValueError``, since the ensemble runs the first
        model's architecture for all of them.
    data
        one source for all models (anything ``train`` accepts; every model sees the same batch at
        every step), or a list of M sources, one per model, whose batches are stacked
        (:func:`~lib.training.sources.ensemble_source`). Vmapped, the model's forward must then run
        under ``torch.vmap`` with batched inputs: it may not read tensor values on the host.
    fold
        ``True`` (the default): if the architecture allows it, run the M models as one model on a
        batch of M·B rows (:mod:`lib.training.folded`: PyTorch's ordinary kernels), after checking
        on the first batch, without dropout, that this gives each model its own loss, and that a
        training step writes no buffer; else ``vmap`` over the stacked weights, with a warning
        (:class:`NotFoldedWarning`, once per architecture and reason) that says why. ``False``: ``vmap``.
        ``loss_fn`` folds only if it calls the model, or one method of it (``model.readouts(...)``),
        once, on inputs with one row per row of the batch; it may use the model's layers before that.
    """
    options = TrainingOptions(**options)
    models = check_models(models)
    if distributed.is_distributed():
        raise ValueError("train_ensemble runs in one process; under torchrun train each model with lib.train")
    if isinstance(options.optimizer, torch.optim.Optimizer):
        raise TypeError(
            "optimizer must be None or a function parameters -> Optimizer (e.g. functools.partial("
            "torch.optim.AdamW, lr=3e-3)), got an Optimizer object: train_ensemble builds it on the stacked parameters"
        )
    if isinstance(options.schedule, LRScheduler):
        raise TypeError(
            "schedule must be a name or a function optimizer -> LRScheduler, got an LRScheduler object: "
            "train_ensemble builds it on its own optimizer"
        )
    if not isinstance(fold, bool):
        raise TypeError(f"fold must be True or False, got {fold!r}")
    if options.device is not None:
        for model in models:
            model.to(options.device)
    device = one_device(models)
    next_batch, per_model = ensemble_source(data, len(models), options.batch_size, options.loss_fn, device)
    return loop.run(EnsembleStep(models, options, per_model, fold), next_batch, options)


class EnsembleStep:
    """The step of M models in one pass (the loop's step object, :mod:`lib.training.step`).

    The models' parameters and buffers are stacked, ``[M, ...]`` (``torch.func.stack_module_state``:
    new tensors, written back into the models by :meth:`sync`). The forward pass (folded or vmapped)
    is chosen on the first batch.
    """

    def __init__(self, models: list[nn.Module], options: TrainingOptions, per_model: bool, fold: bool):
        self.models, self.options, self.per_model, self.fold = models, options, per_model, fold
        self.params, self.buffers = stack_module_state(models)  # one name per tensor: tied weights once
        self.trainable = [p for p in self.params.values() if p.requires_grad]
        names = set(inert_parameters(models[0]))
        self.inert = [p for name, p in self.params.items() if name in names and p.requires_grad]
        self.flat = _flatten(self.trainable) if options.optimizer is None else None  # the default Adam's buffer
        self.optimizer = _elementwise(options.build_optimizer(self.trainable if self.flat is None else [self.flat]))
        self.scheduler = options.build_scheduler(self.optimizer)
        self.engine: folding.Folded | Vmapped | None = None
        self.stopped: dict[int, dict[str, Tensor]] = {}  # a diverged model -> its slices, as it stopped
        self.kept: Tensor | None = None  # the models still training, once one has stopped

    def training(self) -> contextlib.AbstractContextManager:
        """Nothing to switch: the forward pass runs on copies of the architecture, in training mode;
        the models themselves keep their mode."""
        return contextlib.nullcontext()

    def losses(self, batch: Batch | LMBatch) -> Tensor:
        """The M models' losses, ``[M]``: model ``m`` on ``batch`` (or on row ``m`` of a stacked batch)."""
        if self.engine is None:
            self.engine = self._engine(batch)
        return self.engine.losses(batch, self.per_model)

    def logged(self, losses: Tensor) -> Tensor:
        return losses.detach()

    def update(self, losses: Tensor) -> Tensor:
        """Backward, per-model clipping, the optimizer's and the scheduler's step; the M norms before clipping.

        The models are independent, so the gradient of the sum of their losses is, slice by slice, each
        model's own gradient. Model ``m``'s norm is ``sqrt(Σ_p ‖∂L_m/∂p[m]‖²)`` and its slices are
        scaled by ``min(1, max_norm / (norm + 1e-6))``, as ``torch.nn.utils.clip_grad_norm_`` does for
        one model.
        """
        total = losses.sum() if self.kept is None else losses[self.kept].sum()  # a stopped model's loss: out
        if self.flat is not None:
            self.flat.grad.zero_()
            with warnings.catch_warnings():  # backward adds into the buffer's columns, as intended
                warnings.filterwarnings("ignore", message="grad and param do not obey the gradient layout contract")
                total.backward()
        else:
            self.optimizer.zero_grad(set_to_none=True)
            total.backward()
        zero_inert_gradients(self.inert)
        grads = [p.grad for p in self.trainable if p.grad is not None]
        per_param = torch.stack([torch.linalg.vector_norm(g.reshape(len(g), -1), dim=1) for g in grads])  # [P, M]
        norms = torch.linalg.vector_norm(per_param, dim=0)  # [M]
        scale = (self.options.max_norm / (norms + 1e-6)).clamp(max=1.0)
        if self.flat is not None:
            self.flat.grad.mul_(scale.unsqueeze(1))
        else:
            for g in grads:
                g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))
        self.optimizer.step()
        self.scheduler.step()
        if self.stopped:
            self._hold_stopped()
        return norms

    @torch.no_grad()
    def stop(self, models: list[int]) -> None:
        """Train ``models`` (whose loss was not finite) no further: each keeps the weights it has now,
        those after its last finite step, in its slices of the stacks (put back after every optimizer
        step, which may move them: Adam's running averages) and so in its module; its loss leaves the
        sum that backward differentiates. The other models' steps are the same as before."""
        state = self.state_dict()
        for m in models:
            self.stopped[m] = {name: tensor[m].clone() for name, tensor in state.items()}
        training = [m for m in range(len(self.models)) if m not in self.stopped]
        self.kept = torch.tensor(training, device=next(iter(state.values())).device)

    @torch.no_grad()
    def _hold_stopped(self) -> None:
        state = self.state_dict()
        for m, kept in self.stopped.items():
            for name, tensor in kept.items():
                state[name][m].copy_(tensor)

    @torch.no_grad()
    def sync(self) -> None:
        """Copy each model's slice of the stacked parameters and buffers into that model."""
        for m, model in enumerate(self.models):
            for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
                stacked = self.params.get(name, self.buffers.get(name))
                if stacked is not None:  # a tied weight appears once in the stack, under its first name
                    tensor.copy_(stacked[m])

    def state_dict(self) -> dict[str, Tensor]:
        """The stacked parameters and buffers, ``[M, ...]``, by name."""
        return {**self.params, **self.buffers}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, Tensor]) -> None:
        mine = self.state_dict()
        if set(state) != set(mine):
            raise ValueError(
                f"the checkpoint holds other tensors than this ensemble: {sorted(set(state) ^ set(mine))[:3]}"
            )
        for name, tensor in mine.items():
            tensor.copy_(state[name])

    def _engine(self, batch: Batch | LMBatch) -> folding.Folded | Vmapped:
        """The models folded into one (:mod:`lib.training.folded`) if ``fold`` and :meth:`_folded` can;
        else vmapped (with a warning that says why, when ``fold``), after the same test of the losses.

        The test also catches models that differ in something :func:`~lib.training.architecture.check_models` cannot see (a
        forward that reads a global): both ways run one architecture, the first model's.
        """
        self.sync()  # the models hold the stacks' weights (a resumed run's)
        loss_fn, kw, M = self.options.loss_fn, self.options.loss_kw, len(self.models)
        with torch.no_grad(), _eval_modes(self.models):
            own = folding.model_batches(batch, M, self.per_model)
            alone = [loss_fn(model, b, **kw).item() for model, b in zip(self.models, own)]
        if self.fold:
            folded, reason = self._folded(batch, alone)
            if folded is not None:
                return folded
            if (key := (type(self.models[0]).__name__, reason)) not in _REPORTED:
                _REPORTED.add(key)
                message = (
                    f"train_ensemble: the {key[0]} models are vmapped, not folded: {reason} (fold=False: no warning)"
                )
                warnings.warn(message, NotFoldedWarning, stacklevel=5)
        vmapped = Vmapped(self.models[0], self.params, self.buffers, loss_fn, kw)
        together = self._eval_losses(vmapped, batch)
        if not _same(together, alone):
            raise ValueError(
                f"models must differ only in their weights: on the first batch the ensemble's losses {together} are "
                f"not each model's own loss_fn(model, batch) {alone} (does the forward pass read something other "
                "than the model's weights and its input? train such models one by one with lib.train)"
            )
        return vmapped

    def _folded(self, batch: Batch | LMBatch, alone: list[float]) -> tuple[folding.Folded | None, str]:
        """The models folded into one and ``""``, or ``None`` and why they do not fold: the architecture
        (:func:`~lib.training.folded.why_not`), what the model or ``loss_fn`` does on M·B rows
        (:class:`~lib.training.folded.NotFoldable`), losses on the first batch (in eval mode) that are not
        each model's own, or a training step that writes a buffer. Any other error is raised: it is a bug
        of the fold or of the model, which vmapping would only hide."""
        template, loss_fn, kw = copy.deepcopy(self.models[0]), self.options.loss_fn, self.options.loss_kw
        if (reason := folding.why_not(template, self.buffers)) is not None:
            return None, reason
        folded = folding.fold(self.models, template, self.params, self.buffers, loss_fn, kw)
        if folded is None:
            return None, "a weight of it is used outside the layers that fold"
        try:
            if not _same(self._eval_losses(folded, batch), alone):
                return None, "folded, its losses on the first batch are not each model's own (does it mix rows?)"
            folded.module.train()
            if not folded.keeps_buffers(batch, self.per_model):
                return None, "a training step writes a buffer, which the folded model would hold once for all"
        except folding.NotFoldable as error:
            return None, str(error)
        return folded, ""

    def _eval_losses(self, engine: folding.Folded | Vmapped, batch: Batch | LMBatch) -> list[float]:
        with torch.no_grad(), eval_mode(engine.module):
            return engine.losses(batch, self.per_model).tolist()


def _same(together: list[float], alone: list[float]) -> bool:
    """Whether the ensemble's losses are each model's own, up to float rounding (a NaN is a NaN's own:
    a model whose first loss is NaN diverges, as alone, rather than differ from itself)."""
    return all(
        math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6) or math.isnan(a) and math.isnan(b)
        for a, b in zip(together, alone)
    )


def _elementwise(optimizer: torch.optim.Optimizer) -> torch.optim.Optimizer:
    """``optimizer`` if it updates elementwise (:data:`ELEMENTWISE`, or its class says
    ``elementwise = True``); else a ``ValueError``: over the stacked models it would mix them."""
    if isinstance(optimizer, ELEMENTWISE) or getattr(optimizer, "elementwise", False) is True:
        return optimizer
    raise ValueError(
        f"optimizer builds a {type(optimizer).__name__}, whose step is not elementwise: over the stacked models "
        f"[M, ...] it would mix them; expected one of {', '.join(o.__name__ for o in ELEMENTWISE)} (or a class "
        "with elementwise = True); train models with another optimizer one by one with lib.train"
    )


@contextlib.contextmanager
def _eval_modes(modules: list[nn.Module]):
    """:func:`lib.model.eval_mode` for every module at once: eval mode (no dropout) for the block."""
    with contextlib.ExitStack() as stack:
        for module in modules:
            stack.enter_context(eval_mode(module))
        yield


def _flatten(params: list[Tensor]) -> Tensor | None:
    """Move the stacked parameters into one buffer ``[M, P]`` and return it (``None``: mixed dtypes or devices).

    Each stack ``[M, ...]`` keeps its identity (the folded layers hold it) but now lives in its columns
    of the buffer, and its gradient in the same columns of ``buffer.grad``, where backward adds into
    it. One Adam update of the buffer is then a few operations, not a few per stack (the same
    arithmetic: Adam works elementwise), and a model's gradient is one row of ``buffer.grad``. Unlike
    ``zero_grad(set_to_none=True)``, a parameter that gets no gradient at a step is updated with a zero
    gradient (Adam still moves it by its running average; ``train`` would skip it).
    """
    if not params or len({(p.dtype, p.device) for p in params}) != 1:
        return None
    sizes = [p[0].numel() for p in params]
    buffer = params[0].new_empty(params[0].size(0), sum(sizes))
    buffer.grad = torch.zeros_like(buffer)
    start = 0
    with torch.no_grad():
        for p, size in zip(params, sizes):
            columns = slice(start, start + size)
            buffer[:, columns].copy_(p.reshape(len(p), -1))
            p.data = buffer[:, columns].view(p.shape)
            p.grad = buffer.grad[:, columns].view(p.shape)
            start += size
    return buffer
