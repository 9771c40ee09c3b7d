"""YAML loading: positions, duplicate keys, and the YAML 1.1 traps kept as strings."""

import pytest
import yaml

from iogate.errors import Problem, SuiteError
from iogate.spec.loader import (
    MarkedList,
    MarkedMap,
    format_path,
    load_yaml,
    load_yaml_text,
    mark_of,
)

DOC = """\
suite: s
workloads:
  - name: a
    iodepth: 4
    expect:
      read.clat.p99: "<= 1ms"
  - name: b
"""


def test_values_and_marks():
    root = load_yaml_text(DOC, "f.yaml")
    assert isinstance(root, MarkedMap)
    assert isinstance(root["workloads"], MarkedList)
    assert root["workloads"][0]["iodepth"] == 4
    assert root.marks["workloads"] == (2, 1)
    assert root["workloads"].marks == [(3, 5), (7, 5)]
    assert root["workloads"][0].value_marks["iodepth"] == (4, 14)


def test_mark_of_paths_and_fallback():
    root = load_yaml_text(DOC, "f.yaml")
    assert mark_of(root, ("workloads", 0, "expect", "read.clat.p99")) == (6, 7)
    assert mark_of(root, ("workloads", 0, "expect", "read.clat.p99"), value=True) == (6, 22)
    assert mark_of(root, ("workloads", 1)) == (7, 5)
    # Missing keys and indexes fall back to the nearest parent that exists.
    assert mark_of(root, ("workloads", 1, "size")) == (7, 5)
    assert mark_of(root, ("workloads", 9, "size")) == (2, 1)
    assert mark_of(root, ()) == (1, 1)


@pytest.mark.parametrize(("text", "value"), [
    ("on", "on"), ("off", "off"), ("yes", "yes"), ("no", "no"), ("y", "y"), ("n", "n"),
    ("true", True), ("false", False), ("True", True),
    ("1:30", "1:30"), ("0777", "0777"), ("0x10", "0x10"), ("007", "007"), ("0", 0),
    ("12", 12), ("-3", -3), ("1.5", 1.5), ("0.5", 0.5), ("1e3", 1000.0),
    ("2001-12-14", "2001-12-14"), ("~", None), ("null", "null"), ("4k", "4k"),
    ('"32"', "32"), (".inf", ".inf"),
])
def test_yaml_1_2_scalars(text, value):
    got = load_yaml_text(f"x: {text}\n")["x"]
    assert got == value
    assert type(got) is type(value)


def test_loader_does_not_change_pyyaml_globally():
    load_yaml_text("x: on\n")
    assert yaml.safe_load("x: on") == {"x": True}


def test_duplicate_key_names_both_lines():
    with pytest.raises(SuiteError) as exc:
        load_yaml_text("a: 1\nb:\n  c: 1\n  c: 2\n", "f.yaml")
    assert str(exc.value) == "f.yaml:4:3: b.c: duplicate key 'c' (first defined on line 3)"


def test_syntax_error_has_position():
    with pytest.raises(SuiteError) as exc:
        load_yaml_text("a: [1, 2\nb: 3\n", "f.yaml")
    (problem,) = exc.value.problems
    assert problem.file == "f.yaml"
    assert problem.line == 2
    assert "invalid YAML" in problem.message


@pytest.mark.parametrize(("text", "message"), [
    ("", "the file is empty"), ("- 1\n", "a suite must be a mapping"),
    ("? [a]\n: 1\n", "a key must be a plain value"),
])
def test_bad_documents(text, message):
    with pytest.raises(SuiteError, match=message):
        load_yaml_text(text, "f.yaml")


def test_merge_keys_fill_in_without_duplicates():
    root = load_yaml_text("base: &b {iodepth: 4, rw: read}\nw:\n  <<: *b\n  rw: write\n")
    assert root["w"] == {"rw": "write", "iodepth": 4}


@pytest.mark.parametrize(("merges", "merged", "hint"), [
    ("  <<: *a\n  <<: *b\n", {"x": 1}, "'<<: [*a, *b]'"),
    ("  <<: [*a, *b]\n  <<: *c\n", {"x": 1, "y": 2}, "'<<: [*a, *b, *c]'"),
    ("  <<: *a\n  <<: {z: 3}\n", {"x": 1}, "'<<: [*a, ...]'"),
])
def test_two_merge_keys_are_duplicate_keys(merges, merged, hint):
    text = "a: &a {x: 1}\nb: &b {y: 2}\nc: &c {z: 3}\nw:\n" + merges + "  rw: read\n"
    with pytest.raises(SuiteError) as exc:
        load_yaml_text(text, "f.yaml")
    assert str(exc.value) == (
        "f.yaml:6:3: w: duplicate key '<<' (first defined on line 5): merge several mappings "
        f"with one key, {hint}")
    # As with any duplicate key, the first is kept so the rest can still be checked.
    from iogate.spec.loader import load_yaml_lenient
    root, problems = load_yaml_lenient(text, "f.yaml")
    assert root["w"] == {"rw": "read", **merged}
    assert len(problems) == 1


def test_load_yaml_reads_files(tmp_path):
    f = tmp_path / "s.suite.yaml"
    f.write_text("suite: x\n")
    assert load_yaml(f) == {"suite": "x"}
    with pytest.raises(SuiteError, match="cannot read"):
        load_yaml(tmp_path / "missing.yaml")


def test_problem_and_suite_error_format():
    p = Problem("f.yaml", 3, 5, "workloads[1].iodepth", "boom")
    assert str(p) == "f.yaml:3:5: workloads[1].iodepth: boom"
    assert str(Problem("f.yaml", 0, 0, "", "gone")) == "f.yaml: gone"
    err = SuiteError([p, Problem("g.yaml", 1, 1, "", "x")])
    assert str(err) == "f.yaml:3:5: workloads[1].iodepth: boom\ng.yaml:1:1: x"
    assert SuiteError.single("f", "m").problems == [Problem("f", 0, 0, "", "m")]


def test_format_path():
    assert format_path(("workloads", 1, "iodepth")) == "workloads[1].iodepth"
    assert format_path(("workloads", 0, "expect", "read.clat.p99")) == \
        "workloads[0].expect.read.clat.p99"
