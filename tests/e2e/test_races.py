"""Targets swapped behind iogate's back: a symlink repointed, a directory replaced by a link, a
blank device exchanged for one that holds a filesystem, between the check and any open the
engine makes. Each swap is made for real, at the exact moment of the race (in the engine call
that follows the check, or between two repeats), and then at random moments by a process
that flips a link while whole runs go on; every protected byte is hashed before and after."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.e2e.test_safety import digest, loop_device, needs_loop, owned

from iogate.backends import engine_for
from iogate.engine.isolated import run as engine_run
from iogate.hooks import get_plugin_manager
from iogate.results import RunResult
from iogate.runner import run_cases
from iogate.spec import load_suite_text
from iogate.targets import Policy

IOGATE = [sys.executable, "-m", "iogate"]


def cases_of(directory: Path, body: str) -> list:
    text = "suite: races\nworkloads:\n" + body
    return list(load_suite_text(text, directory / "races.suite.yaml").cases)


def job(target: Path | str, rw: str = "write", extra: str = "") -> str:
    return (f"  - name: w\n    ioengine: psync\n    rw: {rw}\n    size: 256KiB\n"
            f"    filename: {target}\n{extra}")


def swapping(swap: Callable[[], None], at_call: int = 0,
             backend: Callable[..., RunResult] = engine_run) -> Callable[..., RunResult]:
    """The real engine (or fio), with ``swap`` made just before its call number ``at_call``:
    after the targets were checked and before the engine opens anything of that session."""
    calls = 0

    def engine(specs: list, **kwargs: object) -> RunResult:
        nonlocal calls
        if calls == at_call:
            swap()
        calls += 1
        return backend(specs, **kwargs)

    return engine


def fio_run(specs: list, **kwargs: object) -> RunResult:
    return engine_for(get_plugin_manager(), "fio")(specs, **kwargs)


needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")


def repoint(link: Path, to: Path | str) -> None:
    """Atomically make ``link`` point at ``to`` (as a script managing links does)."""
    tmp = link.with_name(link.name + ".new")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    tmp.symlink_to(to)
    os.replace(tmp, link)


@pytest.fixture
def scene(disk_dir: Path) -> tuple[Path, Path, str]:
    """A link to a new scratch file, and a user's file (with its hash) it may be swapped to."""
    user = disk_dir / "precious.db"
    user.write_bytes(os.urandom(1 << 20))
    link = disk_dir / "target"
    link.symlink_to(disk_dir / "scratch.img")
    return link, user, digest(user)


def test_a_link_repointed_after_the_check_never_reaches_the_user_file(
        disk_dir: Path, scene: tuple[Path, Path, str]) -> None:
    link, user, before = scene
    [result] = run_cases(cases_of(disk_dir, job(link)),
                         engine=swapping(lambda: repoint(link, user)))
    assert digest(user) == before
    # the file checked (created, recorded) is the one written
    assert result.outcome == "passed", result.error
    assert (disk_dir / "scratch.img").stat().st_size == 256 << 10


@needs_fio
@pytest.mark.parametrize("rw", ["write", "randread"])
def test_fio_opens_the_file_checked_too(disk_dir: Path, scene: tuple[Path, Path, str],
                                        rw: str) -> None:
    """With the fio backend: fio is handed the checked file itself (laid out first, since
    fio lays out a file by removing it), whatever the link points at by then."""
    link, user, before = scene
    [result] = run_cases(cases_of(disk_dir, job(link, rw)),
                         engine=swapping(lambda: repoint(link, user), backend=fio_run))
    assert digest(user) == before
    assert result.outcome == "passed", result.error
    scratch = disk_dir / "scratch.img"
    assert scratch.stat().st_size == 256 << 10
    assert owned(scratch)  # still the file iogate created and recorded


@pytest.mark.parametrize("at_call", [1, 2])
def test_a_link_repointed_between_repeats_never_reaches_the_user_file(
        disk_dir: Path, scene: tuple[Path, Path, str], at_call: int) -> None:
    link, user, before = scene
    [result] = run_cases(cases_of(disk_dir, job(link, extra="    repeat: 3\n")),
                         engine=swapping(lambda: repoint(link, user), at_call))
    assert digest(user) == before
    assert result.outcome == "passed", result.error


def test_a_link_repointed_before_a_precondition_never_reaches_the_user_file(
        disk_dir: Path, scene: tuple[Path, Path, str]) -> None:
    link, user, before = scene
    body = job(link, "randread", "    precondition:\n      - rw: write\n")
    [result] = run_cases(cases_of(disk_dir, body), engine=swapping(lambda: repoint(link, user)))
    assert digest(user) == before
    assert result.outcome == "passed", result.error


def test_a_file_replaced_after_the_check_is_refused_not_written(disk_dir: Path) -> None:
    """The checked file itself replaced by a user's file under the same name: the run is an
    error naming the swap, and the new file is untouched."""
    target = disk_dir / "scratch.img"
    user = disk_dir / "precious.db"
    user.write_bytes(os.urandom(1 << 20))
    before = digest(user)

    def swap() -> None:
        os.replace(user, target)

    [result] = run_cases(cases_of(disk_dir, job(target)), engine=swapping(swap))
    assert digest(target) == before
    assert result.outcome == "error"
    assert "no longer the file that was checked" in (result.error or "")


def test_a_directory_swapped_for_a_link_does_not_escape_target_root(disk_dir: Path) -> None:
    root = disk_dir / "root"
    (root / "sub").mkdir(parents=True)
    outside = disk_dir / "outside"
    outside.mkdir()
    user = outside / "data.img"
    user.write_bytes(os.urandom(1 << 20))
    before = digest(user)

    def swap() -> None:
        # the checked file moves away with its directory; a link to the user's directory
        # takes the directory's place
        os.rename(root / "sub", disk_dir / "moved")
        (root / "sub").symlink_to(outside)

    body = job(root / "sub" / "data.img", extra=f"    target_root: {root}\n")
    [result] = run_cases(cases_of(disk_dir, body), engine=swapping(swap))
    assert digest(user) == before
    assert result.outcome == "error"
    assert "no longer the file that was checked" in (result.error or "")
    assert not owned(user)


def test_a_link_flipping_during_whole_runs_never_reaches_the_user_file(
        disk_dir: Path, scene: tuple[Path, Path, str]) -> None:
    """A script flips the link between the scratch file and the user's file at random
    moments (seeded) while whole runs go on, each one a new process."""
    link, user, before = scene
    scratch = disk_dir / "scratch.img"
    (disk_dir / "t.suite.yaml").write_text(
        "suite: t\nworkloads:\n" + job(link, extra="    repeat: 2\n"))
    rng = random.Random(11)
    stop = threading.Event()
    flips = 0

    def flipper() -> None:
        nonlocal flips
        while not stop.is_set():
            repoint(link, user if flips % 2 else scratch)
            flips += 1
            stop.wait(rng.uniform(0.0005, 0.02))

    runs = 12
    outcomes = []
    for _ in range(runs):
        repoint(link, scratch)
        thread = threading.Thread(target=flipper)
        thread.start()
        try:
            proc = subprocess.run([*IOGATE, "run", "t.suite.yaml"], cwd=disk_dir,
                                  capture_output=True, text=True, timeout=300)
        finally:
            stop.set()
            thread.join()
            stop.clear()
        outcomes.append(proc.returncode)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert digest(user) == before, f"run {len(outcomes)} wrote the user's file"
    assert set(outcomes) <= {0, 3}, outcomes
    assert flips > runs


# -- block devices -------------------------------------------------------------------------

@needs_loop
@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="needs mkfs.ext4")
def test_a_blank_device_exchanged_for_one_with_a_filesystem_is_not_wiped(
        disk_dir: Path) -> None:
    with loop_device(disk_dir / "blank.img") as blank, \
            loop_device(disk_dir / "ext4.img") as full:
        subprocess.run(["mkfs.ext4", "-q", "-F", full], check=True)
        before = digest(full)
        link = disk_dir / "dev"
        link.symlink_to(blank)
        [result] = run_cases(cases_of(disk_dir, job(link)),
                             safety=Policy.from_option([""]),
                             engine=swapping(lambda: repoint(link, full)))
        assert digest(full) == before
        # the blank device that was checked (and held exclusively) is the one written
        assert result.outcome == "passed", result.error


@needs_loop
def test_a_named_device_is_the_only_one_that_may_be_written(disk_dir: Path) -> None:
    with loop_device(disk_dir / "a.img") as named, loop_device(disk_dir / "b.img") as other:
        before = digest(other)
        [refused] = run_cases(cases_of(disk_dir, job(other)),
                              safety=Policy.from_option([named]))
        assert refused.outcome == "error"
        assert "not among the devices named with --allow-destructive=" in (refused.error or "")
        assert digest(other) == before
        # also when the bare flag is given beside the name
        [refused] = run_cases(cases_of(disk_dir, job(other)),
                              safety=Policy.from_option(["", named]))
        assert refused.outcome == "error"
        assert digest(other) == before
        [written] = run_cases(cases_of(disk_dir, job(named)), safety=Policy.from_option([named]))
        assert written.outcome == "passed", written.error


def test_a_named_device_that_is_not_one_is_a_usage_error(disk_dir: Path) -> None:
    (disk_dir / "t.suite.yaml").write_text("suite: t\nworkloads:\n" + job(disk_dir / "f"))
    for name, why in ((str(disk_dir / "missing"), "does not exist"),
                      (str(disk_dir / "t.suite.yaml"), "is not a block device")):
        proc = subprocess.run([*IOGATE, "run", "t.suite.yaml", f"--allow-destructive={name}"],
                              cwd=disk_dir, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2, proc.stderr
        assert f"--allow-destructive={name}: {why}" in proc.stderr
        assert not (disk_dir / "f").exists()


# -- other iogate processes ------------------------------------------------------------------

def _wait_for(proc: subprocess.Popen, condition: Callable[[], bool], what: str) -> None:
    """Until ``condition``; the process ending first is the failure (no clock)."""
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}"
        time.sleep(0.02)


def test_a_second_process_waits_for_the_target_and_says_so(disk_dir: Path) -> None:
    """Another process holds the target (as a running iogate does): the run waits without
    touching it, says who holds it, and runs once it is released."""
    target = disk_dir / "shared.img"
    body = job(target, extra="    verify: crc32c\n")
    (disk_dir / "t.suite.yaml").write_text("suite: t\nworkloads:\n" + body)
    first = run_cases(cases_of(disk_dir, body))  # creates and records it
    assert first[0].outcome == "passed", first[0].error
    before = digest(target)
    holder = os.open(target, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    err = disk_dir / "err.txt"
    with open(err, "w") as stderr:
        proc = subprocess.Popen([*IOGATE, "run", "t.suite.yaml", "--json", "r.json"],
                                cwd=disk_dir, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        _wait_for(proc, lambda: "waiting" in err.read_text(), "it said it waits")
        assert f"another iogate process (pid {os.getpid()}) is running on this target" \
            in err.read_text()
        assert proc.poll() is None
        assert digest(target) == before  # nothing written while it waits
    finally:
        os.close(holder)  # released: the run goes on
    assert proc.wait(timeout=300) == 0, err.read_text()
    assert digest(target) != before


def test_an_interrupt_while_waiting_for_a_target_ends_the_run_cleanly(disk_dir: Path) -> None:
    target = disk_dir / "shared.img"
    (disk_dir / "t.suite.yaml").write_text("suite: t\nworkloads:\n" + job(target))
    run_cases(cases_of(disk_dir, job(target)))
    before = digest(target)
    holder = os.open(target, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    err = disk_dir / "err.txt"
    try:
        with open(err, "w") as stderr:
            proc = subprocess.Popen([*IOGATE, "run", "t.suite.yaml", "--json", "r.json"],
                                    cwd=disk_dir, stdout=subprocess.DEVNULL, stderr=stderr)
        _wait_for(proc, lambda: "waiting" in err.read_text(), "it said it waits")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, err.read_text()
    finally:
        os.close(holder)
    assert "Traceback" not in err.read_text()
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["outcome"] == "interrupted"
    assert digest(target) == before


def test_two_processes_on_one_target_take_turns(disk_dir: Path) -> None:
    """Two whole runs of a verified write on the same file, started together: each reads
    back exactly what it wrote (they would fail verification if they overlapped)."""
    target = disk_dir / "shared.img"
    body = job(target, extra="    verify: crc32c\n    size: 16MiB\n    bs: 4KiB\n"
                            "    iodepth: 1\n    repeat: 2\n").replace("    size: 256KiB\n", "")
    run_cases(cases_of(disk_dir, body))
    procs = []
    for name in ("a", "b"):
        (disk_dir / f"{name}.suite.yaml").write_text("suite: " + name + "\nworkloads:\n" + body)
        procs.append(subprocess.Popen(
            [*IOGATE, "run", f"{name}.suite.yaml", "--json", f"{name}.json"], cwd=disk_dir,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
    for name in ("a", "b"):
        [case] = json.loads((disk_dir / f"{name}.json").read_text())["cases"]
        assert case["outcome"] == "passed"


def test_pytest_refuses_a_named_device_that_is_not_one(pytester: pytest.Pytester) -> None:
    pytester.makefile(".suite.yaml", t="suite: t\nworkloads:\n" + job("f"))
    result = pytester.runpytest("-p", "no:cacheprovider",
                                "--iogate-allow-destructive=/no/such/disk")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--allow-destructive=/no/such/disk: does not exist*"])
    assert not (pytester.path / "f").exists()
