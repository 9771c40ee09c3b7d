"""Building and writing the reports: every case's files (CSV, JSON and PNG) are made in
memory once, then written under ``--artifacts DIR`` and embedded in the ``--html FILE`` page.

A report must never break a run: a file that cannot be written, or a plot that cannot be
drawn, is one message on stderr and the rest goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from iogate.runner import CaseResult
from iogate_plots import data

NO_MATPLOTLIB = "plots need matplotlib, which is not installed: pip install matplotlib adds them"
PREFIX = "iogate plots"


@dataclass
class Artifact:
    """One file of the report: its name, its bytes, and what it shows."""

    name: str
    content: bytes
    caption: str

    @property
    def is_plot(self) -> bool:
        return self.name.endswith(".png")


@dataclass
class CaseFiles:
    result: CaseResult
    directory: str  # the case's subdirectory: its id made a safe file name
    files: list[Artifact] = field(default_factory=list)

    @property
    def plots(self) -> list[Artifact]:
        return [a for a in self.files if a.is_plot]


@dataclass
class SweepFiles:
    sweep: data.Sweep
    plot: Artifact | None


@dataclass
class Report:
    cases: list[CaseFiles]
    sweeps: list[SweepFiles]
    plots_missing: bool  # matplotlib could not be imported


def load_figures() -> ModuleType | None:
    """The plotting module, or None when matplotlib cannot be imported."""
    try:
        import matplotlib  # noqa: F401  (imported first: its absence means no plots)

        from iogate_plots import figures
    except ImportError:
        return None
    return figures


class _Plotter:
    """Draws one plot at a time; a plot that fails is reported and left out."""

    def __init__(self, figures: ModuleType | None, err: IO[str]) -> None:
        self.figures = figures
        self.err = err

    def __call__(self, name: str, caption: str, draw: Callable[[ModuleType], bytes | None],
                 subject: str) -> Artifact | None:
        if self.figures is None:
            return None
        try:
            png = draw(self.figures)
        except Exception as exc:  # a broken plot must not break the run
            print(f"{PREFIX}: {subject}: cannot draw {name}: {exc}", file=self.err)
            return None
        return Artifact(name, png, caption) if png else None


def _drawer(function: str, subject: object) -> Callable[[ModuleType], bytes | None]:
    """Calls the plotting module's ``function`` on ``subject`` once the module is loaded."""
    return lambda figures: getattr(figures, function)(subject)


def build(results: Sequence[CaseResult], figures: ModuleType | None, err: IO[str]) -> Report:
    plot = _Plotter(figures, err)
    cases = []
    for result, directory in zip(results, data.unique_names([r.id for r in results]),
                                 strict=True):
        files = CaseFiles(result, directory)
        run = result.run
        if run is not None:
            files.files.append(Artifact("series.csv", data.series_csv(result).encode(),
                                        "interval series"))
            files.files.append(Artifact("histograms.json",
                                        data.histograms_json(result).encode(),
                                        "latency histograms"))
            for name, caption, draw in (
                    ("latency_cdf.png", "latency CDF with the expectations' thresholds",
                     "latency_cdf"),
                    ("timeline.png", "IOPS and p99 completion latency per interval",
                     "timeline"),
                    ("repeats.png", "per-repeat values and their median", "repeats")):
                artifact = plot(name, caption, _drawer(draw, result), result.id)
                if artifact is not None:
                    files.files.append(artifact)
        cases.append(files)
    swept = data.sweeps(results)
    names = data.unique_names([f"sweep-{s.name}" for s in swept],
                              taken=[c.directory for c in cases])
    sweeps = [SweepFiles(s, plot(f"{name}.png", f"sweep {s.name}: metrics against the point",
                                 _drawer("sweep", s), f"sweep {s.name}"))
              for s, name in zip(swept, names, strict=True)]
    return Report(cases, sweeps, figures is None)


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
    to ``root``), its sweep's plot included."""
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
        if s.plot is not None and _write(root / s.plot.name, s.plot.content, err):
            for r in s.sweep.results:
                written.setdefault(r.id, []).append(s.plot.name)
    return written


def write_reports(results: Sequence[CaseResult], document: dict[str, Any], *,
                  artifacts: str | None, html: str | None, err: IO[str]) -> None:
    figures = load_figures()
    if figures is None:
        print(f"{PREFIX}: {NO_MATPLOTLIB}; writing the rest without them", file=err)
    report = build(results, figures, err)
    if artifacts:
        document["artifacts"] = write_artifacts(Path(artifacts), report, err)
    if html:
        from iogate.files import OutputError, write_whole
        from iogate_plots.page import render

        try:
            write_whole(html, render(report, document), "html")
        except OutputError as exc:
            print(f"{PREFIX}: cannot write the HTML report {exc.path}: {exc.problem}",
                  file=err)
