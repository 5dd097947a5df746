"""CPU seconds per call, robust to a busy machine: the timing behind the chapter's cost plots.

:func:`lib.timing.compare` (also ``lib.bench.compare``) times wall-clock seconds, which on a shared machine also count the time
the process waits for a core. On the CPU, :func:`cpu_seconds` counts only the processor time this
thread spends (``time.thread_time``: user + system), with the same protocol as ``compare``: a warm-up,
then ``repeats`` rounds in which every function is timed once, in rotating order; the median per
function. Single-threaded work only (``torch.set_num_threads(1)``): other threads' time is not seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable

import torch

from ..timing import compare


def cpu_seconds(
    fns: dict[Hashable, Callable[[], object]], repeats: int = 5, min_seconds: float = 0.01
) -> dict[Hashable, float]:
    """Median CPU seconds per call of each function: :func:`lib.timing.compare` on this thread's clock."""
    if torch.get_num_threads() != 1:
        raise ValueError(
            f"cpu_seconds times one thread; call torch.set_num_threads(1) first (got {torch.get_num_threads()} threads)"
        )
    return compare(fns, repeats=repeats, min_seconds=min_seconds, clock=time.thread_time)
