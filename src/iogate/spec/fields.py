"""The common field types of the suite language and the helpers the others are built from.

Quantities (sizes, durations, counts, shares of the target, all taking arithmetic from
:mod:`iogate.expr`), names and file names, I/O engines (from :mod:`iogate.engine.catalog`),
fio's per-direction 'read,write' and its percentages, and the metrics steady state tracks:
each type with its parser and its JSON schema. Each type checks its own value only; rules
between fields are :mod:`iogate.spec.rules`'s. The families of fields have modules of their
own: block sizes and alignments (:mod:`~iogate.spec.blocks`), I/O priorities
(:mod:`~iogate.spec.priorities`), rates (:mod:`~iogate.spec.rates`), data patterns and
verification (:mod:`~iogate.spec.data`), random distributions
(:mod:`~iogate.spec.distributions`).

Types are strict: ``iodepth: "32"`` is a string, not 32, and ``direct: on`` is a string,
not true. Quantities go through :mod:`iogate.units` (``size: 1GiB``, ``runtime: 30s``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any

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
from iogate.engine.limits import CPUS_MAX, FILES_MAX, NUMA_NODES_MAX, PATH_MAX
from iogate.errors import spoken
from iogate.expr import shown
from iogate.metrics import LATENCIES, parse_metric
from iogate.units import parse_duration, parse_size

STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)

SECTOR = 512  # O_DIRECT alignment that works on every common device


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


def quantity(what: str, example: str, parse: Callable[[Any], int],
             kind: expr.Kind) -> Callable[[Any], int]:
    """The validator of a quantity: an integer, a literal that ``parse`` reads, or
    arithmetic of ``kind``; ``what`` and ``example`` are for its messages."""
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


NUMBER = r"^\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*"
# An operator; a '/' that ends a bandwidth ('100MB/s') is none.
ARITHMETIC = {"type": "string", "pattern": r"[-+*()]|/(?!\s*s\s*$)",
              "description": "arithmetic: + - * / and parentheses, e.g. '${mb_memory}M / 4'"}
# Pydantic's names of numeric constraints and JSON Schema's.
_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


@dataclass(frozen=True, eq=False)  # hashed by identity: its schemas are dicts
class Spelled:
    """The JSON schema of a number that may also be written as text: the integer, with the
    bounds its field sets (``Field(ge=1)``), or any of ``texts`` (a literal with a unit,
    arithmetic). ``floor`` is the lowest integer when the field sets no lower bound."""

    texts: tuple[Mapping[str, Any], ...] = (ARITHMETIC,)
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


SIZE_UNIT = r"([kKmMgGtTpP]([iI][bB]?)?|[bB])?"
SIZE_TEXT = {"type": "string", "pattern": NUMBER + SIZE_UNIT + r"\s*$"}
SIZE_ABOUT = ("bytes: an integer or a number with a binary unit (4k, 4KiB, 1.5MiB, 512B); SI "
              "units such as MB are refused as ambiguous")
SIZE_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 0}, SIZE_TEXT, ARITHMETIC],
               "description": SIZE_ABOUT}
DURATION_TEXT = {"type": "string", "pattern": NUMBER + r"(ns|us|µs|μs|ms|s|m|h)?\s*$"}
DURATION_ABOUT = ("a duration: a number with a unit (ns, us, ms, s, m, h); a bare number "
                  "means seconds")
COUNT_SCHEMA = {"anyOf": [{"type": "integer", "minimum": 1},
                          {"type": "string", "pattern": NUMBER + r"[kMG]?\s*$"}, ARITHMETIC]}

# The engine's fields are 64-bit: nothing larger than 2^63 - 1 bytes or nanoseconds (292 years).
MAX_QUANTITY = 2**63 - 1
Size = Annotated[int, BeforeValidator(quantity("a size", "4KiB", parse_size, expr.SIZE)),
                 Spelled((SIZE_TEXT, ARITHMETIC), SIZE_ABOUT, floor=0), Field(le=MAX_QUANTITY)]
Duration = Annotated[int, BeforeValidator(quantity("a duration", "30s", parse_duration,
                                                   expr.DURATION)),
                     Spelled((DURATION_TEXT, ARITHMETIC), DURATION_ABOUT, floor=0),
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


_size = quantity("a size", "4KiB", parse_size, expr.SIZE)
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


_SIZE = quantity("a size", "8k or -8k", parse_size, expr.SIZE)
SignedSize = Annotated[int, BeforeValidator(_signed_size), WithJsonSchema({
    "anyOf": [{"type": "integer"},
              {"type": "string", "pattern": r"^\s*-?\s*[0-9.]+\s*([kKmMgGtTpP]([iI][bB]?)?|[bB])?"
                                            r"\s*$"},
              ARITHMETIC],
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


_CPU_RANGE = re.compile(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?")


def cpu_list(text: str, what: str = "CPU", limit: int = CPUS_MAX) -> tuple[int, ...]:
    """A CPU list as fio and Linux write it (``0-3,8``, ``5``) as its CPUs, sorted; raise
    ValueError saying what is wrong. NUMA node lists are written alike (``what`` "node",
    ``limit`` NUMA_NODES_MAX)."""
    cpus: set[int] = set()
    for part in text.split(","):
        m = _CPU_RANGE.fullmatch(part)
        if m is None:
            raise ValueError(f"'{expr.shown(text)}' is not a {what} list: write {what} numbers "
                             "and ranges, e.g. '0-3,8'")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if lo > hi or hi >= limit:
            raise ValueError(f"'{part.strip()}': {what}s are 0 to {limit - 1}, a range low to "
                             "high")
        cpus.update(range(lo, hi + 1))
    return tuple(sorted(cpus))


def node_list(text: str) -> tuple[int, ...]:
    """A list of NUMA nodes (``0-1``, ``2``), sorted; raise ValueError saying what is wrong."""
    return cpu_list(text, "node", NUMA_NODES_MAX)


def _listed(parse: Callable[[str], tuple[int, ...]], example: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        if type(value) is int:
            value = str(value)
        if not isinstance(value, str):
            raise ValueError(f"a list such as '{example}', or one number")
        parse(value)
        return value
    return check


CpuList = Annotated[str, BeforeValidator(_listed(cpu_list, "0-3,8")), WithJsonSchema({
    "type": ["string", "integer"], "description": "CPU numbers and ranges, e.g. '0-3,8'"})]
CpuNumber = Annotated[Integer, Field(ge=0, lt=CPUS_MAX)]
NodeList = Annotated[str, BeforeValidator(_listed(node_list, "0-1")), WithJsonSchema({
    "type": ["string", "integer"], "description": "NUMA node numbers and ranges, e.g. '0-1'"})]

NUMA_MEM_MODES = ("default", "local", "prefer", "bind", "interleave")


def numa_mem_policy(text: str) -> tuple[str, tuple[int, ...]]:
    """fio's numa_mem_policy (``bind:0-1``, ``prefer:1``, ``local``) as (mode, nodes); raise
    ValueError saying what is wrong."""
    mode, sep, nodes = text.partition(":")
    mode = mode.strip()
    if mode not in NUMA_MEM_MODES:
        raise ValueError(f"'{expr.shown(text)}': the policy is {spoken(NUMA_MEM_MODES, 'or')}")
    listed = node_list(nodes) if sep else ()
    if mode in ("default", "local") and listed:
        raise ValueError(f"'{expr.shown(text)}': {mode} takes no nodes")
    if mode == "prefer" and len(listed) != 1:
        raise ValueError(f"'{expr.shown(text)}': prefer takes one node, e.g. 'prefer:1'")
    if mode in ("bind", "interleave") and not listed:
        raise ValueError(f"'{expr.shown(text)}': {mode} takes nodes, e.g. '{mode}:0-1'")
    return mode, listed


def _policy(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a policy such as 'bind:0', 'interleave:0-1', 'prefer:1' or 'local'")
    numa_mem_policy(value)
    return value


NumaMemPolicy = Annotated[str, BeforeValidator(_policy), WithJsonSchema({
    "type": "string", "description": "default, local, prefer:NODE, bind:NODES or "
                                     "interleave:NODES"})]


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

def exact_pct(pct: float | int) -> Fraction:
    """A percentage as an exact fraction."""
    # Percentages were written in decimal; repr gives those digits back exactly.
    return Fraction(repr(pct)) if isinstance(pct, float) else Fraction(pct)


def format_pct(x: Fraction) -> str:
    """A percentage as a message writes it: 25, 12.5."""
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"


def pct_number(text: str, where: str) -> float | int:
    """A percentage written in fio's text, 0 to 100 (an int when whole); ``where`` begins
    its messages."""
    t = text.strip()
    if not re.fullmatch(r"[0-9]+(\.[0-9]*)?|\.[0-9]+", t):
        raise ValueError(f"{where}: the percentage '{shown(t)}' is not a number from 0 to "
                         "100")
    x = Fraction(t)
    if x > 100:
        raise ValueError(f"{where}: the percentage {t} is above 100")
    return int(x) if x.denominator == 1 else float(t)


def per_direction_schema(one: dict[str, Any], description: str) -> dict[str, Any]:
    """The JSON schema of a per-direction value: ``one`` for both directions, fio's
    'read,write', or a mapping {read, write}."""
    return {"anyOf": [one, {"type": "string", "pattern": r"^[^,]*,[^,]*$"},
                      {"type": "object", "additionalProperties": False,
                       "properties": {"read": one, "write": one}}],
            "description": description}


def per_direction(value: Any, what: str, parse: Callable[[str], Any], default: Any) -> Any:
    """fio's ``"a,b"`` (read,write; an empty part keeps the default) or one value for both.

    A mapping is returned as is, for the model to check its keys and values.
    """
    if isinstance(value, (Mapping, BaseModel)):
        return value
    if isinstance(value, str) and "," in value:
        parts = value.split(",")
        if len(parts) > 2:
            raise ValueError(f"'{shown(value)}': give at most two {what}, 'read,write'")
        read, write = (parse(p) if p.strip() else default for p in parts)
        return {"read": read, "write": write}
    one = parse(value)
    return {"read": one, "write": one}


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
