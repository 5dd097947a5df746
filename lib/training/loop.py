"""The training loop, written once: batches, steps, evaluation, progress, checkpoints.

What it repeats is a step object (:mod:`lib.training.step`): :class:`~lib.training.step.ModelStep` for
one model (:func:`~lib.training.train.train`), :class:`~lib.training.ensemble.EnsembleStep` for M
models in one pass (:func:`~lib.training.ensemble.train_ensemble`). Each step is::

    batch  = next_batch(step)            # this rank's share, on the model's device
    losses = step.losses(batch)          # [M]
    values = step.logged(losses)         # what the history records: one host sync a step
    norms  = step.update(losses)         # backward, inert gradients, clipping, optimizer, schedule

and, when due, an evaluation of every model and a checkpoint.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass, field

import torch
from torch import Tensor
from tqdm.auto import tqdm

from ..model import eval_mode
from . import distributed
from .checkpoint import load_checkpoint, save_checkpoint
from .options import TrainingOptions
from .sources import Source
from .step import Step


@dataclass
class History:
    """What a training run records: one entry per step, plus the evaluations.

    ``evals`` is a list of dicts, each with ``"step"`` and the metrics of ``eval_fn``.
    ``seconds`` is the wall-clock time of the whole run. ``diverged`` is the step whose loss was not
    finite, where this model's training stopped (``None``: it never was).
    """

    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    diverged: int | None = None

    def __repr__(self) -> str:
        last = f", last loss {self.loss[-1]:.4f}" if self.loss else ""
        return f"History({len(self.step)} steps{last}, {len(self.evals)} evals, {self.seconds:.1f} s)"


def run(step: Step, next_batch: Source, options: TrainingOptions) -> list[History]:
    """Run ``options.steps`` steps of ``step`` on ``next_batch(1)``, ``next_batch(2)``, …; one
    :class:`History` per model.

    The models are in ``train()`` mode for the steps (``eval()`` mode while ``eval_fn`` runs on each
    of them, on the main process only) and back in their mode afterwards. A model whose loss is not
    finite stops there, with a warning that names it: its history ends at the step before
    (``History.diverged`` holds the step), as a run of that model alone would end, and the other
    models of an ensemble train on (``step.stop``); the run ends when no model is left. Under
    torchrun every rank returns rank 0's histories.
    """
    main = distributed.rank() == 0  # the process that evaluates, shows progress and writes
    first, diverged_before = _resume(options, step, next_batch)
    histories = [History(diverged=diverged_before.get(m)) for m in range(len(step.models))]
    training = [m for m in range(len(histories)) if m not in diverged_before]  # the models that have not diverged
    if diverged_before:  # an ensemble resumed after some of its models diverged: they stay where they stopped
        step.stop(sorted(diverged_before))
    norms: list[Tensor] = []  # one [M] tensor a step, read once at the end (no host sync per step)
    bar = _Progress(options.steps, first, options.desc, options.progress, main)
    with step.training(), bar:
        for n in range(first, options.steps + 1):
            losses = step.losses(next_batch(n))
            values = step.logged(losses).tolist()  # the one host sync of a step
            if diverged := [m for m in training if not math.isfinite(values[m])]:
                training = [m for m in training if m not in diverged]
                _warn_diverged(n, values, diverged, stopping_all=not training)
                for m in diverged:
                    histories[m].diverged = n
                if not training:
                    break
                step.stop(diverged)
            used_lr = step.optimizer.param_groups[0]["lr"]
            norms.append(step.update(losses))
            for m in training:
                histories[m].step.append(n)
                histories[m].loss.append(values[m])
                histories[m].lr.append(used_lr)
            bar.postfix["loss"] = f"{sum(values[m] for m in training) / len(training):.4f}"
            if main and options.eval_fn is not None and options.due("eval", n):
                step.sync()
                for m in training:
                    histories[m].evals.append(_evaluate(step.models[m], options.eval_fn, n))
                bar.show_metrics([histories[m].evals[-1] for m in training])
            if options.checkpoint is not None and options.due("checkpoint", n):
                step.sync()
                diverged = {m: h.diverged for m, h in enumerate(histories) if h.diverged is not None}
                save_checkpoint(
                    options.checkpoint, model=step, optimizer=step.optimizer, scheduler=step.scheduler, step=n,
                    options=options.recorded(step.optimizer, step.scheduler), diverged=diverged,
                )  # fmt: skip
            bar.advance()
    step.sync()
    rows = torch.cat(norms).view(len(norms), -1).T.tolist() if norms else [[] for _ in histories]
    for history, row in zip(histories, rows):
        history.grad_norm.extend(row[: len(history.step)])  # a model that diverged: the steps it took
        history.seconds = bar.seconds
    bar.print_final(first - 1 + max(len(history.step) for history in histories))
    return distributed.broadcast(histories)  # rank 0's histories on every rank


def _warn_diverged(n: int, values: list[float], diverged: list[int], stopping_all: bool) -> None:
    """The warning of step ``n``, where the losses of the models ``diverged`` were not finite."""
    if len(values) == 1:
        message = f"training diverged at step {n} (loss = {values}); stopping"
    else:
        which = f"model(s) {diverged} (loss = {[values[m] for m in diverged]})"
        rest = "stopping" if stopping_all else "stopping them; the other models train on"
        message = f"training diverged at step {n} for {which}; {rest}"
    warnings.warn(message, stacklevel=4)


def _resume(options: TrainingOptions, step: Step, next_batch: Source) -> tuple[int, dict[int, int]]:
    """The first step to run and the models that diverged before it (model -> step): ``(1, {})``, or,
    if the file ``options.checkpoint`` exists, the step after the one it saved, and those it names.

    Resuming loads the weights, optimizer, scheduler and random state (refused if the checkpoint was
    written under other options, :meth:`~lib.training.options.TrainingOptions.recorded`), then replays
    the data source up to the saved step so that it continues where it stopped. The replay runs inside
    ``torch.random.fork_rng``: a data source that draws from torch's global generator must not
    advance the restored state, which is the state of the uninterrupted run after that step.
    """
    if options.checkpoint is None or not os.path.exists(options.checkpoint):
        return 1, {}
    saved = load_checkpoint(
        options.checkpoint,
        model=step,
        optimizer=step.optimizer,
        scheduler=step.scheduler,
        options=options.recorded(step.optimizer, step.scheduler),
    )
    step.sync()
    device = next(iter(step.state_dict().values())).device
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        for n in range(1, min(saved.step, options.steps) + 1):
            next_batch(n)
    return saved.step + 1, saved.diverged


def _evaluate(model, eval_fn, step: int) -> dict:
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

    def show_metrics(self, evals: list[dict]) -> None:
        """Put the numeric metrics of an evaluation (their mean over the models) in the postfix, its
        ``loss`` as ``eval_loss``."""
        keys = [k for k, v in evals[0].items() if k != "step" and isinstance(v, (int, float))]
        means = {k: sum(e[k] for e in evals) / len(evals) for k in keys if all(k in e for e in evals)}
        self.postfix.update({("eval_loss" if k == "loss" else k): f"{v:.3f}" for k, v in means.items()})

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
    """``TQDM_DISABLE`` set to a true value (tqdm's notebook bar ignores it, so the loop reads it itself)."""
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false", "no", "off")
