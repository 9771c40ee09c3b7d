"""The workload language end to end: phases, groups, realized-workload warnings and the
field-notes suites, run on real files through the CLI and the runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from iogate.plan import plan
from iogate.runner import run_cases
from iogate.spec import load_suite

IOGATE = [sys.executable, "-m", "iogate"]


def write_suite(directory: Path, text: str, name: str = "lang") -> Path:
    path = directory / f"{name}.suite.yaml"
    path.write_text(text)
    return path


def test_preconditions_run_first_and_are_not_measured(disk_dir: Path) -> None:
    suite = load_suite(write_suite(disk_dir, f"""\
suite: lang
workloads:
  - name: read-after-fill
    ioengine: psync
    rw: randread
    size: 2MiB
    filename: {disk_dir}/target.data
    precondition:
      - rw: write
        bs: 1MiB
        loops: 2
      - rw: randwrite
    expect:
      write.ios: "== 0"
      read.ios: "== 512"
"""))
    phases: list[str] = []
    [result] = run_cases(suite.cases, on_phase=phases.append)
    assert result.outcome == "passed", result.error or result.checks
    assert phases == ["precondition 1/2 pass 1/2", "precondition 1/2 pass 2/2",
                      "precondition 2/2", ""]


def test_a_group_runs_in_one_session_and_others_alone(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, """\
suite: lang
defaults:
  ioengine: null
  size: 1MiB
  runtime: 200ms
  time_based: true
workloads:
  - name: reader
    rw: randread
    group: tenants
  - name: alone
    rw: read
  - name: writer
    rw: randwrite
    group: tenants
"""))
    units = plan(suite.cases)
    assert [[c.id for c in unit] for unit in units] == [["reader", "writer"], ["alone"]]
    reader, writer = run_cases(units[0])
    assert reader.outcome == writer.outcome == "passed"
    # one engine session: both cases measured over the same run
    assert reader.run is not None
    assert writer.run is not None
    assert reader.run.elapsed_ns == writer.run.elapsed_ns
    assert reader.metrics["read.ios"] > 0
    assert reader.metrics["write.ios"] == 0
    assert writer.metrics["write.ios"] > 0
    assert writer.metrics["read.ios"] == 0


def test_a_rate_the_device_cannot_meet_is_a_warning(disk_dir: Path) -> None:
    path = write_suite(disk_dir, f"""\
suite: lang
workloads:
  - name: too-fast
    ioengine: psync
    direct: true
    rw: randread
    size: 4MiB
    runtime: 500ms
    time_based: true
    rate_iops: 10M
    filename: {disk_dir}/target.data
""")
    out = disk_dir / "r.json"
    proc = subprocess.run([*IOGATE, "run", str(path), "--json", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a warning is not a failure
    [case] = json.loads(out.read_text())["cases"]
    assert any(w.startswith("read.rate_pct") and "could not keep up" in w
               for w in case["warnings"]), case["warnings"]
    assert case["requested"]["requested.read.iops"] == 10_000_000
    assert "too-fast: warning: read.rate_pct" in proc.stdout


def test_field_notes_suites_pass(repo_root: Path, disk_dir: Path) -> None:
    out = disk_dir / "r.json"
    # The machinery is under test here, not this machine's disk (rates and latencies are
    # checked exactly on the null engine elsewhere): a disk stall in a 1 s run is no failure.
    env = {**os.environ, "RUNTIME": "1s", "SIZE": "16MiB", "DIR": str(disk_dir),
           "MAX_RESP_P99": "5s", "MAX_P99": "5s", "MIN_RATE_PCT": "30%"}
    proc = subprocess.run([*IOGATE, "run", str(repo_root / "suites/field-notes"), "--json",
                           str(out)], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    assert len(cases) >= 12
    mix = cases["bssplit-production-mix.suite.yaml::bssplit-1k-4k-16k"]["metrics"]
    assert abs(mix["read.bs_pct.4096"] - 80) < 2
    data = cases["compressible-data.suite.yaml::half-compressible-deadbeef"]["metrics"]
    assert abs(data["data.compress_ratio"] - 0.5) <= 0.05
