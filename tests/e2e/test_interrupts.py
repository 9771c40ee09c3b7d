"""Interrupts never lose results: SIGINT and SIGTERM at random moments of small runs (start-up
imports, loading, running, judging, writing), on a quiet machine and on one kept busy, and
every run checked: exit 0 or 130, never a traceback, the results file valid and holding every
case said finished on stderr, and no temporary file or directory left behind. A closed
terminal (SIGHUP, a real pseudo-terminal hung up) is an interrupt too."""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

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
FINISHED = re.compile(r"^(\w+\.suite\.yaml::\w+): "
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
              stderr: str, cases: Sequence[str] = CASES) -> list[str]:
    """What is wrong with one interrupted run of ``cases`` (nothing: an empty list)."""
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
            if returncode == 0 and ids != list(cases):
                problems.append(f"exit 0 with only {ids}")
    left = sorted(p.name for p in run.iterdir()) + sorted(p.name for p in scratch.iterdir())
    suite = cases[0].split("::")[0]
    if left != sorted([suite, "tmp", *(["r.json"] if results.exists() else [])]):
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


# Three short cases, for the runs on a busy machine: a null engine's, a tiny file's in the
# scratch directory, and one that runs for a set time.
SHORT_SUITE = """\
suite: three
workloads:
  - name: a
    ioengine: null
    rw: randread
    size: 8MiB
    expect:
      read.clat.p99: "< 10s"
  - name: b
    ioengine: psync
    rw: randwrite
    size: 128KiB
  - name: c
    ioengine: null
    rw: read
    size: 1MiB
    runtime: 300ms
    time_based: true
"""
SHORT_CASES = [f"three.suite.yaml::{name}" for name in "abc"]
BUSY_RUNS = 40
BUSY_LATEST_S = 3.0  # a run takes about that long beside two busy processes


@pytest.fixture
def busy_machine() -> Iterator[None]:
    """Two processes that keep the CPUs busy for as long as the test runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(2)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def test_random_interrupts_on_a_busy_machine_never_lose_finished_cases(
        tmp_path: Path, busy_machine: None) -> None:
    rng = random.Random(SEED + 1)
    problems: list[str] = []
    for i in range(BUSY_RUNS):
        run = tmp_path / f"run{i}"
        scratch = run / "tmp"
        scratch.mkdir(parents=True)
        (run / "three.suite.yaml").write_text(SHORT_SUITE)
        delay = rng.uniform(0, BUSY_LATEST_S)
        proc = subprocess.Popen(
            [*IOGATE, "run", "three.suite.yaml", "--json", "r.json"], cwd=run,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(scratch), "IOGATE_TMPDIR": str(scratch)})
        wait_for_the_command(proc)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)  # nothing if it has ended already
        stdout, stderr = proc.communicate(timeout=120)
        for problem in check_run(run, scratch, True, proc.returncode, stdout, stderr,
                                 SHORT_CASES):
            tail = "\n    ".join(stderr.strip().splitlines()[-6:])
            problems.append(f"run {i} (SIGINT after {delay:.3f}s): {problem}\n    {tail}")
    assert not problems, "\n".join(problems)


def hung_up(command: list[str], cwd: Path, until: Callable[[bytes], bool],
            env: dict[str, str] | None = None, group: bool = False) -> int:
    """Run ``command`` as the leader of a session whose controlling terminal is a
    pseudo-terminal, its output on it; once ``until`` holds for what the terminal showed
    (read as it comes), close the other end: the terminal hangs up, the kernel sends SIGHUP,
    and every later write to the terminal fails, as when a terminal window is closed or an
    ssh connection drops. With ``group``, SIGHUP goes to the command's whole process group
    as well (its engine processes), as a shell sends it to a job when its terminal closes.
    The command's exit status."""
    controller, terminal = os.openpty()

    def on_the_terminal() -> None:  # after setsid: the terminal becomes the controlling one
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)

    try:
        proc = subprocess.Popen(command, cwd=cwd, stdout=terminal, stderr=terminal,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=on_the_terminal, env={**os.environ, **(env or {})})
        shown = b""
        while not until(shown):
            if select.select([controller], [], [], 0.05)[0]:
                shown += os.read(controller, 1 << 16)
            assert proc.poll() is None, shown
        os.close(controller)
        controller = -1
        if group:
            os.killpg(proc.pid, signal.SIGHUP)
        return proc.wait(timeout=120)
    finally:
        os.close(terminal)
        if controller >= 0:
            os.close(controller)


@pytest.mark.parametrize("group", [False, True], ids=["the command", "its process group"])
def test_a_closed_terminal_keeps_the_results_and_removes_the_scratch_files(
        tmp_path: Path, group: bool) -> None:
    (tmp_path / "hup.suite.yaml").write_text("""\
suite: hup
workloads:
  - name: first
    ioengine: null
    rw: read
    size: 1MiB
  - name: long
    ioengine: psync
    rw: randread
    size: 256KiB
    runtime: 60s
    time_based: true
  - name: never
    ioengine: null
    rw: read
    size: 1MiB
""")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # Hung up while the long case runs on its scratch file: the file, not its directory,
    # which is made before the case's run begins (an interrupt then may drop the case).
    code = hung_up([*IOGATE, "run", "hup.suite.yaml", "--json", "r.json"], tmp_path,
                   lambda shown: b"hup.suite.yaml::first: passed" in shown
                   and any(scratch.glob("iogate-*/long.data")),
                   env={"TMPDIR": str(scratch), "IOGATE_TMPDIR": str(scratch)}, group=group)
    assert code == 130
    document = json.loads((tmp_path / "r.json").read_text())
    assert [(c["id"], c["outcome"]) for c in document["cases"]] == [
        ("hup.suite.yaml::first", "passed"), ("hup.suite.yaml::long", "interrupted")]
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hup.suite.yaml", "r.json", "tmp"]


def test_a_terminal_closed_while_the_run_ends_keeps_the_results(tmp_path: Path) -> None:
    # Hung up while the results document is assembled (interrupts held): everything still
    # to be said goes nowhere, and the results file is written all the same.
    (tmp_path / "five.suite.yaml").write_text(SUITE)
    script = """\
import os, sys, time
import iogate.report
from iogate.cli import main

assemble = iogate.report.results_document

def hung_up_meanwhile(*args, **kwargs):
    open("assembling", "w").close()
    while os.isatty(2):  # until the terminal hangs up
        time.sleep(0.01)
    return assemble(*args, **kwargs)

iogate.report.results_document = hung_up_meanwhile
sys.exit(main(sys.argv[1:]))
"""
    code = hung_up([sys.executable, "-c", script, "run", "five.suite.yaml", "--json", "r.json"],
                   tmp_path, lambda shown: (tmp_path / "assembling").exists())
    assert code == 130
    document = json.loads((tmp_path / "r.json").read_text())
    assert [c["id"] for c in document["cases"]] == CASES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assembling", "five.suite.yaml",
                                                          "r.json"]


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
    assert "iogate: interrupted" in stderr
    assert "Traceback" not in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["slow.suite.yaml"]


def test_the_modules_that_build_schemas_are_imported_with_interrupts_held(tmp_path: Path
                                                                         ) -> None:
    # An interrupt while pydantic builds a model comes out of it as a SchemaError (a
    # traceback, exit 1: seen once in the random interrupts above): every module that builds
    # models or adapters as it is imported must be imported with SIGINT and SIGTERM held,
    # whichever import reaches it first (a run's options reach the models too).
    # A model whose build is deferred (pydantic's defer_build) is built when it first
    # validates, outside those imports: none may be, so every rebuild is recorded with
    # whether it was held.
    code = """\
import importlib.abc, json, signal, sys
import pydantic
held = {}
def held_now():
    return {signal.SIGINT, signal.SIGTERM} <= set(signal.pthread_sigmask(signal.SIG_BLOCK, []))
rebuild = pydantic.BaseModel.model_rebuild.__func__
def watched(cls, *args, **kwargs):
    if cls.__module__.startswith("iogate") and not held_now():
        held[f"{cls.__module__}.{cls.__name__} built"] = False
    return rebuild(cls, *args, **kwargs)
pydantic.BaseModel.model_rebuild = classmethod(watched)
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("iogate.spec.models", "iogate.fio.translate"):
            held[name] = held_now()
        return None
sys.meta_path.insert(0, Watch())
from iogate.cli import main
main(sys.argv[1:])
print(json.dumps(held), file=sys.stderr)
"""
    (tmp_path / "j.fio").write_text("[j]\nioengine=null\nrw=read\nsize=1m\n")
    (tmp_path / "s.suite.yaml").write_text(
        "suite: s\nworkloads:\n  - name: w\n    ioengine: null\n    rw: read\n"
        "    size: 1MiB\n")
    expected = {
        # fio's importer is loaded for job files alone; the suite models for the commands
        # that read suites alone
        ("metrics",): {},
        ("validate", "s.suite.yaml"): {"iogate.spec.models": True},
        ("run", "s.suite.yaml", "--json", "r.json"): {"iogate.spec.models": True},
        ("validate", "j.fio"): {"iogate.spec.models": True, "iogate.fio.translate": True},
        ("import", "j.fio", "-o", "i.suite.yaml"): {"iogate.spec.models": True,
                                                    "iogate.fio.translate": True},
        ("export", "s.suite.yaml", "-o", "e.fio"): {"iogate.spec.models": True},
    }
    for argv, want in expected.items():
        proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        held = json.loads(proc.stderr.strip().splitlines()[-1])
        assert held == want, argv


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
    assert done.stdout == "interrupted\n"
    assert done.stderr == ""


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


@pytest.mark.parametrize("step", ["Journal", "results_document"])
def test_an_interrupt_held_while_the_run_begins_or_ends_keeps_the_results(
        tmp_path: Path, step: str) -> None:
    """An interrupt that comes while the journal is made, or while the results document is
    assembled (the machine's facts gathered, which takes a while on a busy machine), is held
    until that step ends, and then must not skip the results file: every finished case is
    in it, and nothing is left behind."""
    (tmp_path / "five.suite.yaml").write_text(SUITE)
    script = f"""\
import signal, sys
import iogate.report
from iogate.cli import main

step = iogate.report.{step}

def interrupted_meanwhile(*args, **kwargs):
    signal.raise_signal(signal.SIGINT)
    return step(*args, **kwargs)

iogate.report.{step} = interrupted_meanwhile
sys.exit(main(sys.argv[1:]))
"""
    proc = subprocess.run([sys.executable, "-c", script, "run", "five.suite.yaml", "--json",
                           "r.json"], cwd=tmp_path, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    assert [c["id"] for c in document["cases"]] == [c for c, _ in
                                                    FINISHED.findall(proc.stderr)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["five.suite.yaml", "r.json"]


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
        assert "iogate: interrupted" in stderr
        assert "Traceback" not in stderr


def _writer_once_read(fifo: Path, proc: subprocess.Popen) -> int:
    """The write end of ``fifo``, opened once the command ``proc`` has opened its read end
    (until then the open fails with ENXIO); the command ending first is a failure."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.005)
