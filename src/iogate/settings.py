"""The options of a run, declared once for every front end, and the settings they make.

The command line offers each option as ``--NAME``, pytest as ``--iogate-NAME``, as with
plugins' options; both build the same :class:`RunSettings` with :func:`settings`: the
outputs checked before any work (each on its own, then with :func:`check_paths` against
one another and the files the cases use), the baseline gate, the target safety policy, the
backend's engine and the workload keys set on the command line. A setting that cannot work is a
:class:`UsageError` naming its option. Commands that load suites without running them
declare the options they share with a run by name (:func:`add_option`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iogate.errors import UsageError
from iogate.ids import case_id

if TYPE_CHECKING:
    from iogate.baseline import SaveBaseline
    from iogate.files import Claim
    from iogate.spec import Case
    from iogate.spec.overrides import Overrides

__all__ = ["OPTIONS", "Option", "RunSettings", "UsageError", "add_option", "add_options",
           "case_files", "check_paths", "overrides", "save_baseline", "settings"]


@dataclass(frozen=True)
class Option:
    """One option of a run, as argparse and pytest both declare it."""

    name: str
    help: str
    metavar: str | None = None
    default: Any = None
    type: Callable[[str], Any] | None = None
    repeat: bool = False  # may be given several times: the values are a list
    bare: str | None = None  # the value of the flag given alone, if it may be

    @property
    def dest(self) -> str:
        return "iogate_" + self.name.replace("-", "_")

    def declaration(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dest": self.dest, "help": self.help, "default": self.default}
        if self.metavar:
            out["metavar"] = self.metavar
        if self.type is not None:
            out["type"] = self.type
        if self.repeat:
            out["action"] = "append"
        if self.bare is not None:
            out.update(nargs="?", const=self.bare)
        return out


OPTIONS = (
    Option("json", "write the results document (JSON) to FILE", "FILE"),
    Option("markdown", "add a Markdown summary of the run (counts, a table of the cases, "
           "what failed) at the end of FILE, created if missing: GitHub's job summary, "
           "e.g. \"$GITHUB_STEP_SUMMARY\"", "FILE"),
    Option("openmetrics", "write the run's measurements and verdicts to FILE as OpenMetrics "
           "text, for a Prometheus Pushgateway or node exporter's textfile collector "
           "(FILE.prom in its directory)", "FILE"),
    Option("filename", "run every workload against PATH instead of the suite's filename",
           "PATH"),
    Option("set", "set a workload key in every workload (and precondition step) of every "
           "suite and job file, over what they say, as fio's command-line options do "
           "(repeatable; the value as a suite writes it), e.g. size=16m", "KEY=VALUE",
           repeat=True),
    Option("allow-destructive", "allow writing blank block devices (never mounted or in-use "
           "ones); naming devices allows only those, and a /dev/disk/by-id name matching the "
           "device's serial or WWN allows it even when it carries data", "DEVICE",
           repeat=True, bare=""),
    Option("allow-overwrite", "write the existing file PATH even though iogate did not "
           "create it, as if its workloads said allow_overwrite: true (repeatable)", "PATH",
           repeat=True),
    Option("backend", "what runs the workloads: iogate's engine (native, the default), fio, "
           "or a plugin's backend", "NAME", default="native"),
    Option("hosts", "run every case on these fio servers (fio --server) at once, with the "
           "fio backend", "HOST[:PORT],...|@FILE"),
    Option("baseline", "judge expectations that refer to baseline against FILE", "FILE"),
    Option("baseline-match", "judge against the baseline entries recorded with these facts "
           "(repeatable; keys: device_model, firmware, host, kernel, iogate_version), e.g. "
           "firmware=1.2", "KEY=VALUE", repeat=True),
    Option("save-baseline", "store the results of this run's cases that passed in the "
           "baseline FILE (merged if it exists); the others are named on stderr", "FILE"),
    Option("save-baseline-all", "as save-baseline, storing every case measured in full, "
           "failed ones too", "FILE"),
    Option("fact", "give an environment fact that sysfs cannot read or reads wrong (a loop "
           "device, a drive behind an HBA or USB bridge), over what it reads: the baseline "
           "entry chosen, the baseline and history recorded and the reports use it "
           "(repeatable; keys: device_model, firmware, host, kernel), e.g. firmware=FW2; the "
           "environment variable IOGATE_FACT_FIRMWARE=FW2 gives it too, this option winning",
           "KEY=VALUE", repeat=True),
    Option("history", "record this run (every case's metrics and repeat samples, the device, "
           "firmware, host and the CI's build) in the history store DEST, a SQLite file "
           "created on first use or a postgresql:// URL; expectations that refer to history "
           "are judged against the runs it holds", "DEST"),
    Option("label", "a label of this run in the history store (repeatable), e.g. "
           "firmware_build=1234", "KEY=VALUE", repeat=True),
    Option("alpha", "significance of a regression against the baseline or the history "
           "(0.05)", "P",
           default=0.05, type=float),
    Option("min-effect", "smallest change in percent that counts as a regression (5)", "PCT",
           default=5.0, type=float),
)


def add_options(add: Callable[..., Any], prefix: str) -> None:
    """Declare every option of a run, the core's and the plugins'
    (:func:`iogate.hooks.collect_options`), with ``add(prefix + name, **declaration)``:
    argparse's ``add_argument`` with ``--`` or pytest's ``addoption`` with ``--iogate-``."""
    from iogate.hooks import collect_options

    for option in OPTIONS:
        add_option(add, prefix, option.name)
    for plugin_option in collect_options():
        add(prefix + plugin_option.name, dest=plugin_option.dest, help=plugin_option.help,
            default=plugin_option.default, metavar=plugin_option.metavar)


def add_option(add: Callable[..., Any], prefix: str, name: str) -> None:
    """Declare the option ``name`` of :data:`OPTIONS` with ``add`` (as :func:`add_options`)."""
    [option] = [o for o in OPTIONS if o.name == name]
    add(prefix + option.name, **option.declaration())


@dataclass
class RunSettings:
    """What a run's options make."""

    json: str | None
    filename: str | None
    save_baseline: SaveBaseline | None  # --save-baseline or --save-baseline-all
    gate: Any  # iogate.judge.Gate
    safety: Any  # iogate.targets.Policy
    engine: Any  # iogate.backends.Engine
    overrides: Overrides
    history: str | None = None  # the history store the run is recorded in
    labels: dict[str, str] = field(default_factory=dict)  # its labels there
    markdown: str | None = None  # the file the Markdown summary is added to
    openmetrics: str | None = None  # the file the OpenMetrics exposition is written to
    # The environment facts given (--fact, IOGATE_FACT_*), for every capture of the run's
    # environment (iogate.environment.capture).
    facts: dict[str, str] = field(default_factory=dict)


def overrides(values: Sequence[str] | None, prefix: str = "--") -> Overrides:
    """The workload keys set with ``set`` (:class:`iogate.spec.overrides.Overrides`);
    UsageError for one that cannot work, spelt with ``prefix`` as the front end spells it."""
    from iogate.spec.overrides import OverrideError, parse_overrides

    try:
        return parse_overrides(values, prefix + "set")
    except OverrideError as exc:
        raise UsageError("set", str(exc)) from None


def settings(value: Callable[[str], Any], prefix: str = "--",
             environ: Mapping[str, str] | None = None) -> RunSettings:
    """The settings of a run from its options' values (``value(name)``), as spelt with
    ``prefix`` in messages, checked in this order: the outputs (nothing may be lost to a path
    found unusable once the run is over: :class:`iogate.files.OutputError`), the facts given
    (``fact`` and the ``IOGATE_FACT_*`` variables of ``environ``, default the process's),
    the workload keys set, the baseline, the safety policy, the backend."""
    from iogate import backends, environment, hooks
    from iogate.baseline import BaselineError
    from iogate.errors import TargetError
    from iogate.fio.hosts import parse_hosts
    from iogate.history import HistoryError, check_destination, parse_labels
    from iogate.targets import Policy

    json_path, save = value("json"), save_baseline(value, prefix)
    check_outputs(json_path, save.path if save else None, markdown=value("markdown"),
                  openmetrics=value("openmetrics"),
                  baseline_option="save-baseline-all" if save and save.include_failed
                  else "save-baseline", history=value("history"))
    try:
        facts = environment.given_facts(value("fact"), environ, prefix + "fact")
    except ValueError as exc:
        raise UsageError("fact", str(exc)) from None
    history = value("history")
    try:
        if history:
            check_destination(history, prefix + "history")
        labels = parse_labels(value("label"))
    except HistoryError as exc:
        raise UsageError("history", str(exc)) from None
    if labels and not history:
        raise UsageError("label", f"{prefix}label names this run in a history store: give "
                                  f"{prefix}history DEST too")
    overridden = overrides(value("set"), prefix)
    try:
        gate = make_gate(value("baseline"), value("baseline-match"), alpha=value("alpha"),
                         min_effect_pct=value("min-effect"), recording=bool(save),
                         history=history)
    except (BaselineError, ValueError) as exc:
        raise UsageError("baseline", str(exc)) from None
    try:
        safety = Policy.from_option(value("allow-destructive"), value("allow-overwrite"))
    except TargetError as exc:
        raise UsageError("allow-destructive", str(exc)) from None
    hosts = value("hosts")
    try:
        engine = backends.engine_for(hooks.get_plugin_manager(), value("backend"),
                                     parse_hosts(hosts) if hosts else ())
    except (backends.BackendError, ValueError) as exc:
        raise UsageError("backend", str(exc)) from None
    return RunSettings(json_path, value("filename"), save, gate, safety, engine, overridden,
                       history, labels, markdown=value("markdown"),
                       openmetrics=value("openmetrics"), facts=facts)


def save_baseline(value: Callable[[str], Any], prefix: str = "--") -> SaveBaseline | None:
    """The baseline a run saves (``save-baseline`` or ``save-baseline-all``), if any;
    UsageError when both are given."""
    from iogate.baseline import SaveBaseline

    passed, every = value("save-baseline"), value("save-baseline-all")
    if passed and every:
        raise UsageError("save-baseline-all", f"{prefix}save-baseline stores the cases that "
                         f"passed, {prefix}save-baseline-all every case measured in full: "
                         "give one of them")
    if every:
        return SaveBaseline(every, include_failed=True)
    return SaveBaseline(passed) if passed else None


def check_outputs(json_path: str | None, baseline_path: str | None, *,
                  markdown: str | None = None, openmetrics: str | None = None,
                  baseline_option: str = "save-baseline", history: str | None = None) -> None:
    """Refuse, before anything runs, a results file (and its journal), a baseline to save
    (named by ``baseline_option``) or a summary that could not be written
    (:mod:`iogate.files`); an OutputError naming the option. Each is claimed as an output
    of the run (:func:`iogate.files.claiming`), and so is a SQLite ``history`` store (its
    own checks are :func:`iogate.history.check_destination`'s), for :func:`check_paths`."""
    from iogate.baseline import check_merge
    from iogate.files import check_output, claim
    from iogate.history import is_url
    from iogate.report import journal_path

    if json_path:
        check_output(json_path, "json")
        check_output(journal_path(json_path), "json", "the journal of")
    if baseline_path:
        check_output(baseline_path, baseline_option)
        check_merge(baseline_path, baseline_option)
    if markdown:
        check_output(markdown, "markdown")
    if openmetrics:
        check_output(openmetrics, "openmetrics")
    if history and not is_url(history):
        claim(history, "history")


def check_paths(outputs: Sequence[Claim], cases: Sequence[Case],
                filename: str | None) -> None:
    """The one check, before anything runs, that no output of a run is written over another
    or over a file the run reads or writes: ``outputs`` (those claimed while the settings
    were made and the plugins configured: :func:`iogate.files.claiming`) and the
    ``verify_state`` file of each of ``cases``, against one another and against the suites
    and the targets of the cases (``filename``: ``--filename``). Each verify_state file is
    checked as an output too. An OutputError (a :class:`iogate.files.ClashError` for a
    clash)."""
    from iogate.files import OutputError, check_apart, check_output

    states, files = case_files(cases, filename)
    for state in states:
        try:
            check_output(state.path)
        except OutputError as exc:
            raise OutputError(exc.path, f"{state.role}: {exc.problem}") from None
    check_apart([*outputs, *states], files)


def case_files(cases: Sequence[Case], filename: str | None
               ) -> tuple[list[Claim], list[Claim]]:
    """The files ``cases`` use, as :class:`iogate.files.Claim`: their ``verify_state``
    files, and the others (their suites, and their targets as a run computes them,
    :func:`iogate.plan.targets_of`, ``filename`` being ``--filename``)."""
    from iogate.files import Claim
    from iogate.plan import targets_of

    states = [Claim(c.workload.verify_state, role=f"the verify_state file of {case_id(c)} "
                    f"({c.workload.verify_state})") for c in cases if c.workload.verify_state]
    files = [Claim(str(path), role=f"the suite file {path}")
             for path in dict.fromkeys(c.path for c in cases)]
    with targets_of(cases, filename) as targets:
        files += [Claim(f, role=f"the target of {case_id(c)} ({f})")
                  for c, paths in zip(cases, targets, strict=True) for f in paths]
    return states, files


def make_gate(baseline: str | None, match: Sequence[str] | None, *, alpha: float,
              min_effect_pct: float, recording: bool, history: str | None = None) -> Any:
    """The gate of a run (:class:`iogate.judge.Gate`): the baseline file judged against (if
    any) with the entries it may choose (``KEY=VALUE`` texts), the significance and minimum
    effect of a regression, whether the run records a baseline, and the history store
    judged against (``history``: the one the run is recorded in). Raises BaselineError
    for an unusable file or criteria no entry meets, ValueError for bad settings."""
    from iogate.baseline import Baseline, parse_match
    from iogate.judge import Gate

    criteria = parse_match(match or ())
    if criteria and not baseline:
        raise ValueError("--baseline-match chooses entries of a baseline: pass --baseline FILE "
                         "(pytest: --iogate-baseline FILE)")
    loaded = Baseline.load(baseline) if baseline else None
    return Gate(loaded, alpha, min_effect_pct, recording=recording, match=criteria,
                history=history)
