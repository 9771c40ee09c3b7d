"""Metric paths: the names that expectations, results JSON and JUnit properties share.

The grammar (``pNN`` is any percentile: ``p50``, ``p99``, ``p99.9``, ``p99.999``)::

    errors
    {read,write,total}.{iops,bw,ios,bytes,runtime,rate_pct}
    {read,write}.{slat,clat,lat,resp,lag}.{min,max,mean,stdev,pNN}
    {read,write}.bs_pct.<bytes>        {read,write}.bs.mean     {read,write}.qd.mean
    sync.ios                           sync.lat.{min,max,mean,stdev,pNN}
    mix.read_pct    data.compress_ratio    data.dedupe_pct    offsets.coverage_pct
    cpu.{user,system,per_io,util_pct}

``sync.clat`` and ``sync.resp`` name the same latency as ``sync.lat``: a sync call is
one step. Every path has a kind that fixes its base unit, so a latency is never
compared with an IOPS figure.

An expectation's key may add a statistic over repeated runs: ``read.iops@min``
(:data:`REPEAT_STATS`; the median when none is named). ``cv`` is the coefficient of
variation in percent. Only the metrics in :func:`has_series` exist per interval, for
windowed expectations.
"""

from __future__ import annotations

import difflib
import enum
import functools
import re
from dataclasses import dataclass


class Kind(enum.Enum):
    """What a metric measures, and so its base unit."""

    COUNT = "count"  # plain number: ios, errors
    BYTES = "bytes"  # bytes
    IOPS = "iops"  # operations per second
    BANDWIDTH = "bandwidth"  # bytes per second
    DURATION = "duration"  # nanoseconds (latencies, runtime)
    PERCENT = "percent"  # 0..100 (may exceed 100 for rate_pct)
    NUMBER = "number"  # a plain ratio or average without unit


DIRECTIONS = ("read", "write")
SCOPES = DIRECTIONS + ("total",)
THROUGHPUT = {"iops": Kind.IOPS, "bw": Kind.BANDWIDTH, "ios": Kind.COUNT, "bytes": Kind.BYTES,
              "runtime": Kind.DURATION, "rate_pct": Kind.PERCENT}
LATENCIES = ("slat", "clat", "lat", "resp", "lag")
SYNC_LATENCIES = ("lat", "clat", "resp")  # all the same: the whole sync call
LAT_STATS = ("min", "max", "mean", "stdev")
# Per data direction, one statistic each: name -> (stat, kind).
SHAPES = {"bs": ("mean", Kind.BYTES), "qd": ("mean", Kind.NUMBER)}
BS_PCT = "bs_pct"
# Whole-run metrics outside the directions: scope -> {name: kind}.
RUN_METRICS = {
    "mix": {"read_pct": Kind.PERCENT},
    "data": {"compress_ratio": Kind.NUMBER, "dedupe_pct": Kind.PERCENT},
    "offsets": {"coverage_pct": Kind.PERCENT},
    # the engine's own CPU use over the run (its whole process, all threads): user and system
    # time, their sum per completed I/O, and their sum as a share of one CPU over the run
    "cpu": {"user": Kind.DURATION, "system": Kind.DURATION, "per_io": Kind.DURATION,
            "util_pct": Kind.PERCENT},
    # data verification (jobs with verify): blocks read back, and the failures among them
    "verify": {"blocks": Kind.COUNT, "failures": Kind.COUNT, "torn": Kind.COUNT,
               "lost": Kind.COUNT, "misdirected": Kind.COUNT, "read_errors": Kind.COUNT},
}
STANDARD_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)

# Statistics over the repeats of a case; the first is the default.
REPEAT_STATS = ("median", "min", "max", "mean", "cv")
# Per-interval series kept for each direction (see results.Interval): windowed expectations.
SERIES_METRICS = ("iops", "bw")
SERIES_LATENCIES = ("clat", "lat", "resp")
SERIES_LAT_STATS = ("mean", "p99")

_PERCENTILE = re.compile(r"p([0-9]{1,2}(?:\.[0-9]+)?|100)\Z")
_SIZE = re.compile(r"[1-9][0-9]*\Z")


@dataclass(frozen=True)
class MetricPath:
    """A parsed metric path. ``scope`` is None only for ``errors``."""

    scope: str | None  # read, write, total, sync, mix, data, offsets
    name: str  # iops, ..., slat, ..., bs_pct, bs, qd, read_pct, ..., errors
    stat: str | None = None  # min, max, mean, stdev; None for percentiles
    percentile: float | None = None
    size: int | None = None  # the block size of bs_pct

    @property
    def is_latency(self) -> bool:
        return self.scope in ("read", "write", "sync") and self.name in LATENCIES

    @property
    def kind(self) -> Kind:
        if self.scope is None:
            return Kind.COUNT
        if self.is_latency:
            return Kind.DURATION
        if self.scope in RUN_METRICS:
            return RUN_METRICS[self.scope][self.name]
        if self.name == BS_PCT:
            return Kind.PERCENT
        if self.name in SHAPES:
            return SHAPES[self.name][1]
        return THROUGHPUT[self.name]

    @property
    def text(self) -> str:
        if self.scope is None:
            return self.name
        head = f"{self.scope}.{self.name}"
        if self.size is not None:
            return f"{head}.{self.size}"
        if self.stat is not None:
            return f"{head}.{self.stat}"
        if self.percentile is not None:
            return f"{head}.{format_percentile(self.percentile)}"
        return head

    def __str__(self) -> str:
        return self.text


def format_percentile(p: float) -> str:
    """``99.0`` -> ``p99``, ``99.9`` -> ``p99.9``."""
    return "p" + (f"{p:.6f}".rstrip("0").rstrip("."))


def _latency_paths(scope: str, kinds: tuple[str, ...]) -> list[str]:
    out = [f"{scope}.{lat}.{st}" for lat in kinds for st in LAT_STATS]
    out += [f"{scope}.{lat}.{format_percentile(p)}" for lat in kinds for p in STANDARD_PERCENTILES]
    return out


def standard_paths() -> list[str]:
    """The paths every result reports when measured (expectations may ask for more
    percentiles; results add ``bs_pct`` paths for the block sizes they saw)."""
    return list(_standard_paths())


@functools.lru_cache(maxsize=1)
def _standard_paths() -> tuple[str, ...]:
    out = ["errors"]
    out += [f"{s}.{n}" for s in SCOPES for n in THROUGHPUT]
    for d in DIRECTIONS:
        out += _latency_paths(d, LATENCIES)
    out += [f"{d}.{name}.{stat}" for d in DIRECTIONS for name, (stat, _) in SHAPES.items()]
    out += ["sync.ios", *_latency_paths("sync", ("lat",))]
    out += [f"{scope}.{name}" for scope, names in RUN_METRICS.items() for name in names]
    return tuple(out)


def _known_for_hints() -> list[str]:
    return standard_paths() + [f"{d}.{BS_PCT}.4096" for d in DIRECTIONS]


def _unknown(text: str, why: str) -> ValueError:
    close = difflib.get_close_matches(text, _known_for_hints(), n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ValueError(f"unknown metric '{text}': {why}{hint}")


def _latency(text: str, scope: str, name: str, parts: list[str]) -> MetricPath:
    if len(parts) != 3:
        stats = ", ".join(LAT_STATS)
        raise _unknown(text, f"say which statistic: {stats} or a percentile like p99")
    stat = parts[2]
    if stat in LAT_STATS:
        return MetricPath(scope, name, stat=stat)
    m = _PERCENTILE.match(stat)
    if m:
        p = float(m.group(1))
        if 0.0 < p <= 100.0:
            return MetricPath(scope, name, percentile=p)
    raise _unknown(text, f"'{stat}' is not min, max, mean, stdev or a percentile in (0, 100]")


def _no_more(text: str, parts: list[str]) -> None:
    if len(parts) != 2:
        raise _unknown(text, f"'{parts[0]}.{parts[1]}' takes no further part")


@functools.lru_cache(maxsize=4096)
def parse_metric(text: str) -> MetricPath:
    """Parse a metric path; raise ValueError with a suggestion when it is unknown. Paths
    are immutable, so each text is parsed once (every case asks for the same ones)."""
    parts = text.split(".", 2)
    if parts == ["errors"]:
        return MetricPath(None, "errors")
    scopes = (*SCOPES, "sync", *RUN_METRICS)
    if len(parts) < 2 or parts[0] not in scopes:
        raise _unknown(text, f"a metric starts with {', '.join(scopes)} (or is 'errors')")
    scope, name = parts[0], parts[1]
    if scope in RUN_METRICS:
        if name not in RUN_METRICS[scope]:
            raise _unknown(text, f"'{scope}' has {', '.join(RUN_METRICS[scope])}")
        _no_more(text, parts)
        return MetricPath(scope, name)
    if scope == "sync":
        if name == "ios":
            _no_more(text, parts)
            return MetricPath(scope, name)
        if name in SYNC_LATENCIES:
            return _latency(text, scope, name, parts)
        raise _unknown(text, "sync calls have ios and a latency: sync.lat.<statistic>")
    if name in THROUGHPUT:
        _no_more(text, parts)
        return MetricPath(scope, name)
    if scope == "total" and (name in LATENCIES or name in SHAPES or name == BS_PCT):
        raise _unknown(text, f"'{name}' is per direction: read or write")
    if name in LATENCIES:
        return _latency(text, scope, name, parts)
    if name in SHAPES:
        stat = SHAPES[name][0]
        if parts[2:] != [stat]:
            raise _unknown(text, f"'{scope}.{name}' has one statistic: {scope}.{name}.{stat}")
        return MetricPath(scope, name, stat=stat)
    if name == BS_PCT:
        if len(parts) != 3 or not _SIZE.match(parts[2]):
            raise _unknown(text, f"say which block size in bytes, e.g. {scope}.{BS_PCT}.4096")
        return MetricPath(scope, name, size=int(parts[2]))
    names = [*THROUGHPUT, *LATENCIES, *SHAPES, BS_PCT]
    raise _unknown(text, f"'{name}' is not one of {', '.join(names)}")


def split_statistic(key: str) -> tuple[str, str]:
    """``read.iops@min`` -> (``read.iops``, ``min``); no ``@``: the median.

    Raise ValueError naming the statistics (with a suggestion) when the one given is unknown.
    """
    path, at, stat = key.partition("@")
    if not at:
        return key, REPEAT_STATS[0]
    if stat not in REPEAT_STATS:
        close = difflib.get_close_matches(stat, REPEAT_STATS, n=1, cutoff=0.5)
        hint = f"; did you mean '@{close[0]}'?" if close else ""
        raise ValueError(f"unknown statistic '@{stat}': use one of "
                         f"{', '.join('@' + s for s in REPEAT_STATS)}{hint}")
    return path, stat


def has_series(metric: MetricPath) -> bool:
    """Whether the metric is also measured per interval (and so may be windowed)."""
    if metric.scope not in DIRECTIONS:
        return False
    if metric.name in SERIES_METRICS:
        return True
    return metric.name in SERIES_LATENCIES and (
        metric.stat in SERIES_LAT_STATS or metric.percentile == 99.0)


def series_paths() -> list[str]:
    """Every metric path :func:`has_series` accepts, for messages."""
    out = [f"{d}.{n}" for d in DIRECTIONS for n in SERIES_METRICS]
    out += [f"{d}.{lat}.{st}" for d in DIRECTIONS for lat in SERIES_LATENCIES
            for st in SERIES_LAT_STATS]
    return out
