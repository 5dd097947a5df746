"""lib.reviews: the shipped movie-review snippets, their splits, the bag-of-words baseline."""

from __future__ import annotations

import pytest
import torch

from lib.probe import probe_accuracy
from lib.reviews import REVIEWS_FILE, bag_of_words, labelled_subset, load_reviews, split_reviews, words


def test_the_data_ships_with_its_licence() -> None:
    assert REVIEWS_FILE.is_file() and REVIEWS_FILE.stat().st_size < 200_000
    licence = (REVIEWS_FILE.parent / "LICENSE-movie-review-snippets.txt").read_text(encoding="utf-8")
    assert "MIT" in licence and "Hutto" in licence and "Pang" in licence


def test_labels_follow_the_raters_mean() -> None:
    everything, clear = load_reviews(0.0), load_reviews()
    assert len(everything) == 3303 and len(clear) == 2890  # 5 of the 3,308 are rated exactly 0
    assert (clear.scores.abs() >= 1).all() and torch.equal(clear.labels, (clear.scores > 0).long())
    assert 0.4 < clear.labels.float().mean() < 0.6  # about as many positive as negative
    assert all(isinstance(t, str) and t for t in clear.texts)
    assert "Ã" not in "".join(clear.texts)  # read as UTF-8


def test_splits_are_deterministic_and_disjoint() -> None:
    labels = load_reviews().labels
    pool, test = split_reviews(labels, 400, seed=5)
    again, _ = split_reviews(labels, 400, seed=5)
    other, _ = split_reviews(labels, 400, seed=6)
    assert torch.equal(pool, again) and not torch.equal(pool, other)
    assert len(test) == 400 and len(pool) + len(test) == len(labels)
    assert not set(pool.tolist()) & set(test.tolist())


def test_labelled_subsets_are_balanced_and_nested() -> None:
    labels = load_reviews().labels
    pool, _ = split_reviews(labels, 400, seed=0)
    small, large = labelled_subset(labels, pool, 16, seed=3), labelled_subset(labels, pool, 64, seed=3)
    assert len(small) == 16 and int(labels[small].sum()) == 8
    assert set(small.tolist()) <= set(large.tolist()) <= set(pool.tolist())
    assert set(small.tolist()) != set(labelled_subset(labels, pool, 16, seed=4).tolist())


def test_bag_of_words_counts_only_the_training_words() -> None:
    train_x, test_x, vocabulary = bag_of_words(["Good, good film!", "bad film"], ["a good idea", "unseen"])
    assert vocabulary == ["bad", "film", "good"]
    assert torch.allclose(train_x[0], torch.log1p(torch.tensor([0.0, 1.0, 2.0])))
    assert test_x[1].sum() == 0 and words("Isn't it 2 GOOD") == ["isn't", "it", "2", "good"]
    x, y = bag_of_words(["great fun", "great acting", "awful mess", "awful plot"], ["great", "awful"])[:2]
    assert probe_accuracy(x, torch.tensor([1, 1, 0, 0]), y, torch.tensor([1, 0])) == 1.0


def test_bad_inputs_get_clear_errors() -> None:
    labels = torch.tensor([0, 1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="min_strength"):
        load_reviews(5.0)
    with pytest.raises(TypeError, match="min_strength"):
        load_reviews("1")
    with pytest.raises(ValueError, match="n_test"):
        split_reviews(labels, 6, seed=0)
    with pytest.raises(ValueError, match="labels"):
        split_reviews(labels.float(), 2, seed=0)
    with pytest.raises(ValueError, match="even"):
        labelled_subset(labels, torch.arange(6), 3, seed=0)
    with pytest.raises(ValueError, match="fewer than"):
        labelled_subset(labels, torch.arange(6), 8, seed=0)
    with pytest.raises(ValueError, match="seed"):
        split_reviews(labels, 2, seed=2**32)
    with pytest.raises(TypeError, match="train_texts"):
        bag_of_words("one text", ["b"])
    with pytest.raises(ValueError, match="min_count"):
        bag_of_words(["a"], ["b"], min_count=0)
