"""Where and how reproducibly to run: the device, and the seed of every random number generator."""

from __future__ import annotations

import random

import numpy as np
import torch

from ..model.checks import check_int


def default_device() -> torch.device:
    """The best available device: CUDA, then Apple MPS, then CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def check_seed(name: str, value: object) -> int:
    """A seed for a torch generator: an ``int`` in ``[0, 2**32)``; returns it.

    torch keeps only a seed's lowest 32 bits, so ``2**40 + s`` would draw exactly what ``s`` draws:
    a seed meant to be far from ``s`` would silently share its numbers. Such a seed is refused.
    """
    check_int(name, value)
    if not 0 <= value < 2**32:  # type: ignore[operator]
        raise ValueError(
            f"{name}={value!r} must be in [0, 2**32): torch keeps a seed's lowest 32 bits, "
            f"so it would draw what {value % 2**32} draws"  # type: ignore[operator]
        )
    return value  # type: ignore[return-value]


def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, NumPy and torch (and every CUDA device, if any).

    The same seed on the same device then gives the same numbers.
    """
    check_seed("seed", seed)  # torch and NumPy keep 32 bits: a larger seed would alias a smaller one
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def seed_block(seed: int, k: int) -> list[int]:
    """The seeds of run ``seed`` of an experiment with ``k`` models: ``k·seed … k·seed + k − 1``.

    Run 0 trains seeds ``0 … k−1``, run 1 seeds ``k … 2k−1``, and so on: two runs never share a model,
    so the runs of a chapter with ``SEED = 0, 1, …`` are independent experiments of ``k`` models each
    (the seed sweep, ``tools/sweep.py``, checks that their seeds are disjoint).
    """
    check_int("seed", seed, minimum=0)
    check_int("k", k, minimum=1)
    return [k * seed + i for i in range(k)]
