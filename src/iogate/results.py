"""The results of one run: per job and direction statistics, and metric lookup.

RunResult.metric() answers any path of iogate.metrics for the whole run, in
base units (IOPS, bytes/s, ns, bytes, counts), aggregating over all jobs:

- ios, bytes, iops, bw are summed across jobs; runtime is the longest job.
- Latency statistics are merged exactly: histograms are added, min/max are
  the extremes, mean is weighted by count and stdev is the pooled sample
  standard deviation. Percentiles are read from the merged histogram and
  clamped into [min, max].
- total.* adds read and write (total.runtime is the longer of the two).
- errors sums every job and direction.

A metric that was not measured is None: iops, bw and latencies of a direction
(or total) that completed no I/O. ios, bytes, runtime and errors are always
measured (a direction that did nothing reports 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from iogate.histogram import Histogram
from iogate.metrics import DIRECTIONS, MetricPath, parse_metric, standard_paths


@dataclass
class LatencyStats:
    """One latency kind (slat, clat or lat); mean and stdev are exact."""

    count: int = 0
    min: int = 0  # ns; 0 when count == 0
    max: int = 0
    mean: float = 0.0
    stdev: float = 0.0  # sample standard deviation
    histogram: Histogram = field(default_factory=Histogram)

    @staticmethod
    def merged(parts: Iterable[LatencyStats]) -> LatencyStats:
        """Statistics of the union of the samples behind `parts`."""
        parts = [p for p in parts if p.count]
        out = LatencyStats()
        if not parts:
            return out
        n = sum(p.count for p in parts)
        mean = sum(p.mean * p.count for p in parts) / n
        # Sum of squared deviations from the pooled mean: each part's own
        # (n_i - 1) s_i^2 plus its shift n_i (mean_i - mean)^2.
        m2 = sum((p.count - 1) * p.stdev ** 2 + p.count * (p.mean - mean) ** 2 for p in parts)
        hist = parts[0].histogram
        for p in parts[1:]:
            hist = hist.merge(p.histogram)
        return LatencyStats(count=n, min=min(p.min for p in parts), max=max(p.max for p in parts),
                            mean=mean, stdev=math.sqrt(m2 / (n - 1)) if n > 1 else 0.0,
                            histogram=hist)

    def percentiles(self, ps: list[float]) -> list[float | None]:
        if not self.count:
            return [None] * len(ps)
        return self.histogram.percentiles(ps, self.min, self.max)

    def stat(self, path: MetricPath) -> float | None:
        if not self.count:
            return None
        if path.stat is None:
            return self.percentiles([path.percentile or 0.0])[0]
        return float(getattr(self, path.stat))

    def to_json(self) -> dict:
        return {"count": self.count, "min_ns": self.min, "max_ns": self.max,
                "mean_ns": self.mean, "stdev_ns": self.stdev,
                "histogram": [list(b) for b in self.histogram.nonzero()]}


@dataclass
class Interval:
    """One series interval of a job in one direction."""

    end_ns: int  # from the start of counting
    ios: int
    bytes: int
    iops: float
    bw: float  # bytes per second
    clat_mean_ns: float
    clat_p99_ns: int
    lat_mean_ns: float
    lat_p99_ns: int


@dataclass
class DirectionResult:
    """Counted statistics of one job in one direction (all its threads)."""

    ios: int = 0
    bytes: int = 0
    runtime_ns: int = 0
    iops: float = 0.0
    bw: float = 0.0  # bytes per second
    slat: LatencyStats = field(default_factory=LatencyStats)
    clat: LatencyStats = field(default_factory=LatencyStats)
    lat: LatencyStats = field(default_factory=LatencyStats)
    errors: int = 0
    first_errno: int = 0
    first_error_offset: int = 0
    series: list[Interval] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"ios": self.ios, "bytes": self.bytes, "runtime_ns": self.runtime_ns,
                "iops": self.iops, "bw_bytes": self.bw,
                "slat": self.slat.to_json(), "clat": self.clat.to_json(), "lat": self.lat.to_json(),
                "errors": self.errors, "first_errno": self.first_errno,
                "first_error_offset": self.first_error_offset,
                "series": [vars(i).copy() for i in self.series]}


@dataclass
class JobResult:
    read: DirectionResult = field(default_factory=DirectionResult)
    write: DirectionResult = field(default_factory=DirectionResult)

    def direction(self, name: str) -> DirectionResult:
        return self.read if name == "read" else self.write


@dataclass
class RunResult:
    """Everything one run measured. interrupted: cancelled before completion
    (the statistics cover what ran until then)."""

    jobs: list[JobResult] = field(default_factory=list)
    interrupted: bool = False
    elapsed_ns: int = 0

    def _dirs(self, scope: str) -> list[DirectionResult]:
        names = DIRECTIONS if scope == "total" else (scope,)
        return [job.direction(n) for job in self.jobs for n in names]

    def latency(self, direction: str, kind: str) -> LatencyStats:
        """One latency kind of one direction, merged over all jobs."""
        return LatencyStats.merged(getattr(job.direction(direction), kind) for job in self.jobs)

    def metric(self, path: str | MetricPath) -> float | None:
        """The value of a metric path for the whole run, or None if unmeasured."""
        mp = parse_metric(path) if isinstance(path, str) else path
        if mp.name == "errors":
            return float(sum(d.errors for job in self.jobs for d in (job.read, job.write)))
        assert mp.scope is not None
        if mp.stat is not None or mp.percentile is not None:
            return self.latency(mp.scope, mp.name).stat(mp)
        dirs = self._dirs(mp.scope)
        if mp.name == "runtime":
            return float(max((d.runtime_ns for d in dirs), default=0))
        if mp.name in ("ios", "bytes"):
            return float(sum(getattr(d, mp.name) for d in dirs))
        if not any(d.ios for d in dirs):
            return None  # iops/bw of a direction that did no I/O
        return float(sum(getattr(d, mp.name) for d in dirs))

    def metrics(self, extra: Iterable[str] = ()) -> dict[str, float]:
        """Flat map of the standard paths plus `extra`, leaving out unmeasured ones."""
        out: dict[str, float] = {}
        paths = [*standard_paths(), *extra]
        merged: dict[tuple[str, str], LatencyStats] = {}
        for text in paths:
            if text in out:
                continue
            mp = parse_metric(text)
            if mp.stat is not None or mp.percentile is not None:
                assert mp.scope is not None
                key = (mp.scope, mp.name)
                if key not in merged:  # merge each histogram once, not per percentile
                    merged[key] = self.latency(*key)
                value = merged[key].stat(mp)
            else:
                value = self.metric(mp)
            if value is not None:
                out[text] = value
        return out

    def series(self, scope: str) -> list[dict]:
        """Per-interval ios, bytes, iops and bw of a scope, summed over jobs
        (and over read and write for 'total'), by interval position."""
        rows: list[dict] = []
        for d in self._dirs(scope):
            for i, iv in enumerate(d.series):
                if i == len(rows):
                    rows.append({"end_ns": iv.end_ns, "ios": 0, "bytes": 0, "iops": 0.0, "bw": 0.0})
                row = rows[i]
                row["end_ns"] = max(row["end_ns"], iv.end_ns)
                row["ios"] += iv.ios
                row["bytes"] += iv.bytes
                row["iops"] += iv.iops
                row["bw"] += iv.bw
        return rows

    def to_json(self) -> dict:
        """A JSON-serialisable dict; histograms list [lo_ns, hi_ns, count] of
        non-empty buckets (hi is 2^64-1 for the overflow bucket)."""
        return {"interrupted": self.interrupted, "elapsed_ns": self.elapsed_ns,
                "metrics": self.metrics(),
                "jobs": [{"read": j.read.to_json(), "write": j.write.to_json()} for j in self.jobs]}
