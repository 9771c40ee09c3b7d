"""Change points of a history's series: steps found where they are and sized, noise and
lone outliers not taken for changes, the minimum change, the last stable level and how a
new value is judged against its noise; realized rates checked with tolerances derived from
the number of trials."""

from __future__ import annotations

import itertools
import math
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate.changes import Level, change_points, last_level


def noisy(rng: random.Random, level: float, n: int, cv: float = 0.01) -> list[float]:
    return [level * (1 + rng.gauss(0, cv)) for _ in range(n)]


def test_a_step_is_found_at_its_first_run_and_sized() -> None:
    rng = random.Random(7)
    values = noisy(rng, 1000, 25) + noisy(rng, 900, 5)
    [cp] = change_points(values)
    assert cp.index == 25
    assert (cp.runs_before, cp.runs_after) == (25, 5)
    assert cp.change_pct == pytest.approx(-10, abs=1.5)
    assert cp.before == pytest.approx(sum(values[:25]) / 25)
    assert cp.p_value < 1e-6


def test_several_steps_are_each_found() -> None:
    rng = random.Random(8)
    values = noisy(rng, 1000, 20) + noisy(rng, 1100, 15) + noisy(rng, 950, 10)
    assert [cp.index for cp in change_points(values)] == [20, 35]


def test_a_lone_outlier_is_no_change_but_a_second_slow_run_is() -> None:
    rng = random.Random(9)
    base = noisy(rng, 1000, 25)
    assert change_points([*base[:12], 700.0, *base[12:]]) == []
    assert change_points([*base, 700.0]) == []  # one run: an outlier or a step, not known yet
    [cp] = change_points([*base, 900.0, 901.0])
    assert cp.index == 25


def test_a_change_smaller_than_the_minimum_is_not_one() -> None:
    values = [1000.0] * 20 + [990.0] * 20  # no noise at all: any move is "significant"
    assert change_points(values) == []  # -1% < the 2% default minimum
    assert [cp.index for cp in change_points(values, min_change_pct=0.5)] == [20]
    assert change_points([5.0] * 30) == []
    assert [cp.index for cp in change_points([0.0] * 5 + [3.0] * 5)] == [5]


def test_bad_settings_and_values_are_refused() -> None:
    for kwargs, said in (({"alpha": 0}, "the significance 0 is"),
                         ({"alpha": 1.5}, "the significance 1.5 is"),
                         ({"min_runs": 0}, "the fewest runs a side, 0,"),
                         ({"min_change_pct": -1}, "the smallest change -1%")):
        with pytest.raises(ValueError, match=re.escape(said)):
            change_points([1.0, 2.0, 3.0, 4.0], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a finite number"):
        change_points([1.0, math.nan, 2.0, 3.0])
    assert change_points([]) == []
    assert change_points([1.0]) == []


def test_the_last_level_and_how_a_new_run_is_judged_against_its_noise() -> None:
    rng = random.Random(10)
    values = noisy(rng, 1000, 20) + noisy(rng, 800, 10)
    level = last_level(values)
    assert level is not None
    assert level.start == 20
    assert len(level.values) == 10
    assert level.center == pytest.approx(800, rel=0.02)
    assert level.scale == pytest.approx(8, rel=0.6)  # 1 % of 800, estimated from 10 runs
    assert level.p_value(level.center) == pytest.approx(1.0)
    assert level.p_value(level.center + 8 * level.scale) < 0.001
    assert 0.05 < level.p_value(level.center + 0.5 * level.scale) < 1
    # A slow run inside the level moves neither its center nor its noise much.
    slow = Level(0, (*level.values, 600.0))
    assert slow.center == pytest.approx(level.center, rel=0.01)
    assert slow.scale < 2 * level.scale
    assert slow.p_value(600.0) < 0.001
    assert last_level([]) is None
    assert Level(0, (5.0,)).p_value(5.0) is None  # one run: no noise to judge with
    flat = Level(0, (5.0, 5.0, 5.0))
    assert (flat.p_value(5.0), flat.p_value(5.1)) == (1.0, 0.0)


def test_false_alarms_on_noise_stay_near_the_significance() -> None:
    # 200 series of 40 runs of Gaussian noise at alpha = 0.001. Each series tests about 40
    # candidate splits and keeps the best, so the rate per series is bounded by ~40 * alpha
    # = 4 %; with 200 series, 5 sigma above that bound is 4 % + 5 * sqrt(0.04 * 0.96 / 200)
    # = 6.2 %: a test with no real multiple-comparison control would far exceed it.
    rng = random.Random(11)
    alarms = sum(bool(change_points(noisy(rng, 1000, 40, cv=0.03))) for _ in range(200))
    assert alarms / 200 <= 0.062


def test_a_ten_percent_step_at_one_percent_noise_is_found_within_three_runs() -> None:
    # The power here is near 1: of 100 trials, at most 3 may miss (a miss rate of 1 % would
    # reach 3 misses with probability 0.08; a detector with no power misses all 100).
    rng = random.Random(12)
    missed = 0
    for _ in range(100):
        values = noisy(rng, 1000, 25) + noisy(rng, 900, 3)
        if not any(cp.index == 25 for cp in change_points(values)):
            missed += 1
    assert missed <= 3


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), max_size=40),
       st.integers(min_value=1, max_value=4))
def test_change_points_are_ordered_in_bounds_and_leave_min_runs_a_side(
        values: list[float], min_runs: int) -> None:
    points = change_points(values, min_runs=min_runs)
    bounds = [0, *(cp.index for cp in points), len(values)]
    assert points == [] or all(hi - lo >= min_runs
                               for lo, hi in itertools.pairwise(bounds))
    for cp in points:
        assert 0 <= cp.p_value <= 0.001
        assert cp.runs_before + cp.runs_after <= len(values)


@given(st.floats(min_value=1, max_value=1e9), st.integers(min_value=5, max_value=15),
       st.integers(min_value=2, max_value=15), st.sampled_from([0.5, 0.8, 1.25, 3.0]))
def test_a_clean_step_is_always_found_exactly(level: float, before: int, after: int,
                                              factor: float) -> None:
    # From 5 runs before it, 2 after are enough for the rank order to tell (2 + 2 never
    # can: the rank test's smallest p-value is above its level).
    assert change_points([level] * 2 + [level * factor] * 2) == []
    [cp] = change_points([level] * before + [level * factor] * after)
    assert cp.index == before
    assert cp.change_pct == pytest.approx((factor - 1) * 100)
