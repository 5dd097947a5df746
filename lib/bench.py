"""Benchmarks: how fast ``lib`` runs on *this* machine, every figure next to its reference.

Run ``python -m lib.bench`` (add ``--quick`` for the small CI size): it prints Markdown tables and
writes the results as JSON (default ``bench-results/bench.json``).  Four parts:

- **attention**: ``MultiHeadAttention``'s explicit path (the lesson's ``softmax(QKᵀ/√d_k) V``), its
  fused path (``F.scaled_dot_product_attention``) and ``torch.nn.MultiheadAttention`` with the same
  weights and the same mask, forward and forward + backward;
- **scaling**: time and peak memory of explicit attention and of the fused kernel as the sequence
  length ``T`` grows, with the slopes of straight lines fitted in log-log axes;
- **training**: tokens per second of a chapter-sized model and of one ``base``-sized layer, and the
  FLOP/s they achieve as a fraction of this machine's matrix-multiply peak, measured in the same run;
- **decoding**: tokens per second of greedy decoding with and without the key/value cache.

Timings are noisy, above all on a shared machine, so every timing is the **median of several
repeats**, the contenders of one comparison are timed **interleaved** (in turn, within the same
repeat), and what the tables report are ratios of such medians, or rates next to a reference
(the matmul peak) measured in the same run.

Peak memory is measured soundly: on a GPU with ``torch.cuda.max_memory_allocated``; on a CPU in a
fresh child process per point, as the growth of its resident-set high-water mark (Linux
``/proc/self/status``; elsewhere ``ru_maxrss``), so that no earlier allocation hides a later one.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Hashable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import MultiHeadAttention, record_attention, scaled_dot_product_attention
from .layers import EncoderLayer
from .lm import DecoderOnlyLM, LMConfig
from .masks import causal_mask
from .utils import default_device

# The sizes of a run.  ``quick`` is the CI size (well under a minute on a 2-core laptop CPU);
# ``tiny`` only checks that everything runs (the unit tests); ``full`` is the real measurement.
SIZES: dict[str, dict] = {
    "tiny": dict(
        repeats=3, min_seconds=0.0, matmul=[128, 256],
        attention=[(2, 32, 32, 2)],
        scaling=dict(B=1, H=2, d_head=16, T=[32, 64, 128]),
        lm=dict(batch=4, T=16), layer=dict(batch=1, T=32, d_model=64, n_heads=2, d_ff=128),
        decoding=dict(batch=2, prompt=4, new=8),
    ),
    "quick": dict(
        repeats=5, min_seconds=0.02, matmul=[512, 1024],
        attention=[(4, 128, 128, 4)],
        scaling=dict(B=1, H=8, d_head=64, T=[128, 256, 512, 1024]),
        lm=dict(batch=16, T=64), layer=dict(batch=2, T=128, d_model=512, n_heads=8, d_ff=2048),
        decoding=dict(batch=8, prompt=16, new=48),
    ),
    "full": dict(
        repeats=9, min_seconds=0.1, matmul=[512, 1024, 2048],
        attention=[(8, 256, 256, 8), (2, 1024, 512, 8)],
        scaling=dict(B=1, H=8, d_head=64, T=[128, 256, 512, 1024, 2048, 4096]),
        lm=dict(batch=32, T=128), layer=dict(batch=8, T=256, d_model=512, n_heads=8, d_ff=2048),
        decoding=dict(batch=8, prompt=16, new=240),
    ),
}

# The chapter-sized model: a 2-layer decoder-only LM like those the chapters train in seconds.
CHAPTER_LM = dict(vocab_size=64, d_model=128, n_heads=4, n_layers=2, d_ff=512)


# ----------------------------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------------------------


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (GPUs run asynchronously), so a timer sees all of it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def compare(fns: dict[Hashable, Callable[[], object]], repeats: int = 5, min_seconds: float = 0.02,
            device: torch.device | str = "cpu") -> dict[Hashable, float]:
    """Median seconds per call of each function, timed interleaved.

    Each function is warmed up, then called ``inner`` times in a row per timing, ``inner`` chosen
    so that a timing lasts about ``min_seconds``.  In every one of the ``repeats`` rounds each
    function is timed once (in a rotating order), so a burst of load from elsewhere on the machine
    hits all of them alike; the median over the rounds discards the outliers.
    """
    device = torch.device(device)
    inner = {}
    for name, fn in fns.items():
        fn()                                                   # warm-up (lazy init, caches)
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        inner[name] = max(1, math.ceil(min_seconds / max(time.perf_counter() - start, 1e-6)))
    names = list(fns)
    samples: dict[Hashable, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            fn, n = fns[name], inner[name]
            synchronize(device)
            start = time.perf_counter()
            for _ in range(n):
                fn()
            synchronize(device)
            samples[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def loglog_slope(x, y) -> float:
    """The slope ``p`` of the least-squares line through ``(log x, log y)``: ``y ∝ x^p``."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


# ----------------------------------------------------------------------------------------------
# The matmul peak: the reference for every FLOP/s figure
# ----------------------------------------------------------------------------------------------


def bench_matmul(sizes: list[int], repeats: int, min_seconds: float, device: torch.device) -> dict:
    """FLOP/s of a float32 ``n × n`` matrix product (``2n³`` FLOPs) for each ``n``; the best is the peak."""
    rows = []
    for n in sizes:
        a, b = (torch.randn(n, n, device=device) for _ in range(2))
        out = torch.empty(n, n, device=device)
        seconds = compare({"mm": lambda: torch.mm(a, b, out=out)}, repeats, min_seconds, device)["mm"]
        rows.append({"n": n, "seconds": seconds, "flops": 2 * n**3 / seconds})
    best = max(rows, key=lambda row: row["flops"])
    return {"rows": rows, "peak_flops": best["flops"], "peak_n": best["n"]}


# ----------------------------------------------------------------------------------------------
# Attention: explicit vs fused vs torch.nn.MultiheadAttention
# ----------------------------------------------------------------------------------------------


def torch_twin(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """A ``torch.nn.MultiheadAttention(batch_first=True)`` with the same weights as ``mha``."""
    twin = nn.MultiheadAttention(mha.d_model, mha.n_heads, batch_first=True,
                                 bias=mha.q_proj.bias is not None)
    twin.to(mha.q_proj.weight.device)
    projections = (mha.q_proj, mha.k_proj, mha.v_proj)
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
        twin.out_proj.weight.copy_(mha.out_proj.weight)
        if twin.in_proj_bias is not None:
            twin.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
            twin.out_proj.bias.copy_(mha.out_proj.bias)
    return twin


def bench_attention(configs: list[tuple[int, int, int, int]], repeats: int, min_seconds: float,
                    device: torch.device) -> list[dict]:
    """Self-attention at ``(B, T, d, h)``, without a mask and with the causal mask.

    Ours gets ``mask=causal_mask(T)`` (True = may attend); ``nn.MultiheadAttention`` gets the same
    mask flipped (True = masked out) plus its ``is_causal=True`` hint, its fastest causal path.
    "forward" runs in ``eval()`` mode without gradients (so PyTorch may take its inference fast
    path); "forward+backward" in ``train()`` mode (dropout 0) with a fixed output gradient.
    """
    rows = []
    for B, T, d, h in configs:
        torch.manual_seed(0)
        ours = MultiHeadAttention(d, h).to(device)
        twin = torch_twin(ours)
        x = torch.randn(B, T, d, device=device, requires_grad=True)
        grad = torch.randn(B, T, d, device=device)
        for masked in (False, True):
            mask = causal_mask(T, device=device) if masked else None
            flipped = None if mask is None else ~mask
            calls = {
                "explicit": lambda: ours(x, x, x, mask, need_weights=True)[0],
                "fused": lambda: ours(x, x, x, mask, need_weights=False)[0],
                "torch": lambda: twin(x, x, x, attn_mask=flipped, need_weights=False, is_causal=masked)[0],
            }
            for mode in ("forward", "forward+backward"):
                training = mode == "forward+backward"
                ours.train(training)
                twin.train(training)
                wrap = (lambda call: _with_backward(call, grad)) if training else _no_grad
                fns = {name: wrap(call) for name, call in calls.items()}
                t = compare(fns, repeats, min_seconds, device)
                rows.append({
                    "B": B, "T": T, "d_model": d, "n_heads": h, "mask": "causal" if masked else "none",
                    "mode": mode, "explicit_s": t["explicit"], "fused_s": t["fused"], "torch_s": t["torch"],
                    "fused_over_torch": t["fused"] / t["torch"],
                    "explicit_over_fused": t["explicit"] / t["fused"],
                })
    return rows


def _no_grad(call: Callable[[], Tensor]) -> Callable[[], Tensor]:
    def run() -> Tensor:
        with torch.no_grad():
            return call()
    return run


def _with_backward(call: Callable[[], Tensor], grad: Tensor) -> Callable[[], None]:
    return lambda: call().backward(grad)


# ----------------------------------------------------------------------------------------------
# Cost vs sequence length: explicit attention vs the fused kernel
# ----------------------------------------------------------------------------------------------


def attend(method: str, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """One attention forward pass: ``"explicit"`` (lib's written-out version) or ``"fused"``
    (PyTorch's kernel)."""
    if method == "explicit":
        return scaled_dot_product_attention(q, k, v)[0]
    if method == "fused":
        return F.scaled_dot_product_attention(q, k, v)
    raise ValueError(f"method={method!r} is unknown; expected 'explicit' or 'fused'")


def _qkv(B: int, H: int, T: int, d_head: int, device) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.randn(B, H, T, d_head, device=device) for _ in range(3))


def peak_memory(method: str, B: int, H: int, T: int, d_head: int, device: torch.device | str = "cpu",
                threads: int | None = None) -> float | None:
    """Bytes one attention forward pass adds to the peak memory, beyond its inputs.

    On CUDA: ``torch.cuda.max_memory_allocated``, in this process.  On the CPU: the growth of the
    resident-set high-water mark of a fresh child process (see :func:`_peak_memory_in_child`).
    ``None`` where it cannot be measured (Apple MPS; platforms without ``fork``).
    """
    return peak_memories([(method, T)], B, H, d_head, device, threads)[0]


def peak_memories(points: list[tuple[str, int]], B: int, H: int, d_head: int,
                  device: torch.device | str = "cpu", threads: int | None = None) -> list[float | None]:
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
    except ImportError:                                           # Windows
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


def bench_scaling(B: int, H: int, d_head: int, T: list[int], repeats: int, min_seconds: float,
                  device: torch.device) -> dict:
    """Forward time and peak memory of explicit vs fused attention for each ``T``, and their log-log slopes.

    All the points are timed in one interleaved :func:`compare`, so that load from elsewhere
    cannot bend the fitted lines.
    """
    inputs = {t: _qkv(B, H, t, d_head, device) for t in T}
    points = [(method, t) for t in T for method in ("explicit", "fused")]
    times = compare({(m, t): _no_grad(lambda m=m, t=t: attend(m, *inputs[t])) for m, t in points},
                    repeats, min_seconds, device)
    rows = [{"T": t, "explicit_s": times["explicit", t], "fused_s": times["fused", t]} for t in T]
    memories = peak_memories(points, B, H, d_head, device)
    for i, row in enumerate(rows):
        row["explicit_bytes"], row["fused_bytes"] = memories[2 * i], memories[2 * i + 1]
    slopes = {f"{m}_time": loglog_slope(T, [row[f"{m}_s"] for row in rows]) for m in ("explicit", "fused")}
    for m in ("explicit", "fused"):
        mem = [row[f"{m}_bytes"] for row in rows]
        slopes[f"{m}_memory"] = loglog_slope(T, mem) if all(b is not None and b > 0 for b in mem) else None
    return {"B": B, "H": H, "d_head": d_head, "rows": rows, "slopes": slopes}


# ----------------------------------------------------------------------------------------------
# Training throughput and the fraction of the matmul peak it achieves
# ----------------------------------------------------------------------------------------------


def training_flops(model: nn.Module, tokens: int, T: int, causal: bool) -> float:
    """FLOPs of one training step (forward + backward) over ``tokens`` tokens of length-``T`` sequences.

    The usual count (Kaplan et al., 2020): a weight used in a matrix product costs 2 FLOPs per
    token forward and 4 backward, so ``6 · (weights of every nn.Linear)`` per token; attention adds
    ``QKᵀ`` and ``AV``, ``4 · T_k · d_model`` per token and layer forward, ×3 with the backward,
    where a causal query attends on average to ``T_k = (T + 1) / 2`` keys.  Embedding look-ups,
    norms, softmax and the optimizer are not counted (they are not matrix products).
    """
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    t_k = (T + 1) / 2 if causal else T
    attention = sum(12 * t_k * m.d_model for m in model.modules() if isinstance(m, MultiHeadAttention))
    return float(tokens * (6 * linear + attention))


def _train_step(model: nn.Module, loss_fn: Callable[[], Tensor],
                optimizer: torch.optim.Optimizer) -> Callable[[], None]:
    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        loss_fn().backward()
        optimizer.step()
    return step


def bench_training(lm: dict, layer: dict, matmul_n: int, repeats: int, min_seconds: float,
                   device: torch.device) -> list[dict]:
    """Tokens per second of an Adam training step, and the achieved FLOP/s as a fraction of the peak.

    Two models: the chapter-sized :class:`DecoderOnlyLM` (:data:`CHAPTER_LM`, causal), with the
    fused attention and with the explicit attention, and one ``base``-sized :class:`EncoderLayer`
    (d_model 512, 8 heads, d_ff 2048, no mask).  The peak is the FLOP/s of an ``n × n`` matrix
    product (``n = matmul_n``, the best size of :func:`bench_matmul`) timed *interleaved* with the
    training steps, so that both meet the same load.  Dropout is 0: on the CPU, attention dropout
    makes PyTorch leave its fused kernel for the explicit math.
    """
    torch.manual_seed(0)
    rows = []
    a, b = (torch.randn(matmul_n, matmul_n, device=device) for _ in range(2))
    product = torch.empty(matmul_n, matmul_n, device=device)
    matmul = lambda: torch.mm(a, b, out=product)
    model = DecoderOnlyLM(LMConfig(**CHAPTER_LM, dropout=0.0, max_len=lm["T"] + 1)).to(device).train()
    data = torch.randint(0, CHAPTER_LM["vocab_size"], (lm["batch"], lm["T"] + 1), device=device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def lm_loss() -> Tensor:
        logits = model(data[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), data[:, 1:].flatten())

    def lm_loss_explicit() -> Tensor:
        with record_attention(model):              # every attention layer takes the explicit path
            return lm_loss()

    base = EncoderLayer(layer["d_model"], layer["n_heads"], layer["d_ff"], dropout=0.0).to(device).train()
    x = torch.randn(layer["batch"], layer["T"], layer["d_model"], device=device)
    base_optimizer = torch.optim.Adam(base.parameters(), lr=1e-4)

    t = compare({"fused": _train_step(model, lm_loss, optimizer),
                 "explicit": _train_step(model, lm_loss_explicit, optimizer),
                 "layer": _train_step(base, lambda: base(x).square().mean(), base_optimizer),
                 "matmul": matmul}, repeats, min_seconds, device)
    peak_flops = 2 * matmul_n**3 / t["matmul"]
    tokens = lm["batch"] * lm["T"]
    flops = training_flops(model, tokens, lm["T"], causal=True)
    for path in ("fused", "explicit"):
        rows.append(_training_row(f"chapter LM ({path} attention)", model, lm, flops, t[path], peak_flops))
    rows[0]["fused_speedup"] = t["explicit"] / t["fused"]
    flops = training_flops(base, layer["batch"] * layer["T"], layer["T"], causal=False)
    rows.append(_training_row("base-sized encoder layer", base, layer, flops, t["layer"], peak_flops))
    return rows


def _training_row(name, model, size, flops, seconds, peak_flops) -> dict:
    tokens = size["batch"] * size["T"]
    return {
        "model": name, "parameters": sum(p.numel() for p in model.parameters()),
        "batch": size["batch"], "T": size["T"], "tokens_per_step": tokens, "step_s": seconds,
        "tokens_per_s": tokens / seconds, "flops_per_step": flops, "flops_per_s": flops / seconds,
        "peak_flops": peak_flops, "fraction_of_peak": flops / seconds / peak_flops,
    }


# ----------------------------------------------------------------------------------------------
# Decoding with and without the key/value cache
# ----------------------------------------------------------------------------------------------


def bench_decoding(batch: int, prompt: int, new: int, repeats: int, min_seconds: float,
                   device: torch.device) -> dict:
    """Greedy decoding of ``new`` tokens after a ``prompt``-token prompt, with and without the cache."""
    torch.manual_seed(0)
    model = DecoderOnlyLM(LMConfig(**CHAPTER_LM, dropout=0.0, max_len=prompt + new)).to(device).eval()
    start = torch.randint(0, CHAPTER_LM["vocab_size"], (batch, prompt), device=device)
    t = compare({"cached": lambda: model.generate(start, new, use_cache=True),
                 "uncached": lambda: model.generate(start, new, use_cache=False)},
                repeats, min_seconds, device)
    tokens = batch * new
    return {"batch": batch, "prompt": prompt, "new_tokens": new,
            "cached_s": t["cached"], "uncached_s": t["uncached"],
            "cached_tokens_per_s": tokens / t["cached"], "uncached_tokens_per_s": tokens / t["uncached"],
            "cache_speedup": t["uncached"] / t["cached"]}


# ----------------------------------------------------------------------------------------------
# The whole suite
# ----------------------------------------------------------------------------------------------


def run_benchmarks(quick: bool = False, device: torch.device | str | None = None, size: str | None = None,
                   repeats: int | None = None) -> dict:
    """Run every benchmark and return the results as a JSON-ready dict (see :func:`to_markdown`).

    ``size`` is ``"quick"``, ``"full"`` or ``"tiny"`` (default: ``"quick"`` if ``quick`` else
    ``"full"``); ``device`` defaults to :func:`lib.default_device`.
    """
    size = size or ("quick" if quick else "full")
    if size not in SIZES:
        raise ValueError(f"size={size!r} is unknown; expected one of {list(SIZES)}")
    s = dict(SIZES[size])
    if repeats is not None:
        if not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats={repeats!r} must be a positive int")
        s["repeats"] = repeats
    device = torch.device(device) if device is not None else default_device()
    r, m = s["repeats"], s["min_seconds"]
    parts = {
        "matmul": lambda: bench_matmul(s["matmul"], r, m, device),
        "attention": lambda: bench_attention(s["attention"], r, m, device),
        "scaling": lambda: bench_scaling(**s["scaling"], repeats=r, min_seconds=m, device=device),
        "training": lambda: bench_training(s["lm"], s["layer"], results["matmul"]["peak_n"], r, m, device),
        "decoding": lambda: bench_decoding(**s["decoding"], repeats=r, min_seconds=m, device=device),
    }
    results = {"meta": _machine(device, size, r)}
    seconds = results["meta"]["seconds"] = {}
    for name, part in parts.items():
        started = time.perf_counter()
        results[name] = part()
        seconds[name] = round(time.perf_counter() - started, 2)
    seconds["total"] = round(sum(seconds.values()), 2)
    results["meta"]["load_average_end"] = _load_average()
    return results


def _load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _machine(device: torch.device, size: str, repeats: int) -> dict:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        name = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as info:
                name = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
        except (OSError, StopIteration):
            pass
    return {"size": size, "repeats": repeats, "device": str(device), "device_name": name,
            "threads": torch.get_num_threads(), "cpu_count": os.cpu_count(), "torch": torch.__version__,
            "python": platform.python_version(), "load_average_start": _load_average(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


# ----------------------------------------------------------------------------------------------
# Reporting: Markdown tables and a log-log plot
# ----------------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g}"


def _mib(n: float | None) -> str:
    return "n/a" if n is None else f"{n / 2**20:.3g}"


def _slope(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.2f}"


def markdown_tables(results: dict) -> dict[str, str]:
    """One Markdown table per part of ``results``: ``machine``, ``attention``, ``scaling``,
    ``training``, ``decoding``."""
    meta, mm = results["meta"], results["matmul"]
    tables = {}
    tables["machine"] = _table(["", "measured"], [
        ["device", f"{meta['device']} ({meta['device_name']}), {meta['threads']} threads"],
        ["torch", meta["torch"]],
        ["load average at start / end (1, 5, 15 min)",
         f"{meta['load_average_start']} / {meta.get('load_average_end')}"],
        ["matmul peak (float32)", f"{mm['peak_flops'] / 1e9:.1f} GFLOP/s at n = {mm['peak_n']}"],
        ["size, repeats per median", f"{meta['size']}, {meta['repeats']}"],
    ])
    tables["attention"] = _table(
        ["B, T, d, h", "mask", "pass", "explicit (ms)", "fused (ms)", "nn.MultiheadAttention (ms)",
         "fused / torch", "explicit / fused"],
        [[f"{r['B']}, {r['T']}, {r['d_model']}, {r['n_heads']}", r["mask"], r["mode"],
          _ms(r["explicit_s"]), _ms(r["fused_s"]), _ms(r["torch_s"]),
          f"{r['fused_over_torch']:.2f}", f"{r['explicit_over_fused']:.2f}"]
         for r in results["attention"]])
    sc = results["scaling"]
    rows = [[r["T"], _ms(r["explicit_s"]), _ms(r["fused_s"]), _mib(r["explicit_bytes"]),
             _mib(r["fused_bytes"])] for r in sc["rows"]]
    sl = sc["slopes"]
    rows.append(["**log-log slope**", _slope(sl["explicit_time"]), _slope(sl["fused_time"]),
                 _slope(sl["explicit_memory"]), _slope(sl["fused_memory"])])
    tables["scaling"] = _table(["T", "explicit time (ms)", "fused time (ms)", "explicit peak memory (MiB)",
                                "fused peak memory (MiB)"], rows)
    tables["training"] = _table(
        ["model", "parameters", "batch × T", "step (ms)", "tokens/s", "GFLOP/step", "GFLOP/s",
         "fraction of matmul peak"],
        [[r["model"], f"{r['parameters']:,}", f"{r['batch']} × {r['T']}", _ms(r["step_s"]),
          f"{r['tokens_per_s']:,.0f}",
          f"{r['flops_per_step'] / 1e9:.3g}", f"{r['flops_per_s'] / 1e9:.3g}", f"{r['fraction_of_peak']:.0%}"]
         for r in results["training"]])
    d = results["decoding"]
    tables["decoding"] = _table(
        ["batch", "prompt", "new tokens", "with cache (tokens/s)", "without cache (tokens/s)", "speed-up"],
        [[d["batch"], d["prompt"], d["new_tokens"], f"{d['cached_tokens_per_s']:,.0f}",
          f"{d['uncached_tokens_per_s']:,.0f}", f"{d['cache_speedup']:.2f}×"]])
    return tables


def overload_warning(results: dict) -> str | None:
    """A warning if the machine had more runnable programs than cores during the run, else ``None``.

    Then the timings of multi-threaded kernels are distorted: a kernel's threads wait for each
    other, and one of them is often waiting for a core.  ``--threads 1`` suffers less.
    """
    meta = results["meta"]
    loads = [load[0] for load in (meta["load_average_start"], meta.get("load_average_end")) if load]
    if meta["device"] != "cpu" or not loads or max(loads) <= (meta["cpu_count"] or 1):
        return None
    return (f"**Warning:** the load average ({max(loads):.1f}) exceeded the {meta['cpu_count']} cores: "
            "other programs competed for the CPU, and the timings of multi-threaded kernels are "
            "distorted (their threads wait for each other). Ratios suffer less than times; "
            "`--threads 1` suffers least.")


def to_markdown(results: dict) -> str:
    """All of ``results`` as one Markdown document (what ``python -m lib.bench`` prints)."""
    t, sc = markdown_tables(results), results["scaling"]
    return "\n\n".join([
        "## Machine", t["machine"], *([overload_warning(results)] if overload_warning(results) else []),
        "## Attention: lib's `MultiHeadAttention` vs `torch.nn.MultiheadAttention` (same weights, same mask)",
        "Medians of interleaved repeats; a ratio below 1 means the first is faster.", t["attention"],
        f"## Cost vs sequence length (forward, B={sc['B']}, H={sc['H']}, d_head={sc['d_head']})",
        "Slopes of straight lines fitted to log(cost) vs log(T): 2 means the cost grows as T².",
        t["scaling"],
        "## Training (Adam step, dropout 0)",
        f"The matmul peak ({results['training'][0]['peak_flops'] / 1e9:.1f} GFLOP/s here) is re-measured "
        "interleaved with the training steps.", t["training"],
        "## Greedy decoding (chapter-sized LM)", t["decoding"],
    ]) + "\n"


def plot_scaling(results: dict):
    """Log-log plots of time and peak memory vs ``T``, explicit vs fused, with the fitted slopes.

    Returns the matplotlib ``Figure`` (two panels).
    """
    import matplotlib.pyplot as plt

    sc = results["scaling"]
    T = np.array([row["T"] for row in sc["rows"]], float)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    panels = [("time", "_s", 1e3, "forward time (ms)"), ("memory", "_bytes", 2.0**-20, "peak memory (MiB)")]
    for ax, (what, suffix, unit, label) in zip(axes, panels):
        for method, marker in (("explicit", "o"), ("fused", "s")):
            y = [row[f"{method}{suffix}"] for row in sc["rows"]]
            if any(v is None or v <= 0 for v in y):                 # not measured here (e.g. MPS)
                ax.text(0.5, 0.5, "not measured on this device", transform=ax.transAxes, ha="center")
                continue
            y = np.array(y, float) * unit
            slope = sc["slopes"][f"{method}_{what}"]
            line, = ax.plot(T, y, marker=marker, linestyle="none", label=f"{method} (slope {slope:.2f})")
            intercept = np.mean(np.log(y) - slope * np.log(T))
            ax.plot(T, np.exp(intercept) * T**slope, color=line.get_color(), linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length T")
        ax.set_ylabel(label)
        ax.set_title(f"Attention {what} vs T (log-log)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m lib.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the small size that CI runs (well under a minute)")
    parser.add_argument("--size", choices=list(SIZES),
                        help="tiny | quick | full (default: full, or quick with --quick)")
    parser.add_argument("--device", help="cpu, cuda, cuda:1, mps, ... (default: lib.default_device())")
    parser.add_argument("--repeats", type=int, help="repeats per median (default: by size)")
    parser.add_argument("--threads", type=int,
                        help="torch.set_num_threads(N) first (default: torch's choice)")
    parser.add_argument("--json", type=Path,
                        help="where to write the results (default: bench-results/bench-SIZE.json)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    results = run_benchmarks(quick=args.quick, device=args.device, size=args.size, repeats=args.repeats)
    path = args.json or Path("bench-results") / f"bench-{results['meta']['size']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(to_markdown(results))
    print(f"Wrote {path} ({results['meta']['seconds']['total']:.0f} s).")
    return results


if __name__ == "__main__":
    main()
