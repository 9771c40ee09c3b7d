"""Statistics against values worked out by hand or by brute-force enumeration."""

import itertools
import math
import random

import pytest

from iogate.stats import (
    exact_p_value,
    mann_whitney_u,
    median,
    regression,
    steady_state,
    summary,
)


def brute_force_p(a, b):
    """Two-sided exact p-value by listing every way to split the pooled ranks."""
    n1, n2 = len(a), len(b)
    observed = sum(1 for x in a for y in b if x > y)
    us = []
    for chosen in itertools.combinations(range(n1 + n2), n1):
        rest = [r for r in range(n1 + n2) if r not in chosen]
        us.append(sum(1 for x in chosen for y in rest if x > y))
    low = sum(1 for u in us if u <= observed) / len(us)
    high = sum(1 for u in us if u >= observed) / len(us)
    return observed, min(1.0, 2 * min(low, high))


# -- median and summary -----------------------------------------------------------------------

def test_median_odd_even():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5
    with pytest.raises(ValueError, match="median of no values"):
        median([])


def test_summary_known_values():
    s = summary([1.0, 2.0, 3.0, 4.0])
    assert (s.median, s.mean, s.min, s.max, s.n) == (2.5, 2.5, 1.0, 4.0, 4)
    # sample stdev of 1..4 is sqrt(5/3)
    assert s.cv_pct == pytest.approx(math.sqrt(5 / 3) / 2.5 * 100)


def test_summary_single_sample_has_no_spread():
    s = summary([7.0])
    assert (s.median, s.cv_pct, s.n) == (7.0, 0.0, 1)


# -- Mann-Whitney U ---------------------------------------------------------------------------

def test_separated_three_and_three_cannot_go_below_a_tenth():
    assert mann_whitney_u([1, 2, 3], [4, 5, 6]) == (0.0, pytest.approx(0.1))
    assert mann_whitney_u([4, 5, 6], [1, 2, 3]) == (9.0, pytest.approx(0.1))


def test_separated_four_and_four():
    u, p = mann_whitney_u([1, 2, 3, 4], [5, 6, 7, 8])
    assert u == 0
    assert p == pytest.approx(2 / 70)


def test_interleaved_by_hand():
    # Pairs with a > b: (3,2), (5,2), (5,4): U = 3. The 20 orderings of 3+3 give
    # U = 0..9 with counts 1,1,2,3,3,3,3,2,1,1, so P(U <= 3) = 7/20 and p = 0.7.
    assert mann_whitney_u([1, 3, 5], [2, 4, 6]) == (3.0, pytest.approx(0.7))


def test_ties_use_the_corrected_normal_approximation():
    # Pooled 1,1,1,2,2,2: ranks 2 and 5; R_a = 9, U = 3, mean 4.5. Tie correction:
    # var = 9/12 * (7 - 2 * 24 / 30) = 4.05; z = (1.5 - 0.5) / sqrt(4.05).
    u, p = mann_whitney_u([1, 1, 2], [1, 2, 2])
    assert u == 3.0
    assert p == pytest.approx(math.erfc(1 / math.sqrt(4.05) / math.sqrt(2)))


def test_all_equal_is_no_evidence():
    assert mann_whitney_u([5, 5, 5], [5, 5, 5, 5]) == (6.0, 1.0)


@pytest.mark.parametrize("seed", range(8))
def test_exact_matches_enumeration(seed):
    rng = random.Random(seed)
    n1, n2 = rng.randint(1, 6), rng.randint(1, 6)
    pool = rng.sample(range(1000), n1 + n2)
    a, b = pool[:n1], pool[n1:]
    u, p = mann_whitney_u(a, b)
    expected_u, expected_p = brute_force_p(a, b)
    assert u == expected_u
    assert p == pytest.approx(expected_p)


def test_normal_approximation_close_to_exact_for_moderate_samples():
    # 21 + 21 values without ties take the normal path; the exact distribution of the
    # same U is still computable, and the two agree to within a percent.
    rng = random.Random(3)
    for shift in (0, 5, 10, 20):
        pool = rng.sample(range(10_000), 42)
        a = sorted(pool[:21])
        b = [x + shift * 100 for x in pool[21:]]
        if set(a) & set(b):
            continue
        u, p = mann_whitney_u(a, b)
        assert abs(p - exact_p_value(u, 21, 21)) < 0.01




def test_empty_sample_rejected():
    with pytest.raises(ValueError, match="needs at least one value in each sample"):
        mann_whitney_u([], [1.0])


# -- samples --------------------------------------------------------------------------------------

def _noisy(centre, n, seed, cv=0.02):
    rng = random.Random(seed)
    return [centre * rng.gauss(1.0, cv) for _ in range(n)]


# -- regression verdicts ------------------------------------------------------------------------

def test_ten_percent_iops_drop_with_five_samples_regresses():
    r = regression(_noisy(100_000, 5, 1), _noisy(90_000, 5, 2), higher_is_better=True)
    assert r.regressed
    assert r.p_value is not None
    assert r.p_value < 0.05
    assert r.effect_pct == pytest.approx(-10, abs=3)


def test_improvement_is_not_a_regression():
    r = regression(_noisy(100_000, 5, 1), _noisy(110_000, 5, 2), higher_is_better=True)
    assert not r.regressed
    assert "worse direction" in r.reason


def test_latency_rise_regresses_and_fall_does_not():
    old = _noisy(1_000_000, 6, 1)
    assert regression(old, _noisy(1_200_000, 6, 2), higher_is_better=False).regressed
    assert not regression(old, _noisy(800_000, 6, 2), higher_is_better=False).regressed


def test_small_effect_is_never_a_regression():
    old = [100.0, 100.1, 100.2, 100.3, 100.4]
    new = [99.0, 99.1, 99.2, 99.3, 99.4]  # significant, but only -1%
    r = regression(old, new, higher_is_better=True)
    assert r.p_value is not None
    assert r.p_value < 0.05
    assert not r.regressed
    assert "minimum effect" in r.reason


def test_overlapping_samples_are_not_significant():
    old = [100.0, 80.0, 120.0, 95.0, 105.0]
    new = [90.0, 75.0, 118.0, 85.0, 101.0]
    r = regression(old, new, higher_is_better=True)
    assert r.effect_pct < -5
    assert not r.regressed
    assert "not significant" in r.reason


def test_three_runs_a_side_can_reach_significance():
    r = regression([100.0, 101.0, 99.0], [90.0, 91.0, 89.0], higher_is_better=True)
    assert r.regressed
    assert r.p_value is not None
    assert r.p_value < 0.01
    assert "n=3+3" in r.reason


def test_a_single_old_sample_decides_by_effect_and_says_so():
    single = regression([100.0], [90.0, 91.0], higher_is_better=True)
    assert single.regressed
    assert single.p_value is None
    assert "effect size alone" in single.reason
    assert "a test needs 2" in single.reason


def test_two_sided_metric_flags_either_direction():
    assert regression([50.0] * 4, [60.0] * 4, higher_is_better=None).regressed is True
    assert regression([50.0] * 4, [40.0] * 4, higher_is_better=None).regressed is True


# -- steady state -----------------------------------------------------------------------------

def test_steady_series():
    v = steady_state([100, 102, 98, 101, 99, 100])
    assert v.steady
    assert v.window_start == 1
    assert v.mean == pytest.approx(100)
    assert v.range_pct == pytest.approx(4.0)


def test_trend_within_range_fails_on_slope():
    # +3 per round: range 12% of the mean (within 20%), the fitted line rises 12% (> 10%).
    v = steady_state([94, 97, 100, 103, 106])
    assert not v.steady
    assert v.range_pct == pytest.approx(12.0)
    assert v.slope_pct_of_mean == pytest.approx(12.0)


def test_oscillation_fails_on_range():
    v = steady_state([85, 115, 85, 115, 85, 115, 85])
    assert not v.steady
    # The last five rounds: 85, 115, 85, 115, 85; mean 97, range 30.
    assert v.range_pct == pytest.approx(30 / 97 * 100)
    assert v.slope_pct_of_mean is not None
    assert v.slope_pct_of_mean < 10


def test_thresholds_are_configurable():
    assert steady_state([94, 97, 100, 103, 106], slope_pct=12.5).steady
    assert not steady_state([100, 102, 98, 101, 99], range_pct=3).steady


def _first_steady(rounds):
    """Where a run that checks the rule after every round stops (the runner's scan)."""
    for end in range(1, len(rounds) + 1):
        v = steady_state(rounds[:end])
        if v.steady:
            return end, v
    return len(rounds), steady_state(rounds)


def test_steady_only_after_warm_up():
    rounds = [40, 60, 75, 85, 92, 97, 99, 100, 101, 100, 99, 100]
    end, v = _first_steady(rounds)
    assert v.steady
    assert v.window_start == end - 5
    assert v.window_start >= 3


def test_never_steady_reports_the_last_window():
    end, v = _first_steady([10, 20, 30, 40, 50, 60, 70])
    assert not v.steady
    assert v.window_start == 2
    assert end == 7


def test_too_few_rounds():
    v = steady_state([1, 2, 3])
    assert (v.steady, v.window_start, v.mean) == (False, None, None)
    with pytest.raises(ValueError, match="a steady-state window needs at least 2 rounds"):
        steady_state([1, 2, 3], window=1)


def test_fios_deviation_rule_asks_every_round_near_the_mean():
    # fio's iops:5%: every round within 5% of the mean; no range or slope asked.
    near = [100, 104, 96, 103, 97]
    v = steady_state(near, range_pct=None, slope_pct=None, deviation_pct=5)
    assert v.steady
    assert v.deviation_pct == pytest.approx(4.0)
    assert not steady_state(near, range_pct=None, slope_pct=None, deviation_pct=3.9).steady
    # The range (8% of the mean) would fail a 5% range limit: deviation is another rule.
    assert not steady_state(near, range_pct=5, slope_pct=None).steady


def test_a_limit_set_to_none_is_not_asked():
    trend = [94, 97, 100, 103, 106]  # slope 12% of the mean across the window
    assert not steady_state(trend).steady
    assert steady_state(trend, slope_pct=None).steady
    assert not steady_state(trend, slope_pct=None, range_pct=10).steady


def test_one_slow_run_is_no_regression_for_compare_either():
    old = [100.0, 100.2, 99.8, 100.1, 99.9]
    dip = regression(old, [100.0, 60.0], higher_is_better=True)
    assert dip.p_value is not None
    assert dip.p_value < 0.05  # the mean is far below
    assert not dip.regressed
    assert "one slow run, not a level" in dip.reason
    assert regression(old, [80.0, 60.0], higher_is_better=True).regressed
