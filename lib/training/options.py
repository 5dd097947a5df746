"""The options of a training run, declared once.

:func:`~lib.training.train.train` (one model) and :func:`~lib.training.ensemble.train_ensemble` (several
models in one pass) take the same keyword options, collected and checked by :class:`TrainingOptions`::

    lib.train(model, data, steps=300, lr=3e-3, eval_fn=..., progress=False)
    lib.train_ensemble(models, data, steps=300, lr=3e-3, eval_fn=..., progress=False)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.optim.lr_scheduler import LRScheduler

from ..model.checks import check_int, check_number
from .losses import seq2seq_loss
from .schedules import make_schedule

OptimizerFactory = Callable[[list[Tensor]], torch.optim.Optimizer]
SchedulerFactory = Callable[[torch.optim.Optimizer], LRScheduler]


@dataclass(frozen=True, kw_only=True)
class TrainingOptions:
    """The keyword options of :func:`~lib.training.train.train` and :func:`~lib.training.ensemble.train_ensemble`.

    steps
        the number of optimizer steps (required).
    loss_fn
        ``loss_fn(model, batch) -> scalar``; :func:`~lib.training.losses.seq2seq_loss` (default) or
        :func:`~lib.training.losses.lm_loss`. It also receives ``label_smoothing=`` when that is not 0.
    optimizer
        ``None`` (default): Adam with the paper's β = (0.9, 0.98), ε = 1e-9 and learning rate ``lr``;
        or a function ``parameters -> Optimizer``, e.g. ``functools.partial(torch.optim.AdamW, lr=3e-3)``;
        or (``train`` only) an ``Optimizer`` already built on the model's parameters.
    lr
        the default Adam's learning rate (the peak of the schedule).
    schedule
        a name from :func:`~lib.training.schedules.make_schedule` (``"constant"``, ``"linear_warmup"``,
        ``"noam"``, ``"cosine"``) applied to the learning rate with ``warmup_steps``; or a function
        ``optimizer -> LRScheduler``; or (``train`` only) an ``LRScheduler`` built on ``optimizer``.
    warmup_steps
        the warm-up of the named schedules.
    label_smoothing
        ε of label smoothing, passed to ``loss_fn`` when it is not 0.
    clip_grad_norm
        clip each model's global gradient norm to this (``None``: no clipping). The norm before
        clipping is recorded either way.
    batch_size
        the examples of a step when ``data`` is a :class:`~lib.training.batching.Seq2SeqDataset`.
    eval_fn, eval_every
        ``eval_fn(model) -> dict of metrics``, e.g. ``lambda m: evaluate(m, test_set)``, run in
        ``eval()`` mode every ``eval_every`` steps (default: 10 times per run) and after the last step.
    device
        move the model(s) there first (default: where they are).
    progress, desc
        one progress bar (``tqdm.auto``) labelled ``desc`` (default ``"train"``); ``progress=False``
        hides it. With ``TQDM_DISABLE=1`` in the environment (a page built from the notebook) there is
        no live bar, one plain line per run instead: ``"train: 300 steps in 17.1 s (loss=0.123)"``.
    checkpoint, checkpoint_every
        a file path: if it exists, training resumes from it (weights, optimizer, schedule, random state
        and step; the data source is replayed up to that step, so the next losses are those of an
        uninterrupted run); the state is saved there every ``checkpoint_every`` steps (default: 10
        times per run) and after the last step (:mod:`lib.training.checkpoint`), with the options that
        wrote it (:meth:`recorded`): a run resumed under other values of them is refused.
    """

    steps: int
    loss_fn: Callable[..., Tensor] = seq2seq_loss
    optimizer: torch.optim.Optimizer | OptimizerFactory | None = None
    lr: float = 1e-3
    schedule: str | LRScheduler | SchedulerFactory = "constant"
    warmup_steps: int = 0
    label_smoothing: float = 0.0
    clip_grad_norm: float | None = 1.0
    batch_size: int = 64
    eval_fn: Callable[[nn.Module], dict] | None = None
    eval_every: int | None = None
    device: torch.device | str | None = None
    progress: bool = True
    desc: str | None = None
    checkpoint: str | os.PathLike | None = None
    checkpoint_every: int | None = None

    def __post_init__(self) -> None:
        check_int("steps", self.steps, minimum=1)
        _check_callable("loss_fn", self.loss_fn)
        check_number("lr", self.lr, 0.0)
        check_int("warmup_steps", self.warmup_steps, minimum=0)
        check_number("label_smoothing", self.label_smoothing, 0.0, 1.0, high_open=True)
        if self.clip_grad_norm is not None:
            check_number("clip_grad_norm", self.clip_grad_norm, 0.0, low_open=True)
        check_int("batch_size", self.batch_size, minimum=1)
        if self.eval_fn is not None:
            _check_callable("eval_fn", self.eval_fn)
        for name in ("eval_every", "checkpoint_every"):
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name), minimum=1)
        if not isinstance(self.progress, bool):
            raise TypeError(f"progress must be True or False, got {self.progress!r}")
        if self.desc is not None and not isinstance(self.desc, str):
            raise TypeError(f"desc must be a str or None, got {type(self.desc).__name__}")
        if self.checkpoint is not None and not isinstance(self.checkpoint, (str, os.PathLike)):
            raise TypeError(f"checkpoint must be a file path or None, got {type(self.checkpoint).__name__}")

    def every(self, name: str) -> int:
        """``eval_every`` or ``checkpoint_every``, by default a tenth of ``steps`` (at least 1)."""
        value = getattr(self, f"{name}_every")
        return max(1, self.steps // 10) if value is None else value

    def due(self, name: str, step: int) -> bool:
        """Whether the evaluation or checkpoint done every ``every(name)`` steps, and after the last, is due."""
        return step % self.every(name) == 0 or step == self.steps

    @property
    def loss_kw(self) -> dict:
        """The keywords ``loss_fn`` receives besides the model and the batch."""
        return {"label_smoothing": self.label_smoothing} if self.label_smoothing else {}

    @property
    def max_norm(self) -> float:
        """The clipping threshold (``inf``: no clipping)."""
        return math.inf if self.clip_grad_norm is None else float(self.clip_grad_norm)

    def recorded(self, optimizer: torch.optim.Optimizer, scheduler: LRScheduler) -> dict[str, str]:
        """What decides the arithmetic of the steps, as text (name -> value): what a checkpoint records,
        and what a run that resumes it must have (:func:`~lib.training.checkpoint.load_checkpoint`).

        The run's ``optimizer`` (as built: its class as ``optimizer``, each hyperparameter as
        ``optimizer.lr``, ``optimizer.betas``, …, however it was given), ``schedule`` (a name, or the
        class of the run's ``scheduler``), ``warmup_steps`` with a named schedule,
        ``label_smoothing``, ``clip_grad_norm``, ``batch_size``, and ``steps`` with the cosine schedule,
        whose decay it sets (under the others a run may go on for longer). ``loss_fn`` is not among
        them: a function of one's own may be wrapped (to record its batches, to stop a run) and still
        compute the same loss, and its name would not say what it computes."""
        recorded = {"optimizer": type(optimizer).__name__}
        for name, value in sorted(optimizer.defaults.items()):
            if name not in ("foreach", "fused", "capturable", "differentiable"):  # how, not what, it computes
                recorded[f"optimizer.{name}"] = repr(value)
        recorded["schedule"] = repr(self.schedule) if isinstance(self.schedule, str) else type(scheduler).__name__
        if isinstance(self.schedule, str):
            recorded["warmup_steps"] = repr(self.warmup_steps)
        if self.schedule == "cosine":
            recorded["steps"] = repr(self.steps)
        recorded |= {
            "label_smoothing": repr(self.label_smoothing),
            "clip_grad_norm": repr(self.clip_grad_norm),
            "batch_size": repr(self.batch_size),
        }
        return recorded

    def build_optimizer(self, params: list[Tensor]) -> torch.optim.Optimizer:
        """The run's optimizer over ``params``: the given one, the factory's, or the paper's Adam."""
        if isinstance(self.optimizer, torch.optim.Optimizer):
            return self.optimizer
        if self.optimizer is None:
            return paper_adam(params, self.lr)
        _check_callable("optimizer", self.optimizer, "None, a function parameters -> Optimizer or an Optimizer")
        return self.optimizer(params)

    def build_scheduler(self, optimizer: torch.optim.Optimizer) -> LRScheduler:
        """The learning-rate schedule of ``optimizer``: the given one, the factory's, or the named one."""
        if isinstance(self.schedule, LRScheduler):
            if self.schedule.optimizer is not optimizer:
                raise ValueError("schedule is an LRScheduler of another optimizer; pass that optimizer as optimizer=")
            return self.schedule
        if isinstance(self.schedule, str):
            return make_schedule(optimizer, self.schedule, warmup_steps=self.warmup_steps, total_steps=self.steps)
        _check_callable("schedule", self.schedule, "a name, a function optimizer -> LRScheduler or an LRScheduler")
        return self.schedule(optimizer)


def paper_adam(params: list[Tensor], lr: float) -> torch.optim.Optimizer:
    """The default optimizer: Adam with the paper's β = (0.9, 0.98) and ε = 1e-9 (§5.3).

    ``foreach=True`` (CUDA's default, not the CPU's) updates all tensors per operation instead of
    looping over them in Python: the same elementwise arithmetic, a few percent off a small model's
    step on a CPU."""
    return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.98), eps=1e-9, foreach=True)


def _check_callable(name: str, value: object, expected: str = "a function") -> None:
    if not callable(value):
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}")
