"""The field types of the suite language, each with its parser and its JSON schema.

Quantities (sizes, durations, counts, all taking arithmetic from :mod:`iogate.expr`),
names and file names, I/O engines (from :mod:`iogate.engine.catalog`), block sizes and
their ranges, splits and alignments, rates, data patterns, verification, random
distributions and the metrics steady state tracks. Each type checks its own value only;
rules between fields are :mod:`iogate.spec.rules`'s.

Types are strict: ``iodepth: "32"`` is a string, not 32, and ``direct: on`` is a string,
not true. Quantities go through :mod:`iogate.units` (``size: 1GiB``, ``runtime: 30s``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
)

from iogate import expr
from iogate.engine import catalog

# The limits of the engine's job spec (iogate.h), defined once in iogate.engine.limits.
from iogate.engine.limits import (
    BS_ENTRIES_MAX,
    CMDPRIO_MAX,
    FILES_MAX,
    PATH_MAX,
    PATTERN_MAX,
    SEQUENCE_MAX,
    VERIFY_HEADER,
    ZONES_MAX,
)
from iogate.errors import spoken
from iogate.expr import shown
from iogate.metrics import LATENCIES, parse_metric
from iogate.spec.modes import DIRECTIONS
from iogate.units import (
    check_ascii,
    format_size,
    format_size_exact,
    parse_bandwidth,
    parse_duration,
    parse_size,
)

STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

SECTOR = 512  # O_DIRECT alignment that works on every common device
DEFAULT_BS = 4096


# -- quantities ---------------------------------------------------------------------------

def describe_input(value: Any) -> str:
    """How to name a wrong value in a message: ``the string '32'``, ``a list``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing (null)"
    if isinstance(value, str):
        return f"the string '{shown(value)}'"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value:g}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


# A number of expr.MAX_DIGITS digits and a unit; anything longer cannot be one quantity.
MAX_LITERAL_CHARS = 64


def _quantity(what: str, example: str, parse: Callable[[Any], int],
              kind: expr.Kind) -> Callable[[Any], int]:
    def validate(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"expected {what} like '{example}' or an integer, "
                             f"got {describe_input(value)}")
        if isinstance(value, str) and expr.is_expression(value):
            return expr.evaluate_int(value, kind=kind)
        if isinstance(value, str) and len(value.strip()) > MAX_LITERAL_CHARS:
            raise ValueError(f"expected {what} like '{example}', got {describe_input(value)} "
                             f"({len(value)} characters)")
        return parse(value)
    return validate


def _integer(value: Any) -> Any:
    """Arithmetic for integer fields (``${ncpus} * 2``); anything else is left to strict int."""
    if isinstance(value, str) and expr.is_expression(value):
        return expr.evaluate_int(value, kind=expr.COUNT)
    return value


_NUMBER = r"^\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*"
# An operator; a '/' that ends a bandwidth ('100MB/s') is none.
_ARITHMETIC = {"type": "string", "pattern": r"[-+*()]|/(?!\s*s\s*$)",
               "description": "arithmetic: + - * / and parentheses, e.g. '${mb_memory}M / 4'"}
# Pydantic's names of numeric constraints and JSON Schema's.
_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


@dataclass(frozen=True, eq=False)  # hashed by identity: its schemas are dicts
class Spelled:
    """The JSON schema of a number that may also be written as text: the integer, with the
    bounds its field sets (``Field(ge=1)``), or any of ``texts`` (a literal with a unit,
    arithmetic). ``floor`` is the lowest integer when the field sets no lower bound."""

    texts: tuple[Mapping[str, Any], ...] = (_ARITHMETIC,)
    description: str | None = None
    floor: int | None = None

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        number = {_BOUNDS.get(k, k): v for k, v in handler(core_schema).items()}
        if self.floor is not None and not {"minimum", "exclusiveMinimum"} & number.keys():
            number["minimum"] = self.floor
        out: dict[str, Any] = {"anyOf": [number, *self.texts]}
        if self.description:
            out["description"] = self.description
        return out


_SIZE_UNIT = r"([kKmMgGtTpP]([iI][bB]?)?|[bB])?"
SIZE_TEXT = {"type": "string", "pattern": _NUMBER + _SIZE_UNIT + r"\s*$"}
SIZE_ABOUT = ("bytes: an integer or a number with a binary unit (4k, 4KiB, 1.5MiB, 512B); SI "
              "units such as MB are refused as ambiguous")
SIZE_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 0}, SIZE_TEXT, _ARITHMETIC],
               "description": SIZE_ABOUT}
DURATION_TEXT = {"type": "string", "pattern": _NUMBER + r"(ns|us|µs|μs|ms|s|m|h)?\s*$"}
DURATION_ABOUT = ("a duration: a number with a unit (ns, us, ms, s, m, h); a bare number "
                  "means seconds")
COUNT_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 1},
                          {"type": "string", "pattern": _NUMBER + r"[kMG]?\s*$"}, _ARITHMETIC]}

# The engine's fields are 64-bit: nothing larger than 2^63 - 1 bytes or nanoseconds (292 years).
MAX_QUANTITY = 2**63 - 1
Size = Annotated[int, BeforeValidator(_quantity("a size", "4KiB", parse_size, expr.SIZE)),
                 Spelled((SIZE_TEXT, _ARITHMETIC), SIZE_ABOUT, floor=0), Field(le=MAX_QUANTITY)]
Duration = Annotated[int, BeforeValidator(_quantity("a duration", "30s", parse_duration,
                                                    expr.DURATION)),
                     Spelled((DURATION_TEXT, _ARITHMETIC), DURATION_ABOUT, floor=0),
                     Field(le=MAX_QUANTITY)]
Integer = Annotated[int, BeforeValidator(_integer), Spelled()]
AtLeastOne = Annotated[Integer, Field(ge=1)]
Percent = Annotated[Integer, Field(ge=0, le=100)]
PositiveSize = Annotated[Size, Field(gt=0)]
PositiveDuration = Annotated[Duration, Field(gt=0)]


@dataclass(frozen=True)
class Share:
    """A share of the target's size, fio's ``size=N%`` and ``offset=N%``: resolved
    against the file or device before a run (:func:`iogate.plan.sized`)."""

    percent: Fraction  # above 0, at most 100

    def of(self, total: int) -> int:
        """This share of ``total`` bytes, rounded down."""
        return total * self.percent.numerator // (100 * self.percent.denominator)

    def __str__(self) -> str:
        p = self.percent
        return f"{p.numerator if p.denominator == 1 else float(p):g}%"


_SHARE = re.compile(r"\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*%\s*")
SHARE_SCHEMA = {"type": "string", "pattern": r"^" + _SHARE.pattern + r"$",
                "description": "a share of the file's or device's size, e.g. '50%' (fio's "
                               "N%): the target must exist"}


def _sized_or_share(size: Callable[[Any], int], lowest: int, what: str) -> Callable[[Any], Any]:
    """A size, or a percentage of the target's size ('25%')."""
    def validate(value: Any) -> Any:
        if isinstance(value, Share):
            return value
        if isinstance(value, str) and "%" in value:
            m = _SHARE.fullmatch(value)
            if m is None:
                raise ValueError(f"expected {what} like '4KiB' or a share of the target like "
                                 f"'50%', got {describe_input(value)}")
            pct = Fraction(m.group(1))
            if not 0 < pct <= 100:
                raise ValueError(f"the share {shown(value.strip())} is not above 0% and at "
                                 "most 100%")
            return Share(pct)
        n = size(value)
        if not lowest <= n <= MAX_QUANTITY:
            raise ValueError(f"{what} must be at least {lowest} and at most {MAX_QUANTITY} "
                             f"bytes, got {n}")
        return n
    return validate


_size = _quantity("a size", "4KiB", parse_size, expr.SIZE)
# The region's size and offset: bytes, or a share of the target (fio's size=N%, offset=N%).
RegionSize = Annotated[int | Share, PlainValidator(_sized_or_share(_size, 1, "a size")),
                       PlainSerializer(lambda v: str(v) if isinstance(v, Share) else v),
                       WithJsonSchema({"anyOf": [SIZE_SCHEMA, SHARE_SCHEMA]})]
RegionOffset = Annotated[int | Share, PlainValidator(_sized_or_share(_size, 0, "an offset")),
                         PlainSerializer(lambda v: str(v) if isinstance(v, Share) else v),
                         WithJsonSchema({"anyOf": [SIZE_SCHEMA, SHARE_SCHEMA]})]


def _signed_size(value: Any) -> int:
    """A size that may be negative: a leading '-' (before a literal or an expression) or a
    negative integer is a step backwards."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return -_SIZE(-value)
    if isinstance(value, str) and value.strip().startswith("-"):
        try:
            return -_SIZE(value.strip()[1:])
        except ValueError:
            raise ValueError(f"'{value.strip()}' is not a size with a '-' before it, "
                             "like -8k") from None
    return _SIZE(value)


_SIZE = _quantity("a size", "8k or -8k", parse_size, expr.SIZE)
SignedSize = Annotated[int, BeforeValidator(_signed_size), WithJsonSchema({
    "anyOf": [{"type": "integer"},
              {"type": "string", "pattern": r"^\s*-?\s*[0-9.]+\s*([kKmMgGtTpP]([iI][bB]?)?|[bB])?"
                                            r"\s*$"},
              _ARITHMETIC],
    "description": "bytes, negative for a step back: an integer or a number with a binary "
                   "unit, after an optional '-' (8k, -8k)"}),
    Field(ge=-MAX_QUANTITY, le=MAX_QUANTITY)]


# -- names --------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9_.-]+")
# Names become test ids, file names of artifacts and report headings.
NAME_MAX = 128


def _check_name(value: str) -> str:
    if not value:
        raise ValueError("a name must not be empty")
    if len(value) > NAME_MAX:
        raise ValueError(f"a name of {len(value)} characters is too long: at most {NAME_MAX}")
    if not _NAME.fullmatch(value):
        raise ValueError(f"'{shown(value)}' is not a valid name: use letters, digits, '_', '.' "
                         "and '-' only")
    return value


# Control characters (C0, DEL, C1) but tab and line feed; the schema's pattern too.
_CONTROLS = r"\x00-\x08\x0b-\x1f\x7f-\x9f"


def _check_description(value: str) -> str:
    if found := re.search(f"[{_CONTROLS}]", value):
        bad = found.group()
        what = "a NUL character" if bad == "\0" else f"the control character U+{ord(bad):04X}"
        raise ValueError(f"the description holds {what}; a description is text: remove it")
    return value


def _check_filename(value: str) -> str:
    if "\0" in value:
        raise ValueError("filename contains a NUL byte")
    if not value:
        raise ValueError("filename must not be empty; leave it out to use a temporary file")
    if len(value.encode()) >= PATH_MAX:
        raise ValueError(f"filename is longer than {PATH_MAX - 1} bytes")
    return value


def _filenames(value: Any) -> Any:
    """One file, or a list of files that one job spreads its region and requests over."""
    if isinstance(value, str):
        return _check_filename(value)
    if not isinstance(value, list):
        return value  # the type check says what is wrong
    if not value:
        raise ValueError("give at least one file, or leave filename out for a temporary file")
    if len(value) > FILES_MAX:
        raise ValueError(f"at most {FILES_MAX} files per job, got {len(value)}")
    for i, name in enumerate(value):
        if not isinstance(name, str):
            raise ValueError(f"file {i + 1}: expected a string, got {describe_input(name)}")
        try:
            _check_filename(name)
        except ValueError as exc:
            raise ValueError(f"file {i + 1}: {exc}") from None
        if name in value[:i]:
            raise ValueError(f"file {i + 1}: '{shown(name)}' is listed twice")
    # The engine takes the names NUL-separated, ending in an empty name, in one buffer.
    if sum(len(n.encode()) + 1 for n in value) + 1 > PATH_MAX:
        raise ValueError(f"the file names together are longer than {PATH_MAX - 2} bytes")
    return value


Name = Annotated[str, AfterValidator(_check_name), Field(json_schema_extra={
    "pattern": f"^{_NAME.pattern}$", "maxLength": NAME_MAX})]
Description = Annotated[str, AfterValidator(_check_description), Field(json_schema_extra={
    "pattern": f"^[^{_CONTROLS}]*$"})]
FileNames = Annotated[str | list[str], BeforeValidator(_filenames)]
DirName = Annotated[str, AfterValidator(_check_filename)]


def _check_output_path(value: str) -> str:
    if "\0" in value:
        raise ValueError("the path contains a NUL byte")
    if not value.strip():
        raise ValueError("the path must not be empty")
    if len(value.encode()) >= PATH_MAX:
        raise ValueError(f"the path is longer than {PATH_MAX - 1} bytes")
    return value


OutputPath = Annotated[str, AfterValidator(_check_output_path)]


# -- engines ------------------------------------------------------------------------------
# Which engines there are, and what each is, is the engine catalog's to say: read when a
# suite is validated or a schema made.

def engine_choices() -> str:
    """The engines as a message offers them, by kind: 'io_uring or libaio (queued), ...'."""
    kinds: dict[str, list[str]] = {"queued": [], "synchronous": [], "no I/O": []}
    for engine in catalog.engines():
        kind = "no I/O" if not engine.does_io else "queued" if engine.queued else "synchronous"
        kinds[kind].append(engine.name)
    return ", ".join(f"{spoken(names)} ({kind})" for kind, names in kinds.items() if names)


def queued_engines() -> str:
    """The engines that keep several requests in flight, as a sentence lists them."""
    return spoken(e.name for e in catalog.engines() if e.queued and e.does_io)


def _engine_name(value: Any) -> Any:
    if isinstance(value, str) and catalog.get(value) is not None:
        return value
    if isinstance(value, str):
        raise ValueError(f"ioengine '{shown(value)}' is not supported; use {engine_choices()}")
    raise ValueError(f"expected an engine: {engine_choices()}; got {describe_input(value)}")


@dataclass(frozen=True)
class _EngineSchema:
    """The engines in the JSON schema: one constant each, described by its summary."""

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return {"oneOf": [{"const": e.name, "description": e.summary}
                          for e in catalog.engines()],
                "description": "the I/O engine that issues the requests"}


# The engine a workload runs on unless it names one.
DEFAULT_ENGINE = "io_uring"
IoEngine = Annotated[str, BeforeValidator(_engine_name), _EngineSchema()]


# -- percentages and fio's 'read,write' ---------------------------------------------------

def _exact(pct: float | int) -> Fraction:
    # Percentages were written in decimal; repr gives those digits back exactly.
    return Fraction(repr(pct)) if isinstance(pct, float) else Fraction(pct)


def _format_pct(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def _pct_number(text: str, where: str) -> float | int:
    t = text.strip()
    if not re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", t):
        raise ValueError(f"{where}: the percentage '{shown(t)}' is not a number from 0 to "
                         "100")
    x = Fraction(t)
    if x > 100:
        raise ValueError(f"{where}: the percentage {t} is above 100")
    return int(x) if x.denominator == 1 else float(t)


def _per_direction(value: Any, what: str, parse: Callable[[str], Any], default: Any) -> Any:
    """fio's ``"a,b"`` (read,write; an empty part keeps the default) or one value for both.

    A mapping is returned as is, for the model to check its keys and values.
    """
    if isinstance(value, Mapping) or isinstance(value, BaseModel):
        return value
    if isinstance(value, str) and "," in value:
        parts = value.split(",")
        if len(parts) > 2:
            raise ValueError(f"'{shown(value)}': give at most two {what}, 'read,write'")
        read, write = (parse(p) if p.strip() else default for p in parts)
        return {"read": read, "write": write}
    one = parse(value)
    return {"read": one, "write": one}


# -- block sizes --------------------------------------------------------------------------

# The keys that give block sizes, most specific first; a job gives one of them.
BS_KEYS = ("bssplit", "bsrange", "bs")


def _positive_size(what: str) -> Callable[[Any], int]:
    parse = _quantity(what, "4k", parse_size, expr.SIZE)

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
    lambda v: _per_direction(v, "block sizes", _positive_size("a block size"), DEFAULT_BS)),
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
    lo, hi = (_positive_size("a block size")(p.strip()) for p in parts)
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
    lambda v: _per_direction(v, "ranges", _bs_range, _DEFAULT_RANGE)), WithJsonSchema({
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
            bs = _positive_size("a block size")(size.strip())
        except ValueError as exc:
            raise ValueError(f"bssplit entry '{shown(entry)}': {exc}") from None
        item: dict[str, Any] = {"bs": bs}
        if slash and pct.strip():
            item["pct"] = _pct_number(pct, f"bssplit entry '{shown(entry)}'")
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
    given = sum((_exact(e.pct) for e in entries if e.pct is not None), Fraction(0))
    blanks = sum(1 for e in entries if e.pct is None)
    if blanks and given > 100:
        raise ValueError(f"the percentages given add up to {_format_pct(given)}, above 100")
    if blanks and given == 100:
        raise ValueError("the percentages given already add up to 100: the entries without "
                         "one would get nothing")
    if not blanks and given != 100:
        raise ValueError(f"the percentages add up to {_format_pct(given)}, not 100")
    return entries


Shares = Annotated[list[BsShare] | None, BeforeValidator(_bssplit_direction),
                   AfterValidator(_check_shares)]


def shares_of(entries: list[BsShare]) -> list[tuple[int, Fraction]]:
    """Each entry's exact share in percent; entries without one split the remainder equally."""
    given = sum((_exact(e.pct) for e in entries if e.pct is not None), Fraction(0))
    blanks = sum(1 for e in entries if e.pct is None)
    rest = (100 - given) / blanks if blanks else Fraction(0)
    return [(e.bs, _exact(e.pct) if e.pct is not None else rest) for e in entries]


class BsSplit(BaseModel):
    """bssplit per direction; None: that direction uses the default block size."""

    model_config = STRICT
    read: Shares = None
    write: Shares = None


def _split_per_direction(value: Any, example: str, entry: str) -> Any:
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
    return _split_per_direction(value, "4k/10:64k/90", "bs: SIZE, pct: PERCENT")


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
    return {"anyOf": [one, {"type": "string", "pattern": r"^[^,]*,[^,]*$"},
                      {"type": "object", "additionalProperties": False,
                       "properties": {"read": one, "write": one}}],
            "description": f"{what}: one value for both directions, fio's 'read,write', or "
                           "a mapping {read, write}"}


def _classes(value: Any) -> Any:
    return _per_direction(value, "classes", lambda v: _prio_class(v), None)


CmdprioPercentage = Annotated[DirPrioPercents, BeforeValidator(
    lambda v: _per_direction(v, "percentages", _bounded("a percentage", 0, 100), None)),
    WithJsonSchema(_per_dir_schema({"type": "integer", "minimum": 0, "maximum": 100},
                                   "share of requests, in percent, issued with the command "
                                   "priority (io_uring, libaio)"))]
CmdprioClass = Annotated[DirPrioClasses, BeforeValidator(_classes),
                         WithJsonSchema(_per_dir_schema(_CLASS_SCHEMA, "class of the command "
                                                        "priority (default rt)"))]
CmdprioLevel = Annotated[DirPrioLevels, BeforeValidator(
    lambda v: _per_direction(v, "levels", _bounded("a priority level", 0, 7), None)),
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
            bs = _positive_size("a block size")(parts[0])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        item: dict[str, Any] = {"bs": bs, "pct": _pct_number(parts[1], where)}
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
        totals[e.bs] = totals.get(e.bs, Fraction(0)) + _exact(e.pct)
    for bs, total in totals.items():
        if total > 100:
            raise ValueError(f"the percentages of block size {format_size_exact(bs)} add up "
                             f"to {_format_pct(total)}, above 100")
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
    return _split_per_direction(value, "4k/10:64k/50",
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


class Alignments(BaseModel):
    """blockalign per direction; 0: the direction's smallest block size."""

    model_config = STRICT
    read: Size = 0
    write: Size = 0


BlockAlign = Annotated[Alignments, BeforeValidator(
    lambda v: _per_direction(v, "alignments", _positive_size("blockalign"), 0)),
    WithJsonSchema({"anyOf": [SIZE_SCHEMA, {"type": "string", "pattern": r"^[^,]*,[^,]*$"},
                              {"type": "object", "additionalProperties": False,
                               "properties": {"read": SIZE_SCHEMA, "write": SIZE_SCHEMA}}],
                    "description": "alignment of random offsets, per direction like bs"})]


# -- rates --------------------------------------------------------------------------------

def _rate_literal(text: str) -> Fraction:
    # fio users write plain sizes ('100m') meaning per second; '100MiB/s' says so.
    if text.strip().endswith("/s"):
        value = parse_bandwidth(text)
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    return Fraction(parse_size(text))


RATE_KIND = expr.Kind("a bandwidth", _rate_literal, Fraction(1))


def _rate_value(kind: expr.Kind, what: str) -> Callable[[Any], int]:
    def validate(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"expected {what}, got {describe_input(value)}")
        n = value if isinstance(value, int) else expr.evaluate_int(value, kind=kind)
        if n < 0:
            raise ValueError(f"{value}: a rate cannot be negative")
        if n == 0:
            raise ValueError("a rate must be greater than 0; leave it out for no limit")
        return n
    return validate


class Rates(BaseModel):
    """A rate limit: the job's total, split by the mix, or set per direction."""

    model_config = STRICT
    total: int | None = None
    read: int | None = None
    write: int | None = None


def _rates(parse: Callable[[Any], int]) -> Callable[[Any], Any]:
    def validate(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return value
        if isinstance(value, Mapping):
            if "total" in value:
                raise ValueError("write the total as a single value, not as 'total:'")
            return {k: parse(v) if k in DIRECTIONS else v for k, v in value.items()}
        if isinstance(value, str) and "," in value:
            parts = value.split(",")
            if len(parts) > 2:
                raise ValueError(f"'{shown(value)}': give at most two rates, 'read,write'")
            return {d: parse(p.strip()) for d, p in zip(DIRECTIONS, parts, strict=True)
                    if p.strip()}
        return {"total": parse(value)}
    return validate


def _rate_schema(one: dict[str, Any], what: str) -> dict[str, Any]:
    return {"anyOf": [one, {"type": "string", "pattern": r"^[^,]*,[^,]*$"},
                      {"type": "object", "additionalProperties": False,
                       "properties": {"read": one, "write": one}}],
            "description": f"{what}: the job's total (split by rwmixread), fio's "
                           "'read,write', or a mapping {read, write}"}


RateIops = Annotated[Rates, BeforeValidator(_rates(_rate_value(expr.COUNT, "IOPS like '20k'"))),
                     WithJsonSchema(_rate_schema(COUNT_SCHEMA, "IOPS limit"))]
RateBytes = Annotated[Rates, BeforeValidator(_rates(_rate_value(
    RATE_KIND, "a bandwidth like '100MiB/s'"))),
    WithJsonSchema(_rate_schema({"anyOf": [
        {"type": "integer", "minimum": 1},
        {"type": "string", "pattern": _NUMBER + _SIZE_UNIT + r"\s*(/s)?\s*$"}, _ARITHMETIC]},
        "bandwidth limit in bytes per second ('100MiB/s', fio's '100m')"))]


def split_by_mix(total: int, rwmixread: int) -> tuple[int, int]:
    """A total rate split into (read, write) by the mix, rounded so that the two sum to it."""
    read = (total * rwmixread + 50) // 100
    return read, total - read


# -- data ---------------------------------------------------------------------------------

def _pattern(value: Any) -> Any:
    """``0xdeadbeef`` as bytes, any other string as its UTF-8 bytes (fio's quotes optional)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bool) or not isinstance(value, str):
        if isinstance(value, int):
            raise ValueError(f"{value}: decimal patterns are not accepted; write hex like "
                             f"'{value:#x}' or a quoted string")
        raise ValueError(f"expected hex like '0xdeadbeef' or a string, got "
                         f"{describe_input(value)}")
    text = value.strip()
    if text[:2].lower() == "0x":
        digits = text[2:]
        if not digits or not re.fullmatch(r"[0-9a-fA-F]+", digits):
            raise ValueError(f"'{shown(value)}' is not a hex pattern: after 0x only 0-9 "
                             "and a-f")
        data = bytes.fromhex(("0" if len(digits) % 2 else "") + digits)
    else:
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]  # fio's own quoting, buffer_pattern="abc"
        if not value:
            raise ValueError("buffer_pattern must not be empty")
        data = value.encode()
    if len(data) > PATTERN_MAX:
        raise ValueError(f"buffer_pattern is {len(data)} bytes; at most {PATTERN_MAX}")
    return data


Pattern = Annotated[bytes, BeforeValidator(_pattern),
                    PlainSerializer(lambda b: "0x" + b.hex(), return_type=str),
                    WithJsonSchema({
                        "anyOf": [{"type": "string"},
                                  # 0xdeadbeef unquoted is a number to a YAML 1.2 reader (an
                                  # editor's); iogate reads it as the hex it is written as.
                                  {"type": "integer", "minimum": 0}],
                        "description": "hex like 0xdeadbeef or a string whose UTF-8 bytes are "
                                       "the pattern, at most 256 bytes"})]


# -- verification -------------------------------------------------------------------------

VERIFIERS = ("crc32c", "crc32", "crc64", "xxhash", "xxh32", "xxh64", "md5", "sha1", "sha256",
             "sha512", "meta", "none")
# Digests longer than 8 bytes, kept whole after the header: their bytes (iogate.h).
_LONG_DIGESTS = {"md5": 16, "sha1": 20, "sha256": 32, "sha512": 64}
# fio's names for the same checksums.
_VERIFY_ALIASES = {"crc32c-intel": "crc32c"}
# fio checksums the engine does not compute, named so that the message can say so.
_FIO_VERIFIERS = ("crc16", "crc7", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "pattern",
                  "null")


def verify_min_block(name: str) -> int:
    """The smallest write block size verify ``name`` allows: the header, and after it the
    digest area of a digest longer than 8 bytes (its length rounded up to 8)."""
    digest = _LONG_DIGESTS.get(name, 0)
    return VERIFY_HEADER + (digest + 7) // 8 * 8


def _verify(value: Any) -> Any:
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    name = _VERIFY_ALIASES.get(value, value)
    if name in VERIFIERS:
        return name
    choices = spoken(VERIFIERS)
    if value in _FIO_VERIFIERS:
        raise ValueError(f"verify '{value}' is not supported; use {choices}")
    raise ValueError(f"unknown verify '{shown(value)}'; use {choices}")


Verify = Annotated[Literal["crc32c", "crc32", "crc64", "xxhash", "xxh32", "xxh64", "md5", "sha1",
                           "sha256", "sha512", "meta", "none"],
                   BeforeValidator(_verify),
                   WithJsonSchema({"enum": [*VERIFIERS, *_VERIFY_ALIASES]})]


# -- where random requests land -----------------------------------------------------------

class ZoneShare(BaseModel):
    """One zone of a zoned distribution: access percent and size percent."""

    model_config = STRICT
    access: float
    size: float


class Distribution(BaseModel):
    """random_distribution, parsed: the kind, its parameter, zones for ``zoned`` and block
    indices for ``sequence``."""

    model_config = STRICT
    kind: Literal["random", "zipf", "pareto", "normal", "zoned", "sequence"]
    param: float | None = None
    zones: list[ZoneShare] = Field(default_factory=list)
    blocks: list[int] = Field(default_factory=list)  # sequence: block indices in order

    def __str__(self) -> str:
        if self.kind == "sequence":
            return "sequence:" + ",".join(str(b) for b in self.blocks)
        if self.kind == "zoned":
            return "zoned:" + ":".join(f"{z.access:g}/{z.size:g}" for z in self.zones)
        return self.kind if self.param is None else f"{self.kind}:{self.param:g}"


_DIST_RANGES = {"zipf": "THETA > 0 and not 1", "pareto": "0 < H < 1", "normal": "SIGMA > 0"}


def _distribution(value: Any) -> Any:
    if isinstance(value, (BaseModel, Mapping)):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected a distribution like 'zipf:1.2', got {describe_input(value)}")
    kind, colon, rest = value.strip().partition(":")
    kind = {"gauss": "normal"}.get(kind, kind)
    if kind == "random":
        if colon:
            raise ValueError("'random' takes no parameter")
        return {"kind": "random"}
    if kind == "zoned":
        return {"kind": "zoned", "zones": _zones(value, rest)}
    if kind == "sequence":
        return {"kind": "sequence", "blocks": _sequence(value, rest)}
    if kind not in _DIST_RANGES:
        raise ValueError(f"unknown random_distribution '{shown(value)}': use random, zipf:THETA, "
                         "pareto:H, normal:SIGMA, zoned:ACCESS/SIZE:... or sequence:B,B,...")
    if not rest.strip():
        raise ValueError(f"{kind} needs a parameter ({_DIST_RANGES[kind]}), e.g. "
                         f"'{kind}:{ {'zipf': '1.2', 'pareto': '0.2', 'normal': '10'}[kind]}'")
    check_ascii(rest)  # float() would read other scripts' digits: '１.２'
    try:
        param = float(rest)
    except ValueError:
        raise ValueError(f"'{shown(value)}': the parameter '{shown(rest)}' is not a "
                         "number") from None
    ok = {"zipf": param > 0 and param != 1, "pareto": 0 < param < 1,
          "normal": param > 0}[kind]
    if not ok or not math.isfinite(param):
        raise ValueError(f"'{shown(value)}': {kind} needs {_DIST_RANGES[kind]}, got "
                         f"{shown(rest.strip())}")
    return {"kind": kind, "param": param}


def _sequence(value: str, rest: str) -> list[int]:
    """fio's sequence:2,0,1: block indices (in units of blockalign, by default the block
    size), visited in that order."""
    if not rest.strip():
        raise ValueError("sequence needs block indices, e.g. 'sequence:2,0,1'")
    blocks = []
    for raw in rest.split(","):
        text = raw.strip()
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"'{shown(value)}': the block index '{shown(text)}' is not a whole "
                             "number of 0 or more")
        if int(text) >= 1 << 63:
            raise ValueError(f"'{shown(value)}': the block index {shown(text)} is too large")
        blocks.append(int(text))
    if len(blocks) > SEQUENCE_MAX:
        raise ValueError(f"at most {SEQUENCE_MAX} block indices, got {len(blocks)}")
    return blocks


def _zones(value: str, rest: str) -> list[dict[str, Any]]:
    if not rest.strip():
        raise ValueError("zoned needs zones, e.g. 'zoned:60/10:30/20:10/70' (access%/size%)")
    zones: list[dict[str, Any]] = []
    open_zone: int | None = None  # a zone without a size (fio's '20/') takes the rest
    for raw in rest.split(":"):
        access, slash, size = raw.partition("/")
        if not slash:
            raise ValueError(f"zone '{shown(raw.strip())}': write ACCESS/SIZE in percent, "
                             "e.g. 60/10")
        where = f"zone '{shown(raw.strip())}'"
        if not size.strip():
            if open_zone is not None:
                raise ValueError(f"'{shown(value)}': only one zone may leave its size out "
                                 "(it takes the rest of the region)")
            open_zone = len(zones)
            zones.append({"access": _pct_number(access, where), "size": 0})
            continue
        zones.append({"access": _pct_number(access, where), "size": _pct_number(size, where)})
    if len(zones) > ZONES_MAX:
        raise ValueError(f"at most {ZONES_MAX} zones, got {len(zones)}")
    if open_zone is not None:
        given = sum((_exact(z["size"]) for z in zones), Fraction(0))
        if given > 100:
            raise ValueError(f"'{shown(value)}': the sizes given add up to "
                             f"{_format_pct(given)}, leaving nothing for the zone without one")
        left = 100 - given
        zones[open_zone]["size"] = int(left) if left.denominator == 1 else float(left)
    for column in ("access", "size"):
        total = sum((_exact(z[column]) for z in zones), Fraction(0))
        if total != 100:
            raise ValueError(f"'{shown(value)}': the {column} percentages add up to "
                             f"{_format_pct(total)}, not 100")
    for z in zones:
        if z["size"] == 0 and z["access"] > 0:
            raise ValueError(f"'{shown(value)}': a zone of size 0 cannot take "
                             f"{z['access']}% of the requests")
    return zones


RandomDistribution = Annotated[Distribution, BeforeValidator(_distribution),
                               PlainSerializer(str, return_type=str),
                               WithJsonSchema({"type": "string", "pattern":
                                               r"^(random|zipf:.+|pareto:.+|normal:.+|"
                                               r"gauss:.+|zoned:.+|sequence:.+)$"})]
Seed = Annotated[Integer, Field(ge=0, lt=1 << 64)]

# -- what steady state tracks -------------------------------------------------------------

def _steady_metric(value: Any) -> Any:
    """IOPS, bandwidth or a latency's percentile or mean, of read, write or both
    (``total``)."""
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    if len(value) > MAX_LITERAL_CHARS:
        raise ValueError(f"'{shown(value)}' is not a metric that steady state can track")
    parts = value.split(".", 2)
    examples = "read.iops, write.bw, total.iops, read.clat.p99, read.clat.mean or total.lat.p99.9"
    if len(parts) >= 2 and parts[0] == "total" and parts[1] in LATENCIES:
        parts[0] = "read"  # a percentile over both directions: same grammar
    try:
        path = parse_metric(".".join(parts))
    except ValueError as exc:
        raise ValueError(f"{exc}; steady state tracks e.g. {examples}") from None
    if path.scope == "sync" or not (
            path.name in ("iops", "bw") or (path.is_latency and (
                path.percentile is not None or path.stat == "mean"))):
        raise ValueError(f"steady state tracks IOPS, bandwidth or a latency's percentile or "
                         f"mean, e.g. {examples}; not '{shown(value)}'")
    return value


PositiveNumber = Annotated[float, Field(gt=0)]
SteadyMetric = Annotated[str, BeforeValidator(_steady_metric)]
