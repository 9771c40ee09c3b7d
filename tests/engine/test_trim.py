"""Trims through iogate.engine.session.run on real files: randtrim punches holes and is
measured as its own direction (trim.iops, trim.clat...), trimwrite leaves every block
written and counts both directions, and every engine that does I/O trims the same way."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.engine import catalog
from iogate.engine.session import Session, run
from iogate.job import JobSpec

BS = 4096
BLOCKS = 64


def spec(path: Path, **overrides) -> JobSpec:
    base = dict(engine="psync", rw="randtrim", bs_read=BS, bs_write=BS, iodepth=1,
                numjobs=1, size=BLOCKS * BS, offset=0, filename=str(path), seed=7)
    base.update(overrides)
    return JobSpec(**base)


def data_file(path: Path) -> Path:
    path.write_bytes(os.urandom(BLOCKS * BS))
    return path


def holes(path: Path) -> list[int]:
    """The blocks of the file that are holes (no data: punched)."""
    out = []
    with open(path, "rb") as f:
        fd = f.fileno()
        for b in range(BLOCKS):
            try:
                if os.lseek(fd, b * BS, os.SEEK_DATA) >= (b + 1) * BS:
                    out.append(b)
            except OSError:  # ENXIO: no data at or after b
                out.append(b)
    return out


def test_randtrim_punches_holes_and_measures_trims(tmp_path):
    path = data_file(tmp_path / "data")
    result = run([spec(path)])
    trim = result.jobs[0].trim
    assert (trim.ios, trim.errors, trim.bytes) == (BLOCKS, 0, BLOCKS * BS)
    assert result.jobs[0].write.ios == result.jobs[0].read.ios == 0
    assert result.metric("trim.iops") > 0
    assert result.metric("trim.bw") > 0
    assert result.metric("trim.clat.p99") > 0
    assert result.metric("trim.slat.max") == 0
    assert "trim.iops" in result.metrics()
    assert "trim.clat.p99" in result.metrics()
    assert result.jobs[0].to_json()["trim"]["ios"] == BLOCKS
    assert holes(path), "randtrim left no hole in the file"
    assert path.stat().st_size == BLOCKS * BS


def test_trimwrite_leaves_every_block_written(tmp_path):
    path = data_file(tmp_path / "data")
    before = path.read_bytes()
    job = run([spec(path, rw="trimwrite")]).jobs[0]
    assert (job.trim.ios, job.trim.errors) == (BLOCKS, 0)
    assert (job.write.ios, job.write.errors) == (BLOCKS, 0)
    after = path.read_bytes()
    assert holes(path) == []
    assert len(after) == len(before)
    assert after != before
    assert b"\0" * BS not in [after[i:i + BS] for i in range(0, len(after), BS)]


@pytest.mark.parametrize("engine", [e.name for e in catalog.engines() if e.does_io])
def test_every_engine_trims_its_region(tmp_path, engine):
    path = data_file(tmp_path / "data")
    depth = min(4, catalog.get(engine).max_depth)
    job = run([spec(path, engine=engine, rw="trim", iodepth=depth)]).jobs[0]
    assert (job.trim.ios, job.trim.errors) == (BLOCKS, 0)
    assert holes(path) == list(range(BLOCKS))


def test_the_null_engine_counts_trims():
    job = run([JobSpec(engine="null", rw="randtrimwrite", size=BLOCKS * BS)]).jobs[0]
    assert (job.trim.ios, job.write.ios) == (BLOCKS, BLOCKS)


def test_progress_and_series_count_trims():
    with Session([JobSpec(engine="null", rw="trimwrite", size=BLOCKS * BS)]) as s:
        s.start()
        assert s.wait(60)
        p = s.poll()
        series = s.series(0, "trim")
    assert (p.trim_ios, p.trim_bytes) == (BLOCKS, BLOCKS * BS)
    assert p.ios == (0, BLOCKS)
    assert sum(i.ios for i in series) == BLOCKS


@contextlib.contextmanager
def ramfs() -> Iterator[Path]:
    """A ramfs mounted on a temporary directory: a file system that cannot punch holes."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a ramfs needs root and mount(8)")
    path = Path(tempfile.mkdtemp(prefix="iogate-ramfs-"))
    done = subprocess.run(["mount", "-t", "ramfs", "iogate-ramfs", str(path)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        path.rmdir()
        pytest.skip(f"cannot mount a ramfs: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
        path.rmdir()


def test_a_file_system_without_hole_punching_gives_trim_errors():
    with ramfs() as mounted:
        path = data_file(mounted / "data")
        before = path.read_bytes()
        job = run([spec(path, rw="trim")]).jobs[0]
        after = path.read_bytes()
    assert (job.trim.ios, job.trim.errors) == (0, BLOCKS)
    assert job.trim.first_errno == errno.EOPNOTSUPP
    assert job.trim.first_error_offset == 0
    assert after == before
