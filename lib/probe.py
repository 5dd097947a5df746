"""Does pretraining help? A few-label linear probe on sentence embeddings (chapter 9).

A *linear probe* freezes an encoder and trains only a logistic regression on its sentence embeddings.
With few labels the probe can only be as good as the embeddings: if sentences on one topic already lie
close together, two labelled examples per topic are enough. This module ships the data and the three
steps of the comparison, so that a chapter can run it for several seeds:

>>> texts, labels = topic_sentences()                      # 48 sentences, 4 topics
>>> train, test = few_shot_split(labels, per_topic=2, seed=0)
>>> untrained = random_minilm(config, seed=0)              # MiniLM's architecture, BERT's initialisation
>>> probe_accuracy(embeddings[train], labels[train], embeddings[test], labels[test])

The sentences are written for this book (no download): 12 short sentences per topic, with as few
content words shared between two sentences of one topic as we could manage, so that a probe trained
on two of them cannot succeed by matching words alone.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .pretrained import BertConfig, MiniLM
from .training.device import check_seed

#: Four topics, 12 sentences each.
TOPICS: dict[str, tuple[str, ...]] = {
    "sport": (
        "The striker scored twice in the second half.",
        "Our team lost the final on penalties.",
        "She ran the marathon in under three hours.",
        "The referee showed him a red card.",
        "He has been training at the gym every morning.",
        "The tennis match went to a fifth set.",
        "Fans cheered as the goalkeeper saved the shot.",
        "The cyclist won the mountain stage of the race.",
        "Our coach wants more passes and fewer long balls.",
        "The swimmer broke the world record in the relay.",
        "They play basketball in the park on Saturdays.",
        "The boxer was knocked down in the third round.",
    ),
    "food": (
        "Chop the onions and fry them in butter.",
        "This soup needs more salt and a little pepper.",
        "She baked a chocolate cake for the party.",
        "Let the pasta boil for ten minutes.",
        "The restaurant serves fresh fish every Friday.",
        "Knead the dough until it is smooth.",
        "He grilled the vegetables on the barbecue.",
        "Add two eggs and whisk the mixture.",
        "The sauce tastes better with basil.",
        "We had rice with spicy curry for dinner.",
        "Roast the chicken in a hot oven for an hour.",
        "A slice of apple pie with cream, please.",
    ),
    "weather": (
        "Heavy rain is expected tomorrow afternoon.",
        "The wind blew the leaves off the trees.",
        "It will be sunny and warm all weekend.",
        "Snow covered the roads overnight.",
        "A thunderstorm knocked out the power.",
        "The forecast says fog in the morning.",
        "Temperatures will drop below freezing tonight.",
        "The sky cleared after the storm.",
        "Bring an umbrella, it looks like drizzle.",
        "This summer has been unusually hot and dry.",
        "Hail damaged the cars in the parking lot.",
        "The clouds are getting darker by the minute.",
    ),
    "computers": (
        "My laptop will not turn on after the update.",
        "Restart the router if the internet is slow.",
        "The new phone has a better camera.",
        "Save the file before you close the program.",
        "He wrote a script to back up his photos.",
        "The website crashed when too many people logged in.",
        "This keyboard has a broken space bar.",
        "Install the latest version of the app.",
        "The printer is out of ink again.",
        "She forgot the password to her email account.",
        "The hard drive is almost full.",
        "A software bug deleted half of our data.",
    ),
}

#: BERT's initialisation: weights ~ N(0, 0.02²), biases 0, LayerNorm gain 1 (``initializer_range``).
BERT_INIT_STD = 0.02


def topic_sentences() -> tuple[list[str], Tensor]:
    """All sentences of :data:`TOPICS` and their topic index: ``(texts [N], labels [N] long)``."""
    texts = [text for sentences in TOPICS.values() for text in sentences]
    labels = torch.tensor([k for k, sentences in enumerate(TOPICS.values()) for _ in sentences])
    return texts, labels


def few_shot_split(labels: Tensor, per_topic: int, seed: int) -> tuple[Tensor, Tensor]:
    """Draw ``per_topic`` training examples of every label (the rest is the test set), reproducibly.

    Returns ``(train_indices, test_indices)``, both sorted.
    """
    if per_topic < 1:
        raise ValueError(f"per_topic must be at least 1, got {per_topic}")
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    train = []
    for label in labels.unique():
        members = (labels == label).nonzero().flatten()
        if len(members) <= per_topic:
            raise ValueError(f"label {int(label)} has {len(members)} examples, need more than per_topic={per_topic}")
        train.append(members[torch.randperm(len(members), generator=generator)[:per_topic]])
    train = torch.cat(train).sort().values
    test = torch.tensor([i for i in range(len(labels)) if i not in set(train.tolist())])
    return train, test


def random_minilm(config: BertConfig, seed: int) -> MiniLM:
    """A :class:`~lib.pretrained.MiniLM` of the given shape with BERT's random initialisation, in ``eval()``.

    This is where pretraining starts: every linear layer and embedding ~ N(0, 0.02²), biases 0,
    LayerNorms the identity.
    """
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    model = MiniLM(config)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.copy_(torch.randn(module.weight.shape, generator=generator) * BERT_INIT_STD)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias.zero_()
            if isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model.eval()


def probe_accuracy(
    train_x: Tensor, train_y: Tensor, test_x: Tensor, test_y: Tensor, steps: int = 100, weight_decay: float = 1e-3
) -> float:
    """Fit a logistic regression (softmax, L2-regularised) on ``train_x`` and return its test accuracy.

    ``*_x`` are feature vectors ``[N, d]`` (standardised with the training set's mean and standard
    deviation), ``*_y`` labels ``[N]``. Full-batch L-BFGS from zero weights: deterministic, no seed.
    """
    mean, std = train_x.mean(0), train_x.std(0) + 1e-6
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    n_classes = int(train_y.max()) + 1
    linear = nn.Linear(train_x.size(1), n_classes).to(train_x.device)
    nn.init.zeros_(linear.weight)
    nn.init.zeros_(linear.bias)
    optimizer = torch.optim.LBFGS(linear.parameters(), max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(linear(train_x), train_y) + weight_decay * linear.weight.square().sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)
    with torch.no_grad():
        return (linear(test_x).argmax(-1) == test_y).float().mean().item()
