"""lib/training/folded.py: M models run as one model on M·B rows, each block of rows with its model's weights."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import stack_module_state

from lib.model import DecoderOnlyLM, Transformer
from lib.model.positions import LearnedPositionalEmbedding
from lib.training import ensemble
from lib.training.batching import Batch, LMBatch
from lib.training.folded import (
    Folded,
    FoldedEmbedding,
    FoldedLayerNorm,
    FoldedLearnedPositions,
    FoldedLinear,
    FoldedRelativePositions,
    _Rows,
    fold,
)
from lib.training.losses import lm_loss, seq2seq_loss
from lib.training.options import TrainingOptions
from lib.training.train import train
from lib.training.vmapped import Vmapped

M, B, T = 3, 4, 6


def lm_batch(seed: int = 0, rows: int = B) -> LMBatch:
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(1, 11, (rows, T + 1), generator=g)
    tokens[0, -2:] = 0  # some padding
    return LMBatch(tokens[:, :-1], tokens[:, 1:], pad_id=0)


def models_of(make, n: int = M) -> list[nn.Module]:
    out = []
    for seed in range(n):
        torch.manual_seed(seed)
        out.append(make())
    return out


def ensemble_step(models, loss_fn, batch, per_model=False) -> ensemble.EnsembleStep:
    """The ensemble's step object, its forward pass chosen on ``batch`` (folded where it can)."""
    step = ensemble.EnsembleStep(models, TrainingOptions(steps=1, loss_fn=loss_fn), per_model, fold=True)
    step.engine = step._engine(batch)
    return step


def engine(models, loss_fn, batch, per_model=False):
    return ensemble_step(models, loss_fn, batch, per_model).engine


@pytest.mark.parametrize("position", ["learned", "sinusoidal", "rotary", "relative", "none"])
def test_lib_language_models_fold_and_give_each_models_loss(tiny_lm_config, position) -> None:
    models = models_of(lambda: DecoderOnlyLM(tiny_lm_config(position=position, n_layers=2)))
    step = ensemble_step(models, lm_loss, lm_batch())
    folded = step.engine
    assert isinstance(folded, Folded)
    for batch in (lm_batch(1), lm_batch(2, rows=7)):  # another batch size: the rows follow the batch
        losses = folded.losses(batch, per_model=False)
        alone = torch.stack([lm_loss(model, batch) for model in models])
        torch.testing.assert_close(losses, alone, rtol=1e-5, atol=1e-6)
        grads = torch.autograd.grad(losses.sum(), step.trainable)
        for m, model in enumerate(models):
            mine = torch.autograd.grad(lm_loss(model, batch), [p for p in model.parameters() if p.requires_grad])
            for stacked, own in zip(grads, mine):
                torch.testing.assert_close(stacked[m], own, rtol=1e-4, atol=1e-6)


def test_encoder_decoders_fold_with_their_tied_embeddings(tiny_transformer_config) -> None:
    models = models_of(lambda: Transformer(tiny_transformer_config(share_embeddings=True, tie_output=True)))
    g = torch.Generator().manual_seed(3)
    src, tgt = torch.randint(1, 11, (B, 5), generator=g), torch.randint(1, 11, (B, 5), generator=g)
    batch = Batch(src, tgt[:, :-1], tgt[:, 1:], pad_id=0)
    step = ensemble_step(models, seq2seq_loss, batch)
    folded = step.engine
    assert isinstance(folded, Folded)
    assert len(step.params) == len(dict(models[0].named_parameters()))  # a tied weight is stacked once
    losses = folded.losses(batch, per_model=False)
    torch.testing.assert_close(losses, torch.stack([seq2seq_loss(m, batch) for m in models]), rtol=1e-5, atol=1e-6)


def test_relative_tables_fold_per_model_and_unused_rows_get_no_gradient(tiny_lm_config) -> None:
    models = models_of(lambda: DecoderOnlyLM(tiny_lm_config(position="relative", n_layers=2, dropout=0.0)))
    folded = engine(models, lm_loss, lm_batch())
    assert isinstance(folded, Folded)
    tables = [m for m in folded.template.modules() if isinstance(m, FoldedRelativePositions)]
    assert len(tables) == 2 and tables[0].key.shape[0] == M
    losses = folded.losses(lm_batch(1), per_model=False)
    losses.sum().backward()
    k = models[0].layers[0].self_attn.relative.max_distance
    reach = T - 1  # offsets beyond ±(T - 1) are never looked up at length T
    assert k > reach and torch.count_nonzero(tables[0].key.grad[:, : k - reach]) == 0
    assert torch.count_nonzero(tables[0].key.grad[:, k - reach : k + reach + 1]) > 0


def test_what_does_not_fold_is_vmapped(tiny_lm_config) -> None:
    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.rnn, self.out = nn.Embedding(11, 8), nn.GRU(8, 8, batch_first=True), nn.Linear(8, 11)

        def forward(self, tokens):
            return self.out(self.rnn(self.embed(tokens))[0])

    rnns = models_of(Recurrent)
    assert fold(rnns, copy.deepcopy(rnns[0]), *stack_module_state(rnns), lm_loss, {}) is None

    class MixesRows(nn.Module):  # only weighted layers of the kinds that fold, but it mixes the rows
        def __init__(self):
            super().__init__()
            self.embed, self.out = nn.Embedding(11, 8), nn.Linear(8, 11)

        def forward(self, tokens):
            x = self.embed(tokens)
            return self.out(x - x.mean(0))  # the batch mean: M·B rows are not B rows

    mixers = models_of(MixesRows)
    assert fold(mixers, copy.deepcopy(mixers[0]), *stack_module_state(mixers), lm_loss, {}) is not None
    assert isinstance(engine(mixers, lm_loss, lm_batch()), Vmapped), "the first-batch check catches it"
    twins = copy.deepcopy(mixers)
    histories = ensemble.train_ensemble(mixers, lm_batch, steps=3, loss_fn=lm_loss, progress=False)
    for twin, history in zip(twins, histories):
        reference = train(twin, lm_batch, steps=3, loss_fn=lm_loss, progress=False)
        torch.testing.assert_close(torch.tensor(history.loss), torch.tensor(reference.loss), rtol=1e-4, atol=0)


def test_a_loss_that_uses_the_models_layers_trains_as_alone() -> None:
    """Chapter 8's kind of loss: it embeds the inputs with ``model.embed`` and calls the model on them."""

    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.norm, self.out = nn.Embedding(11, 8), nn.LayerNorm(8), nn.Linear(8, 11)

        def forward(self, x):
            return self.out(self.norm(x).relu())

    def loss(model, batch):
        x = model.embed(batch.input) + model.embed(batch.input.flip(-1))
        logits = model(x)
        return F.cross_entropy(logits.flatten(0, 1), batch.target.flatten())

    models = models_of(Reader)
    assert isinstance(engine(models, loss, lm_batch()), Folded)
    twins = copy.deepcopy(models)
    options = dict(steps=8, loss_fn=loss, lr=1e-2, progress=False)
    histories = ensemble.train_ensemble(models, lm_batch, **options)
    for model, twin, history in zip(models, twins, histories):
        reference = train(twin, lm_batch, **options)
        torch.testing.assert_close(torch.tensor(history.loss), torch.tensor(reference.loss), rtol=1e-4, atol=0)
        for p, q in zip(model.parameters(), twin.parameters()):
            torch.testing.assert_close(p, q, rtol=0, atol=1e-4)

    def twice(model, batch):  # two calls of the model: the fold cannot split that, so vmap runs it
        return loss(model, batch) + model(model.embed(batch.input)).square().mean()

    assert isinstance(engine(models, twice, lm_batch()), Vmapped)


def test_folded_layers_compute_what_the_modules_compute() -> None:
    """Each block of rows gets its own model's layer, and model m alone (``rows.model = m``) too."""
    torch.manual_seed(0)
    rows = _Rows(M)
    linears = [nn.Linear(5, 7) for _ in range(M)]
    norms = [nn.LayerNorm(5) for _ in range(M)]
    for norm in norms:
        nn.init.normal_(norm.weight), nn.init.normal_(norm.bias)
    tables = [nn.Embedding(11, 5) for _ in range(M)]
    positions = [LearnedPositionalEmbedding(9, 5) for _ in range(M)]
    stack = lambda ts: torch.stack([t.detach() for t in ts])  # noqa: E731
    folded = {
        "linear": FoldedLinear(stack([l.weight for l in linears]), stack([l.bias for l in linears]), rows),
        "norm": FoldedLayerNorm(stack([n.weight for n in norms]), stack([n.bias for n in norms]), (5,), 1e-5, rows),
        "table": FoldedEmbedding(stack([t.weight for t in tables]), rows),
        "positions": FoldedLearnedPositions(stack([p.embedding.weight for p in positions]), rows),
    }
    x, ids = torch.randn(M * B, T, 5), torch.randint(0, 11, (M * B, T))
    rows.n_rows = M * B
    blocks = lambda t: t.view(M, B, *t.shape[1:])  # noqa: E731
    for name, layers, inputs in [("linear", linears, x), ("norm", norms, x), ("table", tables, ids),
                                 ("positions", positions, x)]:  # fmt: skip
        together = blocks(folded[name](inputs))
        for m, layer in enumerate(layers):
            own = layer(blocks(inputs)[m])
            torch.testing.assert_close(together[m], own, rtol=1e-5, atol=1e-6)
            rows.model = m
            torch.testing.assert_close(folded[name](blocks(inputs)[m]), own, rtol=1e-5, atol=1e-6)
            rows.model = None
    with pytest.raises(ValueError, match="longer than max_len=9"):
        folded["positions"](torch.randn(M * B, 10, 5))


def test_a_loss_that_calls_a_method_of_the_model_folds() -> None:
    """Chapter 4's loss reads ``model.readouts(fields)``, not ``model(fields)``: that call is folded."""
    from lib import LinkedListModel
    from lib.training.lookup import linked_list_batch, linked_list_loss

    def source(step: int) -> LMBatch:
        return linked_list_batch(8, n_items=4, n_names=6, n_colours=3, seed=step)

    models = models_of(lambda: LinkedListModel(d_model=8, n_heads=2, n_names=6, n_colours=3))
    assert isinstance(engine(models, linked_list_loss, source(0)), Folded)
    twins = copy.deepcopy(models)
    options = dict(steps=6, loss_fn=linked_list_loss, lr=1e-2, progress=False)
    histories = ensemble.train_ensemble(models, source, **options)
    for twin, history in zip(twins, histories):
        reference = train(twin, source, **options)
        torch.testing.assert_close(torch.tensor(history.loss), torch.tensor(reference.loss), rtol=1e-4, atol=0)


def test_an_id_outside_the_vocabulary_is_refused_as_alone(tiny_lm_config) -> None:
    """Issue 59, 4: folded, id V + k of model m read row k of model m+1's table, silently, on every
    batch after the first (which alone is checked against each model's own loss). Now it is the
    IndexError that each model alone gives, at any step."""
    models = models_of(lambda: DecoderOnlyLM(tiny_lm_config()))
    V = models[0].config.vocab_size

    def source(step: int) -> LMBatch:
        batch = lm_batch(step)
        if step == 2:
            batch.input[1, 2] = V  # one id past the vocabulary
        return batch

    with pytest.raises(IndexError):
        train(copy.deepcopy(models[0]), source, steps=2, loss_fn=lm_loss, progress=False)
    step = ensemble_step(models, lm_loss, lm_batch())
    assert isinstance(step.engine, Folded)
    for bad in (V, V + 3, -1):
        batch = lm_batch(1)
        batch.input[0, 0] = bad
        with pytest.raises(IndexError):
            step.losses(batch)
    with pytest.raises(IndexError):
        ensemble.train_ensemble(models, source, steps=2, loss_fn=lm_loss, progress=False)


def test_why_a_model_is_not_folded_is_said_once_and_an_error_of_the_fold_is_raised(monkeypatch) -> None:
    """Issue 59: EnsembleStep caught every exception of the fold (except Exception: pass) and vmapped,
    so a bug of the fold was a silent slowdown (it hid one: a loss that called the model twice met a
    TypeError, not the NotFoldable it was meant to raise). Now what keeps a model from folding is
    said in a warning, once per architecture and reason; any other error is raised."""

    class Scaled(nn.Module):  # a weight of its own, outside the layers that fold (a 0-dim one: it stacks to [M])
        def __init__(self):
            super().__init__()
            self.embed, self.out, self.scale = nn.Embedding(11, 8), nn.Linear(8, 11), nn.Parameter(torch.ones(()))

        def forward(self, tokens):
            return self.out(self.embed(tokens) * self.scale)

    run = dict(steps=1, loss_fn=lm_loss, progress=False)
    with pytest.warns(ensemble.NotFoldedWarning, match=r"the Scaled models are vmapped, not folded: .* in a Scaled"):
        ensemble.train_ensemble(models_of(Scaled), lm_batch, **run)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once; and never with fold=False, which asks for vmap
        ensemble.train_ensemble(models_of(Scaled), lm_batch, **run)
        ensemble.train_ensemble(models_of(Scaled), lm_batch, fold=False, **run)

    def twice(model, batch):
        return lm_loss(model, batch) + lm_loss(model, batch)

    with pytest.warns(ensemble.NotFoldedWarning, match="loss_fn called the model twice"):
        ensemble.train_ensemble(models_of(lambda: nn.Sequential(nn.Embedding(11, 8), nn.Linear(8, 11))), lm_batch,
                                steps=1, loss_fn=twice, progress=False)  # fmt: skip

    def broken(self, x):
        raise RuntimeError("a bug of the fold")

    monkeypatch.setattr(FoldedLinear, "forward", broken)
    with pytest.raises(RuntimeError, match="a bug of the fold"):
        ensemble.train_ensemble(
            models_of(lambda: nn.Sequential(nn.Embedding(11, 8), nn.Linear(8, 11))), lm_batch, **run
        )
