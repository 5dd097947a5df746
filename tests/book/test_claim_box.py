"""lib/book/claim_box.py: the box a claim is shown in, and CheckedClaim.box_line, which fills it."""

from __future__ import annotations

import re

import pytest

from lib.book.claim_box import ENGLISH, BoxLine, BoxWords, box_html
from lib.book.claim_labels import ValueLabel
from lib.book.claims import CheckedClaim

ZH = BoxWords(kinds={"Claim": "论断：", "Check": "核验："}, colon="：", held="论断成立", failed="论断不成立")


def test_the_values_get_their_labels_and_units() -> None:
    claim = CheckedClaim.of("the cache is faster", True, {"speedup_16": 1.93, "n": 3})
    labels = {"speedup_16": ValueLabel("time without the cache over time with it", "×")}
    line = claim.box_line(labels=labels)
    assert line == BoxLine(
        holds=True,
        heading="Claim: ",
        statement="the cache is faster",
        values=(("speedup_16", "time without the cache over time with it: 1.93×"), ("n", "n=3")),  # n: no label
        title="the claim held",
    )
    assert claim.line == "✔ Claim: the cache is faster — speedup_16=1.93, n=3"  # the line keeps the names


def test_the_box_of_a_chapter_claim_shows_labels_not_names() -> None:
    claim = CheckedClaim.of(
        "after pretraining, before any fine-tuning: median cloze accuracy > 1/2", True, {"gpt_cloze": [0.5, 0.61]}
    )
    box = claim._repr_html_()
    assert "cloze accuracy of each pretrained decoder (4 seeds): [0.5, 0.61] share of test people" in box
    assert box.count("gpt_cloze") == 1 and 'title="gpt_cloze"' in box  # the code's name: a tooltip only
    assert claim._repr_mimebundle_()["text/plain"].endswith("— gpt_cloze=[0.5, 0.61]")


def test_the_statement_first_and_the_values_smaller_and_quieter() -> None:
    box = CheckedClaim.of("scores <b>scale</b> & more", True, {"var": 0.98123})._repr_html_()
    statement, values = box.index("scores &lt;b&gt;scale&lt;/b&gt; &amp; more"), box.index("var=0.981")
    assert statement < values
    values_style = re.findall(r'<div style="([^"]*)"><span', box)[0]
    assert "font-size: 0.875em" in values_style and "opacity: 0.8" in values_style
    assert "<b>" not in box and "<style" not in box and "class=" not in box.replace('class="book-claim"', "")


def test_a_box_of_several_claims_keeps_each_mark_and_anchor() -> None:
    lines = [
        CheckedClaim.of("first holds", True, {"a": 1}).box_line(anchor="claim-3"),
        CheckedClaim.of("second fails", False, {"b": 2}).box_line(anchor="claim-4"),
        CheckedClaim.of("a check", True, {}, "Check").box_line(anchor="claim-5"),
    ]
    box = box_html(lines)
    assert box.count('class="book-claim"') == 1 and 'data-claims="3"' in box
    assert [m for m in re.findall(r'id="(claim-\d+)"', box)] == ["claim-3", "claim-4", "claim-5"]
    assert re.findall(r">([✔✘])</span>", box) == ["✔", "✘", "✔"]
    assert "<strong>Check: </strong>a check" in box and 'title="the claim did not hold"' in box
    assert "border-left: 5px solid rgb(218, 54, 51)" in box  # one failed: the box is red
    assert "border-left: 5px solid rgb(46, 160, 67)" in box_html(lines[:1])
    assert "id=" not in box_html([CheckedClaim.of("alone", True, {}).box_line()])


def test_the_box_in_another_language() -> None:
    claim = CheckedClaim.of("the cache is faster", False, {"speedup_16": 1.93})
    line = claim.box_line("缓存更快", {"speedup_16": ValueLabel("无缓存与有缓存的时间之比", "×")}, ZH)
    box = box_html([line])
    assert "<strong>论断：</strong>缓存更快" in box and "无缓存与有缓存的时间之比：1.93×" in box
    assert 'title="论断不成立"' in box
    assert BoxLine.from_data(line.data) == line  # kept on a docutils node while the site builds


def test_a_box_needs_a_claim() -> None:
    with pytest.raises(ValueError, match="at least one claim"):
        box_html([])
    assert ENGLISH.kinds["Check"] == "Check: "
