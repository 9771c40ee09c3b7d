"""The validated shape of a suite: strict pydantic models, and their errors in plain words.

Models are strict: ``iodepth: "32"`` is a string, not 32, and ``direct: on`` is a string,
not true. Quantities go through :mod:`iogate.units` (``size: 1GiB``, ``runtime: 30s``).
Rules that tie fields together (psync needs iodepth 1, direct I/O needs 512-byte aligned
blocks...) live in :func:`workload_rules` and are reported at the field they concern.

:func:`translate` turns a pydantic ValidationError into (location, message) pairs with
messages meant for people who write suites, not for people who write validators.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from iogate.units import format_size, parse_duration, parse_size

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

PATH_MAX = 4096  # IOG_PATH_MAX in iogate.h, including the terminating NUL
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
        return f"the string '{value}'"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value:g}"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def _quantity(what: str, example: str, parse: Callable[[Any], int]) -> Callable[[Any], int]:
    def validate(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"expected {what} like '{example}' or an integer, "
                             f"got {describe_input(value)}")
        return parse(value)
    return validate


_NUMBER = r"^\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*"
SIZE_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0},
        {"type": "string", "pattern": _NUMBER + r"([kKmMgGtTpP]([iI][bB]?)?|[bB])?\s*$"},
    ],
    "description": "bytes: an integer or a number with a binary unit (4k, 4KiB, 1.5MiB, "
                   "512B); SI units such as MB are refused as ambiguous",
}
DURATION_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0},
        {"type": "string", "pattern": _NUMBER + r"(ns|us|µs|μs|ms|s|m|h)?\s*$"},
    ],
    "description": "a duration: a number with a unit (ns, us, ms, s, m, h); "
                   "a bare number means seconds",
}

Size = Annotated[int, BeforeValidator(_quantity("a size", "4KiB", parse_size)),
                 WithJsonSchema(SIZE_SCHEMA)]
Duration = Annotated[int, BeforeValidator(_quantity("a duration", "30s", parse_duration)),
                     WithJsonSchema(DURATION_SCHEMA)]


# -- names and choices --------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _check_name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(f"'{value}' is not a valid name: use letters, digits, '_', '.' "
                         "and '-' only" if value else "a name must not be empty")
    return value


def _check_filename(value: str) -> str:
    if "\0" in value:
        raise ValueError("filename contains a NUL byte")
    if not value:
        raise ValueError("filename must not be empty; leave it out to use a temporary file")
    if len(value.encode()) >= PATH_MAX:
        raise ValueError(f"filename is longer than {PATH_MAX - 1} bytes")
    return value


def _engine_name(value: Any) -> Any:
    if isinstance(value, str) and value in ("libaio", "sync"):
        raise ValueError(f"ioengine '{value}' is not supported yet; use io_uring (queued) "
                         "or psync (synchronous)")
    return value


Name = Annotated[str, AfterValidator(_check_name), Field(json_schema_extra={
    "pattern": f"^{_NAME.pattern}$"})]
FileName = Annotated[str, AfterValidator(_check_filename)]
IoEngine = Annotated[Literal["io_uring", "psync", "null"],
                     BeforeValidator(_engine_name)]
RwMode = Annotated[Literal["read", "write", "randread", "randwrite", "rw", "readwrite",
                           "randrw"],
                   AfterValidator(lambda v: "rw" if v == "readwrite" else v)]
MIXED = ("rw", "randrw")
AtLeastOne = Annotated[int, Field(ge=1)]
Percent = Annotated[int, Field(ge=0, le=100)]
PositiveSize = Annotated[Size, Field(gt=0)]
PositiveDuration = Annotated[Duration, Field(gt=0)]


# -- block sizes --------------------------------------------------------------------------

class BlockSizes(BaseModel):
    """Block size per direction, in bytes."""

    model_config = _STRICT
    read: PositiveSize = DEFAULT_BS
    write: PositiveSize = DEFAULT_BS


def _block_sizes(value: Any) -> Any:
    """Accept ``4k``, fio's ``"4k,64k"`` (read,write; an empty part keeps 4KiB) or a mapping."""
    if isinstance(value, (BlockSizes, Mapping)):
        return value
    if isinstance(value, str) and "," in value:
        parts = value.split(",")
        if len(parts) > 2:
            raise ValueError(f"'{value}': give at most two block sizes, 'read,write'")
        sizes = [parse_size(p) if p.strip() else DEFAULT_BS for p in parts]
    else:
        sizes = [_quantity("a block size", "4k", parse_size)(value)] * 2
    if 0 in sizes:
        raise ValueError("a block size must be greater than 0")
    return {"read": sizes[0], "write": sizes[1]}


BlockSize = Annotated[BlockSizes, BeforeValidator(_block_sizes), WithJsonSchema({
    "anyOf": [
        SIZE_SCHEMA,
        {"type": "string", "pattern": r"^[^,]*,[^,]*$",
         "description": "read,write block sizes as in fio, e.g. '4k,64k'"},
        {"type": "object", "additionalProperties": False,
         "properties": {"read": SIZE_SCHEMA, "write": SIZE_SCHEMA}},
    ],
    "description": "block size: one size for both directions, 'read,write', or a mapping",
})]


# -- workloads ----------------------------------------------------------------------------

def workload_rules(w: Workload) -> Iterator[tuple[tuple[str, ...], str]]:
    """Rules between fields: (fields to blame, most specific first; message)."""
    if w.ioengine == "psync" and w.iodepth > 1:
        yield ("iodepth", "ioengine"), ("psync is synchronous: iodepth must be 1; use io_uring "
                                        "for queue depth")
    if w.rwmixread is not None and w.rw not in MIXED:
        yield ("rwmixread", "rw"), f"rwmixread applies only to rw and randrw, not to {w.rw}"
    if w.time_based and w.runtime is None:
        yield ("time_based", "runtime"), "time_based needs a runtime, e.g. 'runtime: 30s'"
    if w.direct:
        for direction in ("read", "write"):
            bs = getattr(w.bs, direction)
            if bs % SECTOR:
                yield ("bs", "direct"), (f"direct I/O needs block sizes that are a multiple of "
                                         f"{SECTOR} bytes; {direction} bs is {bs}")
                break
        if w.offset % SECTOR:
            yield ("offset", "direct"), (f"direct I/O needs an offset that is a multiple of "
                                         f"{SECTOR} bytes, got {w.offset}")
    used = [w.bs.read] if w.rw in ("read", "randread") else \
        [w.bs.write] if w.rw in ("write", "randwrite") else [w.bs.read, w.bs.write]
    if w.size < max(used):
        yield ("size", "bs"), (f"size ({format_size(w.size)}) is smaller than the block size "
                               f"({format_size(max(used))})")


class Workload(BaseModel):
    """One validated workload, defaults merged. Sizes in bytes, durations in nanoseconds."""

    model_config = _STRICT
    name: Name
    filename: FileName | None = None
    ioengine: IoEngine = "io_uring"
    rw: RwMode = "read"
    bs: BlockSize = BlockSizes()
    iodepth: AtLeastOne = 1
    numjobs: AtLeastOne = 1
    size: PositiveSize
    offset: Size = 0
    runtime: PositiveDuration | None = None
    time_based: bool = False
    ramp_time: Duration = 0
    direct: bool = False
    rwmixread: Percent | None = None
    expect: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _mixed_default(cls, data: Any) -> Any:
        # Mixed workloads read half the time unless told otherwise, like fio.
        if isinstance(data, Mapping) and data.get("rw") in ("rw", "readwrite", "randrw") \
                and "rwmixread" not in data:
            data = {**data, "rwmixread": 50}
        return data

    @model_validator(mode="after")
    def _rules(self) -> Workload:
        rules = list(workload_rules(self))
        if rules:
            raise PydanticCustomError("workload_rules", "{summary}", {
                "summary": "; ".join(m for _, m in rules), "rules": rules})
        return self


class Defaults(BaseModel):
    """Values every workload of the suite starts from; a workload's own keys win."""

    model_config = _STRICT
    filename: FileName | None = None
    ioengine: IoEngine | None = None
    rw: RwMode | None = None
    bs: BlockSize | None = None
    iodepth: AtLeastOne | None = None
    numjobs: AtLeastOne | None = None
    size: PositiveSize | None = None
    offset: Size | None = None
    runtime: PositiveDuration | None = None
    time_based: bool | None = None
    ramp_time: Duration | None = None
    direct: bool | None = None
    rwmixread: Percent | None = None


class WorkloadEntry(Defaults):
    """A workload as written in the file: any field may come from the defaults."""

    name: Name
    # Values are checked by iogate.expect, which explains a bare number better.
    expect: dict[str, Any] = Field(default_factory=dict, description=(
        "metric -> comparison, e.g. 'read.clat.p99': '<= 1.2ms'"), json_schema_extra={
        "additionalProperties": {"type": "string"}})


class SuiteFile(BaseModel):
    """A suite file as written."""

    model_config = ConfigDict(strict=True, extra="forbid", title="iogate suite")
    suite: Name
    description: str | None = None
    defaults: Defaults | None = None
    workloads: Annotated[list[WorkloadEntry], Field(min_length=1)]


# -- errors in plain words ----------------------------------------------------------------

Loc = tuple[str | int, ...]
_YAML11_BOOLS = {"on", "off", "yes", "no", "y", "n"}


def fields_for(loc: Loc) -> list[str]:
    """The valid keys of the mapping at ``loc`` (a location in the suite document)."""
    if loc and loc[-1] == "bs":
        return list(BlockSizes.model_fields)
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
        if field in ("name", "expect") and "name" not in fields:
            return f"'{field}' cannot be a default; set it in each workload"
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
