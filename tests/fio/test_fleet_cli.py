"""One suite across a fleet of real fio servers, the way users run it: ``iogate run --backend
fio --hosts ...`` and ``pytest --iogate-backend fio --iogate-hosts ...``. The aggregate is
judged by ``expect``, each host by ``per_host``; a host lost mid-run fails the case by name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

IOGATE = [sys.executable, "-m", "iogate"]

FLEET_SUITE = """\
suite: fleet
workloads:
  - name: null-reads
    ioengine: null
    rw: randread
    bs: 4k
    size: 1MiB
    expect:
      read.ios: "== 768"         # three hosts, 256 reads each
      read.clat.p99: "< 1s"
    per_host:
      read.ios: "== 256"
  - name: too-demanding
    ioengine: null
    rw: randread
    bs: 4k
    size: 1MiB
    per_host:
      read.ios: "> 256"          # no host can do more than its 256 reads
  - name: paced
    ioengine: null
    rw: randread
    bs: 4k
    size: 256KiB
    rate_iops: 1000            # asked of every host
    expect:
      read.rate_pct: ">= 90"     # the fleet's share of what was asked, not 300 %
"""


def test_a_suite_across_three_hosts_is_judged_as_a_fleet_and_per_host(fleet, tmp_path: Path
                                                                      ) -> None:
    servers = fleet(3)
    hosts = ",".join(s.host.key for s in servers)
    suite = tmp_path / "fleet.suite.yaml"
    suite.write_text(FLEET_SUITE)
    out = tmp_path / "r.json"
    proc = subprocess.run([*IOGATE, "run", str(suite), "--backend", "fio", "--hosts", hosts,
                           "--json", str(out)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stderr  # too-demanding fails, nothing errs
    cases = {c["id"].split("::")[1]: c for c in json.loads(out.read_text())["cases"]}
    fleet_case = cases["null-reads"]
    assert fleet_case["outcome"] == "passed"
    assert fleet_case["metrics"]["read.ios"] == 768
    assert sorted(fleet_case["hosts"]) == sorted(s.host.key for s in servers)
    assert all(m["read.ios"] == 256 for m in fleet_case["hosts"].values())
    assert {c["host"] for c in fleet_case["checks"] if c["host"]} == set(fleet_case["hosts"])
    assert "read.iops" in fleet_case["spread"]
    demanding = cases["too-demanding"]
    assert demanding["outcome"] == "failed"
    failed_hosts = {c["host"] for c in demanding["checks"] if not c["passed"]}
    assert failed_hosts == {s.host.key for s in servers}
    for server in servers:  # each failing host is named in the report
        assert f"{server.host.key}: read.ios" in proc.stdout
    assert "hosts of fleet.suite.yaml::null-reads" in proc.stdout
    paced = cases["paced"]
    assert paced["outcome"] == "passed"
    assert paced["metrics"]["read.rate_pct"] < 110
    assert paced["warnings"] == []


def test_a_host_killed_mid_run_makes_the_case_an_error_naming_it(fleet, tmp_path: Path) -> None:
    survivor, victim = fleet(2)
    suite = tmp_path / "fleet.suite.yaml"
    suite.write_text("""\
suite: fleet
workloads:
  - name: long
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 3s
    time_based: true
    expect: {read.iops: "> 0"}
""")
    out = tmp_path / "r.json"
    proc = subprocess.Popen([*IOGATE, "run", str(suite), "--backend", "fio", "--hosts",
                             f"{survivor.host.key},{victim.host.key}", "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    while not victim.running_a_job():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    victim.kill()
    _stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 3, stderr
    case = json.loads(out.read_text())["cases"][0]
    assert case["outcome"] == "error"
    assert case["error"].startswith(f"host {victim.host.key} did not report")
    assert survivor.host.key not in case["error"]


def test_pytest_runs_a_suite_on_the_fleet(fleet, pytester: pytest.Pytester) -> None:
    servers = fleet(2)
    pytester.makefile(".suite.yaml", fleet="""\
suite: fleet
workloads:
  - name: null-reads
    ioengine: null
    rw: randread
    size: 1MiB
    expect: {read.ios: "== 512"}
    per_host: {read.ios: "== 256"}
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-backend", "fio",
                                "--iogate-hosts", ",".join(s.host.key for s in servers))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*hosts of fleet.suite.yaml::null-reads*"])


def test_hosts_need_the_fio_backend_and_a_good_list(tmp_path: Path) -> None:
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(FLEET_SUITE)
    native = subprocess.run([*IOGATE, "run", str(suite), "--hosts", "h1,h2"],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert native.returncode == 2
    assert "add --backend fio" in native.stderr
    bad = subprocess.run([*IOGATE, "run", str(suite), "--backend", "fio", "--hosts", "h1,h2:x"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2
    assert "h2:x" in bad.stderr
    assert "Traceback" not in bad.stderr + native.stderr


def test_the_fio_backend_runs_a_suite_on_this_machine(tmp_path: Path) -> None:
    suite = tmp_path / "local.suite.yaml"
    suite.write_text(f"""\
suite: local
workloads:
  - name: psync-reads
    ioengine: psync
    filename: {tmp_path / "target.data"}
    rw: randread
    bs: 4k
    size: 2MiB
    expect:
      read.ios: "== 512"
      read.clat.p99: "< 1s"
      errors: "== 0"
""")
    out = tmp_path / "r.json"
    proc = subprocess.run([*IOGATE, "run", str(suite), "--backend", "fio", "--json", str(out)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = json.loads(out.read_text())["cases"][0]
    assert case["outcome"] == "passed"
    assert case["hosts"] == {}
    assert 0 < case["metrics"]["read.clat.p50"] <= case["metrics"]["read.clat.p99"]
