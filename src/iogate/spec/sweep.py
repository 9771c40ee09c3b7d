"""Sweeps: a workload's ``sweep:`` read into the points it runs at, with every mistake located.

Two forms. A mapping of lists is the cartesian product, in the order written::

    sweep: {bs: [4k, 64k], iodepth: [1, 8, 32]}     # 6 points: 4k/1, 4k/8, ..., 64k/32

A list of mappings is the points themselves, each naming the same variables::

    sweep: [{bs: 4k, iodepth: 1}, {bs: 64k, iodepth: 32}]

A variable is used as ``${name}`` (or ``$name``) anywhere in the workload, expectations and
precondition steps included. A variable named like a job key (``bs``, ``iodepth``, ...) also
sets that key for the point, unless the workload writes the key itself using the variable
(``iodepth: ${iodepth} * 2``); writing the key without the variable is a contradiction and
an error. A variable that is neither a job key nor referenced is an error too. Values are
expanded against the environment first (``[4k, ${BIG_BS:-1m}]``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from iogate.expr import shown
from iogate.ids import point_label
from iogate.spec.fields import describe_input
from iogate.spec.loader import MarkedList, MarkedMap, PathKey
from iogate.spec.models import JobFields
from iogate.spec.variables import expand_tree, references

MAX_POINTS = 10_000
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Report = Callable[..., None]  # (path, message, *, value=False)


@dataclass(frozen=True)
class SweepPoint:
    """One point: its variables as text (for ``${...}`` and the case id) and the job keys
    it sets, with their YAML values and where each value is written."""

    variables: dict[str, str]
    keys: dict[str, tuple[Any, tuple[PathKey, ...]]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``bs:4k-iodepth:32``, the part of the case id in brackets (:mod:`iogate.ids`)."""
        return point_label(self.variables)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not (
        isinstance(value, float) and not math.isfinite(value))


# A point as read: variable -> (YAML value, path of the value in the document).
_Raw = dict[str, tuple[Any, tuple[PathKey, ...]]]


def _product(report: Report, sweep: MarkedMap, here: tuple[PathKey, ...]) -> list[_Raw]:
    if not sweep:
        report(here, "a sweep needs at least one variable", value=True)
        return []
    ok = True
    for name, values in sweep.items():
        where = (*here, name)
        if not isinstance(name, str) or not _VARIABLE.match(name):
            report(where, f"'{name}' is not a variable name: use letters, digits and '_', "
                   "not starting with a digit")
            ok = False
        elif not isinstance(values, list):
            report(where, f"expected a list of values, got {describe_input(values)}; "
                   f"write e.g. '{name}: [4k, 64k]'", value=True)
            ok = False
        elif not values:
            report(where, f"'{name}' has no values: give at least one", value=True)
            ok = False
        else:
            for j, v in enumerate(values):
                if not _scalar(v):
                    report((*where, j), f"a sweep value must be a string or a number, got "
                           f"{describe_input(v)}", value=True)
                    ok = False
    if ok:
        for name, values in sweep.items():
            texts = [_text(v) for v in values]
            for j, t in enumerate(texts):
                if t in texts[:j]:
                    report((*here, name, j), f"'{shown(t)}' is already in the values of "
                           f"'{name}'; each point must be a different case", value=True)
                    ok = False
    if not ok:
        return []
    count = math.prod(len(v) for v in sweep.values())
    if count > MAX_POINTS:
        report(here, f"the sweep has {count} points; at most {MAX_POINTS}", value=True)
        return []
    columns = [[(name, j, v) for j, v in enumerate(values)] for name, values in sweep.items()]
    return [{name: (v, (*here, name, j)) for name, j, v in combo}
            for combo in itertools.product(*columns)]


def _points(report: Report, sweep: MarkedList, here: tuple[PathKey, ...]) -> list[_Raw]:
    if not sweep:
        report(here, "a sweep needs at least one point", value=True)
        return []
    if len(sweep) > MAX_POINTS:
        report(here, f"the sweep has {len(sweep)} points; at most {MAX_POINTS}", value=True)
        return []
    out: list[_Raw] = []
    first: list[str] | None = None
    for j, point in enumerate(sweep):
        where = (*here, j)
        if not isinstance(point, Mapping) or not point:
            report(where, f"a point is a mapping of variables to values, like "
                   f"{{bs: 4k, iodepth: 1}}; got {describe_input(point)}", value=True)
            return []
        keys = list(point)
        if first is None:
            first = keys
        elif set(keys) != set(first):
            missing = [k for k in first if k not in point]
            extra = [k for k in keys if k not in first]
            what = "; ".join(part for part in (
                f"lacks {', '.join(missing)}" if missing else "",
                f"adds {', '.join(map(str, extra))}" if extra else "") if part)
            report(where, f"every point must name the same variables as the first "
                   f"({', '.join(first)}); point {j + 1} {what}", value=True)
            return []
        raw: _Raw = {}
        for name in first:
            value = point[name]
            if not isinstance(name, str) or not _VARIABLE.match(name):
                report((*where, name), f"'{name}' is not a variable name: use letters, "
                       "digits and '_', not starting with a digit")
                return []
            if not _scalar(value):
                report((*where, name), f"a sweep value must be a string or a number, got "
                       f"{describe_input(value)}", value=True)
                return []
            raw[name] = (value, (*where, name))
        out.append(raw)
    return out


def read_sweep(report: Report, workload: MarkedMap, base: tuple[PathKey, ...], filename: str,
               env: Mapping[str, str] | None) -> list[SweepPoint]:
    """The points of ``workload``'s sweep (as written, before expansion); [] if it is wrong.

    ``report(path, message, value=...)`` receives each problem.
    """
    here = (*base, "sweep")
    sweep, problems = expand_tree(workload["sweep"], filename, env, base=here)
    for p in problems:
        report(tuple(_path_of(p.path, here)), p.message, value=True)
    if problems:
        return []
    if isinstance(sweep, MarkedMap):
        raws = _product(report, sweep, here)
    elif isinstance(sweep, MarkedList):
        raws = _points(report, sweep, here)
    else:
        report(here, f"expected variables with lists of values, like "
               f"{{bs: [4k, 64k]}}, or a list of points; got {describe_input(sweep)}",
               value=True)
        return []
    if not raws:
        return []

    body = {k: v for k, v in workload.items() if k != "sweep"}
    used = references(body)
    problem = False
    for name in raws[0]:
        if name in JobFields.model_fields:
            if name in body and name not in references(body[name]):
                report((*base, name), f"'{name}' is swept, but the workload also sets it "
                       f"here; remove one, or write the value using ${{{name}}}")
                problem = True
        elif name not in used:
            report(_variable_path(sweep, here, name),
                   f"sweep variable '{name}' is never used: refer to it as ${{{name}}} in "
                   "this workload, or name it after a workload key")
            problem = True
    if problem:
        return []

    points: list[SweepPoint] = []
    seen: dict[str, _Raw] = {}
    for raw in raws:
        point = SweepPoint({k: _text(v) for k, (v, _) in raw.items()},
                           {k: raw[k] for k in raw if k in JobFields.model_fields
                            and k not in body})
        if point.label in seen:
            # Blame the value that repeats an earlier one (the point, in the list form).
            first = seen[point.label]
            where = next((at for k, (_, at) in raw.items() if at != first[k][1]), here)
            if isinstance(sweep, MarkedList):
                where = where[:-1]
            report(where, f"the point {shown(point.label, 80)} is already in the sweep; each "
                   "point must be a different case", value=True)
            problem = True
            continue
        seen[point.label] = raw
        points.append(point)
    return [] if problem else points


def sweep_size(sweep: Any) -> int:
    """How many points a sweep as written makes, before anything is expanded or checked:
    the product of the value counts, or the number of points (1 when it is malformed: its
    own problems are reported when it is read)."""
    if isinstance(sweep, Mapping):
        return math.prod(len(v) if isinstance(v, list) else 1 for v in sweep.values())
    if isinstance(sweep, list):
        return max(len(sweep), 1)
    return 1


def _variable_path(sweep: Any, here: tuple[PathKey, ...], name: str) -> tuple[PathKey, ...]:
    """Where a variable is named: its key in the mapping form, in the first point else."""
    return (*here, name) if isinstance(sweep, MarkedMap) else (*here, 0, name)


def _path_of(text: str, here: tuple[PathKey, ...]) -> tuple[PathKey, ...]:
    """A formatted path (``workloads[0].sweep.bs[1]``) back to keys, for locating it."""
    parts: list[PathKey] = []
    for m in re.finditer(r"\[(\d+)\]|([^.\[\]]+)", text):
        parts.append(int(m.group(1)) if m.group(1) is not None else m.group(2))
    return tuple(parts) or here
