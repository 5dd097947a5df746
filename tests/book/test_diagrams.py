"""lib.book.diagrams: the chapters' schematics draw, carry the real shapes, and reject bad input."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lib import MultiHeadAttention, Seq2SeqRNN  # noqa: E402
from lib.book.diagrams import Canvas, qkv_dataflow, scaling_and_softmax, seq2seq_bottleneck  # noqa: E402


def texts(figure: Figure) -> str:
    return "\n".join(t.get_text() for ax in figure.axes for t in ax.texts)


def test_seq2seq_bottleneck_labels_the_state_size():
    fig = seq2seq_bottleneck(Seq2SeqRNN(12, 48, attention="dot"))
    assert isinstance(fig, Figure)
    assert "48 + 48" in texts(fig)
    assert "bottleneck" in texts(fig)
    assert "64 + 64" in texts(seq2seq_bottleneck(d_hidden=64))


def test_seq2seq_bottleneck_bad_input():
    with pytest.raises(TypeError, match="model"):
        seq2seq_bottleneck(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="source"):
        seq2seq_bottleneck(source=["1"] * 9)
    with pytest.raises(ValueError, match="step"):
        seq2seq_bottleneck(step=10)
    with pytest.raises(TypeError, match="step must be an int"):
        seq2seq_bottleneck(step=1.0)
    with pytest.raises(ValueError, match="d_hidden"):
        seq2seq_bottleneck(d_hidden=0)
    with pytest.raises(TypeError, match="d_hidden must be an int"):
        seq2seq_bottleneck(d_hidden=True)


def test_qkv_dataflow_shows_the_shapes_of_a_forward_pass():
    torch.manual_seed(0)
    fig = qkv_dataflow(MultiHeadAttention(32, n_heads=4), torch.randn(3, 5, 32), head=2)
    shown = texts(fig)
    assert "[3, 5, 32]" in shown  # X, Q, K, V, output
    assert "[3, 4, 5, 8]" in shown  # Q split into 4 heads of d_k = 8
    assert "[3, 4, 5, 5]" in shown  # the attention weights
    assert "head 2" in fig._suptitle.get_text()


def test_qkv_dataflow_bad_input():
    attention = MultiHeadAttention(8, n_heads=2)
    with pytest.raises(ValueError, match="d_model=8"):
        qkv_dataflow(attention, torch.randn(1, 4, 6))
    with pytest.raises(ValueError, match="head"):
        qkv_dataflow(attention, torch.randn(1, 4, 8), head=2)
    with pytest.raises(TypeError, match="head must be an int"):
        qkv_dataflow(attention, torch.randn(1, 4, 8), head=0.0)
    with pytest.raises(TypeError, match="x must be a Tensor"):
        qkv_dataflow(attention, [[0.0] * 8])
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        qkv_dataflow(torch.nn.Linear(8, 8), torch.randn(1, 4, 8))


def test_scaling_and_softmax_reports_the_real_weights():
    torch.manual_seed(0)
    q, k = torch.randn(256), torch.randn(8, 256)
    shown = texts(scaling_and_softmax(q, k))
    unscaled = torch.softmax(k @ q, 0).max().item()
    scaled = torch.softmax(k @ q / 16, 0).max().item()
    assert f"largest {unscaled:.2f}" in shown and f"largest {scaled:.2f}" in shown
    assert "= 16" in shown  # sqrt(256)


def test_scaling_and_softmax_bad_input():
    with pytest.raises(ValueError, match="q must be"):
        scaling_and_softmax(torch.randn(2, 4), torch.randn(3, 4))
    with pytest.raises(ValueError, match="k must be"):
        scaling_and_softmax(torch.randn(4), torch.randn(3, 5))
    with pytest.raises(ValueError, match="2 to 16 keys"):
        scaling_and_softmax(torch.randn(4), torch.randn(17, 4))
    with pytest.raises(TypeError, match="q must be a Tensor"):
        scaling_and_softmax([1.0, 2.0], torch.randn(3, 2))


def test_canvas_bars_and_bad_roles():
    c = Canvas(4, 2)
    box = c.bars(0, 0, 3, 1, [0.2, -0.5, 1.0], role="key", signed=True, top=2.0)
    assert box.w == 3
    with pytest.raises(ValueError, match="empty"):
        c.bars(0, 0, 1, 1, [])
    with pytest.raises(ValueError, match="role"):
        c.box(0, 0, 1, 1, role="nonsense")
    c.done()
    with pytest.raises(ValueError, match="width"):
        Canvas(0, 2)
    with pytest.raises(TypeError, match="height must be a number"):
        Canvas(4, "2")


def test_sparsity_patterns_count_the_pairs_of_the_real_masks():
    from lib.book.diagrams import sparsity_patterns
    from lib.efficient import bigbird_mask, sliding_window_mask

    shown = texts(sparsity_patterns(T=8, window=1, n_global=1, n_random=1, seed=3))
    for mask in (sliding_window_mask(8, 1), bigbird_mask(8, 1, 1, 1, seed=3)):
        assert f"{int(mask.sum())} of T² = 64 pairs" in shown
    assert "36 of T² = 64 pairs" in shown  # causal: 8·9/2
    with pytest.raises(TypeError, match="T must be an int"):
        sparsity_patterns(T=8.0)
    with pytest.raises(ValueError, match="n_global"):
        sparsity_patterns(T=4, n_global=5)


def test_the_roles_use_seaborns_colour_blind_palette():
    """The palette is written out (drawing loads no seaborn); it must stay the plots' palette."""
    import seaborn as sns

    from lib.book.diagrams.canvas import _CB

    assert [tuple(round(c, 6) for c in rgb) for rgb in _CB] == [
        tuple(round(c, 6) for c in rgb) for rgb in sns.color_palette("colorblind")
    ]


@pytest.mark.parametrize(
    "draw",
    [
        lambda: seq2seq_bottleneck(Seq2SeqRNN(12, 64, attention="dot")),
        lambda: qkv_dataflow(MultiHeadAttention(8, n_heads=1), torch.randn(1, 6, 8)),
        lambda: qkv_dataflow(MultiHeadAttention(32, n_heads=4), torch.randn(3, 5, 32), head=2),
        lambda: scaling_and_softmax(torch.randn(256), torch.randn(8, 256)),
    ],
    ids=["seq2seq_bottleneck", "qkv_dataflow", "qkv_dataflow_heads", "scaling_and_softmax"],
)
def test_chapter_1_to_3_schematics_fit_the_column_with_labels_of_9_pt(draw):
    # issue 21: no wider than the page column (7 in), so the site shows them at their natural size,
    # where 9 pt is 12 CSS px
    fig = draw()
    assert fig.get_size_inches()[0] <= 7.0 + 1e-9
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()]
    assert min(sizes) >= 9


def _bert_config():
    from types import SimpleNamespace

    return SimpleNamespace(
        vocab_size=30,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        type_vocab_size=2,
        layer_norm_eps=1e-12,
    )


def _every_schematic() -> dict[str, Figure]:
    """One figure of each schematic that labels shapes or equations, at small sizes."""
    import lib
    from lib.book.diagrams import (
        bert_encoder,
        cross_attention_dataflow,
        mask_grids,
        multi_head_diagram,
        position_schematic,
        pretraining_schematic,
        seq2seq_bottleneck,
        sparsity_patterns,
        transformer_diagram,
    )

    config = lib.TransformerConfig(13, 13, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32)
    model = lib.Transformer(config)
    tokens = torch.ones(2, 5, dtype=torch.long)
    return {
        "qkv_dataflow": qkv_dataflow(MultiHeadAttention(16, 2), torch.randn(1, 5, 16)),
        "scaling_and_softmax": scaling_and_softmax(torch.randn(16), torch.randn(8, 16)),
        "cross_attention_dataflow": cross_attention_dataflow(model, tokens, tokens[:, :4]),
        "position_schematic": position_schematic(config, seq_len=5),
        "transformer_diagram": transformer_diagram(model),
        "bert_encoder": bert_encoder(_bert_config(), T=5),
        "pretraining_schematic": pretraining_schematic(lib.make_world(6, seed=1), [0, 1, 2], [3, 4, 5]),
        "seq2seq_bottleneck": seq2seq_bottleneck(d_hidden=16),
        "multi_head_diagram": multi_head_diagram(MultiHeadAttention(8, 2), torch.randn(1, 4, 8)),
        "mask_grids": mask_grids(["<bos>", "a", "b"], n_pad=1),
        "sparsity_patterns": sparsity_patterns(T=8),
    }


def test_labels_write_subscripts_as_math_and_roots_as_a_glyph():
    """Outside ``$…$`` no label reads ``W_K`` or ``d_model`` with a raw underscore; no label uses ``\\sqrt``.

    The figures are SVG with their text kept as text: mathtext's ``\\sqrt`` draws the radical as a
    glyph of the reader's font and its bar as a line, and the two drift apart in the browser; the
    single glyph ``√`` cannot.
    """
    import re

    for name, fig in _every_schematic().items():
        labels = [t.get_text() for t in fig.texts] + [t.get_text() for ax in fig.axes for t in ax.texts]
        for label in labels:
            plain = re.sub(r"\$[^$]*\$", "", label)
            assert not re.search(r"(?<![\w.])[A-Za-z]_[A-Za-z0-9{]", plain), f"{name}: raw subscript in {label!r}"
            assert r"\sqrt" not in label, f"{name}: \\sqrt in {label!r} (write √ instead)"
        matplotlib.pyplot.close(fig)


def test_a_line_with_math_holds_no_words():
    """A label line with ``$…$`` is drawn by mathtext one glyph at a time, so the Chinese build cannot
    translate it (tools/i18n_ext/outputs.py translates plain ``<text>`` labels): its words go on a line of their
    own, or the math is written in Unicode (``xᵢ``, ``mθ``)."""
    import re

    for name, fig in _every_schematic().items():
        labels = [t.get_text() for t in fig.texts] + [t.get_text() for ax in fig.axes for t in ax.texts]
        for line in (line for label in labels for line in label.split("\n") if "$" in line):
            words = re.findall(r"[A-Za-z]{2,}", re.sub(r"\$[^$]*\$", "", line))
            assert not words, f"{name}: the words {words} share a line with math: {line!r}"
        matplotlib.pyplot.close(fig)


def test_a_grid_puts_row_zero_on_top_and_frames_its_cells():
    """``Canvas.grid``, which the masks, the sparsity patterns and ``Canvas.matrix`` draw with."""
    from matplotlib.colors import to_hex
    from matplotlib.patches import Rectangle

    c = Canvas(4, 4)
    frame = c.grid(1, 1, [["red", "white", "blue"], ["green", "white", "black"]], 0.5, lines="#cccccc",
                   line_width=0.5, frame="#444444", frame_width=1.2)  # fmt: skip
    assert (frame.x, frame.y, frame.w, frame.h) == (1, 1, 1.5, 1.0)
    *cells, outline = [p for p in c.ax.patches if isinstance(p, Rectangle)]
    assert [(p.get_x(), p.get_y(), to_hex(p.get_facecolor())) for p in cells[:3]] == [
        (1.0, 1.5, "#ff0000"), (1.5, 1.5, "#ffffff"), (2.0, 1.5, "#0000ff")
    ]  # fmt: skip
    assert cells[3].get_y() == 1.0 and len(cells) == 6  # row 1 below row 0
    assert not outline.get_fill() and (outline.get_width(), outline.get_height()) == (1.5, 1.0)
    c.done()
