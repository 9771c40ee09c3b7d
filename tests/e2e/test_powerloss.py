"""Power-loss verification for real: a verified write workload with ``verify_state`` records
its completed writes and syncs, then ``iogate verify`` reads the target back after the
damage and tells blocks lost after a completed sync (exit 3) from blocks not yet durable
(allowed), on the FUSE fault filesystem dropping writes, an ext4 loop mount shut down
without flushing its log, and a run killed with SIGKILL."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.faults import FaultFS, require_root

IOGATE = [sys.executable, "-m", "iogate"]
BS = 4096


def suite_text(target: Path, state: Path, *, blocks: int, extra: str = "",
               rw: str = "write", every: int | None = 16) -> str:
    syncs = f"    fdatasync: {every}\n" if every else ""
    return f"""\
suite: powerloss
workloads:
  - name: w
    filename: {target}
    allow_overwrite: true
    size: {blocks * BS}
    bs: 4k
    rw: {rw}
    verify: crc32c
{syncs}    verify_state: {state}
{extra}"""


def iogate(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IOGATE, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def verify(suite: Path, directory: Path, *extra: str
           ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = directory / "verify.json"
    with contextlib.suppress(FileNotFoundError):
        out.unlink()
    proc = iogate("verify", str(suite), "--json", str(out), *extra)
    doc = json.loads(out.read_text()) if out.exists() else {}
    return proc, doc


def case_of(doc: dict[str, Any]) -> dict[str, Any]:
    (case,) = doc["cases"]
    return case


def dropped_run(tmp_path: Path, blocks: int, dropped_from: int, extra: str = "",
                every: int | None = 16
                ) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str],
                           dict[str, Any], int]:
    """A sequential write of ``blocks`` blocks through the fault filesystem, an fdatasync
    after every 16th, with every write from number ``dropped_from`` on dropped (claimed,
    not done); then the check. The run, the check, its document, the writes dropped."""
    with FaultFS(base=tmp_path) as fs:
        # Made beside the mount, so that no write through it is numbered before the run's.
        (fs.backing / "t.data").write_bytes(bytes(blocks * BS))
        suite = tmp_path / "pl.suite.yaml"
        suite.write_text(suite_text(fs.path / "t.data", tmp_path / "state.bin",
                                    blocks=blocks, every=every,
                                    extra="    ioengine: psync\n" + extra))
        fs.control(mode="drop", op="write", after=dropped_from)
        run = iogate("run", str(suite))
        dropped = int(fs.state()["faulted"])
        fs.control(mode="none")
        proc, doc = verify(suite, tmp_path)
    return run, proc, doc, dropped


def test_writes_the_fault_filesystem_dropped_after_a_sync_are_lost(tmp_path: Path) -> None:
    blocks, dropped_from = 256, 100
    run, proc, doc, dropped = dropped_run(tmp_path, blocks, dropped_from)
    assert dropped == blocks - dropped_from
    # The run's own read-back already sees them gone.
    assert run.returncode != 0, run.stdout
    assert "lost" in run.stdout + run.stderr, run.stdout
    assert proc.returncode == 3, proc.stdout + proc.stderr
    m = case_of(doc)["metrics"]
    # Every 16th write was followed by an fdatasync: all 256 writes are covered, so each
    # dropped block is a block lost after a completed sync, and the others are intact.
    assert m["powerloss.writes"] == blocks
    assert m["powerloss.syncs"] == blocks // 16
    assert m["powerloss.lost"] == blocks - dropped_from
    assert m["powerloss.intact"] == dropped_from
    assert m["powerloss.not_durable"] == m["powerloss.torn"] == m["powerloss.misdirected"] == 0
    first = case_of(doc)["offenders"][0]
    assert first["kind"] == "lost"
    assert first["offset"] == dropped_from * BS
    assert f"lost write at offset {dropped_from * BS}" in proc.stdout
    assert case_of(doc)["complete"] is True


def test_writes_dropped_after_the_last_sync_are_only_not_yet_durable(tmp_path: Path) -> None:
    # 250 writes with an fdatasync after every 16th: the last sync follows write 240, so
    # writes 240..249 were never promised; the last five of them are dropped.
    _, proc, doc, dropped = dropped_run(tmp_path, 250, 245)
    assert dropped == 5
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = case_of(doc)["metrics"]
    assert m["powerloss.intact"] == 240
    assert m["powerloss.lost"] == 0
    assert m["powerloss.not_durable"] == 10
    assert m["powerloss.not_durable_new"] == 5


def test_with_o_dsync_every_completed_write_is_promised(tmp_path: Path) -> None:
    # No fdatasync at all: the files are opened O_DSYNC, so each write that completed was
    # durable, and the dropped ones are lost, not merely not yet durable.
    _, proc, doc, dropped = dropped_run(tmp_path, 64, 40, extra="    sync: dsync\n",
                                        every=None)
    assert dropped == 24
    assert proc.returncode == 3, proc.stdout + proc.stderr
    m = case_of(doc)["metrics"]
    assert m["powerloss.syncs"] == 0
    assert m["powerloss.writes"] == 64
    assert m["powerloss.lost"] == 24
    assert m["powerloss.intact"] == 40
    assert m["powerloss.not_durable"] == 0


@contextlib.contextmanager
def ext4_loop(directory: Path, size_mb: int = 64) -> Iterator[Path]:
    """An ext4 filesystem on a loop device, mounted; its mount point."""
    require_root()
    for tool in ("losetup", "mkfs.ext4", "xfs_io"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (bash scripts/setup.sh test installs it)")
    image, mnt = directory / "ext4.img", directory / "mnt"
    mnt.mkdir()
    with open(image, "wb") as f:
        f.truncate(size_mb << 20)
    dev = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                         text=True, check=True).stdout.strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", dev], check=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        try:
            yield mnt
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def remount(mnt: Path) -> None:
    dev = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mnt)], capture_output=True,
                         text=True, check=True).stdout.strip()
    subprocess.run(["umount", str(mnt)], check=True)
    subprocess.run(["mount", dev, str(mnt)], check=True)  # the ext4 journal replays


def syncs_recorded(state: Path) -> int:
    """The sync records a state file holds so far (vstate.h: 24-byte records after the
    header, whose length is at byte 12; the type at byte 4 of each, 2 for a sync)."""
    data = state.read_bytes() if state.exists() else b""
    if len(data) < 16:
        return 0
    start = int.from_bytes(data[12:16], "little")
    return sum(1 for at in range(start + 4, len(data), 24) if data[at] == 2)


def wait_for_syncs(state: Path, proc: subprocess.Popen[str], syncs: int) -> None:
    """Until the state file holds at least ``syncs`` sync records; the run (time based, far
    longer than that takes on any machine) ending first is a failure. No deadline of its
    own: a slow machine only waits longer."""
    while syncs_recorded(state) < syncs:
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {syncs} syncs: {proc.communicate()}")
        time.sleep(0.05)


def test_ext4_shut_down_without_its_log_keeps_every_synced_block(tmp_path: Path) -> None:
    with ext4_loop(tmp_path) as mnt:
        state = tmp_path / "state.bin"  # on another filesystem: it outlives the shutdown
        suite = tmp_path / "pl.suite.yaml"
        # Buffered writes: what no fdatasync covered is still in the page cache when the
        # filesystem stops, and is gone after the remount. Paced, so that the shutdown
        # mostly falls between syncs rather than inside one.
        suite.write_text(suite_text(mnt / "t.data", state, blocks=2048, rw="randwrite",
                                    every=64,
                                    extra="    ioengine: io_uring\n    iodepth: 4\n"
                                          "    rate_iops: 4000\n"
                                          "    time_based: true\n    runtime: 15s\n"))
        proc = subprocess.Popen([*IOGATE, "run", str(suite)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        try:
            wait_for_syncs(state, proc, 10)
            subprocess.run(["xfs_io", "-x", "-c", "shutdown", str(mnt)], check=True)
            out, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode != 0, out  # every I/O after the shutdown failed
        remount(mnt)
        result, doc = verify(suite, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    m = case_of(doc)["metrics"]
    assert m["powerloss.lost"] == m["powerloss.torn"] == m["powerloss.misdirected"] == 0
    assert m["powerloss.read_errors"] == 0
    assert m["powerloss.syncs"] >= 10
    assert m["powerloss.intact"] > 0
    assert m["powerloss.blocks"] == m["powerloss.intact"] + m["powerloss.not_durable"]


def test_a_run_killed_with_sigkill_leaves_a_state_file_that_checks(tmp_path: Path) -> None:
    target, state = tmp_path / "t.data", tmp_path / "state.bin"
    suite = tmp_path / "pl.suite.yaml"
    suite.write_text(suite_text(target, state, blocks=2048, rw="randwrite",
                                extra="    ioengine: io_uring\n    iodepth: 8\n"
                                      "    time_based: true\n    runtime: 60s\n"))
    proc = subprocess.Popen([*IOGATE, "run", str(suite)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for_syncs(state, proc, 20)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner, its fork server and the engine
        proc.wait()
    result, doc = verify(suite, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    case = case_of(doc)
    assert case["complete"] is False
    assert "did not close it" in result.stdout
    m = case["metrics"]
    assert m["powerloss.lost"] == m["powerloss.torn"] == m["powerloss.misdirected"] == 0
    assert m["powerloss.syncs"] >= 20
    assert m["powerloss.intact"] > 0


@pytest.fixture
def clean_run(tmp_path: Path) -> tuple[Path, Path]:
    """A suite that ran to its end on a plain file: its path and its state file's."""
    state = tmp_path / "state.bin"
    suite = tmp_path / "pl.suite.yaml"
    suite.write_text(suite_text(tmp_path / "t.data", state, blocks=64,
                                extra="    ioengine: psync\n"))
    run = iogate("run", str(suite))
    assert run.returncode == 0, run.stdout + run.stderr
    return suite, state


def test_a_clean_run_checks_intact_and_complete(clean_run: tuple[Path, Path]) -> None:
    suite, _ = clean_run
    proc, doc = verify(suite, suite.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = case_of(doc)
    assert case["complete"] is True
    assert case["ignored_bytes"] == 0
    assert case["metrics"]["powerloss.intact"] == case["metrics"]["powerloss.blocks"] == 64
    assert case["metrics"]["powerloss.syncs"] == 4


def test_a_state_file_cut_inside_a_record_is_read_up_to_it(clean_run: tuple[Path, Path]
                                                            ) -> None:
    suite, state = clean_run
    data = state.read_bytes()
    state.write_bytes(data[:-30])  # the end record and part of the one before
    proc, doc = verify(suite, suite.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    case = case_of(doc)
    assert case["complete"] is False
    assert case["ignored_bytes"] == 24 - 6
    assert "bytes after its last whole record ignored" in proc.stdout


@pytest.mark.parametrize(("damage", "words"), [
    (lambda d: b"", "is empty"),
    (lambda d: b"#!/bin/sh\n" + d[10:], "is not a verify state file"),
    (lambda d: d[:20] + bytes([d[20] ^ 1]) + d[21:], "its header does not match its checksum"),
    (lambda d: d[:40], "it ends inside its header"),
], ids=["empty", "not-a-state-file", "header-bit-flip", "cut-in-header"])
def test_a_damaged_state_file_is_a_clear_error(clean_run: tuple[Path, Path], damage: Any,
                                               words: str) -> None:
    suite, state = clean_run
    state.write_bytes(damage(state.read_bytes()))
    proc, doc = verify(suite, suite.parent)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert words in proc.stdout
    assert str(state) in proc.stdout
    assert words in case_of(doc)["error"]


def test_a_damaged_record_before_a_durable_point_is_an_error(clean_run: tuple[Path, Path]
                                                             ) -> None:
    suite, state = clean_run
    data = bytearray(state.read_bytes())
    header = int.from_bytes(data[12:16], "little")
    data[header + 16] ^= 0x40  # the first write record's sequence number
    state.write_bytes(bytes(data))
    proc, _ = verify(suite, suite.parent)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"the record at byte {header} does not check, although the file was made " \
           "durable up to byte" in proc.stdout


def test_a_missing_state_file_says_which_run_writes_it(tmp_path: Path) -> None:
    suite = tmp_path / "pl.suite.yaml"
    suite.write_text(suite_text(tmp_path / "t.data", tmp_path / "never.bin", blocks=64))
    proc, _ = verify(suite, tmp_path)
    assert proc.returncode == 2
    assert "never.bin: no such file: was the run that writes it started with this " \
           "verify_state?" in proc.stdout


def test_a_state_file_checked_against_other_files_is_refused(clean_run: tuple[Path, Path]
                                                             ) -> None:
    suite, _ = clean_run
    other = suite.parent / "other.data"
    other.write_bytes(bytes(64 * BS))
    proc, _ = verify(suite, suite.parent, "--set", f"filename={other}")
    assert proc.returncode == 2, proc.stdout
    assert "was written for 1 file(s) (the first " in proc.stdout
    assert str(other) in proc.stdout
    assert "give its new name with --filename" in proc.stdout
    # --filename names the target anew (a device renamed after the cut): it is read, and
    # a wrong one holds none of the run's blocks.
    proc, doc = verify(suite, suite.parent, "--filename", str(other))
    assert proc.returncode == 3, proc.stdout
    assert case_of(doc)["metrics"]["powerloss.lost"] == 64


def test_a_block_rewritten_behind_the_runs_back_is_found(clean_run: tuple[Path, Path]
                                                         ) -> None:
    suite, _ = clean_run
    target = suite.parent / "t.data"
    with open(target, "r+b") as f:  # block 5 goes back to zeros; block 9 gets block 8
        f.seek(5 * BS)
        f.write(bytes(BS))
        f.seek(8 * BS)
        block8 = f.read(BS)
        f.seek(9 * BS)
        f.write(block8)
    proc, doc = verify(suite, suite.parent)
    assert proc.returncode == 3
    m = case_of(doc)["metrics"]
    assert m["powerloss.lost"] == 1
    assert m["powerloss.misdirected"] == 1
    assert m["powerloss.intact"] == 62
    kinds = [(o["kind"], o["offset"]) for o in case_of(doc)["offenders"]]
    assert kinds == [("lost", 5 * BS), ("misdirected", 9 * BS)]


def test_the_state_file_is_replaced_never_written_through_a_target(tmp_path: Path) -> None:
    target = tmp_path / "t.data"
    suite = tmp_path / "pl.suite.yaml"
    suite.write_text(suite_text(target, target, blocks=64, extra="    ioengine: psync\n"))
    target.write_bytes(b"user data" * 1000)
    proc = iogate("run", str(suite))
    # refused before anything runs: the state file would replace the target
    assert proc.returncode == 2, proc.stdout + proc.stderr
    # (wrapped to a log's width: the words in order)
    assert "is also the target of pl.suite.yaml::w" in " ".join(proc.stderr.split())
    assert target.read_bytes() == b"user data" * 1000


def validate(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "v.suite.yaml"
    suite.write_text(text)
    return iogate("validate", str(suite))


@pytest.mark.parametrize(("keys", "words"), [
    ("    filename: t.data\n", ":7:5: workloads[0].verify_state: verify_state records the "
                              "writes that verify checks: it needs verify, e.g. 'verify: "
                              "crc32c'"),
    ("    verify: crc32c\n", "verify_state needs a filename: the blocks are checked on "
                            "that target after a crash"),
], ids=["without-verify", "without-filename"])
def test_verify_state_needs_verify_and_a_named_target(tmp_path: Path, keys: str,
                                                       words: str) -> None:
    proc = validate(tmp_path, "suite: v\nworkloads:\n  - name: w\n    size: 1m\n"
                              f"    rw: write\n{keys}    verify_state: s.bin\n")
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr, proc.stderr


def test_each_sweep_point_needs_its_own_state_file(tmp_path: Path) -> None:
    text = """\
suite: v
workloads:
  - name: w
    filename: t.data
    size: 1m
    rw: write
    verify: crc32c
    verify_state: {state}
    sweep: {{bs: [4k, 8k]}}
"""
    proc = validate(tmp_path, text.format(state="s.bin"))
    assert proc.returncode == 2
    assert "'s.bin' is also the state file of 'w[bs:4k]'" in proc.stderr
    proc = validate(tmp_path, text.format(state="s-${bs}.bin"))
    assert proc.returncode == 0, proc.stderr


def test_verify_state_is_not_a_default(tmp_path: Path) -> None:
    proc = validate(tmp_path, """\
suite: v
defaults:
  verify_state: s.bin
workloads:
  - name: w
    filename: t.data
    size: 1m
    rw: write
""")
    assert proc.returncode == 2
    assert "verify_state" in proc.stderr


@pytest.mark.parametrize(("keys", "words"), [
    ("    rw: randread\n    sync: dsync\n", "sync opens the files for durable writes, but "
                                            "randread never writes"),
    ("    rw: write\n    ioengine: mmap\n    sync: sync\n", "mmap writes reach the file through "
                                                           "memory, where O_SYNC has no effect"),
    ("    rw: write\n    sync: fua\n", "sync"),
], ids=["never-writes", "mmap", "unknown-mode"])
def test_sync_is_refused_where_it_cannot_work(tmp_path: Path, keys: str, words: str) -> None:
    proc = validate(tmp_path, f"suite: v\nworkloads:\n  - name: w\n    filename: t.data\n"
                              f"    size: 1m\n{keys}")
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr, proc.stderr
