"""Training the model: toy tasks and their batches, the training loop, learning-rate schedules.

One loop (:mod:`lib.training.loop`) trains one model (:func:`train`) or several models of one
architecture as one batched computation (:func:`train_ensemble`), with the same options
(:class:`TrainingOptions`). It runs data-parallel under ``torchrun`` (:mod:`lib.training.distributed`),
saves and resumes runs (:mod:`lib.training.checkpoint`), and has a command line
(``python -m lib.training.launch``).
"""

from .batching import Batch, LMBatch, Seq2SeqDataset, Vocab, collate, to_lm_batch
from .data import TaskStream, centered_xor_batch, make_task
from .device import default_device, seed_block, seed_everything
from .ensemble import train_ensemble
from .evaluation import evaluate
from .loop import History
from .losses import lm_loss, seq2seq_loss
from .options import TrainingOptions
from .schedules import make_schedule, noam_lr
from .train import train
