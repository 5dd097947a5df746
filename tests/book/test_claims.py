"""lib.claim: NumPy values as readably as Python and torch ones; a wrapped box in notebooks, one line elsewhere."""

import subprocess
import sys

import numpy as np
import pytest

from lib.book.claims import CheckedClaim, check, claim, claim_line, format_value
from tools.book_ext import CLAIM_LINE


def test_numpy_scalars_and_arrays_are_rounded_like_floats():
    assert format_value(np.float32(15.387586)) == "15.4"
    assert format_value(np.float64(4.591083e6)) == "4.59e+06"
    assert format_value(np.array([1.23456, 2.0])) == "[1.23, 2]"
    assert format_value(np.int64(3)) == "3"
    assert format_value(np.bool_(True)) == "True"


def test_claim_line_with_numpy_values(capsys):
    claim("a ratio is small", bool(np.float32(0.5) < 1), ratio=np.float32(0.5))
    assert capsys.readouterr().out.strip() == "✔ Claim: a ratio is small — ratio=0.5"


def test_a_claim_that_does_not_hold_raises_its_line():
    with pytest.raises(AssertionError, match=r"^✘ Claim: a ratio is small — ratio=2$"):
        claim("a ratio is small", bool(np.float32(2.0) < 1), ratio=np.float32(2.0))


def test_a_failing_claim_raises_with_its_line():
    with pytest.raises(AssertionError) as raised:
        claim("a ratio is large", False, ratio=0.5)
    assert str(raised.value) == "✘ Claim: a ratio is large — ratio=0.5"


def test_plain_text_form_is_the_line_the_site_build_collects():
    shown = CheckedClaim.of("scores <b>scale</b> as d_k", True, {"var": 0.98123, "d_k": 64})
    assert repr(shown) == str(shown) == shown.line == "✔ Claim: scores <b>scale</b> as d_k — var=0.981, d_k=64"
    assert shown.line == claim_line("scores <b>scale</b> as d_k", True, {"var": 0.98123, "d_k": 64})
    m = CLAIM_LINE.match(repr(shown))
    assert (m["mark"], m["statement"], m["values"]) == ("✔", "scores <b>scale</b> as d_k", "var=0.981, d_k=64")
    assert CheckedClaim.of("no values", True, {}).line == "✔ Claim: no values"


def test_html_box_wraps_and_escapes():
    box = CheckedClaim.of("scores <b>scale</b> as d_k & more", True, {"var": 0.98123, "d_k": 64})._repr_html_()
    assert box.startswith('<div class="book-claim" style="') and box.endswith("</div>")
    assert "overflow-wrap: anywhere" in box and "white-space: normal" in box and "max-width: 100%" in box
    assert "scores &lt;b&gt;scale&lt;/b&gt; as d_k &amp; more" in box and "<b>" not in box
    assert "✔" in box and "var=0.981" in box and "d_k=64" in box
    assert "<style" not in box and "class=" not in box.replace('class="book-claim"', "")  # inline styles only
    assert "✘" in CheckedClaim.of("x", False, {})._repr_html_()


def test_under_ipython_the_claim_is_displayed_as_a_box(monkeypatch, capsys):
    IPython = pytest.importorskip("IPython")
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    claim("a ratio is small", True, ratio=0.5)
    assert capsys.readouterr().out == ""
    assert len(shown) == 1 and isinstance(shown[0], CheckedClaim)
    assert repr(shown[0]) == "✔ Claim: a ratio is small — ratio=0.5"


def test_lib_claims_work_without_ipython():
    code = (
        "import sys; sys.modules['IPython'] = None\n"  # any `import IPython` now fails
        "import lib.book\n"
        "from lib import claim\n"
        "claim('it runs without IPython', True, n=1)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "✔ Claim: it runs without IPython — n=1"


def test_site_build_collects_and_anchors_displayed_claims():
    """tools/book_ext.py reads a displayed claim's text/plain and anchors whichever rendering the page keeps."""
    from types import SimpleNamespace

    from docutils import nodes

    from tools.book_ext import collect_claims

    shown = CheckedClaim.of("a ratio is small", True, {"ratio": 0.5})
    plain = nodes.literal_block(shown.line, shown.line, classes=["output", "text_plain"])
    box = nodes.raw("", shown._repr_html_(), format="html", classes=["output", "text_html"])
    bundle = nodes.container(
        "",
        nodes.container("", plain, mime_type="text/plain"),
        nodes.container("", box, mime_type="text/html"),
        nb_element="mime_bundle",
    )
    printed = nodes.literal_block("", "✔ Claim: printed — n=1", classes=["output", "stream"])
    doctree = nodes.document(None, None)
    doctree += nodes.container("", bundle, printed, classes=["cell_output"])
    env = SimpleNamespace(docname="book/05_x")
    collect_claims(SimpleNamespace(env=env), doctree)
    assert env.book_claims["book/05_x"] == [
        {"kind": "Claim", "statement": "a ratio is small", "values": "ratio=0.5", "held": True, "anchor": "claim-1"},
        {"kind": "Claim", "statement": "printed", "values": "n=1", "held": True, "anchor": "claim-2"},
    ]
    assert plain["ids"] == box["ids"] == ["claim-1"] and printed["ids"] == ["claim-2"]


def test_check_is_a_claim_of_its_own_kind(capsys) -> None:
    check("two implementations agree", True, max_abs_diff=3.1e-6)
    assert capsys.readouterr().out.strip() == "✔ Check: two implementations agree — max_abs_diff=3.1e-06"
    with pytest.raises(AssertionError, match=r"^✘ Check: they agree — err=1$"):
        check("they agree", False, err=1)
    with pytest.raises(ValueError, match="kind"):
        CheckedClaim.of("x", True, {}, kind="Finding")
    m = CLAIM_LINE.match(CheckedClaim.of("x", True, {"a": 1}, "Check").line)
    assert (m["kind"], m["statement"], m["values"]) == ("Check", "x", "a=1")


def test_the_ledger_reads_the_sweep_by_statement_and_occurrence(tmp_path) -> None:
    import json

    from tools.book_ext import _span, read_sweep

    claim = {"kind": "Claim", "held": [0, 1], "failed": [], "values": {"acc": [0.91, 0.97]}}
    data = {"chapters": {"04": {"seeds": [0, 1], "claims": [{**claim, "statement": "s"}, {**claim, "statement": "s"}]}}}
    path = tmp_path / "claims_sweep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    sweep = read_sweep(path)
    assert set(sweep["04"]) == {"seeds", ("s", 0), ("s", 1)}
    assert read_sweep(tmp_path / "missing.json") == {}
    assert (_span(0.91, 0.97), _span(6.0, 6.0), _span(0.1234, 0.12341)) == ("0.91–0.97", "6", "0.123")
