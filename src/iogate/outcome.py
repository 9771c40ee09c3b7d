"""The outcome of one case: what happened (exactly one outcome), its checks and metrics,
and how it is written in the results document.

Front ends, reports and plugins read a :class:`CaseResult`; nothing here runs or judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iogate.expect import Check, explain
from iogate.ids import case_id
from iogate.metrics import DIRECTIONS
from iogate.results import Interval, RunResult

if TYPE_CHECKING:  # a result holds its case; reading one needs no suite models
    from iogate.spec import Case

# The version of the results document (``--json``): what a case and the document around it
# hold. Changed whenever a reader of an older document would misread the new one.
SCHEMA_VERSION = 1

OUTCOMES = ("passed", "failed", "error", "interrupted", "crashed", "skipped")


# What per_host expectations call this machine when a case runs on it alone.
LOCAL_HOST = "localhost"


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
    samples: dict[str, list[float]] = field(default_factory=dict)  # per repeat, when repeated
    environment: dict[str, object] = field(default_factory=dict)  # facts about the target
    steady: SteadyRounds | None = None
    hosts: dict[str, dict[str, float]] = field(default_factory=dict)  # fleet: each host's metrics
    # Every run's interval series (each repeat or steady-state round, in order): per job, per
    # measured direction. ``run`` is the last of them.
    run_series: list[list[dict[str, list[Interval]]]] = field(default_factory=list)
    # per run: the block devices' statistics per interval (RunResult.disk_series)
    run_disks: list[list[dict[str, Any]]] = field(default_factory=list)
    # The metrics of the baseline entry the case was judged against (medians when that entry
    # was repeated); empty when none was. Reports draw them beside this run's.
    baseline: dict[str, float] = field(default_factory=dict)

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
            "samples": self.samples,
            "environment": self.environment,
            "steady_state": self.steady.to_json() if self.steady else None,
            "requested": self.requested,
            "warnings": self.warnings,
            "series": self.series(),
            "hosts": self.hosts,
            "spread": host_spread(self.hosts),
        }

    def series(self) -> list[dict[str, Any]]:
        """Per run (repeat or round, from 1), per job, per measured direction: the interval
        series (IOPS, bandwidth, latency). An interval holds scalars only: its fields are
        copied as they are, as DirectionResult.to_json does, not deep-copied."""
        out: list[dict[str, Any]] = [
            {"repeat": n, "jobs": [{name: [vars(iv).copy() for iv in intervals]
                                    for name, intervals in job.items()} for job in jobs]}
            for n, jobs in enumerate(self.run_series, 1)]
        for entry, disk in zip(out, self.run_disks, strict=False):
            if disk:
                entry["disk"] = disk  # per interval: its end and what each device did
        return out


@dataclass
class SteadyRounds:
    """The rounds of a steady-state case: the tracked metric per round and the verdict."""

    metric: str
    values: list[float]
    steady: bool
    window_start: int | None
    window: int
    on_unsteady: str

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "rounds": self.values, "steady": self.steady,
                "window_start": self.window_start, "window": self.window}


def series_of(run: RunResult) -> list[dict[str, list[Interval]]]:
    """A run's interval series: per job, per direction that did I/O."""
    return [{name: list(job.direction(name).series) for name in DIRECTIONS
             if job.direction(name).ios} for job in run.jobs]


# Metrics whose spread over the hosts of a fleet the results show.
SPREAD_METRICS = ("total.iops", "total.bw", "read.iops", "write.iops", "read.clat.p99",
                  "write.clat.p99")


def host_spread(hosts: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, Any]]:
    """For each headline metric measured on every host: the lowest and highest host and how
    far apart they are, in percent of the highest. Empty without a fleet."""
    out: dict[str, dict[str, Any]] = {}
    for path in SPREAD_METRICS:
        values = {h: m[path] for h, m in hosts.items() if path in m}
        if len(values) < 2 or len(values) != len(hosts):
            continue
        low = min(values, key=values.__getitem__)
        high = max(values, key=values.__getitem__)
        top = values[high]
        out[path] = {"min": values[low], "min_host": low, "max": top, "max_host": high,
                     "spread_pct": 100.0 * (top - values[low]) / top if top else 0.0}
    return out


def check_to_json(case: Case, check: Check) -> dict[str, Any]:
    e = check.expectation
    return {
        "metric": e.key,
        "host": check.host,
        "expected": e.describe(),
        "threshold": check.threshold,
        "observed": check.observed,
        "intervals": check.intervals,
        "skipped_intervals": check.skipped if check.intervals is not None else None,
        "passed": check.passed,
        "judged": check.judged,
        "reason": check.reason,
        "line": e.line,
        "optional": e.optional,
        "evidence": check.evidence.to_json() if check.evidence is not None else None,
        "why": explain(check) or None,
    }
