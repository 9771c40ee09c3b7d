"""Crashes and interrupts end to end: the engine runs in its own process, so a crash is a
`crashed` case and the run goes on; Ctrl-C stops the I/O at once and leaves valid JSON; a
second Ctrl-C does not wait for anything."""

from __future__ import annotations

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


def interruptible() -> None:
    """For subprocess.Popen's preexec_fn: SIGINT at its default, as for a command a terminal
    runs in the foreground. A test run in the background of a shell without job control has
    SIGINT ignored, which its children inherit, and Python leaves an ignored SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _poll(proc: subprocess.Popen, condition: Callable[[], bool], what: str) -> None:
    """Until ``condition``; the process ending first is the failure (no clock: the runs
    asked for here last an hour, so only a fault ends them early)."""
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
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
    result.stdout.fnmatch_lines(["crashed: the engine crashed: killed by SIGSEGV (signal 11)",
                                 "FAILED outcomes.suite.yaml::first - crashed: the engine*"])


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


def _bytes_read(pid: int) -> int | None:
    """Bytes a process has read so far (any read system call), None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def _writes(pid: int) -> int:
    """Write system calls made so far by a process. The runner makes one when it takes the
    first interrupt: it sends the engine the request to stop (while it waits for the engine,
    it otherwise only reads)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("syscw:"):
            return int(line.split()[1])
    raise AssertionError(f"no syscw in /proc/{pid}/io")


def _waiting(pid: int) -> bool:
    """Whether the main thread of a process sleeps (after the request to stop: in its wait
    for the engine, where an interrupt is taken as the second one)."""
    stat = Path(f"/proc/{pid}/task/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "S"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


# The long run's file, and the bytes its engine must have read before it surely reads data:
# twice the file. Nothing else an engine reads comes near (layout only writes; the messages
# of the runner are a few hundred bytes), so counting read calls instead would mistake them
# for the run's I/O.
LONG_RUN_FILE = 8 << 20  # the suite's size: 8MiB
DATA_READ = 2 * LONG_RUN_FILE


def _start_long_run(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path, int]:
    """An iogate run reading for an hour, once its engine is surely reading data."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    suite = tmp_path / "long.suite.yaml"
    # No filename: the target is a temporary file iogate creates in IOGATE_TMPDIR and must
    # remove however the run ends. The runtime is an hour: a run that ends stopped because
    # it was interrupted.
    suite.write_text("""\
suite: long
workloads:
  - name: long-read
    ioengine: psync
    rw: randread
    bs: 4k
    size: 8MiB
    runtime: 3600s
    time_based: true
    expect: {read.iops: "> 0"}
""")
    out = tmp_path / "r.json"
    proc = subprocess.Popen([*IOGATE, "run", str(suite), "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=interruptible,
                            env={**os.environ, "IOGATE_TMPDIR": str(scratch)})
    engine: list[int] = []

    def reading() -> bool:
        engine[:] = _engines(proc.pid)
        return bool(engine) and (_bytes_read(engine[0]) or 0) >= DATA_READ

    _poll(proc, reading, "the engine read data")
    return proc, out, scratch, engine[0]


def test_ctrl_c_stops_io_and_leaves_valid_json(tmp_path: Path) -> None:
    proc, out, scratch, engine = _start_long_run(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole process group
    # The run asked for an hour: that it ends is the interrupt's doing. How soon the I/O
    # stops is a measurement, not a test: on a loaded machine any bound on it is a guess.
    _stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert not _alive(engine)  # no I/O goes on behind the ended run
    document = json.loads(out.read_text())
    case = document["cases"][0]
    assert case["outcome"] == "interrupted"
    # the data reads seen before the interrupt are counted, each one whole
    assert case["metrics"]["read.ios"] > 0
    assert case["metrics"]["read.bytes"] == 4096 * case["metrics"]["read.ios"]
    assert document["summary"]["interrupted"] == 1
    assert list(scratch.iterdir()) == []


def test_second_ctrl_c_aborts_at_once_and_still_leaves_valid_json(tmp_path: Path) -> None:
    proc, out, scratch, engine = _start_long_run(tmp_path)
    os.kill(engine, signal.SIGSTOP)  # an engine that cannot wind down
    try:
        # Each interrupt is sent once the one before has been taken, so none can be merged
        # with another or arrive while the runner ends.
        writes = _writes(proc.pid)
        os.kill(proc.pid, signal.SIGINT)  # asks the engine to stop; it cannot
        _poll(proc, lambda: _writes(proc.pid) > writes and _waiting(proc.pid),
              "the runner asked the engine to stop and waited for it")
        os.kill(proc.pid, signal.SIGINT)  # the second one: it waits no more
        _stdout, stderr = proc.communicate(timeout=120)
    finally:
        if _alive(engine):
            os.kill(engine, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert not _alive(engine)
    case = json.loads(out.read_text())["cases"][0]
    # The frozen engine could never answer; a runner that waited for it would have ended the
    # case as crashed after its grace period (30 s). It was the second interrupt that ended it.
    assert case["outcome"] == "interrupted"
    assert "second interrupt" in case["error"]
    # The counts of the last progress the engine sent before it froze (sent every 0.2 s,
    # so they may still be zero): reported as what is known, not dropped.
    assert case["metrics"]["read.ios"] >= 0
    assert "errors" in case["metrics"]
    assert list(scratch.iterdir()) == []
