"""The ``--html`` page: one self-contained HTML5 file for a run (styles inline, plots as
base64 data URIs, no scripts, no external resources).

It shows the suites and the verdict counts, the environment (sizes in binary units), a row
per case (outcome, duration, headline metrics, failed checks with expected against observed),
each sweep's plots (latency against IOPS, metrics against the point), then per case its
error, warnings, workload parameters as run, the spread of its repeats (min, median and max
of each headline metric), checks table (in a ``<details>``, open when the case did not pass),
target facts and plots. Every text from a suite, a result or the system goes through
:func:`html.escape`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from iogate.expect import expected_text, format_value, observed_text, verdict
from iogate.outcome import OUTCOMES, CaseResult
from iogate_plots.contents import NO_MATPLOTLIB, Artifact, CaseFiles, Report, SweepFiles
from iogate_plots.data import (
    fact_text,
    headline,
    metric_kind,
    point_label,
    repeat_spread,
    requested_rates,
    workload_parameters,
)

OUTCOME_COLOURS = {"passed": "#2e7d32", "failed": "#c62828", "error": "#6a1b9a",
                   "interrupted": "#ef6c00", "skipped": "#757575"}

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 78em;
       padding: 0 1em; color: #212121; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin-bottom: .3em; }
table { border-collapse: collapse; margin: .4em 0; font-size: .9em; }
th, td { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.outcome { color: #fff; padding: .1em .5em; border-radius: .3em; font-weight: 600; }
.fail { color: #c62828; font-weight: 600; } .ok { color: #2e7d32; }
.note { background: #fff8e1; border-left: 4px solid #ffb300; padding: .4em .8em; }
.error { background: #fdecea; padding: .4em .8em; white-space: pre-wrap; }
figure { display: inline-block; margin: .4em; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #555; }
section.case { border-top: 1px solid #ddd; margin-top: 1em; }
.facts { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; }
.facts h4 { margin: .3em 0 0; font-size: .95em; }
code { font-size: .95em; }
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _badge(outcome: str) -> str:
    colour = OUTCOME_COLOURS.get(outcome, "#424242")
    return f'<span class="outcome" style="background:{colour}">{_e(outcome)}</span>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """A table whose cells are already HTML (escape them before)."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


def _img(artifact: Artifact, alt: str) -> str:
    data = base64.b64encode(artifact.content).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{_e(alt)}">'
            f"<figcaption>{_e(artifact.caption)}</figcaption></figure>")


def _metrics_cell(result: CaseResult) -> str:
    shown = [f"{_e(m)} = <b>{_e(format_value(metric_kind(m), result.metrics[m]))}</b>"
             for m in headline(result.metrics)]
    return "<br>".join(shown)


def _problems_cell(result: CaseResult) -> str:
    lines = [f'<span class="fail">{_e(c.key)}</span> expected '
             f"{_e(expected_text(c))}, observed {_e(observed_text(c))}"
             for c in result.failed_checks]
    if result.error:
        lines.insert(0, _e(result.error))
    if result.warnings:
        lines.append(_e(f"{len(result.warnings)} warning(s)"))
    return "<br>".join(lines)


def _anchor(index: int) -> str:
    return f"case-{index}"


def _summary_rows(cases: Sequence[CaseFiles]) -> list[list[str]]:
    return [[f'<a href="#{_anchor(i)}"><code>{_e(c.result.id)}</code></a>',
             _badge(c.result.outcome), f"{c.result.duration_s:.2f}s", _metrics_cell(c.result),
             _problems_cell(c.result)] for i, c in enumerate(cases)]


def _checks_details(result: CaseResult) -> str:
    if not result.checks:
        return "<p>No expectations.</p>"
    rows = [[f"<code>{_e(c.key)}</code>", _e(expected_text(c)),
             _e(observed_text(c)),
             f'<span class="{"ok" if c.passed else "fail"}">{_e(verdict(c))}</span>',
             _e(c.reason)] for c in result.checks]
    failed = len(result.failed_checks)
    opened = " open" if result.outcome != "passed" else ""
    return (f"<details{opened}><summary>checks: {len(result.checks)}, {failed} not met"
            f"</summary>\n{_table(('metric', 'expected', 'observed', 'verdict', 'why'), rows)}"
            "\n</details>")


def _facts_table(facts: Mapping[str, object]) -> str:
    return _table(("fact", "value"), ([f"<code>{_e(k)}</code>", _e(fact_text(k, v))]
                                      for k, v in facts.items()))


def _parameters_table(result: CaseResult) -> str:
    rows = [[f"<code>{_e(k)}</code>", _e(v)] for k, v in workload_parameters(result)]
    rows += [[f"<code>{_e(k)}</code> requested", _e(v)] for k, v in requested_rates(result)]
    return ("<div><h4>workload as run</h4>"
            + _table(("parameter", "value"), rows, cls="params") + "</div>")


def _spread_table(result: CaseResult) -> str:
    spreads = repeat_spread(result)
    if not spreads:
        return ""
    rows = []
    for s in spreads:
        kind = metric_kind(s.metric)
        rows.append([f"<code>{_e(s.metric)}</code>", f'<span class="num">{len(s.values)}</span>',
                     *(_e(format_value(kind, v)) for v in (s.low, s.median, s.high)),
                     _e(f"{s.spread_pct:.1f}%")])
    return ("<div><h4>spread of the repeats</h4>"
            + _table(("metric", "runs", "min", "median", "max", "(max-min)/median"), rows,
                     cls="spread") + "</div>")


def _case_section(index: int, case: CaseFiles, plots_missing: bool) -> str:
    r = case.result
    parts = [f'<section class="case" id="{_anchor(index)}">',
             f"<h3><code>{_e(r.id)}</code> {_badge(r.outcome)}</h3>",
             f"<p>suite <b>{_e(r.case.suite_name)}</b>, {_e(r.case.path)} line {r.case.line}"
             + (f", point <code>{_e(point_label(r.case.sweep_point))}</code>"
                if r.case.sweep_point else "")
             + (f", target <code>{_e(r.target)}</code>" if r.target else "")
             + f", {r.duration_s:.2f}s</p>"]
    if r.error:
        parts.append(f'<div class="error">{_e(r.error)}</div>')
    if r.warnings:
        parts.append("<ul>" + "".join(f"<li>warning: {_e(w)}</li>" for w in r.warnings)
                     + "</ul>")
    parts.append('<div class="facts">' + _parameters_table(r) + _spread_table(r) + "</div>")
    parts.append(_checks_details(r))
    if r.environment:
        parts.append(f"<details><summary>target</summary>\n{_facts_table(r.environment)}"
                     "\n</details>")
    if case.plots:
        parts.append('<div class="plots">' + "".join(_img(p, f"{r.id}: {p.caption}")
                                                      for p in case.plots) + "</div>")
    elif plots_missing and r.run is not None:
        parts.append(f'<p class="note">{_e(NO_MATPLOTLIB)}.</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _sweep_section(files: SweepFiles, anchors: Mapping[int, int]) -> str:
    """A sweep's plots and its points in run order, each linked to its case's section
    (``anchors``: the id() of a case's result to its index)."""
    points = ", ".join(f'<a href="#{_anchor(anchors[id(r)])}">'
                       f"{_e(point_label(r.case.sweep_point))}</a>"
                       for r in files.sweep.results)
    return (f'<section class="sweep"><h3>sweep <code>{_e(files.sweep.name)}</code></h3>'
            f"<p>points in order: {points}</p>"
            + "".join(_img(p, f"sweep {files.sweep.name}: {p.caption}") for p in files.plots)
            + "</section>")


def _counts(report: Report, document: Mapping[str, Any]) -> dict[str, int]:
    summary = document.get("summary")
    if isinstance(summary, dict):
        return {k: int(v) for k, v in summary.items()}
    counts = dict.fromkeys(OUTCOMES, 0)
    for c in report.cases:
        counts[c.result.outcome] = counts.get(c.result.outcome, 0) + 1
    return counts


def render(report: Report, document: Mapping[str, Any]) -> str:
    suites = list(dict.fromkeys(c.result.case.suite_name for c in report.cases))
    counts = _counts(report, document)
    verdicts = ", ".join(f"{n} {o}" for o, n in counts.items() if n) or "no cases"
    title = f"iogate: {', '.join(suites) or 'no suites'} ({verdicts})"
    body = [f"<h1>{_e(title)}</h1>",
            "<p>" + " ".join(_badge(o) + f" {n}" for o, n in counts.items() if n)
            + f" &middot; iogate {_e(document.get('iogate_version', ''))}"
            + f" &middot; {_e(document.get('created', ''))}</p>"]
    environment = document.get("environment")
    if isinstance(environment, Mapping) and environment:
        body += ["<h2>Environment</h2>", _facts_table(environment)]
    if report.plots_missing:
        body.append(f'<p class="note">{_e(NO_MATPLOTLIB)}.</p>')
    body += ["<h2>Cases</h2>",
             _table(("case", "outcome", "time", "metrics", "problems"),
                    _summary_rows(report.cases), cls="cases")]
    sweep_plots = [s for s in report.sweeps if s.plots]
    if sweep_plots:
        body.append("<h2>Sweeps</h2>")
        anchors = {id(c.result): i for i, c in enumerate(report.cases)}
        body += [_sweep_section(s, anchors) for s in sweep_plots]
    body.append("<h2>Details</h2>")
    body += [_case_section(i, c, report.plots_missing) for i, c in enumerate(report.cases)]
    return ("<!DOCTYPE html>\n"
            '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
