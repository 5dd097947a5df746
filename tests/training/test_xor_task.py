"""`lib.centered_xor_batch`: the per-token task of chapter 2 (attention alone vs attention + feed-forward)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import lib
from lib import LMBatch, centered_xor_batch


def test_shapes_dtypes_and_no_padding() -> None:
    batch = centered_xor_batch(8, 5, seed=1)
    assert isinstance(batch, LMBatch)
    assert batch.input.shape == (8, 5, 2) and batch.input.dtype == torch.float32
    assert batch.target.shape == (8, 5) and batch.target.dtype == torch.long
    assert set(batch.target.unique().tolist()) <= {0, 1}
    assert batch.pad_id == -100 and not (batch.target == batch.pad_id).any()
    assert len(batch) == 8


def test_label_is_the_xor_of_the_signs_around_the_sequence_mean() -> None:
    batch = centered_xor_batch(64, 7, seed=2)
    x = batch.input
    mean = x.mean(dim=1, keepdim=True)
    for b in range(3):
        for j in range(7):
            right_1 = bool(x[b, j, 0] > mean[b, 0, 0])
            right_2 = bool(x[b, j, 1] > mean[b, 0, 1])
            assert batch.target[b, j].item() == int(right_1 == right_2)  # same side in both features


def test_classes_are_balanced_and_the_centre_moves() -> None:
    batch = centered_xor_batch(2000, 16, seed=3, offset_std=2.0)
    assert abs(batch.target.float().mean().item() - 0.5) < 0.02
    centres = batch.input.mean(dim=1)  # [B, 2]
    assert 1.6 < centres.std(dim=0).min().item() < 2.4  # ≈ sqrt(2² + 1/16)
    still = centered_xor_batch(200, 16, seed=3, offset_std=0.0).input.mean(dim=1)
    assert still.std(dim=0).max().item() < 0.5  # ≈ 1/4: no offset


def test_same_seed_same_batch_other_seed_other_batch() -> None:
    a, b = centered_xor_batch(4, 6, seed=5), centered_xor_batch(4, 6, seed=5)
    torch.testing.assert_close(a.input, b.input)
    assert torch.equal(a.target, b.target)
    assert not torch.equal(a.input, centered_xor_batch(4, 6, seed=6).input)


def test_works_with_lm_loss_and_evaluate() -> None:
    torch.manual_seed(0)
    model = nn.Linear(2, 2)  # x [B, T, 2] -> logits [B, T, 2]
    batch = centered_xor_batch(16, 4, seed=0)
    loss = lib.lm_loss(model, batch)
    assert loss.ndim == 0 and torch.isfinite(loss)
    metrics = lib.evaluate(model, batch)
    assert 0.0 <= metrics["token_accuracy"] <= 1.0
    # every token counts (nothing is padding): accuracy is the plain mean over B·T tokens
    right = (model(batch.input).argmax(-1) == batch.target).float().mean().item()
    assert metrics["token_accuracy"] == pytest.approx(right)


def test_device_argument() -> None:
    batch = centered_xor_batch(2, 3, seed=0, device="cpu")
    assert batch.input.device.type == "cpu" and batch.target.device.type == "cpu"


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(batch_size=0), ValueError, "batch_size=0"),
        (dict(batch_size=2.5), TypeError, "batch_size must be an int"),
        (dict(seq_len=1), ValueError, "seq_len=1"),
        (dict(offset_std=-1.0), ValueError, "offset_std=-1.0"),
        (dict(offset_std="2"), TypeError, "offset_std must be a number, got '2'"),
        (dict(seed=1.0), TypeError, "seed must be an int"),
    ],
)
def test_bad_arguments_name_the_problem(kwargs, error, message) -> None:
    args = dict(batch_size=4, seq_len=5)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        centered_xor_batch(args.pop("batch_size"), args.pop("seq_len"), **args)
