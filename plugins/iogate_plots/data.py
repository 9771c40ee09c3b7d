"""The numbers behind the reports, without matplotlib: a case's interval series as CSV rows,
its latency histograms as JSON, the latency thresholds its checks judged, latency by
percentile on a nines axis (the run's and its baseline's), a sweep's latency against IOPS,
the workload's parameters and the spread of repeats as text, the headline metrics, and file
names made safe from case ids.

The series are every run's (each repeat or steady-state round, ``CaseResult.run_series``);
the histograms are the last run's (``CaseResult.run``); the per-repeat values of the
metrics are in ``samples``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from iogate.expect import Check, format_value
from iogate.metrics import DIRECTIONS, LATENCIES, Kind, parse_metric
from iogate.outcome import CaseResult
from iogate.results import LatencyStats, RunResult, rate_target
from iogate.spec.keys import KEY_KINDS
from iogate.units import format_duration, format_size, format_size_exact

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
    """What the percentile plot shows: per measured direction, the completion latency, the
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


# -- latency by percentile, on a nines axis ----------------------------------------------------

# The percentiles a nines axis is labelled with: each one nine more than the last.
NINES_TICKS = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999)
_NINES_STEP = 0.02  # the curve's resolution along the axis, in nines


def nines(percentile: float) -> float:
    """Where a percentile sits on a nines axis: ``-log10(1 - q)`` with q the share below it
    (p90 is 1, p99 2, p99.9 3; p50 about 0.3). Not defined at 100."""
    return -math.log10(1.0 - percentile / 100.0)


def percentile_label(percentile: float) -> str:
    return f"p{percentile:g}"


def resolved_nines(count: int) -> float:
    """The highest percentile ``count`` samples resolve, in nines: the last sample's rank,
    1 - 1/count (a thousand samples reach p99.9, nothing beyond)."""
    return math.log10(count) if count > 1 else 0.0


def percentile_curve(stats: LatencyStats) -> tuple[list[float], list[float]]:
    """The latency at every percentile the samples resolve, as (nines, latency in ns):
    evenly spaced along the nines axis from the median's left (p0, the minimum) to
    :func:`resolved_nines`, with the labelled percentiles among them, each value read from
    the histogram as the run's metrics are (``read.clat.p99`` is the curve at 2)."""
    if not stats.count:
        return [], []
    top = resolved_nines(stats.count)
    grid = {round(i * _NINES_STEP, 6) for i in range(int(top / _NINES_STEP) + 1)} | {top}
    by_x = {x: min(100.0, 100.0 * (1.0 - 10.0 ** -x)) for x in grid}
    by_x.update({nines(p): p for p in NINES_TICKS if nines(p) <= top})  # exactly as written
    ordered = sorted(by_x)
    values = stats.percentiles([by_x[x] for x in ordered])
    points = [(x, v) for x, v in zip(ordered, values, strict=True) if v is not None]
    return [x for x, _ in points], [v for _, v in points]


def percentile_points(metrics: Mapping[str, float], direction: str, kind: str
                      ) -> list[tuple[float, float]]:
    """The percentiles of one direction and latency kind among ``metrics`` (a run's or a
    baseline entry's: ``read.clat.p99`` and the like), as (percentile, latency in ns) in
    percentile order."""
    prefix = f"{direction}.{kind}.p"
    out = []
    for path, value in metrics.items():
        if not path.startswith(prefix):
            continue
        try:
            pct = parse_metric(path).percentile
        except ValueError:
            continue
        if pct is not None and pct < 100.0:
            out.append((pct, value))
    return sorted(out)


@dataclass
class Slo:
    """A latency expectation as drawn: its threshold at its percentile (None: a statistic
    such as the mean or the maximum), whether it was met, and its text."""

    percentile: float | None
    stat: str | None  # min, max, mean, stdev, when not a percentile
    threshold: float
    passed: bool
    judged: bool
    observed: float | None
    label: str


def slos(dist: Distribution) -> list[Slo]:
    out = []
    for check in dist.checks:
        assert check.threshold is not None
        e = check.expectation
        out.append(Slo(e.metric.percentile, e.metric.stat, check.threshold, check.passed,
                       check.judged, check.observed, slo_label(check)))
    return out


def slo_label(check: Check) -> str:
    """An expectation as written, with its threshold when the text does not show it (it
    refers to the baseline, a variable or another metric): ``read.clat.p99 <= baseline +
    10% (1.2ms)``."""
    e = check.expectation
    text = f"{e.key} {e.describe()}"
    if check.threshold is not None:
        value = format_value(e.kind, check.threshold)
        if value not in text:
            text += f" ({value})"
    return text


# -- sweeps: latency against IOPS ----------------------------------------------------------------

@dataclass
class KneeCurve:
    """One latency metric of one direction against that direction's IOPS at each point of
    a sweep, in sweep order; NaN where a point did not measure it. ``slos`` are the
    thresholds of the expectations on that metric, per point (None where a point has none);
    ``baseline_iops`` and ``baseline_latency`` the same from the baseline entries the points
    were judged against (NaN where a point had none)."""

    direction: str
    metric: str
    labels: list[str]
    iops: list[float]
    latency: list[float]
    slos: dict[str, list[float | None]] = field(default_factory=dict)
    baseline_iops: list[float] = field(default_factory=list)
    baseline_latency: list[float] = field(default_factory=list)

    @property
    def has_baseline(self) -> bool:
        return any(not (math.isnan(x) or math.isnan(y))
                   for x, y in zip(self.baseline_iops, self.baseline_latency, strict=True))


def sweep_value_labels(points: Sequence[CaseResult]) -> tuple[str, list[str]]:
    """What names a sweep's points on a plot: with one swept variable its name and each
    point's value (``iodepth``, ``16``), else ``point`` and ``bs=4k iodepth=16``."""
    variables = list(dict.fromkeys(k for r in points for k in r.case.sweep_point))
    if len(variables) == 1:
        [name] = variables
        return name, [r.case.sweep_point.get(name, "?") for r in points]
    return "point", [point_label(r.case.sweep_point) for r in points]


def knee_curves(points: Sweep) -> list[KneeCurve]:
    """Per direction that did I/O at any point: its completion latency's p99 and mean, and
    the latency of every expectation on that direction, against its IOPS."""
    _, labels = sweep_value_labels(points.results)
    out = []
    for direction in DIRECTIONS:
        iops = [r.metrics.get(f"{direction}.iops", math.nan) for r in points.results]
        if not any(v > 0 for v in iops if not math.isnan(v)):
            continue
        metrics = [f"{direction}.clat.p99", f"{direction}.clat.mean"]
        slo_by_metric: dict[str, dict[str, list[float | None]]] = {}
        for i, r in enumerate(points.results):
            for (d, _kind), checks in latency_checks(r.checks).items():
                if d != direction:
                    continue
                for c in checks:
                    text = c.expectation.metric.text
                    if text not in metrics:
                        metrics.append(text)
                    per_point = slo_by_metric.setdefault(text, {}).setdefault(
                        f"{c.expectation.key} {c.expectation.describe()}",
                        [None] * len(points.results))  # the text, same at every point
                    per_point[i] = c.threshold
        for metric in metrics:
            latency = [r.metrics.get(metric, math.nan) for r in points.results]
            if all(math.isnan(v) for v in latency):
                continue
            out.append(KneeCurve(
                direction, metric, labels, iops, latency, slo_by_metric.get(metric, {}),
                [r.baseline.get(f"{direction}.iops", math.nan) for r in points.results],
                [r.baseline.get(metric, math.nan) for r in points.results]))
    return out


# -- the workload and its repeats as text --------------------------------------------------------

# sizes and durations as the key table declares them
_SIZE_KEYS = frozenset(k for k, kind in KEY_KINDS.items() if kind == "size")
_DURATION_KEYS = frozenset(k for k, kind in KEY_KINDS.items() if kind == "duration")
_CORE_KEYS = ("ioengine", "rw", "bs", "bssplit", "bsrange", "iodepth", "numjobs", "size",
              "runtime", "time_based", "rwmixread", "rate_iops", "rate", "filename")
_NOT_PARAMETERS = frozenset(("name", "expect", "per_host"))


def _per_direction(value: Mapping[str, Any], show: Callable[[Any], str]) -> str:
    shown = {k: show(v) for k, v in value.items() if v is not None}
    if len(set(shown.values())) == 1 and set(shown) >= {"read", "write"}:
        return next(iter(shown.values()))
    return ", ".join(f"{k} {v}" for k, v in shown.items())


def _parameter_text(key: str, value: Any) -> str:
    if key in _SIZE_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return format_size_exact(value) if value >= 0 else "-" + format_size_exact(-value)
    if key in _DURATION_KEYS and isinstance(value, int):
        return format_duration(value)
    if key == "bs" and isinstance(value, Mapping):
        return _per_direction(value, format_size_exact)
    if key == "bssplit" and isinstance(value, Mapping):
        return _per_direction(value, lambda entries: " ".join(
            f"{format_size_exact(e['bs'])}/{e['pct']:g}%" if e.get("pct") is not None
            else format_size_exact(e["bs"]) for e in entries))
    if key == "bsrange" and isinstance(value, Mapping):
        return _per_direction(value, lambda r: "-".join(format_size_exact(v) for v in r)
                              if isinstance(r, list) else str(r))
    if key == "rate" and isinstance(value, Mapping):
        return _per_direction(value, lambda v: format_size(v) + "/s")
    if key == "rate_iops" and isinstance(value, Mapping):
        return _per_direction(value, lambda v: format_value(Kind.IOPS, v) + " IOPS")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_parameter_text(key, v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_parameter_text(k, v)}" for k, v in value.items()
                         if v is not None)
    return str(value)


def workload_parameters(result: CaseResult) -> list[tuple[str, str]]:
    """The case's workload as it ran (defaults merged, variables expanded): what always
    matters first (engine, rw, block sizes, depth, jobs, size, runtime, rates, file), then
    every other key that differs from its default; sizes, durations and rates in the units
    people write. The file is the target the case ran on when it had one."""
    workload = result.case.workload
    full = workload.model_dump(mode="json", exclude_none=True)
    changed = workload.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    keys = [k for k in _CORE_KEYS if k in full]
    if "bssplit" in full or "bsrange" in full:
        keys.remove("bs")
    keys += [k for k in changed if k not in keys and k not in _NOT_PARAMETERS]
    values = {k: full[k] for k in keys}
    if result.target is not None:
        values["filename"] = result.target
    return [(k, _parameter_text(k, v)) for k, v in values.items()]


def requested_rates(result: CaseResult) -> list[tuple[str, str]]:
    """The rates the engine was asked for per direction once resolved (a total split by
    the mix), as ``read.iops`` and the like."""
    out = []
    for path, value in result.requested.items():
        name = path.removeprefix("requested.")
        scope, _, metric = name.partition(".")
        if scope in (*DIRECTIONS, "total") and metric in ("iops", "bw"):
            out.append((name, format_value(metric_kind(name), value)))
    return out


@dataclass
class Spread:
    """A metric over the repeats of a case."""

    metric: str
    values: list[float]

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def spread_pct(self) -> float:
        """(max - min) in percent of the median."""
        return 100.0 * (self.high - self.low) / self.median if self.median else 0.0


def repeat_spread(result: CaseResult) -> list[Spread]:
    """Each headline metric measured in every repeat of a repeated case, with its values."""
    return [Spread(m, list(result.samples[m]))
            for m in headline(k for k, v in result.samples.items() if len(v) > 1)]


# -- facts ---------------------------------------------------------------------------------------

def fact_text(key: str, value: object) -> str:
    """A fact about the host or a target for people: sizes in binary units (``memory_bytes``
    25276502016 is 23.54GiB), everything else as recorded."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if key.endswith("_bytes"):
            return format_size(value)
        if key.endswith("_kb"):
            return format_size(value * 1024)
        if key.endswith("_ns"):
            return format_duration(value)
    if isinstance(value, list | tuple):  # e.g. the facts given rather than read
        return ", ".join(str(v) for v in value)
    return str(value)
