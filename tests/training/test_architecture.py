"""lib.training.architecture: the models of an ensemble are one architecture, with weights of their own."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lib.training.architecture import check_models
from lib.training.batching import LMBatch
from lib.training.ensemble import train_ensemble
from lib.training.losses import lm_loss


@dataclasses.dataclass
class Config:
    width: int
    activation: object


class Configured(nn.Module):
    """A model whose config holds a function: each model builds its own functools.partial."""

    def __init__(self, approximate: str = "tanh"):
        super().__init__()
        self.config = Config(8, functools.partial(F.gelu, approximate=approximate))
        self.embed, self.out = nn.Embedding(11, 8), nn.Linear(8, 11)

    def forward(self, tokens):
        return self.out(self.config.activation(self.embed(tokens)))


def batch(step: int) -> LMBatch:
    tokens = torch.randint(1, 11, (4, 6), generator=torch.Generator().manual_seed(step))
    return LMBatch(tokens[:, :-1], tokens[:, 1:], pad_id=0)


def test_the_same_module_twice_is_refused() -> None:
    """Issue 59, 8: train_ensemble([m] * 3) trained one module and returned three histories."""
    torch.manual_seed(0)
    model, other = Configured(), Configured()
    with pytest.raises(ValueError, match=r"models\[2\] is models\[0\]; expected M models with weights of their own"):
        check_models([model, other, model])
    other.embed = model.embed  # a layer shared by two models: one weight trained as two
    with pytest.raises(ValueError, match=r"models\[1\] shares a parameter or buffer with models\[0\]"):
        train_ensemble([model, other], batch, steps=1, loss_fn=lm_loss, progress=False)


def test_configs_are_compared_field_by_field() -> None:
    """Issue 59, 8: a config holding a partial made per model compared unequal as a whole (a partial is
    equal only to itself) and equal field by field, and the search for the field ended in a bare
    StopIteration. Now such models are one architecture, and a partial with other arguments is named."""
    torch.manual_seed(0)
    models = [Configured(), Configured()]
    assert check_models(models) == models
    histories = train_ensemble(models, batch, steps=2, loss_fn=lm_loss, progress=False)
    assert [len(h.loss) for h in histories] == [2, 2]
    with pytest.raises(ValueError, match=r"models\[1\] differs from models\[0\] in more than its weights: "
                                         r"config.activation is functools.partial\(.*'none'\)"):  # fmt: skip
        check_models([Configured(), Configured(approximate="none")])
