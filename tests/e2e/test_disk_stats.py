"""Device statistics through the command line on real targets: direct reads of a loop
device are what the device counted (disk.read.ios and disk.read.bytes match the job's,
per interval in the series too); a buffered re-read of data already in the page cache
warns that the cache answered; a target on tmpfs has no disk.* metrics, and an
expectation on one fails as not measured, saying why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.e2e.test_trim_devices import run_suite

IOGATE = [sys.executable, "-m", "iogate"]
IMAGE_SIZE = 16 << 20


@pytest.fixture
def loop_device(disk_dir: Path) -> Iterator[str]:
    """A loop device over a 16 MiB file of data in a disk-backed directory."""
    if os.geteuid() != 0 or shutil.which("losetup") is None \
            or not os.path.exists("/dev/loop-control"):
        pytest.skip("loop devices need root, losetup and the loop driver")
    image = disk_dir / "disk.img"
    with open(image, "wb") as f:
        for i in range(IMAGE_SIZE >> 20):
            f.write(bytes([i + 1]) * (1 << 20))
    made = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                          text=True)
    if made.returncode != 0:
        pytest.skip(f"losetup cannot attach a loop device here: {made.stderr.strip()}")
    dev = made.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def test_direct_random_reads_are_what_the_device_counted(disk_dir: Path,
                                                         loop_device: str) -> None:
    body = (f"  - name: direct\n    ioengine: psync\n    rw: randread\n    bs: 4k\n"
            f"    size: 8MiB\n    direct: true\n    filename: {loop_device}\n"
            "    expect:\n      disk.util_pct: '<= 100'\n      disk.read.ios: '> 0'\n")
    proc, doc = run_suite(disk_dir, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = doc["cases"][0]
    m = case["metrics"]
    job_ios, job_bytes = m["read.ios"], m["read.bytes"]
    assert job_ios == (8 << 20) // 4096
    # merges may only make the device's requests fewer; a few others (a udev probe of
    # the new device) may add some
    assert job_ios / 8 <= m["disk.read.ios"] <= job_ios + 64
    assert job_bytes <= m["disk.read.bytes"] <= job_bytes + (1 << 20)
    # The run wrote nothing; the counters are the device's, which another process may write
    # meanwhile (seen once on a busy machine: 1 write), so a handful is no failure.
    assert m["write.ios"] == 0
    assert m["disk.write.ios"] <= 8
    assert 0 <= m["disk.util_pct"] <= 100
    assert m["disk.read.await"] >= 0
    assert not [w for w in case["warnings"] if w.startswith("disk.")], case["warnings"]
    assert all(c["passed"] for c in case["checks"]), case["checks"]
    device = os.path.basename(loop_device)
    disk_series = case["series"][0]["disk"]
    assert disk_series
    assert all(device in row for row in disk_series)
    assert sum(row[device]["read.ios"] for row in disk_series) == m["disk.read.ios"]
    read_series = case["series"][0]["jobs"][0]["read"]
    assert [row["end_ns"] for row in disk_series] == [iv["end_ns"] for iv in read_series]


def test_windowed_expectations_judge_each_interval_of_the_device(disk_dir: Path,
                                                                 loop_device: str) -> None:
    body = (f"  - name: windows\n    ioengine: psync\n    rw: randread\n    bs: 4k\n"
            f"    size: 8MiB\n    direct: true\n    filename: {loop_device}\n"
            "    time_based: true\n    runtime: 1s\n"
            "    expect:\n"
            "      disk.read.ios: '>= 1 in all of 250ms'\n"
            "      disk.read.await: '<= 10s in all of 250ms'\n"
            "      disk.write.ios: '>= 1 in 50% of 250ms'\n")
    proc, doc = run_suite(disk_dir, body)
    case = doc["cases"][0]
    checks = {c["metric"]: c for c in case["checks"]}
    assert checks["disk.read.ios"]["passed"], checks
    assert checks["disk.read.await"]["passed"], checks
    # A read-only job: no interval saw a device write, and each interval is judged.
    writes = checks["disk.write.ios"]
    assert not writes["passed"], writes
    assert writes["intervals"] >= 4, writes
    assert writes["reason"].startswith("0.0% of "), writes
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # The disk series is cut at the window's interval, like the job's.
    device = os.path.basename(loop_device)
    rows = case["series"][0]["disk"]
    assert sum(r[device]["read.ios"] for r in rows) == case["metrics"]["disk.read.ios"]


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_the_fio_backend_reports_the_device_over_fio_s_run(disk_dir: Path,
                                                           loop_device: str) -> None:
    body = (f"  - name: direct\n    ioengine: psync\n    rw: randread\n    bs: 4k\n"
            f"    size: 8MiB\n    direct: true\n    filename: {loop_device}\n"
            "    expect:\n      disk.read.ios: '> 0'\n      disk.read.bytes: '>= 8MiB'\n")
    proc, doc = run_suite(disk_dir, body, "--backend", "fio")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = doc["cases"][0]
    m = case["metrics"]
    job_ios, job_bytes = m["read.ios"], m["read.bytes"]
    assert job_ios == (8 << 20) // 4096
    assert job_ios / 8 <= m["disk.read.ios"] <= job_ios + 64, m
    assert job_bytes <= m["disk.read.bytes"] <= job_bytes + (1 << 20)
    assert m["disk.write.ios"] == 0
    assert 0 <= m["disk.util_pct"] <= 100
    assert not [w for w in case["warnings"] if w.startswith("disk.")], case["warnings"]


def test_a_buffered_reread_of_cached_data_warns_of_the_page_cache(disk_dir: Path,
                                                                  loop_device: str) -> None:
    # Read once, and keep the device open: its page cache lives until the last close.
    with open(loop_device, "rb") as f:
        while f.read(1 << 20):
            pass
        body = (f"  - name: buffered\n    ioengine: psync\n    rw: read\n    bs: 64k\n"
                f"    size: 8MiB\n    invalidate: false\n    filename: {loop_device}\n")
        proc, doc = run_suite(disk_dir, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = doc["cases"][0]
    assert case["metrics"]["read.bytes"] == 8 << 20
    assert case["metrics"]["disk.read.bytes"] < 4 << 20
    warned = [w for w in case["warnings"] if w.startswith("disk.read.bytes:")]
    assert warned, case["warnings"]
    assert "page cache" in warned[0], case["warnings"]


def _unmeasured(directory: Path, target: str, engine: str = "psync") -> None:
    body = (f"  - name: virtual\n    ioengine: {engine}\n    rw: read\n    bs: 4k\n"
            f"    size: 1MiB\n    filename: {target}\n"
            "    expect:\n      disk.util_pct: '<= 90'\n")
    proc, doc = run_suite(directory, body)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    case = doc["cases"][0]
    assert case["metrics"]["read.ios"] == 256
    assert not [k for k in case["metrics"] if k.startswith("disk.")]
    (check,) = case["checks"]
    assert check["metric"] == "disk.util_pct"
    assert not check["passed"]
    assert check["reason"].startswith("not measured: ")
    assert "block device" in check["reason"]
    assert "disk" not in case["series"][0]
    assert "not measured" in proc.stdout


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs mounted for the test."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "tmpfs"
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def test_a_tmpfs_target_has_no_device_statistics(tmpfs: Path) -> None:
    _unmeasured(tmpfs, str(tmpfs / "data.bin"))


def test_the_null_engine_has_no_device_statistics(disk_dir: Path) -> None:
    _unmeasured(disk_dir, str(disk_dir / "nothing.bin"), engine="null")
