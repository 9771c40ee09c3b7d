"""The history store through the command line: runs recorded with --history and --label,
listed and filtered with ``iogate history``; usage errors before anything runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

IOGATE = [sys.executable, "-m", "iogate"]
SUITE = """\
suite: h
workloads:
  - name: quick
    ioengine: null
    rw: randread
    size: 1MiB
    repeat: 3
"""


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


def test_runs_are_recorded_and_listed(tmp_path: Path) -> None:
    (tmp_path / "h.suite.yaml").write_text(SUITE)
    for build, lot in (("101", "A"), ("102", "B")):
        proc = iogate("run", "h.suite.yaml", "--history", "store.sqlite", "--label",
                      f"lot={lot}", cwd=tmp_path, env={"BUILD_NUMBER": build})
        assert proc.returncode == 0, proc.stderr
        assert "store.sqlite: run " in proc.stderr and "recorded, 1 case(s)" in proc.stderr
    listed = iogate("history", "store.sqlite", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and "build=101" in lines[0] and "lot=B" in lines[1]
    only = iogate("history", "store.sqlite", "--label", "lot=A", "-k", "quick", cwd=tmp_path)
    assert only.stdout.count("\n") == 1 and "build=101" in only.stdout


def test_history_usage_errors_come_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "h.suite.yaml").write_text(SUITE)
    proc = iogate("run", "h.suite.yaml", "--label", "lot=A", cwd=tmp_path)
    assert proc.returncode == 2 and "--label names this run in a history store" in proc.stderr
    proc = iogate("run", "h.suite.yaml", "--history", "postgresql://db/x", cwd=tmp_path)
    assert proc.returncode == 2 and "give a file path" in proc.stderr
    proc = iogate("run", "h.suite.yaml", "--history", "h.sqlite", "--label", "oops",
                  cwd=tmp_path)
    assert proc.returncode == 2 and "write KEY=VALUE" in proc.stderr
    assert not (tmp_path / "h.sqlite").exists()
    listed = iogate("history", "missing.sqlite", cwd=tmp_path)
    assert listed.returncode == 2 and "no such history store" in listed.stderr
