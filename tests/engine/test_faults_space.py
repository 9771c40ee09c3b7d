"""Running out of room: a full filesystem (ENOSPC, a small tmpfs) and a file size limit
(EFBIG, RLIMIT_FSIZE as set by `ulimit -f`), during the run and during layout.

Writes past the limit are errors with that errno and the offset where room ran out; the
writes before it are counted; the process carries on and the run ends normally. A job that
means to fill the filesystem (fill_device) ends there instead, with no error: the suite key,
run through the CLI, sizes itself to the free space and reads back what it wrote.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.test_cli import iogate
from tests.faults import require_root, run_python, tmpfs

from iogate.engine.session import run
from iogate.job import JobSpec

BS = 64 << 10
ROOM = 4 << 20  # the tmpfs size and the file size limit
SIZE = 2 * ROOM  # what the jobs try to write

ENGINES = [pytest.param("psync", 1, id="psync"),
           pytest.param("io_uring", 8, id="io_uring", marks=pytest.mark.needs_uring),
           pytest.param("libaio", 8, id="libaio")]


def spec(path: Path, engine: str, iodepth: int, **extra: Any) -> JobSpec:
    return JobSpec(engine=engine, rw="write", bs_read=BS, bs_write=BS, iodepth=iodepth,
                   numjobs=1, size=SIZE, offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
                   direct=False, rwmixread=100, filename=str(path), **extra)


@pytest.mark.parametrize(("engine", "iodepth"), ENGINES)
def test_a_full_filesystem_fails_the_writes_past_it(engine, iodepth):
    with tmpfs(ROOM) as d:
        path = d / "data"
        path.touch()  # empty, and not laid out: the run itself fills the filesystem
        write = run([spec(path, engine, iodepth, no_layout=True)]).jobs[0].write
        size = path.stat().st_size
    assert write.first_errno == errno.ENOSPC
    assert write.ios + write.errors == SIZE // BS
    assert write.bytes == write.ios * BS == size  # what was counted is what landed
    assert ROOM - 8 * BS <= size <= ROOM
    assert write.first_error_offset == size  # sequential: the first write that found no room


@pytest.mark.parametrize(("engine", "iodepth"), ENGINES)
def test_a_filling_job_ends_at_the_full_filesystem_without_an_error(engine, iodepth):
    with tmpfs(ROOM) as d:
        path = d / "data"
        path.touch()
        write = run([spec(path, engine, iodepth, no_layout=True, fill=True)]).jobs[0].write
        size = path.stat().st_size
    # the writes that found no room end the run: none is an error, none is counted
    assert (write.errors, write.first_errno) == (0, 0)
    assert write.bytes == write.ios * BS == size
    assert ROOM - 8 * BS <= size <= ROOM


FILL_SUITE = """\
suite: fill
workloads:
  - name: fill
    filename: {path}
    rw: write
    bs: 64KiB
    ioengine: {engine}
    iodepth: {iodepth}
    fill_device: true
    verify: crc32c
    expect:
      errors: "== 0"
"""


@pytest.mark.parametrize(("engine", "iodepth"), ENGINES)
def test_fill_device_writes_the_free_space_and_verifies_it(tmp_path, engine, iodepth):
    suite = tmp_path / "fill.suite.yaml"
    with tmpfs(ROOM) as d:
        (d / "other").write_bytes(b"x" * (1 << 20))  # the free space is what is left
        suite.write_text(FILL_SUITE.format(path=d / "data", engine=engine, iodepth=iodepth))
        proc = iogate("run", str(suite), "--json", str(tmp_path / "r.json"))
        size = (d / "data").stat().st_size
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (case,) = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["outcome"] == "passed"
    m = case["metrics"]
    assert m["write.bytes"] == size == m["verify.blocks"] * BS
    assert ROOM - (1 << 20) - 8 * BS <= size <= ROOM - (1 << 20)
    assert m["verify.failures"] == 0


def test_fill_device_refuses_a_block_device(tmp_path):
    require_root()
    node = tmp_path / "disk"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 250))  # never opened
    suite = tmp_path / "fill.suite.yaml"
    suite.write_text(FILL_SUITE.format(path=node, engine="psync", iodepth=1))
    # permitted to write it, the run refuses fill_device before any I/O
    proc = iogate("run", str(suite), "--allow-destructive")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "is a block device, whose size is known: drop fill_device" in \
        " ".join((proc.stdout + proc.stderr).split())


def test_a_full_filesystem_fails_the_layout():
    with tmpfs(ROOM) as d:
        path = d / "data"
        write = run([spec(path, "psync", 1, write_layout="data")]).jobs[0].write
        size = path.stat().st_size
    # one layout error, where the file stopped growing, and no run after it
    assert (write.errors, write.first_errno, write.ios) == (1, errno.ENOSPC, 0)
    assert write.first_error_offset == size
    assert ROOM - (1 << 20) <= size <= ROOM


@pytest.mark.parametrize("layout", ["allocate", "posix", "keep_size"])
def test_a_full_filesystem_fails_the_allocation(layout):
    # a job that only writes has its blocks allocated first (fio's fallocate): no room for
    # them is one error of the layout, at the start of what was to be allocated
    with tmpfs(ROOM) as d:
        path = d / "data"
        write = run([spec(path, "psync", 1, write_layout=layout)]).jobs[0].write
    assert (write.errors, write.first_errno, write.ios) == (1, errno.ENOSPC, 0)
    assert write.first_error_offset == 0


# The limit applies to the child only; Python ignores SIGXFSZ, and so does limit_file_size.
EFBIG_CHILD = """
import json, sys
from iogate.engine.session import run
from iogate.job import JobSpec
spec = JobSpec(engine=sys.argv[2], rw="write", bs_read=65536, bs_write=65536,
               iodepth=int(sys.argv[3]), numjobs=1, size=int(sys.argv[4]), offset=0,
               runtime_ns=0, ramp_ns=0, time_based=False, direct=False, rwmixread=100,
               filename=sys.argv[1], no_layout=sys.argv[5] == "run", write_layout="data")
write = run([spec]).jobs[0].write
print(json.dumps({"ios": write.ios, "bytes": write.bytes, "errors": write.errors,
                  "first_errno": write.first_errno,
                  "first_error_offset": write.first_error_offset}))
"""


@pytest.mark.parametrize("phase", ["run", "layout"])
@pytest.mark.parametrize(("engine", "iodepth"), ENGINES)
def test_a_file_size_limit_fails_the_writes_past_it(tmp_path, engine, iodepth, phase):
    path = tmp_path / "data"
    path.touch()
    done = run_python(EFBIG_CHILD, str(path), engine, str(iodepth), str(SIZE), phase,
                      fsize=ROOM)
    write = json.loads(done.stdout)  # the child exited normally (run_python checks)
    assert path.stat().st_size == ROOM
    assert write["first_errno"] == errno.EFBIG
    assert write["first_error_offset"] == ROOM
    if phase == "layout":
        assert (write["errors"], write["ios"]) == (1, 0)
    else:
        assert write["ios"] == ROOM // BS
        assert write["errors"] == (SIZE - ROOM) // BS
        assert write["bytes"] == ROOM
