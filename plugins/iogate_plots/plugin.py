"""The report plugin's hooks: ``--artifacts DIR`` and ``--html FILE`` (pytest:
``--iogate-artifacts DIR``, ``--iogate-html FILE``), written after a run by ``iogate_report``.

``--artifacts DIR`` writes, per case, a subdirectory named after the case id (made a safe
file name) holding:

- ``series.csv``: one row per interval per run, job and direction (repeat, job, direction,
  end_s, ios, bytes, iops, bw_bytes, clat/lat/resp mean and p99 in ns);
- ``histograms.json``: per direction and latency kind with samples, the non-empty buckets
  ``[lo_ns, hi_ns, count]`` with the exact count, min, max, mean and stdev;
- ``latency_percentiles.png``: per direction, latency against the percentile on a nines
  axis (p50, p90, p99, p99.9...: ``-log10(1 - q)``), a line per latency kind, every
  latency expectation drawn at its percentile and threshold, and, for a case judged
  against a baseline, the baseline entry's percentiles overlaid (``CaseResult.baseline``);
  ``timeline.png``: IOPS and p99 per interval, every repeat;
  ``repeats.png`` (repeated cases): each headline metric per repeat, with the median;
  ``trend-<metric>.png`` (a run recorded with ``--history``): the case's recent recorded
  runs of that metric, their change points and this run (the document's ``history``);

and per swept workload, in DIR itself, ``knee-<name>.png`` (each direction's clat p99 and
mean against its IOPS, one point per sweep point in sweep order, labelled with its value,
the latency expectations' thresholds and the baseline's points) and ``sweep-<name>.png``
(headline metrics against the sweep point). ``document["artifacts"]`` lists, per case id,
the files written relative to DIR. With repeats or steady-state rounds, the series are every
run's and the histograms the last run's.

``--html FILE`` writes one self-contained page (see :mod:`iogate_plots.page`).

It also draws the trend of one metric of a history store for ``iogate history DEST --metric
M --png FILE --html FILE`` (``iogate_trend_figure``, see :mod:`iogate_plots.trend`).

Both paths are checked when the plugin is configured, before any case runs, by the rules of
:mod:`iogate.files` (a file's directory must exist; DIR itself is made if missing, never its
parent), which also claims them as outputs of the run: the front end refuses either on
another output or on a file a case uses. Every file is written whole.

matplotlib is optional: without it the CSV, JSON and HTML are still written, without plots.
Importing this module imports neither matplotlib nor the rendering code (it runs in every
pytest session); a failure while reporting is a message on stderr, never an exception.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iogate.hooks import AddOption, hookimpl

if TYPE_CHECKING:
    from iogate.outcome import CaseResult
    from iogate.trend import Trend


@dataclass(frozen=True)
class Settings:
    artifacts: str | None = None  # directory
    html: str | None = None  # file


_settings = Settings()


@hookimpl
def iogate_add_options(add: AddOption) -> None:
    add("artifacts", help="write per-case plots (PNG, needs matplotlib), interval series "
                          "(CSV) and latency histograms (JSON) under DIR", metavar="DIR")
    add("html", help="write a self-contained HTML report of the run to FILE", metavar="FILE")


@hookimpl
def iogate_configure(options: Mapping[str, str | None]) -> None:
    """Take the options, checking both paths before anything runs (an OutputError, which
    the front end reports as a usage error naming the option); checked, they are claimed
    as outputs of the run (:func:`iogate.files.claiming`)."""
    global _settings
    from iogate.files import check_output, check_output_directory

    _settings = Settings(artifacts=options.get("artifacts") or None,
                         html=options.get("html") or None)
    if _settings.artifacts:
        check_output_directory(_settings.artifacts, "artifacts")
    if _settings.html:
        check_output(_settings.html, "html")


@hookimpl
def iogate_report(results: Sequence[CaseResult], document: dict[str, Any]) -> None:
    if not (_settings.artifacts or _settings.html):
        return
    try:
        from iogate_plots.reporting import write_reports

        write_reports(results, document, artifacts=_settings.artifacts, html=_settings.html,
                      err=sys.stderr)
    except Exception as exc:  # a report must not break the run it reports on
        print(f"iogate plots: the report failed: {type(exc).__name__}: {exc}",
              file=sys.stderr)


@hookimpl
def iogate_trend_figure(trend: Trend, forms: Sequence[str]) -> dict[str, bytes]:
    """The trend of one metric for ``iogate history --metric M --png FILE --html FILE``
    (:mod:`iogate_plots.trend`)."""
    from iogate_plots.trend import files

    return files(trend, forms, sys.stderr)
