"""lib.book.explorers: every explorer is one self-contained cell output, drawn in its first state.

What a reader's browser does with them is tests/book/test_explorers_browser.py (and, on the built site,
tests/test_browser.py); here, what can be read off the HTML.
"""

from __future__ import annotations

import html as html_module
import json
import math
import re

import matplotlib
import pytest
import torch

import lib
from lib.book import explorers as X


def examples() -> dict[str, X.Explorer]:
    """One explorer of each kind, on small made-up data (the chapters feed them their runs)."""
    weights = torch.tensor([[0.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]])
    heads = torch.softmax(torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(0)), dim=-1)
    tokens = ["<bos>", "2", "0", "<pad>"]
    ids = torch.tensor([[1, 5, 3, 0]])
    d_ks = [2, 16, 256]
    g = torch.Generator().manual_seed(1)
    scores = torch.stack([torch.randn(8, d, generator=g) @ torch.randn(d, generator=g) for d in d_ks])
    step = {"token": "2", "p": 0.75, "top": [("2", 0.75), ("1", 0.2)]}
    return {
        "lookup": lib.attention_explorer(
            weights, ["q1", "q2", "q3"], ["cat", "dog", "car", "tree"], values=[3, 7, 20, 50], name="lookup"
        ),  # fmt: skip
        "heads": lib.attention_explorer(
            heads,
            [list("abcde"), list("vwxyz")],
            [list("abcde"), list("vwxyz")],
            selectors=[("sentence", ["one", "two"]), ("head", ["0", "1", "2"])],
            name="heads",
        ),
        "masks": lib.mask_explorer(tokens, lib.causal_mask(4), lib.padding_mask(ids, 0)[0, 0]),
        "saturation": lib.softmax_explorer(d_ks, scores),
        "positions": lib.similarity_explorer([0, 1, 2, 3], {"a": [1.0, 0.5, 0.0, -0.5], "b": [1.0, 0.9, 0.8, 0.7]}),
        "decoding": lib.decoding_explorer("x", {"greedy": [step, step], "beam": [step]}),
    }


@pytest.mark.parametrize("name", list(examples()))
def test_an_explorer_is_one_self_contained_output(name: str) -> None:
    explorer = examples()[name]
    html = explorer._repr_html_()
    assert html.startswith(f'<div class="lib-explorer" data-explorer="{name}" id="{explorer.id}">')
    # nothing from another file or host: no src/href, no url(), no import; the one URL is SVG's namespace
    assert not re.search(r"\b(src|href)\s*=|url\(|@import|\bimport\(|fetch\(|XMLHttpRequest", html)
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"]
    assert html.count("<svg") == 1 and "<text" in html  # the first state, drawn as a figure
    assert re.search(r'<p class="explorer-readout" aria-live="polite">[^<]+</p>', html)  # ... and said in words
    data = re.search(r'<script type="application/json" class="data">(.*?)</script>', html, re.S)
    json.loads(data.group(1))
    assert len(html.encode()) <= X.MAX_BYTES
    assert repr(explorer).startswith(f"<{name} explorer: ")
    assert examples()[name]._repr_html_() == html  # the same run, the same output


def test_every_control_is_labelled_and_every_pointable_element_reachable_by_keyboard() -> None:
    for name, explorer in examples().items():
        html = explorer.html
        for control in re.findall(r"<(?:select|input)\b[^>]*>", html):
            assert "aria-label" in control or control.startswith("<select") or 'type="checkbox"' in control, control
        assert html.count("<select") == len(re.findall(r"<label>[^<]*<select", html)), name
        for pointable in re.findall(r"<text\b[^>]*data-index[^>]*>", html):
            assert 'tabindex="0"' in pointable and "aria-label" in pointable, pointable


def test_the_first_state_shows_the_data() -> None:
    lookup = examples()["lookup"].html
    assert "query “q1”: most weight on “dog” (1.00); weights sum to 1.00; output o = Σ αⱼ vⱼ = 7.00" in lookup
    assert lookup.count(">1.00<") >= 2  # the cell of "dog" and its bar
    masks = examples()["masks"].html
    assert "query 0 “&lt;bos&gt;” sees 1 key: &lt;bos&gt; · 9 of 16 pairs allowed" in masks


def test_the_colour_map_is_matplotlibs_blues() -> None:
    blues = matplotlib.colormaps["Blues"]
    for x in [i / 20 for i in range(21)]:
        expected = [round(c * 255) for c in blues(x)[:3]]
        got = list(bytes.fromhex(X.blues(x)[1:]))
        # matplotlib looks colours up in a table of 256: up to 2 levels of 255 apart
        assert max(abs(a - b) for a, b in zip(expected, got)) <= 2, (x, expected, got)


def test_data_cannot_end_the_script() -> None:
    html = lib.attention_explorer(torch.eye(2), ["</script>", "b"], ["x", "y"]).html
    payload = re.search(r'<script type="application/json" class="data">(.*?)</script>', html, re.S).group(1)
    assert json.loads(payload)["rows"] == [["</script>", "b"]]


def test_bad_input_is_refused_with_the_argument_named() -> None:
    w = torch.rand(2, 3, 3)
    with pytest.raises(ValueError, match="weights has shape"):
        lib.attention_explorer(w, list("abc"), list("abc"))
    with pytest.raises(ValueError, match="selector 'head' has 3 options"):
        lib.attention_explorer(w, list("abc"), list("abc"), selectors=[("head", ["0", "1", "2"])])
    with pytest.raises(ValueError, match="rows: every label list must have 3 labels"):
        lib.attention_explorer(w[0], list("ab"), list("abc"))
    with pytest.raises(ValueError, match="values has 2 numbers"):
        lib.attention_explorer(w[0], list("abc"), list("abc"), values=[1, 2])
    with pytest.raises(ValueError, match="scores must be"):
        lib.softmax_explorer([2, 4], torch.rand(3, 8))
    with pytest.raises(ValueError, match="one value per offset"):
        lib.similarity_explorer([0, 1], {"a": [1.0]})
    with pytest.raises(ValueError, match="lookahead must be"):
        lib.mask_explorer(["a", "b"], lib.causal_mask(3), torch.ones(3, dtype=torch.bool))


def test_the_mask_explorer_refuses_a_mask_that_is_not_boolean() -> None:
    """Issue 59, 6: PyTorch's additive float mask (0 = may attend, -inf = blocked) was read with
    .bool(), which is True exactly where it blocks: a causal mask showed "query 0 sees 2 keys: b c"."""
    causal = lib.causal_mask(3)
    additive = torch.zeros(3, 3).masked_fill(~causal, float("-inf"))
    everywhere = torch.ones(3, dtype=torch.bool)
    with pytest.raises(TypeError, match=r"lookahead must be a boolean mask.* got a torch.float32 tensor"):
        lib.mask_explorer(list("abc"), additive, everywhere)
    with pytest.raises(TypeError, match=r"padding must be a boolean mask.* got a torch.int64 tensor"):
        lib.mask_explorer(list("abc"), causal, torch.ones(3, dtype=torch.long))
    shown = lib.mask_explorer(list("abc"), additive != float("-inf"), everywhere)  # the conversion it names
    assert "query 0 “a” sees 1 key: a" in shown.html


def test_an_explorer_over_the_page_budget_is_refused() -> None:
    many = torch.rand(80, 40, 40)
    with pytest.raises(ValueError, match=r"bytes, over 300,000"):
        lib.attention_explorer(many, [str(i) for i in range(40)], [str(i) for i in range(40)],
                               selectors=[("head", [str(i) for i in range(80)])])  # fmt: skip


def test_the_softmax_explorer_computes_both_softmaxes() -> None:
    d_ks, scores = [4, 64], torch.tensor([[2.0, 0.0, -2.0], [16.0, 0.0, -8.0]])
    html = lib.softmax_explorer(d_ks, scores).html
    data = json.loads(re.search(r'class="data">(.*?)</script>', html, re.S).group(1))
    expected = torch.softmax(scores[1] / math.sqrt(64), dim=-1).max().item()
    assert data["scaled"]["max"][1] == pytest.approx(expected)
    assert data["unscaled"]["max"][1] == pytest.approx(torch.softmax(scores[1], dim=-1).max().item())


def test_colours_run_to_the_largest_weight_as_plot_attention() -> None:
    """By default the darkest colour is the largest weight of all views (lib.plot_attention's vmax)."""
    weights = torch.tensor([[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]])
    html = lib.attention_explorer(weights, list("abc"), list("xyz")).html
    assert f'fill="{X.blues(1.0)}"' in html and f'fill="{X.blues(0.5)}"' in html
    html = lib.attention_explorer(weights, list("abc"), list("xyz"), vmax=1.0).html
    assert f'fill="{X.blues(0.5)}"' in html and f'fill="{X.blues(1.0)}"' not in html
    with pytest.raises(ValueError, match="vmax must be positive"):
        lib.attention_explorer(weights, list("abc"), list("xyz"), vmax=0.0)


# ---- what a caller's strings can do to the page --------------------------------------------------

# A label that would end a script or open an HTML comment inside one, script in an attribute or a
# string, and the two line separators a JavaScript string literal must not hold raw.
HOSTILE = [
    "<!--<script>",
    "</script><script>document.body.setAttribute('data-pwned','1')</script>",
    "x');document.body.setAttribute('data-pwned','1');('",
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">",
    "a\u2028b\u2029&amp;",
]


def hostile_examples() -> dict[str, X.Explorer]:
    """One explorer of each kind that takes strings, every string of it hostile."""
    h = HOSTILE
    step = {"token": h[0], "p": 0.5, "top": [(h[0], 0.5), (h[1], 0.25)]}
    return {
        "attention": lib.attention_explorer(
            torch.tensor([[[0.75, 0.25], [0.5, 0.5]], [[0.25, 0.75], [1.0, 0.0]]]),
            [[h[0], h[1]], [h[2], h[3]]],
            [[h[4], h[0]], [h[1], h[2]]],
            selectors=[(h[0], [h[1], h[3]])],
            values=[1.0, 2.0],
            row_title=h[2],
            column_title=h[0],
            name="hostile-attention",
        ),
        "masks": lib.mask_explorer(h[:4], lib.causal_mask(4), torch.ones(4, dtype=torch.bool), name="hostile_masks"),
        "positions": lib.similarity_explorer(
            [0, 1, 2], {h[0]: [1.0, 0.5, 0.0], h[1]: [1.0, 0.9, 0.8]}, ylabel=h[3], name="hostile-positions"
        ),
        "decoding": lib.decoding_explorer(h[1], {h[0]: [step, step], h[2]: [step]}, name="hostile-decoding"),
    }


def script_bodies(html: str) -> list[str]:
    return re.findall(r"<script\b[^>]*>(.*?)</script>", html, re.S | re.I)


@pytest.mark.parametrize("name", ["x');document.body.setAttribute('data-pwned','1');('", "", "a b", "a\n", "é", "x<y"])
def test_a_name_that_is_not_letters_digits_dash_or_underscore_is_refused(name: str) -> None:
    """``name`` goes into the element's id, its CSS and its script: only ``[A-Za-z0-9_-]+`` may."""
    makers = [
        lambda: lib.attention_explorer(torch.eye(2), ["a", "b"], ["c", "d"], name=name),
        lambda: lib.mask_explorer(["a", "b"], lib.causal_mask(2), torch.ones(2, dtype=torch.bool), name=name),
        lambda: lib.softmax_explorer([2, 4], torch.rand(2, 3), name=name),
        lambda: lib.similarity_explorer([0, 1], {"a": [1.0, 0.5]}, name=name),
        lambda: lib.decoding_explorer("x", {"greedy": [{"token": "a", "p": 1.0, "top": [("a", 1.0)]}]}, name=name),
    ]
    for make in makers:
        with pytest.raises(ValueError, match=r"name=.*\[A-Za-z0-9_-\]\+"):
            make()


def test_a_name_that_is_not_a_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="name must be a str"):
        lib.attention_explorer(torch.eye(2), ["a", "b"], ["c", "d"], name=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", list(hostile_examples()))
def test_hostile_strings_cannot_leave_their_place(kind: str) -> None:
    """No script body holds ``<!--``, ``<script`` or ``</`` (which would end it early, or put the parser in a
    state where the rest of the page vanishes), no hostile string makes an element, and the data read back
    is the strings given."""
    html = hostile_examples()[kind].html
    bodies = script_bodies(html)
    assert len(bodies) == 2  # the data and the code
    for body in bodies:
        assert not re.search(r"<!--|<script|</", body, re.I), body[:200]
        assert "\u2028" not in body and "\u2029" not in body
    assert "<img" not in html and html.count("<script") == 2
    data = json.loads(bodies[0])
    h = HOSTILE
    expected = {
        "attention": lambda: (data["rows"], data["cols"], data["row_title"]) == (
            [[h[0], h[1]], [h[2], h[3]]], [[h[4], h[0]], [h[1], h[2]]], h[2]),
        "masks": lambda: data["tokens"] == h[:4],
        "positions": lambda: (data["kinds"], data["ylabel"]) == ([h[0], h[1]], h[3]),
        "decoding": lambda: data["rules"] == [h[0], h[2]] and data["runs"][h[0]][0]["top"][1][0] == h[1],
    }  # fmt: skip
    assert expected[kind]()


def test_the_kit_writes_script_data_that_neither_ends_nor_comments_the_script() -> None:
    from lib.book.explorers import kit

    value = {"label": "</script><!--<script>&\u2028\u2029", "n": [1, 2.5]}
    for written in (kit.script_json(value), kit.js(value)):
        assert not re.search(r"[<>&\u2028\u2029]", written), written
        assert json.loads(written) == value  # what JSON.parse and a JavaScript literal read back
    for body in ("a<!--b", "x</y", "<SCRIPT>"):
        with pytest.raises(ValueError, match="a script body must not hold"):
            kit.script(body)
    assert kit.script("if(a<b&&c>d)f();") == "<script>if(a<b&&c>d)f();</script>"


def test_the_kit_escapes_text_and_attributes_and_passes_only_its_own_markup() -> None:
    from lib.book.explorers import kit
    from lib.book.explorers.words import say

    hostile = "<img src=x onerror='y'>\"&"
    element = kit.el("text", hostile, kit.el("b", "ok"), data_label=hostile, x=1.25, width=12.0, size=3)
    assert element == (
        '<text data-label="&lt;img src=x onerror=&#x27;y&#x27;&gt;&quot;&amp;" x="1.25" width="12" size="3">'
        "&lt;img src=x onerror=&#x27;y&#x27;&gt;&quot;&amp;<b>ok</b></text>"
    )
    assert kit.el("b", "x") + "<i>" == "<b>x</b>&lt;i&gt;" and "<i>" + kit.el("b", "x") == "&lt;i&gt;<b>x</b>"
    assert say("softmax.slider", value="<i>") == "d<sub>k</sub> = &lt;i&gt;"  # markup entries escape their fields
    assert say("masks.readout", i="0", token="<b>", n="1", keys="key", seen="<b>", allowed="1", pairs="1").startswith(
        "query 0 “<b>” sees"
    )  # text entries stay text, escaped where they enter the page
    with pytest.raises(TypeError, match="attribute x must be a str or a number"):
        kit.el("rect", x=[1])
    with pytest.raises(TypeError, match="content must be a str"):
        kit.el("text", 3)


def test_every_number_is_written_by_one_function() -> None:
    from lib.book.explorers.kit import number

    assert [number(12.0), number(0.5), number(3), number(-1.239), number(0.5, ".2f"), number(7, "g")] == [
        "12", "0.5", "3", "-1.24", "0.50", "7"
    ]  # fmt: skip
    for bad in (True, "1", None):
        with pytest.raises(TypeError, match="a number on the page must be a real number"):
            number(bad)


# --- Another language: each explorer carries how it was drawn, and is drawn again in that language ----


def test_an_explorer_carries_how_it_was_drawn_and_is_drawn_again_the_same() -> None:
    import json

    from lib.book.explorers import EXPLORER_MIME, redraw

    weights = torch.softmax(torch.randn(2, 3, 3, generator=torch.Generator().manual_seed(0)), -1)
    shown = lib.attention_explorer(weights, ["a", "b", "c"], ["x", "y", "z"], selectors=[("head", ["0", "1"])])
    bundle = shown._repr_mimebundle_()
    call = json.loads(json.dumps(bundle[EXPLORER_MIME]))  # as a notebook stores it
    assert call["explorer"] == "attention_explorer" and call["terms"] == ["0", "1", "head", "key", "query"]
    assert redraw(call, {}).html == shown.html


def test_an_explorer_drawn_again_keeps_the_order_of_its_options() -> None:
    """A notebook stores an output's JSON with its keys sorted: the Chinese site's positions explorer
    opened on "learned" and its decoding explorer listed beam search before greedy, unlike the code.
    A mapping's order survives the round trip."""
    import json

    from lib.book.explorers import EXPLORER_MIME, redraw

    curves = {"sinusoidal": [1.0, 0.5], "learned": [1.0, 0.2], "relative": [1.0, 0.9]}
    shown = lib.similarity_explorer([0, 1], curves, ylabel="cosine")
    call = json.loads(json.dumps(shown._repr_mimebundle_()[EXPLORER_MIME], sort_keys=True))
    again = redraw(call, {}).html
    assert again == shown.html
    assert again.index(">sinusoidal<") < again.index(">learned<") < again.index(">relative<")


def test_an_explorer_drawn_in_another_language_speaks_it_in_its_figure_and_its_script() -> None:
    from lib.book.explorers import redraw, speaking
    from lib.book.explorers.words import WORDS

    weights = torch.softmax(torch.randn(3, 3, generator=torch.Generator().manual_seed(0)), -1)
    shown = lib.attention_explorer(weights, ["a", "b", "c"], ["x", "y", "z"])
    zh = {
        WORDS["attention.hint"]: "指向一个{row}（一行），查看它在各个{column}上的权重。",
        WORDS["attention.readout"]: "{row}“{label}”{views}：权重最大的是“{key}”（{weight}）；权重之和为 {sum}",
        "query": "查询",
        "key": "键",
        "seed {0}": "种子 {0}",
    }
    chinese = redraw(shown.call, zh).html
    hint = "".join(re.findall(r">([^<>]*)</text>", chinese))  # its lines, wrapped to the figure
    assert "指向一个查询（一行），查看它在各个键上的权重。" in hint  # the first state, drawn in Python
    assert "权重最大的是" in chinese and "Point at a" not in chinese
    assert "\\u6307\\u5411" in chinese or "指向" in chinese.split("<script", 2)[2]  # the script's words too
    with speaking(zh):
        from lib.book.explorers.words import term

        assert term("seed 12") == "种子 12" and term("query") == "查询" and term("value") == "value"
    assert "Point at a" in lib.attention_explorer(weights, ["a", "b", "c"], ["x", "y", "z"]).html  # English again


def test_the_readout_says_when_a_row_shows_no_preference() -> None:
    """A row of equal weights has no "most weight": the line says so (it said "most weight on 'cat'
    (0.25)" for four equal weights, and picked "cat" for 0.50/0.50)."""
    even = lib.attention_explorer(torch.full((1, 4), 0.25), ["q"], ["cat", "dog", "sat", "mat"])
    assert "equal weight on all 4 keys (0.25 each)" in even.html and "most weight" not in even.html.split("<script")[0]
    two = lib.attention_explorer(torch.tensor([[0.5, 0.5, 0.0]]), ["q"], ["cat", "dog", "mat"])
    assert "equal weight on “cat”, “dog” (0.50 each)" in two.html
    one = lib.attention_explorer(torch.tensor([[0.7, 0.2, 0.1]]), ["q"], ["cat", "dog", "mat"])
    assert "most weight on “cat” (0.70)" in one.html


def test_a_translated_markup_template_is_text_but_for_the_english_entrys_tags() -> None:
    """Issue 59: the translation of a markup entry (d<sub>k</sub> = {value}) became Html as it came, so
    a catalog could write any markup into the page, against the kit's rule that only the package's own
    strings are markup. Now it is escaped like any text, the tags of the English entry excepted."""
    from lib.book.explorers import redraw, speaking
    from lib.book.explorers.words import WORDS, say

    hostile = {WORDS["softmax.slider"]: "<img src=x onerror=alert(1)> d<sub>k</sub> = {value} <b>", "x": "<i>"}
    with speaking(hostile):
        said = say("softmax.slider", value="<4>")
    assert said == "&lt;img src=x onerror=alert(1)&gt; d<sub>k</sub> = &lt;4&gt; &lt;b&gt;"
    with speaking({WORDS["softmax.slider"]: WORDS["softmax.slider"]}):  # the Chinese catalog keeps it as it is
        assert say("softmax.slider", value="4") == "d<sub>k</sub> = 4"
    shown = lib.softmax_explorer([2, 4], torch.rand(2, 3, generator=torch.Generator().manual_seed(0)))
    page = redraw(shown.call, hostile).html
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt; d<sub>k</sub>" in page


def _texts(html: str) -> list[tuple[float, float, str, bool, str]]:
    """Each ``<text>`` of an explorer's figure: x, font size, anchor, whether it is turned, and content."""
    found = re.findall(r"(<text\b[^>]*>)([^<]*)</text>", html)
    return [
        (float(re.search(r'\bx="([-\d.]+)"', tag)[1]), float(re.search(r'font-size="([\d.]+)"', tag)[1]),
         re.search(r'text-anchor="(\w+)"', tag)[1], "rotate(" in tag, html_module.unescape(content))
        for tag, content in found
    ]  # fmt: skip


def _width(html: str) -> float:
    return float(re.search(r'<svg\b[^>]*\bviewBox="0 0 ([\d.]+) ', html)[1])


def test_words_wrap_into_lines_that_fit_in_any_language() -> None:
    from lib.book.explorers.draw import text_width, wrap

    english = "Point at a query (a row) to see its weights over the keys."
    assert wrap(english, 10, 1000) == [english]
    lines = wrap(english, 10, 200)
    assert " ".join(lines) == english and all(text_width(line, 10) <= 200 for line in lines)
    assert lines == ["Point at a query (a row) to", "see its weights over the keys."]  # balanced, no word alone
    chinese = "指向一个查询（一行），查看它在各个键上的权重。"
    lines = wrap(chinese, 10, 130)
    assert "".join(lines) == chinese and all(text_width(line, 10) <= 130 for line in lines)
    assert not any(line[0] in "，。）" for line in lines)  # no line starts with closing punctuation
    assert not any(line[-1] in "（" for line in lines)  # nor ends with an opening one
    assert wrap("", 10, 100) == [] and wrap("unbreakable", 10, 5) == ["unbreakable"]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_no_word_of_a_heatmap_explorer_runs_past_its_figure(language: str) -> None:
    """Issue 64: the Chinese hint of chapter 2's lookup explorer ran 23 px past the figure's edge and was
    cut off (its width was reckoned at 0.9 of the hint's, a CJK character being a full em). In the
    attention and mask explorers every left-aligned text now ends inside the figure, by the generous
    estimate :func:`text_width`: the words under the map wrap to its width."""
    from lib.book.explorers import redraw
    from lib.book.explorers.draw import text_width
    from lib.book.explorers.words import WORDS

    zh = {
        WORDS["attention.hint"]: "指向一个{row}（一行），查看它在各个{column}上的权重。",
        WORDS["attention.bars"]: "该{row}在各个{column}上的权重",
        WORDS["masks.legend"]: "蓝色：可以关注 · ×：被屏蔽（分数设为 −∞）",
        "query": "查询",
        "key": "键",
    }
    q = ['q = k("dog")', 'q = (k("cat") + k("dog")) / 2', "q = 0"]
    lookup = lib.attention_explorer(torch.eye(3, 4), q, ["cat", "dog", "car", "tree"], values=[3, 7, 20, 50])
    for explorer in [lookup, *(examples()[name] for name in ("lookup", "heads", "masks"))]:
        html = explorer.html if language == "en" else redraw(explorer.call, zh).html
        width = _width(html)
        for x, size, anchor, turned, content in _texts(html):
            if anchor == "start":  # a column's label rises at 45 degrees: cos 45° of its length to the right
                assert x + (0.72 if turned else 1) * text_width(content, size) <= width + 0.5, (explorer.name, content)


def test_every_row_is_a_target_a_finger_can_tap() -> None:
    """Issue 64: a row the reader points at is a target of 24 x 24 CSS px or more on a phone, where an
    explorer may shrink to 91 % (book.css): its band (``rect.row-target``: its label and its cells) is at
    least 27 px high and wide, and its label at least 10 px (9.1 px there). Chapter 10's cloze explorer,
    12 people by 20 cities, had rows 16 px high and labels of 10 px; a one-letter label was 3 px wide."""
    cloze = lib.attention_explorer(torch.rand(2, 12, 20), [f"person {i}" for i in range(12)],
                                   [f"city {j}" for j in range(20)], selectors=[("model", ["before", "after"])])  # fmt: skip
    for explorer in [cloze, *examples().values()]:
        html = explorer.html
        rows = re.findall(r"<text\b[^>]*\bdata-index=[^>]*>", html)
        bands = dict(
            (index, (float(w), float(h)))
            for w, h, index in re.findall(
                r'<rect\b[^>]*?width="([\d.]+)" height="([\d.]+)"[^>]*class="row-target" data-row="(\d+)"', html
            )
        )
        assert set(bands) == {re.search(r'data-index="(\d+)"', r)[1] for r in rows}, explorer.name
        for width, height in bands.values():
            assert width >= 27 and height >= 27 * 0.999, (explorer.name, width, height)
        for row in rows:
            assert float(re.search(r'font-size="([\d.]+)"', row)[1]) >= 10, row


def test_a_distribution_is_not_called_weights() -> None:
    """Issue 64: chapter 10's cloze explorer shows a model's probabilities over the cities, and called
    them weights, attention's word. With quantity="probabilities" the figure, its script and its
    readout say probabilities; everything drawn is the same; the Chinese redraw keeps the choice."""
    import json

    from lib.book.explorers import EXPLORER_MIME, redraw

    p = torch.softmax(torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(1)), -1)
    args = (p, ["Ana", "Bo", "Cy"], ["Lima", "Oslo", "Riga", "Rome"])
    kw = dict(selectors=[("model", ["before", "after"])], row_title="person", column_title="place")
    shown = lib.attention_explorer(*args, **kw, quantity="probabilities")
    weights = lib.attention_explorer(*args, **kw)
    readout = re.search(r'class="explorer-readout"[^>]*>([^<]*)<', shown.html).group(1)
    assert "most probable" in readout and "probabilities sum to 1.00" in readout and "weight" not in readout
    assert "show its probabilities" in shown.html and "its weights" not in shown.html  # the rows' labels
    script = re.search(r"S=(\{.*?\});", shown.html).group(1)
    assert "most probable" in script and "most weight" not in script and '"bar"' in script  # the rest: attention's
    same = re.sub(r"weights|most weight on|probabilities|most probable", "", weights.html)
    assert len(shown.html) != len(weights.html) and "rect" in same
    call = json.loads(json.dumps(shown._repr_mimebundle_()[EXPLORER_MIME], sort_keys=True))
    assert redraw(call, {}).html == shown.html
    with pytest.raises(ValueError, match="quantity='probability' is unknown"):
        lib.attention_explorer(*args, **kw, quantity="probability")
