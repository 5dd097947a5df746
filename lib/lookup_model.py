r"""Chapter 4's model for the linked-list task: two look-ups per token, two colour read-outs.

The task, its batches and the measurements of what the heads do are in :mod:`lib.training.lookup`;
this module holds only the model (lib's encoder layers, three field embeddings, two read-outs).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .model.checks import check_int, check_tensor
from .model.layers import EncoderLayer


class LinkedListModel(nn.Module):
    r"""Encoder layers of ``lib`` on the linked list, with one read-out per colour.

    .. math::
        x_i = E_{\mathrm{name}}[a_i] + E_{\mathrm{pointer}}[p_i] + E_{\mathrm{colour}}[c_i], \qquad
        h = \mathrm{LayerNorm}(\mathrm{Layers}(x)), \qquad
        \mathrm{logit}_i(c, c') = w^{\mathrm{next}}_c \cdot h_i + w^{\mathrm{prev}}_{c'} \cdot h_i

    No positional encoding: the nodes are a set, their order in the sequence means nothing.
    ``forward(fields [B, T, 3]) -> logits [B, T, n_colours²]`` (class ``c · n_colours + c'``); the
    forward checks the fields' type and shape, not their values, so it runs under ``torch.vmap``.
    The layers are pre-LN :class:`~lib.model.layers.EncoderLayer` without dropout, ``d_ff = 4 d_model``.
    """

    def __init__(
        self,
        d_model: int = 32,
        n_heads: int = 2,
        n_layers: int = 1,
        n_names: int = 16,
        n_colours: int = 16,
        d_ff: int | None = None,
    ):
        super().__init__()
        for name, value in (
            ("d_model", d_model),
            ("n_heads", n_heads),
            ("n_layers", n_layers),
            ("n_names", n_names),
            ("n_colours", n_colours),
        ):
            check_int(name, value, minimum=1)
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_names, self.n_colours = n_names, n_colours
        self.name_embed = nn.Embedding(n_names, d_model)
        self.pointer_embed = nn.Embedding(n_names, d_model)
        self.colour_embed = nn.Embedding(n_colours, d_model)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, n_heads, d_ff or 4 * d_model, dropout=0.0, norm_first=True) for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.next_readout = nn.Linear(d_model, n_colours)
        self.prev_readout = nn.Linear(d_model, n_colours)

    def check_fields(self, fields: Tensor) -> Tensor:
        """``fields`` checked as the model reads them: a long tensor ``[B, T, 3]`` whose names and
        pointers are ids in ``[0, n_names)`` and colours in ``[0, n_colours)``. This reads the ids'
        values (a sync with the device), so the evaluation functions call it once per batch, never
        ``forward``."""
        self._check_shape(fields)
        names, pointers, colours = fields.unbind(dim=-1)
        for what, ids, n in (("name", names, self.n_names), ("pointer", pointers, self.n_names), ("colour", colours, self.n_colours)):  # fmt: skip
            if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n):
                raise ValueError(f"fields: {what} ids must lie in [0, {n}), got {int(ids.min())}..{int(ids.max())}")
        return fields

    @staticmethod
    def _check_shape(fields: Tensor) -> None:
        """Type and shape only: a long tensor ``[B, T, 3]`` (no values read, so no sync)."""
        check_tensor("fields", fields)
        if fields.dim() != 3 or fields.size(-1) != 3 or fields.dtype != torch.long:
            raise ValueError(
                f"fields must be a long tensor [B, T, 3] (name, pointer, colour), "
                f"got {tuple(fields.shape)} {fields.dtype}"
            )

    def readouts(self, fields: Tensor) -> tuple[Tensor, Tensor]:
        """The two read-outs: the next colour's and the previous colour's logits, ``[B, T, n_colours]`` each."""
        self._check_shape(fields)
        # Only type and shape are checked: reading the ids' values here would sync with the device
        # and keep lib.train_ensemble from batching several models' own batches (`check_fields` does).
        names, pointers, colours = fields.unbind(dim=-1)
        x = self.name_embed(names) + self.pointer_embed(pointers) + self.colour_embed(colours)
        for layer in self.layers:
            x = layer(x)
        h = self.norm(x)
        return self.next_readout(h), self.prev_readout(h)

    def forward(self, fields: Tensor) -> Tensor:
        next_logits, prev_logits = self.readouts(fields)
        scores = next_logits[..., :, None] + prev_logits[..., None, :]  # [B, T, N, N]
        return scores.flatten(-2)
