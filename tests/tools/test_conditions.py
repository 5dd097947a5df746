"""tools/conditions.py: a claim's condition read from the code, over the values it records, and its margin."""

from __future__ import annotations

import pytest

from tools.conditions import conditions, find

CELL = """
lowest = attended.min()
lib.claim("with attention, accuracy is above 90% at every length", attended.min() > 0.9, lowest=attended.min())
lib.claim("loss falls and stays low", first > 2 * last and last < 0.5, first=first, last=last)
lib.claim("2 heads solve it on most seeds (at least 3 of 5)", len(solved) >= 3, seeds_solved=len(solved))
lib.claim("the median is in the band", 0.2 < median < 0.4, median=median)
for name in names:
    lib.claim(f"{name}: loss falls", last[name] < 0.7 * first[name], first=first[name], last=last[name])
lib.check("two paths agree", gap < 1e-5, gap=gap)
lib.claim("reads more than it records", a < b, a=a)
lib.claim("records a list", min(accs) > 0.95, accs=accs)
lib.claim("the median is high", np.median(accs) > 0.9, accs=accs)
%timeit x
"""


@pytest.fixture
def calls():
    return conditions([CELL])


def test_every_claim_and_check_call_is_found_with_its_kind(calls) -> None:
    assert [c.kind for c in calls] == ["Claim"] * 5 + ["Check"] + ["Claim"] * 3
    assert calls[0].source == "attended.min() > 0.9"


def test_the_condition_is_rewritten_over_the_recorded_names(calls) -> None:
    first = find(calls, "Claim", "with attention, accuracy is above 90% at every length", 0)
    assert first.margin({"lowest": 0.93}).comparison == "lowest > 0.9"
    assert find(calls, "Claim", "reads more than it records", 0).rewritten is None  # b is not recorded


def test_reads_names_the_recorded_values_a_condition_reads_whatever_else_it_reads(calls) -> None:
    assert find(calls, "Claim", "reads more than it records", 0).reads == {"a"}  # and b, not recorded
    assert find(calls, "Claim", "loss falls and stays low", 0).reads == {"first", "last"}
    assert find(calls, "Claim", "with attention, accuracy is above 90% at every length", 0).reads == {"lowest"}


def test_margins_are_positive_while_the_condition_holds(calls) -> None:
    accurate = find(calls, "Claim", "with attention, accuracy is above 90% at every length", 0)
    assert accurate.margin({"lowest": 0.93}).value == pytest.approx(0.03)
    assert accurate.margin({"lowest": 0.85}).value == pytest.approx(-0.05)
    count = find(calls, "Claim", "2 heads solve it on most seeds (at least 3 of 5)", 0)
    assert count.margin({"seeds_solved": 4}).value == 1


def test_of_several_comparisons_the_closest_relative_to_its_threshold_counts(calls) -> None:
    both = find(calls, "Claim", "loss falls and stays low", 0)
    margin = both.margin({"first": 3.0, "last": 0.45})  # 3.0 - 0.9 = 2.1 (relative 0.7); 0.5 - 0.45 = 0.05 (0.1)
    assert margin.comparison == "last < 0.5" and margin.value == pytest.approx(0.05)
    band = find(calls, "Claim", "the median is in the band", 0)
    assert band.margin({"median": 0.38}).comparison == "median < 0.4"


def test_an_f_string_statement_matches_what_it_displayed(calls) -> None:
    falls = find(calls, "Claim", "copy: loss falls", 0)
    assert falls is not None and falls.margin({"first": 2.0, "last": 1.0}).value == pytest.approx(0.4)
    assert find(calls, "Claim", "copy: loss rises", 0) is None


def test_functions_of_a_recorded_list(calls) -> None:
    listed = find(calls, "Claim", "records a list", 0)
    assert listed.margin({"accs": [0.99, 0.97, 0.98]}).value == pytest.approx(0.02)
    assert listed.margin({"accs": "nan"}) is None  # cannot be evaluated: no margin, no error
    median = find(calls, "Claim", "the median is high", 0)
    assert median.margin({"accs": [0.99, 0.93, 0.95]}).value == pytest.approx(0.05)
