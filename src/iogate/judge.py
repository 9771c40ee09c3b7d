"""Judging a case: its metrics over the runs (medians of repeats), each expectation checked
against thresholds, the baseline and the series' windows, and the outcome that follows.

:class:`Gate` holds how verdicts that refer to a baseline or to the history store are
reached; :func:`fail_fast` judges a run while it goes, :func:`judge` when it has ended.
"""

from __future__ import annotations

import errno
import math
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from iogate import diskstats, environment, hooks, stats
from iogate.baseline import Baseline, BaselineError
from iogate.baseline import Choice as BaselineChoice
from iogate.baseline import Entry as BaselineEntry
from iogate.changes import ChangesError, Level, require
from iogate.expect import (
    Check,
    Expectation,
    ExpectationError,
    evaluate,
    evaluate_window,
    tally_window,
)
from iogate.ids import case_id
from iogate.job import JobSpec
from iogate.metrics import MetricPath, parse_metric
from iogate.outcome import LOCAL_HOST, CaseResult, SteadyRounds, series_of
from iogate.realized import device_warnings, no_io, realized_warnings, requested
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
    # The statistical checks of the run (expectations against a baseline or the history):
    # each is held to alpha / family, so that the run as a whole raises a false alarm with
    # a chance of at most alpha (Bonferroni; set by :meth:`for_cases` before the run).
    family: int = 1

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

    def for_cases(self, cases: Sequence[Case]) -> Gate:
        """This gate for a run of ``cases``: its family is their statistical checks."""
        return replace(self, family=max(1, len(statistical(cases))))

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
    try:
        require()
    except ChangesError as exc:
        return f"{exc} (expectations refer to history:\n  " + "\n  ".join(where) + ")"
    return None


def statistical(cases: Sequence[Case]) -> list[tuple[Case, Expectation]]:
    """The checks of ``cases`` decided with a test against a reference: those that refer to
    a baseline or the history (windowed ones judge their intervals, and are not)."""
    return [(c, e) for c in cases for e in c.expectations
            if {"baseline", "history"} & e.names and e.window is None]


def looks(case: Case) -> int:
    """How often a case's statistical checks are looked at: once per run from its fewest
    repeats to its most."""
    return max(1, case.repeat_max - case.repeat + 1) if case.repeat_max else 1


@dataclass(frozen=True)
class HistoryLevel:
    """What ``history`` is for one case and metric: the level judged against, or why
    there is none (``judged``: False when that is no failure, such as a short history).
    ``runs``: the runs that may form the norm (passed, or accepted); ``recorded``: all.
    Read from the store before judging (:func:`iogate.levels.history_levels`)."""

    level: Level | None
    reason: str = ""
    judged: bool = True
    runs: int = 0
    recorded: int = 0

    def describe(self) -> str:
        """Which runs form the level, in words."""
        assert self.level is not None
        n = len(self.level.values)
        last = "the last " if n < self.runs else ""
        return f"{last}{n} passed or accepted of {self.recorded} runs"


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
           choice: BaselineChoice | None,
           levels: Mapping[str, HistoryLevel] | None = None) -> CaseResult:
    """The outcome of ``case`` from its runs. ``levels``: what its ``history``
    expectations are judged against, by metric, as the caller read them from the history
    store (:func:`iogate.levels.history_levels`); none: no store is given."""
    result = runs[-1]
    metrics, samples, unmeasured = _measured(case, runs, case.expectations)
    entry = choice.entry if choice is not None else None
    beside = gate.shown_beside(case, env, choice)
    levels = dict(levels or {})
    checks = [_check(e, runs, metrics, samples, entry, gate, unmeasured, levels, looks(case),
                     case.repeat_max or case.repeat)
              for e in case.expectations]
    hosts = _per_host(case, runs)
    for host, (host_runs, host_metrics, host_samples, host_unmeasured) in hosts.items():
        for e in case.per_host_expectations:
            check = _check(e, host_runs, host_metrics, host_samples, None, gate,
                           host_unmeasured)
            checks.append(replace(check, host=host))
    error = next((e for e in map(io_error, runs) if e), None)
    idle = next((why for r in runs if (why := no_io(r.specs, r))), None)
    if any(r.interrupted for r in runs):
        outcome = "interrupted"
    elif error:
        outcome = "error"  # an I/O error is never a pass
    elif idle:
        # A run that asked for I/O and did none measured nothing of the device: an error
        # of the run, never a failure of the device.
        outcome, error = "error", f"the run did no I/O: {idle}"
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


def decided(result: CaseResult) -> bool:
    """Whether more runs could not change a case's verdict: it did not pass or fail by its
    checks (an error, an interruption), or every check against a reference is decided
    (adaptive repeats stop there)."""
    if result.outcome not in ("passed", "failed"):
        return True
    return all(c.evidence is None or c.evidence.decided for c in result.checks)


def power_warnings(cases: Sequence[Case], gate: Gate) -> list[str]:
    """Before any I/O: each check against the baseline whose runs can never make a
    regression at its threshold significant at the run's adjusted significance, with how
    many runs it needs (or that the baseline itself needs more runs)."""
    if gate.baseline is None:
        return []
    out = []
    for case, e in statistical(cases):
        if "baseline" not in e.names or e.stat not in ("median", "mean") or \
                e.op in ("==", "!="):
            continue
        entries = gate.baseline.candidates(case_id(case), gate.match)
        if not entries:
            continue
        entry = min(entries, key=lambda x: len(x.samples(e.metric.text)))
        old = entry.samples(e.metric.text)
        if not old:
            continue
        center = _statistic(old, e.stat)
        try:
            threshold = e.threshold({"baseline": center, "history": center})
        except ExpectationError:  # a threshold these values cannot give: said when judged
            continue
        step = max(abs(stats.effect_pct(center, threshold)), gate.min_effect_pct)
        if not math.isfinite(step) or step == 0:
            continue
        most = case.repeat_max or case.repeat
        alpha = stats.adjusted_alpha(gate.alpha, gate.family, looks(case), final=True)
        lower = e.op in (">=", ">")
        need = stats.runs_needed(old, step, alpha, lower_is_worse=lower)
        where = f"{case.path}:{e.line or case.line}: {case_id(case)}: {e.key}"
        if len(old) < 2:
            out.append(f"{where}: the baseline holds 1 run of it, so no test is possible and "
                       "a change beyond the threshold fails by its size alone, whatever the "
                       "noise: record the baseline with repeat: 3 or more")
        elif need is None:
            out.append(f"{where}: with the baseline's {len(old)} runs and their noise, no "
                       f"number of runs here can make a {step:.3g}% regression significant "
                       f"at {alpha:.2g}: record the baseline with more repeats")
        elif need > most:
            out.append(f"{where}: {most} run(s) cannot make a {step:.3g}% regression "
                       f"significant at {alpha:.2g} against the baseline's {len(old)} runs "
                       f"and their noise; it needs repeat: {need} (or repeat: {{min: "
                       f"{case.repeat}, max: {need}}}); until then such a value passes as "
                       "within noise")
    return out


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
           levels: Mapping[str, HistoryLevel] | None = None, looked: int = 1,
           most: int | None = None) -> Check:
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
    old = entry.samples(path) if entry is not None and "baseline" in e.names else []
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
    if "baseline" in names:
        return verdict_against(e, old, values, gate, names=names, looked=looked,
                               most=most, backend=backend, unmeasured=unmeasured.get(path))
    check = evaluate(e, _statistic(values, e.stat) if values else None, names=names,
                     backend=backend, unmeasured=unmeasured.get(path))
    if "history" in names:
        assert level is not None
        assert level.level is not None
        observed = [check.observed] if check.observed is not None else []
        # One value (the runs' statistic) against the level's runs: more runs would not
        # make the test any sharper, so it is decided at once.
        return against(e, check, names, level.level.values, observed, gate, "history",
                       level.describe(), looked, most=None)
    return check


def verdict_against(e: Expectation, reference: Sequence[float], observed: Sequence[float],
                    gate: Gate, *, name: str = "baseline",
                    names: Mapping[str, float] | None = None, runs: str = "",
                    looked: int = 1, most: int | None = None, backend: str = "native",
                    unmeasured: str | None = None) -> Check:
    """The verdict on ``e`` for the runs ``observed`` (one value per run) against the runs
    of a reference (``name``: baseline or history; ``runs`` says which in words): the
    statistic of each side, the threshold, then :func:`against`."""
    given = dict(names or {})
    if reference:
        given.setdefault(name, _statistic(reference, e.stat))
    check = evaluate(e, _statistic(observed, e.stat) if observed else None, names=given,
                     backend=backend, unmeasured=unmeasured)
    if not reference:
        return check
    n = len(reference)
    return against(e, check, given, reference, observed, gate, name,
                   runs or f"{n} run{'s' if n != 1 else ''}", looked, most)


def against(e: Expectation, check: Check, names: Mapping[str, float],
            reference: Sequence[float], observed: Sequence[float], gate: Gate, name: str,
            runs: str, looked: int = 1, most: int | None = None) -> Check:
    """The verdict on a check that refers to a reference (``name``: baseline or history,
    whose runs are ``reference``; ``runs`` says which in words), given the runs
    ``observed`` and the check against its threshold alone.

    A value beyond its threshold fails only on a regression: when the reference's own
    value meets the expectation (so the expectation bounds a regression rather than asking
    for an improvement), a value that moved by less than ``min_effect_pct`` in the worse
    direction passes, and so does one that is not significantly worse than the reference
    by :func:`iogate.stats.worse_p` at alpha adjusted for the run's statistical checks and
    for the ``looked`` looks of adaptive repeats. A significant difference must also show
    in the rank order of the runs (:func:`iogate.stats.rank_worse_p` at
    :data:`iogate.stats.RANK_ALPHA`, where the runs are enough for it to): one slow run
    beside normal ones is an outlier, not a regression (as for change points). With a
    reference of one run there is no noise to test with: the threshold and the minimum
    effect decide, and the evidence says so. Each step only ever fails a worse value where
    it fails a better one.

    ``most``: the most runs the case may make (adaptive repeats); a verdict that more runs
    could change is not decided, unless even ``most`` runs at the mean observed so far
    could not make it significant (futility: the repeats stop there). None: no more runs
    will come."""
    center = names[name]
    lower_is_worse = e.op in (">=", ">")
    final = most is None or len(observed) >= most
    alpha = stats.adjusted_alpha(gate.alpha, gate.family, looked, final)
    tested = e.stat in ("median", "mean") and e.op not in ("==", "!=")
    p, rank_p = stats.worse(reference, observed, lower_is_worse=lower_is_worse) \
        if tested else (None, None)
    spread = statistics.stdev(reference) if len(reference) > 1 else None
    effect = stats.effect_pct(center, check.observed) \
        if check.observed is not None and not math.isnan(check.observed) else math.nan

    def verdict(decision: str, decided: bool = True) -> stats.Evidence:
        return stats.Evidence(name, center, spread, len(reference), runs, len(observed),
                              effect, p, alpha, gate.family, looked, decision, decided,
                              gate.min_effect_pct, rank_p, final)

    def more_could_tell() -> bool:
        """Whether more runs at the mean observed so far could make it significant."""
        if most is None or final:
            return False
        projected = stats.worse_p(reference, [stats.typical(reference, observed)] * most,
                                  lower_is_worse=lower_is_worse)
        return projected is not None and projected <= stats.adjusted_alpha(
            gate.alpha, gate.family, looked, final=True)

    if check.observed is None or math.isnan(check.observed):
        return check
    if check.passed:
        return replace(check, evidence=verdict("met"))
    if e.op in ("==", "!=") or not evaluate(e, center, names=names).passed:
        return replace(check, evidence=verdict("improvement"))
    worse = -effect if lower_is_worse else effect
    if worse < gate.min_effect_pct:
        return replace(check, passed=True, evidence=verdict("within min effect"))
    if not tested:
        return replace(check, evidence=verdict("no test"))
    if p is None:
        return replace(check, evidence=verdict("too few runs"))
    if stats.significant(p, rank_p, alpha):
        return replace(check, evidence=verdict("regression"))
    if p <= alpha:  # significant, but not in rank order
        return replace(check, passed=True, evidence=verdict("one slow run", decided=final))
    return replace(check, passed=True,
                   evidence=verdict("within noise", decided=not more_could_tell()))


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
