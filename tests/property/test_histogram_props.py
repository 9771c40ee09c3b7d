"""Properties of the histogram: geometry, percentile accuracy against a sorted-list reference,
merging."""

from __future__ import annotations

from fractions import Fraction
from math import ceil

from hypothesis import given, settings
from hypothesis import strategies as st

from iogate.histogram import (
    BUCKETS,
    LINEAR,
    OVERFLOW,
    TOP_NS,
    Histogram,
    bucket_bounds,
    bucket_index,
)

# Mostly realistic latencies, plus tiny values (exact range) and values past
# the top of the histogram (overflow bucket).
latency = st.one_of(st.integers(0, 300), st.integers(0, 10**9), st.integers(0, 2**45))
percent = st.one_of(st.sampled_from([50.0, 90.0, 99.0, 99.9, 99.99, 100.0]),
                    st.floats(min_value=0.001, max_value=100.0))


def exact_percentile(values: list[int], p: float) -> int:
    """Smallest v such that at least p% of the values are <= v, p read to 9 decimal places
    (the rule's precision)."""
    ordered = sorted(values)
    rank = ceil(Fraction(round(p * 10**9), 10**9) * len(ordered) / 100)
    return ordered[max(rank, 1) - 1]


@given(latency)
def test_value_lies_within_its_bucket(v):
    lo, hi = bucket_bounds(bucket_index(v))
    assert lo <= v < hi


@given(st.integers(0, BUCKETS - 2))
def test_buckets_tile_the_range(i):
    lo, hi = bucket_bounds(i)
    assert bucket_bounds(i + 1)[0] == hi
    assert bucket_index(lo) == i and bucket_index(hi - 1) == i
    # Bucket width is at most 1/128 of its lower bound: the 1/256 midpoint bound.
    assert i < LINEAR and hi - lo == 1 or (hi - lo) * 128 <= lo


def test_geometry_edges():
    assert BUCKETS == 4353
    assert bucket_index(255) == 255 and bucket_index(256) == 256
    assert bucket_index(TOP_NS - 1) == OVERFLOW - 1
    assert bucket_index(TOP_NS) == OVERFLOW and bucket_index(2**63) == OVERFLOW


@settings(max_examples=300)
@given(st.lists(latency, min_size=1, max_size=300), percent)
def test_percentile_within_relative_error(values, p):
    h = Histogram.from_values(values)
    exact = exact_percentile(values, p)
    got = h.percentile(p, min(values), max(values))
    if exact < TOP_NS:
        assert abs(got - exact) <= exact / 256 + 1, (got, exact)
    else:
        # Past the top only the bucket is known; the answer stays in range.
        assert TOP_NS <= got <= max(values)


@given(st.lists(st.integers(0, TOP_NS - 1), min_size=1, max_size=200), percent)
def test_percentile_without_extremes_is_bucket_middle(values, p):
    exact = exact_percentile(values, p)
    got = Histogram.from_values(values).percentile(p)
    lo, hi = bucket_bounds(bucket_index(exact))
    assert got == lo + (hi - lo) // 2
    assert abs(got - exact) <= exact / 256 + 1
    if exact < LINEAR:
        assert got == exact


@given(st.lists(latency, min_size=1, max_size=200), st.lists(percent, min_size=1, max_size=8))
def test_percentiles_in_one_pass_match_single_calls(values, ps):
    h = Histogram.from_values(values)
    lo, hi = min(values), max(values)
    assert h.percentiles(ps, lo, hi) == [h.percentile(p, lo, hi) for p in ps]


@given(st.lists(latency, max_size=100), st.lists(latency, max_size=100))
def test_merge_equals_histogram_of_concatenation(a, b):
    merged = Histogram.from_values(a).merge(Histogram.from_values(b))
    assert merged == Histogram.from_values(a + b)
    assert merged.total == len(a) + len(b)


def test_empty_histogram_has_no_percentiles():
    assert Histogram().percentile(50.0) is None
    assert Histogram().percentiles([50.0, 99.0]) == [None, None]


def test_rank_reads_percent_as_written():
    # 99.9% of 1000 samples is the 999th, not the 1000th through float rounding.
    h = Histogram.from_values([5] * 999 + [200])
    assert h.percentile(99.9) == 5
    assert h.percentile(100.0) == 200
    assert h.percentile(0.05) == 5
