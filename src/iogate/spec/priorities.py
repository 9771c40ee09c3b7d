"""I/O priorities: fio's prio and prioclass, and the command priorities cmdprio_percentage,
cmdprio_class, cmdprio and cmdprio_bssplit, each with its parser and its JSON schema.

Classes are ionice's (rt, be, idle, or 0 to 3), levels 0 (highest) to 7. cmdprio_bssplit
has bssplit's grammar (:mod:`iogate.spec.blocks`): per block size, the percentage of its
requests that carry the command priority, and optionally their class and level.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, WithJsonSchema

from iogate.engine.limits import CMDPRIO_MAX
from iogate.expr import shown
from iogate.spec.blocks import positive_size, split_per_direction
from iogate.spec.fields import (
    SIZE_SCHEMA,
    STRICT,
    Integer,
    Percent,
    PositiveSize,
    describe_input,
    exact_pct,
    format_pct,
    pct_number,
    per_direction,
    per_direction_schema,
)
from iogate.units import format_size_exact

# -- I/O priorities (fio's prio, prioclass, cmdprio_*) --------------------------------------

# ionice's class names; 0 (none) is fio's default class, which means best effort.
PRIO_CLASSES = {"none": 0, "rt": 1, "realtime": 1, "be": 2, "best-effort": 2, "idle": 3}
_CLASS_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 3},
                           {"enum": sorted(PRIO_CLASSES)}],
                 "description": "I/O priority class: 1 rt, 2 be, 3 idle (0: none, taken as "
                                "be), as ionice names them"}


def _prio_class(value: Any) -> Any:
    if isinstance(value, str):
        name = value.strip().lower()
        if name in PRIO_CLASSES:
            return PRIO_CLASSES[name]
        if name.isdigit():
            return int(name)
        raise ValueError(f"'{shown(value)}' is not an I/O priority class; use 0-3 or "
                         f"{', '.join(sorted(PRIO_CLASSES))}")
    return value


def _bounded(what: str, lo: int, hi: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{what} must be an integer from {lo} to {hi}, got "
                             f"{describe_input(value)}")
        return value
    return parse


PrioClass = Annotated[int, BeforeValidator(_prio_class), Field(ge=0, le=3),
                      WithJsonSchema(_CLASS_SCHEMA)]
PrioLevel = Annotated[Integer, Field(ge=0, le=7)]


class DirPrioPercents(BaseModel):
    """cmdprio_percentage per direction; None: that direction has none."""

    model_config = STRICT
    read: Percent | None = None
    write: Percent | None = None


class DirPrioClasses(BaseModel):
    """cmdprio_class per direction; None: rt, fio's default."""

    model_config = STRICT
    read: PrioClass | None = None
    write: PrioClass | None = None


class DirPrioLevels(BaseModel):
    """cmdprio (the level) per direction; None: 0."""

    model_config = STRICT
    read: PrioLevel | None = None
    write: PrioLevel | None = None


def _per_dir_schema(one: dict[str, Any], what: str) -> dict[str, Any]:
    return per_direction_schema(one, f"{what}: one value for both directions, fio's "
                                "'read,write', or a mapping {read, write}")


def _classes(value: Any) -> Any:
    return per_direction(value, "classes", lambda v: _prio_class(v), None)


CmdprioPercentage = Annotated[DirPrioPercents, BeforeValidator(
    lambda v: per_direction(v, "percentages", _bounded("a percentage", 0, 100), None)),
    WithJsonSchema(_per_dir_schema({"type": "integer", "minimum": 0, "maximum": 100},
                                   "share of requests, in percent, issued with the command "
                                   "priority (io_uring, libaio)"))]
CmdprioClass = Annotated[DirPrioClasses, BeforeValidator(_classes),
                         WithJsonSchema(_per_dir_schema(_CLASS_SCHEMA, "class of the command "
                                                        "priority (default rt)"))]
CmdprioLevel = Annotated[DirPrioLevels, BeforeValidator(
    lambda v: per_direction(v, "levels", _bounded("a priority level", 0, 7), None)),
    WithJsonSchema(_per_dir_schema({"type": "integer", "minimum": 0, "maximum": 7},
                                   "level of the command priority, 0 (highest) to 7"))]


class PrioShare(BaseModel):
    """One cmdprio_bssplit entry: of the requests of `bs` bytes, `pct` percent carry the
    command priority; `prio_class` and `level` default to cmdprio_class and cmdprio."""

    model_config = STRICT
    bs: PositiveSize
    pct: Annotated[float, Field(ge=0, le=100)]
    prio_class: PrioClass | None = Field(default=None, alias="class")
    level: PrioLevel | None = None


def _prio_split_text(text: str) -> list[dict[str, Any]]:
    """fio's ``4k/10:64k/50`` or ``4k/10/1/0:64k/50/3/0`` for one direction."""
    out: list[dict[str, Any]] = []
    for raw in text.split(":"):
        entry = raw.strip()
        parts = [p.strip() for p in entry.split("/")]
        if len(parts) == 5:
            raise ValueError(f"cmdprio_bssplit entry '{shown(entry)}': the form with a "
                             "priority hint (SIZE/PERCENT/CLASS/LEVEL/HINT) is newer than "
                             "fio 3.33 and not supported; drop the hint")
        if len(parts) not in (2, 4) or not all(parts):
            raise ValueError(f"cmdprio_bssplit entry '{shown(entry)}': write SIZE/PERCENT or "
                             "SIZE/PERCENT/CLASS/LEVEL, entries separated by ':'")
        where = f"cmdprio_bssplit entry '{shown(entry)}'"
        try:
            bs = positive_size("a block size")(parts[0])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        item: dict[str, Any] = {"bs": bs, "pct": pct_number(parts[1], where)}
        if len(parts) == 4:
            try:
                item["class"] = _bounded("the class", 0, 3)(_prio_class(parts[2]))
                item["level"] = _bounded("the level", 0, 7)(parts[3])
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
        out.append(item)
    return out


def _check_prio_shares(entries: list[PrioShare] | None) -> list[PrioShare] | None:
    if entries is None:
        return None
    if not entries:
        raise ValueError("needs at least one entry")
    if len(entries) > CMDPRIO_MAX:
        raise ValueError(f"at most {CMDPRIO_MAX} entries, got {len(entries)}")
    totals: dict[int, Fraction] = {}
    for e in entries:
        totals[e.bs] = totals.get(e.bs, Fraction(0)) + exact_pct(e.pct)
    for bs, total in totals.items():
        if total > 100:
            raise ValueError(f"the percentages of block size {format_size_exact(bs)} add up "
                             f"to {format_pct(total)}, above 100")
    return entries


PrioShares = Annotated[list[PrioShare] | None,
                       BeforeValidator(lambda v: _prio_split_text(v) if isinstance(v, str)
                                       else v),
                       AfterValidator(_check_prio_shares)]


class PrioSplit(BaseModel):
    """cmdprio_bssplit per direction; None: that direction has none."""

    model_config = STRICT
    read: PrioShares = None
    write: PrioShares = None


def _prio_split(value: Any) -> Any:
    return split_per_direction(value, "4k/10:64k/50",
                               "bs: SIZE, pct: PERCENT, class: CLASS, level: LEVEL")


_PRIO_SHARES_SCHEMA = {"anyOf": [
    {"type": "string"},
    {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                "required": ["bs", "pct"],
                                "properties": {"bs": SIZE_SCHEMA,
                                               "pct": {"type": "number", "minimum": 0,
                                                       "maximum": 100},
                                               "class": _CLASS_SCHEMA,
                                               "level": {"type": "integer", "minimum": 0,
                                                         "maximum": 7}}}}]}
CmdprioBsSplit = Annotated[PrioSplit, BeforeValidator(_prio_split), WithJsonSchema({
    "anyOf": [*_PRIO_SHARES_SCHEMA["anyOf"],
              {"type": "object", "additionalProperties": False,
               "properties": {"read": _PRIO_SHARES_SCHEMA, "write": _PRIO_SHARES_SCHEMA}}],
    "description": "command priority per block size: fio's '4k/10:64k/50' or "
                   "'4k/10/1/0:64k/50/3/0' (SIZE/PERCENT[/CLASS/LEVEL], per direction with a "
                   "comma) or a list of {bs, pct, class, level}",
})]
