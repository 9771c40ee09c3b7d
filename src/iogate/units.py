"""Quantities with units: parsing what users write in suites, formatting what reports show.

Sizes are binary (``4k`` = ``4KiB`` = 4096 bytes, as in fio). The SI spellings ``kB``,
``MB``... are refused because users mean different things by them. Durations are
nanoseconds, counts are plain numbers (``250k`` = 250000), bandwidths bytes per second.
Arithmetic is exact (``Fraction``) so ``1.5k`` is exactly 1536 and ``0.3k`` is refused.

Quantities are written in ASCII: digits 0-9, ASCII spaces, ASCII unit letters, the ``µ`` of
``µs`` the one exception. Python's ``int()``, ``float()`` and ``\\d`` read any script's digits
(``４``, ``٣``) as numbers; :func:`check_ascii` refuses them, naming the character, for every
parser here and for the other readers of numbers in suites (expressions, expectations).
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction

__all__ = [
    "DURATION_UNITS",
    "SIZE_UNITS",
    "UnitError",
    "check_ascii",
    "format_bandwidth",
    "format_count",
    "format_duration",
    "format_duration_exact",
    "format_size",
    "format_size_exact",
    "parse_bandwidth",
    "parse_count",
    "parse_duration",
    "parse_size",
]


class UnitError(ValueError):
    """A quantity could not be parsed; the message says what to write instead."""


_BINARY = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_BINARY_NAMES = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
SIZE_UNITS = "B, k/KiB, m/MiB, g/GiB, t/TiB, p/PiB"

_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
       "m": 60_000_000_000, "h": 3_600_000_000_000}
DURATION_UNITS = "ns, us (µs), ms, s, m (minutes), h"

_COUNT = {"": 1, "k": 1_000, "K": 1_000, "M": 1_000_000, "G": 1_000_000_000}

_QUANTITY = re.compile(r"\s*([-+]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-zµμ]*)\s*\Z",
                       re.ASCII)
_MICRO = "µμ"  # MICRO SIGN and GREEK SMALL LETTER MU, both written for microseconds


def check_ascii(value: str, *, allowed: str = "") -> None:
    """Refuse a non-ASCII character (but those in ``allowed``) in a number as written.

    ``int('４')``, ``float('٣')`` and the ``\\d`` of ``re`` all read other scripts' digits,
    and ``\\s`` and ``str.strip`` other spaces; a suite must mean the same to every reader of
    it, so its numbers are plain ASCII.
    """
    for c in value:
        if c > "\x7f" and c not in allowed:
            name = unicodedata.name(c, "unnamed")
            what = (f"'{c}' (U+{ord(c):04X} {name}) is not an ASCII digit: write numbers with "
                    "the digits 0-9") if unicodedata.digit(c, None) is not None else (
                f"{_quoted(c)} (U+{ord(c):04X} {name}) is not ASCII: write a number with "
                "the digits 0-9, ASCII spaces and a unit such as KiB, ms or k")
            raise UnitError(f"{_quoted(value)}: {what}")


def _quoted(text: str) -> str:
    """``text`` in quotes, unprintable characters escaped, cut after 40 characters."""
    cut = text if len(text) <= 40 else text[:40] + "..."
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut) + "'"


def _split(value: str, what: str) -> tuple[Fraction, str, str]:
    """Split ``'1.5 KiB'`` into (Fraction(3, 2), 'KiB', '1.5'); refuse signs below zero."""
    check_ascii(value, allowed=_MICRO if what == "a duration" else "")
    m = _QUANTITY.match(value)
    if not m:
        raise UnitError(f"'{value}' is not {what}: expected a number with an optional unit")
    sign, number, unit = m.groups()
    if re.match(r"0[0-9]", number):
        raise UnitError(f"'{value.strip()}' has a leading zero; write the number without it "
                        "(it is decimal, never octal)")
    if sign == "-" and Fraction(number) != 0:
        raise UnitError(f"'{value}': {what} cannot be negative")
    return Fraction(number), unit, number


def _check_plain(value: object, what: str) -> None:
    # bool is an int subclass and floats lose precision: both are almost always mistakes.
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UnitError(f"expected {what} as a string like '4KiB' or an integer, "
                        f"got {type(value).__name__} {value!r}")


def _whole(x: Fraction, value: str, unit_word: str) -> int:
    if x.denominator != 1:
        raise UnitError(f"'{value}' is not a whole number of {unit_word}")
    return int(x)


def _size_multiplier(unit: str, number: str, per: str = "") -> int:
    """Multiplier for a size suffix; ``B`` alone is bytes. SI forms are refused."""
    low = unit.lower()
    m = re.fullmatch(r"([kmgtp]?)(i?)(b?)", low)
    if m is None or (m.group(2) and not m.group(1)):
        raise UnitError(f"unknown size unit '{unit}': use one of {SIZE_UNITS}")
    prefix, binary, byte = m.groups()
    if prefix and byte and not binary:
        n = Fraction(number)
        si = n * 1000 ** (" kmgtp".index(prefix))
        binary_name = prefix.upper() + "iB"
        exact = n * _BINARY[prefix]
        exact_text = f"{int(exact)} bytes" if exact.denominator == 1 else f"{float(exact):g} bytes"
        si_text = str(int(si)) if si.denominator == 1 else f"{float(si):g}"
        raise UnitError(f"ambiguous unit '{unit}{per}': write '{number}{binary_name}{per}' "
                        f"({exact_text}{per}) or '{si_text}{per}'")
    return _BINARY[prefix]


def parse_size(value: str | int) -> int:
    """A size in bytes: ``4096``, ``4k``, ``4KiB``, ``1.5m``, ``512B``."""
    _check_plain(value, "a size")
    if isinstance(value, int):
        if value < 0:
            raise UnitError(f"{value}: a size cannot be negative")
        return value
    number, unit, text = _split(value, "a size")
    return _whole(number * _size_multiplier(unit, text), value, "bytes")


def parse_duration(value: str | int, *, bare: str | None = "s") -> int:
    """A duration in nanoseconds: ``1.2ms``, ``30s``, ``2m``; a bare number is in ``bare`` units."""
    _check_plain(value, "a duration")
    if isinstance(value, int):
        number, unit, text = Fraction(value), "", str(value)
        if value < 0:
            raise UnitError(f"{value}: a duration cannot be negative")
    else:
        check_ascii(value, allowed=_MICRO)
        clock = re.fullmatch(r"\s*([0-9]+):([0-5][0-9])\s*", value, re.ASCII)
        if clock:
            seconds = int(clock.group(1)) * 60 + int(clock.group(2))
            raise UnitError(f"'{value}' looks like minutes:seconds; write a unit instead, "
                            f"e.g. '{seconds}s'")
        number, unit, text = _split(value, "a duration")
    if not unit:
        if bare is None:
            raise UnitError(f"'{value}' has no unit; say the unit: {text}ms, {text}s, ...")
        unit = bare
    if unit not in _NS:
        raise UnitError(f"unknown duration unit '{unit}': use one of {DURATION_UNITS}")
    return _whole(number * _NS[unit], str(value), "nanoseconds")


def parse_count(value: str | int | float) -> int | float:
    """A plain number such as an IOPS figure: ``250k`` = 250000, ``1.5M``, ``2G``.

    Returns an int when the value is whole. Lowercase ``m`` is refused: it reads as milli.
    """
    if isinstance(value, bool):
        raise UnitError(f"expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0 or (isinstance(value, float) and not math.isfinite(value)):
            raise UnitError(f"{value}: a count must be a finite number >= 0")
        return value
    if not isinstance(value, str):
        raise UnitError(f"expected a number, got {type(value).__name__} {value!r}")
    number, unit, _ = _split(value, "a count")
    if unit == "m":
        raise UnitError(f"ambiguous unit 'm' in '{value}': write 'M' for millions")
    if unit not in _COUNT:
        raise UnitError(f"unknown count unit '{unit}' in '{value}': use k, M or G "
                        "(thousands, millions, billions)")
    x = number * _COUNT[unit]
    return int(x) if x.denominator == 1 else float(x)


def parse_bandwidth(value: str) -> int | float:
    """A bandwidth in bytes per second: ``400MiB/s``, ``1GiB/s``, ``123B/s``."""
    if not isinstance(value, str) or isinstance(value, bool):
        raise UnitError(f"expected a bandwidth like '400MiB/s', got {value!r}")
    check_ascii(value)
    stripped = value.strip()
    if not stripped.endswith("/s"):
        raise UnitError(f"'{value}' is not a bandwidth: write a size per second, "
                        f"e.g. '{stripped}/s'")
    number, unit, text = _split(stripped[:-2], "a bandwidth")
    x = number * _size_multiplier(unit, text, "/s")
    return int(x) if x.denominator == 1 else float(x)


# -- formatting ---------------------------------------------------------------------------

def _digits(v: float) -> str:
    """About four significant digits without trailing zeros: 1.2, 250.3, 412."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    intdigits = max(1, math.floor(math.log10(abs(v))) + 1)
    text = f"{v:.{max(0, min(3, 4 - intdigits))}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_size(n: float) -> str:
    """Human size with a binary unit: ``4KiB``, ``1.5MiB``, ``512B``."""
    for i in range(len(_BINARY_NAMES) - 1, 0, -1):
        if abs(n) >= 1 << (10 * i):
            return _digits(n / (1 << (10 * i))) + _BINARY_NAMES[i]
    return _digits(n) + "B"


def format_size_exact(n: int) -> str:
    """The largest binary unit that divides ``n``, so parse_size() gives ``n`` back."""
    for i in range(len(_BINARY_NAMES) - 1, 0, -1):
        if n and n % (1 << (10 * i)) == 0:
            return f"{n >> (10 * i)}{_BINARY_NAMES[i]}"
    return f"{n}B"


_DURATION_STEPS = (("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000),
                   ("ms", 1_000_000), ("us", 1_000), ("ns", 1))


def format_duration(ns: float) -> str:
    """Human duration: ``1.2ms``, ``850us``, ``3s``, ``1.5m``."""
    for name, scale in _DURATION_STEPS:
        if abs(ns) >= scale:
            return _digits(ns / scale) + name
    return _digits(ns) + "ns"


def format_duration_exact(ns: int) -> str:
    """The largest unit that divides ``ns``, so parse_duration() gives ``ns`` back."""
    for name, scale in _DURATION_STEPS:
        if ns and ns % scale == 0:
            return f"{ns // scale}{name}"
    return f"{ns}ns"


def format_count(x: float) -> str:
    """Human count: ``250.3k``, ``1.5M``, ``12``."""
    for name, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return _digits(x / scale) + name
    return _digits(x)


def format_bandwidth(bps: float) -> str:
    """Human bandwidth: ``412MiB/s``."""
    return format_size(bps) + "/s"
