"""The validated shape of a suite: strict pydantic models, and their errors in plain words.

Models are strict: ``iodepth: "32"`` is a string, not 32, and ``direct: on`` is a string,
not true. Quantities go through :mod:`iogate.units` (``size: 1GiB``, ``runtime: 30s``).
Rules that tie fields together (psync needs iodepth 1, direct I/O needs 512-byte aligned
blocks, a mixed workload's rate needs both directions...) live in :func:`workload_rules` and
are reported at the field they concern. Numeric fields also take arithmetic
(:mod:`iogate.expr`): ``numjobs: ${ncpus} * 2``, ``size: ${mb_memory}M / 4``.

:class:`JobFields` is what one engine job runs; :class:`Workload` adds a name, a group,
expectations, repeats, ``fail_fast`` and :class:`SteadyState`; :class:`PreconditionStep`
adds ``loops``. :class:`Defaults`, :class:`WorkloadEntry` and :class:`PreconditionEntry` are
the same keys as written, where any may be missing.

:func:`translate` turns a pydantic ValidationError into (location, message) pairs with
messages meant for people who write suites, not for people who write validators.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, Optional

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from iogate import expr
from iogate.expr import shown
from iogate.metrics import LATENCIES, parse_metric
from iogate.units import (
    check_ascii,
    format_size,
    format_size_exact,
    parse_bandwidth,
    parse_duration,
    parse_size,
)

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

PATH_MAX = 4096  # IOG_PATH_MAX in iogate.h, including the terminating NUL
SECTOR = 512  # O_DIRECT alignment that works on every common device
DEFAULT_BS = 4096
# Limits of the engine's job spec (iogate.h).
BS_ENTRIES_MAX = 64
ZONES_MAX = 16
PATTERN_MAX = 256
FILES_MAX = 64


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
_ARITHMETIC = {"type": "string", "pattern": r"[-+*/()]",
               "description": "arithmetic: + - * / and parentheses, e.g. '${mb_memory}M / 4'"}
SIZE_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0},
        {"type": "string", "pattern": _NUMBER + r"([kKmMgGtTpP]([iI][bB]?)?|[bB])?\s*$"},
        _ARITHMETIC,
    ],
    "description": "bytes: an integer or a number with a binary unit (4k, 4KiB, 1.5MiB, "
                   "512B); SI units such as MB are refused as ambiguous",
}
DURATION_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0},
        {"type": "string", "pattern": _NUMBER + r"(ns|us|µs|μs|ms|s|m|h)?\s*$"},
        _ARITHMETIC,
    ],
    "description": "a duration: a number with a unit (ns, us, ms, s, m, h); "
                   "a bare number means seconds",
}
INTEGER_SCHEMA = {"anyOf": [{"type": "integer"}, _ARITHMETIC]}
COUNT_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 1},
                          {"type": "string", "pattern": _NUMBER + r"[kMG]?\s*$"}, _ARITHMETIC]}

# The engine's fields are 64-bit: nothing larger than 2^63 - 1 bytes or nanoseconds (292 years).
MAX_QUANTITY = 2**63 - 1
Size = Annotated[int, BeforeValidator(_quantity("a size", "4KiB", parse_size, expr.SIZE)),
                 WithJsonSchema(SIZE_SCHEMA), Field(le=MAX_QUANTITY)]
Duration = Annotated[int, BeforeValidator(_quantity("a duration", "30s", parse_duration,
                                                    expr.DURATION)),
                     WithJsonSchema(DURATION_SCHEMA), Field(le=MAX_QUANTITY)]
Integer = Annotated[int, BeforeValidator(_integer), WithJsonSchema(INTEGER_SCHEMA)]


# -- names and choices --------------------------------------------------------------------

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


def _engine_name(value: Any) -> Any:
    if value == "posixaio":
        raise ValueError("ioengine 'posixaio' is not supported; use libaio or io_uring "
                         "(queued) or psync (synchronous)")
    return value


Name = Annotated[str, AfterValidator(_check_name), Field(json_schema_extra={
    "pattern": f"^{_NAME.pattern}$", "maxLength": NAME_MAX})]
Description = Annotated[str, AfterValidator(_check_description), Field(json_schema_extra={
    "pattern": f"^[^{_CONTROLS}]*$"})]
FileNames = Annotated[str | list[str], BeforeValidator(_filenames)]
DirName = Annotated[str, AfterValidator(_check_filename)]
IoEngine = Annotated[Literal["io_uring", "libaio", "psync", "sync", "null"],
                     BeforeValidator(_engine_name)]
SYNCHRONOUS = ("psync", "sync")
RwMode = Annotated[Literal["read", "write", "randread", "randwrite", "rw", "readwrite",
                           "randrw"],
                   AfterValidator(lambda v: "rw" if v == "readwrite" else v)]
MIXED = ("rw", "randrw")
RANDOM = ("randread", "randwrite", "randrw")
AtLeastOne = Annotated[Integer, Field(ge=1)]
Percent = Annotated[Integer, Field(ge=0, le=100)]
PositiveSize = Annotated[Size, Field(gt=0)]
PositiveDuration = Annotated[Duration, Field(gt=0)]
Direction = Literal["read", "write"]
DIRECTIONS: tuple[Direction, Direction] = ("read", "write")


def directions_of(rw: str) -> tuple[Direction, ...]:
    """The data directions a rw mode issues requests in."""
    if rw in ("read", "randread"):
        return ("read",)
    if rw in ("write", "randwrite"):
        return ("write",)
    return DIRECTIONS


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

    model_config = _STRICT
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

    model_config = _STRICT
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

    model_config = _STRICT
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

    model_config = _STRICT
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

    model_config = _STRICT
    read: Shares = None
    write: Shares = None


def _bssplit(value: Any) -> Any:
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
    raise ValueError(f"expected a split like '4k/10:64k/90' or a list of "
                     f"{{bs: SIZE, pct: PERCENT}}, got {describe_input(value)}")


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


class Alignments(BaseModel):
    """blockalign per direction; 0: the direction's smallest block size."""

    model_config = _STRICT
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

    model_config = _STRICT
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
    WithJsonSchema(_rate_schema({"anyOf": [{"type": "integer", "minimum": 1},
                                           {"type": "string"}]}, "bandwidth limit"))]


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
                    WithJsonSchema({"type": "string", "description": "hex like '0xdeadbeef' "
                                    "or a string whose UTF-8 bytes are the pattern"})]


# -- verification -------------------------------------------------------------------------

VERIFIERS = ("crc32c", "xxhash", "crc32", "none")
VERIFY_HEADER = 64  # IOG_VERIFY_HEADER: bytes at the start of every verified block
# fio's names for the same checksums.
_VERIFY_ALIASES = {"crc32c-intel": "crc32c"}
# fio checksums the engine does not compute, named so that the message can say so.
_FIO_VERIFIERS = ("md5", "crc64", "crc16", "crc7", "sha1", "sha256", "sha512", "sha3-224",
                  "sha3-256", "sha3-384", "sha3-512", "pattern", "meta", "null")


def _verify(value: Any) -> Any:
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    name = _VERIFY_ALIASES.get(value, value)
    if name in VERIFIERS:
        return name
    choices = ", ".join(VERIFIERS[:-1]) + f" or {VERIFIERS[-1]}"
    if value in _FIO_VERIFIERS:
        raise ValueError(f"verify '{value}' is not supported; use {choices}")
    raise ValueError(f"unknown verify '{shown(value)}'; use {choices}")


Verify = Annotated[Literal["crc32c", "xxhash", "crc32", "none"], BeforeValidator(_verify),
                   WithJsonSchema({"enum": [*VERIFIERS, *_VERIFY_ALIASES]})]


# -- where random requests land -----------------------------------------------------------

class ZoneShare(BaseModel):
    """One zone of a zoned distribution: access percent and size percent."""

    model_config = _STRICT
    access: float
    size: float


class Distribution(BaseModel):
    """random_distribution, parsed: the kind, its parameter, and zones for ``zoned``."""

    model_config = _STRICT
    kind: Literal["random", "zipf", "pareto", "normal", "zoned"]
    param: float | None = None
    zones: list[ZoneShare] = Field(default_factory=list)

    def __str__(self) -> str:
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
    if kind not in _DIST_RANGES:
        raise ValueError(f"unknown random_distribution '{shown(value)}': use random, zipf:THETA, "
                         "pareto:H, normal:SIGMA or zoned:ACCESS/SIZE:...")
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


def _zones(value: str, rest: str) -> list[dict[str, Any]]:
    if not rest.strip():
        raise ValueError("zoned needs zones, e.g. 'zoned:60/10:30/20:10/70' (access%/size%)")
    zones = []
    for raw in rest.split(":"):
        access, slash, size = raw.partition("/")
        if not slash:
            raise ValueError(f"zone '{shown(raw.strip())}': write ACCESS/SIZE in percent, "
                             "e.g. 60/10")
        where = f"zone '{shown(raw.strip())}'"
        zones.append({"access": _pct_number(access, where), "size": _pct_number(size, where)})
    if len(zones) > ZONES_MAX:
        raise ValueError(f"at most {ZONES_MAX} zones, got {len(zones)}")
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
                                               r"gauss:.+|zoned:.+)$"})]
Seed = Annotated[Integer, Field(ge=0, lt=1 << 64)]


# -- workloads ----------------------------------------------------------------------------

def block_table(w: JobFields, direction: Direction) -> list[tuple[int, int, Fraction]]:
    """The direction's request sizes: (lo, hi, share in percent), shares summing to 100."""
    if w.bssplit is not None:
        entries = getattr(w.bssplit, direction)
        if entries is None:
            return [(DEFAULT_BS, DEFAULT_BS, Fraction(100))]
        return [(bs, bs, share) for bs, share in shares_of(entries)]
    if w.bsrange is not None:
        r = getattr(w.bsrange, direction)
        return [(r.lo, r.hi, Fraction(100))]
    bs = getattr(w.bs, direction)
    return [(bs, bs, Fraction(100))]


_BS_KEYS = ("bssplit", "bsrange", "bs")


def workload_rules(w: JobFields) -> Iterator[tuple[tuple[str, ...], str]]:
    """Rules between fields: (fields to blame, most specific first; message)."""
    dirs = directions_of(w.rw)
    writes = "write" in dirs
    if w.ioengine in SYNCHRONOUS and w.iodepth > 1:
        yield ("iodepth", "ioengine"), (f"{w.ioengine} is synchronous: iodepth must be 1; use "
                                        "io_uring or libaio for queue depth")
    given = [k for k in _BS_KEYS if k in w.model_fields_set]
    if len(given) > 1:
        yield (given[0], given[1]), f"{given[1]} and {given[0]} exclude each other: give one"
    if w.rwmixwrite is not None and w.rw not in MIXED:
        yield ("rwmixwrite", "rw"), f"rwmixwrite applies only to rw and randrw, not to {w.rw}"
    elif w.rwmixread is not None and w.rw not in MIXED:
        yield ("rwmixread", "rw"), f"rwmixread applies only to rw and randrw, not to {w.rw}"
    elif w.rwmixwrite is not None and w.rwmixread is not None \
            and w.rwmixread + w.rwmixwrite != 100:
        yield ("rwmixwrite", "rwmixread"), (f"rwmixread ({w.rwmixread}) and rwmixwrite "
                                            f"({w.rwmixwrite}) must add up to 100")
    if w.time_based and w.runtime is None:
        yield ("time_based", "runtime"), "time_based needs a runtime, e.g. 'runtime: 30s'"
    tables = {d: block_table(w, d) for d in dirs}
    if w.direct:
        for d in dirs:
            bad = [lo for lo, _, _ in tables[d] if lo % SECTOR]
            if bad:
                key = next((k for k in _BS_KEYS if k in w.model_fields_set), "bs")
                yield (key, "direct"), (f"direct I/O needs block sizes that are a multiple of "
                                        f"{SECTOR} bytes; {d} bs is {bad[0]}")
                break
        if w.offset % SECTOR:
            yield ("offset", "direct"), (f"direct I/O needs an offset that is a multiple of "
                                         f"{SECTOR} bytes, got {w.offset}")
        if w.blockalign is not None:
            for d in dirs:
                align = getattr(w.blockalign, d)
                if align % SECTOR:
                    yield ("blockalign", "direct"), (
                        f"direct I/O needs a blockalign that is a multiple of {SECTOR} bytes; "
                        f"{d} blockalign is {align}")
                    break
    largest = max(hi for d in dirs for _, hi, _ in tables[d])
    files = len(w.filename) if isinstance(w.filename, list) else 1
    if w.size // files < largest:
        per_file = f" per file ({files} files share it)" if files > 1 else ""
        yield ("size", "bs"), (f"size{per_file} ({format_size(w.size // files)}) is smaller "
                               f"than the block size ({format_size(largest)})")
    yield from _rate_rules(w, dirs)
    yield from _data_rules(w, writes)
    yield from _verify_rules(w, tables)
    if w.random_distribution is not None and w.random_distribution.kind != "random" \
            and w.rw not in RANDOM:
        yield ("random_distribution", "rw"), (f"random_distribution applies only to randread, "
                                              f"randwrite and randrw, not to {w.rw}")
    if w.randseed is not None and w.randrepeat is False:
        yield ("randrepeat", "randseed"), ("randrepeat: false asks for a new seed every run, "
                                           "but randseed fixes it: give one of them")
    if w.thinktime_blocks is not None and w.thinktime is None:
        yield ("thinktime_blocks", "thinktime"), "thinktime_blocks needs a thinktime"
    if w.fsync is not None and w.fdatasync is not None:
        yield ("fdatasync", "fsync"), "fsync and fdatasync exclude each other: give one"
    for key in ("fsync", "fdatasync"):
        if getattr(w, key) is not None and not writes:
            yield (key, "rw"), f"{key} syncs after writes, but {w.rw} never writes"
        if getattr(w, key) is not None and w.ioengine == "null":
            yield (key, "ioengine"), f"{key} needs a file; the null engine has none"


def _rate_rules(w: JobFields, dirs: tuple[Direction, ...]
                ) -> Iterator[tuple[tuple[str, ...], str]]:
    for key, rates in (("rate_iops", w.rate_iops), ("rate", w.rate)):
        if rates is None:
            continue
        for d in DIRECTIONS:
            if getattr(rates, d) is not None and d not in dirs:
                yield (key, "rw"), f"{key} sets a {d} rate, but {w.rw} never {d}s"
        if rates.total is None and len(dirs) == 2 and (rates.read is None) != (
                rates.write is None):
            yield (key,), (f"{key} limits only one direction of a mixed workload: give the "
                           "total, or both directions")
        if rates.total is not None and len(dirs) == 2:
            mix = w.rwmixread if w.rwmixread is not None else 50
            read, write = split_by_mix(rates.total, mix)
            if read == 0 or write == 0:
                starved = "reads" if read == 0 else "writes"
                yield (key, "rwmixread"), (
                    f"{key} {rates.total} split by rwmixread {mix} leaves {starved} no rate; "
                    "raise the total or give both directions")
    if w.rate_process is not None and w.rate is None and w.rate_iops is None:
        yield ("rate_process",), "rate_process needs rate or rate_iops"


def verifies(w: JobFields) -> bool:
    """Whether the job checks what it writes."""
    return w.verify is not None and w.verify != "none"


def _verify_rules(w: JobFields, tables: Mapping[Direction, list[tuple[int, int, Fraction]]]
                  ) -> Iterator[tuple[tuple[str, ...], str]]:
    if not verifies(w):
        if w.verify_backlog is not None:
            yield ("verify_backlog", "verify"), ("verify_backlog needs verify, e.g. "
                                                 "'verify: crc32c'")
        if w.verify_fatal:
            yield ("verify_fatal", "verify"), "verify_fatal needs verify, e.g. 'verify: crc32c'"
        return
    if w.rw not in ("write", "randwrite"):
        yield ("verify", "rw"), (f"verify checks the blocks a job writes: it needs rw write or "
                                 f"randwrite, not {w.rw} (reading or mixed workloads are not "
                                 "verified)")
        return
    table = tables["write"]
    if len(table) > 1 or table[0][0] != table[0][1]:
        key = next(k for k in ("bssplit", "bsrange") if getattr(w, k) is not None)
        yield (key, "verify"), (f"verify needs one block size for writes; {key} gives several: "
                                "use bs")
        return
    bs = table[0][0]
    if bs < VERIFY_HEADER or bs % 8:
        key = next((k for k in _BS_KEYS if k in w.model_fields_set), "bs")
        yield (key, "verify"), (f"verify needs a write block size of at least {VERIFY_HEADER} "
                                f"bytes (its header) and a multiple of 8, got {bs}; e.g. "
                                "'bs: 4k'")
    if w.blockalign is not None and 0 < w.blockalign.write < bs:
        yield ("blockalign", "verify"), (
            f"verify needs writes that do not overlap: blockalign ({w.blockalign.write}) must "
            f"be at least the block size ({bs}), or left out")
    if w.numjobs > 1:
        yield ("numjobs", "verify"), (f"verify needs numjobs 1: {w.numjobs} threads would "
                                      "overwrite each other's blocks; raise iodepth for more "
                                      "load")
    if w.ioengine == "null":
        yield ("ioengine", "verify"), "verify needs a file; the null engine writes nothing"


def _data_rules(w: JobFields, writes: bool) -> Iterator[tuple[tuple[str, ...], str]]:
    data_keys = ("buffer_compress_percentage", "buffer_compress_chunk", "buffer_pattern",
                 "dedupe_percentage", "zero_buffers", "refill_buffers")
    if not writes:
        for key in data_keys:
            if key in w.model_fields_set and getattr(w, key) not in (None, False):
                yield (key, "rw"), f"{key} shapes written data, but {w.rw} never writes"
                return
    compress = w.buffer_compress_percentage or 0
    dedupe = w.dedupe_percentage or 0
    if w.zero_buffers:
        for key, value in (("buffer_compress_percentage", compress),
                           ("dedupe_percentage", dedupe)):
            if value > 0:
                yield (key, "zero_buffers"), (f"zero_buffers writes only zeros; it cannot be "
                                              f"combined with {key}")
        if w.buffer_pattern is not None:
            yield ("buffer_pattern", "zero_buffers"), ("zero_buffers writes only zeros; it "
                                                       "cannot be combined with buffer_pattern")
    if w.buffer_compress_chunk is not None and w.buffer_compress_percentage is None:
        yield ("buffer_compress_chunk",), "buffer_compress_chunk needs buffer_compress_percentage"
    if w.refill_buffers is False and (compress or dedupe):
        yield ("refill_buffers",), ("compressible or deduplicable data needs new buffer "
                                    "contents for every write; remove refill_buffers: false")


class JobFields(BaseModel):
    """What one engine job runs: every workload key except its name, expectations and phases.

    Sizes in bytes, durations in nanoseconds.
    """

    model_config = _STRICT
    filename: FileNames | None = None
    ioengine: IoEngine = "io_uring"
    rw: RwMode = "read"
    bs: BlockSize = BlockSizes()
    bsrange: BsRangeField | None = None
    bssplit: BsSplitField | None = None
    blockalign: BlockAlign | None = None
    iodepth: Annotated[Integer, Field(ge=1, le=4096)] = 1  # the engine's limits
    numjobs: Annotated[Integer, Field(ge=1, le=1024)] = 1
    size: PositiveSize
    offset: Size = 0
    runtime: PositiveDuration | None = None
    time_based: bool = False
    ramp_time: Duration = 0
    direct: bool = False
    rwmixread: Percent | None = None
    rwmixwrite: Percent | None = None
    rate_iops: RateIops | None = None
    rate: RateBytes | None = None
    rate_process: Literal["linear", "poisson"] | None = None
    buffer_compress_percentage: Percent | None = None
    buffer_compress_chunk: PositiveSize | None = None
    refill_buffers: bool | None = None
    buffer_pattern: Pattern | None = None
    zero_buffers: bool = False
    dedupe_percentage: Percent | None = None
    random_distribution: RandomDistribution | None = None
    randseed: Seed | None = None
    randrepeat: bool = True
    thinktime: PositiveDuration | None = None
    thinktime_blocks: AtLeastOne | None = None
    fsync: AtLeastOne | None = None
    fdatasync: AtLeastOne | None = None
    invalidate: bool = True
    verify: Verify | None = Field(default=None, description=(
        "checksum every written block and read it back: crc32c, xxhash (XXH64), crc32, or "
        "none; rw write or randwrite, one block size of at least 64 bytes, numjobs 1"))
    verify_backlog: AtLeastOne | None = Field(default=None, description=(
        "read back after every N writes instead of after the run; needs verify"))
    verify_fatal: bool = Field(default=False, description=(
        "stop the job at the first block that fails verification; needs verify"))
    io_timeout: PositiveDuration | None = Field(default=None, description=(
        "a request outstanding longer than this is a fault: it counts as an ETIMEDOUT error "
        "and the run is cancelled"))
    # Safety: an existing file iogate did not create is written only with allow_overwrite;
    # with target_root, every target must resolve inside that directory.
    allow_overwrite: bool = False
    target_root: DirName | None = None

    @property
    def filenames(self) -> list[str]:
        """The files as a list; empty when none was given."""
        if self.filename is None:
            return []
        return [self.filename] if isinstance(self.filename, str) else list(self.filename)

    @model_validator(mode="before")
    @classmethod
    def _mixed_default(cls, data: Any) -> Any:
        # Mixed workloads read half the time unless told otherwise, like fio;
        # rwmixwrite alone says the same thing from the other side.
        if isinstance(data, Mapping) and data.get("rw") in ("rw", "readwrite", "randrw") \
                and "rwmixread" not in data:
            write = data.get("rwmixwrite")
            read = 100 - write if isinstance(write, int) and not isinstance(write, bool) \
                and 0 <= write <= 100 else 50
            data = {**data, "rwmixread": read}
        return data

    @model_validator(mode="after")
    def _rules(self) -> JobFields:
        rules = list(workload_rules(self))
        if rules:
            raise PydanticCustomError("workload_rules", "{summary}", {
                "summary": "; ".join(m for _, m in rules), "rules": rules})
        return self


def _steady_metric(value: Any) -> Any:
    """IOPS, bandwidth or a latency percentile, of read, write or both (``total``)."""
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    if len(value) > MAX_LITERAL_CHARS:
        raise ValueError(f"'{shown(value)}' is not a metric that steady state can track")
    parts = value.split(".", 2)
    examples = "read.iops, write.bw, total.iops, read.clat.p99 or total.lat.p99.9"
    if len(parts) >= 2 and parts[0] == "total" and parts[1] in LATENCIES:
        parts[0] = "read"  # a percentile over both directions: same grammar
    try:
        path = parse_metric(".".join(parts))
    except ValueError as exc:
        raise ValueError(f"{exc}; steady state tracks e.g. {examples}") from None
    if path.scope == "sync" or not (
            path.name in ("iops", "bw") or (path.is_latency and path.percentile is not None)):
        raise ValueError(f"steady state tracks IOPS, bandwidth or a latency percentile, "
                         f"e.g. {examples}; not '{shown(value)}'")
    return value


PositiveNumber = Annotated[float, Field(gt=0)]


class SteadyState(BaseModel):
    """Measurement rounds until a window of them is steady (SNIA PTS): the tracked metric's
    range within ``range_pct`` of the window mean and its least-squares slope across the
    window within ``slope_pct`` of the mean, in at most ``max_rounds`` rounds."""

    model_config = _STRICT
    metric: Annotated[str, BeforeValidator(_steady_metric)]
    round: PositiveDuration = 60 * 10**9
    window: Annotated[Integer, Field(ge=2)] = 5
    max_rounds: AtLeastOne = 25
    range_pct: PositiveNumber = 20.0
    slope_pct: PositiveNumber = 10.0
    on_unsteady: Literal["fail", "skip"] = "fail"

    @field_validator("max_rounds")
    @classmethod
    def _room_for_a_window(cls, value: int, info: ValidationInfo) -> int:
        window = info.data.get("window")
        if isinstance(window, int) and value < window:
            raise ValueError(f"max_rounds ({value}) must be at least the window ({window} "
                             "rounds), or steady state could never be judged")
        return value


class Workload(JobFields):
    """One validated workload, defaults merged."""

    name: Name
    group: Name | None = None
    expect: dict[str, Any] = Field(default_factory=dict)
    per_host: dict[str, Any] = Field(default_factory=dict)
    repeat: AtLeastOne = 1
    fail_fast: bool = False
    steady_state: SteadyState | None = None


class PreconditionStep(JobFields):
    """A step run before its workload, not measured; ``loops`` passes over the region."""

    rw: RwMode  # required: a step says what it does
    loops: AtLeastOne = 1


# Keys a precondition step takes from its workload unless it sets them itself.
STEP_INHERITS = ("filename", "size", "offset", "ioengine", "direct", "allow_overwrite",
                 "target_root", *_BS_KEYS)
# Keys of which setting one replaces the others coming from further out.
EXCLUSIVE_GROUPS = (frozenset(_BS_KEYS), frozenset(("rwmixread", "rwmixwrite")))


def _as_written(name: str, doc: str, **own: Any) -> type[BaseModel]:
    """A model of the same keys as JobFields as written in a file, where every key may be
    missing (it comes from further out), plus the model's `own` fields."""
    fields: dict[str, Any] = {}
    for key, info in JobFields.model_fields.items():
        annotation: Any = info.annotation
        if info.metadata:
            args = (annotation, *info.metadata)
            annotation = Annotated[args]  # type: ignore[valid-type]
        fields[key] = (Optional[annotation], Field(  # noqa: UP045 - built at run time
            default=None, description=info.description, json_schema_extra=info.json_schema_extra))
    fields.update(own)
    model = create_model(name, __config__=_STRICT, __doc__=doc, **fields)
    model.__module__ = __name__
    return model


if TYPE_CHECKING:  # the checker sees plain models; they are built below at run time
    class PreconditionEntry(BaseModel): ...

    class Defaults(BaseModel): ...
else:
    PreconditionEntry = _as_written(
        "PreconditionEntry",
        "A precondition step as written: ``rw`` and any job key, inherited ones included.",
        rw=(RwMode, ...), loops=(Optional[AtLeastOne], None))  # noqa: UP045
    Defaults = _as_written(
        "Defaults",
        "Values every workload of the suite starts from; a workload's own keys win.",
        group=(Optional[Name], None),  # noqa: UP045
        repeat=(Optional[AtLeastOne], None),  # noqa: UP045
        precondition=(Optional[list[PreconditionEntry]], None))  # noqa: UP045


SWEEP_VALUE_SCHEMA = {"type": ["string", "integer", "number", "boolean"]}
SWEEP_SCHEMA = {
    "anyOf": [
        {"type": "object", "minProperties": 1,
         "additionalProperties": {"type": "array", "items": SWEEP_VALUE_SCHEMA, "minItems": 1},
         "description": "variable -> values; every combination is a point, in the order "
                        "written"},
        {"type": "array", "minItems": 1,
         "items": {"type": "object", "minProperties": 1,
                   "additionalProperties": SWEEP_VALUE_SCHEMA},
         "description": "explicit points, each a mapping of the same variables"},
    ],
    "description": "run the workload once per point; a variable is used as ${name}, and one "
                   "named like a workload key sets that key",
}


_EXPECT_SCHEMA: dict[str, Any] = {"additionalProperties": {"anyOf": [
    {"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}]}}


class WorkloadEntry(Defaults):
    """A workload as written in the file: any field may come from the defaults."""

    name: Name
    # Checked by iogate.spec, which reports each point's problem at its place.
    sweep: Annotated[Any, WithJsonSchema(SWEEP_SCHEMA)] = None
    fail_fast: bool | None = None
    steady_state: SteadyState | None = None
    # Values are checked by iogate.expect, which explains a bare number better.
    expect: dict[str, Any] = Field(default_factory=dict, description=(
        "metric -> comparison, e.g. 'read.clat.p99': '<= 1.2ms', or a list of comparisons "
        "on the same metric, e.g. ['>= 0.45', '<= 0.55']"), json_schema_extra=_EXPECT_SCHEMA)
    per_host: dict[str, Any] = Field(default_factory=dict, description=(
        "expectations like expect's, judged on each host of a fleet on its own (expect "
        "judges the fleet as a whole); a run on this machine is one host"),
        json_schema_extra=_EXPECT_SCHEMA)


class SuiteFile(BaseModel):
    """A suite file as written."""

    model_config = ConfigDict(strict=True, extra="forbid", title="iogate suite")
    suite: Name
    description: Description | None = None
    defaults: Defaults | None = None
    workloads: Annotated[list[WorkloadEntry], Field(min_length=1)]


# -- errors in plain words ----------------------------------------------------------------

Loc = tuple[str | int, ...]
_WORKLOAD_ONLY = ("name", "expect", "per_host", "sweep", "fail_fast", "steady_state")
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
        if field in (*_WORKLOAD_ONLY, "group", "precondition", "repeat") and "loops" in fields:
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
        if isinstance(node, Mapping) and seg in node:
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
