"""Reporting: Markdown tables, an overload warning, and a log-log plot of the results."""

from __future__ import annotations

import numpy as np


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
    tables["machine"] = _table(
        ["", "measured"],
        [
            ["device", f"{meta['device']} ({meta['device_name']}), {meta['threads']} threads"],
            ["torch", meta["torch"]],
            [
                "load average at start / end (1, 5, 15 min)",
                f"{meta['load_average_start']} / {meta.get('load_average_end')}",
            ],
            ["matmul peak (float32)", f"{mm['peak_flops'] / 1e9:.1f} GFLOP/s at n = {mm['peak_n']}"],
            ["size, repeats per median", f"{meta['size']}, {meta['repeats']}"],
        ],
    )
    tables["attention"] = _table(
        [
            "B, T, d, h",
            "mask",
            "pass",
            "explicit (ms)",
            "fused (ms)",
            "torch (ms)",
            "fused / torch",
            "explicit / fused",
        ],
        [
            [
                f"{r['B']}, {r['T']}, {r['d_model']}, {r['n_heads']}",
                r["mask"],
                r["mode"],
                _ms(r["explicit_s"]),
                _ms(r["fused_s"]),
                _ms(r["torch_s"]),
                f"{r['fused_over_torch']:.2f}",
                f"{r['explicit_over_fused']:.2f}",
            ]
            for r in results["attention"]
        ],
    )
    sc = results["scaling"]
    rows = [
        [r["T"], _ms(r["explicit_s"]), _ms(r["fused_s"]), _mib(r["explicit_bytes"]), _mib(r["fused_bytes"])]
        for r in sc["rows"]
    ]
    sl = sc["slopes"]
    rows.append(
        [
            "**log-log slope**",
            _slope(sl["explicit_time"]),
            _slope(sl["fused_time"]),
            _slope(sl["explicit_memory"]),
            _slope(sl["fused_memory"]),
        ]
    )
    tables["scaling"] = _table(
        ["T", "explicit time (ms)", "fused time (ms)", "explicit peak memory (MiB)", "fused peak memory (MiB)"], rows
    )
    tables["training"] = _table(
        [
            "model",
            "parameters",
            "batch × T",
            "step (ms)",
            "tokens/s",
            "GFLOP/step",
            "GFLOP/s",
            "fraction of matmul peak",
        ],
        [
            [
                r["model"],
                f"{r['parameters']:,}",
                f"{r['batch']} × {r['T']}",
                _ms(r["step_s"]),
                f"{r['tokens_per_s']:,.0f}",
                f"{r['flops_per_step'] / 1e9:.3g}",
                f"{r['flops_per_s'] / 1e9:.3g}",
                f"{r['fraction_of_peak']:.0%}",
            ]
            for r in results["training"]
        ],
    )
    d = results["decoding"]
    tables["decoding"] = _table(
        ["batch", "prompt", "new tokens", "with cache (tokens/s)", "without cache (tokens/s)", "speed-up"],
        [
            [
                d["batch"],
                d["prompt"],
                d["new_tokens"],
                f"{d['cached_tokens_per_s']:,.0f}",
                f"{d['uncached_tokens_per_s']:,.0f}",
                f"{d['cache_speedup']:.2f}×",
            ]
        ],
    )
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
    return (
        f"**Warning:** the load average ({max(loads):.1f}) exceeded the {meta['cpu_count']} cores: "
        "other programs competed for the CPU, and the timings of multi-threaded kernels are "
        "distorted (their threads wait for each other). Ratios suffer less than times; "
        "`--threads 1` suffers least."
    )


def to_markdown(results: dict) -> str:
    """All of ``results`` as one Markdown document (what ``python -m lib.bench`` prints)."""
    t, sc = markdown_tables(results), results["scaling"]
    return (
        "\n\n".join(
            [
                "## Machine",
                t["machine"],
                *([overload_warning(results)] if overload_warning(results) else []),
                "## Attention: lib's `MultiHeadAttention` vs `torch.nn.MultiheadAttention` (same weights, same mask)",
                "Medians of interleaved repeats; a ratio below 1 means the first is faster.",
                t["attention"],
                f"## Cost vs sequence length (forward, B={sc['B']}, H={sc['H']}, d_head={sc['d_head']})",
                "Slopes of straight lines fitted to log(cost) vs log(T): 2 means the cost grows as T².",
                t["scaling"],
                "## Training (Adam step, dropout 0)",
                f"The matmul peak ({results['training'][0]['peak_flops'] / 1e9:.1f} GFLOP/s here) is re-measured "
                "interleaved with the training steps.",
                t["training"],
                "## Greedy decoding (chapter-sized LM)",
                t["decoding"],
            ]
        )
        + "\n"
    )


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
            if any(v is None or v <= 0 for v in y):  # not measured here (e.g. MPS)
                ax.text(0.5, 0.5, "not measured on this device", transform=ax.transAxes, ha="center")
                continue
            y = np.array(y, float) * unit
            slope = sc["slopes"][f"{method}_{what}"]
            (line,) = ax.plot(T, y, marker=marker, linestyle="none", label=f"{method} (slope {slope:.2f})")
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
