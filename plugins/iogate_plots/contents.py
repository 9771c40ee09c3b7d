"""What a report holds, made in memory once: every case's files (CSV, JSON and PNG) and
every sweep's plots, drawn by :mod:`iogate_plots.figures` when matplotlib is there.

A plot that cannot be drawn is one message on stderr; the rest is made all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import IO, Any

from iogate.outcome import CaseResult
from iogate_plots import data

PREFIX = "iogate plots"
NO_MATPLOTLIB = "plots need matplotlib, which is not installed: pip install matplotlib adds them"


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
    plots: list[Artifact] = field(default_factory=list)  # written in DIR itself


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


def _recent(document: Mapping[str, Any], case_id: str) -> Mapping[str, Any]:
    """The case's recent trends from the document's ``history`` section (when the run was
    recorded in a history store), per metric."""
    section = document.get("history")
    cases = section.get("cases") if isinstance(section, Mapping) else None
    found = cases.get(case_id) if isinstance(cases, Mapping) else None
    return found if isinstance(found, Mapping) else {}


def _trend_drawer(case_id: str, metric: str, entry: Mapping[str, Any]
                  ) -> Callable[[ModuleType], bytes | None]:
    def draw(figures: ModuleType) -> bytes | None:
        from iogate.trend import recent_trend

        return figures.trend(recent_trend(case_id, metric, entry)) if entry.get("runs") \
            else None
    return draw


def build(results: Sequence[CaseResult], figures: ModuleType | None, err: IO[str],
          document: Mapping[str, Any] | None = None) -> Report:
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
                    ("latency_percentiles.png", "latency by percentile (nines axis) with the "
                     "expectations' thresholds" + (" and the baseline's percentiles"
                                                   if result.baseline else ""),
                     "latency_percentiles"),
                    ("timeline.png", "IOPS and p99 completion latency per interval",
                     "timeline"),
                    ("repeats.png", "per-repeat values and their median", "repeats")):
                artifact = plot(name, caption, _drawer(draw, result), result.id)
                if artifact is not None:
                    files.files.append(artifact)
        for metric, entry in _recent(document or {}, result.id).items():
            artifact = plot(f"trend-{metric}.png", f"{metric}: the recorded runs' trend and "
                            "this run", _trend_drawer(result.id, metric, entry), result.id)
            if artifact is not None:
                files.files.append(artifact)
        cases.append(files)
    swept = data.sweeps(results)
    # A sweep's files sit in DIR beside the case directories: no name may be taken twice.
    taken = [c.directory[len(prefix):-len(".png")] for c in cases
             for prefix in ("knee-", "sweep-")
             if c.directory.startswith(prefix) and c.directory.endswith(".png")]
    names = data.unique_names([s.name for s in swept], taken=taken)
    sweeps = []
    for s, name in zip(swept, names, strict=True):
        sweep_files = SweepFiles(s)
        for artifact in (
                plot(f"knee-{name}.png", f"sweep {s.name}: latency against IOPS, a point per "
                     "sweep value", _drawer("knee", s), f"sweep {s.name}"),
                plot(f"sweep-{name}.png", f"sweep {s.name}: headline metrics against the "
                     "point", _drawer("sweep", s), f"sweep {s.name}")):
            if artifact is not None:
                sweep_files.plots.append(artifact)
        sweeps.append(sweep_files)
    return Report(cases, sweeps, figures is None)
