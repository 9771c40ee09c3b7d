"""Targets iogate must not destroy: each refusal provoked for real, and every protected byte
checked before and after (a hash of the file or device)."""

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

from iogate import ownership

IOGATE = [sys.executable, "-m", "iogate"]


def digest(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def head_digest(path: Path | str, length: int) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read(length)).hexdigest()


def run_suite(directory: Path, body: str, *args: str) -> tuple[subprocess.CompletedProcess,
                                                              dict]:
    (directory / "t.suite.yaml").write_text("suite: t\nworkloads:\n" + body)
    proc = subprocess.run([*IOGATE, "run", "t.suite.yaml", "--json", "r.json", *args],
                          cwd=directory, capture_output=True, text=True, timeout=300)
    doc = json.loads((directory / "r.json").read_text()) if (directory / "r.json").exists() \
        else {}
    return proc, doc


def workload(target: str, rw: str = "write", extra: str = "") -> str:
    return (f"  - name: w\n    ioengine: psync\n    rw: {rw}\n    size: 1MiB\n"
            f"    filename: {target}\n{extra}")


def user_file(path: Path, size: int = 1 << 20) -> str:
    path.write_bytes(os.urandom(size))
    return digest(path)


def owned(path: Path | str) -> bool:
    """Whether iogate's ledger (this test session's, see conftest.py) claims the file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return ownership.owns(fd)
    finally:
        os.close(fd)


def test_an_existing_file_is_not_overwritten(disk_dir: Path) -> None:
    target = disk_dir / "precious.db"
    before = user_file(target)
    proc, doc = run_suite(disk_dir, workload(str(target)))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    [case] = doc["cases"]
    assert case["outcome"] == "error"
    assert "an existing file iogate did not create" in case["error"]
    assert "allow_overwrite: true" in case["error"]
    assert digest(target) == before


@pytest.mark.parametrize("rw", ["write", "read"])
def test_a_missing_device_name_never_becomes_a_file_under_dev(disk_dir: Path, rw: str) -> None:
    # A mistyped device (fio's examples name /dev/nvme0n1): creating it would lay out a
    # regular file in /dev, which is memory, as large as the job asks.
    missing = f"/dev/iogate-no-such-device-{os.getpid()}"
    link = disk_dir / "dev-link"
    link.symlink_to(missing + "-via-link")  # through a symbolic link as well
    for target in (missing, str(link)):
        proc, doc = run_suite(disk_dir, workload(target, rw))
        assert proc.returncode == 3, proc.stdout + proc.stderr
        [case] = doc["cases"]
        assert "no such device; iogate never creates a regular file under /dev" \
            in case["error"]
    assert not os.path.lexists(missing)
    assert not os.path.lexists(missing + "-via-link")


def test_a_precondition_that_writes_counts_as_writing(disk_dir: Path) -> None:
    target = disk_dir / "precious.db"
    before = user_file(target)
    proc, _ = run_suite(disk_dir, workload(str(target), "randread",
                                           "    precondition:\n      - rw: write\n"))
    assert proc.returncode == 3
    assert digest(target) == before


def test_allow_overwrite_writes_it(disk_dir: Path) -> None:
    target = disk_dir / "scratch.img"
    before = user_file(target)
    proc, _ = run_suite(disk_dir, workload(str(target), extra="    allow_overwrite: true\n"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert digest(target) != before


def test_reading_an_existing_file_never_changes_it(disk_dir: Path) -> None:
    target = disk_dir / "data.bin"
    before = user_file(target)
    mtime = target.stat().st_mtime_ns
    proc, _ = run_suite(disk_dir, workload(str(target), "randread"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert digest(target) == before
    assert target.stat().st_mtime_ns == mtime
    assert not owned(target)


def test_a_short_existing_file_is_not_extended_for_reading(disk_dir: Path) -> None:
    target = disk_dir / "short.bin"
    before = user_file(target, 4096)
    proc, doc = run_suite(disk_dir, workload(str(target), "read"))
    assert proc.returncode == 3
    assert "iogate will not extend it" in doc["cases"][0]["error"]
    assert digest(target) == before
    assert target.stat().st_size == 4096


def test_files_iogate_created_are_recorded_and_may_be_rewritten(disk_dir: Path) -> None:
    target = disk_dir / "fresh.data"
    proc, _ = run_suite(disk_dir, workload(str(target)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert owned(target)
    # recorded in the ledger, not on or beside the file
    assert not os.path.exists(str(target) + ".iogate")
    assert "user.iogate" not in os.listxattr(target)
    again, _ = run_suite(disk_dir, workload(str(target), "randwrite"))
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_symlink_out_of_target_root_is_refused(disk_dir: Path) -> None:
    outside = disk_dir / "outside"
    outside.mkdir()
    root = disk_dir / "root"
    root.mkdir()
    (root / "link").symlink_to(outside / "victim.data")
    proc, doc = run_suite(disk_dir, workload(str(root / "link"),
                                             extra=f"    target_root: {root}\n"))
    assert proc.returncode == 3
    assert "outside target_root" in doc["cases"][0]["error"]
    assert not (outside / "victim.data").exists()


def test_directories_and_fifos_are_refused(disk_dir: Path) -> None:
    fifo = disk_dir / "pipe"
    os.mkfifo(fifo)
    for target in (disk_dir, fifo):
        proc, doc = run_suite(disk_dir, workload(str(target), "read"))
        assert proc.returncode == 3, proc.stdout + proc.stderr
        assert "not a regular file or block device" in doc["cases"][0]["error"]


# -- block devices: loop devices over image files --------------------------------------------

def _can_loop() -> bool:
    return (os.geteuid() == 0 and shutil.which("losetup") is not None
            and os.path.exists("/dev/loop-control"))


needs_loop = pytest.mark.skipif(not _can_loop(), reason="needs root and loop devices")


@contextlib.contextmanager
def loop_device(image: Path, size: int = 32 << 20) -> Iterator[str]:
    if not image.exists():  # a blank disk, unless the test prepared the image
        with open(image, "wb") as f:
            f.truncate(size)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


@needs_loop
def test_a_block_device_needs_allow_destructive(disk_dir: Path) -> None:
    with loop_device(disk_dir / "disk.img") as dev:
        before = digest(dev)
        proc, doc = run_suite(disk_dir, workload(dev))
        assert proc.returncode == 2, proc.stdout + proc.stderr  # a usage error, nothing ran
        assert "nothing ran: these cases would write a block device, which needs " \
            "--allow-destructive\n" in proc.stderr
        assert f"t.suite.yaml::w: {dev} (write): a block device" in proc.stderr
        assert doc == {}
        assert digest(dev) == before
        # reading it is fine without the flag
        read, _ = run_suite(disk_dir, workload(dev, "randread"))
        assert read.returncode == 0, read.stdout + read.stderr
        assert digest(dev) == before
        # a blank device with the flag is written
        ok, _ = run_suite(disk_dir, workload(dev), "--allow-destructive")
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert digest(dev) != before


@needs_loop
def test_every_unpermitted_write_is_refused_before_any_case_runs(disk_dir: Path) -> None:
    # Reads first, then writes, as a suite is often written: no read case runs (minutes on a
    # real device) before the writes are refused, and every write case is named at once.
    body = "".join(
        f"  - name: {name}\n    ioengine: psync\n    rw: {rw}\n    size: 1MiB\n"
        f"    filename: {{dev}}\n" for name, rw in (("seqread", "read"),
                                                  ("randwrite", "randwrite"),
                                                  ("seqwrite", "write"),
                                                  ("trim", "trim")))
    with loop_device(disk_dir / "a.img") as dev, loop_device(disk_dir / "b.img") as other:
        before = digest(dev)
        proc, doc = run_suite(disk_dir, body.format(dev=dev))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        for name, rw in (("randwrite", "randwrite"), ("seqwrite", "write"), ("trim", "trim")):
            assert f"t.suite.yaml::{name}: {dev} ({rw}): a block device" in proc.stderr
        assert "seqread" not in proc.stderr  # reading needs no permission
        assert ": passed" not in proc.stderr  # no case ran
        assert doc == {}
        # a device not among those named is listed the same way, and the flag alone beside
        # the name does not widen it
        for flags in ([f"--allow-destructive={other}"],
                      ["--allow-destructive", f"--allow-destructive={other}"]):
            proc, doc = run_suite(disk_dir, body.format(dev=dev), *flags)
            assert proc.returncode == 2, proc.stdout + proc.stderr
            assert f"t.suite.yaml::seqwrite: {dev} (write): not among the devices named " \
                f"with --allow-destructive= ({other})" in proc.stderr
            assert doc == {}
        assert digest(dev) == before
        # named, it runs: all four cases
        proc, doc = run_suite(disk_dir, body.format(dev=dev), f"--allow-destructive={dev}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert [c["outcome"] for c in doc["cases"]] == ["passed"] * 4


@needs_loop
def test_pytest_refuses_an_unpermitted_device_write_as_a_usage_error(
        disk_dir: Path, pytester: pytest.Pytester) -> None:
    with loop_device(disk_dir / "a.img") as dev:
        before = digest(dev)
        pytester.makefile(".suite.yaml", t="suite: t\nworkloads:\n" + workload(dev))
        result = pytester.runpytest("-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*which needs --iogate-allow-destructive",
                                     f"*t.suite.yaml::w: {dev} (write): a block device*"])
        assert digest(dev) == before


@needs_loop
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_a_device_with_a_filesystem_is_refused_even_with_the_flag(disk_dir: Path) -> None:
    with loop_device(disk_dir / "disk.img") as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        before = digest(dev)
        alias = disk_dir / "alias"
        alias.symlink_to(dev)
        for target in (dev, str(alias)):
            proc, doc = run_suite(disk_dir, workload(target), "--allow-destructive")
            assert proc.returncode == 3, proc.stdout + proc.stderr
            assert "ext4 signature" in doc["cases"][0]["error"]
        # naming it by an id that is not this device's does not help: a name that is no
        # device is a usage error, and a plain name lifts no signature check
        proc, doc = run_suite(disk_dir, workload(dev),
                              "--allow-destructive=/dev/disk/by-id/not-this-disk")
        assert proc.returncode == 2
        assert "--allow-destructive=/dev/disk/by-id/not-this-disk: does not exist" \
            in proc.stderr
        proc, doc = run_suite(disk_dir, workload(dev), f"--allow-destructive={dev}")
        assert proc.returncode == 3
        assert "ext4 signature" in doc["cases"][0]["error"]
        assert digest(dev) == before


@needs_loop
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_a_mounted_device_is_refused_through_any_alias(disk_dir: Path) -> None:
    with loop_device(disk_dir / "disk.img") as dev:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        mnt = disk_dir / "mnt"
        mnt.mkdir()
        mounted = subprocess.run(["mount", dev, str(mnt)], capture_output=True, text=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount here: {mounted.stderr.strip()}")
        try:
            alias = disk_dir / "alias"
            alias.symlink_to(dev)
            for target in (dev, str(alias)):
                proc, doc = run_suite(disk_dir, workload(target), "--allow-destructive")
                assert proc.returncode == 3, proc.stdout + proc.stderr
                assert "mounted or in use" in doc["cases"][0]["error"]
        finally:
            subprocess.run(["umount", str(mnt)], check=False)


def _write_mbr(image: Path, start_sector: int, sectors: int) -> None:
    """A DOS partition table with one Linux partition, written by hand (no fdisk needed)."""
    entry = bytes([0x00, 0, 0, 0, 0x83, 0, 0, 0]) + start_sector.to_bytes(4, "little") \
        + sectors.to_bytes(4, "little")
    with open(image, "r+b") as f:
        f.seek(446)
        f.write(entry)
        f.seek(510)
        f.write(b"\x55\xaa")


@needs_loop
@pytest.mark.skipif(shutil.which("partx") is None or shutil.which("mkfs.ext4") is None,
                    reason="needs partx and mkfs.ext4")
def test_a_mounted_partition_protects_its_unmounted_disk(disk_dir: Path) -> None:
    image = disk_dir / "disk.img"
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    _write_mbr(image, 2048, (64 << 20) // 512 - 2048)
    with loop_device(image, 64 << 20) as dev:
        added = subprocess.run(["partx", "-a", dev], capture_output=True, text=True)
        part = f"{dev}p1"
        if added.returncode != 0 or not os.path.exists(part):
            pytest.skip(f"no partition device here: {added.stderr.strip()}")
        mnt = disk_dir / "mnt"
        mnt.mkdir()
        try:
            subprocess.run(["mkfs.ext4", "-q", "-F", part], check=True)
            if subprocess.run(["mount", part, str(mnt)]).returncode != 0:
                pytest.skip("cannot mount here")
            # The workload would write the first MiB: the partition table and the gap before
            # the partition, which the mounted filesystem itself never writes.
            before = head_digest(dev, 1 << 20)
            try:
                # the whole disk is not mounted, its partition is: fio's mount-table check
                # misses this; the exclusive open does not
                proc, doc = run_suite(disk_dir, workload(dev), "--allow-destructive")
                assert proc.returncode == 3, proc.stdout + proc.stderr
                assert "mounted or in use" in doc["cases"][0]["error"]
            finally:
                subprocess.run(["umount", str(mnt)], check=False)
            assert head_digest(dev, 1 << 20) == before
        finally:
            subprocess.run(["partx", "-d", dev], check=False)
