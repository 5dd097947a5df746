"""lib.training.checkpoint: a checkpoint records the options that wrote it, and what diverged before it.

(That a resumed run continues the uninterrupted one's curve is tested with the loop, in
tests/training/test_distributed.py and tests/training/test_ensemble.py.)"""

from __future__ import annotations

import copy
import functools

import pytest
import torch
from torch import nn

from lib.training.batching import LMBatch
from lib.training.ensemble import train_ensemble
from lib.training.losses import lm_loss
from lib.training.train import train


def batch(step: int) -> LMBatch:
    tokens = torch.randint(1, 13, (8, 7), generator=torch.Generator().manual_seed(step))
    return LMBatch(tokens[:, :-1], tokens[:, 1:], pad_id=0)


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(13, 16), nn.Linear(16, 13))


def test_a_run_resumed_under_other_options_is_refused(tmp_path) -> None:
    """Issue 59: a resumed run said nothing of the options that wrote the checkpoint it loaded, so one
    resumed with another learning rate, optimizer or schedule continued another run than the one saved."""
    path = tmp_path / "run.pt"
    options = dict(loss_fn=lm_loss, lr=1e-2, checkpoint=path, progress=False)
    train(model(), batch, steps=2, **options)
    for other, named in [
        (dict(lr=3e-3), r"optimizer.lr=0.01; this run has optimizer.lr=0.003"),
        (dict(clip_grad_norm=None, label_smoothing=0.1), r"clip_grad_norm=1.0, label_smoothing=0.0; this run has"),
        (dict(optimizer=functools.partial(torch.optim.SGD, lr=0.1)), r"optimizer=Adam, .*this run has .*optimizer=SGD"),
        (dict(schedule="linear_warmup", warmup_steps=2), r"schedule='constant', warmup_steps=0; .*"),
    ]:
        with pytest.raises(ValueError, match=rf"checkpoint .*run.pt' was written with {named}"):
            train(model(), batch, steps=4, **(options | other))
    # the same Adam given another way is the same run; so is a loss_fn that wraps the same loss
    same_adam = functools.partial(torch.optim.Adam, lr=1e-2, betas=(0.9, 0.98), eps=1e-9)
    history = train(
        model(), batch, steps=3, **(options | dict(optimizer=same_adam, loss_fn=lambda m, b: lm_loss(m, b)))
    )
    assert history.step == [3]
    history = train(model(), batch, steps=5, **options)  # the same options: it resumes, and may go on for longer
    assert history.step == [4, 5]


def test_under_the_cosine_schedule_the_number_of_steps_is_an_option_of_the_run(tmp_path) -> None:
    """The cosine schedule decays to 0 at ``steps``: a run resumed with another number of steps would
    take other learning rates than the run that wrote the checkpoint."""
    options = dict(loss_fn=lm_loss, schedule="cosine", warmup_steps=1, checkpoint=tmp_path / "run.pt", progress=False)
    train(model(), batch, steps=4, checkpoint_every=2, **options)
    with pytest.raises(ValueError, match=r"written with steps=4; this run has steps=8"):
        train(model(), batch, steps=8, **options)


def test_a_checkpoint_written_before_options_were_recorded_still_resumes(tmp_path) -> None:
    path = tmp_path / "old.pt"
    train(model(), batch, steps=2, loss_fn=lm_loss, checkpoint=path, progress=False)
    state = torch.load(path, weights_only=True)
    del state["options"], state["diverged"]
    torch.save(state, path)
    assert train(model(), batch, steps=3, loss_fn=lm_loss, lr=5e-3, checkpoint=path, progress=False).step == [3]


def one_weight(w: float) -> nn.Module:
    single = nn.Sequential(nn.Linear(1, 1, bias=False))
    with torch.no_grad():
        single[0].weight.fill_(w)
    return single


@pytest.mark.filterwarnings("ignore:training diverged")
def test_a_resumed_ensemble_keeps_the_models_that_diverged_stopped(tmp_path) -> None:
    """The checkpoint of an ensemble names the models that diverged before it: resumed, they stay
    where they stopped (their histories empty, History.diverged their step), and the run ends with the
    weights of the uninterrupted one."""
    ones = lambda step: LMBatch(torch.ones(4, 3, 1), torch.zeros(4, 3, dtype=torch.long), pad_id=-100)  # noqa: E731
    root = lambda m, b: m(b.input).sqrt().mean()  # noqa: E731  NaN once the weight is below 0
    start = [one_weight(w) for w in (3.0, 0.5, 1.0)]
    options = dict(loss_fn=root, optimizer=functools.partial(torch.optim.SGD, lr=1.0), clip_grad_norm=None,
                   progress=False)  # fmt: skip
    whole = copy.deepcopy(start)
    uninterrupted = train_ensemble(whole, ones, steps=6, **options)
    assert [h.diverged for h in uninterrupted] == [None, 2, 3]
    parts = copy.deepcopy(start)
    train_ensemble(parts, ones, steps=4, checkpoint=tmp_path / "ensemble.pt", **options)
    resumed = train_ensemble(parts, ones, steps=6, checkpoint=tmp_path / "ensemble.pt", **options)
    assert [(h.step, h.diverged) for h in resumed] == [([5, 6], None), ([], 2), ([], 3)]
    for a, b in zip(parts, whole):
        torch.testing.assert_close(a[0].weight, b[0].weight, rtol=0, atol=0)  # the same computation
