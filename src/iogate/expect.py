"""Expectations: ``read.clat.p99: "<= 1.2ms"`` parsed, checked against a measured value.

An expectation is ``OP EXPR`` with OP one of ``>= <= > < == !=``. EXPR is parsed into a
small AST; today the only node is a literal number with a unit, whose unit must match
the metric's kind (a latency takes ``ms``, an IOPS figure ``k``, a bandwidth ``MiB/s``, a
percentage ``5%`` or a plain ``5``, a ratio a plain decimal such as ``0.55``).
The tokenizer already knows ``+ - * / ( )`` and identifiers so that arithmetic and names
such as ``baseline`` can be added by extending :func:`_Parser.expression` and
:func:`_value_of` without touching the rest.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from iogate.metrics import LATENCIES, Kind, MetricPath, parse_metric
from iogate.units import (
    UnitError,
    format_bandwidth,
    format_count,
    format_duration,
    format_size,
    parse_bandwidth,
    parse_count,
    parse_duration,
    parse_size,
)

__all__ = ["ExpectationError", "Expectation", "Check", "parse_expectation", "evaluate",
           "format_value", "OPERATORS"]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
    "==": operator.eq, "!=": operator.ne,
}


class ExpectationError(ValueError):
    """An expectation cannot be understood; the message says what to write."""


# -- values per kind ----------------------------------------------------------------------

_DECIMAL = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*\Z")


def parse_number(text: str) -> float:
    """A plain decimal without a unit: ``0.55``, ``3``."""
    m = _DECIMAL.match(text)
    if m is None:
        raise UnitError(f"'{text}' is not a plain number")
    return float(m.group(1))


def parse_percent(text: str, *, sign: bool = False) -> float:
    """A percentage, ``5%`` or plainly ``5``; with sign=True the ``%`` is required."""
    stripped = text.strip()
    if stripped.endswith("%"):
        return parse_number(stripped[:-1])
    if sign:
        raise UnitError(f"'{text}' is not a percentage")
    return parse_number(stripped)


def _significant(value: float) -> str:
    """Three significant digits without an exponent or trailing zeros: 0.503, 5.2, 81.2, 1234."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, min(6, 2 - math.floor(math.log10(abs(value)))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


_PARSERS: dict[Kind, Callable[[str], float]] = {
    Kind.DURATION: lambda t: parse_duration(t, bare=None),
    Kind.IOPS: parse_count,
    Kind.COUNT: parse_count,
    Kind.BANDWIDTH: parse_bandwidth,
    Kind.BYTES: parse_size,
    Kind.PERCENT: parse_percent,
    Kind.NUMBER: parse_number,
}
_EXAMPLES = {Kind.DURATION: "<= 1.2ms", Kind.IOPS: ">= 250k", Kind.COUNT: "== 0",
             Kind.BANDWIDTH: ">= 400MiB/s", Kind.BYTES: ">= 1GiB", Kind.PERCENT: "<= 5%",
             Kind.NUMBER: "<= 0.55"}


def format_value(kind: Kind, value: float) -> str:
    """A measured or expected value in the units of its kind, for humans."""
    if kind is Kind.DURATION:
        return format_duration(value)
    if kind is Kind.BANDWIDTH:
        return format_bandwidth(value)
    if kind is Kind.BYTES:
        return format_size(value)
    if kind is Kind.PERCENT:
        return _significant(value) + "%"
    if kind is Kind.NUMBER:
        return _significant(value)
    return format_count(value)


def _noun(metric: MetricPath) -> str:
    if metric.kind is Kind.DURATION:
        return "a latency" if metric.name in LATENCIES else "a duration"
    return {Kind.IOPS: "an IOPS figure", Kind.COUNT: "a count", Kind.BANDWIDTH: "a bandwidth",
            Kind.BYTES: "a size in bytes", Kind.PERCENT: "a percentage",
            Kind.NUMBER: "a plain number"}[metric.kind]


def _what_literal_is(text: str) -> str | None:
    """Which kind of quantity ``text`` looks like, to explain a mismatch."""
    for noun, parse in (("a duration", lambda t: parse_duration(t, bare=None)),
                        ("a bandwidth", parse_bandwidth), ("a count", parse_count),
                        ("a size", parse_size),
                        ("a percentage", lambda t: parse_percent(t, sign=True))):
        try:
            parse(text)
            return noun
        except UnitError:
            continue
    return None


# -- tokens and AST -----------------------------------------------------------------------

_UNIT = r"(?:[A-Za-zµμ]+(?:/s)?|/s|%)"
_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<op>>=|<=|==|!=|>|<)"
    r"|(?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:" + _UNIT + r"|\s+(?=[A-Za-zµμ%])" + _UNIT + r")?)"
    r"|(?P<arith>[-+*/()])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
    r")")


@dataclass(frozen=True)
class Token:
    kind: str  # op, number, arith, name
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if not tokens:
                raise ExpectationError(f"'{text}' must start with one of {' '.join(OPERATORS)}, "
                                       "e.g. '>= 250k'")
            raise ExpectationError(f"unexpected '{text[pos:].strip()}' in '{text}'")
        kind = m.lastgroup or ""
        tokens.append(Token(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return tokens


@dataclass(frozen=True)
class Literal:
    """A number with an optional unit, exactly as written (``1.2ms``, ``250k``)."""

    text: str


Expr = Literal  # grows into a Union when arithmetic or names arrive


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise ExpectationError(f"'{self.text}' ends too early: expected a value after "
                                   "the operator")
        self.i += 1
        return tok

    def comparison(self) -> tuple[str, Expr]:
        tok = self.take()
        if tok.kind != "op":
            raise ExpectationError(f"'{self.text}' must start with one of "
                                   f"{' '.join(OPERATORS)}, e.g. '>= 250k'")
        expr = self.expression()
        rest = self.peek()
        if rest is not None:
            raise ExpectationError(f"unexpected '{rest.text}' in '{self.text}': only a single "
                                   "value may follow the operator")
        return tok.text, expr

    def expression(self) -> Expr:
        tok = self.take()
        if tok.kind == "number":
            return Literal(tok.text)
        if tok.kind == "name":
            raise ExpectationError(f"'{tok.text}' in '{self.text}': names are not supported; "
                                   "write a number with a unit")
        raise ExpectationError(f"unexpected '{tok.text}' in '{self.text}': expected a number "
                               "with a unit")


def _value_of(expr: Expr, metric: MetricPath, text: str) -> float:
    """Evaluate an expression in the base unit of the metric's kind."""
    literal = expr.text
    try:
        return float(_PARSERS[metric.kind](literal))
    except UnitError as exc:
        example = _EXAMPLES[metric.kind]
        if metric.kind is Kind.DURATION and re.fullmatch(r"\d+(?:\.\d*)?|\.\d+", literal):
            raise ExpectationError(f"'{literal}' has no unit, but {metric.text} is "
                                   f"{_noun(metric)}; write e.g. '{example}'") from None
        is_a = _what_literal_is(literal)
        if is_a is None or "ambiguous" in str(exc):
            raise ExpectationError(f"'{text}': {exc}") from None
        raise ExpectationError(f"'{literal}' is {is_a}, but {metric.text} is {_noun(metric)}; "
                               f"write e.g. '{example}'") from None


# -- expectations and checks --------------------------------------------------------------

@dataclass(frozen=True)
class Expectation:
    """``metric OP threshold``, the threshold in the metric's base unit."""

    metric: MetricPath
    op: str
    threshold: float
    text: str  # as the user wrote it

    def describe(self) -> str:
        return f"{self.op} {format_value(self.metric.kind, self.threshold)}"


def parse_expectation(metric: str, text: object) -> Expectation:
    """Parse one ``expect`` entry; raise ExpectationError with a message meant for users."""
    try:
        path = parse_metric(metric)
    except ValueError as exc:
        raise ExpectationError(str(exc)) from None
    if isinstance(text, bool) or not isinstance(text, str):
        example = _EXAMPLES[path.kind]
        raise ExpectationError(f"{text!r} is not a comparison: write a comparison like "
                               f"'{example}' (quoted)")
    op, expr = _Parser(text).comparison()
    threshold = _value_of(expr, path, text)
    return Expectation(path, op, threshold, text.strip())


@dataclass(frozen=True)
class Check:
    """The verdict on one expectation."""

    expectation: Expectation
    observed: float | None
    passed: bool
    reason: str


def _why_unmeasured(metric: MetricPath) -> str:
    scope = metric.scope
    if metric.name == "rate_pct":
        which = "" if scope == "total" else f"{scope} "
        return f"no {which}rate was requested, or the workload did no I/O there"
    if scope == "data":
        return "no written data was sampled"
    if scope == "offsets":
        return "the workload has no region to cover"
    if scope == "sync":
        return "the workload made no sync calls"
    if scope in ("read", "write"):
        return f"the workload did no {scope}s"
    return "the workload did no I/O"


def evaluate(exp: Expectation, observed: float | None) -> Check:
    """Compare a measured value with an expectation. Unmeasured or NaN values fail."""
    if observed is None:
        return Check(exp, None, False, f"not measured: {_why_unmeasured(exp.metric)}")
    if isinstance(observed, float) and math.isnan(observed):
        return Check(exp, observed, False, "not measured: the value is not a number")
    passed = OPERATORS[exp.op](observed, exp.threshold)
    shown = format_value(exp.metric.kind, observed)
    if passed:
        reason = f"{shown} {exp.describe()}"
    else:
        reason = f"{shown} is not {exp.describe()}"
    return Check(exp, float(observed), passed, reason)
