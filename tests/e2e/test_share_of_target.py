"""A size or offset given as a share of the target (fio's ``size=N%``, ``offset=N%``),
resolved against the real file before the run by fio's rules: the offset rounded up to
offset_align or the smallest block size, the size rounded down to the smallest block size
and kept within the file. Checked through the command line, the importer and exporter, and
against fio itself on the same file."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from iogate.spec.fields import RegionOffset, RegionSize, Share

KiB, MiB = 1024, 1024 * 1024


def iogate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "iogate", *args], cwd=cwd, text=True,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=600)


def expected_region(file_size: int, size_pct: int, offset_pct: int, bs: int,
                    align: int | None = None) -> tuple[int, int]:
    """fio's rule, written out: (offset, size) in bytes."""
    step = align or bs
    offset = -(-(file_size * offset_pct // 100) // step) * step
    size = min(file_size * size_pct // 100, file_size - offset)
    return offset, size - size % bs


def suite(target: Path, extra: str) -> str:
    return (f"suite: share\nworkloads:\n  - name: part\n    filename: {target}\n"
            f"    ioengine: psync\n    rw: read\n{extra}")


@pytest.mark.parametrize(("size_pct", "offset_pct", "bs", "align"), [
    (50, 25, 4 * KiB, None), (33, 10, 3 * KiB, None), (40, 30, 4 * KiB, 64 * KiB),
    (100, 90, 4 * KiB, None),  # the size is cut at the end of the file
])
def test_a_share_reads_the_part_of_the_file_fio_would(disk_dir: Path, size_pct: int,
                                                      offset_pct: int, bs: int,
                                                      align: int | None) -> None:
    target = disk_dir / "existing.data"
    target.write_bytes(bytes(range(256)) * (7 * MiB // 256 + 13))  # not a round size
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    extra = f"    bs: {bs}\n    size: {size_pct}%\n    offset: '{offset_pct}%'\n" + (
        f"    offset_align: {align}\n" if align else "")
    (disk_dir / "s.suite.yaml").write_text(suite(target, extra))
    proc = iogate("run", "s.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stderr
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    offset, size = expected_region(target.stat().st_size, size_pct, offset_pct, bs, align)
    assert (case["workload"]["offset"], case["workload"]["size"]) == (offset, size)
    assert case["metrics"]["read.bytes"] == size
    assert case["metrics"]["read.ios"] == size // bs
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_an_imported_share_moves_the_bytes_fio_moves_on_the_same_file(disk_dir: Path) -> None:
    target = disk_dir / "existing.data"
    target.write_bytes(b"\xa5" * (5 * MiB + 3 * KiB))
    job = disk_dir / "share.fio"
    job.write_text(f"[global]\nfilename={target}\nioengine=psync\nbs=3k\n"
                   "[part]\nrw=read\nsize=33%\noffset=10%\n")
    fio = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                         text=True, timeout=600, check=True)
    fio_bytes = json.loads(fio.stdout[fio.stdout.index("{"):])["jobs"][0]["read"]["io_bytes"]
    proc = iogate("import", str(job), "-o", "share.yaml", cwd=disk_dir)
    assert proc.returncode == 0, proc.stderr
    assert 'size: "33%"' in (disk_dir / "share.yaml").read_text()
    proc = iogate("run", "share.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stderr
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["metrics"]["read.bytes"] == fio_bytes == expected_region(
        target.stat().st_size, 33, 10, 3 * KiB)[1]


def test_a_share_exports_as_fio_percentages(disk_dir: Path) -> None:
    target = disk_dir / "existing.data"
    target.write_bytes(b"\0" * MiB)
    (disk_dir / "s.suite.yaml").write_text(suite(
        target, "    size: 50%\n    offset: 25%\n    offset_align: 64k\n"))
    proc = iogate("export", "s.suite.yaml", cwd=disk_dir)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "size=50%" in lines
    assert "offset=25%" in lines
    assert "offset_align=65536" in lines


@pytest.mark.parametrize(("extra", "message"), [
    ("    size: 50%\n    offset: 100%\n", "ends before offset"),
    ("    size: 0.01%\n    bs: 64k\n", "is less than one block"),
])
def test_a_share_that_leaves_nothing_is_an_error_naming_why(disk_dir: Path, extra: str,
                                                           message: str) -> None:
    target = disk_dir / "existing.data"
    target.write_bytes(b"\0" * MiB)
    (disk_dir / "s.suite.yaml").write_text(suite(target, extra))
    proc = iogate("run", "s.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 3
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["outcome"] == "error"
    assert message in case["error"]


def test_a_share_needs_a_target_of_its_own(disk_dir: Path) -> None:
    (disk_dir / "s.suite.yaml").write_text(
        "suite: share\nworkloads:\n  - name: part\n    rw: read\n    size: 50%\n")
    proc = iogate("validate", "s.suite.yaml", cwd=disk_dir)
    assert proc.returncode == 2
    assert "size 50% is a share of the target" in proc.stderr
    assert "temporary file" in proc.stderr
    assert ":5:" in proc.stderr


SIZE, OFFSET = TypeAdapter(RegionSize), TypeAdapter(RegionOffset)


@given(st.fractions(min_value=0, max_value=100).filter(lambda f: f > 0)
       .map(lambda f: Fraction(round(f * 1000), 1000)).filter(lambda f: f > 0))
def test_a_share_reads_back_as_written(pct: Fraction) -> None:
    share = SIZE.validate_python(f"{float(pct):g}%")
    assert isinstance(share, Share)
    assert SIZE.validate_python(SIZE.dump_python(share)) == share
    assert share.of(10**6) == int(Fraction(10**6) * share.percent / 100)


@pytest.mark.parametrize("text", ["0%", "101%", "50 %%", "-5%", "%", "5%5"])
def test_a_share_out_of_range_or_malformed_is_refused(text: str) -> None:
    with pytest.raises(ValidationError):
        SIZE.validate_python(text)


def test_sizes_and_offsets_in_bytes_are_unchanged() -> None:
    assert SIZE.validate_python("4k") == 4096
    assert OFFSET.validate_python(0) == 0
    with pytest.raises(ValidationError):
        SIZE.validate_python(0)  # a size is never empty
