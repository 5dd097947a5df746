"""lib.timing: the one timing protocol (warm-up, calibrated inner loops, interleaved rounds, medians).

A fake clock makes it exact: every call of a function moves the clock on by that function's cost.
"""

import itertools

import pytest

from lib.timing import compare, loglog_slope


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_loglog_slope_recovers_a_power_law():
    T = [128, 256, 512, 1024]
    assert loglog_slope(T, [3e-6 * t**2 for t in T]) == pytest.approx(2.0)
    assert loglog_slope(T, [5.0 * t for t in T]) == pytest.approx(1.0)


def test_compare_gives_each_function_its_median_seconds_per_call():
    clock, calls = FakeClock(), []
    costs = {"a": iter([1.0, 1.0] + [1.0, 9.0, 1.0]), "b": itertools.repeat(3.0)}  # a: one slow round

    def timed(name):
        def fn():
            calls.append(name)
            clock.now += next(costs[name])

        return fn

    times = compare({"a": timed("a"), "b": timed("b")}, repeats=3, min_seconds=0.0, clock=clock)
    assert times == {"a": 1.0, "b": 3.0}  # the median drops a's slow round
    # warm-up and calibration, then 3 rounds in rotating order: a b, b a, a b
    assert calls == ["a", "a", "b", "b"] + ["a", "b", "b", "a", "a", "b"]


def test_compare_can_give_each_function_its_fastest_round():
    clock = FakeClock()
    costs = {"a": iter([1.0, 1.0] + [2.0, 9.0, 1.5]), "b": iter([3.0, 3.0] + [4.0, 3.5, 5.0])}

    def timed(name):
        def fn():
            clock.now += next(costs[name])

        return fn

    times = compare({"a": timed("a"), "b": timed("b")}, repeats=3, min_seconds=0.0, clock=clock, statistic="min")
    assert times == {"a": 1.5, "b": 3.5}


def test_compare_refuses_an_unknown_statistic():
    with pytest.raises(ValueError, match="statistic must be 'median' or 'min', got 'mean'"):
        compare({"f": lambda: None}, statistic="mean")


def test_compare_repeats_a_fast_function_until_a_timing_lasts_min_seconds():
    clock, n = FakeClock(), [0]

    def fast():
        n[0] += 1
        clock.now += 0.001

    times = compare({"fast": fast}, repeats=2, min_seconds=0.01, clock=clock)
    assert times["fast"] == pytest.approx(0.001)  # per call, not per inner loop
    assert n[0] == 2 + 2 * 10  # warm-up, calibration, then 2 rounds of 10 calls
