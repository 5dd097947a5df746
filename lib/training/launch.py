"""Train the chapter-7 Transformer or the decoder-only LM on a toy task, in one process or under torchrun.

One process (CPU or one GPU)::

    python -m lib.training.launch --model transformer --task dates --steps 300

Two processes on this machine's CPU cores (``gloo``), then 8 GPUs (``nccl``), then 2 machines of 8
GPUs each (run the same line on both, ``--rdzv-endpoint`` naming one of them): the script is the same::

    torchrun --standalone --nproc_per_node=2 -m lib.training.launch --steps 300
    torchrun --standalone --nproc_per_node=8 -m lib.training.launch --steps 300
    torchrun --nnodes=2 --nproc_per_node=8 --rdzv-backend=c10d --rdzv-endpoint=HOST:29500 \\
        --rdzv-id=dates -m lib.training.launch --steps 300

``--batch-size`` is the global batch: each of the N processes trains on ``1/N`` of it, so the loss
curve does not depend on N (:mod:`lib.training.distributed`). ``--checkpoint FILE`` saves the run
and resumes it from ``FILE`` if it exists; ``--history FILE`` writes the losses and evaluations as
JSON (rank 0).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import torch
from torch import nn

from ..model.lm import DecoderOnlyLM, LMConfig
from ..model.transformer import Transformer, TransformerConfig
from . import distributed
from .batching import Seq2SeqDataset
from .data import TASKS, TaskStream, make_task
from .device import seed_everything
from .evaluation import evaluate
from .loop import History
from .losses import lm_loss, seq2seq_loss
from .train import train


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (see the module's docstring); ``argv=None`` reads ``sys.argv``."""
    p = argparse.ArgumentParser(
        prog="python -m lib.training.launch", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    p.add_argument(
        "--model",
        choices=("transformer", "lm"),
        default="transformer",
        help="the chapter-7 encoder-decoder, or the decoder-only LM (default: %(default)s)",
    )
    p.add_argument("--task", choices=sorted(TASKS), default="dates", help="a toy task of lib (default: %(default)s)")
    p.add_argument("--steps", type=int, default=300, help="optimizer steps (default: %(default)s)")
    p.add_argument(
        "--batch-size", type=int, default=128, help="examples per step, over all processes (default: %(default)s)"
    )
    p.add_argument(
        "--train-size",
        type=int,
        default=None,
        help="train on a fixed data set of this many examples (reshuffled every epoch) instead of "
        "fresh examples every step",
    )
    p.add_argument("--test-size", type=int, default=500, help="examples to evaluate on (default: %(default)s)")
    p.add_argument(
        "--optimizer",
        choices=("adam", "sgd"),
        default="adam",
        help="Adam with the paper's betas, or SGD with momentum 0.9 (default: %(default)s)",
    )
    p.add_argument("--lr", type=float, default=5e-3, help="peak learning rate (default: %(default)s)")
    p.add_argument(
        "--schedule",
        choices=("constant", "linear_warmup", "noam", "cosine"),
        default="noam",
        help="learning-rate schedule (default: %(default)s)",
    )
    p.add_argument("--warmup-steps", type=int, default=50, help="(default: %(default)s)")
    p.add_argument("--d-model", type=int, default=64, help="(default: %(default)s)")
    p.add_argument("--heads", type=int, default=4, help="(default: %(default)s)")
    p.add_argument(
        "--layers", type=int, default=2, help="encoder and decoder layers, or the LM's (default: %(default)s)"
    )
    p.add_argument("--d-ff", type=int, default=128, help="(default: %(default)s)")
    p.add_argument("--dropout", type=float, default=0.0, help="(default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="(default: %(default)s)")
    p.add_argument("--evals", type=int, default=10, help="evaluations during the run (default: %(default)s)")
    p.add_argument("--checkpoint", type=Path, default=None, help="save here; resume from here if it exists")
    p.add_argument("--checkpoint-every", type=int, default=None, help="steps between checkpoints (default: 10 a run)")
    p.add_argument("--history", type=Path, default=None, help="write the history here as JSON (rank 0)")
    p.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="cuda (one GPU per process, nccl) or cpu (gloo); auto: cuda if available (default: %(default)s)",
    )
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads per process (default: torch's)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    for name in ("steps", "batch_size", "test_size", "d_model", "heads", "layers", "d_ff", "evals"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    return args


def task_kw(task: str) -> dict:
    """The task's keywords: one shared vocabulary (shared embeddings, and the LM needs it)."""
    return {"shared_vocab": True} if task == "dates" else {}


def build_model(args: argparse.Namespace, vocab_size: int) -> nn.Module:
    """The chapter-7 Transformer (shared, tied embeddings) or a decoder-only LM of the same width."""
    if args.model == "transformer":
        config = TransformerConfig(
            vocab_size, vocab_size, d_model=args.d_model, n_heads=args.heads, n_encoder_layers=args.layers,
            n_decoder_layers=args.layers, d_ff=args.d_ff, dropout=args.dropout, share_embeddings=True,
            tie_output=True,
        )  # fmt: skip
        return Transformer(config)
    config = LMConfig(
        vocab_size, d_model=args.d_model, n_heads=args.heads, n_layers=args.layers, d_ff=args.d_ff,
        dropout=args.dropout, max_len=128,
    )  # fmt: skip
    return DecoderOnlyLM(config)


def main(argv: Sequence[str] | None = None) -> History:
    """Run the command line ``argv``; return the history (the same on every rank)."""
    args = parse_args(argv)
    device = distributed.init(None if args.device == "auto" else args.device)  # joins torchrun's group, if any
    try:
        if args.threads is not None:
            torch.set_num_threads(args.threads)
        seed_everything(args.seed)
        kw = task_kw(args.task)
        data: Seq2SeqDataset | TaskStream
        if args.train_size is None:
            data = TaskStream(args.task, args.batch_size, seed=args.seed, **kw)
        else:
            data = make_task(args.task, args.train_size, seed=args.seed, **kw)
        # the test set's seed is far from every run's training seed (2**31 + seed, as the chapters')
        test_set = make_task(args.task, args.test_size, seed=2**31 + args.seed, **kw)
        model = build_model(args, len(data.src_vocab)).to(device)
        lm = args.model == "lm"
        optimizer = None  # train's default: Adam, betas (0.9, 0.98), eps 1e-9
        if args.optimizer == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        history = train(
            model,
            data,
            steps=args.steps,
            batch_size=args.batch_size,
            loss_fn=lm_loss if lm else seq2seq_loss,
            optimizer=optimizer,
            lr=args.lr,
            schedule=args.schedule,
            warmup_steps=args.warmup_steps,
            eval_fn=lambda m: evaluate(m, test_set, lm=lm),
            eval_every=max(1, args.steps // args.evals),
            checkpoint=args.checkpoint,
            checkpoint_every=args.checkpoint_every,
            progress=not args.quiet,
            desc=f"{args.model} on {args.task}, {distributed.world_size()} process(es)",
        )
        if distributed.rank() == 0:
            if history.evals:
                last = history.evals[-1]
                print(f"step {last['step']}: " + ", ".join(f"{k} {v:.4f}" for k, v in last.items() if k != "step"))
            if args.history is not None:
                record = {**asdict(history), "world_size": distributed.world_size(), "device": str(device)}
                args.history.write_text(json.dumps(record))
        return history
    finally:
        distributed.shutdown()


if __name__ == "__main__":
    main()
