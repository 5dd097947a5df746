"""Timing on a busy machine: interleaved repeats, medians, and fitted log-log slopes.

One protocol for every timing in ``lib``: the benchmarks (:mod:`lib.bench`) and chapter 8's cost
plots (:func:`lib.efficient.cpu_seconds`) both call :func:`compare`. It lives here, beside the model
rather than in :mod:`lib.bench`, so that nothing in ``lib`` has to import the benchmark suite.

The measuring is PyTorch's (:mod:`torch.utils.benchmark`): a timing is a block of calls run by
:class:`timeit.Timer`, which is what :class:`torch.utils.benchmark.Timer` runs for Python code (the
garbage collector paused, the clock read before and after the block), and each function's timings
make a :class:`torch.utils.benchmark.Measurement`, whose median is the result. What :func:`compare`
adds is the order. ``Timer.blocked_autorange`` and ``Timer.adaptive_autorange`` time one statement
until they are done with it, so a burst of load from elsewhere on the machine lands on whichever
function they were timing; :func:`compare` times every function once per round, in rotating order,
so that the burst hits all of them alike and the medians discard it.
"""

from __future__ import annotations

import math
import time
import timeit
from collections.abc import Callable, Hashable

import numpy as np
import torch
from torch.utils.benchmark import Measurement, TaskSpec


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
    statistic: str = "median",
) -> dict[Hashable, float]:
    """Median (or fastest) seconds per call of each function, timed interleaved.

    Each function is warmed up, then called ``inner`` times in a row per timing, ``inner`` chosen
    so that a timing lasts about ``min_seconds``.  In every one of the ``repeats`` rounds each
    function is timed once (in a rotating order), so a burst of load from elsewhere on the machine
    hits all of them alike; the median over the rounds (of each function's ``Measurement``)
    discards the outliers.

    ``clock`` is wall-clock time by default; ``clock=time.thread_time`` counts only the CPU time of
    this thread (single-threaded CPU work), which other programs on a shared machine cannot inflate.
    ``statistic="min"`` gives each function's fastest round instead of the median: load from
    elsewhere only ever slows a round down, so on a busy machine the fastest round is the closest
    to the function's own cost. The device is synchronized before every reading of the clock.
    """
    if statistic not in ("median", "min"):
        raise ValueError(f"statistic must be 'median' or 'min', got {statistic!r}")
    device = torch.device(device)

    def now() -> float:
        synchronize(device)
        return clock()

    names = list(fns)
    timers = {name: timeit.Timer(fns[name], timer=now) for name in names}
    inner = {}
    for name in names:
        fns[name]()  # warm-up (lazy init, caches)
        inner[name] = max(1, math.ceil(min_seconds / max(timers[name].timeit(1), 1e-6)))
    blocks: dict[Hashable, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            blocks[name].append(timers[name].timeit(inner[name]))  # seconds for `inner` calls
    threads = torch.get_num_threads()
    measurements = {
        name: Measurement(
            inner[name], blocks[name], TaskSpec("fn()", "pass", description=str(name), num_threads=threads)
        )
        for name in names
    }
    if statistic == "min":
        return {name: min(m.times) for name, m in measurements.items()}
    return {name: m.median for name, m in measurements.items()}


def loglog_slope(x, y) -> float:
    """The slope ``p`` of the least-squares line through ``(log x, log y)``: ``y ∝ x^p``."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])
