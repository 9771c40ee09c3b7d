"""Suite files in, test cases out: load, expand variables, validate, report every problem.

:func:`load_suite` is the entry point. It never stops at the first mistake: every problem
in a file is collected into one :class:`~iogate.errors.SuiteError`, each located as
``file:line:col: path: message``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from iogate.errors import Problem, SuiteError
from iogate.expect import Expectation, ExpectationError, parse_expectation
from iogate.spec.loader import (
    MarkedList,
    MarkedMap,
    PathKey,
    format_path,
    load_yaml_lenient,
    mark_of,
)
from iogate.spec.models import (
    EXCLUSIVE_GROUPS,
    STEP_INHERITS,
    Defaults,
    FieldError,
    PreconditionStep,
    SuiteFile,
    Workload,
    fields_for,
    translate,
)
from iogate.spec.variables import expand_tree

__all__ = ["Case", "LoadedSuite", "PreconditionStep", "load_suite", "validate_paths",
           "Workload"]


@dataclass(frozen=True)
class Case:
    """One workload of a suite, ready to run: validated, defaults merged."""

    id: str  # the workload's name
    suite_name: str
    path: Path
    line: int  # 1-based line where the workload starts
    workload: Workload
    expectations: list[Expectation] = field(default_factory=list)
    # metric text -> (line number, that line of the file), to quote the user's own words
    source_lines: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Cases of one group run together in one engine session; None: the case runs alone.
    group: str | None = None
    # Run in order before the workload, not measured; each one ``loops`` times.
    preconditions: list[PreconditionStep] = field(default_factory=list)

    __hash__ = None  # type: ignore[assignment]  # holds lists and dicts


@dataclass
class LoadedSuite:
    name: str
    path: Path
    cases: list[Case]
    description: str | None = None


class _Collector:
    """Turns locations in the document into Problems, once each."""

    def __init__(self, filename: str, tree: Any) -> None:
        self.filename = filename
        self.tree = tree
        self.problems: list[Problem] = []
        self.unexpanded: set[str] = set()  # paths whose variables failed to expand

    def add(self, path: tuple[PathKey, ...], message: str, *, value: bool = False) -> None:
        line, col = mark_of(self.tree, path, value=value)
        problem = Problem(self.filename, line, col, format_path(path), message)
        # A value left unexpanded would only fail validation again: say it once.
        if problem not in self.problems and problem.path not in self.unexpanded:
            self.problems.append(problem)

    def add_errors(self, errors: Iterable[FieldError],
                   origin: Mapping[str, tuple[PathKey, ...]], base: tuple[PathKey, ...]) -> None:
        """Add errors found in a merged workload; ``origin`` says where each key came from."""
        for err in errors:
            if err.blame:
                own = [f for f in err.blame if origin.get(f) == base + (f,)]
                if own:
                    self.add(base + (own[0],), err.message)
                else:  # every field involved came from the defaults: blame the workload
                    self.add(base, err.message)
                continue
            head = err.loc[0] if err.loc else None
            where = origin.get(head, base + (head,)) if isinstance(head, str) else base
            self.add(where + tuple(err.loc[1:]), err.message, value=not err.about_key)


def _plain(node: Any) -> Any:
    """Marked containers to plain ones, so that validation sees only data."""
    if isinstance(node, Mapping):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _source_line(lines: list[str], line: int) -> tuple[int, str]:
    return line, lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""


def load_suite(path: str | Path, env: Mapping[str, str] | None = None) -> LoadedSuite:
    """Load, expand and validate a suite file; raise SuiteError listing every problem."""
    path = Path(path)
    filename = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError.single(filename, f"cannot read: {exc}") from None
    root, yaml_problems = load_yaml_lenient(text, filename)
    tree, expansion_problems = expand_tree(root, filename, env)
    out = _Collector(filename, tree)
    out.problems += yaml_problems + expansion_problems
    out.unexpanded = {p.path for p in expansion_problems}
    data = _plain(tree)

    try:
        SuiteFile.model_validate(data)
    except ValidationError as exc:
        for err in translate(exc, data):
            out.add(err.loc, err.message, value=not err.about_key)

    workloads = tree.get("workloads")
    defaults = data.get("defaults") if isinstance(data.get("defaults"), dict) else {}
    cases: list[Case] = []
    first_line: dict[str, int] = {}
    lines = text.splitlines()
    if isinstance(workloads, MarkedList):
        for i, entry in enumerate(data["workloads"]):
            if not isinstance(entry, dict):
                continue  # already reported by the file-level validation
            case = _case(out, tree, i, entry, defaults, path, lines, data.get("suite"))
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

    if out.problems:
        raise SuiteError(sorted(out.problems, key=lambda p: (p.line, p.col)))
    description = data.get("description")
    return LoadedSuite(data["suite"], path, cases, description)


def _without_replaced(outer: Mapping[str, Any], inner: Mapping[str, Any]) -> dict[str, Any]:
    """``outer`` minus the keys that a key of ``inner`` replaces (``bssplit`` replaces ``bs``)."""
    dropped = {k for group in EXCLUSIVE_GROUPS if group & inner.keys() for k in group}
    return {k: v for k, v in outer.items() if k not in dropped}


def _case(out: _Collector, tree: MarkedMap, i: int, entry: dict[str, Any],
          defaults: dict[str, Any], path: Path, lines: list[str], suite_name: Any
          ) -> Case | None:
    base: tuple[PathKey, ...] = ("workloads", i)
    inherited = _without_replaced(
        {k: v for k, v in defaults.items() if k in Defaults.model_fields}, entry)
    merged = {**inherited, **entry}
    origin: dict[str, tuple[PathKey, ...]] = {k: ("defaults", k) for k in inherited}
    origin.update({k: base + (k,) for k in entry})
    steps = merged.pop("precondition", None)

    problems_before = len(out.problems)
    workload: Workload | None = None
    try:
        workload = Workload.model_validate(merged)
    except ValidationError as exc:
        errors = translate(exc, merged, lambda loc: fields_for(("workloads", 0) + loc))
        out.add_errors(errors, origin, base)

    preconditions: list[PreconditionStep] = []
    if isinstance(steps, list):
        where = origin.get("precondition", base + ("precondition",))
        for j, step in enumerate(steps):
            if isinstance(step, dict):  # anything else: reported by the file's validation
                checked = _precondition(out, step, merged, origin, where + (j,))
                if checked is not None:
                    preconditions.append(checked)

    expectations: list[Expectation] = []
    source_lines: dict[str, tuple[int, str]] = {}
    expect = entry.get("expect")
    if isinstance(expect, dict):
        for metric, value in expect.items():
            # A list holds several comparisons on one metric: [">= 0.45", "<= 0.55"].
            many = isinstance(value, list)
            for k, text in enumerate(value if many else [value]):
                where = base + ("expect", metric) + ((k,) if many else ())
                try:
                    exp = parse_expectation(str(metric), text)
                except ExpectationError as exc:
                    out.add(where, str(exc), value=True)
                    continue
                expectations.append(exp)
                source_lines[exp.metric.text] = _source_line(lines, mark_of(tree, where)[0])

    if workload is None or len(out.problems) > problems_before or not isinstance(
            suite_name, str):
        return None
    return Case(id=workload.name, suite_name=suite_name, path=path,
                line=mark_of(tree, base)[0], workload=workload, expectations=expectations,
                source_lines=source_lines, group=workload.group, preconditions=preconditions)


def _precondition(out: _Collector, step: dict[str, Any], workload: dict[str, Any],
                  origin: Mapping[str, tuple[PathKey, ...]], base: tuple[PathKey, ...]
                  ) -> PreconditionStep | None:
    """Validate one step, with the keys it takes from its workload filled in."""
    inherited = _without_replaced(
        {k: workload[k] for k in STEP_INHERITS if k in workload}, step)
    step_origin = {k: origin.get(k, base + (k,)) for k in inherited}
    step_origin.update({k: base + (k,) for k in step})
    try:
        return PreconditionStep.model_validate({**inherited, **step})
    except ValidationError as exc:
        errors = translate(exc, {**inherited, **step},
                           lambda loc: fields_for(("workloads", 0, "precondition", 0) + loc))
        out.add_errors(errors, step_origin, base)
    return None


def validate_paths(paths: Iterable[str | Path], env: Mapping[str, str] | None = None
                   ) -> list[LoadedSuite]:
    """Load several suites; raise one SuiteError with the problems of all of them."""
    suites, problems = [], []
    for p in paths:
        try:
            suites.append(load_suite(p, env))
        except SuiteError as exc:
            problems += exc.problems
    if problems:
        raise SuiteError(problems)
    return suites
