"""Running cases: targets checked and held, precondition steps, then every case of a group
in one engine session, repeated or in rounds until steady; engine and I/O failures become
outcomes, never exceptions.

This is the one place where the plan (:mod:`iogate.plan`), the engine (a backend of
:mod:`iogate.backends`) and the verdicts (:mod:`iogate.judge`) meet. Front ends (the CLI
and the pytest plugin) call :func:`run_cases` and render the :class:`CaseResult` it returns.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from iogate import environment, hooks, ownership, stats
from iogate.backends import Engine
from iogate.engine.isolated import (
    EngineAborted,
    EngineCrashed,
    EngineFault,
    run,
)
from iogate.errors import EngineError, TargetError
from iogate.files import OutputError, create_stream
from iogate.job import JobSpec
from iogate.judge import (
    Gate,
    decided,
    fail_fast,
    io_error,
    judge,
    tracked,
)
from iogate.levels import history_levels
from iogate.lower import exit_masks, lower_step
from iogate.outcome import CaseResult, SteadyRounds
from iogate.plan import seed_for, sized, spec_for, target_text, targets_of
from iogate.results import Progress, RunResult, SeriesSource
from iogate.spec import Case
from iogate.spec.models import SteadyState
from iogate.targets import Guard, Policy, check_state_file, guard

ProgressCallback = Callable[[Progress], None]


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
    facts: Mapping[str, str] | None = None,
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
    another backend (:mod:`iogate.backends`). ``facts``: the environment facts the run was
    given rather than read (``--fact``), over what each target's are read to be. The cases
    were admitted first (:meth:`iogate.suiterun.SuiteRun.admit`): the baseline and the
    history they refer to are there.
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
        return finish([CaseResult(c, outcome, error=error, target=target_text(t),
                                  duration_s=time.monotonic() - started, metrics=metrics)
                       for c, t in zip(cases, targets, strict=True)])

    stack = contextlib.ExitStack()
    with targets_of(cases, filename) as targets:
        try:
            # A workload without size takes its target's (fio's rule): known from here on.
            cases = [sized(c, files) for c, files in zip(cases, targets, strict=True)]
            held = stack.enter_context(guard(cases, targets, safety or Policy(), on_wait))
            envs = [environment.capture(files[0] if files else None, given=facts)
                    for files in targets]
            # Before anything runs: a case without a baseline entry to judge it against, or
            # with several equally close, is the caller's to settle (BaselineMatchError).
            choices = [gate.choose(c, env) for c, env in zip(cases, envs, strict=True)]
            # What the history store says each case should be: read here, judged below.
            levels = [history_levels(gate.history, c, env)
                      for c, env in zip(cases, envs, strict=True)]
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
                        error = io_error(pre)
                        if error:
                            return failed("error", f"precondition step {i}: {error}", targets)
            masks = exit_masks([c.workload for c in cases])
            specs = [_with_state_file(_pinned(replace(spec_for(c, files), exit_mask=mask),
                                              held), stack)
                     for c, files, mask in zip(cases, targets, masks, strict=True)]
            steady = next((c.steady_state for c in cases if c.steady_state), None)
            if steady is not None:
                runs, rounds = _rounds_until_steady(engine, steady, specs, on_progress,
                                                    should_stop, on_phase)
            else:
                def enough(runs: list[RunResult]) -> bool:
                    # Adaptive repeats: every check against a reference is decided.
                    return all(decided(judge(case, [r.job_result(i) for r in runs], 0.0,
                                             target_text(files), env, gate, None, choice,
                                             levels[i]))
                               for i, (case, files, env, choice) in enumerate(
                                   zip(cases, targets, envs, choices, strict=True)))

                runs, rounds = _repeats(engine, max(c.repeat for c in cases),
                                        max(c.repeat_max or c.repeat for c in cases), specs,
                                        on_progress, should_stop, on_phase,
                                        fail_fast(cases, specs), enough), None
        except EngineCrashed as exc:
            return failed("crashed", str(exc), targets, exc.partial.metrics())
        except EngineFault as exc:
            return failed("error", str(exc), targets, exc.partial.metrics())
        except EngineAborted as exc:
            return failed("interrupted", "aborted by a second interrupt: the engine was "
                          "killed, only the counts seen so far are kept", targets,
                          exc.partial.metrics())
        except (EngineError, TargetError, OutputError) as exc:
            return failed("error", str(exc), targets)
        except KeyboardInterrupt:
            return failed("interrupted", "interrupted before the run started", targets)
        finally:
            stack.close()  # the exclusive opens of written block devices end with the run
        duration = time.monotonic() - started
        try:
            judged = [judge(case, [r.job_result(i) for r in runs], duration,
                             target_text(files), env, gate, rounds, choice, levels[i])
                      for i, (case, files, env, choice) in enumerate(
                          zip(cases, targets, envs, choices, strict=True))]
        except KeyboardInterrupt:
            return failed("interrupted", "interrupted while its results were judged", targets)
        return finish(judged)


def run_case(case: Case, **kwargs: Any) -> CaseResult:
    """Run one case on its own (its group, if any, is ignored)."""
    return run_cases([case], **kwargs)[0]


def _pinned(spec: JobSpec, held: Guard) -> JobSpec:
    """The spec with its files as they were checked: the engine opens those very files, and
    never creates or extends one iogate may only read."""
    if not spec.files():
        return spec
    paths, ids = held.pins(spec.files())
    return replace(spec, filenames=paths, file_ids=ids,
                   no_layout=spec.no_layout or held.fixed(spec.files()))


def _with_state_file(spec: JobSpec, stack: contextlib.ExitStack) -> JobSpec:
    """The spec with its verify state file made anew (by the output rules of
    :mod:`iogate.files`), recorded as iogate's own and held open until the run ends: the
    engine writes that very file (iog_job_spec.verify_state), and every repeat starts it
    again. It replaces only a file iogate made (checked again here, just before; the targets
    of the run were ruled out by :func:`iogate.targets.guard`)."""
    if not spec.verify_state:
        return spec
    check_state_file(spec.verify_state)
    fd, path = create_stream(spec.verify_state, "verify_state")
    stack.callback(os.close, fd)
    ownership.claim(fd, str(path))
    st = os.fstat(fd)
    return replace(spec, verify_state=str(path), verify_state_id=(st.st_dev, st.st_ino))


def _repeats(engine: Engine, least: int, most: int, specs: list[JobSpec],
             on_progress: ProgressCallback | None,
             should_stop: Callable[[], bool] | None,
             on_phase: Callable[[str], None] | None,
             stop_when: Callable[[SeriesSource], str | None] | None,
             enough: Callable[[list[RunResult]], bool]) -> list[RunResult]:
    """``least`` runs, then (adaptive repeats) one more at a time while ``enough`` says the
    verdicts are not all decided, at most ``most``."""
    runs: list[RunResult] = []
    for i in range(most):
        if on_phase is not None:
            upto = f"{most}" if most == least else f"{least}-{most}"
            on_phase(f"repeat {i + 1}/{upto}" if most > 1 else "")
        runs.append(engine(specs, on_progress=on_progress, should_stop=should_stop,
                           stop_when=stop_when))
        if runs[-1].interrupted or runs[-1].stopped:
            break
        if len(runs) >= least and (len(runs) == most or enough(runs)):
            break
    return runs


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
        value = tracked(result, steady.metric)
        values.append(float("nan") if value is None else value)
        skip = steady.ramp_rounds
        verdict = stats.steady_state(values[skip:], window=steady.window,
                                     range_pct=steady.range_pct, slope_pct=steady.slope_pct,
                                     deviation_pct=steady.deviation_pct)
        if verdict.steady:
            break
    start = None if verdict is None or verdict.window_start is None else \
        verdict.window_start + steady.ramp_rounds
    judged = runs[start:start + steady.window] if start is not None else runs
    rounds = SteadyRounds(steady.metric, values, bool(verdict and verdict.steady), start,
                          steady.window, steady.on_unsteady)
    return judged, rounds
