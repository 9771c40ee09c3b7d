"""What a history store shows over time: the change points of every case and metric
(``iogate detect``), and the trend of one metric drawn as a PNG or an HTML page
(``iogate history --metric M --png/--html``).

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
import html
import io
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

def trend_png(key: SeriesKey, points: Sequence[Point], changes_at: Sequence[Mark],
              current: float | None = None) -> bytes:
    """One series drawn: each run's value (its repeats as a vertical spread), the level of
    each segment, the change points marked with their size, the runs labelled by build
    wherever the build changes; ``current``: a run not recorded yet, drawn after them.
    Needs matplotlib (the ``plots`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise changes.ChangesError("a trend plot needs matplotlib: pip install "
                                   "'iogate[plots]'") from None
    case, device, metric = key
    kind = parse_metric(metric).kind
    xs = list(range(len(points)))
    fig, ax = plt.subplots(figsize=(10, 4.8), dpi=100)
    try:
        spread = [(i, min(p.samples), max(p.samples)) for i, p in enumerate(points)
                  if p.samples]
        if spread:
            ax.vlines([s[0] for s in spread], [s[1] for s in spread], [s[2] for s in spread],
                      color="#9ab", linewidth=3, label="repeats (min to max)")
        ax.plot(xs, [p.value for p in points], "o", color="#1f4e99", markersize=4,
                label=metric)
        out_of_norm = [i for i, p in enumerate(points) if p.status() == "failed"]
        if out_of_norm:
            ax.plot(out_of_norm, [points[i].value for i in out_of_norm], "x", color="#c0392b",
                    markersize=7, label="failed, not accepted")
        if current is not None:
            ax.plot([len(points)], [current], "*", color="#d35400", markersize=11,
                    label="this run")
        bounds = [0, *(m.index for m in changes_at), len(points)]
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            if hi > lo:
                level = sum(p.value for p in points[lo:hi]) / (hi - lo)
                ax.hlines(level, lo - 0.4, hi - 0.6, color="#444", linewidth=1.2)
        for m in changes_at:
            color = "#c0392b" if m.regression else "#27ae60"
            ax.axvline(m.index - 0.5, color=color, linestyle="--", linewidth=1.2)
            ax.annotate(f"{m.change_pct:+.1f}% at {m.build}",
                        (m.index - 0.5, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(3, -12), textcoords="offset points", color=color,
                        fontsize=8)
        ticks = [i for i, p in enumerate(points) if i == 0 or p.tag() != points[i - 1].tag()]
        if len(ticks) > 25:
            ticks = ticks[:: -(-len(ticks) // 25)]
        ax.set_xticks(ticks, [points[i].tag() for i in ticks], rotation=45, ha="right",
                      fontsize=7)
        ax.set_xlim(-0.8, len(points) + (0.8 if current is not None else -0.2))
        ax.yaxis.set_major_formatter(
            matplotlib.ticker.FuncFormatter(lambda v, _: format_value(kind, v)))
        ax.set_title(f"{case}{f' on {device}' if device else ''}: {metric}", fontsize=9)
        ax.set_xlabel(f"{len(points)} runs, oldest first (labelled by build)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="lower left", fontsize=7)
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png")
        return out.getvalue()
    finally:
        plt.close(fig)


def trend_html(key: SeriesKey, points: Sequence[Point], findings: Sequence[Finding],
               png: bytes | None, recent: int) -> str:
    """A self-contained page: the plot (when matplotlib is there), the change points and
    every run's value."""
    import base64

    case, device, metric = key
    title = html.escape(f"{case}{f' on {device}' if device else ''}: {metric}")
    image = (f'<img alt="trend of {html.escape(metric)}" src="data:image/png;base64,'
             f'{base64.b64encode(png).decode()}">' if png else
             "<p>(no plot: matplotlib is not installed)</p>")
    change_rows = "".join(
        f"<tr><td>{html.escape(f.first.recorded_at[:19])}</td>"
        f"<td>{html.escape(f.first.tag())}</td>"
        f"<td>{html.escape(_value(metric, f.change.before))}</td>"
        f"<td>{html.escape(_value(metric, f.change.after))}</td>"
        f"<td>{f.change.change_pct:+.1f}%</td><td>{f.change.p_value:.2g}</td>"
        f"<td>{'regression' if f.regression else 'improvement'}"
        f"{' (new)' if f.regression and f.new(recent) else ''}</td></tr>" for f in findings)
    run_rows = "".join(
        f"<tr><td>{html.escape(p.recorded_at[:19])}</td><td>{html.escape(p.run_id[:8])}</td>"
        f"<td>{html.escape(p.tag())}</td><td>{html.escape(_value(metric, p.value))}</td>"
        f"<td>{html.escape(', '.join(_value(metric, s) for s in p.samples))}</td>"
        f"<td>{html.escape(p.status())}</td></tr>" for p in points)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
        "font-size:90%}img{max-width:100%}</style></head><body>"
        f"<h1>{title}</h1>{image}<h2>Change points</h2>"
        + (f"<table><tr><th>first run</th><th>build</th><th>before</th><th>after</th>"
           f"<th>change</th><th>p</th><th></th></tr>{change_rows}</table>" if findings
           else "<p>none</p>")
        + f"<h2>Runs ({len(points)})</h2><table><tr><th>recorded</th><th>run</th>"
        f"<th>build</th><th>value</th><th>repeats</th><th>outcome</th></tr>{run_rows}"
        "</table>"
        "</body></html>\n")



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


def recent_png(case_id: str, metric: str, entry: Mapping[str, Any]) -> bytes:
    """One case's recent trend of ``metric`` from the document's ``history`` section, this
    run drawn after the recorded ones."""
    points = [Point(r["run_id"], r["recorded_at"], r["value"], tuple(r.get("samples", ())),
                    firmware=r["build"]) for r in entry["runs"]]
    at = [Mark(c["index"], c["change_pct"], c["regression"], c["build"])
          for c in entry.get("change_points", ())]
    return trend_png((case_id, "", metric), points, at, current=entry.get("current"))
