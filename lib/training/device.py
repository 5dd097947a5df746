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


def check_seed(name: str, value: object, bits: int | None = 32) -> int:
    """A seed, checked by ``lib``'s one seed policy; returns it.

    A seed is a non-negative ``int`` that the generator it seeds keeps whole, so that two different
    seeds never draw the same numbers:

    - ``bits=32`` (the default): torch's generators (``torch.manual_seed``, ``torch.Generator``) and
      NumPy's keep a seed's lowest 32 bits, so ``2**40 + s`` would draw exactly what ``s`` draws: the
      seed must be in ``[0, 2**32)``;
    - ``bits=None``: Python's ``random.Random`` keeps every bit of a seed but its sign (``-s`` draws
      what ``s`` draws): any ``int >= 0``;
    - ``bits=64``: a hash that keeps 64 bits (:func:`lib.efficient.bigbird_mask`): ``[0, 2**64)``.

    A seed outside its range is refused with a ``ValueError``, a non-int with a ``TypeError``. A seed
    that ``lib`` computes from others (``torch.initial_seed()``, a seed plus a step) is reduced into
    ``[0, 2**32)`` instead (:func:`derived_seed`): the reader never gave it.
    """
    check_int(name, value)
    low_bits = value if bits is None else value % 2**bits  # type: ignore[operator]
    if value < 0 or value != low_bits:  # type: ignore[operator]
        if bits is None:
            raise ValueError(
                f"{name}={value!r} must be a non-negative int: Python's random.Random keeps a seed's "
                f"absolute value, so it would draw what {-value} draws"  # type: ignore[operator]
            )
        keeps = "torch keeps" if bits == 32 else "the generator keeps"
        raise ValueError(
            f"{name}={value!r} must be in [0, 2**{bits}): {keeps} a seed's lowest {bits} bits, "
            f"so it would draw what {low_bits} draws"
        )
    return value  # type: ignore[return-value]


def derived_seed(value: int) -> int:
    """A seed that ``lib`` computes from others (``torch.initial_seed()``, a base seed plus a rank),
    reduced into the range of :func:`check_seed`: ``value mod 2**32``.

    torch would keep these 32 bits anyway, so the reduced seed draws what ``value`` draws, and a
    ``value`` already in ``[0, 2**32)`` is itself. (A seed the reader gives is refused instead.)
    """
    return check_int("seed", value) % 2**32


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
    check_seed("seed", seed)
    check_int("k", k, minimum=1)
    if k * seed + k - 1 >= 2**32:
        raise ValueError(
            f"seed={seed} with k={k} gives the seeds {k * seed} … {k * seed + k - 1}, beyond 2**32 "
            f"(torch keeps a seed's lowest 32 bits); expected seed <= {(2**32 - k) // k}"
        )
    return [k * seed + i for i in range(k)]
