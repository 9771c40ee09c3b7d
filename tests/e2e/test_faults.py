"""Faults provoked for real, seen through ``iogate run``: each ends its case as an ``error``
whose message names what failed (errno, offset, time, or the I/O itself), never as a pass,
and the run goes on. The engine-level details (counts, offsets) are tested in tests/engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.faults import FaultFS, require_root, shim_env, tmpfs

IOGATE = [sys.executable, "-m", "iogate"]


def run_suite(directory: Path, text: str, env: dict[str, str] | None = None,
              prefix: list[str] | None = None, timeout: float = 120
              ) -> tuple[subprocess.CompletedProcess, dict[str, Any]]:
    suite = directory / "faults.suite.yaml"
    suite.write_text(text)
    out = directory / "r.json"
    proc = subprocess.run([*(prefix or []), *IOGATE, "run", str(suite), "--json", str(out)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    cases = {c["id"].split("::")[1]: c for c in json.loads(out.read_text())["cases"]}
    return proc, cases


def test_eio_on_the_kernel_path_is_an_error_for_io_uring_and_libaio(tmp_path: Path) -> None:
    with FaultFS(base=tmp_path) as fs:
        target = fs.path / "target.data"
        # A file iogate created and marked, so that the write workload after it is allowed.
        fs.control(mode="eio", op="read", after=20, count=1_000_000)
        proc, cases = run_suite(tmp_path, f"""\
suite: faults
defaults:
  filename: {target}
  size: 1MiB
  bs: 4k
  rw: randread
  iodepth: 4
workloads:
  - name: uring
    ioengine: io_uring
    expect: {{read.iops: "> 0"}}
  - name: libaio
    ioengine: libaio
    direct: true
    expect: {{read.iops: "> 0"}}
""")
    assert proc.returncode == 3, proc.stderr
    for name in ("uring", "libaio"):
        case = cases[name]
        assert case["outcome"] == "error", case
        assert "read error(s)" in case["error"]
        assert "Input/output error (errno 5) at offset" in case["error"]
        assert "s into the run" in case["error"]
        assert case["metrics"]["errors"] > 0


def test_a_stall_past_io_timeout_ends_the_case_naming_the_io(disk_dir: Path) -> None:
    target = disk_dir / "stall.data"
    target.write_bytes(os.urandom(1 << 20))
    # The stall (ten minutes) outlasts the run's own time limit (run_suite: 120 s): a run that
    # ends at all did not wait for the stalled I/O.
    env = shim_env("stall.data", op="read", mode="stall", after=20, count=1, stall_ms=600_000)
    proc, cases = run_suite(disk_dir, f"""\
suite: faults
workloads:
  - name: stalled
    ioengine: psync
    filename: {target}
    rw: randread
    bs: 4k
    size: 1MiB
    io_timeout: 500ms
    expect: {{read.iops: "> 0"}}
  - name: after
    ioengine: null
    rw: randread
    size: 1MiB
    expect: {{read.iops: "> 0"}}
""", env=env)
    assert proc.returncode == 3, proc.stderr
    stalled = cases["stalled"]
    assert stalled["outcome"] == "error"
    assert stalled["error"].startswith("read of 4096 bytes at offset ")
    assert f"of {target} outstanding for" in stalled["error"]
    assert "(io_timeout 0.5 s" in stalled["error"]
    assert stalled["metrics"]["read.ios"] >= 19  # the partial counts before the stall
    assert cases["after"]["outcome"] == "passed"  # the run went on


def test_a_device_that_vanishes_mid_run_is_an_error_not_a_hang(tmp_path: Path) -> None:
    with FaultFS(base=tmp_path) as fs:
        target = fs.path / "vanish.data"
        suite = tmp_path / "faults.suite.yaml"
        suite.write_text(f"""\
suite: faults
workloads:
  - name: vanish
    ioengine: io_uring
    filename: {target}
    rw: randread
    bs: 4k
    size: 1MiB
    iodepth: 4
    runtime: 4s
    time_based: true
    expect: {{read.iops: "> 0"}}
""")
        out = tmp_path / "r.json"
        proc = subprocess.Popen([*IOGATE, "run", str(suite), "--json", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
        fs.control(mode="eio", op="read", after=1 << 40)  # count reads, fault none
        while int(fs.state()["seen"]) < 500:  # the run is well under way (no clock: the
            assert proc.poll() is None, proc.stderr  # run ending first is the failure)
            time.sleep(0.01)
        fs.kill()
        _stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 3, stderr
    case = json.loads(out.read_text())["cases"][0]
    assert case["outcome"] == "error"
    assert ("Transport endpoint is not connected" in case["error"]
            or "Software caused connection abort" in case["error"]), case["error"]
    assert case["metrics"]["read.ios"] > 0


def test_enospc_on_a_full_filesystem_is_an_error(tmp_path: Path) -> None:
    require_root()
    with tmpfs("4m", base=tmp_path) as small:
        proc, cases = run_suite(tmp_path, f"""\
suite: faults
workloads:
  - name: full
    ioengine: psync
    filename: {small / "big.data"}
    rw: write
    bs: 64k
    size: 16MiB
    expect: {{write.iops: "> 0"}}
""")
    assert proc.returncode == 3, proc.stderr
    assert cases["full"]["outcome"] == "error"
    assert "No space left on device (errno 28)" in cases["full"]["error"]


def test_a_file_size_limit_is_efbig_and_the_run_survives(disk_dir: Path) -> None:
    target = disk_dir / "limited.data"
    proc, cases = run_suite(disk_dir, f"""\
suite: faults
workloads:
  - name: limited
    ioengine: psync
    filename: {target}
    rw: write
    bs: 64k
    size: 8MiB
    expect: {{write.iops: "> 0"}}
""", prefix=["bash", "-c", 'ulimit -f 2048; exec "$@"', "iogate"])
    assert proc.returncode == 3, proc.stderr  # not killed by SIGXFSZ
    assert cases["limited"]["outcome"] == "error"
    assert "File too large (errno 27)" in cases["limited"]["error"]


@pytest.mark.parametrize(("mode", "kinds"), [("drop", {"lost"}), ("torn", {"torn"}),
                                         ("misdirect", {"misdirected", "lost"})])
def test_verify_catches_what_the_device_got_wrong(disk_dir: Path, mode: str,
                                                  kinds: set[str]) -> None:
    # Sequential writes touch each block once, so nothing later hides the fault. A
    # misdirected write lands on the block before its own (written already: now it holds
    # the wrong block) and leaves its own block unwritten (lost).
    target = disk_dir / f"verify-{mode}.data"
    env = shim_env(target.name, op="write", mode=mode, after=300, count=1, shift=-4096)
    proc, cases = run_suite(disk_dir, f"""\
suite: faults
workloads:
  - name: verified
    ioengine: psync
    filename: {target}
    rw: write
    bs: 4k
    size: 2MiB
    verify: crc32c
    expect: {{write.iops: "> 0"}}
""", env=env)
    assert proc.returncode == 3, proc.stderr
    case = cases["verified"]
    assert case["outcome"] == "error"
    assert "verification failed in job 0" in case["error"]
    assert " write at offset " in case["error"]
    assert case["metrics"]["verify.failures"] == len(kinds)
    for kind in kinds:
        assert case["metrics"][f"verify.{kind}"] == 1, case["metrics"]
    assert case["metrics"]["verify.blocks"] == 512
