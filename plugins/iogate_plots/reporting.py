"""Writing the reports: the files made by :mod:`iogate_plots.contents`, written under
``--artifacts DIR`` and embedded in the ``--html FILE`` page.

A report must never break a run: a file that cannot be written, or a plot that cannot be
drawn, is one message on stderr and the rest goes on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from iogate.outcome import CaseResult
from iogate_plots.contents import NO_MATPLOTLIB, PREFIX, Report, build, load_figures
from iogate_plots.page import render


def _write(path: Path, content: bytes, err: IO[str]) -> bool:
    from iogate.files import OutputError, write_whole

    try:
        write_whole(path, content)
    except OutputError as exc:
        print(f"{PREFIX}: cannot write {exc}", file=err)
        return False
    return True


def write_artifacts(root: Path, report: Report, err: IO[str]) -> dict[str, list[str]]:
    """Write every file under ``root``; return, per case id, the files written (relative
    to ``root``), its sweep's plots included."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"{PREFIX}: cannot create the artifacts directory {root}: "
              f"{exc.strerror or exc}", file=err)
        return {}
    written: dict[str, list[str]] = {}
    for case in report.cases:
        names = written.setdefault(case.result.id, [])
        if not case.files:
            continue
        directory = root / case.directory
        try:
            directory.mkdir(exist_ok=True)
        except OSError as exc:
            print(f"{PREFIX}: cannot create {directory}: {exc.strerror or exc}", file=err)
            continue
        for artifact in case.files:
            if _write(directory / artifact.name, artifact.content, err):
                names.append(f"{case.directory}/{artifact.name}")
    for s in report.sweeps:
        for plot in s.plots:
            if _write(root / plot.name, plot.content, err):
                for r in s.sweep.results:
                    written.setdefault(r.id, []).append(plot.name)
    return written


def write_reports(results: Sequence[CaseResult], document: dict[str, Any], *,
                  artifacts: str | None, html: str | None, err: IO[str]) -> None:
    figures = load_figures()
    if figures is None:
        print(f"{PREFIX}: {NO_MATPLOTLIB}; writing the rest without them", file=err)
    report = build(results, figures, err, document)
    if artifacts:
        document["artifacts"] = write_artifacts(Path(artifacts), report, err)
    if html:
        from iogate.files import OutputError, write_whole

        try:
            write_whole(html, render(report, document), "html")
        except OutputError as exc:
            print(f"{PREFIX}: cannot write the HTML report {exc.path}: {exc.problem}",
                  file=err)
