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
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=3"):
        LinkedListModel(d_model=10, n_heads=3)


def test_trains_in_an_ensemble_on_one_source_per_model_as_alone() -> None:
    """The forward reads no id on the host, so lib.train_ensemble batches each model's own batches."""
    import copy

    models = []
    for seed in range(2):
        torch.manual_seed(seed)
        models.append(LinkedListModel(d_model=16, n_heads=2, n_colours=5))
    alone = [copy.deepcopy(m) for m in models]
    sources = [lambda step, k=k: linked_list_batch(4, n_items=6, n_colours=5, seed=100 * k + step) for k in range(2)]
    options = dict(steps=3, loss_fn=lib.lm_loss, lr=1e-2, progress=False)
    histories = lib.train_ensemble(models, sources, **options)
    for model, twin, source, history in zip(models, alone, sources, histories):
        reference = lib.train(twin, source, **options)
        torch.testing.assert_close(torch.tensor(history.loss), torch.tensor(reference.loss), rtol=1e-5, atol=1e-6)
        for (name, p), q in zip(model.named_parameters(), twin.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-5, msg=name)
