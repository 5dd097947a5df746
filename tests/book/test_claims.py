"""lib.claim: a MIME bundle in notebooks (the box, the line, the claim as data), one line elsewhere;
the readers of that data: the site's Claims appendix (tools/book_ext/claims_ledger.py) and the seed sweep's ledger."""

import json
import math
import re
import subprocess
import sys

import nbformat
import numpy as np
import pytest
import torch

from lib.book.claims import (
    CLAIM_MIME,
    CheckedClaim,
    check,
    claim,
    claim_line,
    format_value,
    read_claims,
    to_json,
)


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


@pytest.mark.parametrize("record", [claim, check])
def test_holds_must_be_a_boolean(record, capsys):
    """A number is not the outcome of a check: ``claim(s, acc.min())`` (the comparison forgotten) or
    a NaN would otherwise pass as true."""
    for holds, came in [
        (torch.tensor(0.37), "torch.float32 tensor of shape ()"),
        (torch.tensor(float("nan")), "torch.float32 tensor of shape ()"),
        (torch.tensor([1]), "torch.int64 tensor of shape (1,)"),
        (0.37, "float 0.37"),
        (1, "int 1"),
        (np.float64(1.0), "float64"),
        (np.array([True]), "ndarray"),
        (None, "NoneType None"),
        ("yes", "str 'yes'"),
    ]:
        with pytest.raises(
            TypeError, match=r"^holds must be a bool, a numpy.bool_ or a one-element torch.bool"
        ) as raised:
            record("a ratio is small", holds, ratio=0.5)
        assert came in str(raised.value)
    with pytest.raises(ValueError, match=r"holds must be a single truth value.*\(2,\)"):
        record("a ratio is small", torch.tensor([True, True]), ratio=0.5)
    assert capsys.readouterr().out == ""  # nothing was shown
    acc = torch.tensor([0.93, 0.97])
    for holds in (acc.min() > 0.9, (acc > 0.9).all().reshape(1), np.bool_(True), np.float32(0.5) < 1, True):
        record("accuracy is above 0.9", holds, lowest=acc.min())
    assert capsys.readouterr().out.count("accuracy is above 0.9 — lowest=0.93") == 5
    with pytest.raises(AssertionError, match="accuracy is above 0.95"):
        record("accuracy is above 0.95", acc.min() > 0.95, lowest=acc.min())


@pytest.mark.parametrize("record", [claim, check])
def test_a_claim_that_holds_on_a_nan_value_is_refused(record, capsys):
    """Every comparison with NaN is False, so ``not (loss > 1)`` holds on a diverged run: a claim
    that holds while a value it records is NaN is refused, naming the value."""
    nan = float("nan")
    for measured, where in [
        (dict(loss=nan), "loss"),
        (dict(ok=1.0, loss=np.float32(nan)), "loss"),
        (dict(loss=torch.tensor(nan)), "loss"),
        (dict(losses=torch.tensor([0.5, nan, 0.2])), "losses[1]"),
        (dict(losses=np.array([[0.5], [nan]])), "losses[1][0]"),
        (dict(per_seed={"a": [0.1, nan]}), "per_seed['a'][1]"),
    ]:
        with pytest.raises(ValueError, match=r"holds, but the value it records, (.*), is NaN") as raised:
            record("the loss stays below 1", True, **measured)
        assert f"records, {where}, is NaN" in str(raised.value)
    assert capsys.readouterr().out == ""  # not shown as held
    record("the loss stays below 1", True, loss=0.5, kind="nan", name="")  # a string is a string
    with pytest.raises(AssertionError, match=r"^✘ .*: the loss stays below 1 — loss=nan$"):  # a failed one is shown
        record("the loss stays below 1", False, loss=nan)


@pytest.mark.parametrize("record", [claim, check])
def test_a_claim_that_holds_on_nothing_or_on_infinity_is_refused(record, capsys):
    """Issue 59, 7: all([]) and an empty tensor's .all() are True, and inf > 2 is True: a claim over no
    values, or over a ratio whose denominator was 0, held. It is refused, naming the value; recorded by
    a claim that does not hold, the same values are shown as they are."""
    for measured, where, what in [
        (dict(accs=[]), "accs", "empty"),
        (dict(accs=torch.tensor([])), "accs", "empty"),
        (dict(per_seed={"a": []}), "per_seed['a']", "empty"),
        (dict(speedup=math.inf), "speedup", "infinite"),
        (dict(losses=[1.0, -math.inf]), "losses[1]", "infinite"),
        (dict(ratio=np.float64(np.inf)), "ratio", "infinite"),
    ]:
        holds = all(v > 0.9 for v in measured.get("accs", [])) if "accs" in measured else True
        with pytest.raises(ValueError, match=rf"holds, but the value it records, {re.escape(where)}, is {what}"):
            record("every accuracy is above 0.9, and the speed-up over 2", holds, **measured)
    assert capsys.readouterr().out == ""  # not shown as held
    with pytest.raises(AssertionError, match=r"^✘ .*: speed-up over 2 — speedup=inf, accs=\[\]$"):
        record("speed-up over 2", False, speedup=math.inf, accs=[])


def test_plain_text_form_is_the_line_the_site_build_collects():
    shown = CheckedClaim.of("scores <b>scale</b> as d_k", True, {"var": 0.98123, "d_k": 64})
    assert repr(shown) == str(shown) == shown.line == "✔ Claim: scores <b>scale</b> as d_k — var=0.981, d_k=64"
    assert shown.line == claim_line("scores <b>scale</b> as d_k", True, {"var": 0.98123, "d_k": 64})
    assert shown._repr_mimebundle_()["text/plain"] == shown.line
    assert shown.data == {
        "kind": "Claim",
        "statement": "scores <b>scale</b> as d_k",
        "holds": True,
        "values": {"var": 0.98123, "d_k": 64},
    }
    assert CheckedClaim.of("no values", True, {}).line == "✔ Claim: no values"


def test_html_box_wraps_and_escapes():
    box = CheckedClaim.of("scores <b>scale</b> as d_k & more", True, {"var": 0.98123, "d_k": 64})._repr_html_()
    assert box.startswith('<div class="book-claim" style="') and box.endswith("</div>")
    assert "overflow-wrap: anywhere" in box and "white-space: normal" in box and "max-width: 100%" in box
    assert "scores &lt;b&gt;scale&lt;/b&gt; as d_k &amp; more" in box and "<b>" not in box
    assert "✔" in box and "var=0.981" in box and "d_k=64" in box
    assert "<style" not in box and "class=" not in box.replace('class="book-claim"', "")  # inline styles only
    assert "✘" in CheckedClaim.of("x", False, {})._repr_html_()


@pytest.fixture
def under_ipython(monkeypatch):
    """As if an IPython kernel ran: what ``display`` is given is appended to the list returned."""
    IPython = pytest.importorskip("IPython")
    ipython_display = pytest.importorskip("IPython.display")

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(ipython_display, "display", lambda obj: shown.append(obj))
    return shown


def test_under_ipython_the_claim_is_displayed_as_a_box(under_ipython, capsys):
    shown = under_ipython
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


def _mime_bundle(bundle: dict):
    """The doctree myst-nb makes of a displayed output: one container per MIME type, side by side."""
    from docutils import nodes

    from tools.book_ext.claim_data import ClaimDataRenderer

    renderings = []
    for mime_type, content in bundle.items():
        if mime_type == "text/plain":
            node = nodes.literal_block(content, content, classes=["output", "text_plain"])
        elif mime_type == "text/html":
            node = nodes.raw("", content, format="html", classes=["output", "text_html"])
        else:
            data = type("MimeData", (), {"mime_type": mime_type, "content": content})
            [node] = ClaimDataRenderer.handle_mime(None, data, False)
        renderings.append(nodes.container("", node, mime_type=mime_type))
    return nodes.container("", *renderings, nb_element="mime_bundle")


def test_site_build_collects_and_anchors_displayed_claims():
    """tools/book_ext/claim_data.py reads a displayed claim's data (never printed text) and anchors whichever
    rendering the page keeps."""
    from types import SimpleNamespace

    from docutils import nodes

    from tools.book_ext.claim_data import collect_claims

    first = _mime_bundle(CheckedClaim.of("a ratio is small", True, {"ratio": 0.5})._repr_mimebundle_())
    second = _mime_bundle(
        CheckedClaim.of("RNN — no attention — stays below", True, {"acc": [0.41, 0.3]})._repr_mimebundle_()
    )
    printed = nodes.literal_block("", "✔ Claim: printed — n=1", classes=["output", "stream"])
    doctree = nodes.document(None, None)
    doctree += nodes.container("", first, printed, second, classes=["cell_output"])
    env = SimpleNamespace(docname="book/05_x")
    collect_claims(SimpleNamespace(env=env), doctree)
    assert env.book_claims["book/05_x"] == [
        {
            "kind": "Claim",
            "statement": "a ratio is small",
            "shown": "a ratio is small",  # the statement in the page's language (tools/i18n_ext/outputs.py)
            "values": "ratio=0.5",
            "held": True,
            "anchor": "claim-1",
        },
        {
            "kind": "Claim",
            "statement": "RNN — no attention — stays below",
            "shown": "RNN — no attention — stays below",
            "values": "acc=[0.41, 0.3]",
            "held": True,
            "anchor": "claim-2",
        },
    ]
    plain, box, data = (rendering.children[0] for rendering in first.children)
    assert plain["ids"] == box["ids"] == ["claim-1"] and data["ids"] == [] and printed["ids"] == []
    assert [r.children[0]["ids"] for r in second.children[:2]] == [["claim-2"], ["claim-2"]]


def test_check_is_a_claim_of_its_own_kind(capsys) -> None:
    check("two implementations agree", True, max_abs_diff=3.1e-6)
    assert capsys.readouterr().out.strip() == "✔ Check: two implementations agree — max_abs_diff=3.1e-06"
    with pytest.raises(AssertionError, match=r"^✘ Check: they agree — err=1$"):
        check("they agree", False, err=1)
    with pytest.raises(ValueError, match="kind"):
        CheckedClaim.of("x", True, {}, kind="Finding")
    shown = CheckedClaim.of("x", True, {"a": 1}, "Check")
    assert shown.line == "✔ Check: x — a=1"
    assert shown.data == {"kind": "Check", "statement": "x", "holds": True, "values": {"a": 1}}


def test_the_ledger_reads_the_sweep_by_statement_and_occurrence(tmp_path) -> None:
    import json

    from tools.book_ext.claims_ledger import _span, read_sweep

    claim = {"kind": "Claim", "held": [0, 1], "failed": [], "values": {"acc": [0.91, 0.97]}}
    data = {"chapters": {"04": {"seeds": [0, 1], "claims": [{**claim, "statement": "s"}, {**claim, "statement": "s"}]}}}
    path = tmp_path / "claims_sweep.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    sweep = read_sweep(path)
    assert set(sweep["04"]) == {"seeds", ("s", 0), ("s", 1)}
    assert read_sweep(tmp_path / "missing.json") == {}
    assert (_span(0.91, 0.97), _span(6.0, 6.0), _span(0.1234, 0.12341)) == ("0.91–0.97", "6", "0.123")


# ---- the bundle: the claim as data --------------------------------------------------------------


def _executed(*bundles: dict, kind: str = "display_data") -> dict:
    """An executed notebook's JSON whose one code cell displayed `bundles` (as lib.claim does)."""
    cell = nbformat.v4.new_code_cell("lib.claim(...)")
    cell.outputs = [nbformat.v4.new_output(kind, data=bundle) for bundle in bundles]
    if kind == "execute_result":
        for output in cell.outputs:
            output.execution_count = 1
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# x"), cell])
    nbformat.validate(nb)
    return json.loads(nbformat.writes(nb))


def test_a_statement_with_a_dash_is_read_back_whole():
    """The defect of the printed line: "✔ Claim: RNN — no attention — acc=0.41" split at the first " — "."""
    statement = "no attention — the baseline — stays below 50%"
    shown = CheckedClaim.of(statement, True, {"acc": 0.41})
    assert shown.line == f"✔ Claim: {statement} — acc=0.41"  # the line, unchanged, is ambiguous
    [read] = read_claims(_executed(shown._repr_mimebundle_()))
    assert read.statement == statement and read.values == (("acc", 0.41),) and read == shown


def test_the_bundle_holds_the_line_the_box_and_the_data():
    shown = CheckedClaim.of("scores scale as d_k", True, {"var": 0.98123456789, "d_k": 64})
    bundle = shown._repr_mimebundle_()
    assert CLAIM_MIME == "application/vnd.transformers-book.claim+json" and CLAIM_MIME.endswith("claim+json")
    assert set(bundle) == {"text/plain", "text/html", CLAIM_MIME}
    assert bundle["text/plain"] == "✔ Claim: scores scale as d_k — var=0.981, d_k=64"  # the line as before
    assert bundle["text/html"] == shown._repr_html_()
    assert bundle[CLAIM_MIME] == {
        "kind": "Claim",
        "statement": "scores scale as d_k",
        "holds": True,
        "values": {"var": 0.98123456789, "d_k": 64},  # full precision, not the line's 3 digits
    }
    assert list(bundle[CLAIM_MIME]["values"]) == ["var", "d_k"]  # the caller's order
    assert CheckedClaim.from_data(json.loads(json.dumps(bundle[CLAIM_MIME]))) == shown


def test_values_become_json_data_at_full_precision():
    measured = {
        "f": 0.1 + 0.2,
        "i": 3,
        "b": False,
        "n": None,
        "s": "adam",
        "one": torch.tensor([2.5]),
        "t": torch.tensor([[1.0, 0.5], [0.25, 0.125]]),
        "np": np.float32(15.387586),
        "arr": np.array([1, 2, 3], dtype=np.int64),
        "nb": np.bool_(True),
        "d": {"x": 1.0, 2: [np.float64(1e-9), (4, 5)]},
        "tup": (1, 2.5),
    }
    data = CheckedClaim.of("s", True, measured).data["values"]
    assert data == {
        "f": 0.30000000000000004,
        "i": 3,
        "b": False,
        "n": None,
        "s": "adam",
        "one": 2.5,
        "t": [[1.0, 0.5], [0.25, 0.125]],
        "np": float(np.float32(15.387586)),
        "arr": [1, 2, 3],
        "nb": True,
        "d": {"x": 1.0, "2": [1e-9, [4, 5]]},
        "tup": [1, 2.5],
    }
    assert type(data["i"]) is int and type(data["nb"]) is bool and type(data["arr"][0]) is int
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    line = CheckedClaim.of("s", True, measured).line  # formatted from the data, as from the values before
    assert line.endswith("f=0.3, i=3, b=False, n=None, s=adam, one=2.5, t=[[1, 0.5], [0.25, 0.125]], np=15.4, "
                         "arr=[1, 2, 3], nb=True, d={x: 1, 2: [1e-09, [4, 5]]}, tup=[1, 2.5]")  # fmt: skip
    assert line.endswith(", ".join(f"{k}={format_value(v)}" for k, v in measured.items()))


def test_non_finite_floats_are_strings_in_the_data_and_read_the_same_in_the_line():
    measured = {"nan": float("nan"), "inf": math.inf, "ninf": -np.inf, "t": torch.tensor([1.0, float("nan")])}
    shown = CheckedClaim.of("s", True, measured)
    assert shown.data["values"] == {"nan": "nan", "inf": "inf", "ninf": "-inf", "t": [1.0, "nan"]}
    json.dumps(shown.data, allow_nan=False)  # valid JSON: no NaN, no Infinity
    assert to_json(float("nan")) == "nan" and to_json([math.inf]) == ["inf"]
    assert shown.line == "✔ Claim: s — nan=nan, inf=inf, ninf=-inf, t=[1, nan]"
    assert shown.line == claim_line("s", True, {"nan": float("nan"), "inf": math.inf, "ninf": -math.inf,
                                                "t": [1.0, float("nan")]})  # fmt: skip


def test_read_claims_reads_displays_and_results_and_rejects_malformed_data():
    a = CheckedClaim.of("a", True, {"x": 1})
    b = CheckedClaim.of("b", False, {}, "Check")
    assert read_claims(_executed(a._repr_mimebundle_(), {"text/plain": "✔ Claim: not data — x=1"})) == [a]
    assert read_claims(_executed(b._repr_mimebundle_(), kind="execute_result")) == [b]
    assert read_claims({"cells": [{"cell_type": "markdown", "source": ""}]}) == []
    for bad in (
        [],
        {**a.data, "kind": "Finding"},
        {**a.data, "statement": ""},
        {**a.data, "holds": 1},
        {**a.data, "values": [1]},
    ):
        with pytest.raises(ValueError, match="claim\\+json"):
            CheckedClaim.from_data(bad)


def test_under_ipython_a_failed_claim_is_displayed_then_raises(under_ipython, capsys):
    shown = under_ipython
    with pytest.raises(AssertionError) as raised:
        check("they agree — to rounding", False, err=1.5)
    assert str(raised.value) == "✘ Check: they agree — to rounding — err=1.5"
    assert capsys.readouterr().out == ""
    [failed] = shown
    assert failed._repr_mimebundle_()[CLAIM_MIME] == {
        "kind": "Check",
        "statement": "they agree — to rounding",
        "holds": False,
        "values": {"err": 1.5},
    }
    assert "✘" in failed._repr_mimebundle_()["text/html"]


def test_a_real_kernel_displays_the_bundle(tmp_path):
    """ipykernel sends the bundle as nbformat stores it: the data as a JSON object, valid in the notebook."""
    pytest.importorskip("nbclient")
    from nbclient import NotebookClient

    code = (
        "import lib, math, torch\n"
        "lib.claim('a — b', True, x=1/3, t=torch.tensor([1.0, 2.0]))\n"
        "lib.check('c', 1 > 2, y=2, big=math.inf, bad=math.nan)"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True, resources={}).execute()
    nbformat.validate(nb)
    executed = json.loads(nbformat.writes(nb))
    assert [(c.kind, c.statement, c.holds, dict(c.values)) for c in read_claims(executed)] == [
        ("Claim", "a — b", True, {"x": 1 / 3, "t": [1.0, 2.0]}),
        ("Check", "c", False, {"y": 2, "big": "inf", "bad": "nan"}),  # displayed, then it raised
    ]
    assert executed["cells"][0]["outputs"][-1]["output_type"] == "error"


# ---- the seed sweep's ledger (tools/sweep_ledger.py) records every value ------------------------


def test_the_ledger_records_every_value_over_the_seeds(tmp_path):
    """Executed notebooks (one per seed) with claim bundles -> the ledger: numbers as [min, max], a
    list's elements pooled, a dict's entries as name.key, other values as the set seen."""
    from tools import sweep_ledger

    path = tmp_path / "05_x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("SEED = 0")]), path)
    per_seed = [
        {"acc": 0.91, "accs": [0.5, 0.75], "by": {"a": 1, "b": [2.5]}, "ok": True, "opt": "adam", "loss": 0.2},
        {"acc": 0.97, "accs": [0.25, 0.8], "by": {"a": 3, "b": [1.5]}, "ok": False, "opt": "adam", "loss": "nan"},
        {"acc": np.float32(0.93), "accs": torch.tensor([0.6]), "by": {"a": 2, "b": []}, "ok": True, "opt": None,
         "loss": 0.1},
    ]  # fmt: skip
    runs = []
    for seed, values in enumerate(per_seed):
        notebook = _executed(CheckedClaim.of("it — learns", True, values)._repr_mimebundle_())
        runs.append(sweep_ledger.Run("05", seed, seconds=1.0, claims=read_claims(notebook)))
    [entry] = sweep_ledger.summarise(path, runs)["claims"]
    assert entry["statement"] == "it — learns" and entry["held"] == [0, 1, 2] and entry["failed"] == []
    assert entry["values"] == {
        "acc": [0.91, 0.97],
        "accs": [0.25, 0.8],
        "by.a": [1, 3],
        "by.b": [1.5, 2.5],
        "loss": [0.1, 0.2],
    }
    assert entry["seen"] == {"ok": [False, True], "opt": ["adam", None], "loss": ["nan"]}
    text = sweep_ledger.dumps({"chapters": {"05": {"claims": [entry]}}})
    assert json.loads(text)["chapters"]["05"]["claims"] == [entry]
    assert '"acc": [0.91, 0.97]' in text

    from tools.book_ext.claims_ledger import over_seeds_text

    assert (
        over_seeds_text(entry)
        == "acc 0.91–0.97; accs 0.25–0.8; by.a 1–3; by.b 1.5–2.5; loss 0.1–0.2, nan; ok False, True; opt adam, None"
    )


def test_the_committed_ledger_in_its_old_format_is_read_as_it_is():
    """book/claims_sweep.json was written from the printed lines (numbers only, no `seen`): the
    appendix reads it unchanged (its freshness is tests/test_sweep.py's)."""
    from tools import sweep_ledger
    from tools.book_ext.claims_ledger import SWEEP_FILE, over_seeds_text, read_sweep

    ledger = read_sweep(sweep_ledger.ROOT / SWEEP_FILE)
    assert set(ledger) == set(sweep_ledger.chapters())
    claims = [c for entry in ledger.values() for key, c in entry.items() if key != "seeds"]
    assert claims and all(len(span) == 2 for c in claims for span in c["values"].values())
    first = next(c for c in claims if c["values"])
    name, (low, high) = next(iter(first["values"].items()))
    assert over_seeds_text(first).startswith(f"{name} ")


# ---- the site: myst-nb renders the box, tools/book_ext/ reads the data ----------------------------


def test_the_site_shows_the_box_and_the_appendix_reads_the_data_without_warnings(tmp_path):
    """A small Sphinx build (myst-nb, tools/book_ext/, _config.yml's MIME priorities) of a notebook
    whose outputs hold claim bundles, and of a Claims appendix: no warning ("skipping unknown output
    mime type" would fail the book's -W build), the page shows each claim's box with its anchor and
    never its data, and the appendix has one table of claims and one of checks."""
    import yaml

    from conftest import REPO, build_claims_book, write_claims_book

    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    assert ["*", CLAIM_MIME, None] in config["sphinx"]["config"]["nb_mime_priority_overrides"]
    src = tmp_path / "src"
    write_claims_book(src)
    bundles = [
        CheckedClaim.of("RNN — no attention — stays below", True, {"acc": 0.41, "accs": [0.5, float("nan")]}),
        CheckedClaim.of("two implementations agree", True, {"err": 1e-7}, "Check"),
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Chapter 5")])
    for shown in bundles:
        cell = nbformat.v4.new_code_cell("lib.claim(...)")
        cell.outputs = [nbformat.v4.new_output("display_data", data=shown._repr_mimebundle_())]
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, src / "book" / "05_x.ipynb")
    ledger = {"chapters": {"05": {"seeds": [0, 1], "claims": []}}}
    (src / "book" / "claims_sweep.json").write_text(json.dumps(ledger), encoding="utf-8")
    status, warnings = build_claims_book(src, tmp_path)
    assert warnings == "" and status == 0
    page = (tmp_path / "html" / "book" / "05_x.html").read_text(encoding="utf-8")
    assert page.count('class="book-claim"') == 2 and 'id="claim-1"' in page and 'id="claim-2"' in page
    assert CLAIM_MIME not in page and '"holds"' not in page
    from bs4 import BeautifulSoup

    appendix = BeautifulSoup((tmp_path / "html" / "book" / "claims.html").read_text(encoding="utf-8"), "html.parser")
    tables = {
        table["id"]: [[" ".join(cell.get_text().split()) for cell in row.find_all(["td", "th"])] for row in table("tr")]
        for table in appendix.select("table.claims-ledger")
    }
    assert list(tables) == ["claims-ledger-claims", "claims-ledger-checks"]
    captions = [" ".join(c.get_text().split()) for c in appendix.select("table.claims-ledger caption")]
    assert captions[0].startswith("Claims (1)") and captions[1].startswith("Checks (1)")
    assert tables["claims-ledger-claims"] == [
        [
            "Chapter",
            "Claim",
            "Measured in this build",
            "Held",
            "Held on seeds (range of values; the seed closest to failing)",
        ],
        ["5", "RNN — no attention — stays below", "acc=0.41, accs=[0.5, nan]", "✔", "no sweep entry"],
    ]
    assert tables["claims-ledger-checks"][1] == ["5", "two implementations agree", "err=1e-07", "✔", "no sweep entry"]
    links = [a["href"] for a in appendix.select("table.claims-ledger a")]
    assert "05_x.html#claim-1" in links and "05_x.html#claim-2" in links
