"""Importing fio's minimum rates (rate_min / ratemin, rate_iops_min, rate_cycle), which end a
fio job that falls below them: in iogate, expectations on every interval of the cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.spec import load_suite_text


def imported(tmp_path: Path, body: str) -> tuple[str, dict]:
    job = tmp_path / "floors.fio"
    job.write_text("[global]\nfilename=/dev/loop-nowhere\nsize=4m\n" + body)
    text = import_jobfile(job)
    suite = load_suite_text(text, tmp_path / "floors.suite.yaml")
    prose = " ".join(text.replace("#", " ").split())  # comments wrap at any word
    return prose, {c.id: c.workload for c in suite.cases}


def test_a_minimum_rate_is_a_gate_on_every_interval_of_the_cycle(tmp_path: Path) -> None:
    text, workloads = imported(tmp_path, "[a]\nrw=randrw\nratemin=1k,2k\nrate_iops_min=3\n"
                                         "ratecycle=500\n")
    assert workloads["a"].expect == {
        "read.bw": ">= 1KiB/s in all of 500ms", "write.bw": ">= 2KiB/s in all of 500ms",
        "read.iops": ">= 3 in all of 500ms", "write.iops": ">= 3 in all of 500ms"}
    assert "iogate runs on and fails the case if any interval" in text


def test_a_minimum_rate_is_per_clone_in_fio(tmp_path: Path) -> None:
    _, workloads = imported(tmp_path, "[a]\nrw=read\nnumjobs=4\nrate_min=1m\n")
    assert workloads["a"].expect == {"read.bw": ">= 4MiB/s in all of 1s"}


def test_a_minimum_for_a_direction_the_job_does_not_issue_is_no_gate(tmp_path: Path) -> None:
    _, workloads = imported(tmp_path, "[a]\nrw=write\nratemin=,64k\n")
    assert workloads["a"].expect == {"write.bw": ">= 64KiB/s in all of 1s"}


def test_a_bad_cycle_is_refused_at_its_line(tmp_path: Path) -> None:
    job = tmp_path / "floors.fio"
    job.write_text("[a]\nfilename=/dev/loop-nowhere\nsize=1m\nratemin=1k\nratecycle=0\n")
    with pytest.raises(SuiteError, match=r"floors.fio:5:1: .*rate_cycle is a whole number"):
        import_jobfile(job)


def test_fios_tiobench_threads_option_changes_nothing(tmp_path: Path) -> None:
    text, workloads = imported(tmp_path, "[a]\nrw=read\nthreads=1\n")
    assert workloads["a"].numjobs == 1
    assert "an option of its tiobench profile" in text


def test_a_minimum_in_global_is_an_expectation_of_every_job(tmp_path: Path) -> None:
    # Expectations belong to each workload: never hoisted into the suite's defaults.
    _, workloads = imported(tmp_path, "ratemin=2k\n[a]\nrw=read\n[b]\nrw=read\n")
    assert all(w.expect == {"read.bw": ">= 2KiB/s in all of 1s"} for w in workloads.values())
