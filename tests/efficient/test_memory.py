"""lib.efficient.memory: the one peak-memory meter counts tensors exactly (lib.bench re-exports it)."""

import pytest
import torch

import lib.bench
from lib.efficient import memory_efficient_attention, peak_tensor_memory, sliding_window_attention


def test_peak_tensor_memory_counts_a_matrix():
    x = torch.randn(100, 10)
    assert peak_tensor_memory(lambda: x @ x.T) == 100 * 100 * 4
    assert peak_tensor_memory(lambda: x.T) == 0  # a view: no new memory
    assert peak_tensor_memory(lambda: (x @ x.T).sum()) == 100 * 100 * 4 + 4  # the matrix is alive during sum
    with pytest.raises(TypeError, match="fn"):
        peak_tensor_memory(3)


def test_peak_tensor_memory_is_the_peak_not_the_total():
    x = torch.randn(100, 100)

    def one_at_a_time():
        for _ in range(3):
            y = x * 2  # 40 kB, freed before the next one
            del y

    assert peak_tensor_memory(one_at_a_time) == 100 * 100 * 4


def test_bench_uses_the_same_meter():
    assert lib.bench.peak_tensor_memory is peak_tensor_memory


def test_memory_grows_linearly_for_blockwise_and_quadratically_for_full(qkv, full):
    def peak(fn, T):
        q, k, v = qkv(B=1, H=1, T_q=T, T_k=T, d=16, dtype=torch.float32, requires_grad=False)
        return peak_tensor_memory(lambda: fn(q, k, v))

    blockwise = lambda q, k, v: memory_efficient_attention(q, k, v, block_size=64)
    window = lambda q, k, v: sliding_window_attention(q, k, v, window=16, block_size=64)
    explicit = lambda q, k, v: full(q, k, v)
    assert peak(explicit, 1024) / peak(explicit, 512) > 3.5
    assert peak(blockwise, 1024) / peak(blockwise, 512) < 2.2
    assert peak(window, 1024) / peak(window, 512) < 2.2
    assert peak(blockwise, 1024) < peak(explicit, 1024) / 5
