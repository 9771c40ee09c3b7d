"""The run as a GitHub-flavoured Markdown summary (``--markdown``), for a CI job's summary
page (GitHub's ``$GITHUB_STEP_SUMMARY``) or any Markdown viewer.

It holds a headline (the count per outcome, the wall time, the host and device when known),
a table of the cases with their headline metrics in humane units, and for each case that
did not pass what went wrong: the failed checks, measured against expected, and the whole
failure report folded away. Every text that comes from a suite or a run (ids, errors,
values) is escaped, so a ``|`` or a ``*`` in an id neither breaks the table nor formats.

It is rendered from the :class:`~iogate.outcome.CaseResult` objects, not from the results
document: the failed checks are said by the functions the terminal's failure reports use
(:func:`iogate.report.failed_check_texts`, :func:`iogate.report.failure_report`), which read
a case's checks with their expectations, and those live only on the objects. The run's
machine facts are the results document's ``environment``, passed in.

The summary is added at the end of its file (created if missing), as every step of a GitHub
job adds to the job's summary file: the file is rewritten whole with the summary after what
it held (:func:`iogate.files.append_whole`), so it is never left with half a summary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from iogate.expect import expected_text, explain, format_value, observed_text, verdict
from iogate.files import append_whole
from iogate.metrics import parse_metric
from iogate.outcome import CaseResult
from iogate.report import failed_check_texts, failure_report

__all__ = ["HEADLINE_METRICS", "escape", "render", "write"]

# The table's metric columns: (metric path, header); a column is shown when a case has it.
HEADLINE_METRICS = (
    ("read.iops", "read IOPS"), ("read.bw", "read BW"), ("read.clat.p99", "read clat p99"),
    ("write.iops", "write IOPS"), ("write.bw", "write BW"),
    ("write.clat.p99", "write clat p99"),
    ("trim.iops", "trim IOPS"), ("trim.clat.p99", "trim clat p99"),
)

_MARKS = {"passed": "✅", "failed": "❌", "error": "⚠️", "crashed": "💥",
          "interrupted": "⏹️", "skipped": "⏭️"}

# Characters that Markdown (CommonMark, GitHub's extensions: tables, strikethrough,
# autolinks, math, emoji, mentions) may read as syntax; each is escaped with a backslash.
_ACTIVE = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&$@:^=])")


def escape(text: object) -> str:
    """``text`` as literal Markdown inline text, also inside a table cell: every character
    Markdown may read as syntax backslash-escaped, line breaks made spaces."""
    flat = " ".join(str(text).splitlines())
    return _ACTIVE.sub(r"\\\1", flat)


def _fenced(text: str) -> list[str]:
    """``text`` as a fenced code block, the fence longer than any run of backticks in it."""
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [fence + "text", *text.splitlines(), fence]


def _counts(results: Sequence[CaseResult], not_run: int) -> str:
    count = {o: sum(r.outcome == o for r in results) for o in _MARKS}
    parts = [f"{count['passed']} passed", f"{count['failed']} failed",
             f"{count['error']} error(s)"]
    parts += [f"{count[o]} {o}" for o in ("crashed", "interrupted", "skipped") if count[o]]
    if not_run:
        parts.append(f"{not_run} not run")
    return ", ".join(parts)


def _facts(results: Sequence[CaseResult], environment: Mapping[str, object]) -> list[str]:
    """The host and the devices the cases ran on, as far as known, and which facts the run
    was given rather than read (the environment's ``given``: ``--fact``)."""
    facts = []
    if environment.get("host"):
        facts.append(f"host {escape(environment['host'])}")
    devices: dict[str, None] = {}
    for r in results:
        env = r.environment
        name = env.get("target.device_model") or env.get("target.device")
        if not name:
            continue
        details = [str(env[k]) for k in ("target.device", "target.firmware")
                   if env.get(k) and env[k] != name]
        devices[str(name) + (f" ({', '.join(details)})" if details else "")] = None
    if devices:
        facts.append(("device " if len(devices) == 1 else "devices ")
                     + ", ".join(escape(d) for d in devices))
    if environment.get("iogate_version"):
        facts.append(f"iogate {escape(environment['iogate_version'])}")
    given = environment.get("given")
    if isinstance(given, list) and given:
        facts.append("given, not read: " + ", ".join(
            f"{escape(k)} {escape(environment.get(k, ''))}" for k in given))
    return facts


def _cell(result: CaseResult, path: str) -> str:
    value = result.metrics.get(path)
    return "–" if value is None else escape(format_value(parse_metric(path).kind, value))


def _table(results: Sequence[CaseResult]) -> list[str]:
    shown = [(p, h) for p, h in HEADLINE_METRICS if any(p in r.metrics for r in results)]
    lines = ["| case | outcome | " + "".join(f"{h} | " for _, h in shown) + "time |",
             "|:--|:--|" + "--:|" * len(shown) + "--:|"]
    for r in results:
        cells = [escape(r.id), f"{_MARKS.get(r.outcome, '')} {escape(r.outcome)}".strip(),
                 *(_cell(r, p) for p, _ in shown), escape(f"{r.duration_s:.1f}s")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _statistical(results: Sequence[CaseResult]) -> list[str]:
    """Every verdict against a baseline or the history, with why (passed ones too: a value
    beyond its threshold that passed says so here)."""
    rows = [(r, c) for r in results for c in r.checks if c.evidence is not None]
    if not rows:
        return []
    lines = ["| case | check | observed | verdict | why |", "|:--|:--|--:|:--|:--|"]
    for r, c in rows:
        lines.append("| " + " | ".join(escape(t) for t in (
            r.id, f"{c.key} {expected_text(c)}", observed_text(c), verdict(c),
            explain(c))) + " |")
    return ["<details><summary>Verdicts against baselines and history "
            f"({len(rows)})</summary>", "", *lines, "", "</details>", ""]


def _problem(result: CaseResult) -> list[str]:
    """What went wrong with a case that did not pass: its failed checks (or its error),
    then the whole failure report, folded."""
    lines = [f"### {_MARKS.get(result.outcome, '')} {escape(result.id)}: "
             f"{escape(result.outcome)}", ""]
    checks = failed_check_texts(result)
    if checks:
        lines += [f"- {escape(text)}" for text in checks]
    if result.error:
        lines += ([""] if checks else []) + [escape(result.error)]
    if not checks and not result.error:
        lines.append(escape(failure_report(result, named=False).splitlines()[0]))
    lines += ["", "<details><summary>Failure report</summary>", "",
              *_fenced(failure_report(result)), "", "</details>", ""]
    return lines


def render(results: Sequence[CaseResult], environment: Mapping[str, object] | None = None,
           *, wall_s: float | None = None, not_run: int = 0) -> str:
    """The summary of a run: its cases' results, the run's machine facts (the results
    document's ``environment``), its wall time and how many cases it did not reach."""
    worst = next((o for o in ("crashed", "error", "interrupted", "failed")
                  if any(r.outcome == o for r in results)), "passed")
    headline = f"## {_MARKS[worst]} iogate: {_counts(results, not_run)}"
    if wall_s is not None:
        headline += f" in {wall_s:.1f}s"
    lines = [headline, ""]
    facts = _facts(results, environment or {})
    if facts:
        lines += [" · ".join(facts), ""]
    if results:
        lines += [*_table(results), ""]
    lines += _statistical(results)
    for r in results:
        if r.outcome != "passed":
            lines += _problem(r)
    return "\n".join(lines).rstrip("\n") + "\n"


def write(path: str, results: Sequence[CaseResult],
          environment: Mapping[str, object] | None = None, *, wall_s: float | None = None,
          not_run: int = 0, option: str = "markdown") -> None:
    """Add the summary (:func:`render`) at the end of ``path``, after a blank line when it
    holds something already; an :class:`iogate.files.OutputError` if it cannot be."""
    append_whole(path, render(results, environment, wall_s=wall_s, not_run=not_run), option,
                 separator="\n")
