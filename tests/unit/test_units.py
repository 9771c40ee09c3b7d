"""Parsing and formatting of sizes, durations, counts and bandwidths."""

import pytest

from iogate.units import (
    UnitError,
    format_bandwidth,
    format_count,
    format_duration,
    format_duration_exact,
    format_size,
    format_size_exact,
    parse_bandwidth,
    parse_count,
    parse_duration,
    parse_size,
)

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


@pytest.mark.parametrize(("text", "expected"), [
    ("4096", 4096), ("4k", 4 * KiB), ("4K", 4 * KiB), ("4KiB", 4 * KiB), ("4kib", 4 * KiB),
    ("4Ki", 4 * KiB), ("4 KiB", 4 * KiB), (" 64m ", 64 * MiB), ("1MiB", MiB), ("2g", 2 * GiB),
    ("3GiB", 3 * GiB), ("1t", 1 << 40), ("1TiB", 1 << 40), ("1p", 1 << 50), ("1PiB", 1 << 50),
    ("512B", 512), ("512b", 512), ("1.5k", 1536), ("0.5MiB", 512 * KiB), ("0", 0),
    (4096, 4096), (0, 0),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("0.3k", "'0.3k' is not a whole number of bytes"),
    ("10MB", "ambiguous unit 'MB': write '10MiB' (10485760 bytes) or '10000000'"),
    ("1MB", "ambiguous unit 'MB': write '1MiB' (1048576 bytes) or '1000000'"),
    ("4kB", "ambiguous unit 'kB'"), ("4KB", "ambiguous unit 'KB'"),
    ("1GB", "ambiguous unit 'GB'"), ("1TB", "ambiguous unit 'TB'"),
    ("10Q", "unknown size unit 'Q': use one of B, k/KiB"),
    ("-1k", "cannot be negative"), ("abc", "'abc' is not a size"),
    ("0777", "'0777' has a leading zero"), ("1.5.2k", "is not a size"),
])
def test_parse_size_rejects(text, message):
    with pytest.raises(UnitError) as exc:
        parse_size(text)
    assert message in str(exc.value)


@pytest.mark.parametrize("value", [True, 1.5, None, [4096], -1])
def test_parse_size_rejects_non_strings(value):
    with pytest.raises(UnitError):
        parse_size(value)


def test_unit_error_is_value_error():
    assert issubclass(UnitError, ValueError)


@pytest.mark.parametrize(("text", "expected"), [
    ("1.2ms", 1_200_000), ("5ns", 5), ("7us", 7_000), ("7µs", 7_000), ("30s", 30 * 10**9),
    ("2m", 120 * 10**9), ("1h", 3600 * 10**9), ("1.5s", 1_500_000_000), ("30", 30 * 10**9),
    (30, 30 * 10**9), ("0", 0), ("250 ms", 250_000_000),
])
def test_parse_duration(text, expected):
    assert parse_duration(text) == expected


def test_parse_duration_bare_unit_is_configurable():
    assert parse_duration("5", bare="ms") == 5_000_000
    with pytest.raises(UnitError, match="say the unit: 5ms"):
        parse_duration("5", bare=None)
    with pytest.raises(UnitError, match="say the unit"):
        parse_duration(5, bare=None)


@pytest.mark.parametrize(("text", "message"), [
    ("-5", "cannot be negative"), (-5, "cannot be negative"),
    ("1.5ns", "not a whole number of nanoseconds"), ("3d", "unknown duration unit 'd'"),
    ("1:30", "looks like minutes:seconds; write a unit instead, e.g. '90s'"),
    ("1MS", "unknown duration unit 'MS'"),
])
def test_parse_duration_rejects(text, message):
    with pytest.raises(UnitError) as exc:
        parse_duration(text)
    assert message in str(exc.value)


@pytest.mark.parametrize(("text", "expected"), [
    ("250k", 250_000), ("250K", 250_000), ("1.5M", 1_500_000), ("2G", 2_000_000_000),
    ("0", 0), ("12", 12), (7, 7), ("0.5", 0.5), ("1.25k", 1250),
])
def test_parse_count(text, expected):
    value = parse_count(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(("text", "message"), [
    ("1m", "ambiguous unit 'm' in '1m': write 'M' for millions"),
    ("5x", "unknown count unit 'x'"), ("-3", "cannot be negative"), (True, "expected a number"),
])
def test_parse_count_rejects(text, message):
    with pytest.raises(UnitError) as exc:
        parse_count(text)
    assert message in str(exc.value)


@pytest.mark.parametrize(("text", "expected"), [
    ("400MiB/s", 400 * MiB), ("1GiB/s", GiB), ("500KiB/s", 500 * KiB), ("123B/s", 123),
    ("4k/s", 4096), ("1.5 MiB/s", 3 * MiB // 2),
])
def test_parse_bandwidth(text, expected):
    assert parse_bandwidth(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("400MB/s", "ambiguous unit 'MB/s': write '400MiB/s' (419430400 bytes/s) or '400000000/s'"),
    ("400MiB", "'400MiB' is not a bandwidth: write a size per second, e.g. '400MiB/s'"),
    ("4Q/s", "unknown size unit 'Q'"),
])
def test_parse_bandwidth_rejects(text, message):
    with pytest.raises(UnitError) as exc:
        parse_bandwidth(text)
    assert message in str(exc.value)


@pytest.mark.parametrize(("fmt", "value", "text"), [
    (format_size, 4096, "4KiB"), (format_size, 512, "512B"), (format_size, 1.5 * MiB, "1.5MiB"),
    (format_size, 412 * MiB, "412MiB"), (format_size, 0, "0B"),
    (format_duration, 1_200_000, "1.2ms"), (format_duration, 850_000, "850us"),
    (format_duration, 3 * 10**9, "3s"), (format_duration, 90 * 10**9, "1.5m"),
    (format_duration, 42, "42ns"), (format_duration, 0, "0ns"),
    (format_count, 250_300, "250.3k"), (format_count, 1_500_000, "1.5M"), (format_count, 12, "12"),
    (format_count, 0, "0"), (format_count, 2.5e9, "2.5G"),
    (format_bandwidth, 412 * MiB, "412MiB/s"), (format_bandwidth, 123, "123B/s"),
])
def test_format(fmt, value, text):
    assert fmt(value) == text


def test_exact_formatters_pick_the_largest_dividing_unit():
    assert format_size_exact(1536) == "1536B"
    assert format_size_exact(3 * MiB) == "3MiB"
    assert format_size_exact(0) == "0B"
    assert format_duration_exact(90 * 10**9) == "90s"
    assert format_duration_exact(2 * 3600 * 10**9) == "2h"
    assert format_duration_exact(1_200_000) == "1200us"
