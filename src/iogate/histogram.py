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
per-interval series use too: the geometry is mirrored here, the rule is not. The
bindings (:mod:`iogate.engine.native`) are loaded when a percentile is first asked for, so
that reading results does not load the library.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

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
    """Bucket counts with the library's geometry, held sparsely.

    Only the range of buckets from the first to the last non-empty one is stored (a small
    ``array('Q')`` and its offset): a run's latencies rarely span more than a few octaves,
    so a histogram takes tens of bytes to a few KB instead of the 35 KB of every bucket.
    ``counts`` still reads as the dense sequence of all BUCKETS counts (read only).
    """

    __slots__ = ("_buckets", "_offset")

    def __init__(self, counts: Sequence[int] | None = None) -> None:
        self._offset = 0
        self._buckets = array("Q")
        if counts is None:
            return
        if len(counts) != BUCKETS:
            raise ValueError(f"a histogram has {BUCKETS} buckets, got {len(counts)}")
        dense = counts if isinstance(counts, array) and counts.typecode == "Q" \
            else array("Q", counts)
        self._set_range(0, dense)

    def _set_range(self, offset: int, buckets: array[int]) -> None:
        """Hold ``buckets`` (counts from bucket ``offset`` on), trimmed of empty ends."""
        # The counts read as one integer: its lowest and highest set bits are in the first
        # and last non-empty buckets (64 bits each, whatever the byte order).
        bits = int.from_bytes(buckets.tobytes(), "little")
        if not bits:
            self._offset, self._buckets = 0, array("Q")
            return
        first = ((bits & -bits).bit_length() - 1) // 64
        last = (bits.bit_length() - 1) // 64
        self._offset = offset + first
        self._buckets = buckets[first:last + 1]

    @classmethod
    def from_buckets(cls, offset: int, buckets: Iterable[int]) -> Histogram:
        """The histogram whose buckets from ``offset`` on hold ``buckets``, the rest 0."""
        counts = buckets if isinstance(buckets, array) and buckets.typecode == "Q" \
            else array("Q", buckets)
        if offset < 0 or offset + len(counts) > BUCKETS:
            raise ValueError(f"buckets [{offset}, {offset + len(counts)}) outside "
                             f"[0, {BUCKETS})")
        h = cls()
        h._set_range(offset, counts)
        return h

    @classmethod
    def from_counts(cls, counts: Mapping[int, int]) -> Histogram:
        """The histogram holding ``counts[i]`` samples in bucket i; buckets not named
        are empty."""
        used = {i: c for i, c in counts.items() if c}
        if not used:
            return cls()
        lo, hi = min(used), max(used)
        if lo < 0 or hi >= BUCKETS:
            raise IndexError(f"bucket index outside [0, {BUCKETS})")
        buckets = array("Q", bytes(8 * (hi - lo + 1)))
        for i, c in used.items():
            buckets[i - lo] = c
        return cls.from_buckets(lo, buckets)

    index = staticmethod(bucket_index)
    bounds = staticmethod(bucket_bounds)

    @classmethod
    def from_values(cls, values: Iterable[int]) -> Histogram:
        counts: dict[int, int] = {}
        for v in values:
            i = bucket_index(v)
            counts[i] = counts.get(i, 0) + 1
        return cls.from_counts(counts)

    @property
    def counts(self) -> Sequence[int]:
        """Every bucket's count, dense (BUCKETS of them), as a read-only view."""
        dense = array("Q", bytes(8 * BUCKETS))
        dense[self._offset:self._offset + len(self._buckets)] = self._buckets
        return memoryview(dense).toreadonly()

    @property
    def first(self) -> int:
        """Index of the first bucket held (0 when empty)."""
        return self._offset

    @property
    def buckets(self) -> array[int]:
        """The counts held, from bucket ``first`` on (a copy)."""
        return array("Q", self._buckets)

    @property
    def total(self) -> int:
        return sum(self._buckets)

    def merge(self, other: Histogram) -> Histogram:
        """A new histogram holding the samples of both."""
        if not other._buckets:
            return Histogram.from_buckets(self._offset, self._buckets)
        if not self._buckets:
            return Histogram.from_buckets(other._offset, other._buckets)
        lo = min(self._offset, other._offset)
        hi = max(self._offset + len(self._buckets), other._offset + len(other._buckets))
        out = array("Q", bytes(8 * (hi - lo)))
        for h in (self, other):
            start = h._offset - lo
            for j, c in enumerate(h._buckets, start):
                out[j] += c
        return Histogram.from_buckets(lo, out)

    def used(self) -> list[tuple[int, int]]:
        """(index, count) of every bucket holding samples, lowest first."""
        return [(i, c) for i, c in enumerate(self._buckets, self._offset) if c]

    def nonzero(self) -> list[tuple[int, int, int]]:
        """(lo, hi, count) of every bucket holding samples, lowest first."""
        return [(*bucket_bounds(i), c) for i, c in self.used()]

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
        # Lazy, to keep start-up light: the bindings load ctypes and, at the first call, the
        # library, which results that are only read, merged or stored never need.
        from iogate.engine.native import hist_percentiles

        found = hist_percentiles(self._buckets, self._offset, ps, min_value, max_value)
        return [None] * len(ps) if found is None else [float(v) for v in found]

    def __eq__(self, other: object) -> bool:
        # Both are trimmed to their non-empty range, so equal counts hold equal ranges.
        return (isinstance(other, Histogram) and self._offset == other._offset
                and self._buckets == other._buckets)

    def __getstate__(self) -> tuple[int, bytes]:
        return self._offset, self._buckets.tobytes()

    def __setstate__(self, state: tuple[int, bytes]) -> None:
        self._offset = state[0]
        self._buckets = array("Q")
        self._buckets.frombytes(state[1])

    def __repr__(self) -> str:
        return f"Histogram(total={self.total}, buckets_used={sum(1 for c in self._buckets if c)})"
