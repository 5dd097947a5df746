"""lib.training.device: which device is chosen, and seeds that reproduce every generator."""

import random

import numpy as np
import pytest
import torch

from lib.training.device import default_device, seed_everything


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
