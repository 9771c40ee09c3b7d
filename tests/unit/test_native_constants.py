"""The constants of iogate.h and their Python copies: the library describes every one of them
(iog_describe_constants), the bindings refuse a library whose values differ from theirs, and
each limit has one definition on the Python side (iogate.engine.limits)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from iogate import histogram
from iogate.engine import limits, native
from iogate.spec import blocks, data, distributions, fields, priorities

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "native" / "include" / "iogate.h"
SRC = ROOT / "src" / "iogate"


def _c_value(expr: str, known: dict[str, int]) -> int:
    """The value of a C integer constant expression of the header (literals with u/ull
    suffixes, shifts, products, sums, names defined before it)."""
    text = re.sub(r"\b(\d+)(?:ull|ul|u|ll|l)\b", r"\1", expr, flags=re.I)
    text = re.sub(r"\bIOG_[A-Z0-9_]+\b", lambda m: str(known[m.group(0)]), text)
    if not re.fullmatch(r"[\d\s()+\-*<>]+", text):
        raise ValueError(f"not an integer expression: {expr!r}")
    return int(eval(text, {"__builtins__": {}}))  # digits and operators only, checked above


def header_constants(text: str) -> dict[str, int]:
    """Every public constant of a header such as iogate.h: each ``#define IOG_*`` whose
    value is an integer expression, and each enum value (implicit ones counted on)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = text.replace("\\\n", " ")
    out: dict[str, int] = {}
    defines = ((m.start(), "define", m) for m in
               re.finditer(r"^#define\s+(IOG_[A-Z0-9_]+)[ \t]+(.+)$", text, re.M))
    enums = ((m.start(), "enum", m) for m in re.finditer(r"\benum\s+iog_\w+\s*\{(.*?)\}",
                                                         text, re.S))
    for _, kind, m in sorted((*defines, *enums), key=lambda t: t[0]):
        if kind == "define":
            try:
                out[m.group(1)] = _c_value(m.group(2), out)
            except ValueError:  # IOG_API: an attribute, no number
                continue
            continue
        value = -1
        for item in m.group(1).split(","):
            if not item.strip():
                continue
            name, _, expr = (p.strip() for p in item.partition("="))
            value = _c_value(expr, out) if expr else value + 1
            out[name] = value
    return out


@pytest.fixture(scope="module")
def in_header() -> dict[str, int]:
    return header_constants(HEADER.read_text())


@pytest.fixture(scope="module")
def described() -> dict[str, int]:
    return native.described_constants(native.lib())


# -- reading the header ---------------------------------------------------------------------

def test_the_header_reader_reads_defines_enums_and_expressions():
    text = ("#define IOG_API __attribute__((visibility(\"default\")))\n"
            "#define IOG_A 3 /* three */\n#define IOG_B (1u << IOG_A)\n"
            "#define IOG_C \\\n    (IOG_B * 2ull + 1)\n"
            "enum iog_x { IOG_X0 = 4, IOG_X1, /* after */ IOG_X2 = IOG_A };\n")
    assert header_constants(text) == {"IOG_A": 3, "IOG_B": 8, "IOG_C": 17, "IOG_X0": 4,
                                      "IOG_X1": 5, "IOG_X2": 3}


def test_the_header_has_the_constants_it_is_known_for(in_header):
    assert in_header["IOG_FILES_MAX"] == 64
    assert in_header["IOG_HIST_TOP_NS"] == 1 << 40
    assert in_header["IOG_JOB_ODSYNC"] == 1 << 11
    assert in_header["IOG_VERIFY_META"] == 10
    assert in_header["IOG_SYNC_FDATASYNC"] == 2
    assert len(in_header) > 100


# -- the library's description --------------------------------------------------------------

def test_the_library_describes_every_constant_of_the_header_with_its_value(in_header,
                                                                           described):
    missing = sorted(set(in_header) - set(described))
    assert not missing, f"iogate.h constants the library does not describe: {missing}"
    extra = sorted(set(described) - set(in_header))
    assert not extra, f"constants the library describes that iogate.h does not have: {extra}"
    wrong = {n: (described[n], v) for n, v in in_header.items() if described[n] != v}
    assert not wrong, f"library value, header value: {wrong}"


def test_the_library_names_each_constant_once():
    table = native.POINTER(native.IogConstant)()
    n = native.lib().iog_describe_constants(native.byref(table))
    names = [table[i].name.decode() for i in range(n)]
    assert len(names) == len(set(names)) == len(native.described_constants(native.lib()))


def test_the_bindings_agree_with_the_library(described):
    assert native.constant_problems(described) == []
    assert described["IOG_ABI_VERSION"] == native.ABI_VERSION
    assert described["IOG_ABI_REVISION"] >= native.ABI_REVISION


def test_every_constant_the_bindings_use_is_in_the_header(in_header):
    used = native.expected_constants()
    assert {c for c, _, _ in used} <= set(in_header)
    assert {c: v for c, v, _ in used} == {c: in_header[c] for c, _, _ in used}
    # the enums, flag bits and limits the session layer reaches through the bindings
    for name in ("IOG_RW_RANDTRIMWRITE", "IOG_JOB_FILL", "IOG_STATE_DONE", "IOG_DIR_TRIM",
                 "IOG_VERIFY_READ_ERROR", "IOG_HIST_PRIO_CLAT", "IOG_DISKS_MAX",
                 "IOG_VERIFY_HEADER", "IOG_ABI_VERSION"):
        assert name in {c for c, _, _ in used}


def test_the_histogram_geometry_agrees_with_the_library(described):
    assert (described["IOG_HIST_SUB_BITS"], described["IOG_HIST_SUB_BUCKETS"],
            described["IOG_HIST_LINEAR"], described["IOG_HIST_TOP_BITS"],
            described["IOG_HIST_TOP_NS"], described["IOG_HIST_BUCKETS"]) == (
        histogram.SUB_BITS, histogram.SUB_BUCKETS, histogram.LINEAR, histogram.TOP_BITS,
        histogram.TOP_NS, histogram.BUCKETS)


# -- a library that disagrees is refused ------------------------------------------------------

@pytest.mark.parametrize(("name", "value", "expected"), [
    ("FILES_MAX", 32, "IOG_FILES_MAX is 64 in the library, 32 in these bindings (FILES_MAX)"),
    ("RW_TRIM", 9, "IOG_RW_TRIM is 6 in the library, 9 in these bindings (RW_TRIM)"),
    ("JOB_FILL", 1 << 12, "IOG_JOB_FILL is 512 in the library, 4096 in these bindings"),
    ("STATES", ("created", "layout", "running", "ramp", "verify", "done"),
     "IOG_STATE_RAMP is 2 in the library, 3 in these bindings (STATES[3])"),
])
def test_a_constant_that_differs_refuses_the_library(monkeypatch, name, value, expected):
    monkeypatch.setattr(native if hasattr(native, name) else limits, name, value)
    path = native.library_path()
    with pytest.raises(native.LibraryError) as exc:
        native.open_library(path)
    message = str(exc.value)
    assert f"{path}: libiogate of ABI version {native.ABI_VERSION} does not match these "\
           "bindings: " in message
    assert expected in message
    assert "\n" not in message


def test_the_library_as_loaded_is_accepted():
    assert native.open_library(native.library_path()) is not None


def test_a_fake_description_names_each_difference(described):
    fake = dict(described)
    del fake["IOG_ZONES_MAX"]
    fake["IOG_PATTERN_MAX"] = 128
    fake["IOG_ABI_REVISION"] = native.ABI_REVISION - 1
    problems = native.constant_problems(fake)
    assert problems == [
        f"IOG_ABI_REVISION is {native.ABI_REVISION - 1} in the library, these bindings need "
        f"{native.ABI_REVISION} or later",
        "IOG_PATTERN_MAX is 128 in the library, 256 in these bindings (PATTERN_MAX)",
        "IOG_ZONES_MAX is not in the library, these bindings use 16 (ZONES_MAX)",
    ]
    fake = dict(described, IOG_ABI_REVISION=native.ABI_REVISION + 1)
    assert native.constant_problems(fake) == []  # a later revision only adds


# -- one definition of each limit -----------------------------------------------------------

LIMITS = sorted(n for n, v in vars(limits).items() if n.isupper() and type(v) is int)


def test_the_limits_are_the_headers(in_header):
    assert {n: getattr(limits, n) for n in LIMITS} == {n: in_header[f"IOG_{n}"]
                                                      for n in LIMITS}


def test_the_users_of_the_limits_take_them_from_the_limits_module():
    users = {"PATH_MAX": fields, "FILES_MAX": fields, "BS_ENTRIES_MAX": blocks,
             "ZONES_MAX": distributions, "SEQUENCE_MAX": distributions, "PATTERN_MAX": data,
             "CMDPRIO_MAX": priorities, "VERIFY_HEADER": data}
    for name, user in users.items():
        assert getattr(user, name) is getattr(limits, name)
    for name in LIMITS:
        if hasattr(native, name):
            assert getattr(native, name) is getattr(limits, name)


def test_no_other_module_defines_a_limit():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "engine" / "limits.py":
            continue
        tree = ast.parse(path.read_text())
        defined = {t.id for node in tree.body if isinstance(node, ast.Assign)
                   for t in node.targets if isinstance(t, ast.Name)}
        defined |= {node.target.id for node in tree.body
                    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
        if defined & set(LIMITS):
            found[str(path.relative_to(SRC))] = sorted(defined & set(LIMITS))
    assert not found, f"limits defined outside iogate.engine.limits: {found}"
