"""The PNG plots, drawn with matplotlib's object API on the Agg canvas: no pyplot, no GUI,
no global state. Importing this module imports matplotlib, so it is imported only when a
report asks for plots. Every plot function returns PNG bytes, or None when there is nothing
to draw (``*_figure`` the figure itself); the axes' ticks and units are chosen here too.
Besides a run's plots, it draws the trend of one metric over the runs of a history store
(:func:`trend`).
"""

from __future__ import annotations

import io
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import (
    Formatter,
    FuncFormatter,
    Locator,
    LogLocator,
    MaxNLocator,
    NullFormatter,
)

from iogate.expect import format_value
from iogate.metrics import DIRECTIONS, Kind
from iogate.outcome import CaseResult
from iogate.results import Interval
from iogate.units import format_duration
from iogate_plots.data import (
    NINES_TICKS,
    Slo,
    Sweep,
    distributions,
    headline,
    knee_curves,
    metric_kind,
    nines,
    percentile_curve,
    percentile_label,
    percentile_points,
    point_label,
    resolved_nines,
    slos,
    sweep_value_labels,
)

if TYPE_CHECKING:  # only for annotations: a trend is drawn from what it holds
    from iogate.trend import Trend

PASS_COLOUR = "#2e7d32"
FAIL_COLOUR = "#c62828"
NEUTRAL_COLOUR = "#757575"
# One colour per direction in every plot; latency kinds differ by line style, never by colour.
DIRECTION_COLOURS = {"read": "#1565c0", "write": "#ef6c00", "trim": "#6d4c41",
                     "sync": "#00838f"}
LineStyle = str | tuple[int, tuple[int, int]]
KIND_STYLES: dict[str, LineStyle] = {"clat": "-", "resp": "--", "lat": "-.", "slat": ":",
                                     "lag": (0, (1, 3))}
_DPI = 100


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    return buf.getvalue()


def direction_colour(direction: str) -> str:
    return DIRECTION_COLOURS.get(direction, NEUTRAL_COLOUR)


def kind_style(kind: str) -> LineStyle:
    return KIND_STYLES.get(kind, "-")


# -- humane axes ------------------------------------------------------------------------------

# Per kind of quantity: the step between its units and the units, smallest first. Sizes and
# bandwidths are binary (a MiB is 2^20 bytes), so their ticks are chosen in the unit shown.
_UNITS: dict[Kind, tuple[int, tuple[str, ...]]] = {
    Kind.BANDWIDTH: (1024, ("B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "PiB/s")),
    Kind.BYTES: (1024, ("B", "KiB", "MiB", "GiB", "TiB", "PiB")),
    Kind.DURATION: (1000, ("ns", "us", "ms", "s")),
    Kind.IOPS: (1000, ("", "k", "M", "G")),
    Kind.COUNT: (1000, ("", "k", "M", "G")),
}
_ROUND_STEPS = (1, 2, 2.5, 5, 10)


def axis_unit(kind: Kind, largest: float) -> tuple[float, str]:
    """The unit an axis of ``kind`` reaching ``largest`` is labelled in: the largest unit
    of which it holds at least one (its scale in base units and its name)."""
    base, names = _UNITS.get(kind, (1, ("",)))
    scale, name = 1.0, names[0]
    for i, n in enumerate(names):
        if abs(largest) >= float(base) ** i:
            scale, name = float(base) ** i, n
    return scale, name


def _number(value: float) -> str:
    text = f"{round(value, 6):.6g}"
    return "0" if text in ("0", "-0") else text


class HumaneLocator(Locator):
    """Ticks at round values (1, 2, 2.5, 5 times a power of ten) in the unit the axis is
    labelled in: a bandwidth axis ticks at 250MiB/s, 500MiB/s, not at whole megabytes."""

    def __init__(self, kind: Kind, nbins: int = 6) -> None:
        self.kind = kind
        self.nbins = nbins

    def __call__(self) -> Sequence[float]:
        assert self.axis is not None
        vmin, vmax = self.axis.get_view_interval()
        return self.tick_values(vmin, vmax)

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        scale, _ = axis_unit(self.kind, max(abs(vmin), abs(vmax)))
        inner = MaxNLocator(nbins=self.nbins, steps=list(_ROUND_STEPS))
        return [float(t) * scale for t in inner.tick_values(vmin / scale, vmax / scale)]


class HumaneFormatter(Formatter):
    """Tick labels in the axis's one unit (``0``, ``250MiB/s``, ``500MiB/s``)."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def __call__(self, x: float, pos: int | None = None) -> str:
        assert self.axis is not None
        vmin, vmax = self.axis.get_view_interval()
        return self.label(x, max(abs(vmin), abs(vmax)))

    def label(self, x: float, largest: float) -> str:
        if self.kind not in _UNITS:
            return format_value(self.kind, x)
        scale, name = axis_unit(self.kind, largest)
        text = _number(x / scale)
        return text if text == "0" else text + name


def humane_axis(axis: Axis, kind: Kind) -> None:
    """Round ticks in one unit on a linear axis of ``kind``."""
    if kind in _UNITS:
        axis.set_major_locator(HumaneLocator(kind))
    axis.set_major_formatter(HumaneFormatter(kind))


def log_duration_axis(axis: Axis, low: float, high: float) -> None:
    """A logarithmic latency axis from ``low`` to ``high`` ns, ticked at 1, 2 and 5 times a
    power of ten over up to three decades (at the powers alone beyond), each tick in its own
    unit (``500us``, ``1ms``, ``2ms``)."""
    decades = math.log10(max(high, 1.0)) - math.log10(max(low, 1.0))
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 3 else
                                      (1.0,)))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: format_duration(v)))
    axis.set_minor_formatter(NullFormatter())


# -- latency by percentile ----------------------------------------------------------------------

def _nines_axis(ax: Axes, right: float) -> None:
    ticks = [p for p in NINES_TICKS if nines(p) <= right + 1e-9]
    ax.set_xticks([nines(p) for p in ticks], [percentile_label(p) for p in ticks])
    ax.set_xlim(0, right)
    ax.set_xlabel("percentile (nines: -log10(1 - q))")


def _draw_slo(ax: Axes, slo: Slo, right: float) -> None:
    colour = NEUTRAL_COLOUR if not slo.judged else PASS_COLOUR if slo.passed else FAIL_COLOUR
    level = max(slo.threshold, 1.0)
    if slo.percentile is not None:
        # p99 <= T holds every percentile up to p99 under T: a ceiling up to there.
        x = nines(slo.percentile)
        ax.plot([0, x], [level, level], color=colour, linestyle="--", linewidth=1.1)
        ax.plot([x], [level], marker="v", markersize=9, color=colour, linestyle="none")
        ax.annotate(slo.label, (x, level), textcoords="offset points", xytext=(-4, 5),
                    ha="right", fontsize=8, color=colour)
    else:
        ax.axhline(level, color=colour, linestyle=":", linewidth=1.1)
        ax.annotate(slo.label, (right, level), textcoords="offset points", xytext=(-4, 5),
                    ha="right", fontsize=8, color=colour)


def latency_percentiles(result: CaseResult) -> bytes | None:
    fig = latency_percentiles_figure(result)
    return None if fig is None else _png(fig)


def latency_percentiles_figure(result: CaseResult) -> Figure | None:
    """One panel per measured direction: latency (log axis) against the percentile on a
    nines axis, a line per latency kind (the direction's colour, the kind's line style)
    reaching as far as the run's samples resolve; every latency expectation drawn at its
    percentile (a triangle at the threshold and a dashed ceiling up to it; a mean or maximum
    a dotted line), green when met and red when not; a repeated case's metrics (the medians
    of its runs; the line is its last run) as dots; and, when the case was judged against
    a baseline, the baseline entry's percentiles as hollow circles in the same colour and
    style, so the two distributions overlay."""
    dists = distributions(result)
    directions = [d for d in DIRECTIONS if any(x.direction == d for x in dists)]
    if not directions:
        return None
    fig = Figure(figsize=(6.4 * len(directions), 4.6), layout="tight")
    axes = fig.subplots(1, len(directions), squeeze=False, sharey=True)[0]
    lows: list[float] = []
    highs: list[float] = []
    runs = len(result.run_series)
    for ax, direction in zip(axes, directions, strict=True):
        colour = direction_colour(direction)
        mine = [x for x in dists if x.direction == direction]
        right = 3.0  # p99.9 at least
        for dist in mine:
            right = max(right, resolved_nines(dist.stats.count))
            right = max([right] + [nines(p) for p, _ in percentile_points(
                result.baseline, direction, dist.kind)] + [
                nines(s.percentile) for s in slos(dist) if s.percentile is not None])
        right = min(math.ceil(right * 2) / 2, nines(NINES_TICKS[-1]) + 0.2)
        for dist in mine:
            style = kind_style(dist.kind)
            xs, ys = percentile_curve(dist.stats)
            ys = [max(y, 1.0) for y in ys]  # 0 ns on a log axis: at 1 ns
            ax.plot(xs, ys, color=colour, linestyle=style, linewidth=1.8,
                    label=f"{dist.kind} (n={format_value(Kind.COUNT, dist.stats.count)})")
            # The curve is the last run's; repeated, the case's metrics are the runs' medians.
            marks = [(nines(p), max(v, 1.0)) for p, v in percentile_points(
                result.metrics, direction, dist.kind)] if runs > 1 else []
            if marks:
                ax.plot(*zip(*marks, strict=True), color=colour, marker="o", markersize=4,
                        linestyle="none", label=f"{dist.kind}, median of {runs} runs")
            old = [(nines(p), max(v, 1.0)) for p, v in percentile_points(
                result.baseline, direction, dist.kind)]
            if old:
                ax.plot(*zip(*old, strict=True), color=colour, linestyle=style,
                        linewidth=0.9, alpha=0.8, marker="o", markersize=7,
                        markerfacecolor="white", label=f"{dist.kind} baseline")
            lows += ys[:1] + [v for _, v in old]
            highs += ys[-1:] + [v for _, v in old]
            for slo in slos(dist):
                _draw_slo(ax, slo, right)
                lows.append(max(slo.threshold, 1.0))
                highs.append(max(slo.threshold, 1.0))
        _nines_axis(ax, right)
        ax.set_yscale("log")
        ax.set_title(f"{direction}: latency by percentile"
                     + (" (hollow: baseline)" if result.baseline else ""), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)  # latency rises to the right: room there
    low, high = min(lows, default=1.0), max(highs, default=10.0)
    axes[0].set_ylim(low / 1.5, high * 2.0)
    for ax in axes:
        log_duration_axis(ax.yaxis, low / 1.5, high * 2.0)
    axes[0].set_ylabel("latency")
    fig.suptitle(result.id + (f" (last of {len(result.run_series)} runs)"
                              if len(result.run_series) > 1 else ""), fontsize=10)
    return fig


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
        colour = direction_colour(direction)
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
    humane_axis(top.yaxis, Kind.IOPS)
    top.set_title("IOPS per interval" + (f", {len(runs)} runs" if several else ""))
    bottom.set_ylabel("clat p99")
    humane_axis(bottom.yaxis, Kind.DURATION)
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
        humane_axis(ax.yaxis, metric_kind(metric))
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    return _png(fig)


def sweep(points: Sweep) -> bytes | None:
    """One panel per headline metric measured at any point: the metric against the sweep
    point, a line in the direction's colour through the points, each point green if its
    case passed and red if not."""
    metrics = headline(m for r in points.results for m in r.metrics)
    if not metrics:
        return None
    labels = [point_label(r.case.sweep_point) for r in points.results]
    xs = list(range(len(labels)))

    def draw(ax: Axes, metric: str) -> None:
        values = [r.metrics.get(metric, float("nan")) for r in points.results]
        ax.plot(xs, values, color=direction_colour(metric.split(".")[0]), linewidth=1)
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
        ax.scatter(xs, values, color=direction_colour(metric.split(".")[0]), zorder=3)
        ax.axhline(median, color=NEUTRAL_COLOUR, linestyle="--", linewidth=1)
        # At least 2% of the median tall, so equal runs do not read as 2.49984k, 2.49986k.
        half = max(max(values) - min(values), 0.02 * abs(median)) * 0.6
        middle = (max(values) + min(values)) / 2
        ax.set_ylim(middle - half, middle + half)
        kind = metric_kind(metric)
        ax.set_title(f"{metric}: median {format_value(kind, median)}, cv {cv:.1f}%, "
                     f"min {format_value(kind, min(values))}, "
                     f"max {format_value(kind, max(values))}", fontsize=9)
        ax.set_xticks(xs)

    n = max(len(result.samples[m]) for m in metrics)
    return _metric_panels(metrics, f"{result.id}: {n} repeats", "repeat", 6.4, draw)



# -- the knee: latency against IOPS over a sweep ------------------------------------------------

_KNEE_STYLES = {"p99": ("-", "o"), "mean": (":", "s")}


def knee(points: Sweep) -> bytes | None:
    fig = knee_figure(points)
    return None if fig is None else _png(fig)


def knee_figure(points: Sweep) -> Figure | None:
    """One panel per direction: each latency metric (clat p99 solid, clat mean dotted, and
    any other the sweep's expectations judge) against the direction's IOPS, one point per
    sweep point joined in sweep order and labelled with its value (the iodepth, say), in the
    direction's colour; each latency expectation's threshold a dashed line (red when some
    point missed it; a threshold that differs per point, one that refers to the baseline, a
    mark at each point); when the points were judged against a baseline, its points as
    hollow markers. Where latency climbs and IOPS stop growing is the knee."""
    curves = knee_curves(points)
    if not curves:
        return None
    variable, _ = sweep_value_labels(points.results)
    directions = list(dict.fromkeys(c.direction for c in curves))
    fig = Figure(figsize=(6.4 * len(directions), 4.8), layout="tight")
    axes = fig.subplots(1, len(directions), squeeze=False)[0]
    missed = {(c.expectation.metric.text, f"{c.expectation.key} {c.expectation.describe()}")
              for r in points.results for c in r.checks if c.judged and not c.passed}
    for ax, direction in zip(axes, directions, strict=True):
        colour = direction_colour(direction)
        tops: list[float] = []
        slo_lines: list[tuple[str, str, list[float], list[float | None]]] = []
        widest = 0.0
        for n, curve in enumerate(c for c in curves if c.direction == direction):
            stat = curve.metric.rsplit(".", 1)[-1]
            style, marker = _KNEE_STYLES.get(stat, ("--", "^"))
            known = [(x, y, label) for x, y, label in zip(curve.iops, curve.latency,
                                                          curve.labels, strict=True)
                     if not (math.isnan(x) or math.isnan(y))]
            if not known:
                continue
            xs, ys, _labels = zip(*known, strict=True)
            ax.plot(xs, ys, color=colour, linestyle=style, marker=marker, markersize=5,
                    linewidth=1.6, label=curve.metric.split(".", 1)[1])
            tops += ys
            if curve.has_baseline:
                old = [(x, y) for x, y in zip(curve.baseline_iops, curve.baseline_latency,
                                              strict=True)
                       if not (math.isnan(x) or math.isnan(y))]
                ax.plot(*zip(*old, strict=True), color=colour, linestyle=style, marker=marker,
                        markersize=7, markerfacecolor="white", linewidth=0.8, alpha=0.7,
                        label=f"{curve.metric.split('.', 1)[1]} baseline")
                tops += [y for _, y in old]
                widest = max([widest] + [x for x, _ in old])
            if n == 0:  # the values once, on the first curve (clat p99)
                for x, y, label in known:
                    ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 5),
                                fontsize=8, color=colour, fontweight="bold")
            slo_lines += [(curve.metric, text, curve.iops, thresholds)
                          for text, thresholds in curve.slos.items()]
        # A threshold far above every point would squash them: it is named, not drawn.
        top = max(tops, default=0.0)
        above = []
        for metric, text, iops, thresholds in slo_lines:
            colour_slo = FAIL_COLOUR if (metric, text) in missed else PASS_COLOUR
            levels = [t for t in thresholds if t is not None]
            if levels and min(levels) > 3 * top > 0:
                above.append(f"{text}: above the plot "
                             f"({format_value(Kind.DURATION, min(levels))})")
            elif levels and max(levels) == min(levels):
                value = format_value(Kind.DURATION, levels[0])
                ax.axhline(levels[0], color=colour_slo, linestyle="--", linewidth=1.1)
                ax.annotate(text if value in text else f"{text} ({value})",
                            (0.99, levels[0]), xycoords=("axes fraction", "data"),
                            textcoords="offset points", xytext=(0, 4), fontsize=8,
                            ha="right", color=colour_slo)
                top = max(top, levels[0])
            elif levels:  # a threshold per point (it refers to the point's variables)
                pairs = [(x, t) for x, t in zip(iops, thresholds, strict=True)
                         if t is not None and not math.isnan(x)]
                ax.plot(*zip(*pairs, strict=True), color=colour_slo, linestyle="none",
                        marker="_", markersize=14, markeredgewidth=2,
                        label=f"{text}, per point")
                top = max(top, *levels)
        if above:
            ax.text(0.99, 0.98, "\n".join(above), transform=ax.transAxes, ha="right",
                    va="top", fontsize=8, color=NEUTRAL_COLOUR)
        ax.set_xlim(left=0, right=max([widest] + [v for c in curves if c.direction == direction
                                                  for v in c.iops if not math.isnan(v)])
                    * 1.15)
        ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
        humane_axis(ax.xaxis, Kind.IOPS)
        humane_axis(ax.yaxis, Kind.DURATION)
        ax.set_xlabel(f"{direction} IOPS")
        ax.set_ylabel(f"{direction} latency")
        ax.set_title(f"{direction}: latency against IOPS", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"sweep {points.name}: {len(points.results)} points, in sweep order, "
                 f"labelled with {variable}", fontsize=10)
    return fig


# -- the trend of one metric over the recorded runs ---------------------------------------------

TREND_COLOUR = "#1f4e99"
IMPROVED_COLOUR = "#27ae60"
REGRESSED_COLOUR = "#c0392b"
_MAX_TREND_TICKS = 25


def trend(series: Trend) -> bytes:
    return _png(trend_figure(series))


def trend_figure(series: Trend) -> Figure:
    """One series drawn (``iogate history --metric M --png``, ``trend-<metric>.png``): each
    run's value (its repeats as a vertical spread), the runs that failed and were not
    accepted, the level of each segment between change points, the change points marked
    with their size, the runs labelled by build wherever the build changes; the run not
    recorded yet (``current``), when there is one, drawn after them."""
    points, metric = series.points, series.key[2]
    kind = metric_kind(metric)
    fig = Figure(figsize=(10, 4.8), dpi=_DPI)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    spread = [(i, min(p.samples), max(p.samples)) for i, p in enumerate(points) if p.samples]
    if spread:
        ax.vlines([s[0] for s in spread], [s[1] for s in spread], [s[2] for s in spread],
                  color="#9ab", linewidth=3, label="repeats (min to max)")
    ax.plot(range(len(points)), [p.value for p in points], "o", color=TREND_COLOUR,
            markersize=4, label=metric)
    out_of_norm = [i for i, p in enumerate(points) if p.status() == "failed"]
    if out_of_norm:
        ax.plot(out_of_norm, [points[i].value for i in out_of_norm], "x",
                color=REGRESSED_COLOUR, markersize=7, label="failed, not accepted")
    if series.current is not None:
        ax.plot([len(points)], [series.current], "*", color="#d35400", markersize=11,
                label="this run")
    for level in series.levels:
        ax.hlines(level.value, level.start - 0.4, level.end - 0.6, color="#444",
                  linewidth=1.2)
    for m in series.marks:
        colour = REGRESSED_COLOUR if m.regression else IMPROVED_COLOUR
        ax.axvline(m.index - 0.5, color=colour, linestyle="--", linewidth=1.2)
        ax.annotate(f"{m.change_pct:+.1f}% at {m.build}", (m.index - 0.5, 1.0),
                    xycoords=("data", "axes fraction"), xytext=(3, -12),
                    textcoords="offset points", color=colour, fontsize=8)
    ticks = [i for i, p in enumerate(points) if i == 0 or p.tag() != points[i - 1].tag()]
    if len(ticks) > _MAX_TREND_TICKS:
        ticks = ticks[:: -(-len(ticks) // _MAX_TREND_TICKS)]
    ax.set_xticks(ticks, [points[i].tag() for i in ticks], rotation=45, ha="right",
                  fontsize=7)
    ax.set_xlim(-0.8, len(points) + (0.8 if series.current is not None else -0.2))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_value(kind, v)))
    ax.set_title(series.title, fontsize=9)
    ax.set_xlabel(f"{len(points)} runs, oldest first (labelled by build)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="lower left", fontsize=7)
    fig.tight_layout()
    return fig
