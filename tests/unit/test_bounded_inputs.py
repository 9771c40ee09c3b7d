"""Every input file is read bounded (size, nesting, number length) and every problem with it
is an error naming the file: results documents and baseline files (compare, --baseline,
--save-baseline, promote), host lists, files included by job files, the scratch directory
and the number of repeats. Real files, real devices and real FIFOs; no mocks."""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path

import pytest

from iogate import inputs
from iogate.baseline import Baseline, BaselineError, check_merge, promote
from iogate.compare import load_document
from iogate.errors import SuiteError
from iogate.files import OutputError
from iogate.fio.hosts import Host, parse_hosts
from iogate.plan import scratch_dir
from iogate.settings import UsageError
from iogate.spec import load_suite

ENV = {"host": "ci-7", "kernel": "6.8.0", "device_model": "ACME", "firmware": "1.0"}


def results(*cases: dict, environment: object = ENV) -> dict:
    return {"schema_version": 1, "iogate_version": "0.1.0", "environment": environment,
            "summary": {}, "cases": list(cases)}


def case(case_id: str = "s.suite.yaml::a", **extra: object) -> dict:
    return {"id": case_id, "outcome": "passed", "metrics": {"read.iops": 1000.0}, **extra}


def written(tmp_path: Path, text: str, name: str = "doc.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# -- nesting ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[" * 100_000,  # what a parser's recursion dies on
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    "[" * (inputs.MAX_JSON_DEPTH + 1) + "]" * (inputs.MAX_JSON_DEPTH + 1),
])
def test_json_nested_too_deep_is_refused_naming_the_file(tmp_path: Path, text: str) -> None:
    path = written(tmp_path, text)
    for read in (Baseline.load, load_document):
        with pytest.raises(BaselineError, match=rf"{path}: nested more than "
                                                rf"{inputs.MAX_JSON_DEPTH} levels deep"):
            read(path)


def test_nesting_up_to_the_limit_reads_and_brackets_in_strings_do_not_count(
        tmp_path: Path) -> None:
    deep = "[" * inputs.MAX_JSON_DEPTH + "]" * inputs.MAX_JSON_DEPTH
    assert inputs.read_json(written(tmp_path, deep), "a test") is not None
    quoted = results(case(f"s.suite.yaml::{'[' * 5000}\\\"{'{' * 5000}"))
    document = load_document(written(tmp_path, json.dumps(quoted)))
    assert [e.case_id for e in document.entries] == [quoted["cases"][0]["id"]]


def _reference_depth(text: str) -> tuple[int, bool]:
    """How deep a parser nests before it stops, character by character; and whether the
    text has a mistake a parser stops at."""
    inside = escaped = False
    depth = deepest = 0
    for c in text:
        if inside:
            escaped, inside = (False, True) if escaped else (c == "\\", c != '"')
            continue
        if c == "\\":
            return deepest, True
        if c == '"':
            inside = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
            if depth < 0:
                return deepest, True
    return deepest, depth != 0 or inside


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 5])
def test_the_nesting_count_agrees_with_a_parser(monkeypatch: pytest.MonkeyPatch,
                                                limit: int) -> None:
    """Exact on texts a parser reads whole; never below the depth a parser reaches before
    it stops at a mistake (refusing it as too deep is as good as any other refusal)."""
    monkeypatch.setattr(inputs, "MAX_JSON_DEPTH", limit)
    rng = random.Random(limit)
    for _ in range(20_000):
        text = "".join(rng.choice('[]{}"\\a[]') for _ in range(rng.randint(0, 30)))
        depth, stops = _reference_depth(text)
        if depth > limit:
            assert inputs.too_deep(text.encode()), text
        elif not stops:
            assert not inputs.too_deep(text.encode()), text


# -- numbers, shapes, duplicates ------------------------------------------------------------------

def test_a_number_of_100000_digits_is_refused_naming_the_file(tmp_path: Path) -> None:
    text = json.dumps(results(case())).replace("1000.0", "1" * 100_000)
    path = written(tmp_path, text)
    with pytest.raises(BaselineError, match=rf"{path}: not a results document or baseline "
                                            r"file: a number of 100000 characters"):
        load_document(path)


@pytest.mark.parametrize(("document", "message"), [
    (results(case(), environment="ci-7"), "environment must be an object, not a string"),
    (results(case(environment=["ci-7"])),
     r"cases\[0\]\.environment must be an object, not an array"),
    (results(case(), case()), r"cases\[1\]: case 's.suite.yaml::a' is in the document twice "
                              r"\(first at cases\[0\]\)"),
    (results(case("s.suite.yaml::a"), case("s.suite.yaml::a", outcome="failed")),
     r"cases\[1\]: case 's.suite.yaml::a' is in the document twice"),
    (results({"outcome": "passed", "metrics": {}}), r"cases\[0\]: 'id' must be a non-empty"),
])
def test_a_results_document_of_the_wrong_shape_names_the_file(tmp_path: Path, document: dict,
                                                              message: str) -> None:
    path = written(tmp_path, json.dumps(document))
    with pytest.raises(BaselineError, match=rf"{path}: {message}"):
        load_document(path)
    with pytest.raises(BaselineError, match=rf"{path}: {message}"):
        promote(str(path), str(tmp_path / "b.json"), include_failed=True)


def test_a_character_device_is_read_up_to_the_limit_and_refused(tmp_path: Path) -> None:
    with pytest.raises(inputs.InputError, match="/dev/zero: larger than 4KiB, the most a "
                                                "test file may have"):
        inputs.read_json("/dev/zero", "a test file", limit=4096)


def test_a_document_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(b'{\n"a": "caf\xe9"}')
    with pytest.raises(BaselineError, match=rf"{path}: not UTF-8: byte 0xe9 at line 2"):
        load_document(path)


# -- the baseline a run merges into --------------------------------------------------------------

@pytest.mark.parametrize(("text", "problem"), [
    ("[" * 100_000, "nested more than"),
    ('{"hello": 1}', "not a baseline file: format is None"),
    (json.dumps(results(case())), "not a baseline file: an iogate results document"),
    ("{oops", "not JSON"),
])
def test_a_file_the_run_could_not_merge_into_is_refused_before_it(tmp_path: Path, text: str,
                                                                 problem: str) -> None:
    path = written(tmp_path, text, "b.json")
    with pytest.raises(OutputError) as caught:
        check_merge(str(path), "save-baseline")
    assert problem in str(caught.value)
    assert str(caught.value).startswith(f"--save-baseline {path}: ")
    assert path.read_text() == text


def test_a_new_or_valid_baseline_file_is_fine_to_merge_into(tmp_path: Path) -> None:
    check_merge(str(tmp_path / "new.json"))
    valid = tmp_path / "b.json"
    Baseline.from_results(results(case())).save(valid)
    check_merge(str(valid))


# -- host lists --------------------------------------------------------------------------------

def test_a_host_list_from_a_device_that_never_ends_is_refused_at_its_bound() -> None:
    with pytest.raises(ValueError, match="cannot read the host list /dev/zero: larger than "
                                         "1MiB, the most a host list may have"):
        parse_hosts("@/dev/zero")


def test_a_host_list_from_a_fifo_is_read_as_it_comes(tmp_path: Path) -> None:
    fifo = tmp_path / "hosts"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as f:
            f.write("h1\nh2:9000\n")
    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert parse_hosts(f"@{fifo}") == [Host("h1"), Host("h2", 9000)]
    finally:
        writer.join()


def test_a_host_list_that_is_not_text_names_the_file(tmp_path: Path) -> None:
    listed = tmp_path / "hosts"
    listed.write_bytes(b"h1\n\xff\n")
    with pytest.raises(ValueError, match=rf"the host list {listed}: not UTF-8: byte 0xff at "
                                         "line 2"):
        parse_hosts(f"@{listed}")


# -- the scratch directory ------------------------------------------------------------------------

def test_iogate_tmpdir_names_the_scratch_directory_or_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IOGATE_TMPDIR", str(tmp_path))
    assert scratch_dir() == str(tmp_path)
    for bad, what in ((tmp_path / "missing", "no such directory"),
                      (written(tmp_path, "", "file"), "is not a directory")):
        monkeypatch.setenv("IOGATE_TMPDIR", str(bad))
        with pytest.raises(UsageError, match=f"IOGATE_TMPDIR={bad}: {what}; set it"):
            scratch_dir()
    monkeypatch.delenv("IOGATE_TMPDIR")
    assert os.path.isdir(scratch_dir())


# -- repeats ----------------------------------------------------------------------------------

REPEATED = "suite: s\nworkloads:\n  - name: a\n    ioengine: null\n    rw: read\n    size: 1m\n"


@pytest.mark.parametrize(("repeat", "where"), [
    ("1000000", "F:7:13: workloads[0].repeat"),
    ("{min: 2, max: 10001}", "F:7:27: workloads[0].repeat.max"),
    ("{min: 10001, max: 2}", "F:7:19: workloads[0].repeat.min"),
])
def test_repeats_are_bounded_like_the_points_of_a_sweep(tmp_path: Path, repeat: str,
                                                        where: str) -> None:
    path = written(tmp_path, REPEATED + f"    repeat: {repeat}\n", "s.suite.yaml")
    with pytest.raises(SuiteError) as caught:
        load_suite(path, env={})
    said = [str(p).replace(str(path), "F") for p in caught.value.problems]
    assert any(p.startswith(where) and "at most 10000" in p for p in said), said


def test_repeats_up_to_the_bound_load(tmp_path: Path) -> None:
    path = written(tmp_path, REPEATED + "    repeat: {min: 3, max: 10000}\n", "s.suite.yaml")
    (only,) = load_suite(path, env={}).cases
    assert (only.repeat, only.repeat_max) == (3, 10000)
