"""Training: the losses, a training loop and teacher-forced evaluation.

The learning-rate schedules (the paper's among them) are in :mod:`lib.training.schedules`.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
import torch._dynamo  # noqa: F401  (see below)
import torch.nn.functional as F
from torch import Tensor, nn
from torch.optim.lr_scheduler import LRScheduler
from tqdm.auto import tqdm

from ..model import eval_mode
from ..model.attention import attention_layers
from ..model.checks import check_int, check_number
from . import distributed
from .batching import Batch, LMBatch, Seq2SeqDataset, to_lm_batch
from .checkpoint import load_checkpoint, save_checkpoint
from .data import TaskStream
from .schedules import make_schedule

# ``torch._dynamo`` is imported above, with this module, because ``torch.optim`` imports it anyway when
# the first optimizer of a process is built (``Optimizer.add_param_group`` is wrapped by
# ``torch._disable_dynamo``). That takes about a second, once; here it is paid on the first use of
# ``lib.training`` (a task, a seed), not inside the first training run, which it would slow down by
# that second, and so the first of two runs timed one after the other.

# ----------------------------------------------------------------------------------------------
# Losses
# ----------------------------------------------------------------------------------------------


def _logits_and_targets(model: nn.Module, batch: Batch | LMBatch) -> tuple[Tensor, Tensor]:
    """Run the model on a batch: ``model(src, tgt_in)`` for a :class:`Batch`, ``model(input)`` for an :class:`LMBatch`."""
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


def _cross_entropy(
    logits: Tensor, target: Tensor, pad_id: int, label_smoothing: float = 0.0, reduction: str = "mean"
) -> Tensor:
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
    logits, target = _logits_and_targets(model, batch)
    return _cross_entropy(logits, target, batch.pad_id, label_smoothing)


def lm_loss(model: nn.Module, batch: LMBatch | Batch, label_smoothing: float = 0.0) -> Tensor:
    """Mean next-token cross-entropy of a decoder-only ``model(input)``, on the answer tokens only.

    A seq2seq :class:`Batch` is converted first with :func:`lib.training.data.to_lm_batch`.
    """
    if isinstance(batch, Batch):
        batch = to_lm_batch(batch)
    if not isinstance(batch, LMBatch):
        raise TypeError(f"lm_loss needs an LMBatch or a Batch, got {type(batch).__name__}")
    logits, target = _logits_and_targets(model, batch)
    return _cross_entropy(logits, target, batch.pad_id, label_smoothing)


# ----------------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------------


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
    :func:`~lib.training.data.to_lm_batch` of each batch. The model's training mode is restored afterwards.
    """
    if isinstance(data, TaskStream):
        raise TypeError("evaluate needs a finite data set, got an endless TaskStream; use make_task(...)")
    if isinstance(data, Seq2SeqDataset):
        data = data.batches(batch_size, shuffle=False)
    elif isinstance(data, (Batch, LMBatch)):
        data = [data]
    device = _model_device(model)
    loss = correct = tokens = exact = sequences = 0.0
    with eval_mode(model):
        for batch in data:
            batch = batch.to(device)
            if lm and isinstance(batch, Batch):
                batch = to_lm_batch(batch)
            logits, target = _logits_and_targets(model, batch)
            keep = target != batch.pad_id
            right = logits.argmax(dim=-1) == target
            loss += _cross_entropy(logits.float(), target, batch.pad_id, reduction="sum").item()
            correct += (right & keep).sum().item()
            tokens += keep.sum().item()
            exact += (right | ~keep).all(dim=1).sum().item()
            sequences += target.shape[0]
    if tokens == 0:
        raise ValueError("data held no target tokens to evaluate on")
    return {"loss": loss / tokens, "token_accuracy": correct / tokens, "exact_match": exact / sequences}


# ----------------------------------------------------------------------------------------------
# The training loop
# ----------------------------------------------------------------------------------------------


@dataclass
class History:
    """What :func:`train` records: one entry per step, plus the evaluations.

    ``evals`` is a list of dicts, each with ``"step"`` and the metrics of ``eval_fn``.
    ``seconds`` is the wall-clock time of the whole run.
    """

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def __repr__(self) -> str:
        last = f", last loss {self.loss[-1]:.4f}" if self.loss else ""
        return f"History({len(self.step)} steps{last}, {len(self.evals)} evals, {self.seconds:.1f} s)"


Data = Seq2SeqDataset | Iterable[Batch | LMBatch] | Callable[[int], Batch | LMBatch]


def train(
    model: nn.Module,
    data: Data,
    *,
    steps: int,
    loss_fn: Callable[..., Tensor] = seq2seq_loss,
    optimizer: torch.optim.Optimizer | None = None,
    lr: float = 1e-3,
    schedule: str | LRScheduler = "constant",
    warmup_steps: int = 0,
    label_smoothing: float = 0.0,
    clip_grad_norm: float | None = 1.0,
    batch_size: int = 64,
    eval_fn: Callable[[nn.Module], dict] | None = None,
    eval_every: int | None = None,
    device: torch.device | str | None = None,
    progress: bool = True,
    desc: str | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int | None = None,
) -> History:
    """Train ``model`` for ``steps`` optimizer steps and return the :class:`History`.

    data
        a :class:`~lib.training.data.Seq2SeqDataset` (``batch_size`` examples a step, reshuffled every
        epoch: epoch ``e`` is ``torch.randperm`` seeded with ``s + e``, where ``s`` is the seed given
        to torch, e.g. by :func:`~lib.training.device.seed_everything`, read with
        ``torch.initial_seed()`` so no random number is drawn), an iterable of batches (started again
        when it ends, e.g. a list; an endless :class:`~lib.training.data.TaskStream` draws fresh
        examples every step), a function ``step -> batch``, or a single batch (to check that the
        model can overfit it).
    loss_fn
        ``loss_fn(model, batch) -> scalar``; :func:`seq2seq_loss` (default) or :func:`lm_loss`.
        It also receives ``label_smoothing=`` when that is not 0.
    optimizer
        default: Adam with the paper's β = (0.9, 0.98), ε = 1e-9 and learning rate ``lr``.
    schedule
        a name from :func:`make_schedule` (``"constant"``, ``"linear_warmup"``, ``"noam"``,
        ``"cosine"``) applied to ``lr`` with ``warmup_steps``, or your own ``LRScheduler``
        built on ``optimizer``.
    clip_grad_norm
        clip the global gradient norm to this (``None``: no clipping). The norm before clipping
        is recorded either way. Before it, the gradients of the key biases of softmax attention,
        zero in exact arithmetic, are set to exact zeros (:func:`inert_parameters`).
    eval_fn
        ``eval_fn(model) -> dict of metrics``, e.g. ``lambda m: evaluate(m, test_set)``; run
        every ``eval_every`` steps (default: 10 times per run) and after the last step, in
        ``eval()`` mode.
    checkpoint
        a file path: if it exists, training resumes from it (model, optimizer, scheduler, random
        state and step; the data source is replayed up to that step, so the next losses are those of
        an uninterrupted run, and the history holds the steps after it); the state is saved there
        every ``checkpoint_every`` steps (default: 10 times per run) and after the last step
        (:mod:`lib.training.checkpoint`).

    Batches are moved to the model's device (or to ``device``, where the model is moved first).
    The model is in ``train()`` mode while training (``eval()`` mode while ``eval_fn`` runs) and
    back in the mode it was in when this returns.
    One progress bar (``tqdm.auto``) shows the loss; ``progress=False`` hides it. With tqdm's own
    switch ``TQDM_DISABLE=1`` in the environment (for static output, e.g. a page built from the
    notebook) there is no live bar: one plain line per run on stdout says how many steps took how
    long, and the last loss and metrics. If the loss becomes NaN or infinite, training stops with a warning and the
    history so far is returned.

    **Under torchrun** (an initialised ``torch.distributed`` process group, see
    :mod:`lib.training.distributed`) the same call trains data-parallel: ``batch_size`` (and a
    ``TaskStream``'s batch size) is the *global* batch, of which each of the N ranks trains on
    ``1/N``; the model is wrapped in ``DistributedDataParallel`` for the steps (``loss_fn`` must call
    the model, ``model(...)``, not its submodules); the recorded loss is the mean over the ranks;
    rank 0 alone evaluates, shows progress and writes the checkpoint; every rank returns rank 0's
    history.
    """
    eval_every, checkpoint_every = _check_options(steps, eval_every, checkpoint_every, clip_grad_norm)
    if device is not None:
        model.to(device)
    device = _model_device(model)
    next_batch = _batch_source(data, batch_size)
    params = [p for p in model.parameters() if p.requires_grad]
    inert = [p for p in inert_parameters(model).values() if p.requires_grad]
    optimizer = _paper_adam(params, lr) if optimizer is None else optimizer
    scheduler = _scheduler(optimizer, schedule, warmup_steps, steps)
    first = _resume(checkpoint, model, optimizer, scheduler, next_batch, steps)
    main = distributed.rank() == 0  # the process that evaluates, shows progress and writes
    wrapped = distributed.wrap(model)  # DistributedDataParallel under torchrun, else model itself
    loss_kw = {"label_smoothing": label_smoothing} if label_smoothing else {}
    max_norm = clip_grad_norm if clip_grad_norm is not None else math.inf

    history = History()
    bar = _Progress(steps, first, desc, progress, main)
    with _training_mode(model), bar:
        for step in range(first, steps + 1):
            batch = next_batch(step).to(device)
            loss, grad_norm, used_lr = train_step(
                wrapped, batch, loss_fn, loss_kw, params, optimizer, scheduler, max_norm, inert
            )
            if grad_norm is None:
                warnings.warn(f"training diverged at step {step} (loss = {loss.item()}); stopping", stacklevel=2)
                break
            _record(history, step, loss.item(), grad_norm.item(), used_lr)
            bar.postfix["loss"] = f"{history.loss[-1]:.4f}"
            if main and eval_fn is not None and _due(step, eval_every, steps):
                history.evals.append(_evaluate(model, eval_fn, step))
                bar.show_metrics(history.evals[-1])
            if checkpoint is not None and _due(step, checkpoint_every, steps):
                save_checkpoint(checkpoint, model=model, optimizer=optimizer, scheduler=scheduler, step=step)
            bar.advance()
    history.seconds = bar.seconds
    bar.print_final(first - 1 + len(history.step))
    return distributed.broadcast(history)  # rank 0's history on every rank


# ----------------------------------------------------------------------------------------------
# The steps of the loop (lib.training.ensemble shares the ones that do not touch the model)
# ----------------------------------------------------------------------------------------------


def _check_options(
    steps: int, eval_every: int | None, checkpoint_every: int | None, clip_grad_norm: float | None
) -> tuple[int, int]:
    """Check the loop's counts and clipping threshold; return ``(eval_every, checkpoint_every)``,
    each defaulting to a tenth of ``steps`` (at least 1)."""
    check_int("steps", steps, minimum=1)
    eval_every = max(1, steps // 10) if eval_every is None else check_int("eval_every", eval_every, minimum=1)
    if checkpoint_every is None:
        checkpoint_every = max(1, steps // 10)
    else:
        check_int("checkpoint_every", checkpoint_every, minimum=1)
    if clip_grad_norm is not None:
        check_number("clip_grad_norm", clip_grad_norm, 0.0, low_open=True)
    return eval_every, checkpoint_every


def _paper_adam(params: Iterable[Tensor], lr: float) -> torch.optim.Optimizer:
    """The default optimizer: Adam with the paper's β = (0.9, 0.98) and ε = 1e-9 (§5.3).

    ``foreach=True`` (CUDA's default, not the CPU's) updates all tensors per operation instead of
    looping over them in Python: the same numbers to the last bit, a few percent off a small model's
    step on a CPU."""
    return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.98), eps=1e-9, foreach=True)


def _scheduler(
    optimizer: torch.optim.Optimizer, schedule: str | LRScheduler, warmup_steps: int, steps: int
) -> LRScheduler:
    """The learning-rate schedule: ``schedule`` itself if it is an ``LRScheduler`` (of ``optimizer``),
    else :func:`make_schedule` of that name over ``steps`` steps."""
    if isinstance(schedule, LRScheduler):
        if schedule.optimizer is not optimizer:
            raise ValueError("schedule is an LRScheduler of another optimizer; pass that optimizer as optimizer=")
        return schedule
    return make_schedule(optimizer, schedule, warmup_steps=warmup_steps, total_steps=steps)


def _resume(
    checkpoint: str | os.PathLike | None,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    next_batch: Callable[[int], Batch | LMBatch],
    steps: int,
) -> int:
    """The first step to run: 1, or, if the file ``checkpoint`` exists, the step after the one it saved.

    Resuming loads the model, optimizer, scheduler and random state, then replays the data source
    up to the saved step so that it continues where it stopped. The replay runs inside
    ``torch.random.fork_rng``: a data source that draws from torch's global generator must not
    advance the restored state, which is the state of the uninterrupted run after that step.
    """
    if checkpoint is None or not os.path.exists(checkpoint):
        return 1
    done = load_checkpoint(checkpoint, model=model, optimizer=optimizer, scheduler=scheduler)
    device = _model_device(model)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        for step in range(1, min(done, steps) + 1):
            next_batch(step)
    return done + 1


@contextmanager
def _training_mode(model: nn.Module) -> Iterator[None]:
    """``model.train()`` for the block; the mode the model was in afterwards, even if the block raises."""
    was_training = model.training
    model.train()
    try:
        yield
    finally:
        model.train(was_training)


def train_step(
    model: nn.Module,
    batch: Batch | LMBatch,
    loss_fn: Callable[..., Tensor],
    loss_kw: dict,
    params: list[Tensor],
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    max_norm: float,
    inert: Iterable[Tensor] = (),
) -> tuple[Tensor, Tensor | None, float]:
    """One optimizer step: forward and loss, backward, clipping, the optimizer's and the scheduler's step.

    The gradients of the ``inert`` parameters (see :func:`inert_parameters`) are set to exact zeros
    before the clipping. Returns the loss (detached, the mean over the ranks under torchrun), the
    global gradient norm before clipping and the learning rate the step used. If the loss is not
    finite, nothing is updated and the norm is ``None``.
    """
    loss = loss_fn(model, batch, **loss_kw)
    logged = distributed.mean_over_ranks(loss)  # loss.detach() in one process
    if not torch.isfinite(logged):
        return logged, None, math.nan
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # under DDP the gradients are averaged over the ranks here
    zero_inert_gradients(inert)
    grad_norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
    used_lr = optimizer.param_groups[0]["lr"]
    optimizer.step()
    scheduler.step()
    return logged, grad_norm, used_lr


def inert_parameters(model: nn.Module) -> dict[str, Tensor]:
    r"""The parameters whose gradient is zero in exact arithmetic, by name: the key biases ``b_K`` of
    softmax attention (every :class:`~lib.MultiHeadAttention` without rotary positions or a kernel).

    .. math::
        \mathrm{softmax}_j\!\left(\frac{q_i \cdot (k_j + b_K)}{\sqrt{d_k}}\right)
        = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}}\right)

    since ``b_K`` shifts every score of row ``i`` by the same ``q_i · b_K``; so ``∂L/∂b_K = 0``.
    In floating point that gradient is rounding noise (about 1e-9), and Adam divides it by its own
    running size: the bias would take steps of size ``lr`` and wander (about 0.02 in 60 steps)
    without changing anything the model computes, and two runs that round differently (one model
    alone, or five in one batch, :func:`~lib.training.ensemble.train_ensemble`) would end with
    different biases. The loops set these gradients to exact zeros, so Adam leaves the biases where
    they are (weight decay, if any, still acts). With rotary positions ``R_i q · R_j b_K`` depends
    on ``j``, and a kernel (Performer, Linformer) need not be a softmax over the scores: there the
    bias is trained.
    """
    return {
        f"{name}.k_proj.bias".lstrip("."): layer.k_proj.bias
        for name, layer in attention_layers(model).items()
        if layer.k_proj.bias is not None and layer.rotary is None and layer.kernel is None
    }


@torch.no_grad()
def zero_inert_gradients(inert: Iterable[Tensor]) -> None:
    """Set the gradients of ``inert`` (:func:`inert_parameters`) to exact zeros, where backward gave one."""
    for p in inert:
        if p.grad is not None:
            p.grad.zero_()


def _record(history: History, step: int, loss: float, grad_norm: float, used_lr: float) -> None:
    """Append one step to ``history``."""
    history.step.append(step)
    history.loss.append(loss)
    history.grad_norm.append(grad_norm)
    history.lr.append(used_lr)


def _due(step: int, every: int, steps: int) -> bool:
    """Whether something done every ``every`` steps, and after the last, is due at ``step``."""
    return step % every == 0 or step == steps


def _evaluate(model: nn.Module, eval_fn: Callable[[nn.Module], dict], step: int) -> dict:
    """``{"step": step, **eval_fn(model)}``, with the model in ``eval()`` mode meanwhile."""
    with eval_mode(model):
        metrics = dict(eval_fn(model))
    return {"step": step, **metrics}


class _Progress:
    """The run's progress bar (``tqdm.auto``), its postfix (the loss, the last metrics) and its clock.

    Shown only where ``progress`` and ``main``; with ``TQDM_DISABLE=1`` in the environment there is
    no live bar and :meth:`print_final` prints one plain line instead.
    """

    def __init__(self, steps: int, first: int, desc: str | None, progress: bool, main: bool):
        self.steps, self.first, self.desc, self.main = steps, first, desc or "train", main
        self.final_only = progress and _tqdm_disabled_by_environment()
        self.disable = not progress or self.final_only or not main
        self.postfix: dict[str, str] = {}
        self.seconds = 0.0

    def __enter__(self) -> _Progress:
        self.start = time.perf_counter()
        self.bar = tqdm(
            total=self.steps,
            initial=self.first - 1,
            desc=self.desc,
            disable=self.disable,
            leave=True,
            mininterval=0.5,
            dynamic_ncols=True,
        )
        return self

    def __exit__(self, *exc) -> None:
        self.bar.close()
        self.seconds = time.perf_counter() - self.start

    def show_metrics(self, metrics: dict) -> None:
        """Put the numeric metrics of an evaluation in the postfix (its ``loss`` as ``eval_loss``)."""
        self.postfix.update(
            {
                ("eval_loss" if k == "loss" else k): f"{v:.3f}"
                for k, v in metrics.items()
                if k != "step" and isinstance(v, (int, float))
            }
        )

    def advance(self) -> None:
        """One step done: refresh the postfix and move the bar."""
        self.bar.set_postfix(self.postfix, refresh=False)
        self.bar.update(1)

    def print_final(self, done: int) -> None:
        """With ``TQDM_DISABLE=1``: one plain line per run on stdout, no bar (a static page is no terminal):
        ``"train: 300 steps in 17.1 s (loss=0.123, token_accuracy=0.950)"``."""
        if self.final_only and self.main:
            summary = ", ".join(f"{k}={v}" for k, v in self.postfix.items())
            print(f"{self.desc}: {done} steps in {self.seconds:.1f} s" + (f" ({summary})" if summary else ""))


def _tqdm_disabled_by_environment() -> bool:
    """``TQDM_DISABLE`` set to a true value (tqdm's notebook bar ignores it, so train reads it itself)."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false", "no", "off")


def _model_device(model: nn.Module) -> torch.device:
    try:
        return next(model.parameters()).device
    except StopIteration:
        raise TypeError(f"model ({type(model).__name__}) has no parameters to train") from None


def _batch_source(data: Data, batch_size: int) -> Callable[[int], Batch | LMBatch]:
    """Turn any accepted form of ``data`` into a function ``step -> batch``: this rank's share of the batch.

    In one process (no ``torch.distributed`` group) the share is the whole batch; under torchrun
    see :mod:`lib.training.distributed`.
    """
    if isinstance(data, Seq2SeqDataset):
        check_int("batch_size", batch_size, minimum=1)
        batches = distributed.dataset_batches(data, batch_size, seed=distributed.shuffle_seed())
        return lambda step: next(batches)
    if isinstance(data, TaskStream):
        stream = distributed.rank_stream(data)  # the stream itself in one process
        return lambda step: next(stream)
    if isinstance(data, (Batch, LMBatch)):
        return lambda step: distributed.shard(data)  # one fixed batch: handy to check that a model can overfit
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
