"""Checkpoints: everything the training loop (:mod:`lib.training.loop`) needs to continue a run as if it
never stopped.

A checkpoint is one ``torch.save`` file holding the step reached, the weights' (a model's, or the
stacked weights of an ensemble's step object), the optimizer's and the learning-rate scheduler's
``state_dict``, the state of every rank's torch random number generator (dropout draws from it), the
options that wrote it (as text: :meth:`~lib.training.options.TrainingOptions.recorded`) and the models
of an ensemble that diverged before it. Resuming loads all of them, after checking that the run resuming
has the same options (a checkpoint written with ``lr=1e-2`` resumed with ``lr=3e-3`` would continue
another run than the one it saved); ``train`` then replays its data source up to that step (the
restored random state set aside meanwhile, so that a data source drawing from torch's generator does
not advance it), and the next losses are those of an uninterrupted run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple, Protocol

import torch
from torch import Tensor
from torch.optim.lr_scheduler import LRScheduler

from . import distributed


class Stateful(Protocol):
    """What holds the weights: an ``nn.Module``, or a step object of the loop (:mod:`lib.training.step`)."""

    def state_dict(self) -> dict[str, Tensor]: ...
    def load_state_dict(self, state: dict[str, Tensor]) -> object: ...


def _device(weights: Stateful) -> torch.device:
    return next(iter(weights.state_dict().values())).device


def _rng_state(device: torch.device) -> dict[str, torch.Tensor]:
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


class Saved(NamedTuple):
    """What :func:`load_checkpoint` read besides the state it restored: the step reached, and the models
    of an ensemble that had diverged by then (model -> the step of its non-finite loss)."""

    step: int
    diverged: dict[int, int]


def save_checkpoint(
    path: str | os.PathLike,
    *,
    model: Stateful,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    step: int,
    options: Mapping[str, str] | None = None,
    diverged: Mapping[int, int] | None = None,
) -> None:
    """Write the state after ``step`` optimizer steps to ``path``, with the ``options`` that wrote it
    (name -> value as text) and the models that ``diverged`` (model -> step).

    Every rank must call it (the random states are gathered from all ranks); rank 0 writes the
    file, to a temporary name first and then renamed, so a run killed while saving leaves the
    previous checkpoint intact.
    """
    device = _device(model)
    rng = [_rng_state(device)]
    if distributed.is_distributed():
        rng = [None] * distributed.world_size()
        torch.distributed.all_gather_object(rng, _rng_state(device))
    if distributed.rank() == 0:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "step": step,
            "world_size": distributed.world_size(),
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": rng,
            "options": dict(options or {}),
            "diverged": dict(diverged or {}),
        }
        partial = path.with_name(path.name + ".partial")
        torch.save(state, partial)
        os.replace(partial, path)
    distributed.barrier()


def load_checkpoint(
    path: str | os.PathLike,
    *,
    model: Stateful,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    options: Mapping[str, str] | None = None,
) -> Saved:
    """Restore the state saved at ``path`` into ``model``, ``optimizer`` and ``scheduler``; return its step
    and the models that had diverged by then.

    ``options`` are those of the run that resumes (name -> value as text): a checkpoint written under
    other options is refused with a ``ValueError`` that names those that differ (one written before
    checkpoints recorded their options is loaded as it is). The random state restored is this
    rank's own, so the run must resume with as many processes as it had (``ValueError`` otherwise).
    """
    device = _device(model)
    state = torch.load(path, map_location=device, weights_only=True)
    if state["world_size"] != distributed.world_size():
        raise ValueError(
            f"checkpoint {str(path)!r} was written by {state['world_size']} process(es); resume it with as many, "
            f"not {distributed.world_size()}"
        )
    written, now = state.get("options", {}), dict(options or {})
    if written and (differ := sorted(n for n in written.keys() | now.keys() if written.get(n) != now.get(n))):
        said = lambda values: ", ".join(f"{n}={values.get(n, '(none)')}" for n in differ)  # noqa: E731
        raise ValueError(
            f"checkpoint {str(path)!r} was written with {said(written)}; this run has {said(now)}: resume it "
            "with the options that wrote it (or start again from another file), else the steps after it would "
            "belong to another run"
        )
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    rng = state["rng"][distributed.rank()]
    torch.set_rng_state(rng["cpu"].cpu())
    if "cuda" in rng:
        torch.cuda.set_rng_state(rng["cuda"].cpu(), device)
    return Saved(int(state["step"]), {int(m): int(n) for m, n in state.get("diverged", {}).items()})
