"""Mergeable log-linear latency histogram, in pure Python.

The geometry is the library's (see native/include/iogate.h): values below
LINEAR (256 ns) get one bucket per nanosecond; above that every octave
[2^k, 2^(k+1)) is split into SUB_BUCKETS (128) equal buckets up to TOP_NS
(2^40 ns); larger values land in the last, overflow bucket. A value reported
as the middle of its bucket is within 1/256 of the true value, so percentiles
read from a histogram have a relative error of at most 1/256 (exact below
256 ns). Merging histograms is adding counts, so per-thread and per-job
histograms combine without losing accuracy.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from fractions import Fraction
from math import ceil

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


def percentile_rank(p: float, total: int) -> int:
    """1-based rank of the p-th percentile among `total` samples.

    The p-th percentile is the smallest value v such that at least p% of the
    samples are <= v, i.e. the ceil(p/100 * total)-th smallest sample. p is
    read as the decimal it was written as, so 99.9% of 1000 is rank 999, not
    1000 through binary rounding.
    """
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"percentile must be in [0, 100], got {p}")
    return max(1, ceil(Fraction(repr(float(p))) * total / 100))


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
        """The p-th percentile (see percentile_rank), or None when empty."""
        return self.percentiles([p], min_value, max_value)[0]

    def percentiles(self, ps: Sequence[float], min_value: int | None = None,
                    max_value: int | None = None) -> list[float | None]:
        """Several percentiles in one pass over the buckets.

        Each answer is the middle of the bucket holding the sample of that
        rank. min_value/max_value, the exact extremes when known, tighten
        the answer: it is clamped into [min, max], and a rank falling in the
        overflow bucket (whose only known upper bound is the maximum) is
        reported as max_value - the pessimistic choice - or as the bucket's
        lower bound when the maximum is unknown.
        """
        total = self.total
        if total == 0:
            return [None] * len(ps)
        order = sorted(range(len(ps)), key=lambda j: ps[j])
        ranks = [percentile_rank(ps[j], total) for j in order]
        out: list[float | None] = [None] * len(ps)
        seen = 0
        pos = 0
        for i, c in enumerate(self.counts):
            if not c:
                continue
            seen += c
            while pos < len(ranks) and ranks[pos] <= seen:
                out[order[pos]] = self._representative(i, min_value, max_value)
                pos += 1
            if pos == len(ranks):
                break
        return out

    @staticmethod
    def _representative(i: int, min_value: int | None, max_value: int | None) -> float:
        lo, hi = bucket_bounds(i)
        if i == OVERFLOW:
            value = float(max_value) if max_value is not None else float(lo)
        else:
            value = (lo + hi - 1) / 2  # middle of the integers lo..hi-1
        if max_value is not None:
            value = min(value, float(max_value))
        if min_value is not None:
            value = max(value, float(min_value))
        return value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Histogram) and self.counts == other.counts

    def __repr__(self) -> str:
        return f"Histogram(total={self.total}, buckets_used={sum(1 for c in self.counts if c)})"
