"""fio's trim modes imported: rw=trim, randtrim, trimwrite and randtrimwrite become the
suite's trim modes, a trim's size is the third value of bs (read,write,trim), the options
that trim what a verifying job wrote stay refused with their reason, and fio's own
example of trims no longer stops at its randtrim job. Exported back, the modes are fio's, on
block devices only: fio trims nothing else."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from tests.faults import require_root

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.fio.options import FioUnsupported, job_options, render_jobfile
from iogate.job import BsEntry, JobSpec
from iogate.lower import lower
from iogate.spec import load_suite_text

JOBS = Path(__file__).parent / "jobs"
KiB, MiB = 1 << 10, 1 << 20


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as info:
        import_jobfile(path)
    return [str(p) for p in info.value.problems]


def test_each_trim_mode_imports_and_lowers() -> None:
    text = import_jobfile(JOBS / "trims.fio")
    suite = load_suite_text(text, JOBS / "trims.fio", {})
    cases = {c.id.split("::")[-1]: c for c in suite.cases}
    lowered = {name: lower(c.workload, filenames=["/dev/nvme0n1"], seed=1)
               for name, c in cases.items()}
    rw = {name: s.rw for name, s in lowered.items()}
    assert rw == {"discard": "trim", "random-discard": "randtrim",
                  "discard-then-write": "trimwrite",
                  "random-discard-then-write": "randtrimwrite"}
    # a trim takes the third value of bs; trimwrite writes with the trim's size
    assert lowered["discard"].bs_write == 128 * KiB
    assert lowered["random-discard"].bs_write == 16 * KiB
    assert lowered["random-discard"].blockalign_write == 16 * KiB
    assert lowered["discard-then-write"].bs_write == 64 * KiB  # 'bs=4k,64k': trims too
    assert lowered["random-discard-then-write"].bs_write == 4 * KiB  # 'bs=4k,8k,': default


def test_a_rate_on_trim_and_write_pairs_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "job.fio"
    path.write_text("[j]\nrw=randtrimwrite\nsize=1m\nfilename=/dev/sdx\nrate_iops=100\n")
    problems = problems_of(path)
    assert len(problems) == 1
    assert "rate_iops" in problems[0]
    assert "pairs" in problems[0]


@pytest.mark.parametrize("option", ["trim_percentage=10", "trim_verify_zero=1",
                                    "trim_backlog=16"])
def test_verify_with_trim_options_stay_refused(tmp_path: Path, option: str) -> None:
    path = tmp_path / "job.fio"
    path.write_text(f"[j]\nrw=randwrite\nsize=1m\nfilename=/dev/sdx\n{option}\n")
    problems = problems_of(path)
    assert len(problems) == 1
    assert "trims the blocks a verifying job wrote" in problems[0]


def test_fios_example_no_longer_stops_at_its_randtrim_job() -> None:
    problems = problems_of(JOBS / "enospc-pressure.fio")
    assert problems  # refused for other reasons (continue_on_error, verify_async...)
    assert not [p for p in problems if "[punch_hole-raicer]" in p], problems


@pytest.fixture
def blockdev(tmp_path: Path) -> str:
    """A block device node (never opened): what fio trims."""
    require_root()
    node = tmp_path / "sdx"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(7, 250))
    return str(node)


@pytest.mark.parametrize("rw", ["trim", "randtrim", "trimwrite", "randtrimwrite"])
def test_trim_modes_export_to_fio(rw: str, blockdev: str) -> None:
    spec = JobSpec(engine="libaio", rw=rw, bs_write=64 * KiB, size=MiB, filename=blockdev)
    options = dict(job_options(spec))
    assert options["rw"] == rw
    assert options["bs"] == str(64 * KiB)
    render_jobfile([("j", job_options(spec))])


@pytest.mark.parametrize("rw", ["trim", "trimwrite"])
def test_trims_of_a_file_are_not_exported_as_fio_fails_them(rw: str, tmp_path: Path) -> None:
    for name in (tmp_path / "exists", tmp_path / "missing"):  # fio would create the missing
        if name.stem == "exists":
            name.write_bytes(b"x" * MiB)
        spec = JobSpec(engine="libaio", rw=rw, bs_write=64 * KiB, size=MiB, filename=str(name))
        with pytest.raises(FioUnsupported, match=r"not a block device .* ENOTTY"):
            job_options(spec)


def test_a_trims_split_and_rate_export_as_fios_single_values(blockdev: str) -> None:
    split = [BsEntry(4 * KiB, 4 * KiB, 500_000), BsEntry(64 * KiB, 64 * KiB, 500_000)]
    spec = JobSpec(engine="libaio", rw="randtrim", bssplit_write=split,
                   rate_bytes_write=8 * MiB, size=MiB, filename=blockdev)
    options = dict(job_options(spec))
    assert options["bssplit"] == "4096/50:65536/50"
    assert options["rate"] == str(8 * MiB)
