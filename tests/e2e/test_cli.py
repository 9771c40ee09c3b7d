"""The ``iogate`` command end to end: real engines, real files, exit codes, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.e2e.test_outcomes import interruptible

IOGATE = [sys.executable, "-m", "iogate"]


def iogate(*args: str, cwd: Path | None = None, env: dict | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})},
                          stdin=subprocess.DEVNULL)


def suite_file(directory: Path, text: str, name: str = "e2e") -> Path:
    path = directory / f"{name}.suite.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("engine", ["psync", "io_uring"])
def test_real_engine_run_counts_every_io(engine: str, disk_dir: Path) -> None:
    target = disk_dir / "target.data"
    suite = suite_file(disk_dir, f"""\
suite: e2e
workloads:
  - name: seq-write
    ioengine: {engine}
    direct: true
    rw: write
    bs: 64k
    size: 4MiB
    iodepth: {1 if engine == "psync" else 8}
    filename: {target}
    expect:
      write.ios: "== 64"
      write.bytes: "== 4MiB"
  - name: rand-read
    ioengine: {engine}
    direct: true
    rw: randread
    bs: 4k
    size: 4MiB
    iodepth: {1 if engine == "psync" else 8}
    filename: {target}
    expect:
      read.ios: "== 1024"
      read.clat.p99: "< 10s"
      errors: "== 0"
""")
    out = disk_dir / "results.json"
    proc = iogate("run", str(suite), "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target.stat().st_size == 4 * 1024 * 1024
    doc = json.loads(out.read_text())
    cases = {c["id"]: c for c in doc["cases"]}
    read = cases["e2e.suite.yaml::rand-read"]["metrics"]
    assert read["read.ios"] == 1024
    assert read["read.bytes"] == 4 * 1024 * 1024
    assert 0 < read["read.clat.p50"] <= read["read.clat.p99"] <= read["read.clat.max"]
    assert read["read.clat.min"] <= read["read.clat.p50"]
    assert "write.iops" not in read
    [run] = cases["e2e.suite.yaml::rand-read"]["series"]  # one run: no repeats
    assert run["repeat"] == 1
    assert list(run["jobs"][0]) == ["read"]  # nothing written
    assert sum(iv["ios"] for iv in run["jobs"][0]["read"]) == 1024
    # lat = slat + clat, so its mean is at least clat's
    assert read["read.lat.mean"] >= read["read.clat.mean"]


def test_failed_expectation_exits_1_with_a_table(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, """\
suite: e2e
workloads:
  - name: too-slow
    ioengine: null
    rw: read
    size: 1MiB
    expect:
      read.iops: ">= 1000G"
""")
    proc = iogate("run", str(suite))
    assert proc.returncode == 1, proc.stderr
    assert "FAIL" in proc.stdout
    assert 'read.iops: ">= 1000G"' in proc.stdout  # the suite line
    assert "e2e.suite.yaml::too-slow" in proc.stdout


def test_invalid_suite_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, """\
suite: e2e
workloads:
  - name: bad
    ioengine: null
    rw: read
    size: 10Q
""")
    proc = iogate("run", str(suite))
    assert proc.returncode == 2
    assert f"{suite}:6:" in proc.stderr
    assert "size" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_unset_variable_is_an_error_naming_it(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, """\
suite: e2e
workloads:
  - name: w
    ioengine: null
    rw: read
    size: ${IOGATE_TEST_UNSET_SIZE}
""")
    env = {k: v for k, v in os.environ.items() if k != "IOGATE_TEST_UNSET_SIZE"}
    proc = subprocess.run([*IOGATE, "validate", str(suite)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 2
    assert f"{suite}:6:" in proc.stderr
    assert "IOGATE_TEST_UNSET_SIZE" in proc.stderr
    ok = iogate("validate", str(suite), env={"IOGATE_TEST_UNSET_SIZE": "2MiB"})
    assert ok.returncode == 0, ok.stderr


def test_engine_error_exits_3(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, f"""\
suite: e2e
workloads:
  - name: nowhere
    ioengine: psync
    rw: write
    size: 1MiB
    filename: {tmp_path}/no/such/dir/file
""")
    out = tmp_path / "r.json"
    proc = iogate("run", str(suite), "--json", str(out))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    case = json.loads(out.read_text())["cases"][0]
    assert case["outcome"] == "error"
    assert "No such file or directory" in case["error"] or "ENOENT" in case["error"]


def test_k_selects_cases_and_no_match_is_an_error(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, """\
suite: e2e
defaults:
  ioengine: null
  size: 1MiB
workloads:
  - name: alpha
    rw: read
  - name: beta
    rw: write
""")
    out = tmp_path / "r.json"
    proc = iogate("run", str(suite), "-k", "beta", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [c["id"] for c in json.loads(out.read_text())["cases"]] == ["e2e.suite.yaml::beta"]
    assert iogate("run", str(suite), "-k", "gamma").returncode == 2


def test_committed_schema_is_current(repo_root: Path) -> None:
    proc = iogate("schema")
    assert proc.returncode == 0, proc.stderr
    committed = json.loads((repo_root / "suites/schema/iogate.schema.json").read_text())
    assert json.loads(proc.stdout) == committed, (
        "suites/schema/iogate.schema.json is stale: regenerate it with "
        "'iogate schema > suites/schema/iogate.schema.json'")


def test_shipped_suites_validate(repo_root: Path) -> None:
    suites = sorted((repo_root / "suites").glob("*.suite.yaml"))
    assert len(suites) >= 4
    proc = iogate("validate", *map(str, suites))
    assert proc.returncode == 0, proc.stderr


def test_smoke_suite_passes_end_to_end(repo_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "smoke.json"
    proc = iogate("run", str(repo_root / "suites/smoke.suite.yaml"), "--json", str(out),
                  env={"RUNTIME": "1s", "SIZE": "32MiB"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert {c["outcome"] for c in doc["cases"]} == {"passed"}
    engines = {c["workload"]["ioengine"] for c in doc["cases"]}
    assert engines == {"null", "io_uring", "psync"}
    # time_based: each case ran about its runtime, not just one pass over the file
    for c in doc["cases"]:
        runtime = max(c["metrics"].get("read.runtime", 0), c["metrics"].get("write.runtime", 0))
        assert 0.9e9 <= runtime <= 1.5e9, (c["id"], runtime)


def test_interrupt_ends_the_run_and_keeps_partial_results(tmp_path: Path) -> None:
    import signal
    import time

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    suite = suite_file(tmp_path, """\
suite: e2e
workloads:
  - name: long
    ioengine: psync
    rw: randread
    size: 1MiB
    runtime: 3600s
    time_based: true
  - name: after
    ioengine: null
    rw: read
    size: 1MiB
""")
    out = tmp_path / "r.json"
    proc = subprocess.Popen([*IOGATE, "run", str(suite), "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible,
                            env={**os.environ, "IOGATE_TMPDIR": str(scratch)})
    # The case's scratch file appears once the run is under way.
    deadline = time.monotonic() + 60
    while not any(scratch.rglob("*.data")) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    # the workload asked for an hour: that the run ends is the interrupt's doing
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    doc = json.loads(out.read_text())
    assert [c["outcome"] for c in doc["cases"]] == ["interrupted"]  # 'after' never ran
    assert "1 interrupted, 1 not run" in stdout
    assert not any(scratch.iterdir())  # the scratch file is cleaned up


SWEPT = """\
suite: swept
workloads:
  - name: scale
    ioengine: null
    rw: randread
    size: 1MiB
    sweep:
      iodepth: [1, 16, 32]
"""


@pytest.mark.parametrize(("pattern", "ran"), [
    ("iodepth:1", ["scale[iodepth:1]"]), ("iodepth=16", ["scale[iodepth:16]"]),
    ("scale[", ["scale[iodepth:1]", "scale[iodepth:16]", "scale[iodepth:32]"]),
])
def test_k_selects_sweep_points_by_whole_values(tmp_path: Path, pattern: str,
                                                ran: list[str]) -> None:
    out = tmp_path / "r.json"
    proc = iogate("run", str(suite_file(tmp_path, SWEPT)), "-k", pattern, "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert [c["id"].split("::")[1] for c in json.loads(out.read_text())["cases"]] == ran
