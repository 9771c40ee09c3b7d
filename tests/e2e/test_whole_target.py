"""A workload without size uses its target whole, from offset to the end (fio's rule): real
files through the command line, the runner and the fio exporter and importer."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

KiB = 1024


def iogate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iogate", *args], cwd=cwd, text=True,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=600)


def suite(target: Path, extra: str = "", rw: str = "read") -> str:
    return (f"suite: whole\nworkloads:\n  - name: all\n    filename: {target}\n"
            f"    ioengine: psync\n    rw: {rw}\n    bs: 4k\n{extra}"
            f"    expect:\n      {rw}.ios: '>= 1'\n")


def test_a_read_without_size_covers_the_file_from_offset_to_its_end(disk_dir: Path) -> None:
    target = disk_dir / "existing.data"
    target.write_bytes(b"\x5a" * (192 * KiB))
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    (disk_dir / "w.suite.yaml").write_text(suite(target, "    offset: 64k\n"))
    proc = iogate("run", "w.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stderr
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["metrics"]["read.bytes"] == 128 * KiB
    assert case["metrics"]["read.ios"] == 32
    assert case["workload"]["size"] == 128 * KiB  # as run: the size it took
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


def test_without_size_the_file_must_exist(disk_dir: Path) -> None:
    missing = disk_dir / "missing.data"
    (disk_dir / "w.suite.yaml").write_text(suite(missing))
    proc = iogate("run", "w.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 3
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["outcome"] == "error"
    assert "no size given, so the workload uses the file whole, but it cannot be opened" \
        in case["error"]
    assert "give size" in case["error"]
    assert not missing.exists()


def test_without_size_an_offset_past_the_end_is_an_error(disk_dir: Path) -> None:
    target = disk_dir / "short.data"
    target.write_bytes(b"\x01" * (8 * KiB))
    (disk_dir / "w.suite.yaml").write_text(suite(target, "    offset: 8k\n"))
    proc = iogate("run", "w.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 3
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert "ends before offset 8192" in case["error"]


def test_a_job_file_without_size_imports_runs_and_exports_without_one(disk_dir: Path) -> None:
    target = disk_dir / "device-like.data"
    target.write_bytes(b"\x07" * (256 * KiB))
    (disk_dir / "whole.fio").write_text(f"[global]\nfilename={target}\nbs=4k\n"
                                        "[scan]\nrw=read\n")
    proc = iogate("run", "whole.fio", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stderr
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["metrics"]["read.bytes"] == 256 * KiB
    (disk_dir / "w.suite.yaml").write_text(suite(target))
    exported = iogate("export", "w.suite.yaml", cwd=disk_dir)
    assert exported.returncode == 0, exported.stderr
    assert "size=" not in exported.stdout
    assert f"filename={target}" in exported.stdout


def test_a_block_device_without_size_is_read_whole(disk_dir: Path) -> None:
    import os
    import shutil

    import pytest

    if os.geteuid() != 0 or shutil.which("losetup") is None \
            or not os.path.exists("/dev/loop-control"):
        pytest.skip("needs root and loop devices")
    image = disk_dir / "disk.img"
    with open(image, "wb") as f:
        f.truncate(3 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        (disk_dir / "w.suite.yaml").write_text(suite(Path(dev)).replace("bs: 4k", "bs: 64k"))
        proc = iogate("run", "w.suite.yaml", "--json", "r.json", cwd=disk_dir)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
    assert proc.returncode == 0, proc.stderr
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["metrics"]["read.bytes"] == 3 << 20
    assert case["metrics"]["read.ios"] == 48


def test_allow_file_create_false_never_makes_a_missing_target(disk_dir: Path) -> None:
    missing = disk_dir / "nvme0n1-typo"
    (disk_dir / "w.suite.yaml").write_text(suite(missing, "    size: 64k\n"
                                                          "    allow_file_create: false\n"))
    proc = iogate("run", "w.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 3
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert "does not exist, and allow_file_create is false" in case["error"]
    assert not missing.exists()
    # An existing one is used as always; fio's option imports and exports as the same key.
    missing.write_bytes(b"\1" * (64 * KiB))
    assert iogate("run", "w.suite.yaml", cwd=disk_dir).returncode == 0
    job = disk_dir / "j.fio"
    job.write_text(f"[j]\nfilename={missing}\nsize=64k\nallow_file_create=0\n")
    assert "allow_file_create: false" in iogate("import", str(job), cwd=disk_dir).stdout
    assert "allow_file_create=0" in iogate("export", "w.suite.yaml", cwd=disk_dir).stdout


def test_allow_file_create_false_without_a_filename_is_refused_at_its_key(disk_dir: Path) -> None:
    (disk_dir / "w.suite.yaml").write_text("suite: t\nworkloads:\n  - name: w\n    rw: read\n"
                                           "    size: 64k\n    allow_file_create: false\n")
    proc = iogate("validate", "w.suite.yaml", cwd=disk_dir)
    assert proc.returncode == 2
    assert "allow_file_create: false needs a filename" in proc.stderr
    assert ":6:" in proc.stderr
