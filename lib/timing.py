"""Timing on a busy machine: interleaved repeats, medians, and fitted log-log slopes.

One protocol for every timing in ``lib``: the benchmarks (:mod:`lib.bench`) and chapter 8's cost
plots (:func:`lib.efficient.cpu_seconds`) both call :func:`compare`. It lives here, beside the model
rather than in :mod:`lib.bench`, so that nothing in ``lib`` has to import the benchmark suite.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Hashable

import numpy as np
import torch


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (GPUs run asynchronously), so a timer sees all of it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def compare(
    fns: dict[Hashable, Callable[[], object]],
    repeats: int = 5,
    min_seconds: float = 0.02,
    device: torch.device | str = "cpu",
    clock: Callable[[], float] = time.perf_counter,
) -> dict[Hashable, float]:
    """Median seconds per call of each function, timed interleaved.

    Each function is warmed up, then called ``inner`` times in a row per timing, ``inner`` chosen
    so that a timing lasts about ``min_seconds``.  In every one of the ``repeats`` rounds each
    function is timed once (in a rotating order), so a burst of load from elsewhere on the machine
    hits all of them alike; the median over the rounds discards the outliers.

    ``clock`` is wall-clock time by default; ``clock=time.thread_time`` counts only the CPU time of
    this thread (single-threaded CPU work), which other programs on a shared machine cannot inflate.
    """
    device = torch.device(device)
    inner = {}
    for name, fn in fns.items():
        fn()  # warm-up (lazy init, caches)
        synchronize(device)
        start = clock()
        fn()
        synchronize(device)
        inner[name] = max(1, math.ceil(min_seconds / max(clock() - start, 1e-6)))
    names = list(fns)
    samples: dict[Hashable, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            fn, n = fns[name], inner[name]
            synchronize(device)
            start = clock()
            for _ in range(n):
                fn()
            synchronize(device)
            samples[name].append((clock() - start) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def loglog_slope(x, y) -> float:
    """The slope ``p`` of the least-squares line through ``(log x, log y)``: ``y ∝ x^p``."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])
