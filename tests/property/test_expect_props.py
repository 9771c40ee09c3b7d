"""Properties of expectations: verdicts agree with Python's comparison on base units."""

import operator
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from iogate.expect import evaluate, evaluate_window, parse_expectation
from iogate.units import format_duration_exact, format_size_exact

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
       "==": operator.eq, "!=": operator.ne}
ops = st.sampled_from(sorted(OPS))
observed = st.one_of(st.integers(min_value=0, max_value=10**15),
                     st.floats(min_value=0, max_value=1e15, allow_nan=False))


@given(ops, st.integers(min_value=0, max_value=10**12), observed)
def test_count_verdict_matches_operator(op, threshold, value):
    check = evaluate(parse_expectation("read.iops", f"{op} {threshold}"), value)
    assert check.passed == OPS[op](value, threshold)


@given(ops, st.integers(min_value=0, max_value=10**13), observed)
def test_latency_verdict_matches_operator(op, ns, value):
    exp = parse_expectation("write.clat.p99.9", f"{op} {format_duration_exact(ns)}")
    assert exp.literal == ns
    assert evaluate(exp, value).passed == OPS[op](value, ns)


@given(ops, st.integers(min_value=0, max_value=1 << 45), observed)
def test_bandwidth_verdict_matches_operator(op, bps, value):
    exp = parse_expectation("total.bw", f"{op} {format_size_exact(bps)}/s")
    assert exp.literal == bps
    assert evaluate(exp, value).passed == OPS[op](value, bps)


@given(ops, st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=999),
       st.sampled_from(["", "k", "M", "G"]))
def test_decimal_count_thresholds_are_exact(op, whole, frac, unit):
    scale = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}[unit]
    exp = parse_expectation("read.ios", f"{op} {whole}.{frac:03d}{unit}")
    assert exp.literal == (whole * 1000 + frac) * scale / 1000


decimals = st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False,
                       allow_infinity=False)


@given(ops, decimals, st.sampled_from(["", "%", " %"]), observed)
def test_percent_verdict_matches_operator(op, threshold, sign, value):
    exp = parse_expectation("mix.read_pct", f"{op} {threshold:f}{sign}")
    assert exp.literal == float(threshold)
    assert evaluate(exp, value).passed == OPS[op](value, float(threshold))


@given(ops, decimals, observed)
def test_number_verdict_matches_operator(op, threshold, value):
    exp = parse_expectation("data.compress_ratio", f"{op} {threshold:f}")
    assert exp.literal == float(threshold)
    assert evaluate(exp, value).passed == OPS[op](value, float(threshold))


# -- expressions with names, and windows -------------------------------------------------

factors = st.decimals(min_value=0, max_value=100, places=3, allow_nan=False,
                      allow_infinity=False)
baselines = st.integers(min_value=0, max_value=10**12)


@given(ops, factors, baselines, observed)
def test_factor_of_baseline(op, factor, base, value):
    exp = parse_expectation("read.iops", f"{op} {factor:f} * baseline")
    want = float(Fraction(str(factor)) * base)
    assert exp.threshold({"baseline": base}) == want
    assert evaluate(exp, value, names={"baseline": base}).passed == OPS[op](value, want)


@given(ops, st.sampled_from(["+", "-"]), st.decimals(min_value=0, max_value=100, places=2),
       baselines, observed)
def test_baseline_plus_or_minus_a_percentage(op, sign, pct, base, value):
    exp = parse_expectation("write.clat.p99", f"{op} baseline {sign} {pct:f}%")
    scale = 1 + (1 if sign == "+" else -1) * Fraction(str(pct)) / 100
    want = float(base * scale)
    assert exp.threshold({"baseline": base}) == want
    assert evaluate(exp, value, names={"baseline": base}).passed == OPS[op](value, want)


@given(ops, st.integers(min_value=1, max_value=10**4), st.integers(min_value=1, max_value=64))
def test_arithmetic_on_literals_is_exact(op, us, depth):
    exp = parse_expectation("read.clat.p99", f"{op} {depth} * {us}us")
    assert exp.literal == depth * us * 1000
    assert exp.names == frozenset()


shares = st.one_of(st.just("all"), st.decimals(min_value="0.1", max_value=100, places=1)
                   .map(lambda d: f"{d:f}%"))


@given(ops, st.integers(min_value=0, max_value=1000), shares,
       st.lists(st.integers(min_value=0, max_value=1000), max_size=200))
def test_window_verdict_matches_a_brute_force_count(op, limit, share, values):
    exp = parse_expectation("read.iops", f"{op} {limit} in {share}")
    check = evaluate_window(exp, [float(v) for v in values], None)
    if not values:
        assert not check.passed
        assert check.observed is None
        return
    good = sum(1 for v in values if OPS[op](v, limit))
    fraction = Fraction(1) if share == "all" else Fraction(share[:-1]) / 100
    # The least k with k / n >= fraction, counted one by one.
    needed = next(k for k in range(len(values) + 1) if Fraction(k, len(values)) >= fraction)
    assert check.passed == (good >= needed)
    assert check.observed == 100 * good / len(values)
    assert check.intervals == len(values)


@given(st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), min_size=1,
                max_size=100), st.floats(min_value=1, max_value=1e9),
       st.decimals(min_value="0.01", max_value=1, places=2))
def test_mean_in_a_window_is_the_whole_run_value(values, mean, factor):
    exp = parse_expectation("read.bw", f">= {factor:f} * mean in all")
    check = evaluate_window(exp, values, mean)
    threshold = float(Fraction(str(factor)) * Fraction(mean))
    assert check.threshold == threshold
    assert check.passed == all(v >= threshold for v in values)


# An interval: its value (None: no completions) and the requests its schedule asked for.
intervals = st.lists(st.tuples(st.one_of(st.none(), st.integers(min_value=0, max_value=1000)),
                               st.sampled_from([0.0, 0.5, 0.99, 1.0, 7.0, float("inf")])),
                     max_size=100)


@given(ops, st.integers(min_value=0, max_value=1000), shares, intervals)
def test_empty_intervals_fail_unless_nothing_was_due(op, limit, share, items):
    exp = parse_expectation("read.iops", f"{op} {limit} in {share}")
    values = [None if v is None else float(v) for v, _ in items]
    check = evaluate_window(exp, values, None, due=[d for _, d in items])
    judged = [v for v, d in items if v is not None or d >= 1]
    assert check.skipped == len(items) - len(judged)
    if not judged:  # nothing judged never passes
        assert not check.passed
        assert check.observed is None
        return
    good = sum(1 for v in judged if v is not None and OPS[op](v, limit))
    fraction = Fraction(1) if share == "all" else Fraction(share[:-1]) / 100
    needed = next(k for k in range(len(judged) + 1) if Fraction(k, len(judged)) >= fraction)
    assert check.passed == (good >= needed)
    assert check.intervals == len(judged)
    # empty intervals that were due only ever count against a window: one that passes
    # with them passes without them too
    kept = [v for v in judged if v is not None]
    if kept and check.passed:
        assert evaluate_window(exp, [float(v) for v in kept], None).passed
