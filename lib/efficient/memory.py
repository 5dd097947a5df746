"""Peak tensor memory of a computation, counted exactly on any device (CPU included).

On a GPU, ``torch.cuda.max_memory_allocated`` reports the allocator's peak; a CPU has no such
counter. :func:`peak_tensor_memory` counts instead: it watches every tensor PyTorch creates while
``fn`` runs (a ``TorchDispatchMode``), adds its storage's bytes when it is made and subtracts them when
it is freed, and reports the highest total. Deterministic: the same computation, the same number, on
every device. It is the one peak-memory meter of ``lib``: chapter 8 and the benchmarks
(:mod:`lib.bench`, which re-exports it) both use it. What it cannot see is scratch memory that a
single fused kernel allocates and frees inside itself (a kernel's working buffers): it counts the
tensors a computation hands from one operation to the next.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class _TensorMemory(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.live, self.peak, self.sizes = 0, 0, {}

    def _free(self, key: int, size: int) -> None:
        self.live -= size
        self.sizes.pop(key, None)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {
            t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)
        }
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                key, size = storage.data_ptr(), storage.nbytes()
                if size and key not in self.sizes and key not in inputs:  # new memory, not a view
                    self.sizes[key] = size
                    self.live += size
                    self.peak = max(self.peak, self.live)
                    weakref.finalize(storage, self._free, key, size)
        return out


def peak_tensor_memory(fn: Callable[[], object]) -> int:
    """Bytes: the most memory held at once by tensors that ``fn()`` creates (inputs not counted).

    >>> peak_tensor_memory(lambda: q @ k.transpose(-2, -1))   # a T × T matrix: 4·T² bytes (float32)
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable taking no arguments, got {type(fn).__name__}")
    with _TensorMemory() as counter:
        fn()
    return counter.peak
