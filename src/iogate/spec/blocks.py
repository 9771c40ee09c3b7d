"""Block sizes and where requests align: bs, bsrange, bssplit and blockalign, each with its
parser and its JSON schema.

Each is per direction as in fio (one value for both, 'read,write', or a mapping); a
bssplit's entries share 100 percent, those without a percentage splitting the remainder
(:func:`shares_of`). The rules between these keys (one of them per job, direct I/O's
alignment) are :mod:`iogate.spec.rules`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, WithJsonSchema

from iogate import expr
from iogate.engine.limits import BS_ENTRIES_MAX
from iogate.expr import shown
from iogate.spec.fields import (
    SIZE_SCHEMA,
    STRICT,
    PositiveSize,
    Size,
    describe_input,
    exact_pct,
    format_pct,
    pct_number,
    per_direction,
    quantity,
)
from iogate.units import format_size, format_size_exact, parse_size

# -- block sizes --------------------------------------------------------------------------

# A direction's block size when the job gives none, as in fio.
DEFAULT_BS = 4096
# The keys that give block sizes, most specific first; a job gives one of them.
BS_KEYS = ("bssplit", "bsrange", "bs")


def positive_size(what: str) -> Callable[[Any], int]:
    """The validator of a size above 0, such as a block size; ``what`` names it."""
    parse = quantity(what, "4k", parse_size, expr.SIZE)

    def validate(value: Any) -> int:
        n = parse(value)
        if n == 0:
            raise ValueError(f"{what} must be greater than 0")
        return n
    return validate


class BlockSizes(BaseModel):
    """Block size per direction, in bytes."""

    model_config = STRICT
    read: PositiveSize = DEFAULT_BS
    write: PositiveSize = DEFAULT_BS


BlockSize = Annotated[BlockSizes, BeforeValidator(
    lambda v: per_direction(v, "block sizes", positive_size("a block size"), DEFAULT_BS)),
    WithJsonSchema({
        "anyOf": [
            SIZE_SCHEMA,
            {"type": "string", "pattern": r"^[^,]*,[^,]*$",
             "description": "read,write block sizes as in fio, e.g. '4k,64k'"},
            {"type": "object", "additionalProperties": False,
             "properties": {"read": SIZE_SCHEMA, "write": SIZE_SCHEMA}},
        ],
        "description": "block size: one size for both directions, 'read,write', or a mapping",
    })]


class BsRange(BaseModel):
    """Request sizes drawn uniformly among the multiples of ``lo`` in [lo, hi]."""

    model_config = STRICT
    lo: PositiveSize
    hi: PositiveSize


def _bs_range(value: Any) -> Any:
    if isinstance(value, (Mapping, BaseModel)):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a range like '1k-16k', got {describe_input(value)}")
    parts = value.split("-")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ValueError(f"'{shown(value)}' is not a range: write 'MIN-MAX', e.g. '1k-16k'")
    lo, hi = (positive_size("a block size")(p.strip()) for p in parts)
    if lo > hi:
        raise ValueError(f"'{shown(value)}': the minimum ({format_size(lo)}) is above the maximum "
                         f"({format_size(hi)})")
    if hi % lo:
        raise ValueError(f"'{shown(value)}': the maximum ({format_size(hi)}) must be a multiple of "
                         f"the minimum ({format_size(lo)})")
    return {"lo": lo, "hi": hi}


RangeValue = Annotated[BsRange, BeforeValidator(_bs_range)]
_DEFAULT_RANGE = {"lo": DEFAULT_BS, "hi": DEFAULT_BS}


class BsRanges(BaseModel):
    """bsrange per direction."""

    model_config = STRICT
    read: RangeValue = BsRange(lo=DEFAULT_BS, hi=DEFAULT_BS)
    write: RangeValue = BsRange(lo=DEFAULT_BS, hi=DEFAULT_BS)


_RANGE_SCHEMA = {"type": "string", "pattern": r"^[^-,]+-[^-,]+$"}
BsRangeField = Annotated[BsRanges, BeforeValidator(
    lambda v: per_direction(v, "ranges", _bs_range, _DEFAULT_RANGE)), WithJsonSchema({
        "anyOf": [{"type": "string", "pattern": r"^[^,]+(,[^,]*)?$"},
                  {"type": "object", "additionalProperties": False,
                   "properties": {"read": _RANGE_SCHEMA, "write": _RANGE_SCHEMA}}],
        "description": "block size range: '1k-16k', per direction '1k-4k,8k-64k' or a mapping",
    })]


class BsShare(BaseModel):
    """One bssplit entry: a block size and its percentage (None: a share of the remainder)."""

    model_config = STRICT
    bs: PositiveSize
    pct: Annotated[float, Field(ge=0, le=100)] | None = None


def _bssplit_text(text: str) -> list[dict[str, Any]]:
    """fio's ``4k/10:64k/50:32k`` for one direction."""
    out: list[dict[str, Any]] = []
    for raw in text.split(":"):
        entry = raw.strip()
        if not entry:
            raise ValueError(f"'{shown(text)}': empty entry; write 'SIZE/PERCENT' separated "
                             "by ':'")
        size, slash, pct = entry.partition("/")
        try:
            bs = positive_size("a block size")(size.strip())
        except ValueError as exc:
            raise ValueError(f"bssplit entry '{shown(entry)}': {exc}") from None
        item: dict[str, Any] = {"bs": bs}
        if slash and pct.strip():
            item["pct"] = pct_number(pct, f"bssplit entry '{shown(entry)}'")
        out.append(item)
    return out


def _bssplit_direction(value: Any) -> Any:
    return _bssplit_text(value) if isinstance(value, str) else value


def _check_shares(entries: list[BsShare] | None) -> list[BsShare] | None:
    if entries is None:
        return None
    if not entries:
        raise ValueError("needs at least one entry")
    if len(entries) > BS_ENTRIES_MAX:
        raise ValueError(f"at most {BS_ENTRIES_MAX} entries, got {len(entries)}")
    seen: set[int] = set()
    for e in entries:
        if e.bs in seen:
            raise ValueError(f"block size {format_size_exact(e.bs)} is listed twice")
        seen.add(e.bs)
    given = sum((exact_pct(e.pct) for e in entries if e.pct is not None), Fraction(0))
    blanks = sum(1 for e in entries if e.pct is None)
    if blanks and given > 100:
        raise ValueError(f"the percentages given add up to {format_pct(given)}, above 100")
    if blanks and given == 100:
        raise ValueError("the percentages given already add up to 100: the entries without "
                         "one would get nothing")
    if not blanks and given != 100:
        raise ValueError(f"the percentages add up to {format_pct(given)}, not 100")
    return entries


Shares = Annotated[list[BsShare] | None, BeforeValidator(_bssplit_direction),
                   AfterValidator(_check_shares)]


def shares_of(entries: list[BsShare]) -> list[tuple[int, Fraction]]:
    """Each entry's exact share in percent; entries without one split the remainder equally."""
    given = sum((exact_pct(e.pct) for e in entries if e.pct is not None), Fraction(0))
    blanks = sum(1 for e in entries if e.pct is None)
    rest = (100 - given) / blanks if blanks else Fraction(0)
    return [(e.bs, exact_pct(e.pct) if e.pct is not None else rest) for e in entries]


class BsSplit(BaseModel):
    """bssplit per direction; None: that direction uses the default block size."""

    model_config = STRICT
    read: Shares = None
    write: Shares = None


def split_per_direction(value: Any, example: str, entry: str) -> Any:
    """A split given once for both directions (text or a list), as 'read,write' text, or as
    a mapping per direction: the mapping."""
    if isinstance(value, (Mapping, BaseModel)):
        return value
    if isinstance(value, list):
        return {"read": value, "write": value}
    if isinstance(value, str):
        parts = value.split(",")
        if len(parts) > 2:
            raise ValueError(f"'{shown(value)}': give at most two splits, 'read,write'")
        if len(parts) == 1:
            return {"read": value, "write": value}
        return {"read": parts[0] if parts[0].strip() else None,
                "write": parts[1] if parts[1].strip() else None}
    raise ValueError(f"expected a split like '{example}' or a list of {{{entry}}}, got "
                     f"{describe_input(value)}")


def _bssplit(value: Any) -> Any:
    return split_per_direction(value, "4k/10:64k/90", "bs: SIZE, pct: PERCENT")


_SHARES_SCHEMA = {"anyOf": [
    {"type": "string"},
    {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                "required": ["bs"],
                                "properties": {"bs": SIZE_SCHEMA,
                                               "pct": {"type": "number", "minimum": 0,
                                                       "maximum": 100}}}}]}
BsSplitField = Annotated[BsSplit, BeforeValidator(_bssplit), WithJsonSchema({
    "anyOf": [*_SHARES_SCHEMA["anyOf"],
              {"type": "object", "additionalProperties": False,
               "properties": {"read": _SHARES_SCHEMA, "write": _SHARES_SCHEMA}}],
    "description": "block size mix: fio's '4k/10:64k/50:32k/40' (per direction with a "
                   "comma) or a list of {bs, pct}; entries without pct share the remainder",
})]


# -- alignments ---------------------------------------------------------------------------

class Alignments(BaseModel):
    """blockalign per direction; 0: the direction's smallest block size."""

    model_config = STRICT
    read: Size = 0
    write: Size = 0


BlockAlign = Annotated[Alignments, BeforeValidator(
    lambda v: per_direction(v, "alignments", positive_size("blockalign"), 0)),
    WithJsonSchema({"anyOf": [SIZE_SCHEMA, {"type": "string", "pattern": r"^[^,]*,[^,]*$"},
                              {"type": "object", "additionalProperties": False,
                               "properties": {"read": SIZE_SCHEMA, "write": SIZE_SCHEMA}}],
                    "description": "alignment of random offsets, per direction like bs"})]
