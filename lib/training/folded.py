r"""M models as one module, *stacked by hand*: the models' rows share one batch, ``[M·B, ...]``.

:func:`~lib.training.ensemble.train_ensemble` trains M copies of one architecture at once. For most
models it need not ``vmap`` anything: the parts of a model that hold weights are few (linear layers,
layer norms, embeddings, learned positions), and everything between them (attention, softmax,
activations, residual sums, dropout) treats each row of the batch on its own. So the M models can
run as **one** model on a batch of M·B rows, rows ``m·B … m·B + B - 1`` being model ``m``'s, with
only the weighted layers replaced by stacked ones that give each block of rows its model's weights:

.. math::
    Y_m = X_m W_m^\top + b_m \quad (m = 1 \dots M), \qquad \text{one } \texttt{baddbmm} \text{ on } [M, B \cdot T, d]

Everything else runs once, on M times the rows, with PyTorch's ordinary kernels (the fused attention
kernel included). On a CPU that is faster than ``vmap``, whose batched kernels are slower than
ordinary ones at toy sizes; on a GPU it fills the device the same way.

Relative positions fold too: their tables ``a^K, a^V`` are indexed by distance, not by row, so the folded
tables are ``[M, T_q, T_k, d_head]`` and the attention reads model m's tables on model m's rows.

A model folds only if every module that holds weights is one of the kinds above, every module of
PyTorch's it contains treats the rows of a batch one by one (a batch norm, whose statistics are taken
over the rows, does not: :data:`ROW_WISE` lists the modules that do), and its buffers are equal in
all M models; :func:`fold` returns ``None`` otherwise, and the ensemble uses ``vmap``. Modules of
``lib`` and of your own are taken to treat rows one by one; before training, the ensemble checks
that the folded model gives each model its own loss, and that a training step writes no buffer.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import types
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..model.attention import RelativeMultiHeadAttention
from ..model.masks import causal_mask, masked_softmax
from ..model.positions import LearnedPositionalEmbedding, RelativePositionEmbedding

# The modules with weights that fold (learned positions through their embedding). A model containing
# any other module with weights of its own (an LSTM, a raw nn.Parameter, ...) is not folded.
_LEAVES = (nn.Linear, nn.LayerNorm, nn.Embedding, LearnedPositionalEmbedding)

# PyTorch's modules without weights that treat every row of a batch on its own: containers, dropout
# (each row its own mask), elementwise activations. Any other module of PyTorch's (a batch norm, whose
# statistics mix the rows; a softmax over dimension 0) keeps a model from folding.
ROW_WISE = (
    nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d,
    nn.Dropout3d, nn.AlphaDropout, nn.ReLU, nn.GELU, nn.SiLU, nn.Tanh, nn.Sigmoid, nn.LeakyReLU, nn.ELU,
    nn.Mish, nn.Softplus, nn.Hardtanh, nn.ReLU6, nn.Softmax, nn.LogSoftmax, nn.GLU, nn.Flatten,
)  # fmt: skip


def _row_wise(module: nn.Module) -> bool:
    """Whether ``module`` treats the rows of a batch one by one, as far as its kind tells: a module of
    PyTorch's must be a leaf with weights or one of :data:`ROW_WISE` (a softmax, GLU or flatten not over
    dimension 0); any other module (``lib``'s, yours) is taken to."""
    if not type(module).__module__.startswith("torch."):
        return True
    if isinstance(module, _LEAVES):
        return True
    if not isinstance(module, ROW_WISE):
        return False
    dim = getattr(module, "start_dim", getattr(module, "dim", -1))
    return dim is not None and dim != 0


class NotFoldable(RuntimeError):
    """The model or the loss function does something the folded model cannot do (the ensemble uses ``vmap``)."""


class _Rows:
    """What the folded layers need to know: M, and whether they run all models' rows or model ``m`` alone."""

    def __init__(self, n_models: int):
        self.n_models = n_models
        self.n_rows = 0  # M·B, the rows of this step's batch
        self.model: int | None = None  # None: all rows; m: model m's rows alone

    def split(self, x: Tensor, keep: int) -> Tensor:
        """``x [M·B, ...]`` as ``[M, …, *x.shape[-keep:]]``: one block per model, the last ``keep`` dims kept."""
        if x.dim() <= keep or x.size(0) != self.n_rows:
            raise NotFoldable(
                f"a weighted layer got a tensor of shape {tuple(x.shape)}, not the batch's {self.n_rows} rows"
            )
        return x.reshape(self.n_models, -1, *x.shape[x.dim() - keep :])


class FoldedLinear(nn.Module):
    """``y = x W_mᵀ + b_m`` for the rows of model m: ``weight [M, out, in]``, ``bias [M, out]``."""

    def __init__(self, weight: Tensor, bias: Tensor | None, rows: _Rows):
        super().__init__()
        self.weight, self.bias, self.rows = weight, bias, rows

    def forward(self, x: Tensor) -> Tensor:
        m = self.rows.model
        if m is not None:
            return F.linear(x, self.weight[m], None if self.bias is None else self.bias[m])
        blocks = self.rows.split(x, keep=1)  # [M, B·T, in]
        w = self.weight.transpose(1, 2)  # [M, in, out]
        y = torch.bmm(blocks, w) if self.bias is None else torch.baddbmm(self.bias.unsqueeze(1), blocks, w)
        return y.view(*x.shape[:-1], y.size(-1))


class FoldedLayerNorm(nn.Module):
    """Layer norm with model m's gain and bias on model m's rows: ``weight, bias [M, *normalized_shape]``."""

    def __init__(self, weight: Tensor | None, bias: Tensor | None, shape: tuple[int, ...], eps: float, rows: _Rows):
        super().__init__()
        self.weight, self.bias, self.shape, self.eps, self.rows = weight, bias, shape, eps, rows

    def forward(self, x: Tensor) -> Tensor:
        m = self.rows.model
        if m is not None:
            pick = lambda t: None if t is None else t[m]  # noqa: E731
            return F.layer_norm(x, self.shape, pick(self.weight), pick(self.bias), self.eps)
        y = self.rows.split(F.layer_norm(x, self.shape, None, None, self.eps), keep=len(self.shape))
        gain = None if self.weight is None else self.weight.unsqueeze(1)  # [M, 1, *shape]
        shift = None if self.bias is None else self.bias.unsqueeze(1)
        if gain is not None and shift is not None:
            y = torch.addcmul(shift, y, gain)
        elif gain is not None:
            y = y * gain
        elif shift is not None:
            y = y + shift
        return y.reshape(x.shape)


class FoldedEmbedding(nn.Module):
    """Model m's table for model m's rows of ids: ``weight [M, V, d]``, looked up as one table ``[M·V, d]``,
    id ``i`` of model m at row ``m·V + i``. An id outside ``[0, V)`` becomes ``-1``, which ``F.embedding``
    refuses (``IndexError``) as model m alone refuses the id, rather than row ``i − V`` of model m+1's table."""

    def __init__(self, weight: Tensor, rows: _Rows):
        super().__init__()
        self.weight, self.rows = weight, rows

    def forward(self, ids: Tensor) -> Tensor:
        m = self.rows.model
        if m is not None:
            return F.embedding(ids, self.weight[m])
        M, V = self.weight.shape[:2]
        offsets = torch.arange(M, device=ids.device).unsqueeze(1) * V  # model m's rows read rows m·V …
        own = self.rows.split(ids, keep=0).flatten(1)  # [M, B·T]
        flat = torch.where((own >= 0) & (own < V), own + offsets, -1)  # no host sync: the lookup checks
        return F.embedding(flat, self.weight.flatten(0, 1)).view(*ids.shape, -1)


class FoldedLearnedPositions(nn.Module):
    """:class:`~lib.model.positions.LearnedPositionalEmbedding` with model m's table ``P_m`` on its rows."""

    def __init__(self, table: Tensor, rows: _Rows):
        super().__init__()
        self.table, self.rows, self.max_len = table, rows, table.size(1)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        if offset + x.size(1) > self.max_len:
            raise ValueError(f"sequence of length {x.size(1)} at offset {offset} is longer than max_len={self.max_len}")
        span = self.table[:, offset : offset + x.size(1)]  # [M, T, d]
        if self.rows.model is not None:
            return x + span[self.rows.model]
        return (self.rows.split(x, keep=2) + span.unsqueeze(1)).view(x.shape)


class FoldedRelativePositions(nn.Module):
    """:class:`~lib.model.positions.RelativePositionEmbedding` with model m's tables: ``forward(T_q, T_k)``
    gives ``(a_K, a_V)``, each ``[M, T_q, T_k, d_head]`` (``[T_q, T_k, d_head]`` when one model runs alone)."""

    def __init__(self, key: Tensor, value: Tensor, table_rows: Callable[[int, int], Tensor], rows: _Rows):
        super().__init__()
        self.key, self.value, self.rows = key, value, rows
        self.table_rows = table_rows  # RelativePositionEmbedding.rows of the module this replaces

    def forward(self, T_q: int, T_k: int) -> tuple[Tensor, Tensor]:
        index = self.table_rows(T_q, T_k)  # [T_q, T_k]
        m = self.rows.model
        if m is not None:
            return self.key[m][index], self.value[m][index]
        return self.key[:, index], self.value[:, index]


def _folded_relative_attend(self, q, k, v, mask, is_causal, need_weights):
    r""":meth:`RelativeMultiHeadAttention.attend <lib.model.attention.RelativeMultiHeadAttention.attend>` on
    M·B rows, model m's tables ``a^K_m, a^V_m`` on model m's rows (``q, k, v [M·B, H, T, d_head]``):
    :math:`e_{ij} = q_i \cdot (k_j + a^K_{ij}) / \sqrt{d_k}`, :math:`z_i = \sum_j \alpha_{ij} (v_j + a^V_{ij})`."""
    a_k, a_v = self.relative(q.size(-2), k.size(-2))
    if a_k.dim() == 3:  # one model alone: its own tables
        return RelativeMultiHeadAttention.attend(self, q, k, v, mask, is_causal, need_weights)
    M = a_k.size(0)
    mask = causal_mask(q.size(-2), q.device) if is_causal else mask
    by_model = lambda t: t.unflatten(0, (M, -1))  # noqa: E731  [M·B, ...] -> [M, B, ...]
    position_scores = torch.einsum("mbhqd,mqkd->mbhqk", by_model(q), a_k).flatten(0, 1)
    alpha = masked_softmax((q @ k.transpose(-2, -1) + position_scores) * self.scale, mask)
    dropped = F.dropout(alpha, self.dropout) if self.training and self.dropout > 0 else alpha
    position_values = torch.einsum("mbhqk,mqkd->mbhqd", by_model(dropped), a_v).flatten(0, 1)
    return dropped @ v + position_values, alpha


class Folded:
    """The M models folded into one: ``losses(batch) -> [M]``. Its folded layers hold the stacked
    parameters ``[M, ...]`` that :func:`fold` was given, and train them in place."""

    def __init__(self, template: nn.Module, rows: _Rows, loss_fn: Callable, loss_kw: dict):
        self.template, self.rows, self.loss_fn, self.loss_kw = template, rows, loss_fn, loss_kw
        self.module = template  # what the ensemble switches between train() and eval()

    def losses(self, batch, per_model: bool) -> Tensor:
        """Model m's loss on its batch (the shared one, or row m of a stacked ``[M, B, ...]`` one), ``[M]``.

        ``loss_fn`` runs twice over: once on the batch of all M·B rows, only to see what it gives the
        model (it is stopped at the call), then once per model on that model's output rows.
        """
        M = self.rows.n_models
        tensors = {k: v for k, v in vars(batch).items() if isinstance(v, Tensor)}
        if per_model:
            every_row = {k: v.flatten(0, 1) for k, v in tensors.items()}
        else:
            every_row = {k: v.repeat(M, *[1] * (v.dim() - 1)) for k, v in tensors.items()}
        own = model_batches(batch, M, per_model)
        self.rows.n_rows = next(iter(every_row.values())).size(0)
        call = _Call(self.template)
        with contextlib.suppress(_Called):
            self.loss_fn(call, type(batch)(**every_row, pad_id=batch.pad_id), **self.loss_kw)
        if call.method is None:
            raise NotFoldable("loss_fn did not call the model")
        out = _per_model(getattr(self.template, call.method)(*call.args, **call.kwargs), M)  # all M models, one pass
        losses = []
        try:
            for m in range(M):
                self.rows.model = m
                losses.append(self.loss_fn(_ModelRows(self.template, call.method, out[m]), own[m], **self.loss_kw))
        finally:
            self.rows.model = None
        return torch.stack(losses)

    @torch.no_grad()
    def keeps_buffers(self, batch, per_model: bool) -> bool:
        """Whether a forward pass in training mode leaves every buffer as it was. The folded model holds
        one copy of each buffer for all M models, so one that a forward pass writes (a running
        statistic) cannot fold. The pass runs with the random state set aside (dropout draws from it)."""
        before = [b.clone() for b in self.template.buffers()]
        with torch.random.fork_rng(devices=[b.device for b in before if b.device.type == "cuda"][:1]):
            self.losses(batch, per_model)
        return all(torch.equal(a, b) for a, b in zip(before, self.template.buffers()))


def model_batches(batch, n_models: int, per_model: bool) -> list:
    """Model m's batch: the shared one, or row m of the stacked ``[M, B, ...]`` one."""
    if not per_model:
        return [batch] * n_models
    tensors = {k: v for k, v in vars(batch).items() if isinstance(v, Tensor)}
    return [type(batch)(**{k: v[m] for k, v in tensors.items()}, pad_id=batch.pad_id) for m in range(n_models)]


class _Called(BaseException):
    """Raised by :class:`_Call` to stop ``loss_fn`` at its call of the model (a ``BaseException``, so
    that a loss function's own ``except Exception`` does not swallow it)."""


def _is_method(value: object) -> bool:
    """A bound method of the model (``model.readouts``), not a layer (``model.embed``)."""
    return inspect.ismethod(value) and not isinstance(value, nn.Module)


class _Call:
    """Stands for the model in ``loss_fn``'s first run: its layers and attributes, and a call of the
    model, or of one of its methods, that is recorded (``method``, ``args``, ``kwargs``)."""

    def __init__(self, model: nn.Module):
        self._model, self.method, self.args, self.kwargs = model, None, None, None

    def __getattr__(self, name: str):
        value = getattr(self._model, name)
        return functools.partial(self._record, name) if _is_method(value) else value

    def __call__(self, *args, **kwargs):
        self._record("__call__", *args, **kwargs)

    def _record(self, method: str, *args, **kwargs):
        self.method, self.args, self.kwargs = method, args, kwargs
        raise _Called


class _ModelRows:
    """Stands for model m in ``loss_fn``'s second run: its layers and attributes, and the recorded call,
    which returns model m's rows of the output."""

    def __init__(self, model: nn.Module, method: str, out):
        self._model, self._method, self._out = model, method, out

    def __getattr__(self, name: str):
        value = getattr(self._model, name)
        if not _is_method(value):
            return value
        if name != self._method:
            raise NotFoldable(f"loss_fn called model.{name} after model.{self._method}")
        return self._rows

    def __call__(self, *args, **kwargs):
        if self._method != "__call__":
            raise NotFoldable(f"loss_fn called the model after model.{self._method}")
        return self._rows(*args, **kwargs)

    def _rows(self, *args, **kwargs):
        out, self._out = self._out, None  # one call per model
        if out is None:
            raise NotFoldable("loss_fn called the model twice")
        B = next(t for t in ([out] if isinstance(out, Tensor) else out) if isinstance(t, Tensor)).size(0)
        if any(isinstance(a, Tensor) and a.dim() and a.size(0) != B for a in [*args, *kwargs.values()]):
            raise NotFoldable("loss_fn gave one model other inputs than it gave all (not B of the M·B rows)")
        return out


def _per_model(out, n_models: int) -> list:
    """The output for all M·B rows as M outputs of B rows (``unbind``: its backward is one ``stack``)."""
    if isinstance(out, Tensor):
        return list(out.unflatten(0, (n_models, -1)).unbind(0))
    if isinstance(out, (tuple, list)):
        parts = [_per_model(t, n_models) if isinstance(t, Tensor) else [t] * n_models for t in out]
        return [type(out)(p[m] for p in parts) for m in range(n_models)]
    raise NotFoldable(f"the model returned a {type(out).__name__}; folding needs a tensor or a tuple of tensors")


def why_not(template: nn.Module, buffers: dict[str, Tensor]) -> str | None:
    """Why the architecture of ``template`` (with the models' stacked ``buffers``) does not fold, in
    words, or ``None`` if nothing in it keeps it from folding (see the module's docstring)."""
    weighted = [m for m in template.modules() if any(True for _ in m.parameters(recurse=False))]
    if other := next((m for m in weighted if not isinstance(m, _LEAVES)), None):
        return f"it holds weights in a {type(other).__name__}, not only in linear layers, layer norms and embeddings"
    if mixer := next((m for m in template.modules() if not _row_wise(m)), None):
        return f"its {type(mixer).__name__} is a module of PyTorch's that may mix the rows of a batch"
    if any(isinstance(m, RelativePositionEmbedding) and not isinstance(parent, RelativeMultiHeadAttention)
           for parent in template.modules() for m in parent.children()):  # fmt: skip
        return "its relative position tables are used by something other than lib's relative attention"
    if any(isinstance(m, nn.Embedding) and (m.padding_idx is not None or m.max_norm is not None or m.sparse)
           for m in weighted):  # fmt: skip
        return "an embedding has a padding_idx, a max_norm or sparse gradients"
    if any(not torch.equal(b, b[:1].expand_as(b)) for b in buffers.values()):  # the template keeps model 0's
        return "its buffers differ between the models (the folded model holds one copy of each)"
    return None


def fold(
    models: list[nn.Module],
    template: nn.Module,
    params: dict[str, Tensor],
    buffers: dict[str, Tensor],
    loss_fn: Callable,
    loss_kw: dict,
) -> Folded | None:
    """The M ``models`` as one :class:`Folded` model built on ``template`` (a copy of ``models[0]``,
    modified here), or ``None`` if the architecture does not fold (:func:`why_not` says why, but for a
    weight used outside the layers that fold).

    ``params`` and ``buffers`` are the models' stacked parameters and buffers, ``[M, ...]``, by name
    (``torch.func.stack_module_state``): the folded layers train ``params`` in place."""
    if why_not(template, buffers) is not None:
        return None
    by_id = {id(p): name for name, p in template.named_parameters()}
    rows = _Rows(len(models))

    def stacked(p: Tensor | None) -> Tensor | None:
        return None if p is None else params[by_id[id(p)]]

    for parent in list(template.modules()):
        if isinstance(parent, RelativePositionEmbedding):
            continue  # folded as a whole, below
        for child_name, child in list(parent._modules.items()):  # every name, aliases too (a shared embedding)
            if isinstance(child, RelativePositionEmbedding):
                new = FoldedRelativePositions(stacked(child.key.weight), stacked(child.value.weight), child.rows, rows)
                parent.attend = types.MethodType(_folded_relative_attend, parent)
            elif isinstance(child, LearnedPositionalEmbedding):
                new = FoldedLearnedPositions(stacked(child.embedding.weight), rows)
            elif isinstance(child, nn.Linear):
                new = FoldedLinear(stacked(child.weight), stacked(child.bias), rows)
            elif isinstance(child, nn.LayerNorm):
                new = FoldedLayerNorm(
                    stacked(child.weight), stacked(child.bias), child.normalized_shape, child.eps, rows
                )
            elif isinstance(child, nn.Embedding):
                new = FoldedEmbedding(stacked(child.weight), rows)
            else:
                continue
            setattr(parent, child_name, new)
    if any(True for _ in template.parameters()):  # a weight used outside the layers above
        return None
    return Folded(template, rows, loss_fn, loss_kw)
