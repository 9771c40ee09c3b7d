"""``iogate init TARGET``: a starter suite that is valid, runs at once and passes on a healthy
target, reads only unless told otherwise, and never writes what a run must not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.e2e.test_safety import digest, loop_device, needs_loop, user_file

from iogate.spec import load_suite

IOGATE = [sys.executable, "-m", "iogate"]
QUICK = {"RUNTIME": "300ms", "RAMP": "0s", "SIZE": "8MiB"}


def init(directory: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*IOGATE, "init", *args], cwd=directory, capture_output=True,
                          text=True, timeout=120)


def run(directory: Path, suite: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*IOGATE, "run", suite, *args], cwd=directory, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **QUICK})


def rws(path: Path) -> list[str]:
    return [c.workload.rw for c in load_suite(path).cases]


def test_a_new_file_gets_a_suite_that_runs_and_passes(disk_dir: Path) -> None:
    proc = init(disk_dir, str(disk_dir / "scratch.data"))
    assert proc.returncode == 0, proc.stderr
    suite = disk_dir / "scratch.data.suite.yaml"
    text = suite.read_text()
    assert "# A starter suite for" in text
    assert "a file iogate creates and lays out" in text
    assert rws(suite) == ["read", "randread", "randread"]  # only reads unless told
    done = run(disk_dir, suite.name)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (disk_dir / "scratch.data").stat().st_size == 8 << 20
    # --writes adds the cases that write; they run too
    proc = init(disk_dir, str(disk_dir / "scratch.data"), "--writes", "-o", "w.suite.yaml")
    assert proc.returncode == 0, proc.stderr
    assert rws(disk_dir / "w.suite.yaml") == ["read", "randread", "randread", "randwrite",
                                              "write"]
    done = run(disk_dir, "w.suite.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_users_file_is_only_read(disk_dir: Path) -> None:
    target = disk_dir / "precious.db"
    before = user_file(target, 8 << 20)
    refused = init(disk_dir, str(target), "--writes")
    assert refused.returncode == 2
    assert "an existing file iogate did not create; a starter suite for it only reads" \
        in refused.stderr
    assert not (disk_dir / "precious.db.suite.yaml").exists()
    proc = init(disk_dir, str(target))
    assert proc.returncode == 0, proc.stderr
    text = (disk_dir / "precious.db.suite.yaml").read_text()
    assert "an existing file of 8MiB" in text
    assert "size:" not in text  # the file's own size is the region
    done = run(disk_dir, "precious.db.suite.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert digest(target) == before


def test_a_relative_file_name_is_made_absolute(disk_dir: Path) -> None:
    # the suite runs from anywhere: its target is where init was pointed
    proc = init(disk_dir, "rel.data")
    assert proc.returncode == 0, proc.stderr
    [case] = load_suite(disk_dir / "rel.data.suite.yaml").cases[:1]
    assert case.workload.filename == str(disk_dir / "rel.data")


def test_an_existing_suite_is_never_replaced(disk_dir: Path) -> None:
    out = disk_dir / "mine.suite.yaml"
    out.write_text("suite: mine\n")
    proc = init(disk_dir, str(disk_dir / "new.data"), "-o", str(out))
    assert proc.returncode == 2
    assert "exists; name another file with -o FILE" in proc.stderr
    assert out.read_text() == "suite: mine\n"


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_what_no_suite_can_use_is_refused(disk_dir: Path, kind: str) -> None:
    target = disk_dir / kind
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    proc = init(disk_dir, str(target))
    assert proc.returncode == 2
    assert "not a block device or a regular file" in proc.stderr


@needs_loop
def test_a_blank_device_and_one_carrying_data(disk_dir: Path) -> None:
    with loop_device(disk_dir / "blank.img") as blank:
        proc = init(disk_dir, blank, "--writes", "-o", "blank.suite.yaml")
        assert proc.returncode == 0, proc.stderr
        text = (disk_dir / "blank.suite.yaml").read_text()
        assert "a block device of 32MiB" in text
        assert "it carries no filesystem or partition table signature" in text
        assert "--allow-destructive" in text
        # without the flag nothing runs; with it, every case passes
        assert run(disk_dir, "blank.suite.yaml").returncode == 2
        done = run(disk_dir, "blank.suite.yaml", "--allow-destructive")
        assert done.returncode == 0, done.stdout + done.stderr
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("needs mkfs.ext4")
    with loop_device(disk_dir / "data.img") as data:
        subprocess.run(["mkfs.ext4", "-q", "-F", data], check=True)
        before = digest(data)
        refused = init(disk_dir, data, "--writes", "-o", "data.suite.yaml")
        assert refused.returncode == 2
        assert "carries data (ext4 signature)" in refused.stderr
        proc = init(disk_dir, data, "-o", "data.suite.yaml")
        assert proc.returncode == 0, proc.stderr
        assert "iogate would not write it: carries data (ext4 signature)" in \
            (disk_dir / "data.suite.yaml").read_text()
        assert rws(disk_dir / "data.suite.yaml") == ["read", "randread", "randread"]
        done = run(disk_dir, "data.suite.yaml")
        assert done.returncode == 0, done.stdout + done.stderr
        assert digest(data) == before
