"""Limits of the suite language and how its messages quote what was written: long values cut,
control characters escaped, names and descriptions checked, the number of workloads capped,
one interval for the windowed expectations of a workload."""

import inspect
import sys
from pathlib import Path

import pytest

import iogate.spec.suite
from iogate.errors import SuiteError
from iogate.expect import ExpectationError, parse_expectation
from iogate.expr import shown
from iogate.spec import load_suite
from iogate.spec.fields import NAME_MAX, describe_input
from iogate.spec.schema import json_schema


def write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "s.suite.yaml"
    f.write_text(text)
    return f


def problems(tmp_path: Path, text: str) -> list[str]:
    f = write(tmp_path, text)
    with pytest.raises(SuiteError) as exc:
        load_suite(f, env={})
    return [str(p).replace(str(f), "F") for p in exc.value.problems]


HEAD = "suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 1m\n"  # next: line 6


# -- quoting ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("short", "short"),
    ("x" * 40, "x" * 40),
    ("x" * 41, "x" * 40 + "..."),
    ("a\0b", "a\\x00b"),
    ("tab\there\nnl", "tab\\there\\nnl"),
    ("\x1b[31mred", "\\x1b[31mred"),
    ("µs ok", "µs ok"),
    ("\0" * 100, "\\x00" * 40 + "..."),  # cut by characters written, then escaped
])
def test_shown(text, expected):
    assert shown(text) == expected


def test_describe_input_cuts_long_strings_and_escapes_controls():
    assert describe_input("y" * 1_000_000) == "the string '" + "y" * 40 + "...'"
    assert describe_input("4\0") == "the string '4\\x00'"
    assert describe_input(32) == "the integer 32"


def test_problem_messages_carry_no_raw_control_characters(tmp_path):
    text = HEAD + '    iodepth: "4\\x1b[2J"\n    bs: "\\0"\n    expect:\n' \
        '      read.iops: ">= 1\\a"\n'
    got = problems(tmp_path, text)
    assert len(got) == 3, got
    assert all(c.isprintable() for line in got for c in line), got
    assert "got the string '4\\x1b[2J'" in got[0]
    assert "'\\x00'" in got[1]
    assert "'>= 1\\x07'" in got[2]
    assert got[2].startswith("F:9:18:")


@pytest.mark.parametrize("text", [">= 1\0", "\0>= 1", ">= 1 in 5\0%", ">= 1 in 5% of 1\0s",
                                  ">= baseline\0", ">= 1\x1b[2J"])
def test_expectation_errors_escape_control_characters(text):
    with pytest.raises(ExpectationError) as info:
        parse_expectation("read.iops", text)
    message = str(info.value)
    assert message.isprintable(), repr(message)
    assert "\\x00" in message or "\\x1b" in message


@pytest.mark.parametrize(("text", "fragment"), [
    (">= " + "1k" * 5000, "'>= 1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1k1...'"),
    (">= 1 in 99% of " + "9" * 5000 + "s", "the interval '" + "9" * 40 + "...'"),
    ("<= 5" + "s" * 5000, "'" + "s" * 16 + "...' is not a unit"),
    (">= " + "b" * 5000, "unknown name '" + "b" * 40 + "...'"),
])
def test_expectation_errors_quote_long_text_cut_short(text, fragment):
    with pytest.raises(ExpectationError) as info:
        parse_expectation("read.clat.p99" if text.startswith("<=") else "read.iops", text)
    assert fragment in str(info.value), str(info.value)
    assert len(str(info.value)) < 400, str(info.value)


# -- names and the description ----------------------------------------------------------------

def test_names_up_to_the_limit(tmp_path):
    name = "n" * NAME_MAX
    text = f"suite: {name}\nworkloads:\n  - name: {name}\n    group: {name}\n    rw: read\n" \
           "    size: 1m\n"
    suite = load_suite(write(tmp_path, text), env={})
    assert suite.name == name
    assert suite.cases[0].id == name
    assert suite.cases[0].group == name
    long = "n" * (NAME_MAX + 1)
    assert problems(tmp_path, text.replace(name, long)) == [
        f"F:1:8: suite: a name of {NAME_MAX + 1} characters is too long: at most {NAME_MAX}",
        f"F:3:11: workloads[0].name: a name of {NAME_MAX + 1} characters is too long: at most "
        f"{NAME_MAX}",
        f"F:4:12: workloads[0].group: a name of {NAME_MAX + 1} characters is too long: at "
        f"most {NAME_MAX}",
    ]


def test_a_bad_name_is_quoted_cut_short(tmp_path):
    got = problems(tmp_path, "suite: s\nworkloads:\n  - name: " + "a b" * 40 + "\n"
                   "    rw: read\n    size: 1m\n")
    assert got == ["F:3:11: workloads[0].name: '" + ("a b" * 40)[:40] + "...' is not a valid "
                   "name: use letters, digits, '_', '.' and '-' only"]


def test_description_is_text_over_several_lines(tmp_path):
    text = "suite: s\ndescription: |\n  first line\n  \tindented, 10\u00a0GiB \u2014 ok\n" \
        "workloads:\n  - name: a\n    rw: read\n    size: 1m\n"
    assert load_suite(write(tmp_path, text), env={}).description == \
        "first line\n\tindented, 10\u00a0GiB \u2014 ok\n"


def test_schema_agrees_on_names_and_descriptions():
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema())

    def errors(**top):
        doc = {"suite": "s", "workloads": [{"name": "w", "size": "1m"}], **top}
        return list(validator.iter_errors(doc))

    assert not errors(description="two\nlines\twith a tab, 10\u00a0GiB")
    assert not errors(suite="n" * NAME_MAX)
    for bad in ({"description": "a\0b"}, {"description": "\x1b[2J"},
                {"description": "\x85"}, {"suite": "n" * (NAME_MAX + 1)}):
        assert errors(**bad), bad


@pytest.mark.parametrize(("escape", "what"), [
    ("\\0", "a NUL character"), ("\\a", "the control character U+0007"),
    ("\\e", "the control character U+001B"), ("\\x7f", "the control character U+007F"),
    ("\\x85", "the control character U+0085"),
])
def test_description_refuses_control_characters(tmp_path, escape, what):
    text = f'suite: s\ndescription: "ok {escape} not"\n' + HEAD[HEAD.index("workloads"):]
    assert problems(tmp_path, text) == [
        f"F:2:14: description: the description holds {what}; a description is text: "
        "remove it"]


# -- how many workloads -----------------------------------------------------------------------

def sweep_suite(*sizes: int) -> str:
    parts = ["suite: s\ndefaults:\n  size: 1m\n  rw: randread\nworkloads:\n"]
    for i, n in enumerate(sizes):
        values = ", ".join(str(v) for v in range(1, n + 1))
        parts.append(f"  - name: w{i}\n" + (f"    sweep: {{iodepth: [{values}]}}\n"
                                             if n > 1 else ""))
    return "".join(parts)


def test_workloads_up_to_the_cap_load(tmp_path, monkeypatch):
    monkeypatch.setattr(iogate.spec.suite, "MAX_WORKLOADS", 7)
    assert len(load_suite(write(tmp_path, sweep_suite(3, 1, 3)), env={}).cases) == 7


def test_workloads_above_the_cap_are_refused_before_expansion(tmp_path, monkeypatch):
    monkeypatch.setattr(iogate.spec.suite, "MAX_WORKLOADS", 7)
    assert problems(tmp_path, sweep_suite(3, 1, 4)) == [
        "F:5:1: workloads: the suite makes 8 workloads, sweep points counted; a suite may "
        "have at most 7; the largest, workloads[2] 'w2' on line 9, makes 4: split the suite "
        "or sweep fewer values"]
    # The list form of a sweep counts its points.
    listed = sweep_suite(1, 1) + "    sweep: [" + ", ".join(
        f"{{iodepth: {v}}}" for v in range(1, 7)) + "]\n"
    assert len(load_suite(write(tmp_path, listed), env={}).cases) == 7
    more = listed.replace("{iodepth: 6}]", "{iodepth: 6}, {iodepth: 7}]")
    assert "the suite makes 8 workloads" in problems(tmp_path, more)[0]


def test_sixty_thousand_workloads_are_refused_at_once(tmp_path, monkeypatch):
    # Refused before any workload is made: counted, not expanded (making them would take
    # seconds and hundreds of MiB; how long it takes is not asserted, a busy machine is slow).
    made: list[int] = []
    real_case = iogate.spec.suite._case
    monkeypatch.setattr(iogate.spec.suite, "_case",
                        lambda *a, **k: made.append(1) or real_case(*a, **k))
    values = ", ".join(str(v) for v in range(1, 101))
    text = "suite: s\ndefaults:\n  size: 1m\n  rw: randread\nworkloads:\n" + "".join(
        f"  - name: w{i}\n    sweep: {{iodepth: [{values}], numjobs: [{values}]}}\n"
        for i in range(6))
    got = problems(tmp_path, text)
    assert made == []
    assert got == ["F:5:1: workloads: the suite makes 60000 workloads, sweep points counted; a "
                   "suite may have at most 10000; the largest, workloads[0] 'w0' on line 6, "
                   "makes 10000: split the suite or sweep fewer values"]


def test_one_sweep_above_its_own_cap_is_named_at_the_sweep(tmp_path):
    text = sweep_suite(2, 10_001)
    assert problems(tmp_path, text) == [
        "F:9:12: workloads[1].sweep: the sweep has 10001 points; at most 10000"]


# -- one interval per workload for windowed expectations -------------------------------------

def test_windowed_expectations_of_one_workload_share_one_interval(tmp_path):
    text = HEAD + ("    runtime: 3s\n    expect:\n      read.iops: '>= 1 in 99%'\n"
                   "      read.bw: '>= 1 in 90% of 1s'\n      read.clat.p99: '<= 1s'\n"
                   "      read.clat.mean: ['<= 1s in 50% of 500ms', '<= 2s in all of 250ms']\n")
    assert problems(tmp_path, text) == [
        "F:11:24: workloads[0].expect.read.clat.mean[0]: all windowed expectations of a "
        "workload must use one interval: 1s at line 8, 500ms at line 11",
        "F:11:49: workloads[0].expect.read.clat.mean[1]: all windowed expectations of a "
        "workload must use one interval: 1s at line 8, 250ms at line 11",
    ]
    fine = text.replace(" of 500ms", "").replace(" of 250ms", " of 1000ms")
    case = load_suite(write(tmp_path, fine), env={}).cases[0]
    assert {e.window.interval_ns for e in case.expectations if e.window} == {10**9}


def test_each_workload_has_its_own_interval(tmp_path):
    text = HEAD + ("    runtime: 3s\n    expect: {read.iops: '>= 1 in all of 500ms'}\n"
                   "  - name: b\n    rw: randread\n    size: 1m\n    runtime: 3s\n"
                   "    expect: {read.iops: '>= 1 in all of 2s'}\n")
    a, b = load_suite(write(tmp_path, text), env={}).cases
    assert [e.window.interval_ns for e in a.expectations if e.window] == [5 * 10**8]
    assert [e.window.interval_ns for e in b.expectations if e.window] == [2 * 10**9]


def test_sweep_points_are_checked_each(tmp_path):
    text = HEAD + ("    runtime: 3s\n    sweep: {iv: [1s, 500ms]}\n    expect:\n"
                   "      read.iops: '>= 1 in 99% of ${iv}'\n"
                   "      read.bw: '>= 1 in 99% of 1s'\n")
    got = problems(tmp_path, text)
    assert got == ["F:10:16: workloads[0].expect.read.bw: all windowed expectations of a "
                   "workload must use one interval: 500ms at line 9, 1s at line 10"]


def test_long_expressions_need_no_deep_stack(tmp_path):
    text = HEAD.replace("size: 1m", "size: " + "+".join(["4k"] * 256))
    depth = len(inspect.stack())
    limit = sys.getrecursionlimit()
    # A recursive walk of a 256-term chain would need more than 256 frames.
    sys.setrecursionlimit(depth + 200)
    try:
        case = load_suite(write(tmp_path, text), env={}).cases[0]
    finally:
        sys.setrecursionlimit(limit)
    assert case.workload.size == 256 * 4096
