r"""Data parallelism: the same :func:`~lib.training.train.train` in every process that ``torchrun`` starts.

``torchrun --nproc_per_node=N`` starts N copies of one script; each copy is a *rank*
``r = 0 … N-1`` and holds a full replica of the model. :func:`init` joins them into one process
group (``gloo`` on CPUs, ``nccl`` on GPUs). Inside :func:`~lib.training.train.train`, when the group
is initialised:

- the model is wrapped in :class:`~torch.nn.parallel.DistributedDataParallel` (:func:`wrap`), which
  averages the gradients of the N replicas during ``backward`` (an all-reduce), so every rank takes
  the same optimizer step;
- every rank trains on its own ``1/N`` of each *global* batch: a
  :class:`~torch.utils.data.DistributedSampler` splits a :class:`~lib.training.batching.Seq2SeqDataset`
  (:func:`dataset_batches`), an endless :class:`~lib.training.data.TaskStream` gets a seed derived
  from the rank (:func:`rank_stream`), and any other batch is cut into N slices of rows (:func:`shard`:
  every rank builds the whole batch and keeps its rows, fine for small generated batches);
- the logged loss is averaged over the ranks (:func:`mean_over_ranks`); rank 0 evaluates, shows the
  progress bar and writes checkpoints; every rank returns rank 0's ``History`` (:func:`broadcast`).

With equally sized shards of the global batch ``B`` (and equal numbers of target tokens in them),
the averaged gradient is the gradient of the whole batch:

.. math::
    \nabla_\theta \frac{1}{N}\sum_{r=0}^{N-1} L_r(\theta)
    = \nabla_\theta L_{B}(\theta), \qquad L_r = \text{mean loss of rank } r\text{'s } B/N \text{ examples},

so N ranks follow one process's loss curve up to float rounding. (When the shards hold different
numbers of target tokens, the ranks average per-rank means, PyTorch's convention, which weighs a
token slightly differently from one process.)

Without an initialised process group every function here is the identity (rank 0 of 1), so
``train`` behaves exactly as in one process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from functools import partial
from itertools import count
from typing import TypeVar

import torch
import torch.distributed as dist
from torch import Tensor, nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from .batching import Batch, LMBatch, Seq2SeqDataset, collate
from .data import TaskStream
from .device import check_seed, derived_seed

T = TypeVar("T")


# ----------------------------------------------------------------------------------------------
# The process group
# ----------------------------------------------------------------------------------------------


def is_distributed() -> bool:
    """Whether this process is one rank of an initialised ``torch.distributed`` process group."""
    return dist.is_available() and dist.is_initialized()


def rank() -> int:
    """This process's rank (0 … world_size - 1); 0 without a process group."""
    return dist.get_rank() if is_distributed() else 0


def world_size() -> int:
    """The number of processes N in the group; 1 without a process group."""
    return dist.get_world_size() if is_distributed() else 1


def init(device_type: str | None = None, timeout_s: float = 600.0) -> torch.device:
    """Join the process group that ``torchrun`` describes, and return this rank's device.

    ``torchrun`` sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``
    for every process it starts. ``device_type`` ``"cuda"`` (the default when CUDA is available)
    gives each process the GPU ``cuda:LOCAL_RANK`` and the ``nccl`` backend; ``"cpu"`` the CPU and
    the ``gloo`` backend. Outside ``torchrun`` (no ``RANK`` in the environment) nothing is
    initialised and the device is returned: ``device_type``'s, or the best available one.
    """
    from .device import default_device

    if device_type not in (None, "cpu", "cuda"):
        raise ValueError(f"device_type must be 'cpu', 'cuda' or None, got {device_type!r}")
    if "RANK" not in os.environ:
        return default_device() if device_type is None else torch.device(device_type)
    if device_type is None:
        device_type = "cuda" if torch.cuda.is_available() else "cpu"
    if not dist.is_available():
        raise RuntimeError("this PyTorch build has no torch.distributed; it cannot run under torchrun")
    device = torch.device("cpu")
    if device_type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    if not is_distributed():
        backend = "nccl" if device_type == "cuda" else "gloo"
        dist.init_process_group(backend, timeout=timedelta(seconds=timeout_s))
    return device


def shutdown() -> None:
    """Leave the process group (if any); call it at the end of a ``torchrun`` script."""
    if is_distributed():
        dist.destroy_process_group()


# ----------------------------------------------------------------------------------------------
# The model, and values shared between ranks
# ----------------------------------------------------------------------------------------------


def wrap(model: nn.Module) -> nn.Module:
    """``DistributedDataParallel(model)`` in a process group, else ``model`` itself.

    DDP broadcasts rank 0's parameters at construction (the replicas start equal), and during
    ``backward`` all-reduces the gradients bucket by bucket, overlapping communication with the rest
    of the backward pass. Only ``wrapped(...)`` (the model's ``forward``) goes through DDP; the
    original module stays reachable as ``wrapped.module``.
    """
    if not is_distributed():
        return model
    device = next(model.parameters()).device
    return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)


def mean_over_ranks(value: Tensor) -> Tensor:
    """The mean of a tensor over the ranks, detached from autograd (without a group: the tensor, detached)."""
    value = value.detach()
    if not is_distributed():
        return value
    total = value.clone()
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total / world_size()


def broadcast(value: T, src: int = 0) -> T:
    """Rank ``src``'s value (any picklable object) on every rank; ``value`` itself without a group."""
    if not is_distributed():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=src)
    return box[0]


def barrier() -> None:
    """Wait until every rank gets here (nothing without a group)."""
    if is_distributed():
        dist.barrier()


# ----------------------------------------------------------------------------------------------
# Each rank's share of the data
# ----------------------------------------------------------------------------------------------


def per_rank(batch_size: int, what: str = "batch_size") -> int:
    """``batch_size / N``: the rows of a global batch that each rank trains on (it must divide)."""
    n = world_size()
    if batch_size % n:
        raise ValueError(f"{what} ({batch_size}) must be divisible by the number of processes ({n})")
    return batch_size // n


def dataset_batches(dataset: Seq2SeqDataset, batch_size: int, seed: int) -> Iterator[Batch]:
    """Endless epochs of this rank's batches of ``dataset``: ``batch_size`` examples per step in all.

    Epoch ``e`` is the permutation ``torch.randperm(n)`` of a generator seeded with ``seed + e``
    (:class:`~torch.utils.data.DistributedSampler`); rank ``r`` takes its elements ``r, r + N,
    r + 2N, …`` and batches them ``batch_size / N`` at a time. So step ``k``'s batches of the N ranks
    together are elements ``kB … (k+1)B - 1`` of the permutation: the batch one process would take.
    (When ``N`` does not divide ``n``, the sampler repeats a few examples so that ranks get equal
    shares.) The last batch of an epoch may be smaller, as in :meth:`Seq2SeqDataset.batches`.
    """
    check_seed("seed", seed)
    sampler = DistributedSampler(dataset, num_replicas=world_size(), rank=rank(), shuffle=True, seed=seed)
    vocab = dataset.tgt_vocab
    loader = DataLoader(
        dataset,
        batch_size=per_rank(batch_size),
        sampler=sampler,
        generator=torch.Generator().manual_seed(seed),  # its own: the global generator is not drawn from
        collate_fn=partial(collate, pad_id=dataset.src_vocab.pad_id, bos_id=vocab.bos_id, eos_id=vocab.eos_id),
    )
    for epoch in count():
        sampler.set_epoch(epoch)
        yield from loader


def rank_stream(stream: TaskStream) -> TaskStream:
    """This rank's stream: ``batch_size / N`` fresh examples a step, from a seed derived from the rank.

    The seed is one number drawn from ``stream`` (the same on every rank, since every rank built
    the same stream) plus the rank, as PyTorch's ``DataLoader`` seeds its workers
    (``base_seed + worker_id``). Drawing it advances ``stream``, so a second call (a second
    ``train`` on the same stream) continues with new examples instead of repeating them.
    Without a process group this is ``stream`` itself, untouched.
    """
    if not is_distributed():
        return stream
    base_seed = stream.rng.getrandbits(62)  # a seed of Python's random.Random, which keeps every bit
    batch_size = per_rank(stream.batch_size, "the TaskStream's batch_size")
    return TaskStream(stream.name, batch_size, seed=base_seed + rank(), device=stream.device, **stream.kw)


def shard(batch: Batch | LMBatch) -> Batch | LMBatch:
    """Rows ``r, r + N, r + 2N, …`` of a global batch: rank ``r``'s share (the batch itself for N = 1)."""
    n, r = world_size(), rank()
    if n == 1:
        return batch
    per_rank(len(batch), "the number of rows of every batch (each rank keeps 1/N of them)")
    if isinstance(batch, Batch):
        return Batch(batch.src[r::n], batch.tgt_in[r::n], batch.tgt_out[r::n], batch.pad_id)
    if isinstance(batch, LMBatch):
        return LMBatch(batch.input[r::n], batch.target[r::n], batch.pad_id)
    raise TypeError(f"a batch to split between ranks must be a Batch or an LMBatch, got {type(batch).__name__}")


def shuffle_seed() -> int:
    """The seed of the shuffle of a data set: the seed the reader gave torch (``lib.seed_everything``).

    ``torch.initial_seed()`` reads it without drawing a random number, so training draws nothing
    from the global generator that the reader's code would otherwise have drawn. A process whose
    torch was never seeded has a random 64-bit seed there: it is reduced into ``[0, 2**32)``
    (:func:`~lib.training.device.derived_seed`; a seed given with ``seed_everything`` is itself).
    In a process group, rank 0's seed is used everywhere, so that every rank shuffles alike.
    """
    return broadcast(derived_seed(torch.initial_seed()))
