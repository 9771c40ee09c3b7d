"""Baselines and results that cannot be right, refused through the CLI."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

IOGATE = [sys.executable, "-m", "iogate"]

GATE = """\
suite: gate
workloads:
  - name: paced
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 100ms
    time_based: true
    rate_iops: ${RATE:-20000}
    repeat: 5
    expect:
      read.iops: ">= baseline"
"""
CASE = "g.suite.yaml::paced"


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A baseline of the suite recorded on this machine (at 20k IOPS), as a document."""
    where = tmp_path_factory.mktemp("recorded")
    (where / "g.suite.yaml").write_text(GATE)
    proc = iogate("run", "g.suite.yaml", "--save-baseline", "base.json", cwd=where)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document: dict[str, Any] = json.loads((where / "base.json").read_text())
    return document


def write_baseline(where: Path, document: dict[str, Any], entries: list[dict[str, Any]],
                   name: str = "base.json") -> None:
    (where / "g.suite.yaml").write_text(GATE)
    (where / name).write_text(json.dumps({**document, "entries": entries}))


def test_impossible_baseline_values_are_refused_naming_entry_and_metric(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    broken = copy.deepcopy(entry)
    broken["metrics"]["read.iops"] = -5.0
    write_baseline(tmp_path, recorded, [broken])
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (f"base.json: entries[0] ({CASE}): metrics.read.iops is -5: a measured "
            "read.iops is never negative") in proc.stderr


def test_compare_refuses_results_of_an_unknown_schema_version(tmp_path: Path,
                                                             recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    results = {"schema_version": 1, "environment": entry["environment"],
               "cases": [{"id": CASE, "outcome": "passed", "metrics": entry["metrics"]}]}
    (tmp_path / "old.json").write_text(json.dumps(results))
    (tmp_path / "new.json").write_text(json.dumps({**results, "schema_version": 99}))
    assert iogate("compare", "old.json", "old.json", cwd=tmp_path).returncode == 0
    proc = iogate("compare", "old.json", "new.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "new.json: the results document has schema_version 99; this iogate reads " \
           "schema_version 1" in proc.stderr
