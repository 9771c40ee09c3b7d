"""Arithmetic in suite values: ``${ncpus} * 2``, ``${mb_memory}M / 4``, ``(4 + 4) * 2``.

A small tokenizer and recursive-descent parser for ``+ - * /``, unary minus, parentheses,
numbers with optional unit suffixes and identifiers; never ``eval``. :func:`parse` builds a
tree once; :func:`evaluate` computes it exactly (``Fraction``) for one kind of quantity, so
that a size field reads ``4k`` as 4096 bytes while a count field reads it as 4000.

Each value carries a dimension: plain (a bare number) or a quantity of the kind evaluated
(bytes, nanoseconds, ...). ``size * 2`` and ``size / size`` are fine; ``size * size`` and
``2 / size`` are not. A plain number added to a quantity is read in the kind's bare unit
(bytes for sizes, seconds for durations), as a bare value of the field would be. Counts
are plain numbers whose literals may carry ``k``, ``M``, ``G``.

A percentage (``10%``) is a share, unless ``%`` is the kind's own unit (percent metrics,
where ``5%`` is five points). Added to or subtracted from anything else, a share scales it:
``baseline + 10%`` is ``baseline * 1.1`` and ``baseline - 10%`` is ``baseline * 0.9``;
multiplied with a quantity it is a factor (``90% * baseline``). A share on its own is not a
value of any kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from iogate.units import UnitError, parse_bandwidth, parse_count, parse_duration, parse_size

__all__ = ["ExprError", "Kind", "SIZE", "DURATION", "COUNT", "BANDWIDTH", "Node", "Number",
           "Name", "Unary", "Binary", "parse", "evaluate", "evaluate_int", "is_expression",
           "names_in", "literals_in", "describe"]

LIMIT = 1 << 63  # every intermediate and final value must stay below this in magnitude
MAX_DEPTH = 64  # nesting of parentheses and unary signs


# No quantity in a suite needs more digits; longer ones are refused before Python's own
# integer conversion limit turns them into an unrelated error.
MAX_DIGITS = 40


class ExprError(ValueError):
    """An expression cannot be parsed or evaluated; the message says why."""


@dataclass(frozen=True)
class Kind:
    """A kind of quantity: how its literals read and what a bare number means."""

    name: str  # "a size", used in messages
    literal: Callable[[str], Fraction]  # a literal with a unit, in base units
    bare: Fraction | None  # base units per bare number (1 byte, 10^9 ns); None: needs a unit
    dimensioned: bool = True  # False: every value is plain (counts)
    percent: bool = False  # '%' is this kind's unit (percentage points), not a share


def _exact(parse: Callable[[str], int | float]) -> Callable[[str], Fraction]:
    def literal(text: str) -> Fraction:
        value = parse(text)
        # parse_count and parse_bandwidth give a float only for non-whole values.
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    return literal


SIZE = Kind("a size", _exact(parse_size), Fraction(1))
DURATION = Kind("a duration", _exact(lambda t: parse_duration(t, bare=None)),
                Fraction(10**9))
COUNT = Kind("a count", _exact(parse_count), Fraction(1), dimensioned=False)
BANDWIDTH = Kind("a bandwidth", _exact(parse_bandwidth), Fraction(1))


# -- syntax tree --------------------------------------------------------------------------

@dataclass(frozen=True)
class Number:
    text: str  # the literal as written: '4', '1.5', '64k', '100MiB/s'
    number: Fraction  # the numeric part
    unit: str  # '' for a plain number


@dataclass(frozen=True)
class Name:
    name: str


@dataclass(frozen=True)
class Unary:
    operand: Node  # always negation; a leading '+' is dropped


@dataclass(frozen=True)
class Binary:
    op: str  # + - * /
    left: Node
    right: Node


Node = Number | Name | Unary | Binary


# -- tokens -------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    \s*(?:
      (?P<number>(?:\d+(?:\.\d*)?|\.\d+)(?:\s*[A-Za-zµμ]+(?:/s(?![A-Za-z0-9_]))?|\s*%)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>[-+*/()])
    )""", re.VERBOSE)
_LITERAL = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(.*)", re.DOTALL)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            bad = text[pos:].strip()[:1]
            raise ExprError(f"'{text}': unexpected '{bad}'; expected a number, a name, "
                            "+ - * / or parentheses")
        out.append((m.lastgroup, m.group(m.lastgroup)))
        pos = m.end()
    return out


def is_expression(text: str) -> bool:
    """Whether ``text`` is more than one literal: it has operators, names or parentheses.

    A single literal (``4k``, ``-5``, ``1.5 MiB``) is left to the plain unit parsers,
    whose messages are more specific.
    """
    try:
        toks = _tokens(text)
    except ExprError:
        return any(c in text for c in "*/()") or re.search(r"\S\s*[-+]", text) is not None
    if toks and toks[0] in (("op", "-"), ("op", "+")):
        toks = toks[1:]
    return len(toks) > 1 or (len(toks) == 1 and toks[0][0] == "op")


class _Parser:
    """expr := term (('+'|'-') term)*; term := unary (('*'|'/') unary)*;
    unary := ('-'|'+') unary | atom; atom := NUMBER | NAME | '(' expr ')'."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, what: str) -> ExprError:
        tok = self.peek()
        found = f"'{tok[1]}'" if tok else "the end"
        return ExprError(f"'{self.text}': expected {what}, found {found}")

    def parse(self) -> Node:
        if not self.toks:
            raise ExprError("empty expression")
        node = self.expr()
        if self.peek() is not None:
            raise self.fail("an operator")
        return node

    def expr(self) -> Node:
        node = self.term()
        while (tok := self.peek()) is not None and tok in (("op", "+"), ("op", "-")):
            self.take()
            node = Binary(tok[1], node, self.term())
        return node

    def term(self) -> Node:
        node = self.unary()
        while (tok := self.peek()) is not None and tok in (("op", "*"), ("op", "/")):
            self.take()
            node = Binary(tok[1], node, self.unary())
        return node

    def unary(self) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExprError(f"'{self.text[:40]}...': nested more than {MAX_DEPTH} levels deep")
        try:
            tok = self.peek()
            if tok == ("op", "-"):
                self.take()
                return Unary(self.unary())
            if tok == ("op", "+"):
                self.take()
                return self.unary()
            return self.atom()
        finally:
            self.depth -= 1

    def atom(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise self.fail("a number")
        kind, text = tok
        if kind == "number":
            self.take()
            m = _LITERAL.fullmatch(text)
            assert m is not None
            if re.match(r"0\d", m.group(1)):
                raise ExprError(f"'{text}' has a leading zero; write the number without it")
            if len(m.group(1)) > MAX_DIGITS:
                raise ExprError(f"a number of {len(m.group(1))} digits; at most {MAX_DIGITS} "
                                "are accepted")
            return Number(text, Fraction(m.group(1)), m.group(2))
        if kind == "name":
            self.take()
            return Name(text)
        if tok == ("op", "("):
            self.take()
            node = self.expr()
            if self.peek() != ("op", ")"):
                raise self.fail("')'")
            self.take()
            return node
        raise self.fail("a number")


def parse(text: str) -> Node:
    """Parse an arithmetic expression; raise ExprError naming what is wrong."""
    return _Parser(text).parse()


# -- evaluation ---------------------------------------------------------------------------

_EMPTY: Mapping[str, Fraction] = MappingProxyType({})


@dataclass(frozen=True)
class _Value:
    x: Fraction  # in base units when dim is 1
    dim: int  # 0 plain, 1 a quantity of the kind
    share: bool = False  # a percentage as a fraction (0.1 for 10%); always plain
    bare: bool = False  # made of unitless numbers only: scaling a share keeps it a share


def _check(v: _Value, text: str) -> _Value:
    if abs(v.x) >= LIMIT:
        raise ExprError(f"'{text}' overflows: a value reaches 2^63 or more")
    return v


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def _describe(node: Node, outer: int = 0, right: bool = False) -> str:
    """The expression as text, with only the parentheses it needs, for messages."""
    if isinstance(node, Number):
        return node.text
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Unary):
        return f"-{_describe(node.operand, 3)}"
    mine = _PRECEDENCE[node.op]
    text = f"{_describe(node.left, mine)} {node.op} {_describe(node.right, mine, True)}"
    return f"({text})" if mine < outer or (right and mine == outer) else text


def _plain_to_quantity(v: _Value, kind: Kind, text: str) -> _Value:
    """A bare number next to a quantity, read in the kind's bare unit."""
    if v.dim == 1:
        return v
    if kind.bare is None:
        raise ExprError(f"'{text}' mixes a plain number with {kind.name}; give the number "
                        "a unit")
    return _Value(v.x * kind.bare, 1)


def _add(node: Binary, a: _Value, b: _Value, kind: Kind) -> _Value:
    text = _describe(node)
    sign = 1 if node.op == "+" else -1
    if a.share != b.share:  # X + p% scales X by (1 + p/100)
        if a.share:
            if node.op == "-":
                raise ExprError(f"'{text}' subtracts a value from a percentage; write "
                                "'VALUE - PERCENT%', e.g. 'baseline - 10%'")
            a, b = b, a
        return _check(_Value(a.x * (1 + sign * b.x), a.dim), text)
    if a.dim != b.dim:
        a, b = _plain_to_quantity(a, kind, text), _plain_to_quantity(b, kind, text)
    return _check(_Value(a.x + sign * b.x, a.dim, a.share, a.bare and b.bare), text)


def _eval(node: Node, kind: Kind, names: Mapping[str, Fraction]) -> _Value:
    if isinstance(node, Number):
        if not node.unit:
            return _check(_Value(node.number, 0, bare=True), node.text)
        if node.unit.strip() == "%" and not kind.percent:
            return _check(_Value(node.number / 100, 0, share=True), node.text)
        try:
            x = kind.literal(node.text)
        except UnitError as exc:
            raise ExprError(str(exc)) from None
        return _check(_Value(x, 1 if kind.dimensioned else 0), node.text)
    if isinstance(node, Name):
        if node.name not in names:
            known = (f"; known names: {', '.join(sorted(names))}" if names else
                     f"; a variable is written ${{{node.name}}}")
            raise ExprError(f"unknown name '{node.name}'{known}")
        return _check(_Value(Fraction(names[node.name]), 1 if kind.dimensioned else 0),
                      node.name)
    if isinstance(node, Unary):
        v = _eval(node.operand, kind, names)
        return _Value(-v.x, v.dim, v.share, v.bare)
    a, b = _eval(node.left, kind, names), _eval(node.right, kind, names)
    text = _describe(node)
    if node.op in "+-":
        return _add(node, a, b, kind)
    if node.op == "*":
        if a.dim + b.dim > 1:
            raise ExprError(f"'{text}' multiplies {kind.name} by {kind.name}; "
                            "one side must be a plain number")
        # A share times a plain number is still a share (2 * 10%); times a value, a value.
        share = (a.share and (b.share or b.bare)) or (b.share and a.bare)
        return _check(_Value(a.x * b.x, a.dim + b.dim, share, a.bare and b.bare), text)
    if b.x == 0:
        raise ExprError(f"'{text}' divides by zero")
    if b.dim > a.dim:
        raise ExprError(f"'{text}' divides a plain number by {kind.name}")
    share = a.share and b.bare
    return _check(_Value(a.x / b.x, a.dim - b.dim, share, a.bare and b.bare), text)


def evaluate(node: Node, *, kind: Kind, names: Mapping[str, Fraction] = _EMPTY) -> Fraction:
    """The exact value of ``node`` in ``kind``'s base units.

    Names are resolved from ``names``, whose values are quantities of ``kind`` (in base
    units). A plain result, a ratio of two quantities included, is read in the kind's bare
    unit; a kind without one refuses it, and every kind refuses a lone percentage.
    """
    v = _eval(node, kind, names)  # division keeps dim >= 0
    if v.share:
        raise ExprError(f"'{_describe(node)}' is a percentage of nothing: a percentage scales "
                        "a value, e.g. 'baseline + 10%' or '90% * baseline'")
    if v.dim == 0:
        if kind.bare is None:
            raise ExprError(f"'{_describe(node)}' has no unit, but the value is {kind.name}")
        x = v.x * kind.bare
    else:
        x = v.x
    if abs(x) >= LIMIT:
        raise ExprError(f"'{_describe(node)}' overflows: the result is 2^63 or more")
    return x


def names_in(node: Node) -> frozenset[str]:
    """The names an expression refers to."""
    if isinstance(node, Name):
        return frozenset((node.name,))
    if isinstance(node, Unary):
        return names_in(node.operand)
    if isinstance(node, Binary):
        return names_in(node.left) | names_in(node.right)
    return frozenset()


def literals_in(node: Node) -> list[Number]:
    """The numbers of an expression, left to right."""
    if isinstance(node, Number):
        return [node]
    if isinstance(node, Unary):
        return literals_in(node.operand)
    if isinstance(node, Binary):
        return literals_in(node.left) + literals_in(node.right)
    return []


def describe(node: Node) -> str:
    """The expression as text, with only the parentheses it needs."""
    return _describe(node)


def evaluate_int(text: str, *, kind: Kind, names: Mapping[str, Fraction] = _EMPTY) -> int:
    """Parse and evaluate ``text`` for an integer field; refuse negative results.

    Sizes and durations round down to whole bytes and nanoseconds, as fio does when it
    divides sizes; a count must come out whole (half a job is a mistake, not a rounding).
    """
    x = evaluate(parse(text), kind=kind, names=names)
    if x < 0:
        raise ExprError(f"'{text}' is {_fmt(x)}: the result cannot be negative")
    if x.denominator != 1 and not kind.dimensioned:
        raise ExprError(f"'{text}' is {_fmt(x)}, not a whole number")
    return int(x)  # truncation is rounding down for x >= 0


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"
