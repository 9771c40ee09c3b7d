"""Arithmetic in suite values: ``${ncpus} * 2``, ``${mb_memory}M / 4``, ``(4 + 4) * 2``.

A small tokenizer and recursive-descent parser for ``+ - * /``, unary minus, parentheses,
numbers with optional unit suffixes and identifiers; never ``eval``. Chains of one operator
are parsed in a loop and trees are walked without recursion; nesting is bounded
(:data:`MAX_DEPTH`), and so is the number of terms (:data:`MAX_TERMS`). :func:`parse` builds a
tree once; :func:`evaluate` computes it exactly (``Fraction``) for one kind of quantity, so
that a size field reads ``4k`` as 4096 bytes while a count field reads it as 4000.

Each value has a type: a plain number, a share (below), or a quantity of the kind evaluated
(bytes, nanoseconds, an IOPS figure, ...): a literal with a unit and every name are
quantities. A product may hold one quantity and a quotient may divide by one only if its
dividend is one: ``size * 2`` and ``size / size`` are fine, ``size * size`` and ``2 / size``
are not. A plain number added to a quantity is read in the kind's bare unit (bytes for
sizes, seconds for durations), as a bare value of the field would be. The result must be a
quantity, or a plain number written with bare numbers only (``4096``, ``2 * 1.5``), read in
the bare unit; a ratio of quantities (``1m / 4k``, ``baseline / baseline``) has no unit and
is refused, though it may scale a quantity (``8k / 2k * 1k``). A kind without dimensions
(counts of jobs or loops in a suite) has plain numbers only, whose literals may carry ``k``,
``M``, ``G``, and no names.

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
from typing import TypeVar

from iogate.units import (
    UnitError,
    check_ascii,
    parse_bandwidth,
    parse_count,
    parse_duration,
    parse_size,
)

__all__ = [
    "BANDWIDTH",
    "COUNT",
    "DURATION",
    "SIZE",
    "Binary",
    "ExprError",
    "Kind",
    "Name",
    "Node",
    "Number",
    "Unary",
    "describe",
    "evaluate",
    "evaluate_int",
    "is_expression",
    "literals_in",
    "names_in",
    "parse",
    "printable",
    "shown",
]

LIMIT = 1 << 63  # every intermediate and final value must stay below this in magnitude
MAX_DEPTH = 64  # nesting of parentheses and unary signs
# Numbers and names in one expression; a suite's longest needs a handful. Evaluation walks
# the tree without recursion, so this bounds time and message size, not the stack.
MAX_TERMS = 256
SHOWN_CHARS = 40  # of a value quoted in a message


# No quantity in a suite needs more digits; longer ones are refused before Python's own
# integer conversion limit turns them into an unrelated error.
MAX_DIGITS = 40
MAX_UNIT_CHARS = 16  # the longest unit is a handful of letters: 'MiB/s', 'usec'


def printable(text: str) -> str:
    """``text`` with its control characters (and other unprintable ones) escaped as in
    Python's repr: ``a\\x00b``."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """A value as a message quotes it: cut after ``limit`` characters (then '...'), and its
    control characters escaped as in Python (``\\x00``), so that no input, however long or
    odd, makes a message unreadable or puts raw control bytes on a terminal."""
    return printable(text if len(text) <= limit else text[:limit]) + (
        "..." if len(text) > limit else "")


class ExprError(ValueError):
    """An expression cannot be parsed or evaluated; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))  # whatever a message quotes, no raw controls


@dataclass(frozen=True)
class Kind:
    """A kind of quantity: how its literals read and what a bare number means."""

    name: str  # "a size", used in messages
    literal: Callable[[str], Fraction]  # a literal with a unit, in base units
    bare: Fraction | None  # base units per bare number (1 byte, 10^9 ns); None: needs a unit
    dimensioned: bool = True  # False: every value is plain (suite counts: jobs, loops)
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
      (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:\s*[A-Za-zµμ]+(?:/s(?![A-Za-z0-9_]))?|\s*%)?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>[-+*/()])
    )""", re.VERBOSE | re.ASCII)
_LITERAL = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(.*)", re.DOTALL | re.ASCII)


def _tokens(text: str) -> list[tuple[str, str]]:
    try:  # numbers and names are ASCII; '４' would be a digit to int() and \d
        check_ascii(text, allowed="µμ")
    except UnitError as exc:
        raise ExprError(str(exc)) from None
    out: list[tuple[str, str]] = []
    pos = 0
    terms = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            bad = text[pos:].strip()[:1]
            raise ExprError(f"'{shown(text)}': unexpected '{bad}'; expected a number, a name, "
                            "+ - * / or parentheses")
        if m.lastgroup != "op":
            terms += 1
            if terms > MAX_TERMS:
                raise ExprError(f"'{shown(text)}': more than {MAX_TERMS} terms; an expression "
                                f"may have at most {MAX_TERMS} numbers and names")
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
        found = f"'{shown(tok[1])}'" if tok else "the end"
        return ExprError(f"'{shown(self.text)}': expected {what}, found {found}")

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
            raise ExprError(f"'{shown(self.text)}': nested more than {MAX_DEPTH} levels deep")
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
            if re.match(r"0[0-9]", m.group(1)):
                raise ExprError(f"'{shown(text)}' has a leading zero; write the number "
                                "without it")
            if len(m.group(1)) > MAX_DIGITS:
                raise ExprError(f"a number of {len(m.group(1))} digits; at most {MAX_DIGITS} "
                                "are accepted")
            if len(m.group(2)) > MAX_UNIT_CHARS:
                raise ExprError(f"'{shown(text)}': '{shown(m.group(2), MAX_UNIT_CHARS)}' is "
                                "not a unit")
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


_T = TypeVar("_T")


def _fold(node: Node, leaf: Callable[[Number | Name], _T], unary: Callable[[Unary, _T], _T],
          binary: Callable[[Binary, _T, _T], _T]) -> _T:
    """Combine a tree bottom-up, left operand first, without recursion: a long chain
    (``1 + 1 + ...``) is as deep as it is long."""
    done: list[_T] = []
    todo: list[tuple[Node, bool]] = [(node, False)]
    while todo:
        n, ready = todo.pop()
        if isinstance(n, Unary):
            if ready:
                done.append(unary(n, done.pop()))
            else:
                todo += [(n, True), (n.operand, False)]
        elif isinstance(n, Binary):
            if ready:
                right = done.pop()
                done.append(binary(n, done.pop(), right))
            else:
                todo += [(n, True), (n.right, False), (n.left, False)]
        else:
            done.append(leaf(n))
    return done[0]


def _check(v: _Value, node: Node) -> _Value:
    if abs(v.x) >= LIMIT:
        raise ExprError(f"'{shown(_describe(node))}' overflows: a value reaches 2^63 or more")
    return v


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
_ATOM = 3  # numbers, names and negations are never put in parentheses


def _describe(node: Node) -> str:
    """The expression as text, with only the parentheses it needs, for messages."""
    def leaf(n: Number | Name) -> tuple[str, int]:
        return (n.text if isinstance(n, Number) else n.name), _ATOM

    def negation(n: Unary, operand: tuple[str, int]) -> tuple[str, int]:
        text, level = operand
        return (f"-({text})" if level < _ATOM else f"-{text}"), _ATOM

    def binary(n: Binary, a: tuple[str, int], b: tuple[str, int]) -> tuple[str, int]:
        mine = _PRECEDENCE[n.op]
        left = f"({a[0]})" if a[1] < mine else a[0]
        right = f"({b[0]})" if b[1] <= mine else b[0]
        return f"{left} {n.op} {right}", mine

    return _fold(node, leaf, negation, binary)[0]


def _plain_to_quantity(v: _Value, kind: Kind, node: Node) -> _Value:
    """A bare number next to a quantity, read in the kind's bare unit."""
    if v.dim == 1:
        return v
    if kind.bare is None:
        raise ExprError(f"'{shown(_describe(node))}' mixes a plain number with {kind.name}; "
                        "give the number a unit")
    return _Value(v.x * kind.bare, 1)


def _add(node: Binary, a: _Value, b: _Value, kind: Kind) -> _Value:
    sign = 1 if node.op == "+" else -1
    if a.share != b.share:  # X + p% scales X by (1 + p/100)
        if a.share:
            if node.op == "-":
                raise ExprError(f"'{shown(_describe(node))}' subtracts a value from a "
                                "percentage; write 'VALUE - PERCENT%', e.g. 'baseline - 10%'")
            a, b = b, a
        return _check(_Value(a.x * (1 + sign * b.x), a.dim, bare=a.bare), node)
    if a.dim != b.dim:
        a, b = _plain_to_quantity(a, kind, node), _plain_to_quantity(b, kind, node)
    return _check(_Value(a.x + sign * b.x, a.dim, a.share, a.bare and b.bare), node)


def _eval(node: Node, kind: Kind, names: Mapping[str, Fraction]) -> _Value:
    def leaf(n: Number | Name) -> _Value:
        if isinstance(n, Name):
            if n.name not in names:
                known = (f"; known names: {', '.join(sorted(names))}" if names else
                         f"; a variable is written ${{{shown(n.name)}}}")
                raise ExprError(f"unknown name '{shown(n.name)}'{known}")
            return _check(_Value(Fraction(names[n.name]), 1 if kind.dimensioned else 0), n)
        if not n.unit:
            return _check(_Value(n.number, 0, bare=True), n)
        if n.unit.strip() == "%" and not kind.percent:
            return _check(_Value(n.number / 100, 0, share=True), n)
        try:
            x = kind.literal(n.text)
        except UnitError as exc:
            raise ExprError(str(exc)) from None
        return _check(_Value(x, 1 if kind.dimensioned else 0), n)

    def negation(n: Unary, v: _Value) -> _Value:
        return _Value(-v.x, v.dim, v.share, v.bare)

    return _fold(node, leaf, negation, lambda n, a, b: _binary(n, a, b, kind))


def _binary(node: Binary, a: _Value, b: _Value, kind: Kind) -> _Value:
    if node.op in "+-":
        return _add(node, a, b, kind)
    if node.op == "*":
        if a.dim + b.dim > 1:
            raise ExprError(f"'{shown(_describe(node))}' multiplies {kind.name} by "
                            f"{kind.name}; one side must be a plain number")
        # A share times a plain number is still a share (2 * 10%); times a value, a value.
        share = (a.share and (b.share or b.bare)) or (b.share and a.bare)
        return _check(_Value(a.x * b.x, a.dim + b.dim, share, a.bare and b.bare), node)
    if b.x == 0:
        raise ExprError(f"'{shown(_describe(node))}' divides by zero")
    if b.dim > a.dim:
        raise ExprError(f"'{shown(_describe(node))}' divides a plain number by {kind.name}")
    share = a.share and b.bare
    return _check(_Value(a.x / b.x, a.dim - b.dim, share, a.bare and b.bare), node)


def evaluate(node: Node, *, kind: Kind, names: Mapping[str, Fraction] = _EMPTY) -> Fraction:
    """The exact value of ``node`` in ``kind``'s base units.

    Names are resolved from ``names``, whose values are quantities of ``kind`` (in base
    units). A plain result written with bare numbers is read in the kind's bare unit; a kind
    without one refuses it, as every kind with dimensions refuses a ratio of quantities, and
    every kind a lone percentage.
    """
    v = _eval(node, kind, names)  # division keeps dim >= 0
    if v.share:
        raise ExprError(f"'{shown(_describe(node))}' is a percentage of nothing: a percentage "
                        "scales a value, e.g. 'baseline + 10%' or '90% * baseline'")
    if v.dim == 0 and not v.bare and kind.dimensioned:
        raise ExprError(f"'{shown(_describe(node))}' is a ratio, not {kind.name}: {kind.name} "
                        f"divided by {kind.name} has no unit; multiply it by {kind.name}")
    if v.dim == 0:
        if kind.bare is None:
            raise ExprError(f"'{shown(_describe(node))}' has no unit, but the value is "
                            f"{kind.name}")
        x = v.x * kind.bare
    else:
        x = v.x
    if abs(x) >= LIMIT:
        raise ExprError(f"'{shown(_describe(node))}' overflows: the result is 2^63 or more")
    return x


def names_in(node: Node) -> frozenset[str]:
    """The names an expression refers to."""
    return _fold(node, lambda n: frozenset((n.name,)) if isinstance(n, Name) else frozenset(),
                 lambda n, v: v, lambda n, a, b: a | b)


def literals_in(node: Node) -> list[Number]:
    """The numbers of an expression, left to right."""
    out: list[Number] = []
    _fold(node, lambda n: out.append(n) if isinstance(n, Number) else None,
          lambda n, v: None, lambda n, a, b: None)
    return out


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
        raise ExprError(f"'{shown(text)}' is {_fmt(x)}: the result cannot be negative")
    if x.denominator != 1 and not kind.dimensioned:
        raise ExprError(f"'{shown(text)}' is {_fmt(x)}, not a whole number")
    return int(x)  # truncation is rounding down for x >= 0


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):g}"
