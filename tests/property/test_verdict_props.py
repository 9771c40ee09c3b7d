"""Verdicts against a baseline or the history are monotone: for any fixed reference, a worse
observation never passes where a better one fails, whatever the repeats, the noise, the
form of the expectation, the run's family of checks or the adaptive looks. And the test
under them keeps its promise: on an unchanged build it raises a false alarm at rate alpha.
"""

from __future__ import annotations

import math
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from iogate import stats
from iogate.expect import evaluate, parse_expectation
from iogate.judge import Gate, against, verdict_against

FORMS = [
    ("read.iops", ">= 0.95 * baseline"), ("read.iops", ">= baseline - 5%"),
    ("read.iops", "> 0.8 * baseline"), ("read.iops", ">= 1.1 * baseline"),
    ("read.clat.p99", "<= baseline + 10%"), ("read.clat.p99", "<= 2 * baseline"),
    ("read.clat.p99", "< 0.9 * baseline"), ("read.iops@mean", ">= 0.9 * baseline"),
    ("read.iops@min", ">= 0.9 * baseline"),
]
HISTORY_FORMS = [("read.iops", ">= 0.8 * history"), ("read.iops", ">= history - 10%"),
                 ("read.clat.p99", "<= 1.2 * history"), ("read.clat.p99", "<= history")]

positive = st.floats(min_value=1.0, max_value=1e6, allow_nan=False, allow_infinity=False)
factor = st.floats(min_value=1.0, max_value=20.0, allow_nan=False)


def _worse(metric: str, values: list[float], factors: list[float]) -> list[float]:
    """Each value made worse (or left) by its factor: lower IOPS, higher latency."""
    if metric.startswith("read.iops"):
        return [v / f for v, f in zip(values, factors, strict=True)]
    return [v * f for v, f in zip(values, factors, strict=True)]


gates = st.builds(Gate, alpha=st.sampled_from([0.01, 0.05, 0.2]),
                  min_effect_pct=st.sampled_from([0.0, 5.0, 20.0]),
                  family=st.integers(1, 30))


@settings(max_examples=400)
@given(form=st.sampled_from(FORMS), reference=st.lists(positive, min_size=1, max_size=8),
       observed=st.lists(positive, min_size=1, max_size=8), data=st.data(), gate=gates,
       looked=st.integers(1, 6))
def test_a_worse_baseline_observation_never_passes_where_a_better_one_fails(
        form: tuple[str, str], reference: list[float], observed: list[float],
        data: st.DataObject, gate: Gate, looked: int) -> None:
    e = parse_expectation(*form)
    factors = data.draw(st.lists(factor, min_size=len(observed), max_size=len(observed)))
    worse = _worse(form[0], observed, factors)
    better = verdict_against(e, reference, observed, gate, looked=looked)
    worst = verdict_against(e, reference, worse, gate, looked=looked)
    assert not (worst.passed and not better.passed), (better, worst)


@settings(max_examples=400)
@given(form=st.sampled_from(HISTORY_FORMS), level=st.lists(positive, min_size=5, max_size=30),
       value=positive, by=factor, gate=gates)
def test_a_worse_history_observation_never_passes_where_a_better_one_fails(
        form: tuple[str, str], level: list[float], value: float, by: float,
        gate: Gate) -> None:
    e = parse_expectation(*form)
    names = {"history": stats.median(level)}
    [worse] = _worse(form[0], [value], [by])

    def judged(x: float) -> bool:
        check = evaluate(e, x, names=names)
        return against(e, check, names, level, [x], gate, "history", "level").passed

    assert not (judged(worse) and not judged(value))


@settings(max_examples=200)
@given(reference=st.lists(positive, min_size=2, max_size=10),
       observed=st.lists(positive, min_size=1, max_size=10), data=st.data(),
       lower=st.booleans())
def test_worse_p_never_falls_for_a_better_observation(reference: list[float],
                                                      observed: list[float],
                                                      data: st.DataObject,
                                                      lower: bool) -> None:
    i = data.draw(st.integers(0, len(observed) - 1))
    by = data.draw(factor)
    worse = list(observed)
    worse[i] = worse[i] / by if lower else worse[i] * by
    p = stats.worse_p(reference, observed, lower_is_worse=lower)
    q = stats.worse_p(reference, worse, lower_is_worse=lower)
    assert p is not None
    assert q is not None
    assert q <= p + 1e-12
    rank = stats.rank_worse_p(reference, observed, lower_is_worse=lower)
    assert stats.rank_worse_p(reference, worse, lower_is_worse=lower) <= rank + 1e-12


@settings(max_examples=200)
@given(n=st.integers(1, 25), k=st.integers(1, 25))
def test_rank_p_of_complete_separation_is_the_smallest(n: int, k: int) -> None:
    reference = [float(100 + i) for i in range(n)]
    lowest = stats.rank_worse_p(reference, [float(i) for i in range(k)], lower_is_worse=True)
    highest = stats.rank_worse_p(reference, [1e6 + i for i in range(k)], lower_is_worse=True)
    if n * k <= stats.EXACT_LIMIT ** 2:
        assert math.isclose(lowest, 1 / math.comb(n + k, k))
    assert highest > 0.5
    assert stats.rank_reachable(n, k) == (k > 1 and 1 / math.comb(n + k, k) <= stats.RANK_ALPHA)


@settings(max_examples=300)
@given(t=st.floats(min_value=-1e4, max_value=1e4, allow_nan=False),
       df=st.one_of(st.integers(1, 400), st.floats(min_value=0.5, max_value=1e5)))
def test_t_distribution_matches_scipy(t: float, df: float) -> None:
    ours, theirs = stats.t_sf(t, df), float(scipy_stats.t.sf(t, df))
    assert math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-300)


@settings(max_examples=100)
@given(p=st.floats(min_value=1e-9, max_value=0.999), df=st.integers(1, 200))
def test_t_quantile_inverts_the_tail(p: float, df: int) -> None:
    assert math.isclose(stats.t_sf(stats.t_isf(p, df), df), p, rel_tol=1e-7)


def test_an_unchanged_build_is_flagged_at_rate_alpha() -> None:
    """Normal noise on the logarithms, 5 reference runs and 3 new ones from the same level,
    20,000 trials: the share with p <= alpha is alpha within 4.5 standard errors of the
    binomial (so the test fails by chance about once in 150,000 runs, and a test that
    used the wrong degrees of freedom or a two-sided tail would be far outside)."""
    rng = random.Random(26)
    trials, alpha = 20_000, 0.05
    hits = 0
    for _ in range(trials):
        ref = [math.exp(rng.gauss(10, 0.05)) for _ in range(5)]
        new = [math.exp(rng.gauss(10, 0.05)) for _ in range(3)]
        p = stats.worse_p(ref, new, lower_is_worse=True)
        assert p is not None
        hits += p <= alpha
    se = math.sqrt(alpha * (1 - alpha) / trials)
    assert abs(hits / trials - alpha) <= 4.5 * se, hits / trials
