"""lib.probe: the few-label linear probe of chapter 9 (data, split, random initialisation, probe)."""

from __future__ import annotations

import pytest
import torch

from lib.pretrained import BertConfig
from lib.probe import BERT_INIT_STD, TOPICS, few_shot_split, probe_accuracy, random_minilm, topic_sentences


def test_topic_sentences_are_labelled_and_distinct():
    texts, labels = topic_sentences()
    assert len(texts) == len(labels) == sum(len(s) for s in TOPICS.values())
    assert len(set(texts)) == len(texts)
    assert labels.tolist() == sorted(labels.tolist()) and set(labels.tolist()) == set(range(len(TOPICS)))


def test_few_shot_split_draws_per_topic_and_is_reproducible():
    _, labels = topic_sentences()
    train, test = few_shot_split(labels, per_topic=2, seed=3)
    assert torch.bincount(labels[train]).tolist() == [2] * len(TOPICS)
    assert sorted(train.tolist() + test.tolist()) == list(range(len(labels)))
    again, _ = few_shot_split(labels, per_topic=2, seed=3)
    assert torch.equal(train, again)
    other, _ = few_shot_split(labels, per_topic=2, seed=4)
    assert not torch.equal(train, other)
    with pytest.raises(ValueError, match="per_topic"):
        few_shot_split(labels, per_topic=0, seed=0)


def test_random_minilm_has_berts_initialisation():
    config = BertConfig(
        vocab_size=50,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=20,
        type_vocab_size=2,
    )
    a, b = random_minilm(config, seed=0), random_minilm(config, seed=0)
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q), name
    weight = a.layers[0].ff.linear1.weight
    assert abs(weight.std().item() - BERT_INIT_STD) < 0.005
    assert not a.training


def test_probe_separates_separable_features():
    generator = torch.Generator().manual_seed(0)
    centres = 3 * torch.randn(3, 5, generator=generator)
    y = torch.arange(3).repeat_interleave(10)
    x = centres[y] + 0.1 * torch.randn(30, 5, generator=generator)
    assert probe_accuracy(x[::5], y[::5], x, y) == 1.0
