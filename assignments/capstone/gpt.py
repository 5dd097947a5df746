"""The capstone: a GPT from scratch, in plain PyTorch.

Complete every function and method marked ``# YOUR CODE HERE``, task by task, in the order of the
notebook ``capstone.ipynb``, which checks each task against the book's ``lib``.

Rules (the grading checks them):

- do not import ``lib``: this module is yours, and ``lib`` is what it is compared with;
- do not use ``torch.nn.MultiheadAttention`` or ``torch.nn.functional.scaled_dot_product_attention``:
  write attention out; ``nn.Linear``, ``nn.Embedding``, ``nn.LayerNorm``, ``F.gelu`` and tensor
  operations are fine;
- keep the names, signatures and submodule names given here: the tests load ``lib``'s weights into
  your modules with ``load_state_dict(strict=True)``;
- later classes call the earlier functions by their names here (``attention``, ``causal_mask``, ...):
  each task is graded with ``lib``'s versions of the earlier tasks swapped in where possible, so a
  mistake costs the points of one task, not of every task after it.

Masks are boolean and ``True`` means "this query may attend to this key", as in ``lib``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

# ---------------------------------------------------------------------------------------------
# Task 1: attention


def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Scaled dot-product attention, written out.

    ``q [..., T_q, d_k]``, ``k [..., T_k, d_k]``, ``v [..., T_k, d_v]``, ``mask`` bool broadcasting to
    ``[..., T_q, T_k]`` (``True`` = may attend) or ``None``. Returns ``(out [..., T_q, d_v], weights
    [..., T_q, T_k])`` with ``weights = softmax(q kᵀ / √d_k)`` over the allowed keys. A query with no
    allowed key gets all-zero weights and a zero output (not NaN).
    """
    ### BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # [..., T_q, T_k]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # a fully masked row: 0, not NaN
    return weights @ v, weights
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 2: masks


def causal_mask(T: int, device: torch.device | str | None = None) -> Tensor:
    """``[T, T]`` bool: query ``i`` may attend to keys ``j <= i``."""
    ### BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
    ### END SOLUTION


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """``[B, 1, 1, T]`` bool from ``tokens [B, T]``: ``True`` where the key is not padding."""
    ### BEGIN SOLUTION
    return (tokens != pad_id)[:, None, None, :]
    ### END SOLUTION


def cache_mask(P: int, C: int, device: torch.device | str | None = None) -> Tensor:
    """``[C, P + C]`` bool for ``C`` new queries after ``P`` cached positions: new token ``i`` (at
    absolute position ``P + i``) may attend to keys ``j <= P + i``."""
    ### BEGIN SOLUTION
    return torch.ones(C, P + C, dtype=torch.bool, device=device).tril(diagonal=P)
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 3: multi-head attention (with a key/value cache)


class KVCache:
    """The keys and values of the positions seen so far, for one attention layer (given)."""

    def __init__(self):
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.size(-2)

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append ``k, v [B, H, T_new, d_head]``; return all keys and values so far."""
        self.k = k if self.k is None else torch.cat([self.k, k], dim=-2)
        self.v = v if self.v is None else torch.cat([self.v, v], dim=-2)
        return self.k, self.v


class MultiHeadAttention(nn.Module):
    r"""``MultiHead(Q, K, V) = [head_1; …; head_H] W^O``, ``head_h = attention(Q W^Q_h, K W^K_h, V W^V_h)``.

    Submodules ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj`` (as in ``lib.MultiHeadAttention``).
    ``forward(query [B, T_q, d], key [B, T_k, d], value [B, T_k, d], mask=None, cache=None)`` returns
    ``(out [B, T_q, d], weights [B, H, T_q, T_k])``; ``mask`` broadcasts to ``[B, H, T_q, T_k]``.
    With a ``cache``, the new keys and values are appended to it first and the queries attend to all
    of them (the caller passes the matching mask, e.g. ``cache_mask``). Use ``attention``.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, cache: KVCache | None = None
    ) -> tuple[Tensor, Tensor]:
        ### BEGIN SOLUTION
        def split(x: Tensor) -> Tensor:  # [B, T, d] -> [B, H, T, d_head]
            return x.view(x.size(0), x.size(1), self.n_heads, self.d_head).transpose(1, 2)

        q, k, v = split(self.q_proj(query)), split(self.k_proj(key)), split(self.v_proj(value))
        if cache is not None:
            k, v = cache.update(k, v)
        out, weights = attention(q, k, v, mask)  # [B, H, T_q, d_head]
        out = out.transpose(1, 2).reshape(query.size(0), query.size(1), self.d_model)
        return self.out_proj(out), weights
        ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 4: positions


def sinusoidal_table(n_positions: int, d_model: int) -> Tensor:
    r"""``[n_positions, d_model]``: ``PE(p)_{2i} = sin(p ω_i)``, ``PE(p)_{2i+1} = cos(p ω_i)``, ``ω_i = 10000^{-2i/d}``."""
    ### BEGIN SOLUTION
    p = torch.arange(n_positions, dtype=torch.float64)[:, None]
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(p * omega)
    table[:, 1::2] = torch.cos(p * omega)
    return table.float()
    ### END SOLUTION


class LearnedPositions(nn.Module):
    """A learned vector per position: ``forward(x [B, T, d], offset=0) -> x + P[offset : offset + T]``.

    Submodule ``embedding = nn.Embedding(max_len, d_model)`` (as in ``lib.LearnedPositionalEmbedding``).
    """

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        ### BEGIN SOLUTION
        positions = torch.arange(offset, offset + x.size(1), device=x.device)
        return x + self.embedding(positions)
        ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 5: feed-forward, a pre-LN block, the decoder-only LM


class FeedForward(nn.Module):
    """``FFN(x) = GELU(x W_1 + b_1) W_2 + b_2``, submodules ``linear1``, ``linear2``."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: Tensor) -> Tensor:
        ### BEGIN SOLUTION
        return self.linear2(F.gelu(self.linear1(x)))
        ### END SOLUTION


class Block(nn.Module):
    """A pre-LN block: ``x + SelfAttn(LN₁(x))``, then ``+ FFN(LN₂(·))``.

    Submodules ``self_attn``, ``ff``, ``norm1``, ``norm2`` (as in ``lib``'s ``EncoderLayer``).
    ``forward(x [B, T, d], mask=None, cache=None) -> [B, T, d]``.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.ff = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: Tensor, mask: Tensor | None = None, cache: KVCache | None = None) -> Tensor:
        ### BEGIN SOLUTION
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask, cache=cache)[0]
        return x + self.ff(self.norm2(x))
        ### END SOLUTION


class GPT(nn.Module):
    r"""A decoder-only LM: ``logits = LN(Blocks(E[w] √d + P)) Eᵀ`` with the causal mask.

    Submodules ``embed``, ``position`` (``LearnedPositions``), ``layers`` (``Block`` s), ``norm`` and
    ``out_proj`` (tied to ``embed``): the state-dict keys of ``lib.DecoderOnlyLM``.
    ``forward(tokens [B, T], cache=None) -> logits [B, T, V]``. With a cache (``new_cache()``, one
    ``KVCache`` per block) the tokens continue the cached positions: they sit at positions
    ``len(cache[0])`` onwards.
    """

    def __init__(self, vocab_size: int, d_model: int, n_heads: int, n_layers: int, d_ff: int, max_len: int):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = LearnedPositions(max_len, d_model)
        self.layers = nn.ModuleList(Block(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.out_proj = nn.Linear(d_model, vocab_size, bias=False)
        nn.init.normal_(self.embed.weight, std=d_model**-0.5)
        self.out_proj.weight = self.embed.weight

    def new_cache(self) -> list[KVCache]:
        return [KVCache() for _ in self.layers]

    def forward(self, tokens: Tensor, cache: list[KVCache] | None = None) -> Tensor:
        ### BEGIN SOLUTION
        P = 0 if cache is None else len(cache[0])
        T = tokens.size(1)
        x = self.position(self.embed(tokens) * math.sqrt(self.d_model), offset=P)
        mask = causal_mask(T, device=tokens.device) if P == 0 else cache_mask(P, T, device=tokens.device)
        for i, layer in enumerate(self.layers):
            x = layer(x, mask=mask, cache=None if cache is None else cache[i])
        return self.out_proj(self.norm(x))
        ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 6: the label-smoothed loss


def smoothed_cross_entropy(logits: Tensor, target: Tensor, epsilon: float, pad_id: int) -> Tensor:
    r"""Mean over the positions with ``target != pad_id`` of ``-Σ_v q_v log p_v``, for ``logits [N, V]``
    and ``target [N]``: ``p = softmax(logits)``; ``q`` puts ``1 - ε + ε/V`` on the target, ``ε/V`` elsewhere."""
    ### BEGIN SOLUTION
    log_p = logits.log_softmax(dim=-1)
    V = logits.size(-1)
    q = torch.full_like(log_p, epsilon / V)
    q.scatter_(1, target[:, None], 1 - epsilon + epsilon / V)
    keep = target != pad_id
    return -(q * log_p).sum(dim=-1)[keep].mean()
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 7: greedy generation, with and without the cache


@torch.no_grad()
def greedy_generate(model: GPT, prompt: Tensor, max_new_tokens: int, use_cache: bool = True) -> Tensor:
    """Append ``max_new_tokens`` tokens to ``prompt [B, T]``, each the argmax of the next-token logits;
    return ``[B, T + max_new_tokens]``. With ``use_cache`` feed the model only the new token at each
    step (after the prompt), with its cache; without, the whole sequence so far. In eval mode."""
    ### BEGIN SOLUTION
    was_training = model.training
    model.eval()
    tokens = prompt
    cache = model.new_cache() if use_cache else None
    for _ in range(max_new_tokens):
        new = tokens if cache is None else tokens[:, len(cache[0]) :]
        next_token = model(new, cache)[:, -1].argmax(dim=-1)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
    model.train(was_training)
    return tokens
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# Task 8: training


def train(model: GPT, batches, steps: int, lr: float = 1e-2, epsilon: float = 0.1) -> list[float]:
    """Train ``model`` with Adam for ``steps`` batches of ``batches`` (an iterator of objects with
    ``input [B, L]``, ``target [B, L]`` and ``pad_id``, like ``lib.LMBatch``), minimising
    ``smoothed_cross_entropy`` of the logits at every position; return the losses."""
    ### BEGIN SOLUTION
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        batch = next(batches)
        logits = model(batch.input)
        loss = smoothed_cross_entropy(logits.flatten(0, 1), batch.target.flatten(), epsilon, batch.pad_id)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
    ### END SOLUTION
