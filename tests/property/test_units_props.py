"""Properties of unit parsing: exact round trips and monotonicity."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from iogate.units import (
    format_duration_exact,
    format_size_exact,
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
        assert value == exact and isinstance(value, int)
    else:
        assert value == float(exact)
