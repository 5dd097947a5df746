"""lib.training.device: which device is chosen, and seeds that reproduce every generator."""

import random

import numpy as np
import pytest
import torch

from lib.training.device import default_device, seed_block, seed_everything


@pytest.mark.parametrize(
    "cuda, mps, expected",
    [(True, True, "cuda"), (True, False, "cuda"), (False, True, "mps"), (False, False, "cpu")],
)
def test_default_device_prefers_cuda_then_mps_then_cpu(monkeypatch, cuda, mps, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    assert default_device() == torch.device(expected)


def test_default_device_without_an_mps_backend(monkeypatch):
    """Builds of torch without ``torch.backends.mps`` fall through to the CPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delattr(torch.backends, "mps")
    assert default_device() == torch.device("cpu")


def test_seed_everything_reproduces():
    def draw():
        return random.random(), np.random.rand(), torch.rand(3)

    seed_everything(7)
    a = draw()
    seed_everything(7)
    b = draw()
    assert a[0] == b[0] and a[1] == b[1] and torch.equal(a[2], b[2])
    seed_everything(8)
    assert draw()[0] != a[0]
    with pytest.raises(TypeError, match="seed"):
        seed_everything("7")
    with pytest.raises(TypeError, match="seed"):
        seed_everything(True)


def test_seed_blocks_of_different_runs_never_overlap():
    assert seed_block(0, 5) == [0, 1, 2, 3, 4] and seed_block(3, 5) == [15, 16, 17, 18, 19]
    blocks = [set(seed_block(run, 5)) for run in range(100)]
    assert all(not a & b for i, a in enumerate(blocks) for b in blocks[i + 1 :])
    assert seed_block(7, 1) == [7]
    with pytest.raises(ValueError, match="k=0"):
        seed_block(1, 0)
    with pytest.raises(TypeError, match="seed"):
        seed_block(1.0, 5)
