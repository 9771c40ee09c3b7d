"""The pytest plugin under pytest-xdist: workers run the items, the controller reports.

Each run is a real pytest process with real xdist workers (``-n 2``). Every case writes its own
target (a distinct file, or none with the null engine), so the workers never share one.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("xdist")

SUITE = """\
suite: mixed
defaults:
  ioengine: null
  size: 4MiB
  bs: 4k
workloads:
  - name: reads
    rw: randread
    expect:
      read.ios: "== 1024"
  - name: writes
    rw: randwrite
    expect:
      write.ios: "== 1024"
  - name: impossible
    rw: randread
    expect:
      read.iops: ">= 1000G"
  - name: on-disk
    ioengine: psync
    rw: write
    size: 256KiB
    bs: 64k
    filename: {target}
    expect:
      write.ios: "== 4"
      write.bytes: "== 256KiB"
  - name: reader
    rw: randread
    group: pair
    expect:
      read.ios: "== 1024"
  - name: writer
    rw: randwrite
    group: pair
    expect:
      write.ios: "== 1024"
"""

CASES = {"reads": "passed", "writes": "passed", "impossible": "failed", "on-disk": "passed",
         "reader": "passed", "writer": "passed"}

# Records every results document written, by which process, and how many cases it held: the
# real writer is called through.
SPY = """\
import os

import iogate.report

_write_json = iogate.report.write_json


def _recording(path, document):
    with open("writes.log", "a") as log:
        who = os.environ.get("PYTEST_XDIST_WORKER", "controller")
        log.write(f"{who} {len(document['cases'])}\\n")
    _write_json(path, document)


iogate.report.write_json = _recording
"""


def _outcomes(document: dict) -> dict[str, str]:
    return {c["id"]: c["outcome"] for c in document["cases"]}


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    (pytester.path / "writes.log").unlink(missing_ok=True)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v",
                                           "--iogate-json=results.json", *args)
    return result, json.loads((pytester.path / "results.json").read_text())


@pytest.fixture(autouse=True)
def _not_a_worker_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pytest runs below are their own: when this test itself runs in an xdist worker,
    its variables must not make their controller look like a worker."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def mixed(pytester: pytest.Pytester, disk_dir: Path) -> pytest.Pytester:
    pytester.makeconftest(SPY)
    text = SUITE.format(target=disk_dir / "on-disk.data")
    (pytester.path / "mixed.suite.yaml").write_text(text)
    return pytester


def _workers(result: pytest.RunResult) -> dict[str, str]:
    """The worker that ran each case, from the verbose lines ``[gw0] [ 50%] PASSED ...``."""
    workers = {}
    for line in result.stdout.lines:
        m = re.match(r"\[(gw\d+)\].* (PASSED|FAILED) mixed\.suite\.yaml::(\S+)\s*$", line)
        if m:
            workers[m.group(3)] = m.group(1)
    return workers


def test_two_workers_give_the_results_of_one_process(mixed: pytest.Pytester) -> None:
    alone, alone_doc = _run(mixed)
    alone.assert_outcomes(passed=5, failed=1)
    expected = {f"mixed.suite.yaml::{name}": outcome for name, outcome in CASES.items()}
    assert _outcomes(alone_doc) == expected

    result, document = _run(mixed, "-n", "2")
    result.assert_outcomes(passed=5, failed=1)
    assert _outcomes(document) == expected
    assert len(document["cases"]) == 6  # each case once
    assert document["summary"]["passed"] == 5
    assert document["summary"]["failed"] == 1
    on_disk = next(c for c in document["cases"] if c["id"].endswith("::on-disk"))
    assert on_disk["metrics"]["write.ios"] == 4
    assert on_disk["metrics"]["write.bytes"] == 256 * 1024
    # the controller alone wrote the document, once, with every case
    assert (mixed.path / "writes.log").read_text().splitlines() == ["controller 6"]
    assert not (mixed.path / "results.json.journal").exists()
    # the failure report of a worker's item, and one summary with every case
    result.stdout.re_match_lines([r"\s*read\.iops\s+>= 1000G\s+\S+\s+FAIL"])
    out = result.stdout.str()
    assert out.count("iogate results") == 1
    summary = out.split("iogate results", 1)[1]
    for case_id in expected:
        assert case_id in summary
    # JUnit, written by the controller from the workers' reports: classed by the suite
    junit, _ = _run(mixed, "-n", "2", "--junitxml=out.xml")
    junit.assert_outcomes(passed=5, failed=1)
    classes = {c.get("name"): c.get("classname")
               for c in ET.parse(mixed.path / "out.xml").iter("testcase")}
    assert classes == dict.fromkeys(CASES, "mixed")
    # the members of the group ran on one worker
    workers = _workers(result)
    assert set(workers) == set(CASES), out
    assert workers["reader"] == workers["writer"]


def test_every_group_runs_on_one_worker_wherever_its_members_are(
        pytester: pytest.Pytester) -> None:
    """Members of eight groups, each pair nine tests apart: handed out one test (or a few) at
    a time, the members of most pairs land on different workers; each group is one unit
    instead."""
    each = '    expect:\n      read.ios: "== 16"\n'
    workloads = [f"  - name: a{i}\n    group: g{i}\n{each}" for i in range(8)]
    workloads += [f"  - name: alone\n{each}"]
    workloads += [f"  - name: b{i}\n    group: g{i}\n{each}" for i in range(8)]
    (pytester.path / "pairs.suite.yaml").write_text(
        "suite: pairs\ndefaults:\n  ioengine: null\n  size: 64KiB\n  rw: randread\n"
        "workloads:\n" + "".join(workloads))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v", "-n", "2")
    result.assert_outcomes(passed=17)
    workers = {}
    for line in result.stdout.lines:
        m = re.match(r"\[(gw\d+)\].* PASSED pairs\.suite\.yaml::(\S+)\s*$", line)
        if m:
            workers[m.group(2)] = m.group(1)
    assert len(workers) == 17, result.stdout.str()
    assert all(workers[f"a{i}"] == workers[f"b{i}"] for i in range(8)), workers
    assert len(set(workers.values())) == 2  # and both workers took groups
