"""lib.training.lookup's measurements run the model in eval mode and give it back as they found it."""

from __future__ import annotations

import pytest
import torch

from lib.training.lookup import LinkedListModel, linked_list_batch, neighbour_accuracy, neighbour_attention


class Recording(LinkedListModel):
    """Remembers the mode of every forward pass; raises if asked to."""

    def __init__(self, fail: bool = False):
        torch.manual_seed(0)
        super().__init__(d_model=16, n_heads=2)
        self.modes, self.fail = [], fail

    def forward(self, fields):
        self.modes.append(self.training)
        if self.fail:
            raise RuntimeError("boom")
        return super().forward(fields)


@pytest.mark.parametrize("measure", [neighbour_accuracy, neighbour_attention])
@pytest.mark.parametrize("training", [True, False])
def test_measures_in_eval_mode_and_restores_the_mode(measure, training) -> None:
    model = Recording().train(training)
    measure(model, linked_list_batch(2, seed=0))
    assert model.modes == [False]
    assert model.training is training


@pytest.mark.parametrize("measure", [neighbour_accuracy, neighbour_attention])
def test_restores_the_mode_when_the_forward_pass_fails(measure) -> None:
    model = Recording(fail=True).train()
    with pytest.raises(RuntimeError, match="boom"):
        measure(model, linked_list_batch(2, seed=0))
    assert model.training
