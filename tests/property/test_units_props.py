"""Properties of unit parsing: exact round trips, monotonicity, ASCII only."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate.expect import parse_number, parse_percent
from iogate.expr import BANDWIDTH, COUNT, DURATION, SIZE, evaluate_int
from iogate.units import (
    UnitError,
    format_duration_exact,
    format_size_exact,
    parse_bandwidth,
    parse_count,
    parse_duration,
    parse_size,
)

SIZE_UNITS = {"B": 1, "k": 1 << 10, "KiB": 1 << 10, "m": 1 << 20, "MiB": 1 << 20,
              "g": 1 << 30, "GiB": 1 << 30, "TiB": 1 << 40, "p": 1 << 50}
DURATION_UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
                  "h": 3600 * 10**9}
COUNT_UNITS = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}


@given(st.integers(min_value=0, max_value=1 << 62))
def test_size_round_trip(n):
    assert parse_size(format_size_exact(n)) == n


@given(st.integers(min_value=0, max_value=10**18))
def test_duration_round_trip(ns):
    assert parse_duration(format_duration_exact(ns), bare=None) == ns


@given(st.integers(min_value=0, max_value=1 << 40), st.sampled_from(sorted(SIZE_UNITS)))
def test_size_is_number_times_unit(n, unit):
    assert parse_size(f"{n}{unit}") == n * SIZE_UNITS[unit]


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6),
       st.sampled_from(sorted(SIZE_UNITS)))
def test_size_monotonic(a, b, unit):
    assert (a <= b) == (parse_size(f"{a}{unit}") <= parse_size(f"{b}{unit}"))


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6),
       st.sampled_from(sorted(DURATION_UNITS)))
def test_duration_monotonic(a, b, unit):
    assert (a <= b) == (parse_duration(f"{a}{unit}") <= parse_duration(f"{b}{unit}"))


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=999),
       st.sampled_from(sorted(COUNT_UNITS)))
def test_count_decimals_are_exact(whole, frac, unit):
    # '12.345k' is exactly 12345, and '1.001' the float nearest to 1001/1000: the decimal
    # is scaled exactly and rounded once, never accumulated through binary floats.
    exact = Fraction(whole * 1000 + frac, 1000) * COUNT_UNITS[unit]
    value = parse_count(f"{whole}.{frac:03d}{unit}")
    if exact.denominator == 1:
        assert value == exact
        assert isinstance(value, int)
    else:
        assert value == float(exact)


# Any script's digits (４, ٣, ९) and spaces (U+3000) are what int(), float() and \\d accept;
# a quantity is written in ASCII, the µ of µs the only exception.
_VALID = ("4", "4k", "1.5MiB", "400MiB/s", "250k", "10%", "0.55", "30s", "12 ms", "7")
_FOREIGN = st.one_of(
    st.sampled_from("٣４९\u3000\u00a0\u2009\uff4b\uff2d\u2024\u2044"),  # digits, spaces, ｋ, Ｍ
    st.characters(min_codepoint=0x80, exclude_categories=("Cs",)))


@given(st.sampled_from(_VALID), st.integers(min_value=0, max_value=12), st.booleans(), _FOREIGN)
def test_no_non_ascii_character_is_read_as_a_quantity(valid, at, replace, odd):
    at = min(at, len(valid))
    text = valid[:at] + odd + valid[at + (1 if replace else 0):]
    parsers = [parse_size, parse_count, parse_bandwidth, parse_number, parse_percent]
    if odd not in "µμ":
        parsers += [lambda t: parse_duration(t), lambda t: parse_duration(t, bare=None)]
        parsers += [lambda t, k=k: evaluate_int(t, kind=k)  # type: ignore[misc]
                    for k in (SIZE, COUNT, DURATION, BANDWIDTH)]
    for parse in parsers:
        try:
            value = parse(text)
        except ValueError:
            continue
        raise AssertionError(f"{text!r} was read as {value!r}")


@given(st.sampled_from("٠١٢٣٤٥٦٧٨٩０１２３４５６７８９०१२३४५६७८९"))
def test_a_foreign_digit_is_named(digit):
    with pytest.raises(UnitError, match=f"'{digit}' .*U\\+{ord(digit):04X}.* is not an ASCII "
                                        "digit: write numbers with the digits 0-9"):
        parse_size(f"1{digit}m")
