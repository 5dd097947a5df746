"""lib.bench: the suite runs end to end (at its tiny size), writes sane JSON, and its helpers are right.

The book's Performance appendix runs the `--quick` size under nbval; this test only checks the plumbing.
"""

import contextlib
import io
import json
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import lib
from lib import EncoderLayer, bench, record_attention


def test_bench_re_exports_the_timing_protocol():
    """Chapters 4 and 8 and the Performance appendix import these from lib.bench."""
    import lib.timing

    assert (bench.compare, bench.loglog_slope, bench.synchronize) == (
        lib.timing.compare,
        lib.timing.loglog_slope,
        lib.timing.synchronize,
    )


def test_training_flops_counts_what_the_flop_counter_counts():
    """With the explicit attention (plain matmuls) PyTorch's FlopCounterMode sees every product."""
    torch.manual_seed(0)
    layer = EncoderLayer(32, 4, 64, dropout=0.0)
    x = torch.randn(2, 10, 32, requires_grad=True)
    with FlopCounterMode(display=False) as counter, record_attention(layer):
        layer(x).sum().backward()
    assert bench.training_flops(layer, tokens=2 * 10, T=10, causal=False) == counter.get_total_flops()


def test_peak_memory_holds_the_score_matrix_only_when_explicit():
    """The scores and weights of explicit attention are B·H·T² floats each; the fused kernel hands
    back only its output B·H·T·d (and a log-sum-exp per query), so it never holds a T × T matrix."""
    B, H, T, d_head = 1, 4, 512, 16
    explicit, fused = bench.peak_memories([("explicit", T), ("fused", T)], B, H, d_head)
    scores, output = B * H * T * T * 4, B * H * T * d_head * 4
    assert explicit >= 2 * scores, (explicit, scores)  # scores and softmax weights, both alive at once
    assert output <= fused < output + B * H * T * 8, (fused, output)
    assert bench.peak_memory("explicit", B, H, T, d_head) == explicit  # counted, not sampled: no noise
    with pytest.raises(ValueError, match="method"):
        bench.peak_memory("flash", B, H, T, d_head)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """``python -m lib.bench --size tiny --threads 1 --json PATH``, in this process: (printed text,
    results read back).  One thread: on a busy machine, tiny multi-threaded kernels crawl."""
    path = tmp_path_factory.mktemp("bench") / "bench.json"
    printed = io.StringIO()
    threads = torch.get_num_threads()
    try:
        with contextlib.redirect_stdout(printed):
            bench.main(["--size", "tiny", "--threads", "1", "--seed", "7", "--json", str(path)])
    finally:
        torch.set_num_threads(threads)
    return printed.getvalue(), json.loads(path.read_text())


def test_the_tiny_suite_prints_markdown_and_writes_sane_json(tiny_run):
    printed, results = tiny_run
    for section in ("## Machine", "## Attention", "## Cost vs sequence length", "## Training", "## Greedy decoding"):
        assert section in printed
    assert printed.count("| --- |") >= 5
    assert set(results) >= {"meta", "matmul", "attention", "scaling", "training", "decoding"}
    assert results["meta"]["size"] == "tiny" and results["meta"]["threads"] == 1 and results["meta"]["seed"] == 7
    assert results["matmul"]["peak_flops"] > 0

    assert {(r["mask"], r["mode"]) for r in results["attention"]} == {
        (mask, mode) for mask in ("none", "causal") for mode in ("forward", "forward+backward")
    }
    for row in results["attention"]:
        assert min(row["explicit_s"], row["fused_s"], row["torch_s"]) > 0
        assert row["fused_over_torch"] == pytest.approx(row["fused_s"] / row["torch_s"])

    scaling = results["scaling"]
    assert [r["T"] for r in scaling["rows"]] == bench.SIZES["tiny"]["scaling"]["T"]
    assert all(r["explicit_s"] > 0 and r["fused_s"] > 0 for r in scaling["rows"])
    for name in ("explicit_time", "fused_time"):
        assert math.isfinite(scaling["slopes"][name])
    for name in ("explicit_memory", "fused_memory"):
        assert scaling["slopes"][name] is None or math.isfinite(scaling["slopes"][name])

    for row in results["training"]:
        assert row["tokens_per_s"] > 0 and row["fraction_of_peak"] > 0
    decoding = results["decoding"]
    assert decoding["cached_tokens_per_s"] > 0 and decoding["uncached_tokens_per_s"] > 0
    assert decoding["cache_speedup"] == pytest.approx(decoding["uncached_s"] / decoding["cached_s"])


def test_the_seed_draws_each_models_weights_and_inputs(monkeypatch):
    """The Performance appendix is swept like a chapter: its run SEED times models drawn from its own
    seed, so each benchmark that builds a model seeds torch with the seed it is given, not with 0."""
    seen = []
    manual_seed = torch.manual_seed
    monkeypatch.setattr(torch, "manual_seed", lambda seed: (seen.append(seed), manual_seed(seed))[1])
    cpu = torch.device("cpu")
    bench.bench_decoding(1, 2, 2, repeats=1, min_seconds=0.0, device=cpu, seed=11)
    bench.bench_attention([(1, 4, 8, 2)], repeats=1, min_seconds=0.0, device=cpu, seed=12)
    assert seen == [11, 12]
    for bad in (-1, 2**32, 1.5):
        with pytest.raises((ValueError, TypeError), match="seed"):
            bench.run_benchmarks("tiny", device=cpu, seed=bad)


def test_the_plot_has_a_time_and_a_memory_panel(tiny_run):
    import matplotlib

    matplotlib.use("Agg")
    fig = bench.plot_scaling(tiny_run[1])
    assert [ax.get_ylabel() for ax in fig.axes] == ["forward time (ms)", "peak memory (MiB)"]


@pytest.mark.parametrize("bias", [True, False])
def test_torch_twin_computes_what_ours_computes(bias):
    """Same weights, same (flipped) mask: nn.MultiheadAttention gives our output and our weights."""
    torch.manual_seed(0)
    ours = lib.MultiHeadAttention(32, 4, bias=bias).eval()
    twin = bench.torch_twin(ours).eval()
    assert isinstance(twin, torch.nn.MultiheadAttention) and twin is not ours
    x = torch.randn(2, 6, 32)
    mask = lib.causal_mask(6)
    out, weights = ours(x, x, x, mask)
    ref, ref_weights = twin(x, x, x, attn_mask=~mask, average_attn_weights=False)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=0)
    torch.testing.assert_close(weights, ref_weights, atol=1e-6, rtol=0)
    with torch.no_grad():  # a copy, not shared storage
        twin.out_proj.weight.zero_()
    assert ours.out_proj.weight.abs().sum() > 0
