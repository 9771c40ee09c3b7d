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
    assert bucket_index(lo) == i
    assert bucket_index(hi - 1) == i
    # Bucket width is at most 1/128 of its lower bound: the 1/256 midpoint bound.
    assert (i < LINEAR and hi - lo == 1) or (hi - lo) * 128 <= lo


def test_geometry_edges():
    assert BUCKETS == 4353
    assert bucket_index(255) == 255
    assert bucket_index(256) == 256
    assert bucket_index(TOP_NS - 1) == OVERFLOW - 1
    assert bucket_index(TOP_NS) == OVERFLOW
    assert bucket_index(2**63) == OVERFLOW


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


# -- sparse storage: the same histogram as a dense array of every bucket ----------------------

def dense_of(values: list[int]) -> list[int]:
    counts = [0] * BUCKETS
    for v in values:
        counts[bucket_index(v)] += 1
    return counts


@given(st.lists(latency, max_size=200))
@settings(max_examples=200)
def test_sparse_counts_equal_the_dense_counts(values):
    h = Histogram.from_values(values)
    dense = dense_of(values)
    assert list(h.counts) == dense
    assert h == Histogram(dense)  # built from the dense array, trimmed the same way
    assert h.total == len(values)
    assert h.nonzero() == [(*bucket_bounds(i), c) for i, c in enumerate(dense) if c]
    assert h.used() == [(i, c) for i, c in enumerate(dense) if c]


@given(st.lists(latency, max_size=100), st.lists(latency, max_size=100))
@settings(max_examples=200)
def test_sparse_merge_adds_the_dense_counts(a, b):
    merged = Histogram.from_values(a).merge(Histogram.from_values(b))
    assert list(merged.counts) == [x + y for x, y in zip(dense_of(a), dense_of(b), strict=True)]
    assert merged == Histogram.from_buckets(merged.first, merged.buckets)


@given(st.dictionaries(st.integers(0, BUCKETS - 1), st.integers(0, 2**64 - 1), max_size=30))
def test_from_counts_round_trips_through_the_dense_view(counts):
    h = Histogram.from_counts(counts)
    assert {i: c for i, c in enumerate(h.counts) if c} == {i: c for i, c in counts.items() if c}
    assert Histogram(h.counts) == h


@given(st.lists(latency, max_size=50))
def test_a_histogram_survives_pickling(values):
    import pickle

    h = Histogram.from_values(values)
    assert pickle.loads(pickle.dumps(h)) == h


def test_the_dense_view_is_read_only():
    import pytest

    h = Histogram.from_values([5])
    with pytest.raises(TypeError):
        h.counts[5] += 1  # type: ignore[index]
    assert len(h.counts) == BUCKETS
