"""Plot helpers: attention heatmaps, grids of heads × layers, training curves.

The book's one theme is :func:`set_theme`, which every chapter calls once in its imports cell;
importing ``lib`` changes no global state (``matplotlib.rcParams`` stay as they were).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..training.loop import History
from .palette import PALETTE

ATTENTION_CMAP = "Blues"

_LABELS = {
    "loss": "loss",
    "lr": "learning rate",
    "grad_norm": "gradient norm",
    "token_accuracy": "token accuracy",
    "exact_match": "exact match",
}
_PER_STEP = ("loss", "lr", "grad_norm")


# The page column is about 690 CSS px (7.2 in at 96 px/in): a figure drawn no wider than this is
# shown at its natural size, so its labels keep the size they were set in.
COLUMN_WIDTH_IN = 7.0
FIGURE_SIZE_IN = (6.0, 3.8)


# What ``seaborn.set_theme(context="notebook", style="whitegrid", palette="colorblind")`` sets, written
# out: importing seaborn (and with it scipy and pandas) took about 0.7 s of every chapter's run.
# tests/book/test_plots_svg.py checks that these are still seaborn's values. (Its ``image.cmap``, "rocket",
# is left out: no figure of the book uses the default colour map, and "rocket" exists only in seaborn.)
SEABORN_WHITEGRID = {
    "axes.axisbelow": True,
    "axes.edgecolor": ".8",
    "axes.grid": True,
    "axes.labelcolor": ".15",
    "axes.labelsize": 12.0,
    "axes.linewidth": 1.25,
    "axes.titlesize": 12.0,
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "font.size": 12.0,
    "grid.color": ".8",
    "grid.linewidth": 1.0,
    "legend.fontsize": 11.0,
    "legend.title_fontsize": 12.0,
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "text.color": ".15",
    "xtick.bottom": False,
    "xtick.color": ".15",
    "xtick.labelsize": 11.0,
    "xtick.major.size": 6.0,
    "xtick.major.width": 1.25,
    "xtick.minor.size": 4.0,
    "xtick.minor.width": 1.0,
    "ytick.color": ".15",
    "ytick.labelsize": 11.0,
    "ytick.left": False,
    "ytick.major.size": 6.0,
    "ytick.major.width": 1.25,
    "ytick.minor.size": 4.0,
    "ytick.minor.width": 1.0,
}


def set_theme() -> None:
    """The book's look: seaborn's ``whitegrid`` style, colour-blind palette, no top/right spines.

    Figures are drawn for the page column (6 x 3.8 in by default, at most ``COLUMN_WIDTH_IN``), and
    under IPython (Jupyter, Colab, the site build) the inline backend shows them as SVG with their
    text kept as text (``svg.fonttype: "none"``), so labels stay sharp and readable at any zoom.
    The seaborn settings are written out (:data:`SEABORN_WHITEGRID`), so seaborn is not imported.
    """
    mpl.rcParams.update(SEABORN_WHITEGRID)
    mpl.rcParams.update(
        {
            "axes.prop_cycle": mpl.cycler(color=list(PALETTE)),
            "figure.figsize": FIGURE_SIZE_IN,
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "svg.fonttype": "none",
            "svg.hashsalt": "transformers-executed",  # the same figure gives the same SVG, run after run
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": "medium",
            "axes.titleweight": "bold",
            "legend.frameon": False,
        }
    )
    _inline_figures_as_svg()


def _inline_figures_as_svg() -> bool:
    """Make IPython's inline backend show figures as SVG; False (and nothing changed) outside IPython.

    IPython and matplotlib-inline are only used when a shell is running: ``lib`` does not need them.
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return False
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # an IPython without matplotlib-inline: keep its default (PNG)
        return False
    set_matplotlib_formats("svg", metadata={"Date": None})  # no time stamp: reproducible outputs
    return True


def _to_numpy(weights, name: str = "weights") -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        return weights.detach().float().cpu().numpy()
    try:
        return np.asarray(weights, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a tensor or an array of numbers, got {type(weights).__name__}") from None


def _check_tokens(tokens: Sequence[str] | None, size: int, name: str, axis: str) -> list[str] | bool:
    if tokens is None:
        return False
    tokens = [str(t) for t in tokens]
    if len(tokens) != size:
        raise ValueError(f"{name} has {len(tokens)} tokens but the weights have {size} {axis}")
    return tokens


def _heatmap(ax: Axes, w: np.ndarray, xticks, yticks, cmap: str, vmin: float, vmax: float, cbar: bool) -> None:
    # What seaborn.heatmap draws (a pcolormesh, rows top-down, no spines), written out: seaborn's
    # redraws the whole figure for every heatmap it adds, so a 6 x 12 grid took minutes. The cells are
    # rasterized inside the SVG (one small image), the labels stay text.
    mesh = ax.pcolormesh(w, cmap=cmap, vmin=vmin, vmax=vmax, rasterized=True)
    ax.set(xlim=(0, w.shape[1]), ylim=(w.shape[0], 0))
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xticks(np.arange(w.shape[1]) + 0.5 if xticks else [], xticks if xticks else [])
    ax.set_yticks(np.arange(w.shape[0]) + 0.5 if yticks else [], yticks if yticks else [], va="center")
    if cbar:
        colorbar = ax.figure.colorbar(mesh, ax=ax, label="weight", shrink=0.8)
        colorbar.outline.set_linewidth(0)
    ax.grid(False)
    # Single characters read fine upright; longer tokens are turned to fit.
    long = isinstance(xticks, list) and max((len(t) for t in xticks), default=0) > 2
    ax.tick_params(axis="x", labelrotation=90 if long else 0, length=0)
    ax.tick_params(axis="y", labelrotation=0, length=0)


def plot_attention(
    weights,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    cmap: str = ATTENTION_CMAP,
    vmin: float = 0.0,
    vmax: float | None = None,
    colorbar: bool = True,
) -> Axes:
    """Heatmap of one attention matrix ``weights [T_q, T_k]`` (tensor or array).

    Row ``i`` is query ``i``'s distribution over the keys (it sums to 1, or to 0 for a fully
    masked row). Pick one head of a ``[B, H, T_q, T_k]`` tensor with ``weights[b, h]``.
    """
    w = _to_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"weights must be 2-d [T_q, T_k], got shape {w.shape}; pick one head, e.g. weights[0, h]")
    yticks = _check_tokens(query_tokens, w.shape[0], "query_tokens", "query rows")
    xticks = _check_tokens(key_tokens, w.shape[1], "key_tokens", "key columns")
    if ax is None:
        width = min(12.0, max(3.5, 1.8 + 0.32 * w.shape[1]))
        height = min(10.0, max(2.8, 0.8 + 0.32 * w.shape[0]))
        _, ax = plt.subplots(figsize=(width, height), layout="constrained")
    _heatmap(ax, w, xticks, yticks, cmap, vmin, vmax if vmax is not None else float(w.max()), colorbar)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title)
    return ax


def plot_attention_grid(
    weights,
    tokens_q: Sequence[str] | None = None,
    tokens_k: Sequence[str] | None = None,
    *,
    cmap: str = ATTENTION_CMAP,
    title: str | None = None,
    cell_size: float = 2.0,
) -> Figure:
    """A grid of attention heatmaps: one row per layer, one column per head.

    ``weights`` is a tensor ``[L, H, T_q, T_k]`` or ``[H, T_q, T_k]`` (one layer), or a list over
    layers of ``[H, T_q, T_k]`` (a leading batch dimension of size 1 is dropped). All cells share
    one colour scale, so heads can be compared. Layers and heads are numbered from 0, as indexed.
    """
    if isinstance(weights, (list, tuple)):
        layers = [_to_numpy(w, f"weights[{i}]") for i, w in enumerate(weights)]
        layers = [w[0] if w.ndim == 4 and w.shape[0] == 1 else w for w in layers]
        if not layers or any(w.shape != layers[0].shape or w.ndim != 3 for w in layers):
            shapes = [w.shape for w in layers]
            raise ValueError(f"weights must be a non-empty list of [H, T_q, T_k] arrays of one shape, got {shapes}")
        w = np.stack(layers)
    else:
        w = _to_numpy(weights)
        if w.ndim == 3:
            w = w[None]
    if w.ndim != 4:
        raise ValueError(f"weights must have shape [L, H, T_q, T_k] or [H, T_q, T_k], got {w.shape}")
    n_layers, n_heads, t_q, t_k = w.shape
    yticks = _check_tokens(tokens_q, t_q, "tokens_q", "query rows")
    xticks = _check_tokens(tokens_k, t_k, "tokens_k", "key columns")

    aspect = t_q / t_k
    fig, axes = plt.subplots(
        n_layers,
        n_heads,
        squeeze=False,
        layout="constrained",
        figsize=(cell_size * n_heads + 1.0, cell_size * aspect * n_layers + 0.6),
    )
    vmax = float(w.max())
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            _heatmap(
                ax,
                w[layer, head],
                xticks if layer == n_layers - 1 else False,
                yticks if head == 0 else False,
                cmap,
                0.0,
                vmax,
                cbar=False,
            )
            if layer == 0:
                ax.set_title(f"head {head}")
            if head == 0:
                ax.set_ylabel(f"layer {layer}", fontweight="bold")
    colorbar = fig.colorbar(axes[0, 0].collections[0], ax=axes, shrink=0.8, label="weight")
    colorbar.outline.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def _smoothed(values: Sequence[float], window: int) -> np.ndarray:
    """Moving average over ``window`` steps (shorter at the start)."""
    values = np.asarray(values, dtype=float)
    cumulative = np.cumsum(np.insert(values, 0, 0.0))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(0, ends - window)
    return (cumulative[ends] - cumulative[starts]) / (ends - starts)


def plot_history(
    history: History | Mapping[str, History],
    metric: str = "loss",
    *,
    ax: Axes | None = None,
    label: str | None = None,
    logy: bool | None = None,
    smooth: int | None = None,
) -> Axes:
    """Training curves of one run, or of several runs ``{name: history}`` on one axis.

    ``metric`` is a per-step record (``"loss"``, ``"lr"``, ``"grad_norm"``) or a metric of the
    evaluations (e.g. ``"exact_match"``). For ``"loss"`` the evaluation loss, if recorded, is drawn
    too (dashed, with markers). Per-step curves are smoothed with a moving average of ``smooth``
    steps (default: 1/50 of the run; ``smooth=1`` for none) over the faint raw curve.
    ``logy`` (default: on for ``"loss"``) uses a log scale.
    """
    if isinstance(history, History):
        runs = {label or "": history}
    elif isinstance(history, Mapping) and history and all(isinstance(h, History) for h in history.values()):
        runs = dict(history)
    else:
        raise TypeError(f"history must be a History or a dict name -> History, got {type(history).__name__}")
    if ax is None:
        _, ax = plt.subplots(layout="constrained")
    cycle = plt.rcParams["axes.prop_cycle"].by_key().get("color") or list(PALETTE)
    colors = [cycle[i % len(cycle)] for i in range(max(len(runs), 1))]

    for color, (name, run) in zip(colors, runs.items()):
        eval_keys = {k for e in run.evals for k in e if k != "step"}
        if metric not in _PER_STEP and metric not in eval_keys:
            raise ValueError(
                f"metric={metric!r} is not in the history{f' {name!r}' if name else ''}; "
                f"expected one of {sorted(set(_PER_STEP) | eval_keys)}"
            )
        if metric in _PER_STEP and run.step:
            values = getattr(run, metric)
            window = smooth if smooth is not None else max(1, len(values) // 50)
            if window > 1:
                ax.plot(run.step, values, color=color, alpha=0.25, linewidth=0.8)
                values = _smoothed(values, window)
            train_label = name or ("train" if metric in eval_keys else None)
            ax.plot(run.step, values, color=color, linewidth=1.6, label=train_label)
        if metric in eval_keys:
            points = [(e["step"], e[metric]) for e in run.evals if metric in e]
            eval_label = f"{name} (eval)" if name else "eval"
            linestyle = "--" if metric in _PER_STEP else "-"
            ax.plot(*zip(*points), linestyle=linestyle, marker="o", markersize=3.5, color=color, label=eval_label)

    if logy if logy is not None else metric == "loss":
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel(_LABELS.get(metric, metric.replace("_", " ")))
    if any(line.get_label() and not line.get_label().startswith("_") for line in ax.get_lines()):
        ax.legend()
    return ax
