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
