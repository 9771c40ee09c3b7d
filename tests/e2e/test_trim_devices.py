"""Trims through the command line on real targets: randtrim on a loop device discards
(the loop driver punches the discarded ranges out of its backing file, so the file has holes
afterwards) only with --allow-destructive; a trim is refused on a file iogate did not
create, as a write is; verify with a trim mode is a usage error; the text report and the
JSON results show the trim direction."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

IOGATE = [sys.executable, "-m", "iogate"]
IMAGE_SIZE = 16 << 20


def digest(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def run_suite(directory: Path, body: str, *args: str) -> tuple[subprocess.CompletedProcess,
                                                              dict]:
    (directory / "t.suite.yaml").write_text("suite: t\nworkloads:\n" + body)
    (directory / "r.json").unlink(missing_ok=True)
    proc = subprocess.run([*IOGATE, "run", "t.suite.yaml", "--json", "r.json", *args],
                          cwd=directory, capture_output=True, text=True, timeout=300)
    doc = json.loads((directory / "r.json").read_text()) if (directory / "r.json").exists() \
        else {}
    return proc, doc


def workload(target: str, rw: str, extra: str = "") -> str:
    return (f"  - name: w\n    ioengine: psync\n    rw: {rw}\n    bs: 64k\n    size: 8MiB\n"
            f"    filename: {target}\n{extra}")


def _loop_problem() -> str | None:
    """Why loop devices cannot be used here, or None."""
    if os.geteuid() != 0:
        return "losetup needs root"
    if shutil.which("losetup") is None:
        return "losetup is not installed"
    if not os.path.exists("/dev/loop-control"):
        return "no /dev/loop-control: the loop driver is not available"
    return None


@contextlib.contextmanager
def loop_device(image: Path) -> Iterator[str]:
    """A loop device over ``image`` (a file of data, every block allocated)."""
    with open(image, "wb") as f:
        for _ in range(IMAGE_SIZE >> 20):
            f.write(b"\x5a" * (1 << 20))
        f.flush()
        os.fsync(f.fileno())
    made = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                          text=True)
    if made.returncode != 0:
        pytest.skip(f"losetup cannot attach a loop device here: {made.stderr.strip()}")
    dev = made.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def test_randtrim_on_a_loop_device_punches_its_backing_file(disk_dir: Path) -> None:
    problem = _loop_problem()
    if problem:
        pytest.skip(problem)
    image = disk_dir / "disk.img"
    with loop_device(image) as dev:
        before, full = digest(image), allocated(image)
        assert full >= IMAGE_SIZE
        refused, doc = run_suite(disk_dir, workload(dev, "randtrim"))
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert f"{dev} (randtrim): a block device" in refused.stderr
        assert digest(image) == before
        assert allocated(image) == full
        expect = "    expect:\n      trim.iops: '> 0'\n      trim.clat.p99: '< 60s'\n"
        proc, doc = run_suite(disk_dir, workload(dev, "randtrim", expect), "--allow-destructive")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        metrics = doc["cases"][0]["metrics"]
        assert metrics["trim.ios"] == 8 * 16  # size / bs
        assert metrics["trim.iops"] > 0
        assert metrics["trim.clat.p99"] > 0
        assert metrics["write.ios"] == metrics["read.ios"] == 0
        assert "trim.iops" in proc.stdout
        assert "trim.clat.p99" in proc.stdout
    assert allocated(image) < full, "the discards left no hole in the backing file"
    assert os.stat(image).st_size == IMAGE_SIZE


def test_trim_is_refused_on_a_file_iogate_did_not_create(disk_dir: Path) -> None:
    target = disk_dir / "precious.db"
    target.write_bytes(os.urandom(8 << 20))
    before = digest(target)
    proc, doc = run_suite(disk_dir, workload(str(target), "trim"))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "allow_overwrite" in doc["cases"][0]["error"]
    assert digest(target) == before


def test_trimwrite_on_a_file_counts_trims_and_writes(disk_dir: Path) -> None:
    proc, doc = run_suite(disk_dir, workload(str(disk_dir / "new.dat"), "trimwrite"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = doc["cases"][0]["metrics"]
    assert metrics["trim.ios"] == metrics["write.ios"] == 8 * 16
    assert doc["cases"][0]["metrics"]["trim.bytes"] == 8 << 20


def test_verify_with_a_trim_mode_is_a_usage_error(disk_dir: Path) -> None:
    proc, _ = run_suite(disk_dir, workload(str(disk_dir / "new.dat"), "trimwrite",
                                           "    verify: crc32c\n"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "trimwrite trims them" in proc.stderr + proc.stdout
    assert "t.suite.yaml" in proc.stderr + proc.stdout


def test_fio_and_iogate_trim_as_many_blocks(disk_dir: Path) -> None:
    """Side by side on one loop device: the suite run by iogate's engine and by fio (the
    job exported to fio's options, fio's trim figures read back) trims size / bs blocks."""
    problem = _loop_problem() or (None if shutil.which("fio") else "fio is not installed")
    if problem:
        pytest.skip(problem)
    counts = {}
    with loop_device(disk_dir / "disk.img") as dev:
        for backend in ("native", "fio"):
            proc, doc = run_suite(disk_dir, workload(dev, "randtrim"), "--allow-destructive",
                                  "--backend", backend)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            metrics = doc["cases"][0]["metrics"]
            counts[backend] = (metrics["trim.ios"], metrics["trim.bytes"], metrics["errors"])
    assert counts["native"] == counts["fio"] == (8 * 16, 8 << 20, 0)
