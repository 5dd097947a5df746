"""lib/lookup_model.py: chapter 4's LinkedListModel, and the import paths the chapter and the tests use."""

from __future__ import annotations

import pytest
import torch

import lib
import lib.training.lookup
from lib.lookup_model import LinkedListModel
from lib.training.lookup import linked_list_batch


def test_one_class_and_three_import_paths() -> None:
    assert lib.LinkedListModel is LinkedListModel is lib.training.lookup.LinkedListModel


def test_logits_score_every_pair_of_colours() -> None:
    torch.manual_seed(0)
    model = LinkedListModel(d_model=16, n_heads=2, n_colours=5)
    batch = linked_list_batch(3, n_items=6, n_colours=5, seed=0)
    assert model(batch.input).shape == (3, 6, 25)


def test_bad_fields_and_sizes_are_refused() -> None:
    model = LinkedListModel(d_model=16, n_heads=2)
    with pytest.raises(ValueError, match=r"fields must be a long tensor \[B, T, 3\]"):
        model(torch.zeros(2, 5, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"colour ids must lie in \[0, 16\)"):
        model(torch.full((1, 4, 3), 3).index_fill_(-1, torch.tensor([2]), 16))
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=3"):
        LinkedListModel(d_model=10, n_heads=3)
