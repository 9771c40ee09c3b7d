"""Importing the files fio names itself: nrfiles without a directory (in the working
directory), filename_format's keywords, clones that share files or have their own, and how a
job goes from file to file (openfiles, file_service_type). Names are checked against the
files fio itself creates."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.spec import LoadedSuite, load_suite_text

FIO = shutil.which("fio")


def suite_of(body: str) -> tuple[LoadedSuite, str]:
    text = import_jobfile("files.fio", body)
    return load_suite_text(text, "files.fio", {}), " ".join(text.replace("#", " ").split())


def files_of(suite: LoadedSuite) -> dict[str, list[str]]:
    return {c.id: c.workload.filenames or [c.workload.filename] for c in suite.cases}


def test_nrfiles_without_a_directory_are_fios_names_in_the_working_directory() -> None:
    suite, prose = suite_of("[job]\nrw=randread\nsize=4m\nnrfiles=4\n")
    assert files_of(suite) == {"job": [f"job.0.{f}" for f in range(4)]}
    assert "in the working directory, where fio makes them too" in prose


def test_a_format_without_jobnum_is_shared_by_the_clones() -> None:
    suite, _ = suite_of("[job]\nrw=randread\nsize=4m\nnumjobs=3\nnrfiles=2\n"
                        "directory=/var/tmp/d\nfilename_format=data.$filenum\n")
    (case,) = suite.cases
    assert case.workload.filenames == ["/var/tmp/d/data.0", "/var/tmp/d/data.1"]
    assert case.workload.numjobs == 3  # threads of one workload, on the shared files


def test_a_format_with_jobnum_gives_each_clone_its_files() -> None:
    suite, _ = suite_of("[job]\nrw=randread\nsize=4m\nnumjobs=2\n"
                        "filename_format=$jobname-$jobnum.bin\n")
    assert files_of(suite) == {"job.0": ["job-0.bin"], "job.1": ["job-1.bin"]}


def test_filename_format_is_ignored_with_a_filename_as_fio_does() -> None:
    suite, prose = suite_of("[job]\nrw=read\nsize=1m\nfilename=/var/tmp/x\n"
                            "filename_format=$jobname.$filenum\n")
    assert files_of(suite) == {"job": ["/var/tmp/x"]}
    assert "fio ignores filename_format when filename is given" in prose


def test_files_a_format_names_alike_are_one_file_of_their_share_moved_over_as_often() -> None:
    # fio opens job.bin three times, each a region of size/3 from its start (the same-meaning
    # test compares the file and the requests with fio's)
    suite, prose = suite_of("[job]\nrw=randread\nsize=3m\nnrfiles=3\n"
                            "filename_format=$jobname.bin\n")
    (case,) = suite.cases
    assert files_of(suite) == {"job": ["job.bin"]}
    assert (case.workload.size, case.workload.io_size) == (1 << 20, 3 << 20)
    assert "fio opens job.bin 3 times" in prose


@pytest.mark.parametrize(("options", "message"), [
    ("filename_format=$clientuid.$filenum", "is fio's client id: iogate runs on one host"),
    ("filename_format=$jobname.$who", "$who is not one of fio's keywords"),
    ("nrfiles=4\nopenfiles=2", "openfiles=2 of 4 files: fio keeps 2 open at a time"),
    ("nrfiles=2\nfile_service_type=zipf:1.2", "fio's zipf, pareto, normal and gauss choices"),
    ("nrfiles=2\nfile_service_type=random:4", "several requests per choice, are not kept"),
])
def test_what_iogate_cannot_do_with_files_is_refused_with_the_reason(options: str,
                                                                     message: str) -> None:
    with pytest.raises(SuiteError, match=message.replace("$", r"\$")):
        suite_of(f"[job]\nrw=read\nsize=1m\n{options}\n")


def test_enough_open_files_and_round_robin_are_what_iogate_does() -> None:
    suite, prose = suite_of("[job]\nrw=read\nsize=1m\nnrfiles=2\nopenfiles=2\n"
                            "file_service_type=roundrobin\n")
    assert files_of(suite) == {"job": ["job.0.0", "job.0.1"]}
    assert "iogate keeps every file of the workload open" in prose
    assert "fio's default: the files in turn, one request each" in prose


@pytest.mark.parametrize(("options", "kind"), [
    ("file_service_type=random", "random"), ("file_service_type=sequential", "sequential"),
    ("file_service_type=random:1", "random"), ("openfiles=1", "sequential"),
    ("openfiles=1\nfile_service_type=random", "sequential"),
])
def test_how_a_job_goes_from_file_to_file_is_kept(options: str, kind: str) -> None:
    # the same-meaning tests compare the blocks each file gets with fio's
    suite, prose = suite_of(f"[job]\nrw=read\nsize=1m\nnrfiles=2\n{options}\n")
    (case,) = suite.cases
    assert case.workload.file_service_type == kind
    assert ("drawn at random among those left" in prose) == (options.count("\n") == 1)


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
@pytest.mark.parametrize("options", [
    "nrfiles=3\nnumjobs=2",
    "nrfiles=2\nnumjobs=2\nfilename_format=f.$jobnum.$filenum.$jobname",
    "nrfiles=2\nfilename_format=shared.$filenum",
])
def test_the_files_are_the_ones_fio_makes(tmp_path: Path, options: str) -> None:
    body = f"[job]\nrw=read\nsize=1m\n{options}\n"
    (tmp_path / "job.fio").write_text(body)
    subprocess.run([FIO or "fio", "--create_only=1", str(tmp_path / "job.fio")],
                   capture_output=True, check=True, timeout=60, cwd=tmp_path)
    made = {p.name for p in tmp_path.iterdir()} - {"job.fio"}
    suite, _ = suite_of(body)
    named = {name for files in files_of(suite).values() for name in files}
    assert named == made


def test_offset_increment_gives_each_clone_its_own_region() -> None:
    suite, prose = suite_of("[job]\nrw=write\nfilename=/var/tmp/d\nsize=1m\nnumjobs=3\n"
                            "offset=4k\noffset_increment=1m\n")
    regions = {c.id: (c.workload.offset, c.workload.size, c.workload.numjobs)
               for c in suite.cases}
    assert regions == {"job.0": (4096, 1 << 20, 1), "job.1": ((1 << 20) + 4096, 1 << 20, 1),
                       "job.2": ((2 << 20) + 4096, 1 << 20, 1)}
    assert len({c.group for c in suite.cases}) == 1  # the clones run together, as in fio
    assert "its own region (offset_increment)" in prose


def test_offset_increment_of_one_clone_moves_nothing() -> None:
    suite, prose = suite_of("[job]\nrw=read\nfilename=/var/tmp/d\nsize=1m\noffset_increment=1m\n")
    assert [c.workload.offset for c in suite.cases] == [0]
    assert "one clone: fio moves no offset" in prose
