"""The numbers behind the reports, without matplotlib: a case's interval series as CSV rows,
its latency histograms as JSON, the latency thresholds its checks judged, the headline
metrics, and file names made safe from case ids.

The series are every run's (each repeat or steady-state round, ``CaseResult.run_series``);
the histograms are the last run's (``CaseResult.run``); the per-repeat values of the
metrics are in ``samples``.
"""

from __future__ import annotations

import csv
import io
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from iogate.expect import Check
from iogate.metrics import DIRECTIONS, LATENCIES, Kind, parse_metric
from iogate.outcome import CaseResult
from iogate.results import LatencyStats, RunResult, rate_target

SERIES_HEADER = ("repeat", "job", "direction", "end_s", "ios", "bytes", "iops", "bw_bytes",
                 "clat_mean_ns", "clat_p99_ns", "lat_mean_ns", "lat_p99_ns",
                 "resp_mean_ns", "resp_p99_ns")
_SERIES_FIELDS = ("ios", "bytes", "iops", "bw", "clat_mean_ns", "clat_p99_ns", "lat_mean_ns",
                  "lat_p99_ns", "resp_mean_ns", "resp_p99_ns")

# The metrics a reader looks at first, in the order shown: sweeps, repeats, the HTML rows.
HEADLINE_METRICS = ("read.iops", "read.bw", "read.clat.p99", "write.iops", "write.bw",
                    "write.clat.p99")
_HISTOGRAM_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def series_rows(result: CaseResult) -> list[tuple[object, ...]]:
    """One row per interval per run, job and measured direction, in SERIES_HEADER order
    (runs count from 1). The latencies of an interval without completions are None (an
    empty cell in the CSV)."""
    rows: list[tuple[object, ...]] = []
    for repeat, jobs in enumerate(result.run_series, 1):
        for job_index, job in enumerate(jobs):
            for direction, intervals in job.items():
                for iv in intervals:
                    rows.append((repeat, job_index, direction, iv.end_ns / 1e9,
                                 *(getattr(iv, name) for name in _SERIES_FIELDS)))
    return rows


def series_csv(result: CaseResult) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SERIES_HEADER)
    writer.writerows(series_rows(result))
    return out.getvalue()


def latency_kinds(direction: str) -> tuple[str, ...]:
    # A sync call is one step: clat and resp would repeat lat.
    return ("lat",) if direction == "sync" else LATENCIES


def histogram_entry(stats: LatencyStats) -> dict[str, Any]:
    pcts = stats.percentiles(list(_HISTOGRAM_PERCENTILES))
    return {"count": stats.count, "min_ns": stats.min, "max_ns": stats.max,
            "mean_ns": stats.mean, "stdev_ns": stats.stdev,
            "percentiles_ns": {f"p{p:g}": v for p, v in zip(_HISTOGRAM_PERCENTILES, pcts,
                                                             strict=True)},
            "buckets": [list(b) for b in stats.histogram.nonzero()]}


def histograms(run: RunResult) -> dict[str, dict[str, dict[str, Any]]]:
    """Per direction and latency kind that has samples (merged over jobs): the non-empty
    buckets ``[lo_ns, hi_ns, count]`` (hi exclusive; 2^64-1 for the overflow bucket) and
    the exact count, min, max, mean and standard deviation."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for direction in (*DIRECTIONS, "sync"):
        kinds = {kind: run.latency(direction, kind) for kind in latency_kinds(direction)}
        measured = {k: histogram_entry(s) for k, s in kinds.items() if s.count}
        if measured:
            out[direction] = measured
    return out


def histograms_json(result: CaseResult) -> str:
    assert result.run is not None
    document = {"case": result.id, "unit": "ns",
                "run": "last" if result.samples or result.steady else "only",
                "histograms": histograms(result.run)}
    return json.dumps(document, separators=(",", ":")) + "\n"  # thousands of buckets


@dataclass
class Distribution:
    """A latency distribution to draw, with the checks that put a threshold on it."""

    direction: str
    kind: str
    stats: LatencyStats
    checks: list[Check] = field(default_factory=list)


def latency_checks(checks: Iterable[Check]) -> dict[tuple[str, str], list[Check]]:
    """The checks whose threshold is a latency, by (direction, kind)."""
    out: dict[tuple[str, str], list[Check]] = {}
    for c in checks:
        m = c.expectation.metric
        if (m.scope in DIRECTIONS and m.name in LATENCIES and c.threshold is not None
                and c.expectation.kind is Kind.DURATION):
            out.setdefault((m.scope, m.name), []).append(c)
    return out


def rate_limited(run: RunResult, direction: str) -> bool:
    return any(rate_target(spec, direction) is not None for spec in run.specs)


def distributions(result: CaseResult) -> list[Distribution]:
    """What the latency CDF shows: per measured direction, the completion latency, the
    response latency when a rate was set (it includes the wait behind the schedule), and
    any other kind an expectation judged."""
    run = result.run
    if run is None:
        return []
    judged = latency_checks(result.checks)
    out = []
    for direction in DIRECTIONS:
        kinds = ["clat"]
        if rate_limited(run, direction):
            kinds.append("resp")
        kinds += [k for (d, k) in judged if d == direction and k not in kinds]
        for kind in kinds:
            stats = run.latency(direction, kind)
            if stats.count:
                out.append(Distribution(direction, kind, stats, judged.get((direction, kind),
                                                                            [])))
    return out


def metric_kind(path: str) -> Kind:
    return parse_metric(path).kind


def headline(metrics: Iterable[str]) -> list[str]:
    """The headline metrics among ``metrics``, in display order."""
    present = set(metrics)
    return [m for m in HEADLINE_METRICS if m in present]


def point_label(point: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items())


_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]+")
_MAX_NAME = 120


def safe_name(text: str) -> str:
    """A file name from ``text``: runs of other characters become ``_``, no leading dot, and
    a long name is cut and given a checksum so different ids stay different."""
    name = _UNSAFE.sub("_", text).strip("_").lstrip(".") or "case"
    if len(name) > _MAX_NAME:
        name = f"{name[:_MAX_NAME - 9]}-{zlib.crc32(text.encode()):08x}"
    return name


def unique_names(texts: Sequence[str], taken: Iterable[str] = ()) -> list[str]:
    """safe_name of each text, with ``-2``, ``-3``... where two would collide."""
    used = set(taken)
    out = []
    for text in texts:
        base = name = safe_name(text)
        n = 1
        while name in used:
            n += 1
            name = f"{base}-{n}"
        used.add(name)
        out.append(name)
    return out


@dataclass
class Sweep:
    """The points of one swept workload, in run order."""

    path: str
    name: str
    results: list[CaseResult]


def sweeps(results: Iterable[CaseResult]) -> list[Sweep]:
    by_workload: dict[tuple[str, str], Sweep] = {}
    for r in results:
        if r.case.sweep_point:
            key = (str(r.case.path), r.case.base_name)
            by_workload.setdefault(key, Sweep(*key, [])).results.append(r)
    return list(by_workload.values())
