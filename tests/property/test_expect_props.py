"""Properties of expectations: verdicts agree with Python's comparison on base units."""

import operator

from hypothesis import given
from hypothesis import strategies as st

from iogate.expect import evaluate, parse_expectation
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
    assert exp.threshold == ns
    assert evaluate(exp, value).passed == OPS[op](value, ns)


@given(ops, st.integers(min_value=0, max_value=1 << 45), observed)
def test_bandwidth_verdict_matches_operator(op, bps, value):
    exp = parse_expectation("total.bw", f"{op} {format_size_exact(bps)}/s")
    assert exp.threshold == bps
    assert evaluate(exp, value).passed == OPS[op](value, bps)


@given(ops, st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=999),
       st.sampled_from(["", "k", "M", "G"]))
def test_decimal_count_thresholds_are_exact(op, whole, frac, unit):
    scale = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}[unit]
    exp = parse_expectation("read.ios", f"{op} {whole}.{frac:03d}{unit}")
    assert exp.threshold == (whole * 1000 + frac) * scale / 1000


decimals = st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False,
                       allow_infinity=False)


@given(ops, decimals, st.sampled_from(["", "%", " %"]), observed)
def test_percent_verdict_matches_operator(op, threshold, sign, value):
    exp = parse_expectation("mix.read_pct", f"{op} {threshold:f}{sign}")
    assert exp.threshold == float(threshold)
    assert evaluate(exp, value).passed == OPS[op](value, float(threshold))


@given(ops, decimals, observed)
def test_number_verdict_matches_operator(op, threshold, value):
    exp = parse_expectation("data.compress_ratio", f"{op} {threshold:f}")
    assert exp.threshold == float(threshold)
    assert evaluate(exp, value).passed == OPS[op](value, float(threshold))
