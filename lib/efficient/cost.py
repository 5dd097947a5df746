"""CPU seconds per call, robust to a busy machine: the timing behind the chapter's cost plots.

:func:`lib.bench.compare` times wall-clock seconds, which on a shared machine also count the time
the process waits for a core. On the CPU, :func:`cpu_seconds` counts only the processor time this
thread spends (``time.thread_time``: user + system), with the same protocol as ``compare``: a warm-up,
then ``repeats`` rounds in which every function is timed once, in rotating order; the median per
function. Single-threaded work only (``torch.set_num_threads(1)``): other threads' time is not seen.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Hashable

import torch


def cpu_seconds(
    fns: dict[Hashable, Callable[[], object]], repeats: int = 5, min_seconds: float = 0.01
) -> dict[Hashable, float]:
    """Median CPU seconds per call of each function (timed interleaved; see the module docstring)."""
    if torch.get_num_threads() != 1:
        raise ValueError(
            f"cpu_seconds times one thread; call torch.set_num_threads(1) first (got {torch.get_num_threads()} threads)"
        )
    inner = {}
    for name, fn in fns.items():
        fn()  # warm-up
        start = time.thread_time()
        fn()
        inner[name] = max(1, math.ceil(min_seconds / max(time.thread_time() - start, 1e-6)))
    names = list(fns)
    samples: dict[Hashable, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            start = time.thread_time()
            for _ in range(inner[name]):
                fns[name]()
            samples[name].append((time.thread_time() - start) / inner[name])
    return {name: statistics.median(s) for name, s in samples.items()}
