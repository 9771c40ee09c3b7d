"""Interrupts never lose results: SIGINT and SIGTERM at random moments of small runs (start-up
imports, loading, running, judging, writing), and every run checked: exit 0 or 130, never a
traceback, the results file valid and holding every case said finished on stderr, and no
temporary file or directory left behind."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

IOGATE = [sys.executable, "-m", "iogate"]

# Five short cases: null engines (no files) and tiny psync files in the scratch directory;
# expectations on latency percentiles, so that judging has work to do.
SUITE = """\
suite: five
workloads:
  - name: a
    ioengine: null
    rw: randread
    size: 32MiB
    expect:
      read.iops: ">= 1"
      read.clat.p99: "< 10s"
  - name: b
    ioengine: psync
    rw: randwrite
    size: 256KiB
    expect:
      write.clat.p99: "< 10s"
  - name: c
    ioengine: null
    rw: read
    size: 32MiB
  - name: d
    ioengine: psync
    rw: randread
    size: 256KiB
    expect:
      read.clat.p50: "< 10s"
  - name: e
    ioengine: null
    rw: write
    size: 32MiB
    expect:
      write.clat.p99: "< 10s"
"""
CASES = [f"five.suite.yaml::{name}" for name in "abcde"]
FINISHED = re.compile(r"^(five\.suite\.yaml::\w+): "
                      r"(passed|failed|error|skipped|crashed|interrupted)\b", re.M)
RUNS = 32
SEED = 20261124
# How long after the command's first line the signal may come; a whole run takes about
# that long on a quiet machine, so the signals fall all along it (on a busy machine they
# fall earlier, which changes where, not what is checked).
LATEST_S = 1.6


def caught_signals(pid: int) -> set[int]:
    """The signals process ``pid`` has handlers for (SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return set()
    mask = int(re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M).group(1), 16)  # type: ignore[union-attr]
    return {n for n in range(1, 64) if mask >> (n - 1) & 1}


def wait_for_the_command(proc: subprocess.Popen[str]) -> None:
    """Until the command handles SIGINT and SIGTERM (its first line) or has ended: a signal
    before that meets the interpreter starting up, which no program can handle."""
    while proc.poll() is None:
        if {signal.SIGINT, signal.SIGTERM} <= caught_signals(proc.pid):
            return
        time.sleep(0.001)


def check_run(run: Path, scratch: Path, with_json: bool, returncode: int, stdout: str,
              stderr: str) -> list[str]:
    """What is wrong with one interrupted run (nothing: an empty list)."""
    problems = []
    if returncode not in (0, 130):
        problems.append(f"exit {returncode}")
    if "Traceback" in stderr:
        problems.append("a traceback")
    finished = [cid for cid, _ in FINISHED.findall(stderr)]
    results = run / "r.json"
    if with_json and (finished or results.exists()):
        try:
            ids = [c["id"] for c in json.loads(results.read_text())["cases"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"no valid results file: {exc!r}")
        else:
            if ids != finished:
                problems.append(f"results hold {ids}, stderr said {finished} finished")
            if returncode == 0 and ids != CASES:
                problems.append(f"exit 0 with only {ids}")
    left = sorted(p.name for p in run.iterdir()) + sorted(p.name for p in scratch.iterdir())
    if left != sorted(["five.suite.yaml", "tmp", *(["r.json"] if results.exists() else [])]):
        problems.append(f"left behind: {left}")
    return problems


def test_random_interrupts_never_lose_finished_cases(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    problems: list[str] = []
    for i in range(RUNS):
        run = tmp_path / f"run{i}"
        scratch = run / "tmp"
        scratch.mkdir(parents=True)
        (run / "five.suite.yaml").write_text(SUITE)
        signum = rng.choice([signal.SIGINT, signal.SIGTERM])
        delay = rng.uniform(0, LATEST_S)
        with_json = rng.random() < 0.75
        proc = subprocess.Popen(
            [*IOGATE, "run", "five.suite.yaml", *(["--json", "r.json"] if with_json else [])],
            cwd=run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(scratch), "IOGATE_TMPDIR": str(scratch)})
        wait_for_the_command(proc)
        time.sleep(delay)
        proc.send_signal(signum)  # nothing if it has ended already
        stdout, stderr = proc.communicate(timeout=120)
        for problem in check_run(run, scratch, with_json, proc.returncode, stdout, stderr):
            tail = "\n    ".join(stderr.strip().splitlines()[-6:])
            problems.append(f"run {i} ({signum.name} after {delay:.3f}s, "
                            f"{'--json' if with_json else 'no --json'}): {problem}\n    {tail}")
    assert not problems, "\n".join(problems)


def test_sigterm_while_the_suites_load(tmp_path: Path) -> None:
    suite = tmp_path / "slow.suite.yaml"
    os.mkfifo(suite)  # reading it waits for a writer: the command is loading until then
    proc = subprocess.Popen([*IOGATE, "run", str(suite), "--json", "r.json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    writer = _writer_once_read(suite, proc)
    try:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    assert proc.returncode == 130, stdout + stderr
    assert "iogate: interrupted" in stderr and "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slow.suite.yaml"]


def test_the_modules_that_build_schemas_are_imported_with_interrupts_held(tmp_path: Path
                                                                         ) -> None:
    # An interrupt while pydantic builds a model comes out of it as a SchemaError (a
    # traceback, exit 1: seen once in the random interrupts above): every module that builds
    # models or adapters as it is imported must be imported with SIGINT and SIGTERM held,
    # whichever import reaches it first (the parser's own imports reach the models too).
    code = """\
import importlib.abc, json, signal, sys
held = {}
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("iogate.spec.models", "iogate.fio.translate"):
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
            held[name] = {signal.SIGINT, signal.SIGTERM} <= set(mask)
        return None
sys.meta_path.insert(0, Watch())
from iogate.cli import main
main(["metrics"])
print(json.dumps(held), file=sys.stderr)
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    held = json.loads(proc.stderr.strip().splitlines()[-1])
    assert held == {"iogate.spec.models": True, "iogate.fio.translate": True}


FINALIZER = """\
import signal
from iogate import interrupts
{prelude}
class Finalized:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)

try:
    with interrupts.handled():
        Finalized()
        for _ in range(10_000_000):
            pass
    print("went on")
except KeyboardInterrupt:
    print("interrupted")
"""


def interrupted_in_a_finalizer(tmp_path: Path, prelude: str = "") -> None:
    """Python can only print an exception raised in a __del__ and go on; the interrupt must
    come back and end the block instead, with nothing printed."""
    done = subprocess.run([sys.executable, "-c", FINALIZER.format(prelude=prelude)],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "interrupted\n" and done.stderr == ""


def test_an_interrupt_in_a_finalizer_is_not_dropped(tmp_path: Path) -> None:
    interrupted_in_a_finalizer(tmp_path)


def test_an_interrupt_sent_again_is_not_dropped_when_its_timer_fires_in_the_hook(
        tmp_path: Path) -> None:
    # On a busy machine the hook that sends the interrupt again can be held up for longer
    # than its timer: here the timer is made to fire while the hook still runs.
    interrupted_in_a_finalizer(tmp_path, prelude="""
arm = interrupts._arm

def held_up():
    arm()
    for _ in range(3_000_000):  # far longer than the timer: its signal comes in here
        pass

interrupts._arm = held_up
""")


def test_an_interrupt_while_the_results_are_written_keeps_them_and_drops_the_journal(
        tmp_path: Path) -> None:
    """The interrupt comes while the results file is being written (held until it is
    complete): the file is whole, the command ends interrupted, and the journal that held
    the cases meanwhile is removed, the results being written."""
    (tmp_path / "five.suite.yaml").write_text(SUITE)
    script = """\
import signal, sys
import iogate.report
from iogate.cli import main

write = iogate.report.write_results

def interrupted_while_writing(*args, **kwargs):
    signal.raise_signal(signal.SIGINT)  # held: the file is written whole first
    return write(*args, **kwargs)

iogate.report.write_results = interrupted_while_writing
sys.exit(main(sys.argv[1:]))
"""
    proc = subprocess.run([sys.executable, "-c", script, "run", "five.suite.yaml", "--json",
                           "r.json"], cwd=tmp_path, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    assert proc.returncode == 130, proc.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert len(document["cases"]) == 5
    assert not (tmp_path / "r.json.journal").exists(), proc.stderr


def test_a_suite_read_from_a_fifo_is_read_once_and_whole(tmp_path: Path) -> None:
    # Process substitution or a pipe: nothing may read ahead of the loader (the job file
    # check looked inside, and what it read was gone for the suite).
    fifo = tmp_path / "piped.suite.yaml"
    os.mkfifo(fifo)
    text = "suite: piped\nworkloads:\n  - {name: w, ioengine: null, rw: read, size: 1m}\n"
    proc = subprocess.Popen([*IOGATE, "validate", str(fifo)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    with open(fifo, "w") as writer:  # opens once the command opened its end
        writer.write(text)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "ok, 1 case(s): w" in stdout + stderr


def test_an_interrupt_is_not_held_back_by_a_fifo_that_never_gets_data(tmp_path: Path) -> None:
    # A signal that comes just before a blocking read would wait for the read to return:
    # the input is read in short steps instead, each one a chance to take the signal.
    fifo = tmp_path / "never.suite.yaml"
    os.mkfifo(fifo)
    for signum in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([*IOGATE, "validate", str(fifo)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        # The command has the FIFO open, and a writer that never writes is there too.
        writer = _writer_once_read(fifo, proc)
        try:
            proc.send_signal(signum)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            os.close(writer)
        assert proc.returncode == 130, stdout + stderr
        assert "iogate: interrupted" in stderr and "Traceback" not in stderr


def _writer_once_read(fifo: Path, proc: subprocess.Popen) -> int:
    """The write end of ``fifo``, opened once the command ``proc`` has opened its read end
    (until then the open fails with ENXIO); the command ending first is a failure."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.005)
