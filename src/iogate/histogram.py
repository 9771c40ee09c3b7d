"""Mergeable log-linear latency histogram, in pure Python.

The geometry is the library's (see native/include/iogate.h): values below
LINEAR (256 ns) get one bucket per nanosecond; above that every octave
[2^k, 2^(k+1)) is split into SUB_BUCKETS (128) equal buckets up to TOP_NS
(2^40 ns); larger values land in the last, overflow bucket. A value reported
as the middle of its bucket is within 1/256 of the true value, so percentiles
read from a histogram have a relative error of at most 1/256 (exact below
256 ns). Merging histograms is adding counts, so per-thread and per-job
histograms combine without losing accuracy.

Percentiles follow the library's rule (``iog_hist_percentiles``), the one the
per-interval series use too: the geometry is mirrored here, the rule is not.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from fractions import Fraction

from iogate.engine.native import hist_percentiles

SUB_BITS = 7
SUB_BUCKETS = 1 << SUB_BITS
LINEAR = 2 * SUB_BUCKETS
TOP_BITS = 40
TOP_NS = 1 << TOP_BITS
BUCKETS = LINEAR + (TOP_BITS - SUB_BITS - 1) * SUB_BUCKETS + 1
OVERFLOW = BUCKETS - 1
UINT64_MAX = (1 << 64) - 1

RELATIVE_ERROR = Fraction(1, 2 * SUB_BUCKETS)  # 1/256


def bucket_index(value: int) -> int:
    """Bucket index of a value in ns (negative values are not latencies)."""
    if value < 0:
        raise ValueError(f"latency must be >= 0, got {value}")
    if value < LINEAR:
        return value
    if value >= TOP_NS:
        return OVERFLOW
    k = value.bit_length() - 1  # value lies in [2^k, 2^(k+1)), k >= 8
    sub = (value >> (k - SUB_BITS)) - SUB_BUCKETS
    return LINEAR + (k - SUB_BITS - 1) * SUB_BUCKETS + sub


def bucket_bounds(index: int) -> tuple[int, int]:
    """Bounds [lo, hi) of a bucket; hi is UINT64_MAX for the overflow bucket."""
    if not 0 <= index < BUCKETS:
        raise IndexError(f"bucket index {index} outside [0, {BUCKETS})")
    if index < LINEAR:
        return index, index + 1
    if index == OVERFLOW:
        return TOP_NS, UINT64_MAX
    group, sub = divmod(index - LINEAR, SUB_BUCKETS)
    k = group + SUB_BITS + 1
    width = 1 << (k - SUB_BITS)
    lo = (1 << k) + sub * width
    return lo, lo + width


class Histogram:
    """Bucket counts with the library's geometry."""

    __slots__ = ("counts",)

    def __init__(self, counts: Sequence[int] | None = None) -> None:
        if counts is None:
            self.counts = array("Q", bytes(8 * BUCKETS))
        else:
            if len(counts) != BUCKETS:
                raise ValueError(f"a histogram has {BUCKETS} buckets, got {len(counts)}")
            self.counts = counts if isinstance(counts, array) and counts.typecode == "Q" \
                else array("Q", counts)

    index = staticmethod(bucket_index)
    bounds = staticmethod(bucket_bounds)

    @classmethod
    def from_values(cls, values: Iterable[int]) -> Histogram:
        h = cls()
        for v in values:
            h.counts[bucket_index(v)] += 1
        return h

    @property
    def total(self) -> int:
        return sum(self.counts)

    def merge(self, other: Histogram) -> Histogram:
        """A new histogram holding the samples of both."""
        return Histogram(array("Q", map(int.__add__, self.counts, other.counts)))

    def nonzero(self) -> list[tuple[int, int, int]]:
        """(lo, hi, count) of every bucket holding samples, lowest first."""
        return [(*bucket_bounds(i), c) for i, c in enumerate(self.counts) if c]

    def percentile(self, p: float, min_value: int | None = None,
                   max_value: int | None = None) -> float | None:
        """The p-th percentile (see percentiles), or None when empty."""
        return self.percentiles([p], min_value, max_value)[0]

    def percentiles(self, ps: Sequence[float], min_value: int | None = None,
                    max_value: int | None = None) -> list[float | None]:
        """Several percentiles, by the library's rule (``iog_hist_percentiles``): the
        middle of the bucket holding the sample of rank ceil(p/100 * total), p read as
        the decimal it was written as, clamped into [min_value, max_value], the exact
        extremes when known; a rank in the overflow bucket reports max_value (the
        pessimistic choice), or the bucket's lower bound when the maximum is unknown.
        """
        for p in ps:
            if not 0.0 <= p <= 100.0:
                raise ValueError(f"percentile must be in [0, 100], got {p}")
        found = hist_percentiles(self.counts, 0, ps, min_value, max_value)
        return [None] * len(ps) if found is None else [float(v) for v in found]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Histogram) and self.counts == other.counts

    def __repr__(self) -> str:
        return f"Histogram(total={self.total}, buckets_used={sum(1 for c in self.counts if c)})"
