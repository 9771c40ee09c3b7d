"""Running one case: lower its workload to engine job specs, run it, judge its expectations.

This module is the seam between the suite language (``iogate.spec``), the engine
(``iogate.engine``) and the verdicts (``iogate.expect``). Front ends (the CLI and the
pytest plugin) call :func:`run_case` and render the :class:`CaseResult` it returns.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iogate.engine.session import Progress, run
from iogate.errors import EngineError
from iogate.expect import Check, evaluate
from iogate.lower import lower, lower_step
from iogate.metrics import DIRECTIONS
from iogate.realized import realized_warnings, requested
from iogate.results import RunResult
from iogate.spec import Case

OUTCOMES = ("passed", "failed", "error", "interrupted")

ProgressCallback = Callable[[Progress], None]


@dataclass
class CaseResult:
    """What happened to one case: exactly one outcome, the checks, the measured metrics."""

    case: Case
    outcome: str
    checks: list[Check] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    duration_s: float = 0.0
    target: str | None = None
    run: RunResult | None = None
    warnings: list[str] = field(default_factory=list)  # realized workload differs from asked
    requested: dict[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return case_id(self.case)

    @property
    def failed_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "suite": self.case.suite_name,
            "file": str(self.case.path),
            "line": self.case.line,
            "outcome": self.outcome,
            "error": self.error,
            "duration_s": round(self.duration_s, 6),
            "target": self.target,
            "workload": self.case.workload.model_dump(mode="json"),
            "checks": [check_to_json(self.case, c) for c in self.checks],
            "metrics": self.metrics,
            "requested": self.requested,
            "warnings": self.warnings,
            "series": self.series(),
        }

    def series(self) -> list[dict[str, list[dict[str, Any]]]]:
        """Per job, per measured direction: the interval series (IOPS, bandwidth, latency)."""
        if self.run is None:
            return []
        return [{name: [asdict(iv) for iv in getattr(job, name).series]
                 for name in DIRECTIONS if getattr(job, name).ios}
                for job in self.run.jobs]


def case_id(case: Case) -> str:
    return f"{case.path.name}::{case.id}"


def check_to_json(case: Case, check: Check) -> dict[str, Any]:
    metric = check.expectation.metric.text
    line = case.source_lines.get(metric)
    return {
        "metric": metric,
        "expected": check.expectation.describe(),
        "observed": check.observed,
        "passed": check.passed,
        "reason": check.reason,
        "line": line[0] if line else None,
    }


def expected_bytes(cases: Sequence[Case]) -> int | None:
    """Bytes a run that ends by size will move, for progress; None when one ends by time."""
    if any(c.workload.time_based for c in cases):
        return None
    return sum(c.workload.size * c.workload.numjobs for c in cases)


def _seed_for(case: Case) -> int:
    # Stable across runs for the same case, different between cases.
    return zlib.crc32(f"{case.suite_name}/{case.id}".encode()) or 1


def scratch_dir() -> str:
    """Where a workload without a filename gets its temporary file.

    ``IOGATE_TMPDIR`` wins; otherwise /var/tmp, which is disk-backed on common systems
    (``/tmp`` is often tmpfs, where O_DIRECT is refused), then the platform default.
    """
    for candidate in (os.environ.get("IOGATE_TMPDIR"), "/var/tmp", tempfile.gettempdir()):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return candidate
    return tempfile.gettempdir()


def plan(cases: Sequence[Case]) -> list[list[Case]]:
    """Cases in the order they run: each alone (fio's stonewall), except that cases sharing a
    ``group`` within a suite run together, at the place of the group's first case."""
    units: list[list[Case]] = []
    by_group: dict[tuple[Path, str], list[Case]] = {}
    for case in cases:
        if case.group is None:
            units.append([case])
            continue
        key = (case.path, case.group)
        if key not in by_group:
            by_group[key] = []
            units.append(by_group[key])
        by_group[key].append(case)
    return units


@contextlib.contextmanager
def _targets(cases: Sequence[Case], override: str | None) -> Iterator[list[list[str]]]:
    """The files of each case: ``--filename`` if given, else the suite's, else a temporary
    file (removed afterwards). The null engine needs none."""
    scratch: str | None = None
    out: list[list[str]] = []
    try:
        for case in cases:
            w = case.workload
            if w.ioengine == "null":
                out.append([])
            elif override:
                out.append([override])
            elif w.filename:
                out.append([w.filename] if isinstance(w.filename, str) else list(w.filename))
            else:
                if scratch is None:
                    scratch = tempfile.mkdtemp(prefix="iogate-", dir=scratch_dir())
                out.append([os.path.join(scratch, f"{case.id}.data")])
        yield out
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


def run_cases(
    cases: Sequence[Case],
    *,
    filename: str | None = None,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> list[CaseResult]:
    """Run cases that belong together (one group, or a single case) and judge each.

    Each case's precondition steps run first, one after another, unmeasured; then every case
    runs in one engine session (one job per case). Never raises for engine or I/O errors:
    they become outcomes. ``filename`` overrides every target (``--filename``).
    """
    started = time.monotonic()

    def failed(outcome: str, error: str, targets: list[list[str]]) -> list[CaseResult]:
        return [CaseResult(c, outcome, error=error, target=_target_text(t),
                           duration_s=time.monotonic() - started)
                for c, t in zip(cases, targets, strict=True)]

    with _targets(cases, filename) as targets:
        try:
            for case, files in zip(cases, targets, strict=True):
                steps = list(case.preconditions)
                for i, step in enumerate(steps, 1):
                    for loop in range(step.loops):
                        if on_phase is not None:
                            on_phase(f"precondition {i}/{len(steps)}"
                                     + (f" pass {loop + 1}/{step.loops}" if step.loops > 1 else ""))
                        pre = run([lower_step(step, filenames=files, seed=_seed_for(case) + i)],
                                  on_progress=on_progress, should_stop=should_stop)
                        if pre.interrupted:
                            return failed("interrupted", "interrupted during a precondition",
                                          targets)
                        error = _io_error(pre)
                        if error:
                            return failed("error", f"precondition step {i}: {error}", targets)
            if on_phase is not None:
                on_phase("")
            specs = [lower(c.workload, filenames=files, seed=_seed_for(c))
                     for c, files in zip(cases, targets, strict=True)]
            result = run(specs, on_progress=on_progress, should_stop=should_stop)
        except EngineError as exc:
            return failed("error", str(exc), targets)
        except KeyboardInterrupt:
            return failed("interrupted", "interrupted before the run started", targets)
        duration = time.monotonic() - started
        return [_judge(case, result.job_result(i), duration, _target_text(files))
                for i, (case, files) in enumerate(zip(cases, targets, strict=True))]


def run_case(case: Case, **kwargs: Any) -> CaseResult:
    """Run one case on its own (its group, if any, is ignored)."""
    return run_cases([case], **kwargs)[0]


def _target_text(files: list[str]) -> str | None:
    return ", ".join(files) if files else None


def _judge(case: Case, result: RunResult, duration: float, target: str | None) -> CaseResult:
    extra = [e.metric.text for e in case.expectations]
    metrics = result.metrics(extra)
    checks = [evaluate(e, result.metric(e.metric)) for e in case.expectations]
    error = _io_error(result)
    if result.interrupted:
        outcome = "interrupted"
    elif error:
        outcome = "error"  # an I/O error is never a pass
    elif all(c.passed for c in checks):
        outcome = "passed"
    else:
        outcome = "failed"
    return CaseResult(case, outcome, checks=checks, metrics=metrics, error=error,
                      duration_s=duration, target=target, run=result,
                      warnings=realized_warnings(result.specs, result),
                      requested=requested(result.specs))


def _io_error(result: RunResult) -> str | None:
    for job_index, job in enumerate(result.jobs):
        for direction in ("read", "write", "sync"):
            d = getattr(job, direction)
            if d.errors:
                return (f"{d.errors} {direction} error(s) in job {job_index}; first: "
                        f"{os.strerror(d.first_errno)} (errno {d.first_errno}) "
                        f"at offset {d.first_error_offset}")
    return None
