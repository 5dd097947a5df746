"""Input validation, in one place: ``TypeError`` for a wrong type, ``ValueError`` for a wrong value, a
message that names the argument, what came and what was expected. Booleans are not ints here."""

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


def check_number(name: str, value: object, low: float = -math.inf, high: float = math.inf,
                 low_open: bool = False, high_open: bool = False) -> float:  # fmt: skip
    """``value`` must be a real number (not a ``bool``) in the interval (ends excluded if ``*_open``)."""
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
    if value not in (choices := list(choices)):
        raise ValueError(f"{name}={value!r} is unknown; expected one of {choices}")
    return value


def check_tensor(name: str, value: object) -> Tensor:
    """``value`` must be a ``torch.Tensor``; returns it."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(value).__name__}")
    return value


def check_tokens(
    name: str, tokens: object, vocab_size: int, max_len: int | None = None, offset: int = 0, values: bool = True
) -> Tensor:
    """Token ids: a ``[B, T]`` integer tensor, ``T >= 1``, ``offset + T <= max_len`` if given (learned positions),
    ids in ``[0, vocab_size)`` if ``values`` (which reads them from the device: not in a ``forward``)."""
    if not isinstance(tokens, Tensor):
        raise TypeError(f"{name} must be a Tensor of token ids, got {type(tokens).__name__}")
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids, got dtype {tokens.dtype}")
    if tokens.dim() != 2 or tokens.size(1) == 0:
        raise ValueError(f"{name} of shape {tuple(tokens.shape)} should be [B, T] with T >= 1")
    if max_len is not None and offset + tokens.size(1) > max_len:
        raise ValueError(f"{name} of length {offset + tokens.size(1)} is longer than max_len={max_len}")
    if values and tokens.numel() and not 0 <= int(tokens.min()) <= int(tokens.max()) < vocab_size:
        low, high = int(tokens.min()), int(tokens.max())
        raise ValueError(f"{name} holds token ids in [{low}, {high}], outside the vocabulary [0, {vocab_size})")
    return tokens
