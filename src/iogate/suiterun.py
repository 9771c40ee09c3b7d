"""One run of suites, from its options to its outputs: the sequence that the ``iogate run``
command and the pytest plugin both follow, so that a run option, a check before the run or
an output is added here, once.

1. :meth:`SuiteRun.configure`: the options' values become the run's settings
   (:func:`iogate.settings.settings`), every output checked and claimed before anything
   else, the plugins configured.
2. :meth:`SuiteRun.admit`: the cases, before any I/O: one id per case, no output over a
   file they use, no block device written without the command line's permission
   (:func:`iogate.targets.unpermitted`), what the engine refuses (:mod:`iogate.admit`), the
   baseline and the history they refer to. A :class:`Refused` says every reason; the
   answer is the warnings.
3. :meth:`SuiteRun.run`: the cases of one unit (those that run together), with the run's
   gate, safety policy, engine and facts.
4. :meth:`SuiteRun.document` and :meth:`SuiteRun.write`: the results document (the
   plugins having their say), then the results file, the summaries for CI, the history
   record and the baseline, each whole or not at all. What could not be written is said,
   never raised: one output lost never costs another.

The front ends keep only what is theirs: how progress and outcomes are shown, how a refusal
ends (an exit status, a pytest usage error), and where their lines go.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from iogate import hooks
from iogate.errors import IogateError, UsageError
from iogate.files import Claim, OutputError, claiming
from iogate.ids import case_id
from iogate.outcome import CaseResult
from iogate.settings import RunSettings, check_paths, settings
from iogate.spec.suite import Case

DEFAULT_BACKEND = "native"  # iogate.backends.DEFAULT: the engine admit() asks


class Refused(IogateError):
    """A run that cannot start, before any I/O; ``lines`` says every reason, one a line."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        super().__init__("\n".join(self.lines))


@dataclass
class Written:
    """What :meth:`SuiteRun.write` did: the lines to say, in order, each with whether it
    says a problem; whether the results file was written; whether an output asked for could
    not be (``failed``), or the baseline (``baseline_failed``)."""

    said: list[tuple[str, bool]] = field(default_factory=list)
    results_written: bool = False
    failed: bool = False
    baseline_failed: bool = False


@dataclass
class SuiteRun:
    """A run's settings and the outputs it claimed, with the gate its cases share once
    admitted."""

    settings: RunSettings
    outputs: list[Claim]
    backend: str
    prefix: str = "--"  # how the front end spells the options: "--" or "--iogate-"
    gate: Any = None  # iogate.judge.Gate, for the admitted cases

    @classmethod
    def configure(cls, value: Callable[[str], Any], option: Callable[[Any], Any],
                  prefix: str = "--") -> SuiteRun:
        """The run of the options ``value(name)`` (a run option by its name,
        :data:`iogate.settings.OPTIONS`) and ``option(declaration)`` (a plugin's option),
        spelt with ``prefix``: a UsageError or an OutputError for one that cannot work."""
        with claiming() as outputs:
            run = settings(value, prefix)
            hooks.configure(option)
        return cls(run, outputs, str(value("backend") or DEFAULT_BACKEND), prefix, run.gate)

    def admit(self, cases: Sequence[Case]) -> list[str]:
        """Check ``cases`` before any of them runs; the warnings to say (a statistical
        check that can never decide). :class:`Refused` with every reason otherwise."""
        from iogate.baseline import BaselineError
        from iogate.judge import needs_baseline, needs_history, power_warnings

        refused = [f"iogate: {p}" for p in same_ids(cases)]
        try:
            check_paths(self.outputs, cases, self.settings.filename)
        except OutputError as exc:
            refused.append(f"iogate: {exc.message(self.prefix)}")
        except UsageError as exc:  # a scratch directory that cannot be (IOGATE_TMPDIR)
            refused.append(f"iogate: {exc}")
        if refused:
            raise Refused(refused)
        refused += [f"iogate: {p}" for p in self._unpermitted(cases)]
        if self.backend == DEFAULT_BACKEND:
            from iogate import admit

            refused += [f"iogate: {p}" for p in admit.problems(cases)]
        gate = self.settings.gate.for_cases(cases)  # the checks share one significance
        try:
            gate.check(cases)
        except BaselineError as exc:
            refused.append(f"iogate: {exc}")
        if gate.baseline is None and not gate.recording and needs_baseline(cases):
            refused.append("iogate: these expectations refer to baseline, but no baseline is "
                           f"loaded ({self.prefix}baseline FILE; {self.prefix}save-baseline "
                           "FILE records one):\n  " + "\n  ".join(needs_baseline(cases)))
        no_history = needs_history(cases, gate)
        if no_history:
            refused.append(f"iogate: {no_history}")
        if refused:
            raise Refused(refused)
        self.gate = gate
        return power_warnings(cases, gate)

    def _unpermitted(self, cases: Sequence[Case]) -> list[str]:
        """The cases that would write a block device the command line does not permit:
        listed at once, before the first case runs (:func:`iogate.targets.unpermitted`)."""
        from iogate.plan import targets_of
        from iogate.targets import unpermitted

        with targets_of(cases, self.settings.filename) as targets:
            return unpermitted(cases, targets, self.settings.safety, self.prefix)

    def run(self, unit: Sequence[Case], **shown: Any) -> list[CaseResult]:
        """Run the cases of one unit (they run together): their results. ``shown`` are how
        the front end shows it (``on_progress``, ``on_phase``, ``on_wait``)."""
        from iogate.runner import run_cases

        run = self.settings
        return run_cases(list(unit), filename=run.filename, gate=self.gate, safety=run.safety,
                         engine=run.engine, facts=run.facts, **shown)

    def document(self, results: Sequence[CaseResult], journal: Any) -> dict[str, Any]:
        """The results document, its cases read from ``journal`` (a
        :class:`iogate.report.Journal`) when given; before the plugins' say."""
        from iogate.report import results_document

        return results_document(results, journal, self.settings.history, self.settings.facts)

    @staticmethod
    def report(results: Sequence[CaseResult], document: dict[str, Any]) -> None:
        """Every plugin has its say on the finished document (``iogate_report``)."""
        from iogate.report import call_report_hooks

        call_report_hooks(results, document)

    def write(self, results: Sequence[CaseResult], document: dict[str, Any], journal: Any,
              wall_s: float | None, not_run: int = 0) -> Written:
        """Write every output asked for, each whole or not at all, in this order: the
        results file (elsewhere when it cannot be, the message says where), the summaries,
        the history record, the baseline. Call with interrupts held."""
        from iogate.report import write_results

        run = self.settings
        out = Written()
        if run.json:
            failure = write_results(run.json, document, journal)
            out.results_written = failure is None
            if failure:
                out.said.append((failure, True))
                out.failed = True
        self._summaries(out, results, document, wall_s, not_run)
        if run.history and results:
            self._history(out, document)
        if run.save_baseline is not None and results:
            self._baseline(out, document)
        return out

    def _summaries(self, out: Written, results: Sequence[CaseResult],
                   document: dict[str, Any], wall_s: float | None, not_run: int) -> None:
        from iogate import markdown, openmetrics

        environment = document.get("environment")
        environment = environment if isinstance(environment, dict) else {}
        run = self.settings
        writers: tuple[tuple[str, str | None, Callable[[str, str], None]], ...] = (
            ("markdown", run.markdown,
             lambda p, o: markdown.write(p, results, environment, wall_s=wall_s,
                                         not_run=not_run, option=o)),
            ("openmetrics", run.openmetrics,
             lambda p, o: openmetrics.write(p, results, environment, wall_s=wall_s,
                                            option=o)))
        for name, path, write in writers:
            if not path:
                continue
            try:
                write(path, name)
            except OutputError as exc:
                out.said.append((f"iogate: {exc.message(self.prefix)}", True))
                out.failed = True

    def _history(self, out: Written, document: dict[str, Any]) -> None:
        from iogate.history import HistoryError, record, shown

        dest = str(self.settings.history)
        try:
            run_id, n = record(dest, document, self.settings.labels)
        except HistoryError as exc:
            out.said.append((f"iogate: {exc}", True))
            out.failed = True
            return
        out.said.append((f"iogate: {shown(dest)}: run {run_id} recorded, {n} case(s)", False))

    def _baseline(self, out: Written, document: dict[str, Any]) -> None:
        from iogate.baseline import BaselineError, left_out_text, record

        save = self.settings.save_baseline
        assert save is not None
        try:
            _, left = record(save.path, document, include_failed=save.include_failed)
        except BaselineError as exc:
            out.said.append((f"iogate: {exc}", True))
            out.baseline_failed = True
            return
        text = left_out_text(save.path, left, f"{self.prefix}save-baseline-all")
        if text:
            out.said.append((f"iogate: {text}", False))


def same_ids(cases: Sequence[Case]) -> list[str]:
    """A reason for each case of a run whose id (file name and workload) another file's
    case has too: results, baselines and the history know a case by its id alone."""
    first: dict[str, Any] = {}
    out = []
    for case in cases:
        other = first.setdefault(case_id(case), case.path)
        if other != case.path:
            out.append(f"{case.path}: its case {case_id(case)} has the id of {other}'s: "
                       "results, baselines and the history know a case by file name and "
                       "workload alone; rename one file")
    return out
