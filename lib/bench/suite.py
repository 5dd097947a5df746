"""The whole suite: the sizes of a run, the machine it ran on, and the command line."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import torch

from ..model.checks import check_choice, check_int
from ..training.device import check_seed, default_device
from .measure import bench_attention, bench_decoding, bench_matmul, bench_scaling, bench_training
from .report import to_markdown

# The sizes of a run.  ``quick`` is the CI size (well under a minute on a 2-core laptop CPU);
# ``tiny`` only checks that everything runs (the unit tests); ``full`` is the real measurement.
# A table, laid out by hand: one line per part of the run.
# fmt: off
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
# fmt: on


def run_benchmarks(
    size: str = "full", device: torch.device | str | None = None, repeats: int | None = None, seed: int = 0
) -> dict:
    """Run every benchmark and return the results as a JSON-ready dict (see :func:`to_markdown`).

    ``size`` is ``"full"``, ``"quick"`` or ``"tiny"`` (see :data:`SIZES`); ``device`` defaults to
    :func:`lib.default_device`; ``repeats`` overrides the size's repeats per median; ``seed`` draws
    the random weights, inputs and prompts (``torch.manual_seed(seed)`` before the run and before each
    model), so that a run is reproducible and two runs with different seeds time different models.
    """
    check_choice("size", size, list(SIZES))
    check_seed("seed", seed)
    s = dict(SIZES[size])
    if repeats is not None:
        s["repeats"] = check_int("repeats", repeats, minimum=1)
    device = torch.device(device) if device is not None else default_device()
    r, m = s["repeats"], s["min_seconds"]
    parts = {
        "matmul": lambda: bench_matmul(s["matmul"], r, m, device),
        "attention": lambda: bench_attention(s["attention"], r, m, device, seed),
        "scaling": lambda: bench_scaling(**s["scaling"], repeats=r, min_seconds=m, device=device),
        "training": lambda: bench_training(s["lm"], s["layer"], results["matmul"]["peak_n"], r, m, device, seed),
        "decoding": lambda: bench_decoding(**s["decoding"], repeats=r, min_seconds=m, device=device, seed=seed),
    }
    torch.manual_seed(seed)
    results = {"meta": _machine(device, size, r)}
    results["meta"]["seed"] = seed
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
    return {
        "size": size,
        "repeats": repeats,
        "device": str(device),
        "device_name": name,
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "load_average_start": _load_average(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def main(argv: list[str] | None = None) -> dict:
    """``python -m lib.bench [--size tiny|quick|full] [--device D] [--repeats N] [--seed S] [--threads N] [--json PATH]``:
    print the Markdown tables and write the results to ``bench-results/bench-SIZE.json`` (or ``PATH``)."""
    parser = argparse.ArgumentParser(prog="python -m lib.bench", description="How fast lib runs on this machine.")
    parser.add_argument(
        "--size", choices=list(SIZES), default="full", help="tiny | quick | full (default: full, a few minutes)"
    )
    parser.add_argument(
        "--quick",
        dest="size",
        action="store_const",
        const="quick",
        help="short for --size quick: the small size that CI runs (well under a minute)",
    )
    parser.add_argument("--device", help="cpu, cuda, cuda:1, mps, ... (default: lib.default_device())")
    parser.add_argument("--repeats", type=int, help="repeats per median (default: by size)")
    parser.add_argument("--seed", type=int, default=0, help="draws the random weights and inputs (default: 0)")
    parser.add_argument("--threads", type=int, help="torch.set_num_threads(N) first (default: torch's choice)")
    parser.add_argument("--json", type=Path, help="where to write the results (default: bench-results/bench-SIZE.json)")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    results = run_benchmarks(args.size, device=args.device, repeats=args.repeats, seed=args.seed)
    path = args.json or Path("bench-results") / f"bench-{results['meta']['size']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(to_markdown(results))
    print(f"Wrote {path} ({results['meta']['seconds']['total']:.0f} s).")
    return results
