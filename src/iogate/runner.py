"""Running one case: lower its workload to engine job specs, run it, judge its expectations.

This module is the seam between the suite language (``iogate.spec``), the engine
(``iogate.engine``) and the verdicts (``iogate.expect``). Front ends (the CLI and the
pytest plugin) call :func:`run_case` and render the :class:`CaseResult` it returns.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from iogate.engine.session import JobSpec, Progress, run
from iogate.errors import EngineError
from iogate.expect import Check, evaluate
from iogate.metrics import DIRECTIONS
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


def expected_bytes(case: Case) -> int | None:
    """Bytes a run that ends by size will move, for progress; None when it ends by time."""
    w = case.workload
    return None if w.time_based else w.size * w.numjobs


def _seed_for(case: Case) -> int:
    # Stable across runs for the same case, different between cases.
    return zlib.crc32(f"{case.suite_name}/{case.id}".encode()) or 1


def lower(case: Case, filename: str) -> JobSpec:
    """Translate a validated workload into the engine's job spec."""
    w = case.workload
    mixed = w.rw in ("rw", "randrw")
    return JobSpec(
        engine=w.ioengine,
        rw=w.rw,
        bs_read=w.bs.read,
        bs_write=w.bs.write,
        iodepth=w.iodepth,
        numjobs=w.numjobs,
        size=w.size,
        offset=w.offset,
        runtime_ns=w.runtime or 0,
        ramp_ns=w.ramp_time or 0,
        time_based=w.time_based,
        direct=w.direct,
        rwmixread=(w.rwmixread if w.rwmixread is not None else 50) if mixed else 100,
        filename=filename,
        seed=_seed_for(case),
    )


def scratch_dir() -> str:
    """Where a workload without a filename gets its temporary file.

    ``IOGATE_TMPDIR`` wins; otherwise /var/tmp, which is disk-backed on common systems
    (``/tmp`` is often tmpfs, where O_DIRECT is refused), then the platform default.
    """
    for candidate in (os.environ.get("IOGATE_TMPDIR"), "/var/tmp", tempfile.gettempdir()):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return candidate
    return tempfile.gettempdir()


def run_case(
    case: Case,
    *,
    filename: str | None = None,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> CaseResult:
    """Run one case and judge it. Never raises for engine or I/O errors: they become outcomes.

    ``filename`` overrides the workload's target (``--filename``). A workload without any
    target runs on a temporary file that is removed afterwards.
    """
    started = time.monotonic()
    target = filename or case.workload.filename
    scratch: str | None = None
    if case.workload.ioengine == "null":
        target = target or ""
    elif not target:
        scratch = tempfile.mkdtemp(prefix="iogate-", dir=scratch_dir())
        target = os.path.join(scratch, f"{case.id}.data")
    try:
        try:
            result = run([lower(case, target)], on_progress=on_progress, should_stop=should_stop)
        except EngineError as exc:
            return CaseResult(case, "error", error=str(exc), target=target or None,
                              duration_s=time.monotonic() - started)
        except KeyboardInterrupt:
            return CaseResult(case, "interrupted", error="interrupted before the run started",
                              target=target or None, duration_s=time.monotonic() - started)
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)

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
                      duration_s=time.monotonic() - started, target=target or None, run=result)


def _io_error(result: RunResult) -> str | None:
    for job_index, job in enumerate(result.jobs):
        for direction in ("read", "write"):
            d = getattr(job, direction)
            if d.errors:
                return (f"{d.errors} {direction} error(s) in job {job_index}; first: "
                        f"{os.strerror(d.first_errno)} (errno {d.first_errno}) "
                        f"at offset {d.first_error_offset}")
    return None
