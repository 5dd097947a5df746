"""Learning-rate schedules: ``LambdaLR`` factors on the optimizer's learning rate.

The paper's schedule (Vaswani et al., 2017, eq. 3) warms the learning rate up linearly for
``warmup_steps`` steps, then decays it with the inverse square root of the step:

    lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)
"""

from __future__ import annotations

import math

import torch
from torch.optim.lr_scheduler import LambdaLR

from ..model.checks import check_choice, check_int

SCHEDULES = ("constant", "linear_warmup", "noam", "cosine")


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """The paper's learning rate at ``step`` (counted from 1), eq. 3:

        factor · d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)

    It grows linearly up to ``step = warmup_steps``, where it peaks at
    ``factor · (d_model · warmup_steps)^-0.5``, then decays as ``step^-0.5``.
    """
    check_int("step", step, minimum=1)  # steps are counted from 1
    check_int("d_model", d_model, minimum=1)
    check_int("warmup_steps", warmup_steps, minimum=1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def make_schedule(
    optimizer: torch.optim.Optimizer, name: str, *, warmup_steps: int = 0, total_steps: int | None = None
) -> LambdaLR:
    """A ``LambdaLR`` that scales the optimizer's learning rate ``lr`` over the steps:

    - ``"constant"``: ``lr`` throughout.
    - ``"linear_warmup"``: from ``lr / warmup_steps`` up to ``lr`` at ``warmup_steps``, then constant.
    - ``"noam"``: eq. 3's shape (:func:`noam_lr`) scaled so that its peak, at ``warmup_steps``, is
      ``lr``.  The paper's schedule exactly (Adam, β = (0.9, 0.98), ε = 1e-9)::

          lr = (d_model * warmup_steps) ** -0.5          # = noam_lr(warmup_steps, d_model, warmup_steps)
          optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
          scheduler = make_schedule(optimizer, "noam", warmup_steps=4000)

    - ``"cosine"``: linear warm-up, then cosine decay to 0 at ``total_steps``.

    Call ``scheduler.step()`` after each ``optimizer.step()`` (:func:`train` does).
    """
    check_choice("schedule", name, SCHEDULES)
    w = check_int("warmup_steps", warmup_steps, minimum=0)

    def warmup(step: int) -> float:  # step counted from 1
        return min(1.0, step / w) if w > 0 else 1.0

    if name == "constant":
        factor = lambda step: 1.0  # noqa: E731
    elif name == "linear_warmup":
        factor = warmup
    elif name == "noam":
        if w < 1:
            raise ValueError(f"schedule='noam' needs warmup_steps >= 1, got {w}")
        # d_model cancels in the ratio: what is left is min(step / w, sqrt(w / step)).
        factor = lambda step: noam_lr(step, 1, w) / noam_lr(w, 1, w)  # noqa: E731
    else:  # cosine
        if check_int("total_steps", total_steps, minimum=1) <= w:
            raise ValueError(f"schedule='cosine' needs total_steps > warmup_steps={w}, got {total_steps!r}")

        def factor(step: int) -> float:
            if step <= w:
                return warmup(step)
            progress = min(1.0, (step - w) / (total_steps - w))
            return 0.5 * (1.0 + math.cos(math.pi * progress))

    return LambdaLR(optimizer, lambda s: factor(s + 1))
