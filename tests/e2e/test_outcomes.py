"""Crashes and interrupts end to end: the engine runs in its own process, so a crash is a
`crashed` case and the run goes on; Ctrl-C stops the I/O at once and leaves valid JSON; a
second Ctrl-C does not wait for anything."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

IOGATE = [sys.executable, "-m", "iogate"]

TWO_CASES = """\
suite: outcomes
defaults:
  ioengine: null
  rw: randread
  bs: 4k
  size: 64MiB
  runtime: 300ms
  time_based: true
workloads:
  - name: first
    expect: {read.iops: "> 0"}
  - name: second
    expect: {read.iops: "> 0"}
"""


def _poll(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def test_engine_crash_is_a_crashed_case_and_the_run_goes_on(tmp_path: Path) -> None:
    suite = tmp_path / "outcomes.suite.yaml"
    suite.write_text(TWO_CASES)
    out = tmp_path / "r.json"
    proc = subprocess.run([*IOGATE, "run", str(suite), "--json", str(out)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "IOGATE_TEST_CRASH": "*::first"},
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 3, proc.stderr
    cases = {c["id"]: c for c in json.loads(out.read_text())["cases"]}
    first, second = cases["outcomes.suite.yaml::first"], cases["outcomes.suite.yaml::second"]
    assert first["outcome"] == "crashed"
    assert "SIGSEGV (signal 11)" in first["error"]
    assert second["outcome"] == "passed"
    assert second["metrics"]["read.iops"] > 0
    assert "1 crashed" in proc.stdout
    assert "outcomes.suite.yaml::first: crashed: the engine crashed" in proc.stdout


def test_pytest_reports_a_crash_and_runs_the_next_item(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makefile(".suite.yaml", outcomes=TWO_CASES)
    monkeypatch.setenv("IOGATE_TEST_CRASH", "*::first")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*first: crashed: the engine crashed: killed by SIGSEGV*"])


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


def _threads(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except FileNotFoundError:
        pass
    return 0


def _engines(pid: int) -> list[int]:
    """The engine processes below `pid`: those running worker threads. They are children of
    the fork server (itself a child of the runner, single threaded), or of the runner when
    it forks them itself."""
    out = []
    for child in _children(pid):
        out += ([child] if _threads(child) > 1 else []) + _engines(child)
    return out


def _read_calls(pid: int) -> int | None:
    """Read system calls made so far by a process, None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("syscr:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _start_long_run(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path, int]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    suite = tmp_path / "long.suite.yaml"
    # No filename: the target is a temporary file iogate creates in IOGATE_TMPDIR and must
    # remove however the run ends.
    suite.write_text("""\
suite: long
workloads:
  - name: long-read
    ioengine: psync
    rw: randread
    bs: 4k
    size: 8MiB
    runtime: 60s
    time_based: true
    expect: {read.iops: "> 0"}
""")
    out = tmp_path / "r.json"
    proc = subprocess.Popen([*IOGATE, "run", str(suite), "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "IOGATE_TMPDIR": str(scratch)})
    engine: list[int] = []

    def reading() -> bool:
        engine[:] = _engines(proc.pid)
        if not engine:
            return False
        first = _read_calls(engine[0])
        time.sleep(0.05)
        later = _read_calls(engine[0])
        return first is not None and later is not None and later > first + 10

    _poll(reading, 60, "the engine to read")
    return proc, out, scratch, engine[0]


def test_ctrl_c_stops_io_within_200ms_and_leaves_valid_json(tmp_path: Path) -> None:
    proc, out, scratch, engine = _start_long_run(tmp_path)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole process group
    last_calls, last_change = _read_calls(engine), sent
    while _alive(engine) and time.monotonic() - sent < 10:
        calls = _read_calls(engine)
        if calls is not None and calls != last_calls:
            last_calls, last_change = calls, time.monotonic()
        time.sleep(0.002)
    stdout, stderr = proc.communicate(timeout=60)
    # Reads of the page cache are fast: the engine makes thousands a second, so the moment
    # the count stops moving is when the I/O stopped.
    assert last_change - sent < 0.2, f"I/O went on for {last_change - sent:.3f} s"
    assert proc.returncode == 130, stderr
    document = json.loads(out.read_text())
    case = document["cases"][0]
    assert case["outcome"] == "interrupted"
    assert case["metrics"]["read.ios"] > 0
    assert document["summary"]["interrupted"] == 1
    assert list(scratch.iterdir()) == []


def test_second_ctrl_c_aborts_at_once_and_still_leaves_valid_json(tmp_path: Path) -> None:
    proc, out, scratch, engine = _start_long_run(tmp_path)
    os.kill(engine, signal.SIGSTOP)  # an engine that cannot wind down
    try:
        os.kill(proc.pid, signal.SIGINT)  # asks the engine to stop; it cannot
        # Interrupt again until the run ends: signals sent close together may be taken as
        # one, so the run ending right after some later one is what counts.
        rounds = 0
        while proc.poll() is None and rounds < 20:
            rounds += 1
            sent = time.monotonic()
            os.kill(proc.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.5)
        stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if _alive(engine):
            os.kill(engine, signal.SIGKILL)
    # the second interrupt ends the run (or the third, when the first two were taken as one)
    assert rounds <= 2 and took < 0.5, f"{rounds} more interrupts, the last took {took:.1f} s"
    assert proc.returncode == 130, stderr
    assert not _alive(engine)
    case = json.loads(out.read_text())["cases"][0]
    assert case["outcome"] == "interrupted"
    assert "second interrupt" in case["error"]
    # The counts of the last progress the engine sent before it froze (sent every 0.2 s,
    # so they may still be zero): reported as what is known, not dropped.
    assert case["metrics"]["read.ios"] >= 0 and "errors" in case["metrics"]
    assert list(scratch.iterdir()) == []
