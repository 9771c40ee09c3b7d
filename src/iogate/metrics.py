"""Metric paths: the names that expectations, results JSON and JUnit properties share.

A path is ``errors``, ``{read,write,total}.{iops,bw,ios,bytes,runtime}`` or
``{read,write}.{slat,clat,lat}.{min,max,mean,stdev,pNN}`` where ``pNN`` is any
percentile (``p50``, ``p99``, ``p99.9``, ``p99.999``). Every path has a kind that
fixes its base unit, so a latency is never compared with an IOPS figure.
"""

from __future__ import annotations

import difflib
import enum
import re
from dataclasses import dataclass


class Kind(enum.Enum):
    """What a metric measures, and so its base unit."""

    COUNT = "count"  # plain number: ios, errors
    BYTES = "bytes"  # bytes
    IOPS = "iops"  # operations per second
    BANDWIDTH = "bandwidth"  # bytes per second
    DURATION = "duration"  # nanoseconds (latencies, runtime)


DIRECTIONS = ("read", "write")
SCOPES = DIRECTIONS + ("total",)
THROUGHPUT = {"iops": Kind.IOPS, "bw": Kind.BANDWIDTH, "ios": Kind.COUNT, "bytes": Kind.BYTES,
              "runtime": Kind.DURATION}
LATENCIES = ("slat", "clat", "lat")
LAT_STATS = ("min", "max", "mean", "stdev")
STANDARD_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)

_PERCENTILE = re.compile(r"p(\d{1,2}(?:\.\d+)?|100)\Z")


@dataclass(frozen=True)
class MetricPath:
    """A parsed metric path. ``scope`` is None only for ``errors``."""

    scope: str | None
    name: str  # iops, bw, ios, bytes, runtime, slat, clat, lat, errors
    stat: str | None = None  # min, max, mean, stdev, or None for percentiles
    percentile: float | None = None

    @property
    def kind(self) -> Kind:
        if self.name == "errors":
            return Kind.COUNT
        if self.name in LATENCIES:
            return Kind.DURATION
        return THROUGHPUT[self.name]

    @property
    def text(self) -> str:
        if self.scope is None:
            return self.name
        if self.name not in LATENCIES:
            return f"{self.scope}.{self.name}"
        return f"{self.scope}.{self.name}.{self.stat or format_percentile(self.percentile or 0.0)}"

    def __str__(self) -> str:
        return self.text


def format_percentile(p: float) -> str:
    """``99.0`` -> ``p99``, ``99.9`` -> ``p99.9``."""
    return "p" + (f"{p:.6f}".rstrip("0").rstrip("."))


def _all_simple_paths() -> list[str]:
    out = ["errors"]
    out += [f"{s}.{n}" for s in SCOPES for n in THROUGHPUT]
    out += [f"{d}.{lat}.{st}" for d in DIRECTIONS for lat in LATENCIES for st in LAT_STATS]
    out += [f"{d}.{lat}.{format_percentile(p)}" for d in DIRECTIONS for lat in LATENCIES
            for p in STANDARD_PERCENTILES]
    return out


def standard_paths() -> list[str]:
    """The paths every result reports (expectations may ask for more percentiles)."""
    return _all_simple_paths()


def _unknown(text: str, why: str) -> ValueError:
    close = difflib.get_close_matches(text, _all_simple_paths(), n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return ValueError(f"unknown metric '{text}': {why}{hint}")


def parse_metric(text: str) -> MetricPath:
    """Parse a metric path; raise ValueError with a suggestion when it is unknown."""
    parts = text.split(".", 2)
    if parts == ["errors"]:
        return MetricPath(None, "errors")
    if len(parts) < 2 or parts[0] not in SCOPES:
        raise _unknown(text, "a metric starts with read, write or total (or is 'errors')")
    scope, name = parts[0], parts[1]
    if name in THROUGHPUT:
        if len(parts) != 2:
            raise _unknown(text, f"'{scope}.{name}' takes no further part")
        return MetricPath(scope, name)
    if name in LATENCIES:
        if scope == "total":
            raise _unknown(text, "latencies are per direction: read or write")
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
    raise _unknown(text, f"'{name}' is not one of {', '.join(list(THROUGHPUT) + list(LATENCIES))}")
