"""Peak memory of one attention forward pass, measured soundly.

On a GPU: ``torch.cuda.max_memory_allocated``.  On a CPU: in a fresh child process per point (process
isolation), as the growth of its resident-set high-water mark (Linux ``/proc/self/status``; elsewhere
``ru_maxrss``), so that no earlier allocation hides a later one.
"""

from __future__ import annotations

import multiprocessing
import sys

import torch
import torch.nn.functional as F
from torch import Tensor

from ..model.attention import scaled_dot_product_attention
from ..model.checks import check_choice


def attend(method: str, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """One attention forward pass: ``"explicit"`` (lib's written-out version) or ``"fused"``
    (PyTorch's kernel)."""
    check_choice("method", method, ("explicit", "fused"))
    if method == "explicit":
        return scaled_dot_product_attention(q, k, v)[0]
    return F.scaled_dot_product_attention(q, k, v)


def _qkv(B: int, H: int, T: int, d_head: int, device) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.randn(B, H, T, d_head, device=device) for _ in range(3))


def peak_memory(
    method: str, B: int, H: int, T: int, d_head: int, device: torch.device | str = "cpu", threads: int | None = None
) -> float | None:
    """Bytes one attention forward pass adds to the peak memory, beyond its inputs.

    On CUDA: ``torch.cuda.max_memory_allocated``, in this process.  On the CPU: the growth of the
    resident-set high-water mark of a fresh child process (see :func:`_peak_memory_in_child`).
    ``None`` where it cannot be measured (Apple MPS; platforms without ``fork``).
    """
    return peak_memories([(method, T)], B, H, d_head, device, threads)[0]


def peak_memories(
    points: list[tuple[str, int]],
    B: int,
    H: int,
    d_head: int,
    device: torch.device | str = "cpu",
    threads: int | None = None,
) -> list[float | None]:
    """:func:`peak_memory` of each ``(method, T)``; CPU points run two child processes at a time."""
    device = torch.device(device)
    if device.type == "cuda":
        out = []
        for method, T in points:
            q, k, v = _qkv(B, H, T, d_head, device)
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
            before = torch.cuda.memory_allocated(device)
            with torch.no_grad():
                attend(method, q, k, v)
            torch.cuda.synchronize(device)
            out.append(float(torch.cuda.max_memory_allocated(device) - before))
            del q, k, v
        return out
    if device.type != "cpu" or "forkserver" not in multiprocessing.get_all_start_methods():
        return [None] * len(points)
    # forkserver: each child is forked from a server that has imported torch and lib but has
    # computed nothing, so a child starts small and pays no import.  maxtasksperchild=1: one
    # fresh process per point.  (Memory does not mind two children sharing the CPU.)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["lib"])
    tasks = [(method, B, H, T, d_head, threads or torch.get_num_threads()) for method, T in points]
    with context.Pool(processes=2, maxtasksperchild=1) as pool:
        return pool.starmap(_peak_memory_in_child, tasks, chunksize=1)


def _resident_kib(field: str) -> int | None:
    """``VmRSS`` (resident now) or ``VmHWM`` (its high-water mark) of this process, Linux only."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _high_water_bytes() -> int | None:
    kib = _resident_kib("VmHWM")
    if kib is not None:
        return kib * 1024
    try:
        import resource
    except ImportError:  # Windows
        return None
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss if sys.platform == "darwin" else maxrss * 1024  # bytes on macOS, KiB elsewhere


def _peak_memory_in_child(method: str, B: int, H: int, T: int, d_head: int, threads: int) -> float | None:
    """Runs in a fresh child process: how far one forward pass raises the high-water mark.

    The mark only ever rises, so the child measures exactly one point: it allocates the inputs,
    warms the kernel up on a tiny input (thread pools, lazy initialisation), reads the mark, runs
    the forward pass, and reads the mark again.  (Not ``ru_maxrss`` of an exec'd child on Linux:
    it starts at the *parent's* peak.)
    """
    torch.set_num_threads(threads)
    q, k, v = _qkv(B, H, T, d_head, "cpu")
    with torch.no_grad():
        attend(method, *_qkv(1, 1, 8, d_head, "cpu"))
        before = _high_water_bytes()
        out = attend(method, q, k, v)
        after = _high_water_bytes()
    del out
    return None if before is None or after is None else float(after - before)
