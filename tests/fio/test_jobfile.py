"""fio job file syntax and values, read as fio reads them (checked against fio itself)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.jobfile import (
    ValueProblem,
    directions,
    filename_list,
    fio_expression,
    fio_size,
    fio_time,
    parse_jobfile,
    parse_lenient,
    suite_text,
)

FIO = shutil.which("fio")


def parse(text: str):
    return parse_jobfile("job.fio", text)


def problems(text: str) -> list[str]:
    with pytest.raises(SuiteError) as info:
        parse(text)
    return [str(p) for p in info.value.problems]


# -- sections and options -----------------------------------------------------------------

def test_sections_options_and_flags() -> None:
    jf = parse("; header\n[global]\nbs = 4k\n  rw=randread\ntime_based\n\n[job one]\n"
               "name=raw=random-read\nsize=1m\n[global]\nbs=8k\n[two]\n")
    assert [(s.name, s.line, s.is_global) for s in jf.sections] == [
        ("global", 2, True), ("job one", 7, False), ("global", 10, True), ("two", 12, False)]
    assert [(o.key, o.value, o.line) for o in jf.sections[0].options] == [
        ("bs", "4k", 3), ("rw", "randread", 4), ("time_based", None, 5)]
    # Only the first '=' separates: the rest is the value.
    assert jf.sections[1].options[0].value == "raw=random-read"
    assert [s.name for s in jf.jobs] == ["job one", "two"]


def test_comments_are_cut_where_fio_cuts_them() -> None:
    jf = parse("# leading\n[j]\n; a note\nbs=4k ; trailing\nsize=1m# no blank needed\n"
               "buffer_pattern=\"ab;c\"\n")
    opts = jf.sections[0].options
    # fio cuts at the first ';' or '#' anywhere, quotes or not.
    assert [(o.key, o.value) for o in opts] == [
        ("bs", "4k"), ("size", "1m"), ("buffer_pattern", '"ab')]
    assert opts[0].notes == ("a note",)
    assert jf.sections[0].notes == ("leading",)


def test_global_is_case_sensitive_as_in_fio() -> None:
    jf = parse("[GLOBAL]\nsize=1m\n")
    assert [s.is_global for s in jf.sections] == [False]


def test_crlf_and_bom() -> None:
    jf = parse_jobfile("job.fio", "[j]\r\nsize=1m\r\n")
    assert jf.sections[0].options[0].value == "1m"


def test_an_include_that_cannot_be_read_is_a_problem_at_its_line() -> None:
    _, problems = parse_lenient("job.fio", "[global]\ninclude no-such.fio\n[j]\nsize=1m\n")
    [p] = problems
    assert (p.file, p.line, p.path) == ("job.fio", 2, "[global]")
    assert p.message.startswith("include no-such.fio: ")


@pytest.mark.parametrize(("text", "expected"), [
    ("size=1m\n[j]\n", "job.fio:1:1: option 'size' comes before any [section]"),
    ("[j]\nsize=1m\n[k\nrw=read\n", "job.fio:3:1: '[k' is not a section header"),
    ("[j]\n[]\n", "job.fio:2:1: empty section name"),
    ("[j]\nrw read\n", "job.fio:2:1: [j]: 'rw read' is not an option"),
    ("[j]\nsize=1m\x00\n", "job.fio:2:1: the control character U+0000"),
    ("[global]\nsize=1m\n", "job.fio: no job section"),
])
def test_syntax_errors_name_the_line(text: str, expected: str) -> None:
    assert any(p.startswith(expected) for p in problems(text)), problems(text)


def test_every_syntax_error_is_reported_at_once() -> None:
    found = problems("size=1m\n[j]\nrw read\n[k\n")
    assert [p.split(":")[1] for p in found] == ["1", "3", "4"]


def test_unreadable_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="cannot read"):
        parse_jobfile(tmp_path / "missing.fio")
    bad = tmp_path / "latin1.fio"
    bad.write_bytes(b"[j]\nsize=1m\n# Zuf\xe4llig\n")
    with pytest.raises(SuiteError, match=r"latin1.fio:3:6: the file is not UTF-8"):
        parse_jobfile(bad)


# -- values -------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "kb_base", "expected"), [
    ("4096", 1024, 4096), ("4k", 1024, 4096), ("4K", 1024, 4096), ("4kb", 1024, 4096),
    ("4KB", 1024, 4096), ("4KiB", 1024, 4000), ("4ki", 1024, 4096), ("1m", 1024, 1 << 20),
    ("1MiB", 1024, 1_000_000), ("2g", 1024, 2 << 30), ("1t", 1024, 1 << 40),
    ("0x1000", 1024, 4096), ("512b", 1024, 512), ("4k", 1000, 4000), ("4KiB", 1000, 4096),
    ("4Ki", 1000, 4000), ("1mib", 1000, 1 << 20),
])
def test_sizes_as_fio_reads_them(text: str, kb_base: int, expected: int) -> None:
    assert fio_size(text, kb_base) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("1.5g", "fio reads no fractions: '1.5g' is 1 to fio"),
    ("4 k", "fio stops reading '4 k' at the blank"),
    ("20%", "a percentage of the file or device"),
    ("4q", "unknown unit 'q'"),
    ("-4k", "is negative"),
    ("", "empty"),
])
def test_sizes_fio_would_misread_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueProblem, match=re.escape(message)):
        fio_size(text)


@pytest.mark.parametrize(("text", "bare_us", "ns"), [
    ("30", 1_000_000, 30 * 10**9), ("1500ms", 1_000_000, 1_500_000_000),
    ("2m", 1_000_000, 120 * 10**9), ("1h", 1_000_000, 3600 * 10**9),
    ("1D", 1_000_000, 86400 * 10**9), ("100", 1, 100_000), ("3usec", 1, 3_000),
    ("10msec", 1_000_000, 10**7),
])
def test_times_as_fio_reads_them(text: str, bare_us: int, ns: int) -> None:
    assert fio_time(text, bare_us) == ns


def test_times_fio_would_misread_are_refused() -> None:
    with pytest.raises(ValueProblem, match="unknown time unit 'x'"):
        fio_time("10x", 1)
    with pytest.raises(ValueProblem, match="no fractions"):
        fio_time("1.5s", 1)


@pytest.mark.parametrize(("value", "expected"), [
    ("/dev/sda:/dev/sdb", ["/dev/sda", "/dev/sdb"]),
    (r"F\:fiofile", ["F:fiofile"]),
    (r"/dev/dsk/foo@3,0\:c", ["/dev/dsk/foo@3,0:c"]),
    (r"a\b:c", ["a\\b", "c"]),
    ("a::b", ["a", "", "b"]),
])
def test_filename_lists(value: str, expected: list[str]) -> None:
    assert filename_list(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("4k", ["4k", "4k"]), ("4k,64k", ["4k", "64k"]), ("4k,64k,1m", ["4k", "64k"]),
    (",8k", ["", "8k"]), ("8k,", ["8k", ""]),
])
def test_per_direction_values(value: str, expected: list[str]) -> None:
    assert directions(value, "sizes") == expected


def test_four_directions_are_too_many() -> None:
    with pytest.raises(ValueProblem, match="at most three"):
        directions("1,2,3,4", "sizes")


@pytest.mark.parametrize(("value", "expected"), [
    ("${SIZE}", "${SIZE}"), ("$ncpus", "${ncpus}"), ("8*$mb_memory", "8*${mb_memory}"),
    ("/tmp/$x", "/tmp/$$x"), ("cost$", "cost$$"), ("$pagesize$ncpus", "${pagesize}${ncpus}"),
])
def test_references_become_suite_references(value: str, expected: str) -> None:
    assert suite_text(value) == expected


def test_a_malformed_reference_is_refused() -> None:
    with pytest.raises(ValueProblem, match="not an environment variable reference"):
        suite_text("${}")
    with pytest.raises(ValueProblem, match="not an environment variable reference"):
        suite_text("${A B}")


def test_expressions_keep_their_shape_with_literals_in_base_units() -> None:
    def size(t: str) -> str:
        return str(fio_size(t))

    assert fio_expression("(2*4k)", size) == "(2 * 4096)"
    assert fio_expression("8*$mb_memory", size) == "8 * ${mb_memory}"
    assert fio_expression("(${A}+0x10)/2", size) == "(${A} + 16) / 2"
    with pytest.raises(ValueProblem, match="'%' has no iogate equivalent"):
        fio_expression("(10%3)", size)
    with pytest.raises(ValueProblem, match="not an expression"):
        fio_expression("(1,2)", size)


# -- against fio --------------------------------------------------------------------------

SIZES = ["4k", "4K", "4kb", "4KiB", "1m", "1MiB", "2g", "0x1000", "512b", "3Ki", "7", "5kib",
         "1Mi"]
TIMES = ["30", "1500ms", "2m", "1h", "10us", "1d"]


def fio_reads(tmp_path: Path, text: str) -> list[tuple[str, int]]:
    """(option, number) for each value fio parsed, from its --debug=parse output."""
    job = tmp_path / "values.fio"
    job.write_text(text)
    out = subprocess.run([FIO or "fio", "--debug=parse", "--parse-only", str(job)],
                         capture_output=True, text=True, timeout=30).stdout
    read, option = [], ""
    for line in out.splitlines():
        if m := re.search(r"__handle_option=(\w+),", line):
            option = m.group(1)
        elif m := re.search(r"ret=0, out=(\d+)", line):
            read.append((option, int(m.group(1))))
    return read


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_values_match_fio_itself(tmp_path: Path) -> None:
    """fio --debug=parse prints what it read for each option: the same numbers."""
    lines = ["[j]"]
    lines += [f"bs={v}" for v in SIZES]
    lines += [f"runtime={v}" for v in TIMES]
    lines += [f"thinktime={v}" for v in ("100", "1ms")]
    lines += ["[k]", "kb_base=1000"] + [f"bs={v}" for v in SIZES]
    read = fio_reads(tmp_path, "\n".join(lines) + "\n")
    expected = [("bs", fio_size(v)) for v in SIZES]
    # fio keeps times in microseconds.
    expected += [("runtime", fio_time(v, 1_000_000) // 1000) for v in TIMES]
    expected += [("thinktime", fio_time(v, 1) // 1000) for v in ("100", "1ms")]
    expected += [("bs", fio_size(v, 1000)) for v in SIZES]
    assert [r for r in read if r[0] != "kb_base"] == expected
