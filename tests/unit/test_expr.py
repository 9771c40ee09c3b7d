"""Arithmetic in suite values: parsing, exact evaluation per kind, and every refusal."""

from fractions import Fraction

import pytest

from iogate.expr import (
    COUNT,
    DURATION,
    MAX_TERMS,
    SIZE,
    Binary,
    ExprError,
    Name,
    Number,
    Unary,
    describe,
    evaluate,
    evaluate_int,
    is_expression,
    literals_in,
    names_in,
    parse,
)


def test_parse_tree_respects_precedence_and_parentheses():
    assert parse("1 + 2 * 3") == Binary("+", Number("1", Fraction(1), ""),
                                        Binary("*", Number("2", Fraction(2), ""),
                                               Number("3", Fraction(3), "")))
    assert parse("(1 + 2) * -x") == Binary("*", Binary("+", Number("1", Fraction(1), ""),
                                                       Number("2", Fraction(2), "")),
                                           Unary(Name("x")))
    assert parse("100MiB/s / 2") == Binary("/", Number("100MiB/s", Fraction(100), "MiB/s"),
                                           Number("2", Fraction(2), ""))


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("4 * 2", COUNT, 8),
    ("(4 + 4) * 2", COUNT, 16),
    ("20k * 2", COUNT, 40_000),  # counts read k as a thousand
    ("15934M / 4", SIZE, 15934 * (1 << 20) // 4),
    ("1M + 512", SIZE, (1 << 20) + 512),  # a bare number next to a size is bytes
    ("3 / 2", SIZE, 1),  # sizes round down to whole bytes
    ("1G / 3", SIZE, (1 << 30) // 3),
    ("4k / 1k", COUNT, 4),
    ("8k / 2k * 1k", SIZE, 4096),  # a ratio of sizes is a plain number
    ("1s + 500ms", DURATION, 1_500_000_000),
    ("2 * 1.5", DURATION, 3_000_000_000),  # a plain duration is seconds
    ("-(-3)", COUNT, 3),
    ("10 - 2 - 3", COUNT, 5),  # left associative
    ("24 / 4 / 2", COUNT, 3),
])
def test_evaluate_int(text, kind, value):
    assert evaluate_int(text, kind=kind) == value


@pytest.mark.parametrize(("text", "kind", "message"), [
    ("1 / 0", COUNT, "'1 / 0' divides by zero"),
    ("4k / (2k - 2k)", SIZE, "'4k / (2k - 2k)' divides by zero"),
    ("9223372036854775807 + 1", COUNT, "overflows"),
    ("4G * 4G", COUNT, "overflows"),
    ("7 / 2", COUNT, "'7 / 2' is 3.5, not a whole number"),
    ("4k * 4k", SIZE, "'4k * 4k' multiplies a size by a size"),
    ("2 / 4k", SIZE, "'2 / 4k' divides a plain number by a size"),
    ("1 - 2", COUNT, "'1 - 2' is -1: the result cannot be negative"),
    ("2 * (3", COUNT, "'2 * (3': expected ')', found the end"),
    ("1 2", COUNT, "'1 2': expected an operator, found '2'"),
    ("2 **3", COUNT, "'2 **3': expected a number, found '*'"),
    ("", COUNT, "empty expression"),
    ("3 % 2", COUNT, "expected an operator, found '2'"),
    ("50% * 2", COUNT, "is a percentage of nothing"),
    ("x * 2", COUNT, "unknown name 'x'; a variable is written ${x}"),
    ("4MB * 2", SIZE, "ambiguous unit 'MB'"),
    ("2m * 2", COUNT, "ambiguous unit 'm'"),
    ("007 + 1", COUNT, "'007' has a leading zero"),
    ("(" * 100 + "1" + ")" * 100, COUNT, "nested more than 64 levels deep"),
])
def test_refusals(text, kind, message):
    with pytest.raises(ExprError) as info:
        evaluate_int(text, kind=kind)
    assert message in str(info.value)


@pytest.mark.parametrize(("text", "kind", "message"), [
    ("1m / 4k", SIZE, "'1m / 4k' is a ratio, not a size: a size divided by a size has no "
                      "unit"),
    ("(1s + 1s) / 1s", DURATION, "is a ratio, not a duration"),
    ("base / base", SIZE, "is a ratio, not a size"),
])
def test_a_ratio_of_quantities_is_not_a_quantity(text, kind, message):
    with pytest.raises(ExprError) as info:
        evaluate(parse(text), kind=kind, names={"base": Fraction(4096)})
    assert message in str(info.value)
    # A kind without dimensions (counts of jobs, of loops) reads it as the number it is.
    assert evaluate(parse("1M / 4k"), kind=COUNT) == 250


def test_names_are_quantities_of_the_kind():
    names = {"baseline": Fraction(250_000)}
    assert evaluate(parse("baseline * 0.9"), kind=COUNT, names=names) == 225_000
    assert evaluate(parse("base + 1ms"), kind=DURATION,
                    names={"base": Fraction(2_000_000)}) == 3_000_000
    with pytest.raises(ExprError, match="unknown name 'other'; known names: baseline"):
        evaluate(parse("other"), kind=COUNT, names=names)


@pytest.mark.parametrize(("text", "expected"), [
    ("4k", False), ("-5", False), ("1.5 MiB", False), ("100MiB/s", False), ("1:30", False),
    ("x", False), ("4 * 2", True), ("(4)", True), ("${x}", False), ("1M - 512", True),
    ("4k / 2", True),
])
def test_is_expression(text, expected):
    assert is_expression(text) is expected


@pytest.mark.parametrize(("text", "kind", "names", "value"), [
    ("base + 10%", COUNT, {"base": Fraction(1000)}, 1100),
    ("base - 10%", COUNT, {"base": Fraction(1000)}, 900),
    ("10% + base", COUNT, {"base": Fraction(1000)}, 1100),
    ("90% * base", DURATION, {"base": Fraction(10**9)}, 9 * 10**8),
    ("base / 50%", SIZE, {"base": Fraction(4096)}, 8192),
    ("0.9 * base", COUNT, {"base": Fraction(1000)}, 900),
    ("90% * base", COUNT, {"base": Fraction(1000)}, 900),  # counts: a name is not a share
    ("base * 90%", COUNT, {"base": Fraction(1000)}, 900),
    ("2 * 10% + 1k", COUNT, {}, 1200),
    ("1ms + 10% + 10%", DURATION, {}, 1_210_000),  # each share scales what is left of it
    ("1ms + (10% + 10%)", DURATION, {}, 1_200_000),
    ("4k + 2 * 25%", SIZE, {}, 6144),
])
def test_percentages_are_shares(text, kind, names, value):
    assert evaluate(parse(text), kind=kind, names=names) == value


@pytest.mark.parametrize(("text", "message"), [
    ("10%", "'10%' is a percentage of nothing"),
    ("2 * 10%", "'2 * 10%' is a percentage of nothing"),
    ("10% - 1ms", "subtracts a value from a percentage"),
])
def test_percentage_refusals(text, message):
    with pytest.raises(ExprError) as info:
        evaluate(parse(text), kind=DURATION)
    assert message in str(info.value)


def test_a_kind_without_a_bare_unit_refuses_plain_numbers():
    from iogate.expr import Kind
    strict = Kind("a duration", DURATION.literal, None)
    assert evaluate(parse("2 * 1ms"), kind=strict) == 2_000_000
    with pytest.raises(ExprError, match="'5' has no unit, but the value is a duration"):
        evaluate(parse("5"), kind=strict)
    with pytest.raises(ExprError, match="mixes a plain number with a duration"):
        evaluate(parse("1ms + 5"), kind=strict)


def test_percent_kinds_read_percent_as_points():
    from iogate.expr import Kind
    pct = Kind("a percentage", lambda t: Fraction(t.strip().rstrip("%").strip()), Fraction(1),
               percent=True)
    assert evaluate(parse("base - 1%"), kind=pct, names={"base": Fraction(70)}) == 69


# -- long and deep expressions ----------------------------------------------------------------

def test_a_chain_of_the_most_terms_is_evaluated_and_described():
    text = " + ".join(["1"] * (MAX_TERMS - 1) + ["x"])
    node = parse(text)
    assert evaluate(node, kind=COUNT, names={"x": Fraction(5)}) == MAX_TERMS + 4
    assert describe(node) == text  # left-associative: no parentheses needed
    assert names_in(node) == {"x"}
    assert [n.text for n in literals_in(node)] == ["1"] * (MAX_TERMS - 1)


def test_more_terms_are_refused_without_quoting_them_all():
    with pytest.raises(ExprError) as info:
        evaluate_int("+".join(["1"] * 5001), kind=SIZE)
    message = str(info.value)
    assert message == (f"'{'1+' * 20}...': more than {MAX_TERMS} terms; an expression may "
                       f"have at most {MAX_TERMS} numbers and names")


def test_errors_deep_in_a_long_chain_quote_it_cut_short():
    text = " * ".join(["2"] * 70)  # 2^70 overflows partway
    with pytest.raises(ExprError) as info:
        evaluate_int(text, kind=COUNT)
    assert str(info.value) == f"'{text[:40]}...' overflows: a value reaches 2^63 or more"


@pytest.mark.parametrize("text", [
    "1 - (2 - 3)", "(1 - 2) - 3", "8 / (4 / 2)", "-(1 + 2) * 3", "--x", "-x * -(y - 1)",
    "a * (b + c) / (d - e) - f", "(1 + 2) * (3 + 4) - 5 / (6 * 7)", "1 + 2 * 3 - 4 / 5",
])
def test_describe_gives_back_the_same_tree(text):
    node = parse(text)
    assert parse(describe(node)) == node


def test_parentheses_nested_too_deep_are_refused_with_the_text_cut_short():
    with pytest.raises(ExprError) as info:
        parse("(" * 5000 + "1" + ")" * 5000)
    assert str(info.value) == f"'{'(' * 40}...': nested more than 64 levels deep"
    assert evaluate_int("(" * 63 + "1" + ")" * 63, kind=COUNT) == 1


@pytest.mark.parametrize(("text", "message"), [
    ("1\0 + 1", "'1\\x00 + 1': unexpected '\\x00'"),
    ("4" + "k" * 100 + " * 2", "'" + "k" * 16 + "...' is not a unit"),
    ("x" * 100 + " * 2", "unknown name '" + "x" * 40 + "...'"),
])
def test_messages_quote_odd_input_escaped_and_short(text, message):
    with pytest.raises(ExprError) as info:
        evaluate_int(text, kind=SIZE)
    assert message in str(info.value)
    assert str(info.value).isprintable()
