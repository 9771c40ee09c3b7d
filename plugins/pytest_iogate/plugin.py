"""The pytest11 plugin: collect suites, run workloads as items, report like a storage engineer.

Registered through the ``pytest11`` entry point named ``iogate``. Suite errors are collection
errors with one ``file:line:col: path: message`` line per problem; a failing expectation fails
its own item with a table of metric, expectation, observed value and verdict, the suite lines
that asked for it and the workload as run. Measured metrics are attached as
``user_properties`` so JUnit XML carries them.
"""

from __future__ import annotations

import fnmatch
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

RESULTS_KEY = pytest.StashKey[list[Any]]()
GROUP_RESULTS_KEY = pytest.StashKey[dict[Any, Any]]()
GATE_KEY = pytest.StashKey[Any]()
ENGINE_KEY = pytest.StashKey[Any]()
SAFETY_KEY = pytest.StashKey[Any]()  # iogate.targets.Policy
# The terminal as it was before capturing began; live progress goes there.
TERMINAL_KEY = pytest.StashKey[Any]()
# The journal every finished case is appended to (iogate.report.Journal), made at the first.
JOURNAL_KEY = pytest.StashKey[Any]()


def _journal(config: pytest.Config) -> Any:
    journal = config.stash.get(JOURNAL_KEY, None)
    if journal is None:
        from iogate.cli import journal_path
        from iogate.report import Journal

        path = config.getoption("iogate_json")
        journal = Journal(journal_path(path) if path else None)
        config.stash[JOURNAL_KEY] = journal
    return journal


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("iogate", "iogate storage suites")
    group.addoption("--iogate-filename", metavar="PATH", default=None,
                    help="run every workload against PATH instead of the suite's filename")
    group.addoption("--iogate-json", metavar="FILE", default=None,
                    help="write the iogate results document (JSON) to FILE")
    group.addoption("--iogate-allow-destructive", action="append", nargs="?", const="",
                    metavar="DEVICE", dest="iogate_allow_destructive",
                    help="allow writing blank block devices (never mounted or in-use ones); "
                     "naming devices allows only those, and a /dev/disk/by-id name matching the "
                     "device's serial or WWN allows it even when it carries data")
    group.addoption("--iogate-backend", choices=("native", "fio"), default="native",
                    help="run the workloads with iogate's engine (native) or with fio")
    group.addoption("--iogate-hosts", metavar="HOST[:PORT],...|@FILE", default=None,
                    help="run every case on these fio servers at once (with --iogate-backend fio)")
    group.addoption("--iogate-baseline", metavar="FILE", default=None,
                    help="judge expectations that refer to baseline against FILE")
    group.addoption("--iogate-baseline-match", action="append", metavar="KEY=VALUE",
                    default=None,
                    help="judge against the baseline entries recorded with these facts "
                         "(repeatable; keys: device_model, firmware, host, kernel, "
                         "iogate_version), e.g. firmware=1.2")
    group.addoption("--iogate-save-baseline", metavar="FILE", default=None,
                    help="store this run's results in the baseline FILE (merged if it exists)")
    group.addoption("--iogate-alpha", type=float, default=0.05, metavar="P",
                    help="significance of a regression against the baseline (0.05)")
    group.addoption("--iogate-min-effect", type=float, default=5.0, metavar="PCT",
                    help="smallest change in percent that counts as a regression (5)")
    from iogate.hooks import collect_options

    for option in collect_options():
        group.addoption(option.pytest_flag, dest=option.dest, default=option.default,
                        help=option.help)
    parser.addini("iogate_suite_glob", type="linelist", default=["*.suite.yaml"],
                  help="glob patterns of iogate suite files (default: *.suite.yaml)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[RESULTS_KEY] = []
    config.stash[TERMINAL_KEY] = sys.stdout
    from iogate import hooks
    from iogate.baseline import BaselineError
    from iogate.cli import check_run_outputs, make_gate
    from iogate.files import OutputError

    # Every output is checked before anything is collected or run (iogate.files).
    try:
        check_run_outputs(config.getoption("iogate_json"),
                          config.getoption("iogate_save_baseline"),
                          "--iogate-json", "--iogate-save-baseline")
    except OutputError as exc:
        raise pytest.UsageError(exc.message("--iogate-")) from None

    try:
        gate = make_gate(config.getoption("iogate_baseline"),
                         config.getoption("iogate_baseline_match"),
                         alpha=config.getoption("iogate_alpha"),
                         min_effect_pct=config.getoption("iogate_min_effect"),
                         recording=bool(config.getoption("iogate_save_baseline")))
    except BaselineError as exc:
        raise pytest.UsageError(f"--iogate-baseline: {exc}") from None
    except ValueError as exc:
        raise pytest.UsageError(f"iogate: {exc}") from None
    config.stash[GATE_KEY] = gate
    from iogate import backends
    from iogate.errors import TargetError
    from iogate.fio.hosts import parse_hosts
    from iogate.targets import Policy

    try:
        config.stash[SAFETY_KEY] = Policy.from_option(
            config.getoption("iogate_allow_destructive"))
    except TargetError as exc:
        raise pytest.UsageError(str(exc)) from None
    hosts = config.getoption("iogate_hosts")
    try:
        config.stash[ENGINE_KEY] = backends.engine_for(config.getoption("iogate_backend"),
                                                       parse_hosts(hosts) if hosts else ())
    except (backends.BackendError, ValueError) as exc:
        raise pytest.UsageError(f"--iogate-hosts/--iogate-backend: {exc}") from None
    try:
        hooks.configure(lambda o: config.getoption(o.dest, None))
    except OutputError as exc:  # a plugin's output path, checked when it is configured
        raise pytest.UsageError(exc.message("--iogate-")) from None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Before anything runs: a collected case the baseline holds no entry for is a usage
    error, as on the command line."""
    from iogate.baseline import BaselineError

    gate = config.stash.get(GATE_KEY, None)
    if gate is None:
        return
    try:
        gate.check([item.case for item in items if isinstance(item, WorkloadItem)])
    except BaselineError as exc:
        raise pytest.UsageError(f"--iogate-baseline: {exc}") from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    patterns = parent.config.getini("iogate_suite_glob")
    if any(fnmatch.fnmatch(file_path.name, pat) for pat in patterns):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


class SuiteFile(pytest.File):
    """One suite file; its workloads are the items."""

    def collect(self) -> Iterator[pytest.Item]:
        from iogate.errors import SuiteError
        from iogate.spec import load_suite

        try:
            suite = load_suite(self.path)
        except SuiteError as exc:
            # CollectError renders its message alone, without a traceback.
            raise self.CollectError(str(exc)) from None
        self.cases = suite.cases
        for case in suite.cases:
            yield WorkloadItem.from_parent(self, name=case.id, case=case)

    def run_together(self, case: Any, run: Any) -> Any:
        """The result of `case`, running its whole group (once) when it has one: members of a
        group run concurrently in one engine session, as the suite asks."""
        if case.group is None:
            return run([case])[0]
        cache = self.config.stash.setdefault(GROUP_RESULTS_KEY, {})
        key = (str(self.path), case.group)
        if key not in cache:
            members = [c for c in self.cases if c.group == case.group]
            cache[key] = {r.case.id: r for r in run(members)}
        return cache[key][case.id]


class CaseFailed(Exception):
    """Raised by an item whose case did not pass; carries the result for the report."""

    def __init__(self, result: Any) -> None:
        super().__init__(result.outcome)
        self.result = result


class WorkloadItem(pytest.Item):
    def __init__(self, *, case: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        from iogate.baseline import BaselineMatchError
        from iogate.errors import RealizedWorkloadWarning
        from iogate.runner import expected_bytes, run_cases

        def run(cases: list[Any]) -> list[Any]:
            progress = _LiveProgress(self.config, self.nodeid, expected_bytes(cases))
            try:
                return run_cases(cases, filename=self.config.getoption("iogate_filename"),
                                 on_progress=progress, on_phase=progress.set_phase,
                                 gate=self.config.stash.get(GATE_KEY, None),
                                 engine=self.config.stash[ENGINE_KEY],
                                 safety=self.config.stash[SAFETY_KEY],
                                 on_wait=progress.say)
            except BaselineMatchError as exc:  # no entry, or several, for a case: a usage error
                pytest.exit(f"--iogate-baseline: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
            finally:
                progress.close()

        assert isinstance(self.parent, SuiteFile)
        result = self.parent.run_together(self.case, run)
        for warning in result.warnings:
            warnings.warn(RealizedWorkloadWarning(f"{result.id}: {warning}"), stacklevel=1)
        _journal(self.config).append(result)
        self.config.stash[RESULTS_KEY].append(result)
        for path, value in sorted(result.metrics.items()):
            self.user_properties.append((path, value))
        self.user_properties.append(("outcome", result.outcome))
        if result.outcome == "interrupted":
            raise KeyboardInterrupt
        if result.outcome == "skipped":
            pytest.skip(result.error or "skipped")
        if result.outcome != "passed":
            raise CaseFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            from iogate.report import failure_report

            return failure_report(excinfo.value.result)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"{self.case.suite_name}::{self.case.id}"


class _LiveProgress:
    """Writes the engine's progress on one terminal line while an item runs (terminals only)."""

    def __init__(self, config: pytest.Config, label: str, total_bytes: int | None) -> None:
        from iogate.report import ProgressLine

        self._config = config
        self._capman = config.pluginmanager.getplugin("capturemanager")
        stream = config.stash.get(TERMINAL_KEY, None)
        quiet = config.getoption("verbose") < 0
        self._line = (ProgressLine(label, stream=stream, total_bytes=total_bytes)
                      if stream and not quiet else None)

    def __call__(self, progress: Any) -> None:
        if self._line is None or not self._line.enabled:
            return
        if self._capman is not None:
            with self._capman.global_and_fixture_disabled():
                self._line(progress)
        else:
            self._line(progress)

    def set_phase(self, phase: str) -> None:
        if self._line is not None:
            self._line.set_phase(phase)

    def say(self, message: str) -> None:
        """A line of its own on the terminal (also when it is not one: a CI log), outside
        the captured output: such as waiting for a target another process holds."""
        stream = self._config.stash.get(TERMINAL_KEY, None) or sys.stderr
        if self._capman is not None:
            with self._capman.global_and_fixture_disabled():
                print(f"\niogate: {message}", file=stream, flush=True)
        else:
            print(f"\niogate: {message}", file=stream, flush=True)

    def close(self) -> None:
        if self._line is None or not self._line.enabled:
            return
        if self._capman is not None:
            with self._capman.global_and_fixture_disabled():
                self._line.close()
        else:
            self._line.close()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(RESULTS_KEY, [])
    if not results:
        return
    from iogate.report import summary_table

    terminalreporter.write_sep("=", "iogate results")
    terminalreporter.write_line(summary_table(results))
    from iogate.report import hosts_tables, sweep_tables

    for extra in (sweep_tables(results), hosts_tables(results)):
        if extra:
            terminalreporter.write_line("")
            terminalreporter.write_line(extra)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("iogate_json")
    save = session.config.getoption("iogate_save_baseline")
    results: list[Any] = session.config.stash.get(RESULTS_KEY, [])
    if not (path or save or results):
        return
    from iogate.baseline import BaselineError
    from iogate.cli import save_baseline
    from iogate.report import finish_document, write_results

    journal = session.config.stash.get(JOURNAL_KEY, None)
    written = False
    try:
        document = finish_document(results, journal)
        if path:
            failure = write_results(path, document, journal)
            written = failure is None
            if failure:
                # The results are elsewhere (the message says where); the session fails.
                session.config.get_terminal_writer().line(failure, red=True)
                if session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        if save and results:
            try:
                save_baseline(save, document)
            except BaselineError as exc:
                session.config.get_terminal_writer().line(f"iogate: {exc}", red=True)
    finally:
        if journal is not None:
            # Kept only when the results file could not be written: it holds the cases.
            journal.close(remove=written or None)
