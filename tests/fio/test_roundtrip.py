"""Import and export agree: a suite exported to a fio job file and imported back runs the same
jobs, and so does a job file imported, exported and imported again.

"The same jobs" is compared on the lowered engine specs, field by field, except what a job
file cannot carry back: the seed (fio's randseed is re-derived by iogate per case), the series
interval, and temporary targets (a placeholder path in the job file).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.exporter import export
from iogate.fio.importer import load_jobfile
from iogate.job import JobSpec
from iogate.lower import lower
from iogate.spec import LoadedSuite, load_suite

ROOT = Path(__file__).resolve().parents[2]
SUITES = sorted((ROOT / "suites").rglob("*.suite.yaml"))
JOBS = sorted(p for p in (ROOT / "tests" / "fio" / "jobs").iterdir()
              if not p.name.startswith("bad-"))
NOT_CARRIED = {"seed", "interval_ns"}
ENV = {"RUNTIME": "1s", "SIZE": "16MiB"}


def specs(suite: LoadedSuite) -> list[dict]:
    out = []
    for case in suite.cases:
        spec = lower(case.workload, filenames=[f"/target/{case.id}"], seed=0)
        fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(JobSpec)
                  if f.name not in NOT_CARRIED | {"filename", "filenames"}}
        fields["files"] = len(spec.files()) or 1
        for direction in ("read", "write"):  # a direction the job never issues carries nothing
            if not spec.does(direction):
                fields = {k: v for k, v in fields.items() if not k.endswith(f"_{direction}")}
        if fields["compress_chunk"] == 0:  # the engine's way of saying its default, 512
            fields["compress_chunk"] = 512
        out.append(fields)
    return out


def reimport(suite: LoadedSuite, tmp_path: Path, name: str) -> LoadedSuite:
    exported = export(suite, cases=suite.cases)
    assert not exported.skipped, exported.skipped
    jobfile = tmp_path / f"{name}.fio"
    jobfile.write_text(exported.text)
    return load_jobfile(jobfile, env=ENV)


def exportable(suite: LoadedSuite) -> LoadedSuite:
    """The suite without the cases fio cannot run (export names them; tested there)."""
    cases = [c for c in suite.cases if not export(suite, cases=[c]).skipped]
    if not cases:
        pytest.skip("no case can be expressed in fio")
    return dataclasses.replace(suite, cases=cases)


@pytest.mark.parametrize("path", SUITES, ids=lambda p: str(p.relative_to(ROOT / "suites")))
def test_a_suite_exported_and_imported_back_runs_the_same_jobs(path: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    original = exportable(load_suite(path))
    assert specs(reimport(original, tmp_path, path.stem)) == specs(original)


@pytest.mark.parametrize("path", JOBS, ids=lambda p: p.name)
def test_a_job_file_imported_exported_and_imported_again_is_unchanged(path: Path,
                                                                      tmp_path: Path) -> None:
    try:
        first = exportable(load_jobfile(path, env=ENV))
    except SuiteError:
        pytest.skip("refused on import (tested in test_import.py)")
    assert specs(reimport(first, tmp_path, path.stem)) == specs(first)
