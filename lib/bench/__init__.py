"""Benchmarks: how fast ``lib`` runs on *this* machine, every figure next to its reference.

Run ``python -m lib.bench`` (``--size quick``, or ``--quick``, for the small CI size): it prints
Markdown tables and writes the results as JSON to ``bench-results/bench-SIZE.json`` (``--json PATH``
to choose).  Four parts:

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

The modules: :mod:`~lib.bench.memory` (peak memory, counted by
:func:`lib.efficient.peak_tensor_memory`), :mod:`~lib.bench.measure` (the measurements),
:mod:`~lib.bench.report` (tables and a plot) and :mod:`~lib.bench.suite` (sizes, the whole run,
the command line). The timing protocol (medians of interleaved repeats) is :mod:`lib.timing`,
shared with :mod:`lib.efficient`; ``compare``, ``loglog_slope`` and ``synchronize`` are re-exported
here. Nothing else in ``lib`` imports this package.
"""

from ..timing import compare, loglog_slope, synchronize  # the timing protocol, shared with lib.efficient
from .measure import (
    CHAPTER_LM,
    bench_attention,
    bench_decoding,
    bench_matmul,
    bench_scaling,
    bench_training,
    torch_twin,
    training_flops,
)
from .memory import attend, peak_memories, peak_memory, peak_tensor_memory
from .report import markdown_tables, overload_warning, plot_scaling, to_markdown
from .suite import SIZES, main, run_benchmarks

__all__ = [
    "CHAPTER_LM",
    "SIZES",
    "attend",
    "bench_attention",
    "bench_decoding",
    "bench_matmul",
    "bench_scaling",
    "bench_training",
    "compare",
    "loglog_slope",
    "main",
    "markdown_tables",
    "overload_warning",
    "peak_memories",
    "peak_memory",
    "peak_tensor_memory",
    "plot_scaling",
    "run_benchmarks",
    "synchronize",
    "to_markdown",
    "torch_twin",
    "training_flops",
]
