"""Suite files in, test cases out: load, expand variables, validate, report every problem.

:func:`load_suite` is the entry point. It never stops at the first mistake: every problem
in a file is collected into one :class:`~iogate.errors.SuiteError`, each located as
``file:line:col: path: message``.

Keys set on the command line (``--set``, :mod:`iogate.spec.overrides`) are the last layer
of every workload's keys: defaults, then the workload, then its sweep point, then those.

A workload with ``sweep:`` becomes one case per point (:mod:`iogate.spec.sweep`): the
workload is expanded again for each point, its variables winning over the environment. A
suite makes at most :data:`MAX_WORKLOADS` cases, counted before any sweep is expanded.

Messages quote what was written cut short and with control characters escaped
(:func:`iogate.expr.shown`), whatever the input.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iogate.errors import Problem, SuiteError
from iogate.expect import Expectation, ExpectationError, parse_expectation
from iogate.expr import printable, shown
from iogate.spec.contradictions import contradictions, impossible
from iogate.spec.loader import (
    MarkedList,
    MarkedMap,
    PathKey,
    format_path,
    load_yaml_lenient,
    mark_of,
    read_suite_text,
)
from iogate.spec.models import (
    EXCLUSIVE_GROUPS,
    EXIT_MASK_JOBS,
    STEP_INHERITS,
    WITHOUT_RULES,
    Defaults,
    PreconditionStep,
    RepeatRange,
    SteadyState,
    SuiteFile,
    Workload,
)
from iogate.spec.overrides import Overrides
from iogate.spec.rules import (
    UNMEASURABLE_KEYS,
    mix_warnings,
    unmeasurable,
    verifies,
    workload_rules,
)
from iogate.spec.sweep import MAX_POINTS, SweepPoint, read_sweep, sweep_size
from iogate.spec.translate import FieldError, fields_for, translate
from iogate.spec.variables import expand_tree
from iogate.units import format_duration

__all__ = [
    "MAX_WORKLOADS",
    "Case",
    "LoadedSuite",
    "load_suite",
    "load_suite_text",
    "validate_paths",
]

# Workloads of one suite, each point of a sweep counted: a suite beyond this is a mistake
# (a sweep of too many variables), and loading it would take seconds per ten thousand.
MAX_WORKLOADS = 10_000


@dataclass(frozen=True)
class Case:
    """One workload of a suite (one point of a sweep), ready to run: validated, defaults
    merged, variables expanded."""

    id: str  # the workload's name; with a sweep, 'name[bs:4k-iodepth:32]' (iogate.ids)
    suite_name: str
    path: Path
    line: int  # 1-based line where the workload starts
    workload: Workload
    expectations: list[Expectation] = field(default_factory=list)
    # Judged on each host of a fleet alone (and on this machine, as one host, without one).
    per_host_expectations: list[Expectation] = field(default_factory=list)
    # metric text -> (line number, that line of the file), to quote the user's own words
    # The suite's text of each line an expectation was written on (expect and per_host),
    # as it was read: reports quote it without reading the file again.
    source_lines: dict[int, str] = field(default_factory=dict)
    # Cases of one group run together in one engine session; None: the case runs alone.
    group: str | None = None
    # Run in order before the workload, not measured; each one ``loops`` times.
    preconditions: list[PreconditionStep] = field(default_factory=list)
    base_name: str = ""  # the workload's name, the same for every point of a sweep
    sweep_point: dict[str, str] = field(default_factory=dict)  # variable -> value as written
    repeat: int = 1  # runs of the case; expectations judge a statistic over them
    # adaptive repeats: runs at most, more than ``repeat`` until every statistical check is
    # decided (iogate.judge); ``repeat`` when the number is fixed
    repeat_max: int = 0
    fail_fast: bool = False  # stop as soon as a windowed expectation can no longer pass
    steady_state: SteadyState | None = None

    __hash__ = None  # type: ignore[assignment]  # holds lists and dicts


@dataclass
class LoadedSuite:
    name: str
    path: Path
    cases: list[Case]
    description: str | None = None
    # What is valid but likely not what was meant (rates that set another mix than the
    # rwmixread beside them), located like problems; the commands print them.
    warnings: list[Problem] = field(default_factory=list)


class _Collector:
    """Turns locations in the document into Problems, once each."""

    def __init__(self, filename: str, tree: Any) -> None:
        self.filename = filename
        self.tree = tree
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []
        self.unexpanded: set[str] = set()  # paths whose variables failed to expand
        self.reported = 0  # calls to add, repeated problems included

    def add(self, path: tuple[PathKey, ...], message: str, *, value: bool = False) -> None:
        self.reported += 1
        line, col = mark_of(self.tree, path, value=value)
        # Messages quote what was written; no control character reaches a terminal raw.
        problem = Problem(self.filename, line, col, format_path(path), printable(message))
        # A value left unexpanded would only fail validation again: say it once.
        if problem not in self.problems and problem.path not in self.unexpanded:
            self.problems.append(problem)

    def warn(self, path: tuple[PathKey, ...], message: str) -> None:
        """A warning at ``path``, once (the points of a sweep often say the same)."""
        line, col = mark_of(self.tree, path)
        warning = Problem(self.filename, line, col, format_path(path), printable(message))
        if warning not in self.warnings:
            self.warnings.append(warning)

    def add_errors(self, errors: Iterable[FieldError],
                   origin: Mapping[str, tuple[PathKey, ...]], base: tuple[PathKey, ...],
                   forced: Collection[str] = ()) -> None:
        """Add errors found in a merged workload; ``origin`` says where each key came from,
        ``forced`` which keys the command line set (reported at the workload they meet)."""
        for err in errors:
            named = [k for k in (*err.blame, *err.loc[:1]) if k in forced]
            if named:
                keys = ", ".join(dict.fromkeys(str(k) for k in named))
                err = err._replace(message=f"{err.message} ({keys} set on the command line)")
            if err.blame:
                # Fields written in the workload (or its sweep), not in the defaults.
                own = [f for f in err.blame if origin.get(f, ())[:len(base)] == base]
                if own:
                    where = origin[own[0]]
                    self.add(where, err.message, value=where != (*base, own[0]))
                else:  # every field involved came from the defaults: blame the workload
                    self.add(base, err.message)
                continue
            head = err.loc[0] if err.loc else None
            where = origin.get(head, (*base, head)) if isinstance(head, str) else base
            self.add(where + tuple(err.loc[1:]), err.message, value=not err.about_key)


def _plain(node: Any) -> Any:
    """Marked containers to plain ones, so that validation sees only data."""
    if isinstance(node, Mapping):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _source_line(lines: list[str], line: int) -> str:
    return lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""


def load_suite(path: str | Path, env: Mapping[str, str] | None = None,
               overrides: Overrides | None = None) -> LoadedSuite:
    """Load, expand and validate a suite file, with ``overrides`` (``--set``) over every
    workload's keys; raise SuiteError listing every problem."""
    path = Path(path)
    text = read_suite_text(path)  # SuiteError, located, for unreadable or undecodable files
    return load_suite_text(text, path, env, overrides)


def load_suite_text(text: str, path: str | Path, env: Mapping[str, str] | None = None,
                    overrides: Overrides | None = None) -> LoadedSuite:
    """Like :func:`load_suite`, for a suite already read (or made, e.g. from a fio job
    file); ``path`` names it in messages and in the cases."""
    overrides = overrides or Overrides()
    path = Path(path)
    filename = str(path)
    # Workloads beyond the limit are refused as they are read; sweeps are counted below.
    root, yaml_problems = load_yaml_lenient(text, filename,
                                            max_items={"workloads": MAX_WORKLOADS})
    out = _Collector(filename, root)
    out.problems += yaml_problems
    sweeps: dict[int, list[SweepPoint]] = {}
    raw_workloads = root.get("workloads")
    if isinstance(raw_workloads, MarkedList):
        _check_count(out, raw_workloads)
        for i, raw in enumerate(raw_workloads):
            if isinstance(raw, MarkedMap) and raw.get("sweep") is not None:
                sweeps[i] = read_sweep(out.add, raw, ("workloads", i), filename, env)
    tree, expansion_problems = expand_tree(
        root, filename, env, skip=frozenset(("workloads", i) for i in sweeps))
    out.tree = tree
    _add_expansion(out, expansion_problems)
    # Each point of a sweep is its own expansion of the workload as written.
    expanded: dict[int, list[tuple[SweepPoint, MarkedMap]]] = {}
    for i, points in sweeps.items():
        expanded[i] = []
        for point in points:
            entry, problems = expand_tree(
                root["workloads"][i], filename, env, variables=point.variables,
                base=("workloads", i), skip=frozenset({("workloads", i, "sweep")}))
            _add_expansion(out, problems)
            expanded[i].append((point, entry))
        if expanded[i]:  # the file is validated with the first point in place
            tree["workloads"][i] = expanded[i][0][1]
    data = _plain(tree)

    try:
        SuiteFile.model_validate(data)
    except ValidationError as exc:
        for err in translate(exc, data):
            if len(err.loc) > 1 and err.loc[0] == "workloads" and err.loc[1] in sweeps \
                    and not expanded[err.loc[1]]:
                continue  # a broken sweep: its own problems say enough
            out.add(err.loc, err.message, value=not err.about_key)

    workloads = tree.get("workloads")
    defaults = data.get("defaults") if isinstance(data.get("defaults"), dict) else {}
    cases: list[Case] = []
    placed: list[tuple[int, Case]] = []  # each case with its workload's index in the file
    first_line: dict[str, int] = {}
    lines = text.splitlines()
    if isinstance(workloads, MarkedList):
        for i, entry in enumerate(data["workloads"]):
            if not isinstance(entry, dict):
                continue  # already reported by the file-level validation
            if i in sweeps:
                for point, point_entry in expanded[i]:
                    # Without its sweep, which every point holds whole and _case drops.
                    own = {k: v for k, v in point_entry.items() if k != "sweep"}
                    case = _case(out, tree, i, _plain(own), defaults, path, lines,
                                 data.get("suite"), overrides, point)
                    if case is not None:
                        cases.append(case)
                        placed.append((i, case))
                case = None
            else:
                case = _case(out, tree, i, entry, defaults, path, lines, data.get("suite"),
                             overrides)
            name = entry.get("name")
            if isinstance(name, str):
                if name in first_line:
                    out.add(("workloads", i, "name"),
                            f"workload name '{name}' is already used on line {first_line[name]}",
                            value=True)
                else:
                    first_line[name] = mark_of(tree, ("workloads", i, "name"))[0]
            if case is not None:
                cases.append(case)
                placed.append((i, case))
    _check_exitall(out, placed, first_line)
    _check_verify_state(out, placed)

    if out.problems:
        raise SuiteError(sorted(out.problems, key=lambda p: (p.line, p.col)))
    description = data.get("description")
    return LoadedSuite(data["suite"], path, cases, description,
                       sorted(out.warnings, key=lambda p: (p.line, p.col)))


def _check_count(out: _Collector, workloads: MarkedList) -> None:
    """Refuse a suite of more than MAX_WORKLOADS cases before any sweep is expanded."""
    sizes = [sweep_size(w.get("sweep")) if isinstance(w, MarkedMap) else 1 for w in workloads]
    too_big = [i for i, n in enumerate(sizes) if n > MAX_POINTS]
    for i in too_big:  # the same words as read_sweep, which would say it later
        out.add(("workloads", i, "sweep"), f"the sweep has {sizes[i]} points; at most "
                f"{MAX_POINTS}", value=True)
    total = sum(sizes)
    if not too_big and total > MAX_WORKLOADS:
        largest = max(range(len(sizes)), key=lambda i: sizes[i])
        entry = workloads[largest]
        name = entry.get("name") if isinstance(entry, MarkedMap) else None
        named = f" '{shown(name)}'" if isinstance(name, str) else ""
        biggest = (f"; the largest, workloads[{largest}]{named} on line "
                   f"{mark_of(out.tree, ('workloads', largest))[0]}, makes {sizes[largest]}"
                   if sizes[largest] > 1 else "")
        out.add(("workloads",), f"the suite makes {total} workloads, sweep points counted; "
                f"a suite may have at most {MAX_WORKLOADS}{biggest}: split the suite or sweep "
                "fewer values")
    if too_big or total > MAX_WORKLOADS:
        raise SuiteError(sorted(out.problems, key=lambda p: (p.line, p.col)))


def _check_verify_state(out: _Collector, placed: list[tuple[int, Case]]) -> None:
    """verify_state belongs to a verified write workload on a named target, and each case
    has a state file of its own (a sweep's points name theirs with a variable)."""
    owner: dict[str, str] = {}
    for i, case in placed:
        w = case.workload
        if w.verify_state is None:
            continue
        where = ("workloads", i, "verify_state")
        if not verifies(w):
            out.add(where, "verify_state records the writes that verify checks: it needs "
                    "verify, e.g. 'verify: crc32c'")
        elif w.filename is None:
            out.add(where, "verify_state needs a filename: the blocks are checked on that "
                    "target after a crash, and a temporary file does not outlive the run")
        key = os.path.abspath(w.verify_state)
        if key in owner and owner[key] != case.id:
            out.add(where, f"'{shown(w.verify_state)}' is also the state file of "
                    f"'{owner[key]}': each workload and sweep point needs its own, e.g. "
                    "'state-${bs}.bin' in a sweep over bs", value=True)
        owner.setdefault(key, case.id)


def _check_exitall(out: _Collector, placed: list[tuple[int, Case]],
                   written: Collection[str]) -> None:
    """exitall's list names workloads that run in the same session as its own: its group's
    (or, without a group, only itself), at most EXIT_MASK_JOBS of them."""
    group_of = {c.base_name: c.group for _, c in placed}
    line_of = {c.base_name: c.line for _, c in placed}
    size = Counter(c.group for _, c in placed if c.group is not None)
    seen: set[int] = set()
    for i, case in placed:
        names = case.workload.exitall
        if not isinstance(names, list) or i in seen:
            continue
        seen.add(i)  # the points of a sweep say it once
        where = ("workloads", i, "exitall")
        if case.group is not None and size[case.group] > EXIT_MASK_JOBS:
            out.add(where, f"group '{case.group}' has {size[case.group]} workloads (sweep "
                    f"points counted); an exitall list can name workloads of a group of at "
                    f"most {EXIT_MASK_JOBS}: use exitall: true, or split the group")
        for k, name in enumerate(names):
            if name == case.base_name:
                continue
            if name not in written:
                out.add((*where, k), f"no workload named '{name}' in this suite", value=True)
            elif name not in group_of:
                continue  # an invalid workload: its own problems say enough
            elif case.group is None:
                out.add((*where, k), f"'{name}' does not run with this workload, which has no "
                        f"group: exitall stops only workloads of its own group; put both in the "
                        f"same group", value=True)
            elif group_of[name] != case.group:
                other = group_of[name]
                out.add((*where, k), f"'{name}' (line {line_of[name]}) is "
                        + (f"in group '{other}'" if other else "in no group")
                        + f", not in this workload's group '{case.group}': exitall stops only "
                        f"workloads that run with it", value=True)


def _without_replaced(outer: Mapping[str, Any], inner: Mapping[str, Any]) -> dict[str, Any]:
    """``outer`` minus the keys that a key of ``inner`` replaces (``bssplit`` replaces ``bs``)."""
    dropped = {k for group in EXCLUSIVE_GROUPS if group & inner.keys() for k in group}
    return {k: v for k, v in outer.items() if k not in dropped}


def _add_expansion(out: _Collector, problems: list[Problem]) -> None:
    for p in problems:
        if p not in out.problems:
            out.problems.append(p)
        out.unexpanded.add(p.path)


def _case(out: _Collector, tree: MarkedMap, i: int, entry: dict[str, Any],
          defaults: dict[str, Any], path: Path, lines: list[str], suite_name: Any,
          overrides: Overrides, point: SweepPoint | None = None) -> Case | None:
    base: tuple[PathKey, ...] = ("workloads", i)
    entry = {k: v for k, v in entry.items() if k != "sweep"}
    origin: dict[str, tuple[PathKey, ...]] = {}
    if point is not None:  # swept workload keys the workload does not write itself
        for key, (value, where) in point.keys.items():
            if key not in entry:
                entry[key] = value
                origin[key] = where
    inherited = _without_replaced(
        {k: v for k, v in defaults.items() if k in Defaults.model_fields}, entry)
    merged = {**inherited, **entry}
    origin.update({k: ("defaults", k) for k in inherited})
    origin.update({k: (*base, k) for k in entry if k not in origin})
    # The command line's keys come last; their values were checked alone when given
    # (iogate.spec.overrides), so what is left to say is about the workload they meet.
    forced = overrides.for_workload()
    merged = {**_without_replaced(merged, forced), **forced}
    origin.update(dict.fromkeys(forced, base))
    steps = merged.pop("precondition", None)

    problems_before = out.reported
    workload: Workload | None = None
    partial: Workload | None = None  # without the keys found wrong: for the other checks
    try:
        workload = partial = Workload.model_validate(merged)
    except ValidationError as exc:
        errors = translate(exc, merged, lambda loc: fields_for(("workloads", 0, *loc)))
        out.add_errors(errors, origin, base, forced)
        partial = _the_rest(out, merged, errors, origin, base, forced)

    preconditions: list[PreconditionStep] = []
    if isinstance(steps, list):
        where = origin.get("precondition", (*base, "precondition"))
        for j, step in enumerate(steps):
            if isinstance(step, dict):  # anything else: reported by the file's validation
                checked = _precondition(out, step, merged, origin, (*where, j),
                                        overrides.for_step())
                if checked is not None:
                    preconditions.append(checked)

    source_lines: dict[int, str] = {}
    expectations = _expectations(out, tree, base, "expect", entry, [], lines, source_lines,
                                 partial)
    per_host = _expectations(out, tree, base, "per_host", entry, expectations, lines,
                             source_lines, partial)

    if workload is not None:
        for blame, message in mix_warnings(workload, merged.keys()):
            own = [f for f in blame if origin.get(f, ())[:len(base)] == base]
            out.warn(origin[own[0]] if own else base, message)

    if workload is None or out.reported > problems_before or not isinstance(
            suite_name, str):
        return None
    return Case(id=workload.name if point is None else f"{workload.name}[{point.label}]",
                suite_name=suite_name, path=path,
                line=mark_of(tree, base)[0], workload=workload, expectations=expectations,
                per_host_expectations=per_host,
                source_lines=source_lines, group=workload.group, preconditions=preconditions,
                base_name=workload.name,
                sweep_point={} if point is None else dict(point.variables),
                repeat=_runs(workload.repeat)[0], repeat_max=_runs(workload.repeat)[1],
                fail_fast=workload.fail_fast,
                steady_state=workload.steady_state)


def _runs(repeat: RepeatRange) -> tuple[int, int]:
    """The fewest and the most runs of a case."""
    return repeat.min, repeat.max


def _the_rest(out: _Collector, merged: dict[str, Any], errors: list[FieldError],
              origin: Mapping[str, tuple[PathKey, ...]], base: tuple[PathKey, ...],
              forced: Collection[str]) -> Workload | None:
    """A workload with keys found wrong is checked further without them, so that one pass
    reports every problem: the rules between its other keys, here, and what its
    expectations ask of it, with the workload returned (None when even that is impossible).
    A rule that concerns a key left out is not reported: its verdict would rest on the
    key's default, not on what was written."""
    wrong = {str(e.loc[0]) for e in errors if e.loc and not e.blame}
    rest = {k: v for k, v in merged.items() if k not in wrong}
    try:
        workload = Workload.model_validate(rest, context={WITHOUT_RULES: True})
    except ValidationError:
        return None  # a required key is among the wrong ones
    if wrong:  # pydantic checks the rules only once every key is right: they are not said yet
        rules = [FieldError((blame[0],), message, tuple(blame))
                 for blame, message in workload_rules(workload) if not wrong & set(blame)]
        out.add_errors(rules, origin, base, forced)
    return None if wrong & set(UNMEASURABLE_KEYS) else workload


def _expectations(out: _Collector, tree: MarkedMap, base: tuple[PathKey, ...], key: str,
                  entry: Mapping[str, Any], earlier: list[Expectation], lines: list[str],
                  source_lines: dict[int, str], workload: Workload | None) -> list[Expectation]:
    """The expectations under ``key`` (expect or per_host) of a workload; ``earlier`` are
    those already read from another key, whose windows these must agree with. Each must be
    one the workload (when it validated) can measure, and one some run can meet
    (:mod:`iogate.spec.contradictions`): alone, and beside the others on its metric."""
    expectations: list[Expectation] = []
    placed: list[tuple[Expectation, tuple[PathKey, ...]]] = []
    written = entry.get(key)
    if not isinstance(written, dict):
        return expectations  # anything else: reported by the file's validation
    for metric, value in written.items():
        # A list holds several comparisons on one metric: [">= 0.45", "<= 0.55"].
        many = isinstance(value, list)
        for k, text in enumerate(value if many else [value]):
            where = base + (key, metric) + ((k,) if many else ())
            try:
                exp = parse_expectation(str(metric), text)
            except ExpectationError as exc:
                out.add(where, str(exc), value=True)
                continue
            why = None if workload is None else unmeasurable(workload, exp.metric)
            if why is not None:
                out.add((*base, key, metric), why)
                continue
            if (why := impossible(exp)) is not None:
                out.add(where, why, value=True)
                continue
            line = mark_of(tree, where)[0]
            if exp.window is not None:
                # The engine cuts a job's series at one interval, so all windows share it.
                first = next((e for e in [*earlier, *expectations] if e.window is not None),
                             None)
                if first is not None and first.window is not None \
                        and first.window.interval_ns != exp.window.interval_ns:
                    out.add(where, "all windowed expectations of a workload must use one "
                            f"interval: {format_duration(first.window.interval_ns)} at line "
                            f"{first.line}, {format_duration(exp.window.interval_ns)} at "
                            f"line {line}", value=True)
                    continue
            expectations.append(replace(exp, line=line))
            placed.append((expectations[-1], where))
            source_lines[line] = _source_line(lines, line)
    for where, message in contradictions(placed):
        out.add(where, message, value=True)
    return expectations


def _precondition(out: _Collector, step: dict[str, Any], workload: dict[str, Any],
                  origin: Mapping[str, tuple[PathKey, ...]], base: tuple[PathKey, ...],
                  forced: Mapping[str, Any]) -> PreconditionStep | None:
    """Validate one step, with the keys it takes from its workload filled in and the
    command line's (``forced``) over them."""
    inherited = _without_replaced(
        {k: workload[k] for k in STEP_INHERITS if k in workload}, step)
    step_origin = {k: origin.get(k, (*base, k)) for k in inherited}
    step_origin.update({k: (*base, k) for k in step})
    step = {**_without_replaced(step, forced), **forced}
    step_origin.update(dict.fromkeys(forced, base))
    try:
        return PreconditionStep.model_validate({**inherited, **step})
    except ValidationError as exc:
        errors = translate(exc, {**inherited, **step},
                           lambda loc: fields_for(("workloads", 0, "precondition", 0, *loc)))
        out.add_errors(errors, step_origin, base, forced)
    return None


def validate_paths(paths: Iterable[str | Path], env: Mapping[str, str] | None = None,
                   overrides: Overrides | None = None) -> list[LoadedSuite]:
    """Load several suites; raise one SuiteError with the problems of all of them."""
    suites, problems = [], []
    for p in paths:
        try:
            suites.append(load_suite(p, env, overrides))
        except SuiteError as exc:
            problems += exc.problems
    if problems:
        raise SuiteError(problems)
    return suites
