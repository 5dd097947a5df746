"""The models of an ensemble: one architecture, differing only in their weights.

:func:`~lib.training.ensemble.train_ensemble` runs the first model's architecture for all M models,
so it refuses models that differ in anything else: a submodule's kind, a parameter's or buffer's
name, shape or dtype, or a plain attribute (a dropout rate, an attention kernel, a method replaced on
one model). What these checks cannot see (a forward pass that reads something else) the ensemble's
first batch shows: each model's loss must be its own.
"""

from __future__ import annotations

import dataclasses
import reprlib
import types
from collections.abc import Sequence
from functools import partial

import torch
from torch import Tensor, nn

from ..model.checks import check_int


def check_models(models: object) -> list[nn.Module]:
    """A non-empty list of modules of one architecture: the same submodules of the same kinds, with
    parameters and buffers of the same names and shapes, and the same plain attributes."""
    if isinstance(models, nn.Module) or not isinstance(models, Sequence) or isinstance(models, str):
        raise TypeError(f"models must be a list of nn.Module, got {type(models).__name__}")
    check_int("len(models)", len(models), minimum=1)
    for i, model in enumerate(models):
        if not isinstance(model, nn.Module):
            raise TypeError(f"models[{i}] must be an nn.Module, got {type(model).__name__}")
    first = models[0]
    shapes = _shapes(first)
    owner: dict[int, int] = {}  # id of a parameter or buffer -> the first model holding it
    for i, model in enumerate(models):
        for tensor in [*model.parameters(), *model.buffers()]:
            j = owner.setdefault(id(tensor), i)
            if j != i:
                same = f"is models[{j}]" if model is models[j] else f"shares a parameter or buffer with models[{j}]"
                raise ValueError(
                    f"models[{i}] {same}; expected M models with weights of their own (copy.deepcopy a model, "
                    "or build one per seed): the ensemble trains each one's weights as a model of its own"
                )
    for i, model in enumerate(models[1:], start=1):
        if type(model) is not type(first):
            raise ValueError(
                f"models[{i}] is a {type(model).__name__}, models[0] a {type(first).__name__}; expected one architecture"
            )
        if _shapes(model) != shapes:
            differ = sorted(set(_shapes(model).items()) ^ set(shapes.items()))[:3]
            raise ValueError(
                f"models[{i}] has other parameters or buffers than models[0] (e.g. {differ}); "
                "expected one architecture (same names, shapes and dtypes)"
            )
        if (difference := _difference(first, model)) is not None:
            raise ValueError(
                f"models[{i}] differs from models[0] in more than its weights: {difference}; expected one "
                "architecture (train models that differ in anything else one by one with lib.train)"
            )
    try:
        next(first.parameters())
    except StopIteration:
        raise TypeError(f"model ({type(first).__name__}) has no parameters to train") from None
    return list(models)


def _shapes(model: nn.Module) -> dict[str, tuple]:
    tensors = [*model.named_parameters(), *model.named_buffers()]
    return {name: (tuple(t.shape), t.dtype, getattr(t, "requires_grad", False)) for name, t in tensors}


def _difference(a: nn.Module, b: nn.Module) -> str | None:
    """Where two modules first differ in something other than their weights (a submodule's kind, a
    plain attribute such as a dropout rate or a kernel, a method replaced on one of them), or ``None``."""
    left, right = dict(a.named_modules(remove_duplicate=False)), dict(b.named_modules(remove_duplicate=False))
    if list(left) != list(right):
        return f"submodules {sorted(set(left) ^ set(right))[:3]}"
    for name, x in left.items():
        y = right[name]
        if type(x) is not type(y):
            return f"{name or 'the model'} is a {type(y).__name__}, not a {type(x).__name__}"
        mine, theirs = _plain_attributes(x), _plain_attributes(y)
        for key in sorted(set(mine) | set(theirs)):
            u, v, where = mine.get(key), theirs.get(key), f"{name}.{key}".lstrip(".")
            if key not in mine or key not in theirs or not _same_value(u, v):
                while dataclasses.is_dataclass(u) and type(u) is type(v):  # a config: the field that differs
                    field = _differing_field(u, v)
                    u, v, where = getattr(u, field), getattr(v, field), f"{where}.{field}"
                return f"{where} is {_short(v)}, not {_short(u)}"
    return None


def _differing_field(x: object, y: object) -> str | None:
    """The first field in which two dataclasses of one type differ (:func:`_same_value`), or ``None``."""
    return next(
        (f.name for f in dataclasses.fields(x) if not _same_value(getattr(x, f.name), getattr(y, f.name))), None
    )


def _short(value: object) -> str:
    short = reprlib.Repr()
    short.maxstring = short.maxother = 60
    return short.repr(value)


def _plain_attributes(module: nn.Module) -> dict[str, object]:
    """A module's own attributes besides its parameters, buffers, submodules, hooks and mode."""
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and k != "training"}


def _same_value(x: object, y: object) -> bool:
    """Whether two attribute values configure a module alike: numbers, strings and containers equal,
    tensors equal, functions and methods the same function with the same bound arguments."""
    if type(x) is not type(y):
        return False
    if isinstance(x, Tensor):
        return x.shape == y.shape and x.dtype == y.dtype and bool(torch.equal(x.cpu(), y.cpu()))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):  # a config: field by field, as below
        return _differing_field(x, y) is None
    if isinstance(x, partial):
        return _same_value(x.func, y.func) and _same_value(x.args, y.args) and _same_value(x.keywords, y.keywords)
    if isinstance(x, types.MethodType):
        return _same_value(x.__func__, y.__func__) and _same_value(x.__self__, y.__self__)
    if isinstance(x, types.FunctionType):  # one function, or one lambda made twice from the same code
        cells = lambda f: [c.cell_contents for c in f.__closure__ or ()]  # noqa: E731
        return x is y or (x.__code__ is y.__code__ and _same_value(cells(x), cells(y)))
    if isinstance(x, types.BuiltinFunctionType):
        return x is y
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(map(_same_value, x, y))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same_value(x[k], y[k]) for k in x)
    if isinstance(x, nn.Module):  # a module kept outside the submodules (not registered): its kind
        return True
    if type(x).__eq__ is object.__eq__:  # an object with no notion of equality: its kind is all we can compare
        return True
    try:
        same = x == y
    except Exception:  # noqa: BLE001
        return True
    return same if isinstance(same, bool) else True


def one_device(models: list[nn.Module]) -> torch.device:
    devices = {t.device for model in models for t in [*model.parameters(), *model.buffers()]}
    if len(devices) != 1:
        raise ValueError(
            f"the models are on devices {sorted(map(str, devices))}; expected one device (or pass device=)"
        )
    return devices.pop()
