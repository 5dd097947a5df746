"""Input validation, in one place: a wrong type raises ``TypeError``, a wrong value ``ValueError``.

Every message names the argument, what came and what was expected
(``d_model=0 must be a positive int``; ``dropout must be a number, got 'high' (str)``).
Booleans are not ints here, although Python says ``isinstance(True, int)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import Tensor


def check_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` must be an ``int`` (not a ``bool``) in ``[minimum, maximum]``; returns it."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if minimum is not None and value < minimum:
        kind = {1: "a positive int", 0: "a non-negative int"}.get(minimum, f"an int >= {minimum}")
        raise ValueError(f"{name}={value!r} must be {kind}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}={value!r} must be <= {maximum}")
    return value


def check_number(
    name: str,
    value: object,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` must be a real number (not a ``bool``) in the interval; returns it as ``float``.

    ``low_open``/``high_open`` exclude the end points: ``check_number("dropout", p, 0, 1, high_open=True)``
    accepts ``[0, 1)``.
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high or math.isnan(value):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name}={value!r} must be in {interval}")
    return float(value)


def check_choice(name: str, value: object, choices: Iterable[object]) -> object:
    """``value`` must be one of ``choices``; returns it."""
    choices = list(choices)
    if value not in choices:
        raise ValueError(f"{name}={value!r} is unknown; expected one of {choices}")
    return value


def check_tensor(name: str, value: object) -> Tensor:
    """``value`` must be a ``torch.Tensor``; returns it."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(value).__name__}")
    return value


def check_tokens(name: str, tokens: object, vocab_size: int, max_len: int | None = None, offset: int = 0) -> Tensor:
    """Token ids must be a ``[B, T]`` integer tensor with ``T >= 1`` and ids in ``[0, vocab_size)``.

    ``max_len`` (if given) bounds ``offset + T``: the capacity of learned absolute positions.
    Reading the id range synchronises host and device, so models check once per call, at the
    entry point; the decoding loops feed their own (valid) tokens through unchecked internals.
    """
    if not isinstance(tokens, Tensor):
        raise TypeError(f"{name} must be a Tensor of token ids, got {type(tokens).__name__}")
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids, got dtype {tokens.dtype}")
    if tokens.dim() != 2 or tokens.size(1) == 0:
        raise ValueError(f"{name} of shape {tuple(tokens.shape)} should be [B, T] with T >= 1")
    if max_len is not None and offset + tokens.size(1) > max_len:
        raise ValueError(f"{name} of length {offset + tokens.size(1)} is longer than max_len={max_len}")
    if tokens.numel():
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= vocab_size:
            raise ValueError(f"{name} holds token ids in [{low}, {high}], outside the vocabulary [0, {vocab_size})")
    return tokens
