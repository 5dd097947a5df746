"""Schedules, losses, the training loop and evaluation (lib.train), with a tiny stand-in model."""

import math

import pytest
import torch
from torch import nn

from lib.training.data import LMBatch, TaskStream, collate, make_task, to_lm_batch
from lib.training.evaluation import evaluate
from lib.training.loop import History
from lib.training.losses import lm_loss, seq2seq_loss
from lib.training.options import paper_adam
from lib.training.schedules import make_schedule, noam_lr
from lib.training.train import train


class TinySeq2Seq(nn.Module):
    """Predicts tgt_out[t] from src[t] and tgt_in[t]: enough to learn the copy task."""

    def __init__(self, vocab_size: int, d: int = 32):
        super().__init__()
        self.src_embed = nn.Embedding(vocab_size, d)
        self.tgt_embed = nn.Embedding(vocab_size, d)
        self.out = nn.Linear(d, vocab_size)

    def forward(self, src, tgt_in):
        T = tgt_in.shape[1]
        src = nn.functional.pad(src, (0, max(0, T - src.shape[1])))[:, :T]
        return self.out(torch.relu(self.src_embed(src) + self.tgt_embed(tgt_in)))


class TinyLM(nn.Module):
    def __init__(self, vocab_size: int, d: int = 16):
        super().__init__()
        self.embed, self.out = nn.Embedding(vocab_size, d), nn.Linear(d, vocab_size)

    def forward(self, tokens):
        return self.out(self.embed(tokens))


def test_noam_lr_is_equation_3_and_peaks_at_warmup():
    d, w = 512, 4000
    lrs = [noam_lr(s, d, w) for s in range(1, 3 * w)]
    assert max(range(len(lrs)), key=lrs.__getitem__) + 1 == w
    assert math.isclose(noam_lr(w, d, w), (d * w) ** -0.5)
    assert math.isclose(noam_lr(100, d, w), d**-0.5 * 100 * w**-1.5)
    assert math.isclose(noam_lr(16000, d, w, factor=2.0), 2 * d**-0.5 * 16000**-0.5)
    with pytest.raises(ValueError, match="step=0"):
        noam_lr(0, d, w)


def test_the_noam_schedule_is_the_papers_with_its_peak_lr():
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=(64 * 10) ** -0.5)
    sched = make_schedule(opt, "noam", warmup_steps=10)
    seen = []
    for _ in range(30):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert all(math.isclose(lr, noam_lr(s, 64, 10)) for s, lr in enumerate(seen, start=1))
    assert max(range(30), key=seen.__getitem__) + 1 == 10


@pytest.mark.parametrize("name", ["constant", "linear_warmup", "noam", "cosine"])
def test_make_schedule_peaks_at_the_base_lr(name):
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.5)
    sched = make_schedule(opt, name, warmup_steps=5, total_steps=20)
    seen = []
    for _ in range(20):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert math.isclose(max(seen), 0.5)
    if name != "constant":
        assert seen[0] < 0.5 and math.isclose(seen[4], 0.5)
    with pytest.raises(ValueError, match=r"schedule='exponential' is unknown; expected one of"):
        make_schedule(opt, "exponential")


def test_seq2seq_loss_ignores_padding_and_smooths():
    torch.manual_seed(0)
    model = TinySeq2Seq(13)
    batch = collate([([3, 4, 5], [3, 4, 5]), ([6], [6])])
    loss = seq2seq_loss(model, batch)
    logits = model(batch.src, batch.tgt_in)
    keep = batch.tgt_out != 0
    manual = nn.functional.cross_entropy(logits[keep], batch.tgt_out[keep])
    assert torch.allclose(loss, manual)
    assert not torch.allclose(seq2seq_loss(model, batch, label_smoothing=0.1), loss)
    with pytest.raises(TypeError, match="lm_loss"):
        seq2seq_loss(model, to_lm_batch(batch))


def test_wrong_logits_shape_is_explained():
    class Bad(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(1, 1)

        def forward(self, src, tgt_in):
            return torch.zeros(tgt_in.shape[0], 13)

    with pytest.raises(ValueError, match=r"\[B, T, V\]"):
        seq2seq_loss(Bad(), collate([([3], [3])]))


def test_train_learns_copy_and_records_history():
    torch.manual_seed(0)
    train_set, test_set = make_task("copy", 256, seed=0, max_len=6), make_task("copy", 64, seed=1, max_len=6)
    model = TinySeq2Seq(len(train_set.src_vocab))
    before = evaluate(model, test_set)
    history = train(
        model,
        train_set,
        steps=60,
        lr=1e-2,
        schedule="linear_warmup",
        warmup_steps=10,
        batch_size=32,
        eval_fn=lambda m: evaluate(m, test_set),
        eval_every=20,
        progress=False,
    )
    assert isinstance(history, History)
    assert history.step == list(range(1, 61))
    assert len(history.loss) == len(history.lr) == len(history.grad_norm) == 60
    assert history.lr[0] < history.lr[20] == pytest.approx(1e-2)
    assert [e["step"] for e in history.evals] == [20, 40, 60]
    after = history.evals[-1]
    assert after["token_accuracy"] > 0.9 > before["token_accuracy"]
    assert set(after) == {"step", "loss", "token_accuracy", "exact_match"}


def test_the_default_adam_updates_all_tensors_at_once_with_the_same_numbers():
    """lib's default Adam runs foreach (one operation over all tensors): bit for bit the per-tensor loop."""
    weights = {}
    for foreach in (False, True):
        torch.manual_seed(0)
        train_set = make_task("copy", 64, seed=0, max_len=6)
        model = TinySeq2Seq(len(train_set.src_vocab))

        def adam(params, foreach=foreach):
            return torch.optim.Adam(params, lr=1e-2, betas=(0.9, 0.98), eps=1e-9, foreach=foreach)

        train(model, train_set, steps=20, optimizer=adam(model.parameters()), batch_size=16, progress=False)
        weights[foreach] = [p.detach().clone() for p in model.parameters()]
    torch.manual_seed(0)
    model = TinySeq2Seq(len(train_set.src_vocab))
    history = train(model, train_set, steps=20, lr=1e-2, batch_size=16, progress=False)
    assert all(torch.equal(a, b) for a, b in zip(weights[False], weights[True]))
    assert all(torch.equal(a, b) for a, b in zip(weights[True], model.parameters()))
    assert len(history.loss) == 20
    assert paper_adam([torch.zeros(1, requires_grad=True)], lr=1e-3).defaults["foreach"] is True


@pytest.mark.parametrize("training", [True, False])
def test_train_puts_the_model_back_in_the_mode_it_found(training):
    model = TinySeq2Seq(13).train(training)
    modes = []

    def eval_fn(m):
        modes.append(m.training)
        return {}

    def loss_fn(m, batch):
        modes.append(m.training)
        return seq2seq_loss(m, batch)

    train(model, TaskStream("copy", 4, seed=0), steps=2, loss_fn=loss_fn, eval_fn=eval_fn, eval_every=2, progress=False)
    assert modes == [True, True, False]  # train mode for the steps, eval mode for eval_fn
    assert model.training is training


def test_train_accepts_stream_list_and_callable():
    """(Clipping: test_gradient_clipping_bounds_the_norm_of_the_step.)"""
    torch.manual_seed(0)
    model = TinySeq2Seq(13)
    h = train(model, TaskStream("copy", 8, seed=0), steps=3, progress=False)
    assert len(h.loss) == 3
    batches = list(make_task("copy", 16).batches(8))  # 2 batches, cycled
    assert len(train(model, batches, steps=5, progress=False).loss) == 5
    fixed = batches[0]
    seen = []
    train(model, lambda step: seen.append(step) or fixed, steps=3, progress=False)
    assert seen == [1, 2, 3]  # the callable is asked for each step's batch (steps count from 1, as History.step)
    with pytest.raises(ValueError, match="ran out"):
        train(model, iter(batches), steps=5, progress=False)
    with pytest.raises(ValueError, match="steps"):
        train(model, batches, steps=0)


def test_gradient_clipping_bounds_the_norm_of_the_step():
    """History records the norm before clipping; the gradients the optimizer used are clipped to it."""
    torch.manual_seed(0)
    model = TinySeq2Seq(13)
    fixed = next(make_task("copy", 16).batches(16))
    used = []

    class Recording(torch.optim.SGD):
        def step(self, closure=None):
            used.append(
                torch.linalg.vector_norm(
                    torch.stack([torch.linalg.vector_norm(p.grad) for p in model.parameters() if p.grad is not None])
                ).item()
            )
            return super().step(closure)

    clip = 1e-2
    h = train(
        model,
        lambda step: fixed,
        steps=3,
        optimizer=Recording(model.parameters(), lr=0.1),
        clip_grad_norm=clip,
        progress=False,
    )
    assert len(used) == 3 and all(n > 10 * clip for n in h.grad_norm)  # clipping had work to do
    assert all(n == pytest.approx(clip, rel=1e-4) for n in used)  # ... and did it
    used.clear()
    h = train(
        model,
        lambda step: fixed,
        steps=2,
        optimizer=Recording(model.parameters(), lr=0.1),
        clip_grad_norm=None,
        progress=False,
    )
    assert used == pytest.approx(h.grad_norm, rel=1e-5)  # no clipping: the raw norm


def test_train_lm_and_evaluate_lm():
    torch.manual_seed(0)
    ds = make_task("recall", 64, n_pairs=2)
    model = TinyLM(len(ds.src_vocab))
    h = train(model, ds, loss_fn=lm_loss, steps=5, batch_size=16, progress=False, label_smoothing=0.1)
    assert len(h.loss) == 5
    metrics = evaluate(model, ds, lm=True)
    assert 0.0 <= metrics["exact_match"] <= metrics["token_accuracy"] <= 1.0
    lm_batch = to_lm_batch(next(ds.batches(4)))
    assert isinstance(lm_batch, LMBatch) and lm_loss(model, lm_batch).ndim == 0


def test_evaluate_counts_tokens_and_sequences():
    class Oracle(nn.Module):
        """Knows the answer except for sequences starting with symbol 3."""

        def __init__(self, tgt_out):
            super().__init__()
            self.dummy = nn.Parameter(torch.zeros(1))
            self.tgt_out = tgt_out

        def forward(self, src, tgt_in):
            logits = nn.functional.one_hot(self.tgt_out, 13).float()
            logits[src[:, 0] == 3, 0] = -logits[src[:, 0] == 3, 0]  # first token wrong
            return logits

    batch = collate([([3, 4], [3, 4]), ([5, 6, 7], [5, 6, 7])])
    metrics = evaluate(Oracle(batch.tgt_out), batch)
    assert metrics["token_accuracy"] == pytest.approx(6 / 7)
    assert metrics["exact_match"] == pytest.approx(1 / 2)


def test_a_data_set_is_shuffled_by_the_readers_seed():
    """Regression (issue 19): train shuffled a Seq2SeqDataset with seed=epoch, whatever seed the
    reader had set. The order now follows torch's seed (lib.seed_everything), changes every epoch,
    and draws nothing from the global generator."""
    data = make_task("copy", 32, seed=0)

    def order(seed: int) -> list:
        torch.manual_seed(seed)
        seen = []

        def loss_fn(model, batch):
            seen.append([[t for t in row if t != batch.pad_id] for row in batch.src.tolist()])
            return seq2seq_loss(model, batch)

        model = TinySeq2Seq(13)
        rng = torch.get_rng_state()
        train(model, data, steps=8, batch_size=8, loss_fn=loss_fn, progress=False)  # 2 epochs of 4 batches
        assert torch.equal(torch.get_rng_state(), rng), "the shuffle drew from the global generator"
        return seen

    first = order(0)
    assert first == order(0)
    assert first != order(1)
    assert first[:4] != first[4:], "every epoch is shuffled anew"
    assert sorted(row for batch in first[:4] for row in batch) == sorted(row for batch in first[4:] for row in batch)
