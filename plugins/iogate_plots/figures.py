"""The PNG plots, drawn with matplotlib's object API on the Agg canvas: no pyplot, no GUI,
no global state. Importing this module imports matplotlib, so it is imported only when a
report asks for plots. Every function returns PNG bytes, or None when there is nothing to
draw.
"""

from __future__ import annotations

import io
import math
import statistics
from collections.abc import Callable, Mapping, Sequence

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from iogate.expect import format_value
from iogate.metrics import DIRECTIONS, Kind
from iogate.outcome import CaseResult
from iogate.results import Interval
from iogate_plots.data import (
    Distribution,
    Sweep,
    distributions,
    headline,
    metric_kind,
    point_label,
)

PASS_COLOUR = "#2e7d32"
FAIL_COLOUR = "#c62828"
NEUTRAL_COLOUR = "#757575"
DIRECTION_COLOURS = {"read": "#1565c0", "write": "#ef6c00"}
_DPI = 100


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def _formatter(kind: Kind) -> FuncFormatter:
    return FuncFormatter(lambda value, _pos: format_value(kind, value))


# -- latency CDF --------------------------------------------------------------------------

def cdf_points(dist: Distribution) -> tuple[list[float], list[float]]:
    """Steps of the empirical CDF read from the histogram: at the last value of each non-empty
    bucket (clamped into the exact [min, max]) the share of samples up to it. Latencies
    of 0 ns sit at 1 ns so the log axis can show them."""
    s = dist.stats
    xs, ys = [float(max(s.min, 1))], [0.0]
    seen = 0
    for _lo, hi, count in s.histogram.nonzero():
        seen += count
        xs.append(float(max(1, min(max(hi - 1, s.min), s.max))))
        ys.append(seen / s.count)
    return xs, ys


def _threshold_line(ax: Axes, check_threshold: float, label: str, failed: bool) -> None:
    colour = FAIL_COLOUR if failed else PASS_COLOUR
    ax.axvline(max(check_threshold, 1.0), color=colour, linestyle="--", linewidth=1.2)
    ax.text(max(check_threshold, 1.0), 0.02, " " + label, rotation=90, color=colour,
            fontsize=8, va="bottom", ha="right", transform=ax.get_xaxis_transform())


def latency_cdf(result: CaseResult) -> bytes | None:
    """One panel per direction: the CDF of each latency kind, log x axis, and a dashed
    vertical line per latency expectation on it (green when met, red when not), labelled
    with the expectation; a percentile expectation also marks the observed percentile."""
    dists = distributions(result)
    directions = [d for d in DIRECTIONS if any(x.direction == d for x in dists)]
    if not directions:
        return None
    fig = Figure(figsize=(6.4 * len(directions), 4.2), layout="tight")
    axes = fig.subplots(1, len(directions), squeeze=False, sharey=True)[0]
    styles = {"clat": "-", "resp": "--", "lat": "-.", "slat": ":", "lag": ":"}
    for ax, direction in zip(axes, directions, strict=True):
        for dist in (x for x in dists if x.direction == direction):
            xs, ys = cdf_points(dist)
            ax.plot(xs, ys, drawstyle="steps-post", linestyle=styles.get(dist.kind, "-"),
                    color=DIRECTION_COLOURS[direction] if dist.kind == "clat" else None,
                    label=f"{dist.kind} (n={dist.stats.count})")
            for check in dist.checks:
                assert check.threshold is not None
                e = check.expectation
                failed = check.judged and not check.passed
                _threshold_line(ax, check.threshold, f"{e.key} {e.describe()}", failed)
                pct = e.metric.percentile
                if pct is not None and e.window is None and check.observed is not None:
                    ax.plot([max(check.observed, 1.0)], [pct / 100], marker="o",
                            color=FAIL_COLOUR if failed else PASS_COLOUR)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(_formatter(Kind.DURATION))
        ax.set_ylim(0, 1.02)
        ax.set_xlabel(f"{direction} latency")
        ax.set_title(f"{direction}: latency CDF")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    axes[0].set_ylabel("share of I/Os at or below")
    fig.suptitle(result.id, fontsize=10)
    return _png(fig)


# -- timeline ---------------------------------------------------------------------------------

def timeline_points(jobs: Sequence[Mapping[str, Sequence[Interval]]], direction: str
                    ) -> tuple[list[float], list[float], list[float]]:
    """Of one run, per interval position: end time (s), IOPS summed over jobs, the worst
    job's p99. The p99 of an interval in which no job completed anything is NaN: a gap in
    the line."""
    ends: list[float] = []
    iops: list[float] = []
    p99: list[float] = []
    for job in jobs:
        for i, iv in enumerate(job.get(direction, ())):
            if i == len(ends):
                ends.append(0.0)
                iops.append(0.0)
                p99.append(math.nan)
            ends[i] = max(ends[i], iv.end_ns / 1e9)
            iops[i] += iv.iops
            if iv.clat_p99_ns is not None:
                p99[i] = float(iv.clat_p99_ns) if math.isnan(p99[i]) else \
                    max(p99[i], float(iv.clat_p99_ns))
    return ends, iops, p99


def timeline(result: CaseResult) -> bytes | None:
    """Two stacked panels over time: IOPS per interval, and p99 completion latency per
    interval, one step line per direction (a value holds over its interval). With repeats,
    every run is drawn thin, so their spread shows, and the median of the runs at each
    interval position bold."""
    runs = [{d: timeline_points(jobs, d) for d in DIRECTIONS} for jobs in result.run_series]
    drawn = [d for d in DIRECTIONS if any(run[d][0] for run in runs)]
    if not drawn:
        return None
    fig = Figure(figsize=(8, 5.5), layout="tight")
    top, bottom = fig.subplots(2, 1, sharex=True)
    several = len(runs) > 1
    tops: list[float] = []
    bottoms: list[float] = []
    for direction in drawn:
        colour = DIRECTION_COLOURS[direction]
        lines = [run[direction] for run in runs if run[direction][0]]
        for n, (ends, iops, p99) in enumerate(lines):
            # Each value holds over its whole interval: a step from the previous end to its own.
            xs = [0.0, *ends]
            style = dict(drawstyle="steps-pre", color=colour,
                         alpha=0.35 if several else 1.0, linewidth=0.8 if several else 1.5,
                         label=None if several and n else
                         f"{direction} ({len(lines)} runs)" if several else direction)
            top.plot(xs, [iops[0], *iops], **style)
            bottom.plot(xs, [p99[0], *p99], **style)
            tops += iops
            bottoms += p99
        if several:
            ends, iops, p99 = _median_line(lines)
            xs = [0.0, *ends]
            style = dict(drawstyle="steps-pre", color=colour, linewidth=2.0,
                         label=f"{direction} median")
            top.plot(xs, [iops[0], *iops], **style)
            bottom.plot(xs, [p99[0], *p99], **style)
    top.set_ylabel("IOPS")
    top.yaxis.set_major_formatter(_formatter(Kind.IOPS))
    top.set_title("IOPS per interval" + (f", {len(runs)} runs" if several else ""))
    bottom.set_ylabel("clat p99")
    bottom.yaxis.set_major_formatter(_formatter(Kind.DURATION))
    bottom.set_title("p99 completion latency per interval")
    bottom.set_xlabel("time (s)")
    for ax, values in ((top, tops), (bottom, [v for v in bottoms if not math.isnan(v)])):
        top_value = max(values, default=0.0)
        ax.set_ylim(0, top_value * 1.1 if top_value > 0 else 1.0)
        ax.set_xlim(left=0)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    fig.suptitle(result.id, fontsize=10)
    return _png(fig)


def _median_line(lines: Sequence[tuple[list[float], list[float], list[float]]]
                 ) -> tuple[list[float], list[float], list[float]]:
    """Per interval position present in every run: the median end, IOPS and p99 (of the runs
    with completions there; NaN, a gap, when none had any)."""
    n = min(len(ends) for ends, _, _ in lines)

    def median(k: int) -> list[float]:
        out = []
        for i in range(n):
            known = [line[k][i] for line in lines if not math.isnan(line[k][i])]
            out.append(statistics.median(known) if known else math.nan)
        return out

    return median(0), median(1), median(2)


# -- sweeps and repeats ------------------------------------------------------------------------

def _metric_panels(metrics: Sequence[str], title: str, xlabel: str, width: float,
                   draw: Callable[[Axes, str], None]) -> bytes:
    """One panel per metric, stacked, sharing the x axis; ``draw`` fills each."""
    fig = Figure(figsize=(width, 2.4 * len(metrics) + 0.8), layout="tight")
    axes = fig.subplots(len(metrics), 1, squeeze=False, sharex=True)[:, 0]
    for ax, metric in zip(axes, metrics, strict=True):
        draw(ax, metric)
        ax.set_ylabel(metric)
        ax.yaxis.set_major_formatter(_formatter(metric_kind(metric)))
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    return _png(fig)


def sweep(points: Sweep) -> bytes | None:
    """One panel per headline metric measured at any point: the metric against the sweep
    point, a line through the points, each point green if its case passed and red if not."""
    metrics = headline(m for r in points.results for m in r.metrics)
    if not metrics:
        return None
    labels = [point_label(r.case.sweep_point) for r in points.results]
    xs = list(range(len(labels)))

    def draw(ax: Axes, metric: str) -> None:
        values = [r.metrics.get(metric, float("nan")) for r in points.results]
        ax.plot(xs, values, color=NEUTRAL_COLOUR, linewidth=1)
        ax.scatter(xs, values, zorder=3, c=[PASS_COLOUR if r.outcome == "passed"
                                           else FAIL_COLOUR for r in points.results])
        ax.set_xticks(xs, labels, rotation=30 if len(labels) > 4 else 0, ha="right"
                      if len(labels) > 4 else "center", fontsize=8)
        top = max((v for v in values if v == v), default=0.0)  # v == v: not NaN
        ax.set_ylim(0, top * 1.1 if top > 0 else 1.0)

    width = max(6.4, 0.9 * len(labels) + 2)
    return _metric_panels(metrics, f"sweep {points.name} ({len(labels)} points)",
                          "sweep point", width, draw)


def repeats(result: CaseResult) -> bytes | None:
    """One panel per headline metric with per-repeat samples: each repeat's value as a point
    and the median as a line, titled with the median and the coefficient of variation."""
    metrics = headline(k for k, v in result.samples.items() if v)
    if not metrics:
        return None

    def draw(ax: Axes, metric: str) -> None:
        values = result.samples[metric]
        xs = list(range(1, len(values) + 1))
        median = statistics.median(values)
        mean = statistics.fmean(values)
        cv = 100 * statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
        ax.scatter(xs, values, color=DIRECTION_COLOURS[metric.split(".")[0]], zorder=3)
        ax.axhline(median, color=NEUTRAL_COLOUR, linestyle="--", linewidth=1)
        kind = metric_kind(metric)
        ax.set_title(f"{metric}: median {format_value(kind, median)}, cv {cv:.1f}%, "
                     f"min {format_value(kind, min(values))}, "
                     f"max {format_value(kind, max(values))}", fontsize=9)
        ax.set_xticks(xs)

    n = max(len(result.samples[m]) for m in metrics)
    return _metric_panels(metrics, f"{result.id}: {n} repeats", "repeat", 6.4, draw)

