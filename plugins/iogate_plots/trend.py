"""The trend of one metric of a history store as files, for ``iogate history DEST --metric M
--png FILE --html FILE`` (the ``iogate_trend_figure`` hook): the plot, drawn by
:func:`iogate_plots.figures.trend`, and a self-contained page holding the plot, the change
points and every run.

Importing this module imports no matplotlib. Without it the page is still made, without its
plot (one message on stderr says so), and a PNG is refused with the reason
(:class:`iogate.trend.FigureError`).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import IO

from iogate.trend import FigureError, Trend
from iogate_plots.contents import PREFIX, load_figures

FORMS = ("png", "html")
NEEDS_MATPLOTLIB = "a trend plot needs matplotlib: pip install 'iogate[plots]'"


def files(series: Trend, forms: Sequence[str], err: IO[str]) -> dict[str, bytes]:
    """Each form of ``forms`` (``png``, ``html``) of the trend, as the file's bytes; the
    plot is drawn once for both."""
    unknown = [f for f in forms if f not in FORMS]
    if unknown:
        raise FigureError(f"the plots plugin makes no {unknown[0]!r} file of a trend "
                          f"(only {', '.join(FORMS)})")
    figures = load_figures()
    if figures is None:
        if "png" in forms:
            raise FigureError(NEEDS_MATPLOTLIB)
        print(f"{PREFIX}: {NEEDS_MATPLOTLIB}; the page is made without it", file=err)
        png = None
    else:
        png = figures.trend(series)
    out: dict[str, bytes] = {}
    if "png" in forms and png is not None:
        out["png"] = png
    if "html" in forms:
        out["html"] = page(series, png).encode()
    return out


def page(series: Trend, png: bytes | None) -> str:
    """A self-contained page: the plot (when there is one), the change points found in the
    series (its ``findings``) and every run's value, repeats and outcome."""
    metric = series.key[2]
    title = html.escape(series.title)
    image = (f'<img alt="trend of {html.escape(metric)}" src="data:image/png;base64,'
             f'{base64.b64encode(png).decode()}">' if png else
             "<p>(no plot: matplotlib is not installed)</p>")
    value = series.value_text
    change_rows = "".join(
        f"<tr><td>{html.escape(f.first.recorded_at[:19])}</td>"
        f"<td>{html.escape(f.first.tag())}</td>"
        f"<td>{html.escape(value(f.change.before))}</td>"
        f"<td>{html.escape(value(f.change.after))}</td>"
        f"<td>{f.change.change_pct:+.1f}%</td><td>{f.change.p_value:.2g}</td>"
        f"<td>{'regression' if f.regression else 'improvement'}"
        f"{' (new)' if f.regression and f.new(series.recent) else ''}</td></tr>"
        for f in series.findings)
    run_rows = "".join(
        f"<tr><td>{html.escape(p.recorded_at[:19])}</td><td>{html.escape(p.run_id[:8])}</td>"
        f"<td>{html.escape(p.tag())}</td><td>{html.escape(value(p.value))}</td>"
        f"<td>{html.escape(', '.join(value(s) for s in p.samples))}</td>"
        f"<td>{html.escape(p.status())}</td></tr>" for p in series.points)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
        "font-size:90%}img{max-width:100%}</style></head><body>"
        f"<h1>{title}</h1>{image}<h2>Change points</h2>"
        + (f"<table><tr><th>first run</th><th>build</th><th>before</th><th>after</th>"
           f"<th>change</th><th>p</th><th></th></tr>{change_rows}</table>" if series.findings
           else "<p>none</p>")
        + f"<h2>Runs ({len(series.points)})</h2><table><tr><th>recorded</th><th>run</th>"
        f"<th>build</th><th>value</th><th>repeats</th><th>outcome</th></tr>{run_rows}"
        "</table>"
        "</body></html>\n")
