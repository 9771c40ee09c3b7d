"""Importing where a job's region lies: fio's size=N% and offset=N% (a share of the file or
device, with offset_align), and offset_align without a share, which fio ignores."""

from __future__ import annotations

from pathlib import Path

from iogate.fio.importer import import_jobfile
from iogate.spec import load_suite_text
from iogate.spec.fields import Share


def imported(tmp_path: Path, body: str) -> tuple[str, dict]:
    job = tmp_path / "region.fio"
    job.write_text("[global]\nfilename=/dev/loop-nowhere\nioengine=psync\n" + body)
    text = import_jobfile(job)
    suite = load_suite_text(text, tmp_path / "region.suite.yaml")
    return text, {c.id: c.workload for c in suite.cases}


def test_shares_import_as_shares_with_their_alignment(tmp_path: Path) -> None:
    text, workloads = imported(tmp_path, "[a]\nrw=read\nsize=50%\noffset=20%\n"
                                         "offset_align=1m\n")
    w = workloads["a"]
    assert w.size == Share(50)
    assert w.offset == Share(20)
    assert w.offset_align == 1 << 20
    assert 'size: "50%"' in text
    assert 'offset: "20%"' in text


def test_offset_align_without_a_share_is_noted_as_ignored(tmp_path: Path) -> None:
    text, workloads = imported(tmp_path, "[a]\nrw=read\nsize=1m\noffset=64k\n"
                                         "offset_align=1m\n")
    assert workloads["a"].offset == 65536
    assert workloads["a"].offset_align is None
    assert "offset_align only rounds an offset given as a percentage" in text
