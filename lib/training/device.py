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


def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, NumPy and torch (and every CUDA device, if any).

    The same seed on the same device then gives the same numbers.
    """
    check_int("seed", seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # NumPy only takes seeds in [0, 2**32)
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
