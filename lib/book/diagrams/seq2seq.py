"""Chapter 1's schematic: the LSTM encoder-decoder without and with attention, and where the
bottleneck is.

>>> seq2seq_bottleneck(model)        # a Seq2SeqRNN: its hidden size labels the figure
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure
from torch import nn

from ...model.checks import check_int
from .canvas import Box, Canvas

FIGURE_WIDTH_IN = 7.0  # the page column: the figure is never wider, so its labels keep their size


def _hidden_size(model: nn.Module | None, d_hidden: int | None) -> int:
    if model is not None:
        encoder = getattr(model, "encoder", None)
        if not isinstance(encoder, nn.LSTM):
            raise TypeError(f"model must be a lib.Seq2SeqRNN (with an nn.LSTM encoder), got {type(model).__name__}")
        return encoder.hidden_size
    if d_hidden is None:
        return 64
    return check_int("d_hidden", d_hidden, minimum=1)


def seq2seq_bottleneck(
    model: nn.Module | None = None,
    *,
    d_hidden: int | None = None,
    source: Sequence[str] = ("7", "2", "9"),
    step: int = 2,
) -> Figure:
    r"""The copy model of chapter 1 drawn twice: without attention (top) and with it (bottom).

    Top: the decoder starts from the encoder's final state :math:`h_S` (with the cell :math:`c_S`)
    and never sees the source again, so everything about the source passes through one vector of
    ``d_hidden`` numbers: the bottleneck. Bottom: at every step :math:`t` the decoder state
    :math:`s_t` scores every encoder state, :math:`\alpha_t = \mathrm{softmax}(s_t^\top h_i)`,
    and reads the context :math:`c_t = \sum_i \alpha_{t,i} h_i` (drawn for one step, ``step``,
    0-based; every step does the same).

    ``model``: a :class:`lib.Seq2SeqRNN`, whose hidden size labels the state (or pass ``d_hidden``).
    ``source``: the source tokens to draw (the target is their copy). The figure is at most
    ``FIGURE_WIDTH_IN`` wide, with labels of 9 pt or more: with 5 or 6 tokens it gets crowded.
    """
    d = _hidden_size(model, d_hidden)
    source = [str(s) for s in source]
    S = len(source)
    if not 2 <= S <= 6:
        raise ValueError(f"source must have 2 to 6 tokens to fit the figure, got {S}")
    T = S + 1  # the copy and <eos>
    check_int("step", step, minimum=0, maximum=T - 1)
    outputs = source + ["<eos>"]
    inputs = ["<bos>"] + source

    cell_w, cell_h, gap = 0.95, 0.7, 0.45
    pitch = cell_w + gap
    enc_x0 = 0.9
    enc_x = [enc_x0 + i * pitch for i in range(S)]
    bottleneck_x = enc_x[-1] + pitch + 0.1
    dec_x0 = bottleneck_x + 1.9
    dec_x = [dec_x0 + t * pitch for t in range(T)]
    width = dec_x[-1] + cell_w + 0.6
    height = 10.85
    c = Canvas(width, height, title="An LSTM encoder-decoder without and with attention", scale=FIGURE_WIDTH_IN / width)

    def row(y: float, label: str, attention: bool) -> None:
        c.region(0.2, y - 1.35, width - 0.4, 5.85 if attention else 3.85, label, role="rnn")
        # the encoder reads the source left to right
        enc = [c.box(x, y, cell_w, cell_h, "LSTM", role="encoder") for x in enc_x]
        for i, (box, token) in enumerate(zip(enc, source)):
            c.text(box.center[0], y - 0.85, token, fontsize=11, bold=True)
            c.arrow((box.center[0], y - 0.65), box.bottom)
            if i:
                c.arrow(enc[i - 1].right, box.left)
            c.text(box.right[0] + gap / 2, y + cell_h + 0.12, f"$h_{i + 1}$", fontsize=9)
        c.text((enc_x[0] + enc_x[-1] + cell_w) / 2, y - 1.15, "encoder reads the source", fontsize=9, italic=True)
        # the decoder writes the copy, reading its own previous output
        dec = [c.box(x, y, cell_w, cell_h, "LSTM", role="decoder") for x in dec_x]
        for t, box in enumerate(dec):
            c.text(box.center[0], y - 0.85, inputs[t], fontsize=9)
            c.arrow((box.center[0], y - 0.65), box.bottom)
            if t:
                c.arrow(dec[t - 1].right, box.left)
        c.text((dec_x[0] + dec_x[-1] + cell_w) / 2, y - 1.15, "decoder writes the copy", fontsize=9, italic=True)
        # the hand-over: the encoder's final state starts the decoder
        state = c.box(
            bottleneck_x,
            y - 0.05,
            1.25,
            cell_h + 0.1,
            f"$h_S, c_S$\n{d} + {d}",
            role="highlight" if not attention else "rnn",
            fontsize=9,
        )
        c.arrow(enc[-1].right, state.left)
        c.arrow(state.right, dec[0].left)
        # outputs
        out_y = y + cell_h + 0.6
        for t, box in enumerate(dec):
            top = (box.center[0], out_y)
            if attention and t == step:
                continue
            c.arrow(box.top, top)
            c.text(top[0], out_y + 0.22, outputs[t], fontsize=11, bold=True)
        if not attention:
            c.text(
                state.center[0],
                y + cell_h + 0.85,
                f"the bottleneck:\nthe whole source\nin one state of\n{d} + {d} numbers",
                fontsize=9,
                role="highlight",
                bold=True,
            )
            c.text(state.center[0], y - 0.45, "$s_0 = h_S$", fontsize=9)
            return
        # attention at one decoder step: s_t scores every h_i and reads the context c_t
        t_box: Box = dec[step]
        ctx = c.box(t_box.x - 0.15, y + cell_h + 1.25, cell_w + 0.3, 0.6, f"$c_{step + 1}$", role="attention")
        c.arrow(t_box.top, ctx.bottom, text=f"$s_{step + 1}$", fontsize=9)
        out = c.box(t_box.x - 0.35, y + cell_h + 2.2, cell_w + 0.7, 0.55, "$W_o[s_t; c_t]$", role="output", fontsize=9)
        c.arrow(ctx.top, out.bottom)
        c.text(out.center[0], out.y + out.h + 0.25, outputs[step], fontsize=11, bold=True)
        # weights: a copy model reads source position t at step t
        for i, box in enumerate(enc):
            alpha = 0.85 if i == step else 0.15 / max(S - 1, 1)
            c.arrow(
                box.top,
                (ctx.left[0], ctx.left[1] + 0.12 * (i - (S - 1) / 2)),
                role="attention",
                curve=-0.18,
                linewidth=0.8 + 3.5 * alpha,
            )
        c.text(
            0.45,
            y + cell_h + 3.3,
            r"$\alpha_{t,i} = \mathrm{softmax}_i(s_t^\top h_i)$,   $c_t = \sum_i \alpha_{t,i} h_i$" + "\n"
            "every step t reads every hᵢ directly (drawn for one step;\nline width = weight)",
            fontsize=9,
            role="attention",
            ha="left",
            va="top",
        )

    row(7.85, "without attention", attention=False)
    row(1.6, "with attention", attention=True)
    return c.done()
