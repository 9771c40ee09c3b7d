"""`per_host:` expectations: the grammar of `expect:`, judged on each host of a fleet."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.spec import load_suite
from iogate.spec.schema import json_schema


def write(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "s.suite.yaml"
    f.write_text(textwrap.dedent(text))
    return f


def problems(tmp_path: Path, text: str) -> list[str]:
    f = write(tmp_path, text)
    with pytest.raises(SuiteError) as exc:
        load_suite(f, env={})
    return [str(p).replace(str(f), "F") for p in exc.value.problems]


HEAD = "suite: s\nworkloads:\n  - name: w\n    rw: randread\n    size: 1m\n"  # next: line 6


def test_per_host_parses_like_expect(tmp_path):
    text = HEAD + ("    expect:\n      read.iops: '>= 100k'\n"
                   "    per_host:\n      read.iops: '>= 30k'\n"
                   "      read.clat.p99: ['<= 2ms', '>= 1us']\n      errors: '== 0'\n")
    case = load_suite(write(tmp_path, text), env={}).cases[0]
    assert [(e.key, e.op, e.literal, e.line) for e in case.expectations] == [
        ("read.iops", ">=", 100_000, 7)]
    assert [(e.key, e.op, e.literal, e.line) for e in case.per_host_expectations] == [
        ("read.iops", ">=", 30_000, 9), ("read.clat.p99", "<=", 2_000_000, 10),
        ("read.clat.p99", ">=", 1_000, 10), ("errors", "==", 0, 11)]
    assert case.workload.per_host == {"read.iops": ">= 30k",
                                      "read.clat.p99": ["<= 2ms", ">= 1us"],
                                      "errors": "== 0"}


def test_without_per_host_there_is_none(tmp_path):
    case = load_suite(write(tmp_path, HEAD), env={}).cases[0]
    assert case.per_host_expectations == []


def test_per_host_errors_have_their_place(tmp_path):
    text = HEAD + ("    per_host:\n      read.iopz: '>= 1'\n      read.iops: 'about 5'\n"
                   "      read.bw: ['>= 1MiB/s', 7]\n")
    got = problems(tmp_path, text)
    assert len(got) == 3
    assert got[0].startswith("F:7:18: workloads[0].per_host.read.iopz: ")
    assert "unknown metric" in got[0]
    assert "read.iops" in got[0]
    assert got[1].startswith("F:8:18: workloads[0].per_host.read.iops: ")
    assert got[2].startswith("F:9:30: workloads[0].per_host.read.bw[1]: ")


def test_per_host_must_be_a_mapping(tmp_path):
    assert problems(tmp_path, HEAD + "    per_host: ['>= 1']\n") == [
        "F:6:15: workloads[0].per_host: expected a mapping, got a list"]


def test_per_host_is_not_a_default(tmp_path):
    text = "suite: s\ndefaults:\n  per_host: {errors: '== 0'}\n" + HEAD[len("suite: s\n"):]
    assert problems(tmp_path, text) == [
        "F:3:3: defaults.per_host: 'per_host' cannot be a default; set it in each workload"]


def test_per_host_windows_share_the_workload_s_interval(tmp_path):
    text = HEAD + ("    runtime: 3s\n    expect:\n      read.iops: '>= 1 in 99% of 1s'\n"
                   "    per_host:\n      read.bw: '>= 1 in 90% of 500ms'\n")
    assert problems(tmp_path, text) == [
        "F:10:16: workloads[0].per_host.read.bw: all windowed expectations of a workload "
        "must use one interval: 1s at line 8, 500ms at line 10"]


def test_per_host_takes_sweep_variables(tmp_path):
    text = HEAD + ("    sweep: {floor: [10k, 20k]}\n"
                   "    per_host:\n      read.iops: '>= ${floor}'\n")
    cases = load_suite(write(tmp_path, text), env={}).cases
    assert [c.per_host_expectations[0].literal for c in cases] == [10_000, 20_000]


def test_schema_has_per_host_like_expect():
    workload = json_schema()["$defs"]["WorkloadEntry"]["properties"]
    assert workload["per_host"]["$ref"] == workload["expect"]["$ref"] == \
        "#/$defs/Expectations"
    assert workload["per_host"]["type"] == "object"
    assert "per_host" not in json_schema()["$defs"]["Defaults"]["properties"]


def test_the_committed_schema_has_per_host(repo_root):
    import json

    committed = json.loads((repo_root / "suites/schema/iogate.schema.json").read_text())
    assert "per_host" in committed["$defs"]["WorkloadEntry"]["properties"]
