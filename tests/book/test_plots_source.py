"""Plots (lib.book.plots) and show_source (lib.book.source)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from lib.book.plots import plot_attention, plot_attention_grid, plot_history  # noqa: E402
from lib.book.source import Source, show_source  # noqa: E402
from lib.training.data import Vocab  # noqa: E402
from lib.training.loop import History  # noqa: E402
from lib.training.schedules import noam_lr  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_show_source_of_a_function():
    src = show_source(noam_lr)
    assert isinstance(src, Source)
    html = src._repr_html_()
    assert "noam_lr" in html and "lib/training/schedules.py" in html and "style=" in html
    assert "eq. 3" in src.code  # the docstring is kept
    assert src._repr_markdown_().count("```") == 2
    assert repr(src).startswith("# lib.training.schedules.noam_lr")


def test_show_source_of_a_method_and_an_excerpt():
    src = show_source(Vocab.encode)
    assert src.code.startswith("def encode")  # dedented
    assert src.name == "lib.training.batching.Vocab.encode"
    excerpt = show_source(Vocab.decode, start="for i in ids", end="return")
    assert excerpt.code.startswith("for i in ids") and excerpt.code.endswith("return tokens")
    assert excerpt.first_line > src.first_line
    with pytest.raises(ValueError, match="start"):
        show_source(Vocab.decode, start="no such line")
    with pytest.raises(TypeError, match="source"):
        show_source(len)


def test_plot_attention():
    w = torch.softmax(torch.randn(4, 5), dim=-1)
    ax = plot_attention(w, list("abcd"), ["the", "cat", "sat", "on", "mat"], title="one head")
    assert isinstance(ax, Axes) and ax.get_xlabel() == "key" and ax.get_ylabel() == "query"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["the", "cat", "sat", "on", "mat"]
    assert isinstance(plot_attention(w.numpy()), Axes)
    with pytest.raises(ValueError, match="2-d"):
        plot_attention(torch.rand(2, 4, 5))
    with pytest.raises(ValueError, match="key_tokens"):
        plot_attention(w, key_tokens=list("ab"))


def test_plot_attention_grid():
    w = torch.softmax(torch.randn(2, 3, 4, 4), dim=-1)
    fig = plot_attention_grid(w, list("abcd"), list("abcd"), title="all heads")
    assert isinstance(fig, Figure)
    titles = [ax.get_title() for ax in fig.axes]
    assert "head 2" in titles
    assert isinstance(plot_attention_grid([w[0], w[1].unsqueeze(0)]), Figure)  # list, batch dim of 1
    assert isinstance(plot_attention_grid(w[0]), Figure)
    with pytest.raises(ValueError, match="L, H"):
        plot_attention_grid(torch.rand(4, 4))


def _history(scale=1.0):
    h = History()
    for s in range(1, 101):
        h.step.append(s)
        h.loss.append(scale / s)
        h.lr.append(1e-3)
        h.grad_norm.append(1.0)
        if s % 25 == 0:
            h.evals.append({"step": s, "loss": 1.2 * scale / s, "exact_match": s / 100})
    return h


def test_plot_history():
    ax = plot_history(_history())
    assert isinstance(ax, Axes) and ax.get_xlabel() == "step" and ax.get_yscale() == "log"
    ax = plot_history({"post-LN": _history(), "pre-LN": _history(2.0)}, "exact_match")
    assert ax.get_ylabel() == "exact match" and ax.get_yscale() == "linear"
    assert isinstance(plot_history(_history(), "lr", smooth=1), Axes)
    with pytest.raises(ValueError, match="expected one of"):
        plot_history(_history(), "bleu")
    with pytest.raises(TypeError, match="History"):
        plot_history([1, 2])
