"""Properties of the statistics: rank-test symmetries, bounds, and steady-state scaling."""

import itertools
import math

from hypothesis import assume, given
from hypothesis import strategies as st

from iogate.stats import (
    mann_whitney_u,
    median,
    regression,
    steady_state,
    summary,
)

# Small integers make ties likely, which exercises the normal approximation too.
values = st.lists(st.integers(min_value=0, max_value=12).map(float), min_size=1, max_size=25)
positive = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False)


@given(values, values)
def test_u_and_its_complement_add_up(a, b):
    u, _ = mann_whitney_u(a, b)
    u_other, _ = mann_whitney_u(b, a)
    assert u + u_other == len(a) * len(b)


@given(values, values)
def test_u_counts_wins_and_half_ties(a, b):
    wins = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    assert mann_whitney_u(a, b)[0] == wins


@given(values, values)
def test_p_is_a_probability_and_symmetric(a, b):
    _, p = mann_whitney_u(a, b)
    assert 0.0 <= p <= 1.0
    assert math.isclose(p, mann_whitney_u(b, a)[1], rel_tol=1e-12, abs_tol=1e-15)


@given(st.lists(st.integers(0, 10_000), min_size=2, max_size=9, unique=True), st.data())
def test_exact_p_equals_enumeration(pool, data):
    n1 = data.draw(st.integers(1, len(pool) - 1))
    a, b = pool[:n1], pool[n1:]
    observed = sum(1 for x in a for y in b if x > y)
    n = len(pool)
    us = [sum(1 for x in chosen for y in set(range(n)) - set(chosen) if x > y)
          for chosen in itertools.combinations(range(n), n1)]
    low = sum(u <= observed for u in us) / len(us)
    high = sum(u >= observed for u in us) / len(us)
    assert math.isclose(mann_whitney_u(a, b)[1], min(1.0, 2 * min(low, high)), rel_tol=1e-9)


@given(st.lists(positive, min_size=1, max_size=20))
def test_summary_is_ordered(samples):
    s = summary(samples)
    assert s.min <= s.median <= s.max
    assert s.min <= s.mean * (1 + 1e-12)
    assert s.mean <= s.max * (1 + 1e-12)
    assert s.cv_pct >= 0
    assert s.n == len(samples)


@given(st.lists(positive, min_size=1, max_size=12), st.booleans())
def test_same_samples_never_regress(samples, higher):
    r = regression(samples, list(samples), higher_is_better=higher)
    assert not r.regressed
    assert r.effect_pct == 0
    assert median(samples) == median(list(reversed(samples)))


rounds = st.lists(st.floats(min_value=1.0, max_value=1e6, allow_nan=False), min_size=5,
                  max_size=15)


@given(rounds, st.integers(min_value=-20, max_value=20))
def test_steady_state_invariant_under_power_of_two_scaling(series, exponent):
    # Multiplying by a power of two is exact in floating point: the verdict must not move.
    scale = 2.0**exponent
    a = steady_state(series)
    b = steady_state([v * scale for v in series])
    assert a.steady == b.steady
    assert a.window_start == b.window_start
    assert a.range_pct == b.range_pct
    assert a.slope_pct_of_mean == b.slope_pct_of_mean


@given(rounds, st.floats(min_value=1e-3, max_value=1e3))
def test_steady_state_invariant_under_any_positive_scaling(series, scale):
    a = steady_state(series)
    # Away from the thresholds, rounding cannot flip the verdict.
    assert a.range_pct is not None
    assert a.slope_pct_of_mean is not None
    assume(abs(a.range_pct - 20) > 1e-6 and abs(a.slope_pct_of_mean - 10) > 1e-6)
    b = steady_state([v * scale for v in series])
    assert a.steady == b.steady
    assert math.isclose(a.range_pct, b.range_pct or 0.0, rel_tol=1e-9, abs_tol=1e-9)
