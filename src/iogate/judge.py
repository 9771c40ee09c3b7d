"""Judging a case: its metrics over the runs (medians of repeats), each expectation checked
against thresholds, the baseline and the series' windows, and the outcome that follows.

:class:`Gate` holds how verdicts that refer to a baseline or to the history store are
reached; :func:`fail_fast` judges a run while it goes, :func:`judge` when it has ended.
"""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from iogate import diskstats, environment, hooks, stats
from iogate.baseline import Baseline, BaselineError
from iogate.baseline import Choice as BaselineChoice
from iogate.baseline import Entry as BaselineEntry
from iogate.changes import Level
from iogate.expect import (
    Check,
    Expectation,
    evaluate,
    evaluate_window,
    format_value,
    tally_window,
)
from iogate.job import JobSpec
from iogate.metrics import MetricPath, parse_metric
from iogate.outcome import LOCAL_HOST, CaseResult, SteadyRounds, series_of
from iogate.plan import case_id
from iogate.realized import device_warnings, realized_warnings, requested
from iogate.results import (
    LatencyStats,
    RunResult,
    SeriesSource,
    interval_spans,
    interval_values,
    intervals_due,
)
from iogate.spec import Case


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
    # The history store that expectations referring to ``history`` are judged against.
    history: str | None = None

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

    def shown_beside(self, case: Case, env: Mapping[str, object],
                     choice: BaselineChoice | None) -> BaselineEntry | None:
        """The baseline entry reports draw beside ``case``'s results: the one it was judged
        against, else the one it would be (a case that refers to no baseline still has one
        to compare with by eye); None when none is loaded, fits, or stands out."""
        if choice is not None:
            return choice.entry
        if self.baseline is None:
            return None
        try:
            return self.baseline.choose(case_id(case), env, self.match).entry
        except BaselineError:
            return None


def needs_baseline(cases: Sequence[Case], name: str = "baseline") -> list[str]:
    """Where the suites refer to ``baseline`` (or ``name``: ``history``) as
    ``file:line: case: metric``, to refuse a run without one before anything runs."""
    return [f"{c.path}:{e.line or c.line}: {case_id(c)}: {e.key}" for c in cases
            for e in c.expectations if name in e.names]


def needs_history(cases: Sequence[Case], gate: Gate) -> str | None:
    """Why the cases cannot run with this gate because they refer to ``history``: no store
    is given, or change detection's libraries are missing; None when they can."""
    where = needs_baseline(cases, "history")
    if not where:
        return None
    if gate.history is None:
        return ("these expectations refer to history, but no history store is given "
                "(--history DEST; pytest: --iogate-history DEST):\n  " + "\n  ".join(where))
    from iogate.changes import ChangesError, require

    try:
        require()
    except ChangesError as exc:
        return f"{exc} (expectations refer to history:\n  " + "\n  ".join(where) + ")"
    return None


MIN_HISTORY = 5  # fewest recorded runs of a case that ``history`` is judged against


@dataclass(frozen=True)
class HistoryLevel:
    """What ``history`` is for one case and metric: the level judged against, or why
    there is none (``judged``: False when that is no failure, such as a short history)."""

    level: Level | None
    reason: str = ""
    judged: bool = True
    runs: int = 0


def history_level(store: str, cid: str, device: str, metric: str) -> HistoryLevel:
    """The level of ``metric`` for case ``cid`` on ``device`` over the runs of the store
    (:func:`iogate.changes.last_level`)."""
    from iogate.changes import last_level
    from iogate.history import HistoryError, is_url, load

    try:
        if not is_url(store) and not os.path.exists(store):
            series = {}  # made by this run's recording
        else:
            series = load(store, [metric], case_id=cid, device=device)
    except HistoryError as exc:
        return HistoryLevel(None, f"the history store cannot be read: {exc}")
    values = [p.value for points in series.values() for p in points]
    if len(values) < MIN_HISTORY:
        where = f" on {device}" if device else ""
        return HistoryLevel(None, f"not judged: the history holds {len(values)} run(s) of "
                            f"this case{where}, {MIN_HISTORY} are needed", judged=False,
                            runs=len(values))
    return HistoryLevel(last_level(values), runs=len(values))


def fail_fast(cases: Sequence[Case], specs: Sequence[JobSpec]
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


def tracked(result: RunResult, metric: str) -> float | None:
    """The steady-state metric of one round; ``total.<lat>.pNN`` merges both directions."""
    scope, _, rest = metric.partition(".")
    if scope == "total" and rest.split(".")[0] in ("slat", "clat", "lat", "resp", "lag"):
        kind, _, stat = rest.partition(".")
        merged = LatencyStats.merged([result.latency("read", kind),
                                      result.latency("write", kind)])
        return merged.stat(parse_metric(f"read.{kind}.{stat}"))
    return result.metric(metric)


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
        if metric.scope == "disk":
            # What the devices did in each interval: nothing the schedule says excuses one
            # (an idle device in a run that meant to use it is what a window catches).
            rows = diskstats.combined_intervals(r.disks, metric.name)
            out.values += [value for _, value in rows]
            out.due += [math.inf] * len(rows)
            spans = interval_spans([end for end, _ in rows])
            out.spans += [f"run {n}: {s}" if len(runs) > 1 else s for s in spans]
            continue
        for j, job in enumerate(r.jobs):
            series = job.direction(metric.scope).series
            spec = r.specs[j] if j < len(r.specs) else None
            out.values += interval_values(series, metric)
            out.due += intervals_due(spec, metric.scope, series)
            out.spans += [f"run {n}: {s}" if len(runs) > 1 else s
                          for s in interval_spans([iv.end_ns for iv in series])]
    return out


def judge(case: Case, runs: list[RunResult], duration: float, target: str | None,
           env: dict[str, object], gate: Gate, rounds: SteadyRounds | None,
           choice: BaselineChoice | None) -> CaseResult:
    result = runs[-1]
    metrics, samples, unmeasured = _measured(case, runs, case.expectations)
    entry = choice.entry if choice is not None else None
    beside = gate.shown_beside(case, env, choice)
    levels: dict[str, HistoryLevel] = {}
    if gate.history is not None:
        device = str(env.get("target.device_model") or "")
        levels = {e.metric.text: history_level(gate.history, case_id(case), device,
                                               e.metric.text)
                  for e in case.expectations if "history" in e.names}
    checks = [_check(e, runs, metrics, samples, entry, gate, unmeasured, levels)
              for e in case.expectations]
    hosts = _per_host(case, runs)
    for host, (host_runs, host_metrics, host_samples, host_unmeasured) in hosts.items():
        for e in case.per_host_expectations:
            check = _check(e, host_runs, host_metrics, host_samples, None, gate,
                           host_unmeasured)
            checks.append(replace(check, host=host))
    error = next((e for e in map(io_error, runs) if e), None)
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
                      hosts={h: m for h, (_, m, _, _) in hosts.items() if h != LOCAL_HOST},
                      run_series=[series_of(r) for r in runs],
                      run_disks=[r.disk_series() for r in runs],
                      baseline=dict(beside.metrics) if beside is not None else {})


def _realized(runs: Sequence[RunResult]) -> list[str]:
    """Where the workload ran differs from what it asked; on a fleet, judged per host (each
    was asked for the whole workload), the host named."""
    out: set[str] = set()
    for r in runs:
        if r.hosts:
            out |= {f"{key}: {w}" for key, host in r.hosts.items()
                    for w in realized_warnings(host.specs, host)
                    + device_warnings(host.specs, host)}
        else:
            out |= set(realized_warnings(r.specs, r) + device_warnings(r.specs, r))
    return sorted(out)


Measured = tuple[dict[str, float], dict[str, list[float]], dict[str, str]]


def _measured(case: Case, runs: Sequence[RunResult], expectations: Sequence[Expectation]
              ) -> Measured:
    """The metrics of a case over its runs (medians when repeated), when repeated the value
    of each run, and why a plugin could not measure one of its metrics (in any run)."""
    extra = [e.metric.text for e in expectations]
    per_run = []
    unmeasured: dict[str, str] = {}
    for r in runs:
        m = r.metrics(extra)
        values, reasons = hooks.collect_plugin_metrics(case, r, m)
        m.update(values)
        unmeasured.update(reasons)
        per_run.append(m)
    if len(per_run) == 1:
        return per_run[0], {}, unmeasured
    samples = {k: [m[k] for m in per_run] for k in per_run[0] if all(k in m for m in per_run)}
    return {k: stats.median(v) for k, v in samples.items()}, samples, unmeasured


def _per_host(case: Case, runs: Sequence[RunResult]
              ) -> dict[str, tuple[list[RunResult], dict[str, float], dict[str, list[float]],
                                   dict[str, str]]]:
    """Each host's runs and metrics, keyed "host:port". A run on this machine is one host,
    LOCAL_HOST, so that ``per_host`` expectations judge it too."""
    keys = sorted({k for r in runs for k in r.hosts})
    if not keys:
        if not case.per_host_expectations:
            return {}
        metrics, samples, unmeasured = _measured(case, runs, case.per_host_expectations)
        return {LOCAL_HOST: (list(runs), metrics, samples, unmeasured)}
    out = {}
    for key in keys:
        host_runs = [r.hosts[key] for r in runs if key in r.hosts]
        metrics, samples, unmeasured = _measured(case, host_runs, case.per_host_expectations)
        out[key] = (host_runs, metrics, samples, unmeasured)
    return out


def _check(e: Expectation, runs: list[RunResult], metrics: Mapping[str, float],
           samples: Mapping[str, list[float]], entry: BaselineEntry | None,
           gate: Gate, unmeasured: Mapping[str, str],
           levels: Mapping[str, HistoryLevel] | None = None) -> Check:
    path = e.metric.text
    names: dict[str, float] = {}
    level = (levels or {}).get(path)
    if "history" in e.names:
        if level is None or level.level is None:
            why = (level.reason if level is not None else "no history store is given"
                   if levels is not None else "history is recorded for the whole case, "
                   "not per host: refer to it outside per_host")
            return Check(e, None, level is not None and not level.judged, why,
                         judged=level is not None and level.judged)
        names["history"] = level.level.center
    if "baseline" in e.names and entry is not None:
        old = entry.samples(path)
        if old:
            names["baseline"] = _statistic(old, e.stat)
    if "baseline" in e.names and entry is None and gate.recording:
        return Check(e, None, True, "not judged: recording the baseline", judged=False)
    backend = runs[0].backend if runs else "native"
    if e.window is not None:
        series = _window_series(runs, e.metric)
        return evaluate_window(e, series.values, metrics.get(path), names=names,
                               due=series.due, spans=series.spans, backend=backend)
    values = samples.get(path) or ([metrics[path]] if path in metrics else [])
    check = evaluate(e, _statistic(values, e.stat) if values else None, names=names,
                     backend=backend, unmeasured=unmeasured.get(path))
    if check.passed or not {"baseline", "history"} & set(names):
        return check
    reference = "baseline" if "baseline" in names else "history"
    small = _within_min_effect(e, check, names, gate.min_effect_pct, reference)
    if small:
        return replace(check, passed=True, reason=f"{check.reason}, but {small}")
    if reference == "history":
        assert level is not None and level.level is not None
        return _against_history(check, level, gate.alpha)
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


def _against_history(check: Check, level: HistoryLevel, alpha: float) -> Check:
    """A failed check against ``history`` fails only when the value lies outside the
    history's own noise: Student's t prediction test against the level's runs."""
    assert level.level is not None
    n = len(level.level.values)
    observed = check.observed
    p = level.level.p_value(observed) if observed is not None else None
    if p is None:
        return check
    where = f"level of the last {n} of {level.runs} recorded runs"
    if p > alpha:
        return replace(check, passed=True, reason=f"{check.reason}, but within the history's "
                       f"noise (p={p:.3f} > {alpha}, {where})")
    return replace(check, reason=f"{check.reason} (significant against the history's noise: "
                   f"p={p:.2g}, {where})")


def _within_min_effect(e: Expectation, check: Check, names: Mapping[str, float],
                       min_effect_pct: float, reference: str = "baseline") -> str | None:
    """Why a failed check against the baseline (or the history) is no regression, if it is
    not: its value differs from the reference by less than the minimum effect, and the
    reference itself meets the expectation (so the expectation bounds a regression; one
    that asks for an improvement is not met by a value that barely moved)."""
    observed, old = check.observed, names[reference]
    if observed is None or math.isnan(observed) or not evaluate(e, old, names=names).passed:
        return None
    change = stats.effect_pct(old, observed)
    if abs(change) >= min_effect_pct:
        return None
    return (f"within the minimum effect: {change:+.1f}% from the {reference}'s "
            f"{format_value(e.kind, old)} is less than the minimum effect, {min_effect_pct:g}%")


def io_error(result: RunResult) -> str | None:
    """Why a run cannot pass whatever it measured: an I/O error, or data that did not verify."""
    for job_index, job in enumerate(result.jobs):
        v = job.verify
        if v is not None and v.state_error:
            state = result.specs[job_index].verify_state if job_index < len(result.specs) else ""
            return (f"the verify state file {state} could not be written in full "
                    f"({v.state_error}: {os.strerror(getattr(errno, v.state_error, 0))}) "
                    f"after {v.state_records} records: a check after a crash would miss what "
                    "came later")
        if v is not None and v.failures:
            kinds = ", ".join(f"{n} {k}" for k, n in v.by_kind.items() if n)
            first = f"; first: {v.records[0].describe()}" if v.records else ""
            return (f"verification failed in job {job_index}: {v.failures} of "
                    f"{v.blocks_checked} block(s) read back ({kinds}){first}")
        for direction in ("read", "write", "trim", "sync"):
            d = getattr(job, direction)
            if d.errors:
                files = (result.specs[job_index].files()
                         if job_index < len(result.specs) else [])
                return (f"{d.errors} {direction} error(s) in job {job_index}; first: "
                        f"{d.describe_first_error(files)}, "
                        f"{d.first_error_ns / 1e9:.3f} s into the run")
    return None
