"""Training the model: toy tasks and their batches, the training loop, learning-rate schedules.

:func:`train_ensemble` trains several models of one architecture as one batched computation. The same
loop runs data-parallel under ``torchrun`` (:mod:`lib.training.distributed`), saves and resumes
runs (:mod:`lib.training.checkpoint`), and has a command line (``python -m lib.training.launch``).
"""

from .batching import Batch, LMBatch, Seq2SeqDataset, Vocab, collate, to_lm_batch
from .data import TaskStream, centered_xor_batch, make_task
from .device import default_device, seed_everything
from .ensemble import train_ensemble
from .schedules import make_schedule, noam_lr
from .train import History, evaluate, lm_loss, seq2seq_loss, train
