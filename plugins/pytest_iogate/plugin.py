"""The pytest11 plugin: collect suites, run workloads as items, report like a storage engineer.

Registered through the ``pytest11`` entry point named ``iogate``. Suite errors are collection
errors with one ``file:line:col: path: message`` line per problem; a failing expectation fails
its own item with a table of metric, expectation, observed value and verdict, the suite lines
that asked for it and the workload as run. Measured metrics are attached as
``user_properties`` so JUnit XML carries them, each named with its base unit where the name
does not say it (``read.clat.p99_ns``, ``read.bw_bytes_per_s``, ``read.iops``), after the
suite's name, the target and the environment facts a CI server groups runs by (``firmware``,
``device_model``, ``host``, ``kernel``). In JUnit XML a case's class is its suite's name (not
its file's, which a CI server would split at ``.yaml``) and its name is the case's id.

Under pytest-xdist the workers run the items and the controller reports: each case's result
travels to the controller with its item's test report, and only the controller journals the
cases, writes the results document and prints the summary. With xdist's default distribution
the members of a group run on one worker.
"""

from __future__ import annotations

import base64
import fnmatch
import pickle
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# The warnings the plugin raises (iogate.errors holds nothing but exception classes: cheap to
# load in every pytest session, which the rest of iogate is only when suites are collected).
from iogate.errors import PowerWarning, RealizedWorkloadWarning, SuiteWarning

if TYPE_CHECKING:
    from iogate.suiterun import SuiteRun

RESULTS_KEY = pytest.StashKey[list[Any]]()
GROUP_RESULTS_KEY = pytest.StashKey[dict[Any, Any]]()
# The session's run (iogate.suiterun.SuiteRun): its settings, the outputs it claimed when
# the session was configured (compared with the files of the cases once they are
# collected), and the gate of the admitted cases.
RUN_KEY: pytest.StashKey[SuiteRun] = pytest.StashKey()
# The terminal as it was before capturing began; live progress goes there.
TERMINAL_KEY = pytest.StashKey[Any]()
# The journal every finished case is appended to (iogate.report.Journal): beside
# --iogate-json, made and locked when the session is configured; else made at the first case.
JOURNAL_KEY = pytest.StashKey[Any]()
# When the session began (time.monotonic()): the summaries give the run's wall time.
STARTED_KEY = pytest.StashKey[float]()
# In an xdist worker: the result of the item's case, until its report takes it to the controller.
CASE_RESULT_KEY = pytest.StashKey[Any]()
# The attribute of a test report that carries its case's result (iogate.runner.CaseResult).
REPORT_RESULT = "iogate_result"
# The facts of the machine a session runs on (iogate.environment.capture), read once.
FACTS_KEY = pytest.StashKey[dict[str, object]]()
# The user property that names an item's suite: from it, its JUnit class.
SUITE_PROPERTY = "suite"


def _journal(config: pytest.Config) -> Any:
    journal = config.stash.get(JOURNAL_KEY, None)
    if journal is None:
        from iogate.report import Journal

        journal = config.stash[JOURNAL_KEY] = Journal(config.getoption("iogate_json"))
    return journal


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("iogate", "iogate storage suites")
    from iogate.settings import add_options

    add_options(group.addoption, "--iogate-")
    parser.addini("iogate_suite_glob", type="linelist", default=["*.suite.yaml"],
                  help="glob patterns of iogate suite files (default: *.suite.yaml)")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[RESULTS_KEY] = []
    config.stash[TERMINAL_KEY] = sys.stdout
    config.stash[STARTED_KEY] = time.monotonic()
    from iogate.files import OutputError
    from iogate.settings import UsageError
    from iogate.suiterun import SuiteRun

    # Every output is checked before anything is collected or run (iogate.files), the
    # plugins' as they are configured; against the cases' files once they are collected.
    try:
        config.stash[RUN_KEY] = SuiteRun.configure(
            lambda name: config.getoption("iogate_" + name.replace("-", "_")),
            lambda o: config.getoption(o.dest, None), "--iogate-")
        # The journal beside the results file, locked: another session or run writing
        # there is refused before anything runs (the xdist controller alone keeps it).
        if config.getoption("iogate_json") and not _is_worker(config):
            _journal(config)
    except OutputError as exc:
        raise pytest.UsageError(exc.message("--iogate-")) from None
    except UsageError as exc:
        raise pytest.UsageError(f"iogate: {exc}") from None


def pytest_unconfigure(config: pytest.Config) -> None:
    """A journal the session did not close (it never ran: ``--help``, a usage error) goes,
    unless it holds a case."""
    journal = config.stash.get(JOURNAL_KEY, None)
    if journal is not None:
        del config.stash[JOURNAL_KEY]
        journal.close(remove=not journal.count)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Before anything runs, the collected cases are admitted as on the command line
    (:meth:`iogate.suiterun.SuiteRun.admit`): a refusal is a usage error."""
    from iogate.suiterun import Refused

    runner = config.stash.get(RUN_KEY, None)
    if runner is None:
        return
    try:
        said = runner.admit([item.case for item in items if isinstance(item, WorkloadItem)])
    except Refused as exc:
        raise pytest.UsageError(str(exc)) from None
    for text in said:
        warnings.warn(PowerWarning(text), stacklevel=1)


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
            runner = self.config.stash.get(RUN_KEY, None)
            suite = load_suite(self.path,
                               overrides=runner.settings.overrides if runner else None)
        except SuiteError as exc:
            # CollectError renders its message alone, without a traceback.
            raise self.CollectError(str(exc)) from None
        for problem in suite.warnings:  # valid, but likely not what was meant
            warnings.warn(SuiteWarning(str(problem)), stacklevel=1)
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
        # on every report of the item, so that its JUnit class is its suite's name whatever
        # phase ends it (_JunitClasses)
        self.user_properties.append((SUITE_PROPERTY, case.suite_name))

    def runtest(self) -> None:
        from iogate.baseline import BaselineMatchError
        from iogate.expect import explain, verdict
        from iogate.metrics import unit_name

        def run(cases: list[Any]) -> list[Any]:
            progress = _LiveProgress(self.config, self.nodeid, cases)
            try:
                return self.config.stash[RUN_KEY].run(cases, on_progress=progress,
                                                      on_phase=progress.set_phase,
                                                      on_wait=progress.say)
            except BaselineMatchError as exc:  # no entry, or several, for a case: a usage error
                pytest.exit(f"--iogate-baseline: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
            finally:
                progress.close()

        assert isinstance(self.parent, SuiteFile)
        result = self.parent.run_together(self.case, run)
        for warning in result.warnings:
            warnings.warn(RealizedWorkloadWarning(f"{result.id}: {warning}"), stacklevel=1)
        if _is_worker(self.config):
            self.stash[CASE_RESULT_KEY] = result  # reported to the controller (makereport)
        else:
            _record(self.config, result)
        self.user_properties += _facts(self.config, result)
        for path, value in sorted(result.metrics.items()):
            self.user_properties.append((unit_name(path), value))
        self.user_properties.append(("outcome", result.outcome))
        # Each verdict against a baseline or the history with its reason (JUnit properties).
        for check in result.checks:
            if check.evidence is not None:
                self.user_properties.append((f"check {check.key}",
                                             f"{verdict(check)}: {explain(check)}"))
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

            # pytest names the item in its summary line: the report's first line names
            # the failed checks instead of repeating the id, and fits after
            # "FAILED node - ".
            return failure_report(excinfo.value.result, named=False,
                                  columns=_columns(self.config),
                                  taken=len(f"FAILED {self.nodeid} - "))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"{self.case.suite_name}::{self.case.id}"


def _columns(config: pytest.Config) -> int:
    """The width of the session's output (:func:`iogate.text.width` of its terminal: 120
    columns in a CI log)."""
    from iogate.text import width

    return width(config.stash.get(TERMINAL_KEY, None))


def _facts(config: pytest.Config, result: Any) -> list[tuple[str, object]]:
    """The case's target and the facts a CI server groups runs by: the target's model and
    firmware when it has them (else those the run was given), the host and kernel."""
    from iogate.environment import GIVEN_KEYS, capture

    machine = config.stash.get(FACTS_KEY, None)
    if machine is None:
        machine = config.stash[FACTS_KEY] = capture(given=config.stash[RUN_KEY].settings.facts)
    facts = [("target", result.target)] if result.target else []
    for key in GIVEN_KEYS:
        value = result.environment.get(f"target.{key}", machine.get(key))
        if value is not None:
            facts.append((key, value))
    return facts


class _LiveProgress:
    """Writes the engine's progress on one terminal line while an item runs (terminals only)."""

    def __init__(self, config: pytest.Config, label: str, cases: list[Any]) -> None:
        from iogate.plan import expected_bytes
        from iogate.progress import ProgressLine, schedule

        self._config = config
        self._capman = config.pluginmanager.getplugin("capturemanager")
        stream = config.stash.get(TERMINAL_KEY, None)
        quiet = config.getoption("verbose") < 0
        # pytest shows where the session stands; the line shows the item's own runs
        self._line = (ProgressLine(label, stream=stream, total_bytes=expected_bytes(cases),
                                   schedule=schedule([cases]))
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


def _record(config: pytest.Config, result: Any) -> None:
    """A finished case joins the run's results and its journal (where the results are
    reported: the only process, or the xdist controller)."""
    _journal(config).append(result)
    config.stash[RESULTS_KEY].append(result)


# -- pytest-xdist -------------------------------------------------------------------------------


def _is_worker(config: pytest.Config) -> bool:
    """Whether this process is an xdist worker (it runs items; the controller reports)."""
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    config = session.config
    if not _is_worker(config) and config.pluginmanager.hasplugin("dsession"):
        config.pluginmanager.register(_XdistController(config), "iogate-xdist-controller")
    try:  # what pytest's own record_xml_attribute fixture reaches the JUnit writer by
        from _pytest.junitxml import xml_key
    except ImportError:  # a pytest without it: the classes stay pytest's own
        return
    xml = config.stash.get(xml_key, None)
    if xml is not None:  # --junitxml, in the process that writes it
        config.pluginmanager.register(_JunitClasses(xml), "iogate-junit-classes")


class _JunitClasses:
    """With ``--junitxml``: a case's ``classname`` is its suite's name (with pytest's
    ``--junit-prefix`` before it), set before pytest's own reporter writes the element, for
    every phase's report (an xdist worker's too: the suite travels as a user property)."""

    def __init__(self, xml: Any) -> None:
        self.xml = xml

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        suite = next((str(v) for k, v in report.user_properties if k == SUITE_PROPERTY), None)
        # only the items of suites: their location's domain is "suite::case"
        if suite is None or not report.location[2].startswith(f"{suite}::"):
            return
        name = f"{self.xml.prefix}.{suite}" if self.xml.prefix else suite
        self.xml.node_reporter(report).add_attribute("classname", name)


class _XdistController:
    """The xdist controller's part: it schedules the members of a group together and records
    the result each worker's report carries."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # xdist's default distribution ("load", which -n picks) sends items one by one and
        # would split a group, whose members must run at the same time in one worker.
        if config.getoption("dist") != "load":
            return None
        from xdist.scheduler import LoadScopeScheduling

        groups = _Groups(config)

        class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
            """xdist's "load": every item a work unit of its own, but a group's members one."""

            def _split_scope(self, nodeid: str) -> str:
                return groups.scope(nodeid)

        return GroupScheduling(config, log)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = getattr(report, REPORT_RESULT, None)
        if result is not None:
            _record(self.config, result)


class _Groups:
    """The scope of a node id for the xdist controller, which collects nothing itself: a
    suite's group (read from the suite file, once per file) for the items of its members,
    else the item's own node id."""

    def __init__(self, config: pytest.Config) -> None:
        self.root = config.rootpath
        self.patterns = config.getini("iogate_suite_glob")
        self.files: dict[str, dict[str, str]] = {}

    def scope(self, nodeid: str) -> str:
        path, sep, name = nodeid.partition("::")
        if not sep or not any(fnmatch.fnmatch(Path(path).name, p) for p in self.patterns):
            return nodeid
        if path not in self.files:
            self.files[path] = self._read(path)
        group = self.files[path].get(name)
        return nodeid if group is None else f"{path}::group {group}"

    def _read(self, path: str) -> dict[str, str]:
        from iogate.errors import SuiteError
        from iogate.spec import load_suite

        try:
            suite = load_suite(self.root / path)
        except (SuiteError, OSError):
            return {}  # the workers report it as a collection error
        return {c.id: c.group for c in suite.cases if c.group is not None}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if call.when == "call" and (result := item.stash.get(CASE_RESULT_KEY, None)) is not None:
        setattr(report, REPORT_RESULT, result)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_report_to_serializable(config: pytest.Config, report: Any) -> Any:
    data = yield
    result = getattr(report, REPORT_RESULT, None)
    if data is not None and result is not None:
        # The result holds the suite's case (models, paths): pickled whole, as text, so the
        # controller gets the same object the worker had.
        data[REPORT_RESULT] = base64.b64encode(pickle.dumps(result)).decode("ascii")
    return data


@pytest.hookimpl(wrapper=True)
def pytest_report_from_serializable(config: pytest.Config, data: dict[str, Any]) -> Any:
    report = yield
    packed = data.get(REPORT_RESULT)
    if report is not None and isinstance(packed, str):
        setattr(report, REPORT_RESULT, pickle.loads(base64.b64decode(packed)))
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    results = config.stash.get(RESULTS_KEY, [])
    if not results:
        return
    from iogate.report import summary_table

    columns = _columns(config)
    terminalreporter.write_sep("=", "iogate results")
    terminalreporter.write_line(summary_table(results, columns))
    from iogate.report import hosts_tables, sweep_tables

    for extra in (sweep_tables(results, columns), hosts_tables(results, columns)):
        if extra:
            terminalreporter.write_line("")
            terminalreporter.write_line(extra)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _is_worker(session.config):
        return  # its cases went to the controller with their reports
    runner = session.config.stash.get(RUN_KEY, None)
    results: list[Any] = session.config.stash.get(RESULTS_KEY, [])
    if runner is None:
        return
    run = runner.settings
    refused = exitstatus == pytest.ExitCode.USAGE_ERROR and not results  # nothing ran
    if refused or not (run.json or run.save_baseline or results or run.markdown
                       or run.openmetrics):
        return  # a journal made is removed when the session is unconfigured
    journal = session.config.stash.get(JOURNAL_KEY, None)
    written = False
    try:
        document = runner.document(results, journal)
        runner.report(results, document)
        started = session.config.stash.get(STARTED_KEY, None)
        done = runner.write(results, document, journal,
                            None if started is None else time.monotonic() - started)
        written = done.results_written
        writer = session.config.get_terminal_writer()
        if done.said and writer.width_of_current_line:
            writer.line()  # after the items' progress, on a line of its own
        for line, problem in done.said:
            writer.line(line, red=problem)
        # An output that could not be written fails the session (the results are elsewhere
        # when the results file could not be: the message says where).
        if done.failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
    finally:
        if journal is not None:
            # Kept only when the results file could not be written: it holds the cases.
            del session.config.stash[JOURNAL_KEY]
            journal.close(remove=written)
