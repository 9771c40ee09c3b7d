"""Workload keys set on the command line (``--set KEY=VALUE``), as fio's command-line options
override a job file: each value read as a YAML scalar like a value in a suite, its key and
type checked with the loader's own words before any suite is read, and applied by the loader
(:mod:`iogate.spec.suite`) as the last layer of every workload's and precondition step's
keys (defaults -> workload -> sweep point -> ``--set``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from iogate.errors import IogateError, SuiteError
from iogate.expr import shown
from iogate.spec.loader import MarkedList, MarkedMap, load_yaml_lenient
from iogate.spec.models import PreconditionEntry, WorkloadEntry
from iogate.spec.translate import fields_for, translate, unknown_key_message

__all__ = ["REFUSED", "OverrideError", "Overrides", "parse_overrides"]

# Keys a workload has that one value for every workload cannot mean anything for, and why.
REFUSED = {
    "name": "names tell workloads apart; one name for every workload cannot",
    "group": "groups say which workloads of a suite run together; set group in the suite",
    "sweep": "a sweep is written in the suite, per workload",
    "expect": "expectations are written in the suite, per workload and metric",
    "per_host": "expectations are written in the suite, per workload and metric",
    "precondition": "precondition steps are written in the suite; --set KEY also sets KEY "
                    "in every step that has it",
    "steady_state": "steady_state is a mapping, written in the suite",
}
_WORKLOAD_KEYS = tuple(k for k in WorkloadEntry.model_fields if k not in REFUSED)
_STEP_KEYS = tuple(k for k in PreconditionEntry.model_fields if k not in REFUSED)
KEYS = tuple(dict.fromkeys((*_WORKLOAD_KEYS, *_STEP_KEYS)))


class OverrideError(IogateError):
    """A ``--set`` that cannot work; the message names it as given."""


@dataclass(frozen=True)
class Overrides:
    """The keys set on the command line, in the order given (a key given twice: the last
    wins), each as a suite value."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def for_workload(self) -> dict[str, Any]:
        return {k: v for k, v in self.values.items() if k in _WORKLOAD_KEYS}

    def for_step(self) -> dict[str, Any]:
        return {k: v for k, v in self.values.items() if k in _STEP_KEYS}

    def __bool__(self) -> bool:
        return bool(self.values)


def parse_overrides(texts: Sequence[str] | None, option: str = "--set") -> Overrides:
    """The overrides of ``KEY=VALUE`` texts given with ``option``; OverrideError naming the
    first that cannot work: not KEY=VALUE, a key no workload has or one that cannot be set
    for every workload, a value that is not a scalar or not valid for its key."""
    values: dict[str, Any] = {}
    for text in texts or ():
        key, sep, raw = text.partition("=")
        key = key.strip()
        given = f"{option} {shown(text)}"
        if not sep or not key:
            raise OverrideError(f"{given}: expected KEY=VALUE, a workload key and its value "
                                "as a suite writes it (e.g. size=16m)")
        if key in REFUSED:
            raise OverrideError(f"{given}: '{key}' cannot be set for every workload: "
                                f"{REFUSED[key]}")
        if key not in KEYS:
            raise OverrideError(f"{given}: {unknown_key_message(shown(key), list(KEYS))}")
        value = _scalar(given, key, raw)
        if message := _invalid(key, value):
            raise OverrideError(f"{given}: {message}")
        values.pop(key, None)
        values[key] = value
    return Overrides(values)


def _scalar(given: str, key: str, raw: str) -> Any:
    """``raw`` read as the value of ``key`` in a suite file."""
    try:
        root, problems = load_yaml_lenient(f"{key}: {raw}\n", given)
    except SuiteError as exc:
        raise OverrideError(f"{given}: {exc.problems[0].message}") from None
    if problems:
        raise OverrideError(f"{given}: {problems[0].message}")
    value = root.get(key) if isinstance(root, MarkedMap) and len(root) == 1 else None
    if isinstance(value, (MarkedMap, MarkedList)) or key not in root:
        raise OverrideError(f"{given}: expected one value (a string, number or boolean), as "
                            "a suite writes it")
    if value is None:
        raise OverrideError(f"{given}: give a value")
    return value


def _invalid(key: str, value: Any) -> str | None:
    """What the loader says of ``value`` as ``key`` of a workload (or of a precondition
    step, for a key only steps have); None when it is valid there."""
    model, base = (WorkloadEntry, {"name": "set"}) if key in _WORKLOAD_KEYS \
        else (PreconditionEntry, {"rw": "write"})
    data = {**base, key: value}
    try:
        model.model_validate(data)
    except ValidationError as exc:
        loc = ("workloads", 0) if model is WorkloadEntry else ("workloads", 0, "precondition", 0)
        errors = translate(exc, data, lambda sub: fields_for(loc + sub))
        return "; ".join(err.message for err in errors)
    return None
