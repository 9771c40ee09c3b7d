"""A failing run's output fits a CI log: no line over 120 columns when the output is not a
terminal (``iogate run`` and pytest alike), long errors and reasons on lines of their own
under their row, and not a word of them lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

IOGATE = [sys.executable, "-m", "iogate"]

SUITE = """\
suite: wide
workloads:
  - name: a-users-file-iogate-must-not-write
    ioengine: psync
    rw: write
    size: 1MiB
    filename: {target}
  - name: impossible-expectations-on-the-null-engine
    ioengine: null
    rw: randrw
    size: 4MiB
    expect:
      read.iops: ">= 1000G"
      write.iops: ">= 1000G"
      read.clat.p99: "<= 1ns"
  - name: sweep
    ioengine: null
    rw: randread
    size: 1MiB
    sweep:
      bs: [4k, 64k]
      iodepth: [1, 32]
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(extra)
    return env


def _suite(directory: Path) -> Path:
    target = directory / "users-own-file.db"
    target.write_bytes(os.urandom(1 << 20))
    path = directory / "wide.suite.yaml"
    path.write_text(SUITE.format(target=target))
    return path


def _words(text: str) -> str:
    return " ".join(text.split())


def test_a_failing_run_fits_120_columns(disk_dir: Path) -> None:
    suite = _suite(disk_dir)
    proc = subprocess.run([*IOGATE, "run", str(suite)], cwd=disk_dir, capture_output=True,
                          text=True, timeout=300, env=_env())
    assert proc.returncode == 3, proc.stdout + proc.stderr
    for stream in (proc.stdout, proc.stderr):
        widest = max(stream.splitlines(), key=len)
        assert len(widest) <= 120, widest
    # the error is whole, under its row, in the results table
    out = proc.stdout
    row = next(line for line in out.splitlines()
               if line.startswith("wide.suite.yaml::a-users-file") and "ERROR" in line)
    assert "existing file" not in row
    why = out.split(row, 1)[1]
    assert why.startswith("\n    why: ")
    assert "an existing file iogate did not create (iogate knows its own files by their " \
        "identity" in _words(why)
    # the failing case's checks and the sweep's table are there as well
    assert "impossible-expectations-on-the-null-engine" in out
    assert "sweep wide.suite.yaml::sweep" in out
    # a wider terminal (COLUMNS) is used whole: the error's line is longer
    wide = subprocess.run([*IOGATE, "run", str(suite)], cwd=disk_dir, capture_output=True,
                          text=True, timeout=300, env=_env(COLUMNS="400"))
    assert max(len(line) for line in wide.stdout.splitlines()) > 120


def test_pytest_output_fits_120_columns(disk_dir: Path, pytester: pytest.Pytester,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("COLUMNS", raising=False)
    suite = _suite(disk_dir)
    (pytester.path / "wide.suite.yaml").write_text(suite.read_text())
    # CI set: pytest then prints each failure's message whole in its short summary
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    ours = out[out.index("iogate results"):]
    widest = max(ours.splitlines(), key=len)
    assert len(widest) <= 120, widest
    failed = [line for line in ours.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 2, ours
    assert "    problems: " in ours
    assert "an existing file iogate did not create (iogate knows its own files by their " \
        "identity" in _words(ours)


HISTORY_SUITE = """\
suite: kept
workloads:
  - name: a-case-whose-expectation-no-run-meets-so-that-it-can-be-accepted-into-the-norm
    ioengine: null
    rw: randread
    size: 1MiB
    expect:
      read.iops: ">= 1000G"
"""
# labels a CI system records with each run: long values, as build URLs and branch names are
LABELS = {"pipeline": "https://ci.example.com/storage/firmware-gate/pipelines/12345678/jobs",
          "branch": "release/2026.11/nvme-firmware-candidate-with-a-long-name",
          "runner": "lab-rack-17-slot-4-nvme-gen5-x4-under-test"}


def test_history_listings_fit_120_columns(disk_dir: Path) -> None:
    suite = disk_dir / "kept.suite.yaml"
    suite.write_text(HISTORY_SUITE)
    store = disk_dir / "runs.sqlite"
    labels = [arg for k, v in LABELS.items() for arg in ("--label", f"{k}={v}")]
    for _ in range(2):
        proc = subprocess.run([*IOGATE, "run", str(suite), "--history", str(store), *labels],
                              cwd=disk_dir, capture_output=True, text=True, timeout=300,
                              env=_env())
        assert proc.returncode == 1, proc.stdout + proc.stderr
    commands = {
        "history": ["history", str(store)],
        "trend": ["history", str(store), "--metric", "read.iops"],
        "detect": ["detect", str(store)],
        "accept": ["history", "accept", str(store), "--label", f"branch={LABELS['branch']}"],
    }
    outputs = {}
    for name, argv in commands.items():
        proc = subprocess.run([*IOGATE, *argv], cwd=disk_dir, capture_output=True, text=True,
                              timeout=300, env=_env())
        assert proc.returncode == 0, (name, proc.stdout + proc.stderr)
        widest = max(proc.stdout.splitlines(), key=len)
        assert len(widest) <= 120, (name, widest)
        outputs[name] = proc.stdout
    # wrapped, not cut: every label is in the listing whole
    for key, value in LABELS.items():
        assert f"{key}={value}" in _words(outputs["history"])
    assert "a-case-whose-expectation-no-run-meets" in outputs["accept"]
    # a wide terminal keeps a run to its line
    wide = subprocess.run([*IOGATE, "history", str(store)], cwd=disk_dir, capture_output=True,
                          text=True, timeout=300, env=_env(COLUMNS="400"))
    assert max(len(line) for line in wide.stdout.splitlines()) > 120
