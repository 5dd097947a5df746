"""Real labelled movie reviews that ship with the book (chapter 11): data, splits, a bag-of-words baseline.

The sentences are short Rotten Tomatoes review snippets, collected by Pang and Lee, with the mean of
about 20 human sentiment ratings each, from -4 (extremely negative) to +4 (extremely positive), that
Hutto and Gilbert gathered as the ground truth of VADER (ICWSM 2014). ``lib/data/`` ships the
3,308 snippets of that set that MiniLM's tokenizer turns into at most 20 word pieces (``[CLS]`` and
``[SEP]`` included), under the MIT licence; ``lib/data/LICENSE-movie-review-snippets.txt`` says where
they come from. Nothing is downloaded.

>>> reviews = load_reviews()                      # the snippets whose raters agree on a side
>>> pool, test = split_reviews(reviews.labels, n_test=400, seed=2**31)
>>> train = labelled_subset(reviews.labels, pool, n=64, seed=7)     # 32 positive, 32 negative
>>> x_train, x_test, words = bag_of_words([reviews.texts[i] for i in train], [reviews.texts[i] for i in test])
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from .model.checks import check_int, check_number, check_tensor
from .training.device import check_seed

#: The shipped file: ``id`` (VADER's), ``sentiment`` (the raters' mean, -4 … +4) and ``text``, tab-separated.
REVIEWS_FILE = Path(__file__).parent / "data" / "movie_review_snippets.tsv.gz"


@dataclass(frozen=True)
class Reviews:
    """Review snippets: ``texts [N]``, ``scores [N]`` (the raters' mean, float) and ``labels [N]``
    (``1`` positive, ``0`` negative, long)."""

    texts: list[str]
    scores: Tensor
    labels: Tensor

    def __len__(self) -> int:
        return len(self.texts)


def load_reviews(min_strength: float = 1.0) -> Reviews:
    """The shipped snippets whose mean rating is at least ``min_strength`` away from neutral.

    A snippet is positive (label 1) when its mean rating is ``>= min_strength`` and negative (label 0)
    when it is ``<= -min_strength``; the ones in between, on which the raters did not clearly agree on a
    side, are left out. ``min_strength=0`` keeps every snippet but the (few) rated exactly 0.
    """
    check_number("min_strength", min_strength, 0.0, 4.0)
    texts, scores = [], []
    with gzip.open(REVIEWS_FILE, "rt", encoding="utf-8") as file:
        next(file)  # the header
        for line in file:
            _, score, text = line.rstrip("\n").split("\t")
            if abs(float(score)) >= min_strength and float(score) != 0:
                texts.append(text)
                scores.append(float(score))
    score_tensor = torch.tensor(scores)
    return Reviews(texts, score_tensor, (score_tensor > 0).long())


def _check_labels(labels: object) -> Tensor:
    labels = check_tensor("labels", labels)
    if labels.dim() != 1 or labels.dtype != torch.long:
        raise ValueError(f"labels must be a 1-D long tensor of 0/1, got shape {tuple(labels.shape)}, {labels.dtype}")
    return labels


def split_reviews(labels: Tensor, n_test: int, seed: int) -> tuple[Tensor, Tensor]:
    """Split the reviews into a pool to draw labels from and a test set: ``(pool, test)`` index tensors.

    The test set is ``n_test`` reviews drawn at random (a permutation seeded with ``seed``), the pool the
    rest; both sorted. The same ``seed`` gives the same split.
    """
    labels = _check_labels(labels)
    check_int("n_test", n_test, minimum=1, maximum=len(labels) - 1)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    order = torch.randperm(len(labels), generator=generator)
    return order[n_test:].sort().values, order[:n_test].sort().values


def labelled_subset(labels: Tensor, pool: Tensor, n: int, seed: int) -> Tensor:
    """``n`` labelled reviews from ``pool``, half of them positive and half negative, in a random order.

    Each class's members of the pool are shuffled once by a generator seeded with ``seed``, and the
    first ``n / 2`` of each are taken: for one seed a larger ``n`` keeps the reviews of a smaller one
    (the subsets are nested). Returns indices into ``labels`` ``[n]``, shuffled (by the same seed).
    """
    labels = _check_labels(labels)
    pool = check_tensor("pool", pool)
    check_int("n", n, minimum=2)
    if n % 2:
        raise ValueError(f"n={n} must be even: half positive, half negative")
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    chosen = []
    for label in (0, 1):
        members = pool[labels[pool] == label]
        if len(members) < n // 2:
            raise ValueError(f"the pool holds {len(members)} reviews of label {label}, fewer than n/2={n // 2}")
        chosen.append(members[torch.randperm(len(members), generator=generator)[: n // 2]])
    both = torch.cat(chosen)
    return both[torch.randperm(n, generator=generator)]


def words(text: str) -> list[str]:
    """A text's words for the bag of words: lower-cased runs of letters, digits and apostrophes."""
    return re.findall(r"[a-z0-9']+", text.lower())


def bag_of_words(
    train_texts: Sequence[str], test_texts: Sequence[str], min_count: int = 1
) -> tuple[Tensor, Tensor, list[str]]:
    r"""Word-count features: ``(train_x [N, V], test_x [M, V], vocabulary [V])``.

    The vocabulary is the words (:func:`words`) seen at least ``min_count`` times in ``train_texts``,
    and only there: a word the labelled reviews never show cannot count. Feature ``v`` of a text is
    :math:`\log(1 + c_v)`, with :math:`c_v` the count of word ``v`` in it; word order is lost.
    """
    for name, texts in (("train_texts", train_texts), ("test_texts", test_texts)):
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts) or len(texts) == 0:
            raise TypeError(f"{name} must be a non-empty list of str, got {texts!r:.80}")
    check_int("min_count", min_count, minimum=1)
    counts = Counter(w for text in train_texts for w in words(text))
    vocabulary = sorted(w for w, c in counts.items() if c >= min_count)
    index = {w: i for i, w in enumerate(vocabulary)}

    def features(texts: Sequence[str]) -> Tensor:
        x = torch.zeros(len(texts), len(vocabulary))
        for row, text in enumerate(texts):
            for w, c in Counter(words(text)).items():
                if w in index:
                    x[row, index[w]] = c
        return torch.log1p(x)

    return features(train_texts), features(test_texts), vocabulary
