"""The measurements: matmul peak, attention paths, cost vs length, training throughput, decoding."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..heads import attention_layers, record_attention
from ..model.attention import MultiHeadAttention
from ..model.layers import EncoderLayer
from ..model.lm import DecoderOnlyLM, LMConfig
from ..model.masks import causal_mask
from ..timing import compare, loglog_slope
from ..training.device import check_seed
from .memory import attend, peak_memories, random_qkv

# The chapter-sized model: a 2-layer decoder-only LM like those the chapters train in seconds.
CHAPTER_LM = dict(vocab_size=64, d_model=128, n_heads=4, n_layers=2, d_ff=512)


def bench_matmul(sizes: list[int], repeats: int, min_seconds: float, device: torch.device) -> dict:
    """FLOP/s of a float32 ``n × n`` matrix product (``2n³`` FLOPs) for each ``n``; the best is the peak."""
    rows = []
    for n in sizes:
        a, b = (torch.randn(n, n, device=device) for _ in range(2))
        out = torch.empty(n, n, device=device)
        seconds = compare({"mm": partial(torch.mm, a, b, out=out)}, repeats, min_seconds, device)["mm"]
        rows.append({"n": n, "seconds": seconds, "flops": 2 * n**3 / seconds})
    best = max(rows, key=lambda row: row["flops"])
    return {"rows": rows, "peak_flops": best["flops"], "peak_n": best["n"]}


def torch_twin(mha: MultiHeadAttention) -> nn.MultiheadAttention:
    """A ``torch.nn.MultiheadAttention(batch_first=True)`` with the same weights as ``mha``."""
    twin = nn.MultiheadAttention(mha.d_model, mha.n_heads, batch_first=True, bias=mha.q_proj.bias is not None)
    twin.to(mha.q_proj.weight.device)
    projections = (mha.q_proj, mha.k_proj, mha.v_proj)
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
        twin.out_proj.weight.copy_(mha.out_proj.weight)
        if twin.in_proj_bias is not None:
            twin.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
            twin.out_proj.bias.copy_(mha.out_proj.bias)
    return twin


def bench_attention(
    configs: list[tuple[int, int, int, int]],
    repeats: int,
    min_seconds: float,
    device: torch.device,
    seed: int = 0,
) -> list[dict]:
    """Self-attention at ``(B, T, d, h)``, without a mask and with the causal mask.

    Ours gets ``mask=causal_mask(T)`` (True = may attend); ``nn.MultiheadAttention`` gets the same
    mask flipped (True = masked out) plus its ``is_causal=True`` hint, its fastest causal path.
    "forward" runs in ``eval()`` mode without gradients (so PyTorch may take its inference fast
    path); "forward+backward" in ``train()`` mode (dropout 0) with a fixed output gradient.  The
    weights and inputs of each configuration are drawn from ``torch.manual_seed(seed)``.
    """
    check_seed("seed", seed)
    rows = []
    for B, T, d, h in configs:
        torch.manual_seed(seed)
        ours = MultiHeadAttention(d, h).to(device)
        twin = torch_twin(ours)
        x = torch.randn(B, T, d, device=device, requires_grad=True)
        grad = torch.randn(B, T, d, device=device)
        for masked in (False, True):
            calls = _attention_calls(ours, twin, x, causal_mask(T, device=device) if masked else None)
            for mode in ("forward", "forward+backward"):
                training = mode == "forward+backward"
                ours.train(training)
                twin.train(training)
                wrap = partial(_with_backward, grad=grad) if training else _no_grad
                fns = {name: wrap(call) for name, call in calls.items()}
                t = compare(fns, repeats, min_seconds, device)
                rows.append(
                    {
                        "B": B,
                        "T": T,
                        "d_model": d,
                        "n_heads": h,
                        "mask": "causal" if masked else "none",
                        "mode": mode,
                        "explicit_s": t["explicit"],
                        "fused_s": t["fused"],
                        "torch_s": t["torch"],
                        "fused_over_torch": t["fused"] / t["torch"],
                        "explicit_over_fused": t["explicit"] / t["fused"],
                    }
                )
    return rows


def _attention_calls(
    ours: MultiHeadAttention, twin: nn.MultiheadAttention, x: Tensor, mask: Tensor | None
) -> dict[str, Callable[[], Tensor]]:
    """Self-attention of ``x`` three ways; ``twin`` gets the mask flipped plus its ``is_causal`` hint."""
    flipped, causal = (None, False) if mask is None else (~mask, True)
    return {
        "explicit": lambda: ours(x, x, x, mask, need_weights=True)[0],
        "fused": lambda: ours(x, x, x, mask, need_weights=False)[0],
        "torch": lambda: twin(x, x, x, attn_mask=flipped, need_weights=False, is_causal=causal)[0],
    }


def _no_grad(call: Callable[[], Tensor]) -> Callable[[], Tensor]:
    def run() -> Tensor:
        with torch.no_grad():
            return call()

    return run


def _with_backward(call: Callable[[], Tensor], grad: Tensor) -> Callable[[], None]:
    return lambda: call().backward(grad)


def bench_scaling(
    B: int, H: int, d_head: int, T: list[int], repeats: int, min_seconds: float, device: torch.device
) -> dict:
    """Forward time and peak memory of explicit vs fused attention for each ``T``, and their log-log slopes.

    All the points are timed in one interleaved :func:`compare`, so that load from elsewhere
    cannot bend the fitted lines.
    """
    inputs = {t: random_qkv(B, H, t, d_head, device) for t in T}
    points = [(method, t) for t in T for method in ("explicit", "fused")]
    times = compare(
        {(m, t): _no_grad(lambda m=m, t=t: attend(m, *inputs[t])) for m, t in points}, repeats, min_seconds, device
    )
    rows = [{"T": t, "explicit_s": times["explicit", t], "fused_s": times["fused", t]} for t in T]
    memories = peak_memories(points, B, H, d_head, device)
    for i, row in enumerate(rows):
        row["explicit_bytes"], row["fused_bytes"] = memories[2 * i], memories[2 * i + 1]
    slopes = {f"{m}_time": loglog_slope(T, [row[f"{m}_s"] for row in rows]) for m in ("explicit", "fused")}
    for m in ("explicit", "fused"):
        mem = [row[f"{m}_bytes"] for row in rows]
        slopes[f"{m}_memory"] = loglog_slope(T, mem) if all(b is not None and b > 0 for b in mem) else None
    return {"B": B, "H": H, "d_head": d_head, "rows": rows, "slopes": slopes}


def training_flops(model: nn.Module, tokens: int, T: int, causal: bool) -> float:
    """FLOPs of one training step (forward + backward) over ``tokens`` tokens of length-``T`` sequences.

    The usual count (Kaplan et al., 2020): a weight used in a matrix product costs 2 FLOPs per
    token forward and 4 backward, so ``6 · (weights of every nn.Linear)`` per token; attention adds
    ``QKᵀ`` and ``AV``, ``4 · T_k · d_model`` per token and layer forward, ×3 with the backward,
    where a causal query attends on average to ``T_k = (T + 1) / 2`` keys.  Embedding look-ups,
    norms, softmax and the optimizer are not counted (they are not matrix products).
    """
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))
    t_k = (T + 1) / 2 if causal else T
    attention = sum(12 * t_k * m.d_model for m in attention_layers(model).values())
    return float(tokens * (6 * linear + attention))


def _train_step(
    model: nn.Module, loss_fn: Callable[[], Tensor], optimizer: torch.optim.Optimizer
) -> Callable[[], None]:
    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        loss_fn().backward()
        optimizer.step()

    return step


def bench_training(
    lm: dict, layer: dict, matmul_n: int, repeats: int, min_seconds: float, device: torch.device, seed: int = 0
) -> list[dict]:
    """Tokens per second of an Adam training step, and the achieved FLOP/s as a fraction of the peak.

    Two models: the chapter-sized :class:`DecoderOnlyLM` (:data:`CHAPTER_LM`, causal), with the
    fused attention and with the explicit attention, and one ``base``-sized :class:`EncoderLayer`
    (d_model 512, 8 heads, d_ff 2048, no mask).  The peak is the FLOP/s of an ``n × n`` matrix
    product (``n = matmul_n``, the best size of :func:`bench_matmul`) timed *interleaved* with the
    training steps, so that both meet the same load.  Dropout is 0: on the CPU, attention dropout
    makes PyTorch leave its fused kernel for the explicit math.  Weights and data are drawn from
    ``torch.manual_seed(seed)``.
    """
    torch.manual_seed(check_seed("seed", seed))
    rows = []
    a, b = (torch.randn(matmul_n, matmul_n, device=device) for _ in range(2))
    product = torch.empty(matmul_n, matmul_n, device=device)
    matmul = lambda: torch.mm(a, b, out=product)
    model = DecoderOnlyLM(LMConfig(**CHAPTER_LM, dropout=0.0, max_len=lm["T"] + 1)).to(device).train()
    data = torch.randint(0, CHAPTER_LM["vocab_size"], (lm["batch"], lm["T"] + 1), device=device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def lm_loss() -> Tensor:
        logits = model(data[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), data[:, 1:].flatten())

    def lm_loss_explicit() -> Tensor:
        with record_attention(model):  # every attention layer takes the explicit path
            return lm_loss()

    base = EncoderLayer(layer["d_model"], layer["n_heads"], layer["d_ff"], dropout=0.0).to(device).train()
    x = torch.randn(layer["batch"], layer["T"], layer["d_model"], device=device)
    base_optimizer = torch.optim.Adam(base.parameters(), lr=1e-4)

    t = compare(
        {
            "fused": _train_step(model, lm_loss, optimizer),
            "explicit": _train_step(model, lm_loss_explicit, optimizer),
            "layer": _train_step(base, lambda: base(x).square().mean(), base_optimizer),
            "matmul": matmul,
        },
        repeats,
        min_seconds,
        device,
    )
    peak_flops = 2 * matmul_n**3 / t["matmul"]
    tokens = lm["batch"] * lm["T"]
    flops = training_flops(model, tokens, lm["T"], causal=True)
    for path in ("fused", "explicit"):
        rows.append(_training_row(f"chapter LM ({path} attention)", model, lm, flops, t[path], peak_flops))
    rows[0]["fused_speedup"] = t["explicit"] / t["fused"]
    flops = training_flops(base, layer["batch"] * layer["T"], layer["T"], causal=False)
    rows.append(_training_row("base-sized encoder layer", base, layer, flops, t["layer"], peak_flops))
    return rows


def _training_row(name, model, size, flops, seconds, peak_flops) -> dict:
    tokens = size["batch"] * size["T"]
    return {
        "model": name,
        "parameters": sum(p.numel() for p in model.parameters()),
        "batch": size["batch"],
        "T": size["T"],
        "tokens_per_step": tokens,
        "step_s": seconds,
        "tokens_per_s": tokens / seconds,
        "flops_per_step": flops,
        "flops_per_s": flops / seconds,
        "peak_flops": peak_flops,
        "fraction_of_peak": flops / seconds / peak_flops,
    }


def bench_decoding(
    batch: int, prompt: int, new: int, repeats: int, min_seconds: float, device: torch.device, seed: int = 0
) -> dict:
    """Greedy decoding of ``new`` tokens after a ``prompt``-token prompt, with and without the cache;
    the model's weights and the prompts are drawn from ``torch.manual_seed(seed)``."""
    torch.manual_seed(check_seed("seed", seed))
    model = DecoderOnlyLM(LMConfig(**CHAPTER_LM, dropout=0.0, max_len=prompt + new)).to(device).eval()
    start = torch.randint(0, CHAPTER_LM["vocab_size"], (batch, prompt), device=device)
    t = compare(
        {
            "cached": lambda: model.generate(start, new, use_cache=True),
            "uncached": lambda: model.generate(start, new, use_cache=False),
        },
        repeats,
        min_seconds,
        device,
    )
    tokens = batch * new
    return {
        "batch": batch,
        "prompt": prompt,
        "new_tokens": new,
        "cached_s": t["cached"],
        "uncached_s": t["uncached"],
        "cached_tokens_per_s": tokens / t["cached"],
        "uncached_tokens_per_s": tokens / t["uncached"],
        "cache_speedup": t["uncached"] / t["cached"],
    }
