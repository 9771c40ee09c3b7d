"""Pydantic's validation errors in plain words: (location, message) pairs for people who
write suites, not for people who write validators.

:func:`translate` turns a ValidationError into one :class:`FieldError` per location;
:func:`fields_for` knows the valid keys at each place of a suite, for "did you mean".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pydantic import ValidationError

from iogate.spec.blocks import BsShare
from iogate.spec.fields import describe_input
from iogate.spec.models import Defaults, PreconditionEntry, SteadyState, SuiteFile, WorkloadEntry
from iogate.spec.modes import DIRECTIONS

Loc = tuple[str | int, ...]
# Keys of a workload that the defaults cannot set, and keys a precondition step has not.
_WORKLOAD_ONLY = tuple(k for k in WorkloadEntry.model_fields if k not in Defaults.model_fields)
_NOT_IN_A_STEP = tuple(k for k in WorkloadEntry.model_fields
                       if k not in PreconditionEntry.model_fields)
_YAML11_BOOLS = {"on", "off", "yes", "no", "y", "n"}
_PER_DIRECTION = ("bs", "bsrange", "blockalign", "rate", "rate_iops")


def fields_for(loc: Loc) -> list[str]:
    """The valid keys of the mapping at ``loc`` (a location in the suite document)."""
    if loc and loc[-1] == "steady_state":
        return list(SteadyState.model_fields)
    if loc and loc[-1] in _PER_DIRECTION:
        return list(DIRECTIONS)
    if "bssplit" in loc[-3:-1] or (loc and loc[-1] == "bssplit"):
        return list(BsShare.model_fields)
    if "precondition" in loc:
        return list(PreconditionEntry.model_fields)
    if loc[:1] == ("defaults",):
        return list(Defaults.model_fields)
    if loc[:1] == ("workloads",):
        return list(WorkloadEntry.model_fields)
    return list(SuiteFile.model_fields)


def unknown_key_message(key: Any, valid: list[str]) -> str:
    close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.6)
    if close:
        return f"unknown key '{key}'; did you mean '{close[0]}'?"
    return f"unknown key '{key}'; valid keys are: {', '.join(valid)}"


def _message(err: Any, field: str, fields: list[str]) -> str:
    kind, value, ctx = err["type"], err.get("input"), err.get("ctx") or {}
    got = describe_input(value)
    if kind == "missing":
        return f"{field} is required"
    if kind == "extra_forbidden":
        if field in _WORKLOAD_ONLY and "name" not in fields and "rw" in fields \
                and "loops" not in fields:
            return f"'{field}' cannot be a default; set it in each workload"
        if field in _NOT_IN_A_STEP and "loops" in fields:
            return f"a precondition step has no '{field}'; it belongs to the workload"
        return unknown_key_message(field, fields)
    if kind == "int_type":
        hint = ""
        if isinstance(value, str) and re.fullmatch(r"\s*[-+]?\d+\s*", value):
            hint = (" (a leading zero makes it text: write the number without it)"
                    if value.strip().lstrip("+-").startswith("0") and value.strip() != "0"
                    else " (remove the quotes)")
        return f"expected an integer, got {got}{hint}"
    if kind == "bool_type":
        hint = " (only true and false are booleans)" if isinstance(value, str) and \
            value.lower() in _YAML11_BOOLS else ""
        return f"expected true or false, got {got}{hint}"
    if kind == "string_type":
        return f"expected a string, got {got}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected', '?')}; got {got}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {got}"
    if kind == "list_type":
        return f"expected a list, got {got}"
    if kind == "too_short":
        return "needs at least one entry"
    bounds = {"greater_than_equal": ("at least", "ge"), "greater_than": ("greater than", "gt"),
              "less_than_equal": ("at most", "le"), "less_than": ("less than", "lt")}
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {ctx.get(key)}, got {value}"
    msg = str(err.get("msg", ""))
    return msg.removeprefix("Value error, ")


def _clean_loc(data: Any, loc: Loc) -> Loc:
    """Drop pydantic's own segments (union members, validator names) from ``loc``."""
    out: list[str | int] = []
    node = data
    for i, seg in enumerate(loc):
        # Two branches, not one: each narrows node and seg for its own indexing.
        if isinstance(node, Mapping) and seg in node:  # noqa: SIM114
            node = node[seg]
        elif isinstance(node, list) and isinstance(seg, int) and 0 <= seg < len(node):
            node = node[seg]
        elif i != len(loc) - 1 or not isinstance(node, Mapping):
            continue
        out.append(seg)
    return tuple(out)


class FieldError(NamedTuple):
    """One validation error: where (a location in the validated data) and what.

    ``blame`` lists fields a cross-field rule concerns, most specific first; the caller
    reports the rule at the first of them that the user actually wrote.
    """

    loc: Loc
    message: str
    blame: tuple[str, ...] = ()
    about_key: bool = False  # the key itself is wrong (unknown, missing), not its value


def translate(exc: ValidationError, data: Any,
              fields: Callable[[Loc], list[str]] = fields_for) -> list[FieldError]:
    """The errors of ``exc`` in plain words, one per location."""
    out: list[FieldError] = []
    seen: set[Loc] = set()
    for err in exc.errors():
        if err["type"] == "workload_rules":
            out += [FieldError((blame[0],), message, tuple(blame))
                    for blame, message in err["ctx"]["rules"]]
            continue
        loc = _clean_loc(data, tuple(err["loc"]))
        if loc in seen:  # a union reports once per member; the first says enough
            continue
        seen.add(loc)
        field = str(loc[-1]) if loc else "value"
        out.append(FieldError(loc, _message(err, field, fields(loc[:-1])),
                              about_key=err["type"] in ("missing", "extra_forbidden")))
    return out
