"""lib.training.device: which device is chosen, and seeds that reproduce every generator."""

import random

import numpy as np
import pytest
import torch

from lib.efficient import bigbird_mask
from lib.training.data import TaskStream, make_task
from lib.training.device import check_seed, default_device, derived_seed, seed_block, seed_everything
from lib.training.world import make_world


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


def test_one_seed_policy_for_every_generator():
    """Issue 59: one rule, in check_seed, for every function that takes a seed: a non-negative int that
    its generator keeps whole. torch's keep 32 bits, Python's random.Random every bit but the sign
    (random.Random(-7) draws what random.Random(7) draws), BigBird's hash 64 bits; a seed lib derives
    itself is reduced into [0, 2**32) (derived_seed), where torch would have kept the same bits."""
    assert random.Random(-7).random() == random.Random(7).random()  # why a negative seed is refused
    assert check_seed("seed", 2**40 + 3, bits=None) == 2**40 + 3  # Python's random keeps every bit
    with pytest.raises(ValueError, match=r"seed=-7 must be a non-negative int: .* it would draw what 7 draws"):
        check_seed("seed", -7, bits=None)
    with pytest.raises(ValueError, match=r"seed=18446744073709551619 must be in \[0, 2\*\*64\).* what 3 draws"):
        check_seed("seed", 2**64 + 3, bits=64)
    assert derived_seed(2**40 + 3) == 3 and derived_seed(5) == 5
    functions = {
        "make_task": lambda s: make_task("copy", 2, seed=s),
        "TaskStream": lambda s: TaskStream("copy", 2, seed=s),
        "Seq2SeqDataset.batches": lambda s: next(make_task("copy", 2).batches(2, seed=s)),
        "make_world": lambda s: make_world(n_people=4, n_places=2, n_jobs=2, seed=s),
        "bigbird_mask": lambda s: bigbird_mask(8, 1, 1, 1, seed=s),
        "seed_block": lambda s: seed_block(s, 5),
    }
    for name, draw in functions.items():
        draw(3)
        with pytest.raises(ValueError, match=r"seed=-3 must be"):
            draw(-3)
            pytest.fail(f"{name} took a negative seed")
    make_task("copy", 2, seed=2**40 + 3)  # the chapters' test sets: far from every training seed
    with pytest.raises(ValueError, match=r"seed=858993459 with k=5 gives the seeds .* beyond 2\*\*32"):
        seed_block(2**32 // 5, 5)
