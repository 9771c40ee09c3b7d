"""Running one case: lower its workload to engine job specs, run it, judge its expectations.

This module is the seam between the suite language (``iogate.spec``), the engine
(``iogate.engine``) and the verdicts (``iogate.expect``). Front ends (the CLI and the
pytest plugin) call :func:`run_case` and render the :class:`CaseResult` it returns.
"""

from __future__ import annotations

import contextlib
import fnmatch
import math
import os
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iogate import environment, hooks, interrupts, stats
from iogate.backends import Engine
from iogate.baseline import Baseline
from iogate.baseline import Choice as BaselineChoice
from iogate.baseline import Entry as BaselineEntry
from iogate.engine.isolated import (
    EngineAborted,
    EngineCrashed,
    EngineFault,
    SeriesSource,
    run,
)
from iogate.errors import EngineError, TargetError
from iogate.expect import (
    Check,
    Expectation,
    evaluate,
    evaluate_window,
    format_value,
    tally_window,
)
from iogate.job import JobSpec
from iogate.lower import lower, lower_step
from iogate.metrics import DIRECTIONS, MetricPath, parse_metric
from iogate.realized import realized_warnings, requested
from iogate.results import (
    Interval,
    LatencyStats,
    Progress,
    RunResult,
    interval_spans,
    interval_values,
    intervals_due,
)
from iogate.spec import Case
from iogate.spec.models import SteadyState
from iogate.targets import Guard, Policy, guard

OUTCOMES = ("passed", "failed", "error", "interrupted", "crashed", "skipped")

ProgressCallback = Callable[[Progress], None]

# Test only: the engine crashes while running the cases whose id matches this glob, so that
# tests can prove a crash becomes a `crashed` case and the run goes on.
TEST_CRASH_ENV = "IOGATE_TEST_CRASH"
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
        return [{"repeat": n, "jobs": [{name: [vars(iv).copy() for iv in intervals]
                                        for name, intervals in job.items()} for job in jobs]}
                for n, jobs in enumerate(self.run_series, 1)]


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


def case_id(case: Case) -> str:
    return f"{case.path.name}::{case.id}"


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
    }


def expected_bytes(cases: Sequence[Case]) -> int | None:
    """Bytes a run that ends by size will move, for progress; None when one ends by time."""
    if any(c.workload.time_based for c in cases):
        return None
    return sum(c.workload.size * c.workload.numjobs for c in cases)


def seed_for(case: Case) -> int:
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
                    with interrupts.deferred():  # made and remembered, or neither
                        scratch = tempfile.mkdtemp(prefix="iogate-", dir=scratch_dir())
                out.append([os.path.join(scratch, f"{case.id}.data")])
        yield out
    finally:
        if scratch:
            with interrupts.deferred():  # an interrupt does not leave half of it behind
                shutil.rmtree(scratch, ignore_errors=True)


@dataclass(frozen=True)
class Gate:
    """How verdicts that refer to a baseline are reached: the loaded baseline, the facts the
    entries judged against must have (``--baseline-match``), and the significance and
    minimum effect of a regression: a change from the baseline smaller than the minimum
    effect never fails, and with repeated samples on both sides only a significant one does
    (so a real regression fails and noise does not)."""

    baseline: Baseline | None = None
    alpha: float = 0.05
    min_effect_pct: float = 5.0
    # Recording the baseline (alone, or into the file judged against): expectations that
    # refer to a baseline entry not recorded yet are not judged (shown as such), instead of
    # refusing the run.
    recording: bool = False
    match: Mapping[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse settings that cannot judge anything: ValueError, or BaselineMatchError
        when no entry of the baseline has the facts ``match`` asks for."""
        if not 0 < self.alpha < 1:
            raise ValueError(f"the significance {self.alpha:g} is not strictly between 0 "
                             "and 1 (--alpha; pytest: --iogate-alpha)")
        if not 0 <= self.min_effect_pct < math.inf:
            raise ValueError(f"the minimum effect {self.min_effect_pct:g}% is not a percentage "
                             ">= 0 (--min-effect; pytest: --iogate-min-effect)")
        if self.baseline is not None:
            self.baseline.select(self.match)

    def check(self, cases: Sequence[Case]) -> None:
        """Before anything runs: refuse cases that refer to the baseline and have no entry
        in it with the facts asked for, whatever the environment (BaselineMatchError)."""
        if self.baseline is None or self.recording:
            return
        for case in cases:
            if needs_baseline([case]):
                self.baseline.require(case_id(case), self.match)

    def choose(self, case: Case, env: Mapping[str, object]) -> BaselineChoice | None:
        """The baseline entry ``case`` is judged against in ``env``; None when the case
        refers to no baseline, or none is loaded, or it is being recorded and has no entry
        yet. Raises BaselineMatchError when no entry fits or several fit equally."""
        if self.baseline is None or not needs_baseline([case]):
            return None
        if self.recording and not self.baseline.candidates(case_id(case), self.match):
            return None
        return self.baseline.choose(case_id(case), env, self.match)


def needs_baseline(cases: Sequence[Case]) -> list[str]:
    """Where the suites refer to ``baseline`` (``file:line: metric``), to refuse a run
    without one before anything runs."""
    return [f"{c.path}:{e.line or c.line}: {case_id(c)}: {e.key}" for c in cases
            for e in c.expectations if "baseline" in e.names]


def run_cases(
    cases: Sequence[Case],
    *,
    filename: str | None = None,
    on_progress: ProgressCallback | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_phase: Callable[[str], None] | None = None,
    gate: Gate | None = None,
    safety: Policy | None = None,
    engine: Engine = run,
    on_wait: Callable[[str], None] | None = None,
) -> list[CaseResult]:
    """Run cases that belong together (one group, or a single case) and judge each.

    Each case's precondition steps run first, one after another, unmeasured; then every case
    runs in one engine session (one job per case), ``repeat`` times, or in rounds until
    steady. Never raises for engine or I/O errors: they become outcomes. ``filename``
    overrides every target (``--filename``). ``safety`` is what the command line allows
    (``--allow-destructive``); targets are checked by :mod:`iogate.targets` first, held for
    the run (``on_wait`` is told when another iogate process holds one and the run waits),
    and every engine session is pinned to the files checked.
    ``engine`` runs the job specs: the native engine in a child process by default, or
    another backend (:mod:`iogate.backends`).
    """
    gate = gate or Gate()
    pm = hooks.get_plugin_manager()
    started = time.monotonic()
    for case in cases:
        pm.hook.iogate_case_start(case=case)

    def finish(results: list[CaseResult]) -> list[CaseResult]:
        for result in results:
            pm.hook.iogate_case_end(case=result.case, result=result)
        return results

    def failed(outcome: str, error: str, targets: list[list[str]],
               partial: dict[str, float] | None = None) -> list[CaseResult]:
        # Partial counts are of the whole session: they belong to the case alone when it ran
        # alone, and are not split among the cases of a group.
        metrics = dict(partial or {}) if len(cases) == 1 else {}
        return finish([CaseResult(c, outcome, error=error, target=_target_text(t),
                                  duration_s=time.monotonic() - started, metrics=metrics)
                       for c, t in zip(cases, targets, strict=True)])

    stack = contextlib.ExitStack()
    with _targets(cases, filename) as targets:
        if gate.baseline is None and not gate.recording and needs_baseline(cases):
            return failed("error", "an expectation refers to baseline, but no baseline is "
                          "loaded: pass --baseline FILE (pytest: --iogate-baseline FILE)",
                          targets)
        try:
            held = stack.enter_context(guard(cases, targets, safety or Policy(), on_wait))
            envs = [environment.capture(files[0] if files else None) for files in targets]
            # Before anything runs: a case without a baseline entry to judge it against, or
            # with several equally close, is the caller's to settle (BaselineMatchError).
            choices = [gate.choose(c, env) for c, env in zip(cases, envs, strict=True)]
            for case, files in zip(cases, targets, strict=True):
                steps = list(case.preconditions)
                for i, step in enumerate(steps, 1):
                    for loop in range(step.loops):
                        if on_phase is not None:
                            on_phase(f"precondition {i}/{len(steps)}"
                                     + (f" pass {loop + 1}/{step.loops}" if step.loops > 1 else ""))
                        spec = lower_step(step, filenames=files, seed=seed_for(case) + i)
                        pre = engine([_pinned(spec, held)], on_progress=on_progress,
                                     should_stop=should_stop)
                        if pre.interrupted:
                            return failed("interrupted", "interrupted during a precondition",
                                          targets)
                        error = _io_error(pre)
                        if error:
                            return failed("error", f"precondition step {i}: {error}", targets)
            specs = [_pinned(_spec_for(c, files), held)
                     for c, files in zip(cases, targets, strict=True)]
            steady = next((c.steady_state for c in cases if c.steady_state), None)
            if steady is not None:
                runs, rounds = _rounds_until_steady(engine, steady, specs, on_progress,
                                                    should_stop, on_phase)
            else:
                runs, rounds = _repeats(engine, max(c.repeat for c in cases), specs,
                                        on_progress, should_stop, on_phase,
                                        _fail_fast(cases, specs)), None
        except EngineCrashed as exc:
            return failed("crashed", str(exc), targets, exc.partial.metrics())
        except EngineFault as exc:
            return failed("error", str(exc), targets, exc.partial.metrics())
        except EngineAborted as exc:
            return failed("interrupted", "aborted by a second interrupt: the engine was "
                          "killed, only the counts seen so far are kept", targets,
                          exc.partial.metrics())
        except (EngineError, TargetError) as exc:
            return failed("error", str(exc), targets)
        except KeyboardInterrupt:
            return failed("interrupted", "interrupted before the run started", targets)
        finally:
            stack.close()  # the exclusive opens of written block devices end with the run
        duration = time.monotonic() - started
        try:
            judged = [_judge(case, [r.job_result(i) for r in runs], duration,
                             _target_text(files), env, gate, rounds, choice)
                      for i, (case, files, env, choice) in enumerate(
                          zip(cases, targets, envs, choices, strict=True))]
        except KeyboardInterrupt:
            return failed("interrupted", "interrupted while its results were judged", targets)
        return finish(judged)


def _pinned(spec: JobSpec, held: Guard) -> JobSpec:
    """The spec with its files as they were checked: the engine opens those very files."""
    if not spec.files():
        return spec
    paths, ids = held.pins(spec.files())
    return replace(spec, filenames=paths, file_ids=ids)


def _spec_for(case: Case, files: list[str]) -> JobSpec:
    spec = lower(case.workload, filenames=files, seed=seed_for(case))
    # The series is cut at the interval the windowed expectations judge (the loader made
    # sure they agree on one).
    window = next((e.window for e in case.expectations if e.window is not None), None)
    if window is not None:
        spec = replace(spec, interval_ns=window.interval_ns)
    crash = os.environ.get(TEST_CRASH_ENV)
    if crash and fnmatch.fnmatchcase(case_id(case), crash):
        spec = replace(spec, test_crash=True)
    return spec


def _fail_fast(cases: Sequence[Case], specs: Sequence[JobSpec]
               ) -> Callable[[SeriesSource], str | None] | None:
    """A judge of the run as it goes, for cases with ``fail_fast``: the reason to stop once
    a windowed expectation can no longer be met over the planned intervals of a time-based
    run (expectations that need the whole run, such as ``mean``, wait for its end)."""
    watched = []
    for i, (case, spec) in enumerate(zip(cases, specs, strict=True)):
        if not case.fail_fast or not spec.time_based or not spec.runtime_ns:
            continue
        planned = -(-spec.runtime_ns // spec.interval_ns)
        for e in case.expectations:
            if e.window is not None and not e.names:
                watched.append((i, case, e, e.threshold({}), planned,
                                planned - e.window.needed(planned)))
    if not watched:
        return None

    def judge(session: SeriesSource) -> str | None:
        for i, case, e, threshold, planned, allowed in watched:
            assert e.metric.scope is not None
            series = session.series(i, e.metric.scope)
            # The same rule as the verdict at the end: an interval without completions
            # fails unless nothing was due in it. Skipped ones only lower what is needed.
            failed = tally_window(e, threshold, interval_values(series, e.metric),
                                  intervals_due(specs[i], e.metric.scope, series)).failed
            if failed > allowed:
                return (f"fail_fast: {case_id(case)}: {e.key} {e.describe()} can no longer be "
                        f"met: {failed} of {planned} planned intervals failed, at most "
                        f"{allowed} may")
        return None

    return judge


def _repeats(engine: Engine, n: int, specs: list[JobSpec],
             on_progress: ProgressCallback | None,
             should_stop: Callable[[], bool] | None,
             on_phase: Callable[[str], None] | None,
             stop_when: Callable[[SeriesSource], str | None] | None) -> list[RunResult]:
    runs: list[RunResult] = []
    for i in range(n):
        if on_phase is not None:
            on_phase(f"repeat {i + 1}/{n}" if n > 1 else "")
        runs.append(engine(specs, on_progress=on_progress, should_stop=should_stop,
                           stop_when=stop_when))
        if runs[-1].interrupted or runs[-1].stopped:
            break
    return runs


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


def _rounds_until_steady(engine: Engine, steady: SteadyState, specs: list[JobSpec],
                         on_progress: ProgressCallback | None,
                         should_stop: Callable[[], bool] | None,
                         on_phase: Callable[[str], None] | None,
                         ) -> tuple[list[RunResult], SteadyRounds]:
    """Rounds of ``steady.round`` each until the last ``window`` are steady by the SNIA PTS
    rule, or ``max_rounds``; the runs judged are the steady window's (else the last window)."""
    round_specs = [replace(s, runtime_ns=steady.round, time_based=True) for s in specs]
    runs: list[RunResult] = []
    values: list[float] = []
    verdict = None
    for i in range(steady.max_rounds):
        if on_phase is not None:
            on_phase(f"round {i + 1}/{steady.max_rounds}")
        result = engine(round_specs, on_progress=on_progress, should_stop=should_stop)
        runs.append(result)
        if result.interrupted:
            break
        value = _tracked(result, steady.metric)
        values.append(float("nan") if value is None else value)
        verdict = stats.steady_state(values, window=steady.window, range_pct=steady.range_pct,
                                     slope_pct=steady.slope_pct)
        if verdict.steady:
            break
    start = verdict.window_start if verdict is not None else None
    judged = runs[start:start + steady.window] if start is not None else runs
    rounds = SteadyRounds(steady.metric, values, bool(verdict and verdict.steady), start,
                          steady.window, steady.on_unsteady)
    return judged, rounds


def _tracked(result: RunResult, metric: str) -> float | None:
    """The steady-state metric of one round; ``total.<lat>.pNN`` merges both directions."""
    scope, _, rest = metric.partition(".")
    if scope == "total" and rest.split(".")[0] in ("slat", "clat", "lat", "resp", "lag"):
        kind, _, stat = rest.partition(".")
        merged = LatencyStats.merged([result.latency("read", kind),
                                      result.latency("write", kind)])
        return merged.stat(parse_metric(f"read.{kind}.{stat}"))
    return result.metric(metric)


def run_case(case: Case, **kwargs: Any) -> CaseResult:
    """Run one case on its own (its group, if any, is ignored)."""
    return run_cases([case], **kwargs)[0]


def _target_text(files: list[str]) -> str | None:
    return ", ".join(files) if files else None


def _statistic(values: Sequence[float], stat: str) -> float:
    spread = stats.summary(values)
    return {"median": spread.median, "min": spread.min, "max": spread.max,
            "mean": spread.mean, "cv": spread.cv_pct}[stat]


@dataclass
class WindowSeries:
    """What a windowed expectation judges: per interval, over every run of a case, the
    metric's value (None: no completions), the requests the schedule asked for in it, and
    its span for messages (prefixed with the run when the case repeated)."""

    values: list[float | None] = field(default_factory=list)
    due: list[float] = field(default_factory=list)
    spans: list[str] = field(default_factory=list)


def _window_series(runs: Sequence[RunResult], metric: MetricPath) -> WindowSeries:
    assert metric.scope is not None
    out = WindowSeries()
    for n, r in enumerate(runs, 1):
        for j, job in enumerate(r.jobs):
            series = job.direction(metric.scope).series
            spec = r.specs[j] if j < len(r.specs) else None
            out.values += interval_values(series, metric)
            out.due += intervals_due(spec, metric.scope, series)
            out.spans += [f"run {n}: {s}" if len(runs) > 1 else s
                          for s in interval_spans(series)]
    return out


def _judge(case: Case, runs: list[RunResult], duration: float, target: str | None,
           env: dict[str, object], gate: Gate, rounds: SteadyRounds | None,
           choice: BaselineChoice | None) -> CaseResult:
    result = runs[-1]
    metrics, samples = _measured(case, runs, case.expectations)
    entry = choice.entry if choice is not None else None
    checks = [_check(e, runs, metrics, samples, entry, gate) for e in case.expectations]
    hosts = _per_host(case, runs)
    for host, (host_runs, host_metrics, host_samples) in hosts.items():
        for e in case.per_host_expectations:
            check = _check(e, host_runs, host_metrics, host_samples, None, gate)
            checks.append(replace(check, host=host))
    error = next((e for e in map(_io_error, runs) if e), None)
    if any(r.interrupted for r in runs):
        outcome = "interrupted"
    elif error:
        outcome = "error"  # an I/O error is never a pass
    elif any(r.stopped for r in runs):
        outcome = "failed"  # stopped on purpose: an expectation could no longer be met
        error = next(r.stopped for r in runs if r.stopped)
    elif rounds is not None and not rounds.steady:
        outcome = "skipped" if rounds.on_unsteady == "skip" else "failed"
        error = (f"not steady after {len(rounds.values)} round(s) of {rounds.metric} "
                 f"(SNIA PTS window of {rounds.window})")
    elif all(c.passed for c in checks):
        outcome = "passed"
    else:
        outcome = "failed"
    warnings = _realized(runs)
    if choice is not None and choice.warning():
        warnings.append(f"baseline: {choice.warning()}")
    return CaseResult(case, outcome, checks=checks, metrics=metrics, error=error,
                      duration_s=duration, target=target, run=result, warnings=warnings,
                      requested=requested(result.specs), samples=samples,
                      environment=environment.target_facts(env), steady=rounds,
                      hosts={h: m for h, (_, m, _) in hosts.items() if h != LOCAL_HOST},
                      run_series=[series_of(r) for r in runs])


def _realized(runs: Sequence[RunResult]) -> list[str]:
    """Where the workload ran differs from what it asked; on a fleet, judged per host (each
    was asked for the whole workload), the host named."""
    out: set[str] = set()
    for r in runs:
        if r.hosts:
            out |= {f"{key}: {w}" for key, host in r.hosts.items()
                    for w in realized_warnings(host.specs, host)}
        else:
            out |= set(realized_warnings(r.specs, r))
    return sorted(out)


def _measured(case: Case, runs: Sequence[RunResult], expectations: Sequence[Expectation]
              ) -> tuple[dict[str, float], dict[str, list[float]]]:
    """The metrics of a case over its runs (medians when repeated) and, when repeated, the
    value of each run."""
    extra = [e.metric.text for e in expectations]
    per_run = []
    for r in runs:
        m = r.metrics(extra)
        m.update(hooks.collect_metrics(case, r, m))
        per_run.append(m)
    if len(per_run) == 1:
        return per_run[0], {}
    samples = {k: [m[k] for m in per_run] for k in per_run[0] if all(k in m for m in per_run)}
    return {k: stats.median(v) for k, v in samples.items()}, samples


def _per_host(case: Case, runs: Sequence[RunResult]
              ) -> dict[str, tuple[list[RunResult], dict[str, float], dict[str, list[float]]]]:
    """Each host's runs and metrics, keyed "host:port". A run on this machine is one host,
    LOCAL_HOST, so that ``per_host`` expectations judge it too."""
    keys = sorted({k for r in runs for k in r.hosts})
    if not keys:
        if not case.per_host_expectations:
            return {}
        metrics, samples = _measured(case, runs, case.per_host_expectations)
        return {LOCAL_HOST: (list(runs), metrics, samples)}
    out = {}
    for key in keys:
        host_runs = [r.hosts[key] for r in runs if key in r.hosts]
        metrics, samples = _measured(case, host_runs, case.per_host_expectations)
        out[key] = (host_runs, metrics, samples)
    return out


def _check(e: Expectation, runs: list[RunResult], metrics: Mapping[str, float],
           samples: Mapping[str, list[float]], entry: BaselineEntry | None,
           gate: Gate) -> Check:
    path = e.metric.text
    names: dict[str, float] = {}
    if "baseline" in e.names and entry is not None:
        old = entry.samples(path)
        if old:
            names["baseline"] = _statistic(old, e.stat)
    if "baseline" in e.names and entry is None and gate.recording:
        return Check(e, None, True, "not judged: recording the baseline", judged=False)
    if e.window is not None:
        series = _window_series(runs, e.metric)
        return evaluate_window(e, series.values, metrics.get(path), names=names,
                               due=series.due, spans=series.spans)
    values = samples.get(path) or ([metrics[path]] if path in metrics else [])
    check = evaluate(e, _statistic(values, e.stat) if values else None, names=names)
    if check.passed or "baseline" not in names:
        return check
    small = _within_min_effect(e, check, names, gate.min_effect_pct)
    if small:
        return replace(check, passed=True, reason=f"{check.reason}, but {small}")
    if e.stat not in ("median", "mean"):
        return check
    # Below the threshold: with enough repeats on both sides, only a significant difference
    # fails the gate, so noise does not flap it. Too few samples: the threshold decides.
    old = entry.samples(path) if entry is not None else []
    if min(len(old), len(values)) >= 2 and stats.smallest_p_value(len(old), len(values)) \
            <= gate.alpha:
        _, p = stats.mann_whitney_u(old, values)
        n = f"n={len(old)}+{len(values)}"
        if p > gate.alpha:
            return replace(check, passed=True, reason=f"{check.reason}, but not significantly "
                           f"(p={p:.3f} > {gate.alpha}, {n}): within noise")
        return replace(check, reason=f"{check.reason} (significant: p={p:.3f}, {n})")
    return check


def _within_min_effect(e: Expectation, check: Check, names: Mapping[str, float],
                       min_effect_pct: float) -> str | None:
    """Why a failed check against the baseline is no regression, if it is not: its value
    differs from the baseline's by less than the minimum effect, and the baseline's value
    itself meets the expectation (so the expectation bounds a regression; one that asks for
    an improvement is not met by a value that barely moved)."""
    observed, old = check.observed, names["baseline"]
    if observed is None or math.isnan(observed) or not evaluate(e, old, names=names).passed:
        return None
    change = stats.effect_pct(old, observed)
    if abs(change) >= min_effect_pct:
        return None
    return (f"within the minimum effect: {change:+.1f}% from the baseline's "
            f"{format_value(e.kind, old)} is less than the minimum effect, {min_effect_pct:g}%")


def _io_error(result: RunResult) -> str | None:
    """Why a run cannot pass whatever it measured: an I/O error, or data that did not verify."""
    for job_index, job in enumerate(result.jobs):
        v = job.verify
        if v is not None and v.failures:
            kinds = ", ".join(f"{n} {k}" for k, n in v.by_kind.items() if n)
            first = f"; first: {v.records[0].describe()}" if v.records else ""
            return (f"verification failed in job {job_index}: {v.failures} of "
                    f"{v.blocks_checked} block(s) read back ({kinds}){first}")
        for direction in ("read", "write", "sync"):
            d = getattr(job, direction)
            if d.errors:
                files = (result.specs[job_index].files()
                         if job_index < len(result.specs) else [])
                return (f"{d.errors} {direction} error(s) in job {job_index}; first: "
                        f"{d.describe_first_error(files)}, "
                        f"{d.first_error_ns / 1e9:.3f} s into the run")
    return None
