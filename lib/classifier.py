r"""A pretrained encoder with a classification head, and the cheap way to fine-tune its top (chapter 11).

:class:`SequenceClassifier` is what Hugging Face calls ``BertForSequenceClassification``: the encoder
(:class:`~lib.pretrained.MiniLM`), BERT's *pooler* on the ``[CLS]`` position and a linear layer to
the classes,

.. math::
    h = \mathrm{MiniLM}(w)_{[\mathrm{CLS}]}, \qquad p = \tanh(W_p h + b_p), \qquad
    \mathrm{logits} = W_c\, p + b_c ,

given the same weights it computes the same logits (``tests/test_classifier.py`` checks it against
``transformers``, which ``lib`` never imports). :func:`load_minilm_classifier` loads the encoder *and*
the pooler from all-MiniLM-L6-v2's checkpoint and draws the new head :math:`W_c` from a seed.

Fine-tuning every layer is slow on a CPU. Freezing the lower layers makes it cheap, because their
output never changes: :func:`frozen_features` computes it once, ``[N, T, d]``, and
:class:`ClassifierTop` (the top layers, the pooler and the head) trains on it. The top's last layer
computes only the ``[CLS]`` row, the one the pooler reads: its keys and values still come from every
token, so the logits are exactly those of the whole classifier.

>>> model, tokenizer = load_minilm_classifier(n_classes=2, seed=0)
>>> ids, mask = tokenize(tokenizer, ["A gem.", "Dull and overlong."])
>>> model(ids, mask).shape                                          # [2, 2]
>>> top = ClassifierTop(model, n_frozen=5)                          # layer 5, pooler, head
>>> top(frozen_features(model, ids, mask, n_frozen=5), mask)        # the same logits
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .model.checks import check_int, check_tensor
from .model.generation import eval_mode
from .model.layers import EncoderLayer, residual
from .model.masks import padding_mask
from .pretrained import MiniLM, load_minilm, minilm_files
from .training.batching import LMBatch
from .training.device import check_seed

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    from tokenizers import Tokenizer

#: BERT's initialisation of a new layer: weights ~ N(0, 0.02²), biases 0.
HEAD_INIT_STD = 0.02


def _check_ids(input_ids: object, attention_mask: object) -> None:
    ids = check_tensor("input_ids", input_ids)
    if ids.dim() != 2 or ids.is_floating_point():
        raise ValueError(f"input_ids must be an integer tensor [B, T], got {ids.dtype} {tuple(ids.shape)}")
    mask = check_tensor("attention_mask", attention_mask)
    if mask.shape != ids.shape:
        raise ValueError(f"attention_mask has shape {tuple(mask.shape)}; expected input_ids' {tuple(ids.shape)}")


class Pooler(nn.Module):
    """BERT's pooler: ``tanh(W_p h + b_p)`` on the ``[CLS]`` hidden state, ``[B, T, d] -> [B, d]``."""

    def __init__(self, d_model: int):
        super().__init__()
        self.dense = nn.Linear(d_model, d_model)

    def forward(self, hidden: Tensor) -> Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))


class SequenceClassifier(nn.Module):
    """An encoder, BERT's pooler and a linear head: ``(input_ids [B, T], attention_mask [B, T]) -> logits [B, C]``.

    ``encoder`` is a :class:`~lib.pretrained.MiniLM` (pretrained or not); ``pooler`` a :class:`Pooler`;
    ``classifier`` an ``nn.Linear(d, n_classes)``. No dropout: the model computes what Hugging Face's
    ``BertForSequenceClassification`` computes in ``eval()`` mode.
    """

    def __init__(self, encoder: MiniLM, n_classes: int):
        super().__init__()
        if not isinstance(encoder, MiniLM):
            raise TypeError(f"encoder must be a lib.pretrained.MiniLM, got {type(encoder).__name__}")
        check_int("n_classes", n_classes, minimum=2)
        d = encoder.config.hidden_size
        self.encoder = encoder
        self.pooler = Pooler(d)
        self.classifier = nn.Linear(d, n_classes)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        return self.classifier(self.pooler(self.encoder(input_ids, attention_mask)))


def init_head(linear: nn.Linear, seed: int) -> nn.Linear:
    """Draw a new layer's weights as BERT does (``N(0, 0.02²)``, biases 0) from ``seed``; returns it."""
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    with torch.no_grad():
        linear.weight.copy_(torch.randn(linear.weight.shape, generator=generator) * HEAD_INIT_STD)
        linear.bias.zero_()
    return linear


def load_minilm_classifier(
    n_classes: int = 2, seed: int = 0, path: str | Path | None = None, device: torch.device | str | None = None
) -> tuple[SequenceClassifier, Tokenizer]:
    """all-MiniLM-L6-v2 (:func:`~lib.pretrained.load_minilm`, sha256-verified) with its checkpoint's
    pooler and a new head of ``n_classes`` drawn from ``seed`` (:func:`init_head`), in ``eval()`` mode.

    Returns ``(model, tokenizer)``.
    """
    encoder, tokenizer = load_minilm(path)
    model = SequenceClassifier(encoder, n_classes)
    from safetensors import safe_open  # installed with lib.pretrained's extra; load_minilm needed it

    with safe_open(str(minilm_files(path) / "model.safetensors"), framework="pt") as file:
        model.pooler.dense.weight.data.copy_(file.get_tensor("pooler.dense.weight"))
        model.pooler.dense.bias.data.copy_(file.get_tensor("pooler.dense.bias"))
    init_head(model.classifier, seed)
    model.eval()
    return (model if device is None else model.to(device)), tokenizer


@torch.no_grad()
def frozen_features(
    model: SequenceClassifier | MiniLM, input_ids: Tensor, attention_mask: Tensor, n_frozen: int, batch_size: int = 256
) -> Tensor:
    r"""The output of the embeddings and the first ``n_frozen`` layers, computed once: ``[N, T, d]``.

    .. math:: X^{(k)} = \mathrm{EncoderLayer}_{k-1}(\cdots \mathrm{EncoderLayer}_0(X^{(0)}))

    with ``k = n_frozen`` (``0``: the embeddings alone). Runs without gradients, in chunks of
    ``batch_size`` texts of similar length (sorted by it), each cut to its longest text: no chunk
    computes more padding than it needs. Positions beyond a chunk's longest text are 0 in the result
    (they are padding, masked wherever the features are used).
    """
    encoder = model.encoder if isinstance(model, SequenceClassifier) else model
    if not isinstance(encoder, MiniLM):
        raise TypeError(f"model must be a SequenceClassifier or a MiniLM, got {type(model).__name__}")
    _check_ids(input_ids, attention_mask)
    check_int("n_frozen", n_frozen, minimum=0, maximum=len(encoder.layers))
    check_int("batch_size", batch_size, minimum=1)
    lengths = attention_mask.long().sum(1)
    order = lengths.argsort(stable=True)
    out = torch.zeros(*input_ids.shape, encoder.config.hidden_size, device=input_ids.device)
    for start in range(0, len(input_ids), batch_size):
        rows = order[start : start + batch_size]
        T = max(int(lengths[rows].max()), 1)
        ids, mask = input_ids[rows, :T], attention_mask[rows, :T]
        x, keys = encoder.embeddings(ids), padding_mask(mask.long(), 0)
        for layer in encoder.layers[:n_frozen]:
            x = layer(x, keys)
        out[rows, :T] = x
    return out


def cls_layer(layer: EncoderLayer, x: Tensor, keys: Tensor) -> Tensor:
    """One post-LN encoder layer, computed at the ``[CLS]`` position only: ``[B, T, d] -> [B, 1, d]``.

    Its query is row 0, its keys and values every row that ``keys`` (``[B, 1, 1, T]``, ``True`` = may
    attend) lets it see: row 0 of ``layer(x, keys)``, with a T-th of the queries and feed-forward work.
    """
    attend = lambda q: layer.self_attn(q, x, x, keys, need_weights=False)[0]  # noqa: E731
    h = residual(x[:, :1], attend, layer.norm1, layer.dropout1, layer.norm_first)
    return residual(h, layer.ff, layer.norm2, layer.dropout2, layer.norm_first)


class ClassifierTop(nn.Module):
    """The part of a :class:`SequenceClassifier` above its first ``n_frozen`` layers, to fine-tune on
    :func:`frozen_features`: ``(hidden [B, T, d], attention_mask [B, T]) -> logits [B, C]``.

    It holds copies of the top layers (``layers``), the ``pooler`` and the ``classifier``; the last
    layer computes only the ``[CLS]`` row (:func:`cls_layer`). ``n_frozen`` equal to the number of
    layers leaves the pooler and the head.
    """

    def __init__(self, model: SequenceClassifier, n_frozen: int):
        super().__init__()
        if not isinstance(model, SequenceClassifier):
            raise TypeError(f"model must be a SequenceClassifier, got {type(model).__name__}")
        check_int("n_frozen", n_frozen, minimum=0, maximum=len(model.encoder.layers))
        self.layers = copy.deepcopy(model.encoder.layers[n_frozen:])
        self.pooler = copy.deepcopy(model.pooler)
        self.classifier = copy.deepcopy(model.classifier)

    def forward(self, hidden: Tensor, attention_mask: Tensor) -> Tensor:
        keys = padding_mask(attention_mask.long(), 0)  # [B, 1, 1, T]
        for layer in self.layers[:-1]:
            hidden = layer(hidden, keys)
        if len(self.layers):
            hidden = cls_layer(self.layers[-1], hidden, keys)
        return self.classifier(self.pooler(hidden))


# ------------------------------------------------------------------------- training on the features
def feature_batches(rows: Tensor, labels: Tensor, steps: int, batch_size: int, seed: int) -> list[LMBatch]:
    """``steps`` batches of ``batch_size`` labelled examples drawn with replacement from ``rows``.

    ``rows [n]`` are indices into a feature cache (:func:`frozen_features`), ``labels [n]`` their
    classes. Each batch is a :class:`~lib.training.batching.LMBatch` with ``input [B, 1]`` the rows and
    ``target [B, 1]`` the labels, so ``lib.train`` and ``lib.train_ensemble`` can serve it, one list per
    model; :func:`classification_loss` reads it. The draws come from a generator seeded with ``seed``.
    """
    rows, labels = check_tensor("rows", rows), check_tensor("labels", labels)
    if rows.dim() != 1 or rows.shape != labels.shape:
        raise ValueError(
            f"rows and labels must be 1-D of one length, got {tuple(rows.shape)} and {tuple(labels.shape)}"
        )
    check_int("steps", steps, minimum=1)
    check_int("batch_size", batch_size, minimum=1)
    generator = torch.Generator().manual_seed(check_seed("seed", seed))
    draws = torch.randint(len(rows), (steps, batch_size), generator=generator)
    return [LMBatch(rows[d].unsqueeze(1), labels[d].long().unsqueeze(1)) for d in draws]


def classification_loss(features: Tensor, attention_mask: Tensor) -> Callable[[nn.Module, LMBatch], Tensor]:
    """``loss_fn(model, batch)`` for ``lib.train``: cross-entropy of ``model(features[rows], mask[rows])``
    against the batch's labels (a batch of :func:`feature_batches`)."""
    features, attention_mask = check_tensor("features", features), check_tensor("attention_mask", attention_mask)
    if features.dim() != 3 or attention_mask.shape != features.shape[:2]:
        raise ValueError(
            f"features must be [N, T, d] and attention_mask [N, T], got {tuple(features.shape)} and "
            f"{tuple(attention_mask.shape)}"
        )

    def loss_fn(model: nn.Module, batch: LMBatch) -> Tensor:
        rows = batch.input[:, 0]
        return F.cross_entropy(model(features[rows], attention_mask[rows]), batch.target[:, 0])

    return loss_fn


@torch.no_grad()
def accuracy(model: nn.Module, features: Tensor, attention_mask: Tensor, labels: Tensor) -> float:
    """The share of ``labels [N]`` that ``model(features, attention_mask)`` ranks first, in ``eval()`` mode."""
    with eval_mode(model):
        return (model(features, attention_mask).argmax(-1) == labels).float().mean().item()
