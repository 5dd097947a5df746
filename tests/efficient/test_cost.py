"""lib.efficient.cost: CPU seconds with the timing protocol of lib.timing, on one thread."""

import pytest
import torch

from lib.efficient import cpu_seconds


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_cpu_seconds_ranks_work(one_thread):
    a, b = torch.randn(64, 64), torch.randn(256, 256)
    t = cpu_seconds({"small": lambda: a @ a, "large": lambda: b @ b}, repeats=3, min_seconds=0.002)
    assert set(t) == {"small", "large"}
    assert t["large"] > 4 * t["small"] > 0  # 64x the multiply-adds


def test_cpu_seconds_needs_one_thread(one_thread):
    torch.set_num_threads(2)
    with pytest.raises(ValueError, match="set_num_threads"):
        cpu_seconds({"x": lambda: None})
