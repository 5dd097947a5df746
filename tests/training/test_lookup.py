"""lib.training.lookup's measurements run the model in eval mode and give it back as they found it."""

from __future__ import annotations

import pytest
import torch

import lib
from lib.training.lookup import (
    LinkedListModel,
    linked_list_batch,
    linked_list_loss,
    neighbour_accuracy,
    neighbour_attention,
)


class Recording(LinkedListModel):
    """Remembers the mode of every forward pass; raises if asked to."""

    def __init__(self, fail: bool = False):
        torch.manual_seed(0)
        super().__init__(d_model=16, n_heads=2)
        self.modes, self.fail = [], fail

    def readouts(self, fields):
        self.modes.append(self.training)
        self.grad_enabled = torch.is_grad_enabled()
        if self.fail:
            raise RuntimeError("boom")
        return super().readouts(fields)


@pytest.mark.parametrize("measure", [neighbour_accuracy, neighbour_attention])
@pytest.mark.parametrize("training", [True, False])
def test_measures_in_eval_mode_and_restores_the_mode(measure, training) -> None:
    model = Recording().train(training)
    measure(model, linked_list_batch(2, seed=0))
    assert model.modes == [False]
    assert model.training is training


@pytest.mark.parametrize("measure", [neighbour_accuracy, neighbour_attention])
def test_measures_without_building_an_autograd_graph(measure) -> None:
    model = Recording()
    measure(model, linked_list_batch(2, seed=0))
    assert model.grad_enabled is False


@pytest.mark.parametrize("measure", [neighbour_accuracy, neighbour_attention])
def test_restores_the_mode_when_the_forward_pass_fails(measure) -> None:
    model = Recording(fail=True).train()
    with pytest.raises(RuntimeError, match="boom"):
        measure(model, linked_list_batch(2, seed=0))
    assert model.training


def test_the_loss_from_the_read_outs_is_lm_loss() -> None:
    torch.manual_seed(0)
    model = LinkedListModel(d_model=16, n_heads=2, n_colours=5)
    batch = linked_list_batch(8, n_items=6, n_colours=5, seed=3)
    torch.testing.assert_close(linked_list_loss(model, batch), lib.lm_loss(model, batch))
    logits = model(batch.input)
    pred, n = logits.argmax(dim=-1), 5
    expected = ((pred // n == batch.target // n) & (pred % n == batch.target % n)).float().mean().item()
    assert neighbour_accuracy(model, batch)["both"] == pytest.approx(expected)
