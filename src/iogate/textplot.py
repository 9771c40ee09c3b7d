"""Text rendering of a latency distribution, for failure reports read in a terminal or CI log.

:func:`latency_summary` draws a horizontal histogram on rounded, roughly logarithmic ranges
("100us-200us"), with the cumulative share of samples per row, the row holding each SLO marked,
and a line of CDF points. Rows never split a histogram bucket: a bucket is counted in the row
holding its middle, which moves a row edge by at most the bucket width (1/128 of an octave),
finer than any reported percentile's own error.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import pairwise

from iogate.histogram import OVERFLOW, Histogram, bucket_bounds
from iogate.units import format_duration

# Row edges within a decade, as mantissas in hundredths, from finest to coarsest. Each scale
# is a rounded geometric series, so ranges read like "150us-200us".
_SCALES: tuple[tuple[int, ...], ...] = (
    (*range(100, 200, 2), *range(200, 400, 5), *range(400, 1000, 10)),
    (*range(100, 200, 5), *range(200, 500, 10), *range(500, 1000, 20)),
    (*range(100, 200, 10), *range(200, 500, 20), *range(500, 1000, 50)),
    (100, 120, 150, 200, 250, 300, 400, 500, 600, 800),
    (100, 150, 200, 300, 500, 700),
    (100, 200, 500),
    (100,),
)
_CDF_POINTS = (50.0, 90.0, 99.0, 99.9)
_PARTIAL = " ▏▎▍▌▋▊▉"  # eighths of a block, for the end of a bar


def _edges(scale: Sequence[int], decades: int, lo: int, hi: int) -> list[int]:
    """Row edges (ns) around [lo, hi]: from the largest edge <= lo to the smallest edge > hi.
    Edges are whole nanoseconds (finer would split 1 ns buckets); 0 starts the first row
    when a sample is 0. A scale of one mantissa may step several decades at a time."""
    edges = [0]
    exp = 0
    while True:
        for m in scale:
            hundredths = m * 10 ** exp
            if hundredths % 100:
                continue
            edge = hundredths // 100
            if edge <= lo:
                edges = [edge]
            else:
                edges.append(edge)
                if edge > hi:
                    return edges
        exp += decades


def _row_of(edges: list[int], value: float) -> int:
    """Index of the row [edges[i], edges[i+1]) holding value."""
    return bisect_right(edges, value) - 1


def _layout(values: list[int], rows: int) -> list[int]:
    lo, hi = values[0], values[-1]
    for scale in _SCALES:
        edges = _edges(scale, 1, lo, hi)
        if len(edges) - 1 <= rows:
            return edges
    decades = 2
    while True:  # a very wide distribution: several decades per row
        edges = _edges((100,), decades, lo, hi)
        if len(edges) - 1 <= rows:
            return edges
        decades += 1


def _middle(index: int) -> int:
    """The value a bucket stands for: its middle (its value, for 1 ns buckets); the overflow
    bucket, with no upper bound, stands for its lower bound."""
    lo, hi = bucket_bounds(index)
    return lo if index == OVERFLOW else lo + (hi - lo) // 2


def _label(edge: int) -> str:
    if edge >= 10**9:  # seconds, not minutes: "100s-200s" reads better than "1.667m"
        return f"{edge / 10**9:.3f}".rstrip("0").rstrip(".") + "s"
    return format_duration(edge) if edge else "0"


def _percent_floor(part: int, total: int) -> str:
    # Floor, so a tail that is not empty never shows as 100.00%.
    hundredths = part * 10000 // total
    return f"{hundredths // 100}.{hundredths % 100:02d}%"


def _bar(count: int, peak: int, width: int, ascii: bool) -> str:
    if not count:
        return ""
    eighths = count * width * 8 // peak
    if ascii:
        return "#" * (eighths // 8) or "."
    return "█" * (eighths // 8) + (_PARTIAL[eighths % 8] if eighths % 8 else "") or "▏"


def latency_summary(hist: Histogram, *, slo_ns: float | Sequence[float] | None = None,
                    width: int = 50, rows: int = 12, ascii: bool = False,
                    min_ns: int | None = None, max_ns: int | None = None) -> str:
    """A histogram of ``hist`` in at most ``rows`` rows (at least 3 are always allowed), each
    ``range  bar  count  cumulative%``, bars scaled to the fullest row over ``width``
    characters; then the p50, p90, p99, p99.9 and max. Each SLO (ns) marks its row and gets a
    line with the share of samples at or below it. ``min_ns``/``max_ns``, the exact extremes
    when known, sharpen the percentiles. ``ascii`` draws with '#' and '<-' only."""
    total = hist.total
    if total == 0:
        return "no samples"
    slos = [] if slo_ns is None else [float(slo_ns)] if isinstance(slo_ns, (int, float)) \
        else [float(s) for s in slo_ns]
    points = [(_middle(i), c) for i, c in hist.used()]
    edges = _layout([v for v, _ in points], max(3, rows))
    counts = [0] * (len(edges) - 1)
    for value, c in points:
        counts[_row_of(edges, value)] += c
    marks: dict[int, list[float]] = {}
    for slo in slos:
        if edges[0] <= slo < edges[-1]:
            marks.setdefault(_row_of(edges, slo), []).append(slo)

    ranges = [f"{_label(a)}-{_label(b)}" for a, b in pairwise(edges)]
    range_width = max(len(r) for r in ranges)
    count_width = len(str(max(counts)))
    bar_width = width + 1  # a full bar, then at least one space before the count
    peak = max(counts)
    arrow = "<-" if ascii else "◀"
    lines = []
    seen = 0
    for i, (text, c) in enumerate(zip(ranges, counts, strict=True)):
        seen += c
        line = (f"{text.rjust(range_width)} |{_bar(c, peak, width, ascii).ljust(bar_width)}"
                f"{str(c).rjust(count_width)}  {_percent_floor(seen, total).rjust(7)}")
        if i in marks:
            line += f"  {arrow} SLO " + ", ".join(format_duration(s) for s in marks[i])
        lines.append(line.rstrip())

    p = hist.percentiles(_CDF_POINTS, min_ns, max_ns)
    top = max_ns if max_ns is not None else hist.percentile(100.0, min_ns, max_ns)
    cdf = [f"p{q:g} {format_duration(v)}"
           for q, v in zip(_CDF_POINTS, p, strict=True) if v is not None]
    if top is not None:
        cdf.append(f"max {format_duration(top)}")
    lines.append(f"n={total}  " + "  ".join(cdf))
    for slo in slos:
        within = sum(c for v, c in points if v <= slo)
        lines.append(f"<= SLO {format_duration(slo)}: {_percent_floor(within, total)} of samples")
    return "\n".join(lines)
