r"""Train several models of one architecture at once, as one batched computation.

An *ensemble* here is M copies of one architecture that differ only in their weights (e.g. their
seeds). :func:`train_ensemble` trains them exactly as M calls of :func:`~lib.training.train.train`
would, but each step runs once for all of them, in one of two ways:

- **folded** (:mod:`lib.training.folded`), when the architecture allows it: the M models run as one
  model on a batch of M·B rows, in which only the layers with weights (linear layers, layer norms,
  embeddings, learned positions) are stacked, ``[M, ...]``, and give each block of B rows its own
  model's weights; everything else runs once on all the rows, with PyTorch's ordinary kernels;
- **vmapped**, for any other architecture: ``torch.func.stack_module_state`` stacks the models'
  parameters and buffers into one tensor each, ``[M, ...]``; ``torch.func.functional_call`` runs the
  architecture with one model's slice of them, and ``torch.vmap`` maps that over the M slices.

Either way the per-operation overhead of small models (Python, dispatch, allocation) is paid once per
step, not M times; on a GPU the M models fill the device. Folding is the faster of the two on a CPU:
``vmap``'s batched kernels (``bmm`` plus a separate bias, layer norm plus a broadcast gain) are slower
than the ordinary ones at toy sizes, and its own overhead is about a forward pass of a toy model.

The optimizer is one ``torch.optim`` optimizer over the stacked parameters. Adam, AdamW, SGD (with
momentum) and RMSprop work elementwise, so the stacked state *is* M independent states: model
``m``'s update reads only slice ``m``. The default Adam goes one step further: every stack lives in
its columns of one buffer ``[M, P]`` (and its gradient in the same columns of the buffer's), so an
update is a few operations on one tensor instead of a few on each of dozens (the same numbers).
Gradient clipping is per model (each model's global norm over its own slices, as :func:`train`
computes it for one model). The learning-rate schedule is shared. As :func:`train` does, the key
biases of softmax attention get exact zeros for gradients (see
:func:`~lib.training.train.inert_parameters`): their true gradient is zero, and the rounding noise
that stands for it differs between one model alone and M in a batch, so Adam would move them apart.
"""

from __future__ import annotations

import contextlib
import copy
import math
import warnings
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.optim.lr_scheduler import LRScheduler

from ..model import eval_mode
from ..model.checks import check_int
from . import distributed
from . import folded as folding
from .batching import Batch, LMBatch, to_lm_batch
from .train import (
    Data,
    History,
    _batch_source,
    _check_options,
    _due,
    _evaluate,
    _model_device,
    _paper_adam,
    _Progress,
    _scheduler,
    _training_mode,
    inert_parameters,
    lm_loss,
    seq2seq_loss,
    zero_inert_gradients,
)

OptimizerFactory = Callable[[list[Tensor]], torch.optim.Optimizer]


def train_ensemble(
    models: Sequence[nn.Module],
    data: Data | Sequence[Data],
    *,
    steps: int,
    loss_fn: Callable[..., Tensor] = seq2seq_loss,
    optimizer: OptimizerFactory | None = None,
    lr: float = 1e-3,
    schedule: str | Callable[[torch.optim.Optimizer], LRScheduler] = "constant",
    warmup_steps: int = 0,
    label_smoothing: float = 0.0,
    clip_grad_norm: float | None = 1.0,
    batch_size: int = 64,
    eval_fn: Callable[[nn.Module], dict] | None = None,
    eval_every: int | None = None,
    device: torch.device | str | None = None,
    progress: bool = True,
    desc: str | None = None,
    checkpoint: None = None,
    checkpoint_every: None = None,
    fold: bool = True,
) -> list[History]:
    """Train M models of one architecture together for ``steps`` steps; one :class:`History` per model.

    Each model's history (losses, gradient norms, learning rates, evaluations) and final weights are
    those that ``train(model, data, ...)`` with the same options gives that model alone, up to float
    rounding (the batched kernels add in another order), every weight included: the key biases of
    softmax attention, whose true gradient is zero (every score of a row shifts by the same ``q·b``),
    get an exact zero in both loops instead of rounding noise that Adam would turn into steps of size
    ``lr``. The trained weights are written back into ``models``. With dropout each model draws its
    own masks (``vmap(randomness="different")``), so two equal models with dropout end up different,
    as two separate runs would.

    models
        a list of M ``nn.Module`` of one class with parameters of the same names and shapes, on one
        device (or moved to ``device``), that differ only in their weights: the ensemble runs the
        first model's architecture, so models that differ in an attribute or a replaced method are
        refused (a ``ValueError``: on the first batch their losses are not their own).
    data
        one source for all models (anything :func:`train` accepts; every model sees the same batch
        at every step), or a list of M sources, one per model. With one source per model the batches
        are stacked (right-padded with ``pad_id`` to one length); a list of batches is one source,
        not one per model. Vmapped (below), the model's forward must then run under ``torch.vmap``
        with batched inputs: it may not read tensor values on the host (e.g. ``int(tokens.max())``).
    loss_fn
        ``loss_fn(model, batch) -> scalar``, as for :func:`train`. The models fold only if it calls
        the model, or one method of it (``model.readouts(...)``), once, on inputs with one row per
        row of the batch; it may use the model's layers before that (``model.embed(...)``).
    optimizer
        ``None`` (Adam with the paper's β = (0.9, 0.98), ε = 1e-9 and learning rate ``lr``) or a
        function ``parameters -> Optimizer``, e.g. ``functools.partial(torch.optim.AdamW, lr=3e-3)``;
        it is called once, on the stacked parameters, so it must update elementwise (Adam, AdamW,
        SGD, RMSprop do; L-BFGS does not). An optimizer object is refused: it would hold the
        models' own parameters, not the stacked ones.
    schedule
        a name from :func:`~lib.training.schedules.make_schedule`, or a function
        ``optimizer -> LRScheduler``; the same schedule for every model.
    clip_grad_norm
        clip each model's global gradient norm to this, separately (``None``: no clipping).

    ``loss_fn``, ``lr``, ``warmup_steps``, ``label_smoothing``, ``batch_size``, ``eval_fn`` (called
    on each model, with its weights written back first), ``eval_every``, ``device``, ``progress``
    (one bar; it shows the mean loss) and ``desc`` mean what they mean for :func:`train`.
    ``checkpoint`` and data-parallel training under torchrun are not supported (a ``ValueError``).

    fold
        ``True`` (the default): if the architecture allows it, run the M models as one model on a
        batch of M·B rows (:mod:`lib.training.folded`; faster than ``vmap`` on a CPU), after checking
        on the first batch, without dropout, that this gives each model's own loss; else, and with
        ``False``, ``vmap`` over the stacked weights.
    """
    models = _check_models(models)
    if checkpoint is not None or checkpoint_every is not None:
        raise ValueError("train_ensemble saves no checkpoints; got checkpoint=/checkpoint_every=, expected None")
    if distributed.is_distributed():
        raise ValueError("train_ensemble runs in one process; under torchrun train each model with lib.train")
    if isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            "optimizer must be None or a function parameters -> Optimizer (e.g. functools.partial("
            "torch.optim.AdamW, lr=3e-3)), got an Optimizer object: train_ensemble builds it on the stacked parameters"
        )
    if isinstance(schedule, LRScheduler):
        raise TypeError(
            "schedule must be a name or a function optimizer -> LRScheduler, got an LRScheduler object: "
            "train_ensemble builds it on its own optimizer"
        )
    eval_every, _ = _check_options(steps, eval_every, None, clip_grad_norm)
    if device is not None:
        for model in models:
            model.to(device)
    device = _one_device(models)
    sources = _sources(data, len(models), batch_size)
    loss_kw = {"label_smoothing": label_smoothing} if label_smoothing else {}
    max_norm = clip_grad_norm if clip_grad_norm is not None else math.inf

    if not isinstance(fold, bool):
        raise TypeError(f"fold must be True or False, got {fold!r}")
    first = _stack_batches([source(1) for source in sources], loss_fn, device)
    stacked = _engine(models, loss_fn, loss_kw, first, per_model=len(sources) > 1, fold=fold)
    names = {f"model.{n}" if isinstance(stacked, _Stacked) else n for n in inert_parameters(models[0])}
    inert = [p for name, p in stacked.params.items() if name in names and p.requires_grad]
    flat = None
    if optimizer is not None:
        optimizer = optimizer(stacked.trainable)
    else:  # the default Adam, on one buffer that holds every stack (if their dtypes and devices agree)
        flat = _flatten(stacked.trainable)
        optimizer = _paper_adam(stacked.trainable if flat is None else [flat], lr)
    scheduler = schedule(optimizer) if callable(schedule) else _scheduler(optimizer, schedule, warmup_steps, steps)

    histories = [History() for _ in models]
    norms: list[Tensor] = []  # one [M] tensor a step, read once at the end (no host sync per step)
    bar = _Progress(steps, 1, desc, progress, main=True)
    with _training_mode(stacked.module), bar:
        for step in range(1, steps + 1):
            batch = first if step == 1 else _stack_batches([source(step) for source in sources], loss_fn, device)
            losses = stacked.losses(batch, per_model=len(sources) > 1)
            values = losses.detach().tolist()  # the one host sync of a step, as train's loss.item()
            if not all(map(math.isfinite, values)):
                bad = [m for m, v in enumerate(values) if not math.isfinite(v)]
                warnings.warn(
                    f"training diverged at step {step} (loss of model(s) {bad} not finite); stopping", stacklevel=2
                )
                break
            used_lr = optimizer.param_groups[0]["lr"]
            norms.append(_update(losses, stacked.trainable, flat, optimizer, scheduler, max_norm, inert))
            for history, value in zip(histories, values):
                history.step.append(step)
                history.loss.append(value)
                history.lr.append(used_lr)
            bar.postfix["loss"] = f"{sum(values) / len(values):.4f}"
            if eval_fn is not None and _due(step, eval_every, steps):
                stacked.write_back(models)
                for model, history in zip(models, histories):
                    history.evals.append(_evaluate(model, eval_fn, step))
                bar.show_metrics(_mean_metrics([history.evals[-1] for history in histories]))
            bar.advance()
    stacked.write_back(models)
    for history, row in zip(histories, torch.stack(norms).T.tolist() if norms else [[]] * len(models)):
        history.grad_norm.extend(row)
        history.seconds = bar.seconds
    bar.print_final(len(histories[0].step))
    return histories


# ----------------------------------------------------------------------------------------------
# The steps
# ----------------------------------------------------------------------------------------------


def _check_models(models: object) -> list[nn.Module]:
    """A non-empty list of modules of one class, with parameters and buffers of the same names and shapes."""
    if isinstance(models, nn.Module) or not isinstance(models, Sequence) or isinstance(models, str):
        raise TypeError(f"models must be a list of nn.Module, got {type(models).__name__}")
    check_int("len(models)", len(models), minimum=1)
    for i, model in enumerate(models):
        if not isinstance(model, nn.Module):
            raise TypeError(f"models[{i}] must be an nn.Module, got {type(model).__name__}")
    first = models[0]
    shapes = _shapes(first)
    for i, model in enumerate(models[1:], start=1):
        if type(model) is not type(first):
            raise ValueError(
                f"models[{i}] is a {type(model).__name__}, models[0] a {type(first).__name__}; expected one architecture"
            )
        if _shapes(model) != shapes:
            differ = sorted(set(_shapes(model).items()) ^ set(shapes.items()))[:3]
            raise ValueError(
                f"models[{i}] has other parameters or buffers than models[0] (e.g. {differ}); "
                "expected one architecture (same names, shapes and dtypes)"
            )
    _model_device(first)  # a model without parameters is refused here
    return list(models)


def _shapes(model: nn.Module) -> dict[str, tuple]:
    tensors = [*model.named_parameters(), *model.named_buffers()]
    return {name: (tuple(t.shape), t.dtype, getattr(t, "requires_grad", False)) for name, t in tensors}


def _one_device(models: list[nn.Module]) -> torch.device:
    devices = {t.device for model in models for t in [*model.parameters(), *model.buffers()]}
    if len(devices) != 1:
        raise ValueError(
            f"the models are on devices {sorted(map(str, devices))}; expected one device (or pass device=)"
        )
    return devices.pop()


def _sources(data: object, n_models: int, batch_size: int) -> list[Callable[[int], Batch | LMBatch]]:
    """One function ``step -> batch`` for all models, or one per model if ``data`` is a list of sources."""
    per_model = isinstance(data, (list, tuple)) and len(data) > 0 and not isinstance(data[0], (Batch, LMBatch))
    if not per_model:
        return [_batch_source(data, batch_size)]
    if len(data) != n_models:
        raise ValueError(f"data holds {len(data)} sources for {n_models} models; expected one per model, or one source")
    return [_batch_source(source, batch_size) for source in data]


def _stack_batches(batches: list[Batch | LMBatch], loss_fn: Callable, device: torch.device) -> Batch | LMBatch:
    """One batch for all models (a shared source), or the models' batches stacked, ``[M, B, ...]``.

    ``lm_loss`` converts a seq2seq batch once here, not once per model (``to_lm_batch`` runs on the host).
    """
    if loss_fn is lm_loss:
        batches = [to_lm_batch(b) if isinstance(b, Batch) else b for b in batches]
    if len(batches) == 1:
        return batches[0].to(device)
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
        tensors = [F.pad(t, (0, 0) * (t.dim() - 2) + (0, length - t.shape[1]), value=pad_id) for t in tensors]
        fields[name] = torch.stack(tensors).to(device)
    return type(batches[0])(**fields, pad_id=pad_id)


def _engine(
    models: list[nn.Module], loss_fn: Callable, loss_kw: dict, first: Batch | LMBatch, per_model: bool, fold: bool
) -> folding.Folded | _Stacked:
    """The models folded into one (:mod:`lib.training.folded`) if ``fold``, they fold, and on the first
    batch in eval mode this gives each model's own loss; else stacked for ``vmap``, with the same test.

    The test also catches models that differ in something other than their weights (an attribute, a
    replaced method): both ways run one architecture, the first model's, so such models are refused.
    """
    with torch.no_grad(), _evaluation_mode(models):
        own = folding.model_batches(first, len(models), per_model)
        alone = [loss_fn(model, batch, **loss_kw).item() for model, batch in zip(models, own)]
    if fold and (folded := folding.fold(models, copy.deepcopy(models[0]), loss_fn, loss_kw)) is not None:
        try:
            with torch.no_grad(), _evaluation_mode([folded.module]):
                together = folded.losses(first, per_model).tolist()
        except Exception:  # noqa: BLE001 (any failure of the fold is a reason to use vmap, which then raises the real error)
            pass
        else:
            if _same(together, alone):
                return folded
    stacked = _Stacked(models, loss_fn, loss_kw)
    with torch.no_grad(), _evaluation_mode([stacked.module]):
        together = stacked.losses(first, per_model).tolist()
    if not _same(together, alone):
        raise ValueError(
            f"models must differ only in their weights: on the first batch the ensemble's losses {together} are "
            f"not each model's own loss_fn(model, batch) {alone} (do they differ in an attribute or a replaced "
            "method? train such models one by one with lib.train)"
        )
    return stacked


def _same(together: list[float], alone: list[float]) -> bool:
    """Whether the ensemble's losses are each model's own, up to float rounding."""
    return all(math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6) for a, b in zip(together, alone))


@contextlib.contextmanager
def _evaluation_mode(modules: list[nn.Module]):
    """:func:`lib.model.eval_mode` for every module at once: eval mode (no dropout) for the block."""
    with contextlib.ExitStack() as stack:
        for module in modules:
            stack.enter_context(eval_mode(module))
        yield


def _batchable_attention(batch: Batch | LMBatch) -> contextlib.AbstractContextManager:
    """On the CPU, ``F.scaled_dot_product_attention`` restricted to its math backend (matrix products
    and a softmax, which ``vmap`` batches); its fused CPU kernel has no batching rule, and ``vmap``
    would run it once per model. Elsewhere nothing changes (CUDA's fused kernels batch)."""
    device = next(v for v in vars(batch).values() if isinstance(v, Tensor)).device
    return sdpa_kernel(SDPBackend.MATH) if device.type == "cpu" else contextlib.nullcontext()


class _LossOf(nn.Module):
    """``loss_fn(model, batch)`` as a module, so that ``functional_call`` can swap in one model's weights."""

    def __init__(self, model: nn.Module, loss_fn: Callable[..., Tensor], loss_kw: dict):
        super().__init__()
        self.model, self.loss_fn, self.loss_kw = model, loss_fn, loss_kw

    def forward(self, batch: Batch | LMBatch) -> Tensor:
        return self.loss_fn(self.model, batch, **self.loss_kw)


class _Stacked:
    """The M models' parameters and buffers stacked (``[M, ...]``), and the vmapped loss over them."""

    def __init__(self, models: list[nn.Module], loss_fn: Callable[..., Tensor], loss_kw: dict):
        params, buffers = stack_module_state(models)  # new leaf tensors: the models stay untouched
        self.params = {f"model.{k}": v for k, v in params.items()}
        self.buffers = {f"model.{k}": v for k, v in buffers.items()}
        self.trainable = [p for p in self.params.values() if p.requires_grad]
        self.module = _LossOf(copy.deepcopy(models[0]), loss_fn, loss_kw)  # the architecture, run functionally

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

    @torch.no_grad()
    def write_back(self, models: list[nn.Module]) -> None:
        """Copy each model's slice of the stacked parameters and buffers into that model."""
        for m, model in enumerate(models):
            for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
                stacked = self.params.get(f"model.{name}", self.buffers.get(f"model.{name}"))
                if stacked is not None:  # a tied weight appears once in the stack, under its first name
                    tensor.copy_(stacked[m])


def _flatten(params: list[Tensor]) -> Tensor | None:
    """Move the stacked parameters into one buffer ``[M, P]`` and return it (``None``: mixed dtypes or devices).

    Each stack ``[M, ...]`` keeps its identity (the folded layers hold it) but now lives in its columns
    of the buffer, and its gradient in the same columns of ``buffer.grad``, where backward adds into
    it. One Adam update of the buffer is then a few operations, not a few per stack (the same numbers:
    Adam works elementwise), and a model's gradient is one row of ``buffer.grad``. Unlike ``zero_grad
    (set_to_none=True)``, a parameter that gets no gradient at a step is updated with a zero gradient
    (Adam still moves it by its running average; ``train`` would skip it).
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
            buffer[:, columns].copy_(p.flatten(1))
            p.data = buffer[:, columns].view(p.shape)
            p.grad = buffer.grad[:, columns].view(p.shape)
            start += size
    return buffer


def _update(
    losses: Tensor,
    params: list[Tensor],
    flat: Tensor | None,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    max_norm: float,
    inert: list[Tensor],
) -> Tensor:
    """Backward, per-model clipping, the optimizer's and the scheduler's step; return the M norms before clipping.

    The models are independent, so the gradient of the sum of their losses is, slice by slice, each
    model's own gradient. Model ``m``'s norm is ``sqrt(Σ_p ‖∂L_m/∂p[m]‖²)`` and its slices are scaled
    by ``min(1, max_norm / (norm + 1e-6))``, as ``torch.nn.utils.clip_grad_norm_`` does for one model.
    ``flat``: the one buffer that holds ``params`` and their gradients (:func:`_flatten`), or ``None``;
    ``inert``: the stacks whose gradients are set to exact zeros, as :func:`train` does (see
    :func:`~lib.training.train.inert_parameters`).
    """
    if flat is not None:
        flat.grad.zero_()
        with warnings.catch_warnings():  # backward adds into the buffer's columns, as intended
            warnings.filterwarnings("ignore", message="grad and param do not obey the gradient layout contract")
            losses.sum().backward()
    else:
        optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()
    zero_inert_gradients(inert)
    grads = [p.grad for p in params if p.grad is not None]
    per_param = torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads])  # [P, M]
    norms = torch.linalg.vector_norm(per_param, dim=0)  # [M]
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    if flat is not None:
        flat.grad.mul_(scale.unsqueeze(1))
    else:
        for g in grads:
            g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))
    optimizer.step()
    scheduler.step()
    return norms


def _mean_metrics(evals: list[dict]) -> dict:
    """The mean over the models of each numeric metric (for the progress bar)."""
    keys = [k for k, v in evals[0].items() if k != "step" and isinstance(v, (int, float))]
    return {k: sum(e[k] for e in evals) / len(evals) for k in keys if all(k in e for e in evals)}
