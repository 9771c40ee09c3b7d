"""The fault-injection tools do what they promise: the LD_PRELOAD shim fails, shortens,
tears, drops, misdirects and stalls exactly the chosen calls of the chosen file, and faultfs
passes files through unchanged until told otherwise, then faults the chosen requests,
freezes, and vanishes when its daemon is killed."""

from __future__ import annotations

import contextlib
import errno
import json
import mmap
import os
import threading
import time
from pathlib import Path

import pytest

from tests.faults import FaultFS, build, mount_type, run_python, shim_env

BLOCK = 4096

# Runs a list of [op, path, args...] and prints each result: data read (hex), a byte count,
# [result, file position] for read/write, or the errno name of a failure.
OPS_CHILD = """
import errno, json, os, sys
fds, out = {}, []
for op, path, *a in json.loads(sys.argv[1]):
    if path not in fds:
        fds[path] = os.open(path, os.O_RDWR)
    fd = fds[path]
    try:
        if op == "pread":
            r = os.pread(fd, a[0], a[1]).hex()
        elif op == "pwrite":
            r = os.pwrite(fd, bytes.fromhex(a[0]), a[1])
        elif op == "preadv":
            b = bytearray(a[0])
            r = b[:os.preadv(fd, [b], a[1])].hex()
        elif op == "pwritev":
            r = os.pwritev(fd, [bytes.fromhex(a[0])], a[1])
        elif op == "read":
            os.lseek(fd, a[1], os.SEEK_SET)
            r = [os.read(fd, a[0]).hex(), os.lseek(fd, 0, os.SEEK_CUR)]
        elif op == "write":
            os.lseek(fd, a[1], os.SEEK_SET)
            r = [os.write(fd, bytes.fromhex(a[0])), os.lseek(fd, 0, os.SEEK_CUR)]
    except OSError as e:
        r = errno.errorcode[e.errno]
    out.append(r)
print(json.dumps(out))
"""


def shimmed(ops: list[list], **fault) -> list:
    env = {**os.environ, **shim_env(**fault)}
    return json.loads(run_python(OPS_CHILD, json.dumps(ops), env=env).stdout)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """Four blocks: block i is filled with the byte i + 1."""
    path = tmp_path / "data.bin"
    path.write_bytes(b"".join(bytes([i + 1]) * BLOCK for i in range(4)))
    return path


def block(i: int, n: int = BLOCK) -> str:
    return (bytes([i + 1]) * n).hex()


NEW = (b"\xee" * BLOCK).hex()


# -- the shim --------------------------------------------------------------------------

def test_shim_fails_exactly_the_calls_after_and_count_select(data):
    ops = [["pread", str(data), BLOCK, i * BLOCK] for i in range(4)]
    got = shimmed(ops, path_substring=data.name, op="read", mode="eio", after=1, count=2)
    assert got == [block(0), "EIO", "EIO", block(3)]


def test_shim_count_zero_faults_every_call_after(data):
    ops = [["pread", str(data), BLOCK, i * BLOCK] for i in range(4)]
    got = shimmed(ops, path_substring=data.name, op="read", mode="eio", after=2)
    assert got == [block(0), block(1), "EIO", "EIO"]


def test_shim_leaves_other_files_and_the_other_direction_alone(data, tmp_path):
    other = tmp_path / "other.bin"
    other.write_bytes(data.read_bytes())
    ops = [["pread", str(other), BLOCK, 0], ["pwrite", str(data), NEW, 0],
           ["pread", str(data), BLOCK, BLOCK]]
    got = shimmed(ops, path_substring=data.name, op="read", mode="eio")
    assert got == [block(0), BLOCK, "EIO"]
    assert data.read_bytes()[:BLOCK] == b"\xee" * BLOCK  # the write passed


def test_shim_enospc_on_writes_changes_nothing(data):
    before = data.read_bytes()
    got = shimmed([["pwrite", str(data), NEW, 0], ["write", str(data), NEW, BLOCK]],
                  path_substring=data.name, op="write", mode="enospc")
    assert got == ["ENOSPC", "ENOSPC"]
    assert data.read_bytes() == before


def test_shim_short_moves_half_and_says_so(data):
    got = shimmed([["pread", str(data), BLOCK, 0], ["preadv", str(data), BLOCK, BLOCK],
                   ["read", str(data), BLOCK, 2 * BLOCK], ["pwrite", str(data), NEW, 3 * BLOCK]],
                  path_substring=data.name, op="both", mode="short")
    half = BLOCK // 2
    assert got == [block(0, half), block(1, half), [block(2, half), 2 * BLOCK + half], half]
    assert data.read_bytes()[3 * BLOCK:] == b"\xee" * half + bytes([4]) * half


def test_shim_torn_write_reports_all_but_writes_half(data):
    got = shimmed([["pwrite", str(data), NEW, 0], ["write", str(data), NEW, BLOCK],
                   ["pwritev", str(data), NEW, 2 * BLOCK]],
                  path_substring=data.name, op="write", mode="torn")
    assert got == [BLOCK, [BLOCK, 2 * BLOCK], BLOCK]  # write() moved the position by all
    content = data.read_bytes()
    half = BLOCK // 2
    for i in range(3):
        assert content[i * BLOCK:(i + 1) * BLOCK] == b"\xee" * half + bytes([i + 1]) * half
    assert content[3 * BLOCK:] == bytes([4]) * BLOCK


def test_shim_dropped_write_reports_success_and_leaves_the_file_unchanged(data):
    before = data.read_bytes()
    got = shimmed([["pwrite", str(data), NEW, 0], ["write", str(data), NEW, BLOCK]],
                  path_substring=data.name, op="write", mode="drop")
    assert got == [BLOCK, [BLOCK, 2 * BLOCK]]
    assert data.read_bytes() == before


def test_shim_misdirected_write_lands_elsewhere(data):
    got = shimmed([["pwrite", str(data), NEW, 0]],
                  path_substring=data.name, op="write", mode="misdirect")
    assert got == [BLOCK]
    content = data.read_bytes()
    assert content[:BLOCK] == bytes([1]) * BLOCK  # where it was meant to go: untouched
    assert content[BLOCK:2 * BLOCK] == b"\xee" * BLOCK  # default shift: its own length
    got = shimmed([["pwrite", str(data), NEW, 0]], path_substring=data.name, op="write",
                  mode="misdirect", shift=3 * BLOCK)
    assert data.read_bytes()[3 * BLOCK:] == b"\xee" * BLOCK


def test_shim_misdirected_read_reads_elsewhere(data):
    got = shimmed([["pread", str(data), BLOCK, 0]], path_substring=data.name, op="read",
                  mode="misdirect", shift=2 * BLOCK)
    assert got == [block(2)]


def test_shim_stall_delays_only_the_chosen_call(data):
    code = """
import json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
times = []
for i in range(3):
    t = time.monotonic()
    os.pread(fd, 4096, 0)
    times.append(time.monotonic() - t)
print(json.dumps(times))
"""
    env = {**os.environ, **shim_env(data.name, op="read", mode="stall", after=1, count=1,
                                    stall_ms=300)}
    times = json.loads(run_python(code, str(data), env=env).stdout)
    assert times[1] >= 0.3
    assert times[0] < 0.3
    assert times[2] < 0.3


def test_shim_counts_calls_over_all_threads(data):
    code = """
import os, sys, threading
fd = os.open(sys.argv[1], os.O_RDONLY)
failed = []
def work():
    for _ in range(200):
        try:
            os.pread(fd, 512, 0)
        except OSError:
            failed.append(1)
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(len(failed))
"""
    env = {**os.environ, **shim_env(data.name, op="read", mode="eio", after=100, count=333)}
    assert int(run_python(code, str(data), env=env).stdout) == 333


def test_shim_env_rejects_unknown_modes():
    with pytest.raises(ValueError, match="mode must be one of"):
        shim_env("x", op="read", mode="explode")
    with pytest.raises(ValueError, match="op must be one of"):
        shim_env("x", op="sideways", mode="eio")


def test_shim_is_built_once_per_source(tmp_path):
    assert build("faultshim") == build("faultshim")
    assert build("faultshim").suffix == ".so"


# -- faultfs ---------------------------------------------------------------------------

@pytest.fixture
def fs():
    with FaultFS() as mounted:
        yield mounted


def test_faultfs_passes_files_through(fs):
    (fs.path / "a").write_bytes(b"written through the mount")
    assert (fs.backing / "a").read_bytes() == b"written through the mount"
    (fs.backing / "b").write_bytes(b"x" * 100_000)
    assert (fs.path / "b").read_bytes() == b"x" * 100_000
    (fs.path / "sub").mkdir()
    (fs.path / "a").rename(fs.path / "sub" / "c")
    assert sorted(p.name for p in fs.path.iterdir()) == ["b", "sub"]  # .faultfs is hidden
    assert (fs.backing / "sub" / "c").exists()
    os.truncate(fs.path / "b", 10)
    assert (fs.path / "b").stat().st_size == 10 == (fs.backing / "b").stat().st_size
    (fs.path / "sub" / "c").unlink()
    (fs.path / "sub").rmdir()
    assert os.statvfs(fs.path).f_bsize > 0
    assert fs.state() == {"mode": "none", "op": "both", "after": 0, "count": 0,
                          "stall_ms": 1000, "shift": 0, "sector": 0, "seen": 0, "faulted": 0}


def test_faultfs_opens_files_with_o_direct(fs):
    fd = os.open(fs.path / "direct", os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
    try:
        page = mmap.mmap(-1, BLOCK)  # page aligned, as O_DIRECT wants
        page.write(b"d" * BLOCK)
        assert os.pwritev(fd, [page], 0) == BLOCK
        assert os.preadv(fd, [page], 0) == BLOCK
    finally:
        os.close(fd)
    assert (fs.backing / "direct").read_bytes() == b"d" * BLOCK


def test_faultfs_faults_the_selected_requests(fs):
    (fs.backing / "f").write_bytes(b"".join(bytes([i + 1]) * BLOCK for i in range(4)))
    fs.control(mode="eio", op="read", after=1, count=2)
    fd = os.open(fs.path / "f", os.O_RDWR)
    try:
        results: list[bytes | int | None] = []
        for i in range(4):
            try:
                results.append(os.pread(fd, BLOCK, i * BLOCK))
            except OSError as err:
                results.append(err.errno)
        assert results == [bytes([1]) * BLOCK, errno.EIO, errno.EIO, bytes([4]) * BLOCK]
        assert os.pwrite(fd, b"w" * BLOCK, 0) == BLOCK  # writes are not selected
        state = fs.state()
        assert (state["mode"], state["seen"], state["faulted"]) == ("eio", 4, 2)
        fs.control(mode="enospc", op="write")
        with pytest.raises(OSError, match=os.strerror(errno.ENOSPC)) as raised:
            os.pwrite(fd, b"v" * BLOCK, 0)
        assert raised.value.errno == errno.ENOSPC
        assert (fs.backing / "f").read_bytes()[:BLOCK] == b"w" * BLOCK
        fs.control(mode="none")
        assert os.pwrite(fd, b"v" * BLOCK, 0) == BLOCK
    finally:
        os.close(fd)


def test_faultfs_short_torn_drop_and_misdirect(fs):
    (fs.backing / "f").write_bytes(bytes(4 * BLOCK))
    fd = os.open(fs.path / "f", os.O_RDWR)
    half = BLOCK // 2
    try:
        fs.control(mode="short", op="read")
        assert os.pread(fd, BLOCK, 0) == bytes(half)
        fs.control(mode="short", op="write")
        assert os.pwrite(fd, b"s" * BLOCK, 0) == half
        fs.control(mode="torn", op="write")
        assert os.pwrite(fd, b"t" * BLOCK, BLOCK) == BLOCK
        fs.control(mode="drop", op="write")
        assert os.pwrite(fd, b"d" * BLOCK, 2 * BLOCK) == BLOCK
        fs.control(mode="misdirect", op="write", shift=-3 * BLOCK)
        assert os.pwrite(fd, b"m" * half, 3 * BLOCK + half) == half
    finally:
        os.close(fd)
    content = (fs.backing / "f").read_bytes()
    assert content[:BLOCK] == b"s" * half + b"m" * half
    assert content[BLOCK:2 * BLOCK] == b"t" * half + bytes(half)
    assert content[2 * BLOCK:] == bytes(2 * BLOCK)


def test_faultfs_stale_leaves_one_sector_of_a_write_unwritten(fs):
    sector = 512
    old = bytes(range(256)) * (2 * BLOCK // 256)
    (fs.backing / "f").write_bytes(old)
    fd = os.open(fs.path / "f", os.O_RDWR)
    try:
        for n in range(BLOCK // sector):
            fs.control(mode="stale", op="write", count=1, sector=n)
            assert os.pwrite(fd, b"n" * BLOCK, BLOCK) == BLOCK  # claims all
            content = (fs.backing / "f").read_bytes()
            kept = slice(BLOCK + n * sector, BLOCK + (n + 1) * sector)
            assert content[kept] == old[kept]
            assert content[BLOCK:kept.start] + content[kept.stop:] == b"n" * (BLOCK - sector)
            assert content[:BLOCK] == old[:BLOCK]
            (fs.backing / "f").write_bytes(old)
            assert fs.state()["faulted"] == 1
        # a read in its numbering passes; a write too short to reach the sector lands whole
        fs.control(mode="stale", op="both", sector=8)
        assert os.pread(fd, BLOCK, 0) == old[:BLOCK]
        assert os.pwrite(fd, b"w" * BLOCK, 0) == BLOCK
        assert (fs.backing / "f").read_bytes()[:BLOCK] == b"w" * BLOCK
    finally:
        os.close(fd)


def test_faultfs_stall_delays_requests(fs):
    (fs.backing / "f").write_bytes(bytes(BLOCK))
    fs.control(mode="stall", op="read", count=1, stall_ms=300)
    fd = os.open(fs.path / "f", os.O_RDONLY)
    try:
        t0 = time.monotonic()
        os.pread(fd, BLOCK, 0)
        t1 = time.monotonic()
        os.pread(fd, BLOCK, 0)
        t2 = time.monotonic()
    finally:
        os.close(fd)
    assert t1 - t0 >= 0.3
    assert t2 - t1 < 0.3


def test_faultfs_rejects_a_bad_control_line(fs):
    for line in ("mode=explode", "op=sideways", "after=ten", "colour=blue", "mode"):
        with pytest.raises(OSError, match=os.strerror(errno.EINVAL)) as e:
            (fs.control_file).write_text(line)
        assert e.value.errno == errno.EINVAL
    assert fs.state()["mode"] == "none"


def test_faultfs_freeze_holds_requests_until_thaw(fs):
    (fs.backing / "f").write_bytes(b"z" * BLOCK)
    fd = os.open(fs.path / "f", os.O_RDONLY)
    got: list[bytes] = []
    try:
        fs.freeze()
        reader = threading.Thread(target=lambda: got.append(os.pread(fd, BLOCK, 0)))
        reader.start()
        reader.join(0.3)
        assert reader.is_alive()
        assert not got  # held by the frozen daemon
        fs.thaw()
        reader.join(10)
        assert got == [b"z" * BLOCK]
    finally:
        fs.thaw()
        os.close(fd)


def test_faultfs_killed_daemon_makes_the_files_vanish():
    with FaultFS() as fs:
        (fs.backing / "f").write_bytes(b"k" * BLOCK)
        fd = os.open(fs.path / "f", os.O_RDONLY)
        try:
            fs.kill()
            with pytest.raises(OSError, match=os.strerror(errno.ENOTCONN)) as e:
                os.pread(fd, BLOCK, 0)
            assert e.value.errno == errno.ENOTCONN
            with pytest.raises(OSError, match=os.strerror(errno.ENOTCONN)) as e:
                os.stat(fs.path / "f")
            assert e.value.errno == errno.ENOTCONN
        finally:
            with contextlib.suppress(OSError):  # closing flushes: ENOTCONN too
                os.close(fd)
        mountpoint = fs.path
    assert mount_type(mountpoint) is None  # unmounted after the kill
    assert not mountpoint.exists()
