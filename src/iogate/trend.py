"""What a history store shows over time: the change points of every case and metric
(``iogate detect``), the trend of one metric as text (``iogate history --metric M``), and
what its PNG or HTML page shows (``--png/--html``): the runs, their values, the change
points and the level between them (:class:`Trend`). This module draws nothing: a plugin
does, through :func:`iogate.hooks.iogate_trend_figure` (the plots plugin, iogate_plots).

The series come from :func:`iogate.history.load`, the change points from
:mod:`iogate.changes`; which direction of a change is a regression is
:func:`iogate.compare.higher_is_better`'s rule. A regression is *new* when its first run is
among the newest ``recent`` runs of its series: that is what makes ``iogate detect`` exit 1,
so a regression stops failing detect once newer runs have confirmed its level. Change
points are found over every run, whatever its outcome; the series show each run's outcome
and whether it was accepted into the norm that ``history`` expectations are judged against
(a failed run enters it only when a person accepts it: ``iogate history accept``).
"""

from __future__ import annotations

import fnmatch
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iogate import changes
from iogate.compare import DEFAULT_METRICS, higher_is_better
from iogate.expect import format_value
from iogate.history import Filters, HistoryError, Point, SeriesKey, is_url, load, shown
from iogate.metrics import parse_metric
from iogate.outcome import CaseResult


@dataclass(frozen=True)
class Finding:
    """A change point of one series, with the run where the new level starts."""

    key: SeriesKey
    change: changes.ChangePoint
    first: Point  # the first run at the new level
    runs_since: int  # runs of the series from ``first`` on, itself included

    @property
    def regression(self) -> bool:
        better = higher_is_better(self.key[2])
        if better is None:
            return True  # no better direction: any change beyond the minimum is flagged
        return (self.change.after < self.change.before) == better

    def new(self, recent: int) -> bool:
        return self.runs_since <= recent


@dataclass(frozen=True)
class Mark:
    """A change point as a trend plot marks it."""

    index: int  # the first run at the new level
    change_pct: float
    regression: bool
    build: str


def marks(findings: Sequence[Finding]) -> list[Mark]:
    return [Mark(f.change.index, f.change.change_pct, f.regression, f.first.tag())
            for f in findings]


@dataclass(frozen=True)
class Options:
    """How change points are found (see :func:`iogate.changes.change_points`)."""

    alpha: float = changes.ALPHA
    min_change_pct: float = changes.MIN_CHANGE_PCT
    min_runs: int = changes.MIN_RUNS


def select_metrics(names: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    """The metrics of ``names`` to look at: those matching a pattern of ``wanted`` (shell
    wildcards), or iogate compare's headline metrics when none is given."""
    patterns = list(wanted) if wanted else list(DEFAULT_METRICS)
    return sorted(n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns))


def detect(series: Mapping[SeriesKey, Sequence[Point]], options: Options = Options()
           ) -> list[Finding]:
    """Every change point of every series, by case, device, metric and time."""
    out = []
    for key in sorted(series):
        points = series[key]
        for cp in changes.change_points([p.value for p in points], alpha=options.alpha,
                                        min_change_pct=options.min_change_pct,
                                        min_runs=options.min_runs):
            out.append(Finding(key, cp, points[cp.index], len(points) - cp.index))
    return out


def load_for(dest: str, filters: Filters, metrics: Sequence[str] | None
             ) -> dict[SeriesKey, list[Point]]:
    """The series of the store that ``filters`` and the metric patterns select."""
    everything = load(dest, None, filters=filters)
    keep = set(select_metrics(sorted({k[2] for k in everything}), metrics))
    return {k: v for k, v in everything.items() if k[2] in keep}


def _value(metric: str, value: float) -> str:
    return format_value(parse_metric(metric).kind, value)


def render(findings: Sequence[Finding], nseries: int, recent: int) -> str:
    """The change points as ``iogate detect`` prints them, series by series."""
    if not findings:
        return f"no change point in {nseries} series"
    lines: list[str] = []
    last: SeriesKey | None = None
    for f in findings:
        case, device, metric = f.key
        if f.key != last:
            lines.append(f"{case}{f' on {device}' if device else ''}: {metric}")
            last = f.key
        cp = f.change
        verdict = ("CHANGED" if higher_is_better(metric) is None
                   else "REGRESSED" if f.regression else "improved")
        if f.regression and f.new(recent):
            verdict += " (new)"
        lines.append(
            f"  {f.first.recorded_at[:19].replace('T', ' ')}  {f.first.tag():<14} run "
            f"{f.first.run_id[:8]}  {_value(metric, cp.before)} -> {_value(metric, cp.after)}"
            f"  {cp.change_pct:+.1f}%  p={cp.p_value:.2g}  {cp.runs_before}+{cp.runs_after} "
            f"runs  {verdict}")
    return "\n".join(lines)


def render_points(metric: str, points: Sequence[Point]) -> str:
    """A series as ``iogate history --metric`` prints it: a line per run, oldest first, with
    its name, value and outcome (``failed`` is out of the norm; ``accepted``, in it)."""
    return "\n".join(
        f"  {p.recorded_at[:19].replace('T', ' ')}  {p.run_id[:8]}  {p.tag():<14} "
        f"{_value(metric, p.value):>12}  {p.status()}" for p in points)


def as_json(findings: Sequence[Finding], recent: int) -> list[dict[str, Any]]:
    return [{"case": f.key[0], "device_model": f.key[1] or None, "metric": f.key[2],
             "run_id": f.first.run_id, "recorded_at": f.first.recorded_at,
             "build": f.first.tag(), "before": f.change.before, "after": f.change.after,
             "change_pct": f.change.change_pct, "p_value": f.change.p_value,
             "runs_before": f.change.runs_before, "runs_after": f.change.runs_after,
             "regression": f.regression, "new": f.regression and f.new(recent)}
            for f in findings]


# -- the trend of one metric -----------------------------------------------------------------

class FigureError(Exception):
    """A trend asked for as a file (``--png``, ``--html``) that cannot be made here: no
    plugin draws it, or what it draws with is missing; the message says which."""


@dataclass(frozen=True)
class Level:
    """The level of a series between two change points: the mean of runs ``start`` to
    ``end`` (excluded)."""

    start: int
    end: int
    value: float


def segment_levels(values: Sequence[float], at: Sequence[int]) -> list[Level]:
    """The level of each segment of ``values`` that the change points starting at the
    indices ``at`` (in order) cut it into."""
    bounds = [0, *at, len(values)]
    return [Level(lo, hi, sum(values[lo:hi]) / (hi - lo))
            for lo, hi in itertools.pairwise(bounds) if hi > lo]


@dataclass(frozen=True)
class Trend:
    """The trend of one metric as a plugin draws it (:func:`iogate.hooks.iogate_trend_figure`):
    the runs of one series, oldest first, its change points and their levels."""

    key: SeriesKey  # case id, device model ("" when not known), metric
    points: tuple[Point, ...]
    marks: tuple[Mark, ...]  # where each change point starts, in order
    findings: tuple[Finding, ...] = ()  # the change points in full, when they were found here
    recent: int = changes.RECENT  # a regression is new among the newest ``recent`` runs
    current: float | None = None  # a run not recorded yet, shown after the others

    @classmethod
    def of(cls, key: SeriesKey, points: Sequence[Point], findings: Sequence[Finding],
           recent: int = changes.RECENT) -> Trend:
        """A series with the change points :func:`detect` found in it."""
        return cls(key, tuple(points), tuple(marks(findings)), tuple(findings), recent)

    @property
    def title(self) -> str:
        case, device, metric = self.key
        return f"{case}{f' on {device}' if device else ''}: {metric}"

    @property
    def levels(self) -> list[Level]:
        return segment_levels([p.value for p in self.points],
                              [m.index for m in self.marks])

    def value_text(self, value: float) -> str:
        """A value of the metric as the text output shows it (``1.2k``, ``250us``)."""
        return _value(self.key[2], value)


# -- the recent trend of each case of a run --------------------------------------------------

TREND_RUNS = 30  # runs of each series a run's report shows


def _trend_metrics(result: CaseResult) -> list[str]:
    """The metrics a case's report draws the trend of: those its expectations name, and
    the IOPS and p99 completion latency of each direction it measured."""
    named = [e.metric.text for e in result.case.expectations]
    headline = [m for m in result.metrics
                if m.endswith((".iops", ".clat.p99")) and not m.startswith("total.")]
    return list(dict.fromkeys(named + headline))


def recent(dest: str, results: Sequence[CaseResult]) -> dict[str, Any]:
    """The results document's ``history`` section: per case that measured and per metric
    of :func:`_trend_metrics`, the newest :data:`TREND_RUNS` recorded runs of the case on
    its device (before this one), this run's value, and the change points among them.
    The document is made with interrupts held off: the store is read without waiting for
    its lock (another process holding it), and what could not be read is said in the
    section's ``error``, the cases read until then kept; the run's results never depend on
    its trends."""
    section: dict[str, Any] = {"store": shown(dest), "runs": TREND_RUNS, "cases": {}}
    if not is_url(dest) and not os.path.exists(dest):
        return section  # made by this run's recording
    try:
        for r in results:
            if r.outcome not in ("passed", "failed"):
                continue
            device = str(r.environment.get("target.device_model") or "")
            series = load(dest, _trend_metrics(r), case_id=r.id, device=device, wait_s=0)
            case: dict[str, Any] = {}
            for (_, _, metric), points in sorted(series.items()):
                points = points[-TREND_RUNS:]
                found = detect({(r.id, device, metric): points}) if len(points) >= 4 else []
                case[metric] = {
                    "runs": [{"run_id": p.run_id, "recorded_at": p.recorded_at,
                              "build": p.tag(), "value": p.value,
                              "samples": list(p.samples)} for p in points],
                    "current": r.metrics.get(metric),
                    "change_points": [{"index": f.change.index, "build": f.first.tag(),
                                       "change_pct": f.change.change_pct,
                                       "p_value": f.change.p_value,
                                       "regression": f.regression} for f in found]}
            if case:
                section["cases"][r.id] = case
    except (HistoryError, changes.ChangesError) as exc:
        section["error"] = f"not every trend was read: {exc}"
    return section


def recent_trend(case_id: str, metric: str, entry: Mapping[str, Any]) -> Trend:
    """One case's recent trend of ``metric`` from the document's ``history`` section (an
    entry of :func:`recent`'s ``cases``), this run as its ``current`` value."""
    points = tuple(Point(r["run_id"], r["recorded_at"], r["value"],
                         tuple(r.get("samples", ())), firmware=r["build"])
                   for r in entry["runs"])
    at = tuple(Mark(c["index"], c["change_pct"], c["regression"], c["build"])
               for c in entry.get("change_points", ()))
    return Trend((case_id, "", metric), points, at, current=entry.get("current"))
