"""A fleet host that stops answering: its fio server, or only its job, frozen with SIGSTOP
mid-case. The case fails within its bound (the case's runtime plus a grace) with an error
naming the host, and the run goes on; an interrupt ends a case on a frozen host at once.

The servers are real fio daemons (the `fleet` fixture), frozen and thawed with real signals;
every one, frozen or not, is killed at teardown. No clock decides a pass: the limits waited
for here are several times the bounds they check.
"""

from __future__ import annotations

import errno
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.e2e.test_outcomes import interruptible
from tests.fio.common import needs_fio, spec
from tests.fio.fleet import Server

from iogate.errors import EngineError
from iogate.fio import backend

pytestmark = needs_fio

IOGATE = [sys.executable, "-m", "iogate"]
RUNTIME_S = 1
BOUND_S = RUNTIME_S + backend.HOST_GRACE_S  # the bound of a case of RUNTIME_S
WATCHDOG_S = BOUND_S + 120  # a run still waiting by then waits on the frozen host for ever

TWO_CASES = f"""\
suite: hang
workloads:
  - name: frozen
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: {RUNTIME_S}s
    time_based: true
    expect: {{read.iops: "> 0"}}
  - name: after
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: {RUNTIME_S}s
    time_based: true
    expect: {{read.iops: "> 0"}}
"""

LONG_CASE = """\
suite: hang
workloads:
  - name: long
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 600s
    time_based: true
"""


def _start(suite: Path, hosts: str, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*IOGATE, "run", str(suite), "--backend", "fio", "--hosts", hosts,
                             "--json", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=interruptible)


def _await_said(proc: subprocess.Popen[bytes], said: bytearray, text: str,
               within_s: float) -> None:
    """Read the run's stderr (where it says each case's outcome as the case ends) into
    ``said`` until ``text`` is in it; the run ending first, or not saying it within_s, is
    the failure."""
    assert proc.stderr is not None
    deadline = time.monotonic() + within_s
    while text.encode() not in said:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            pytest.fail(f"{text!r} not said {within_s:.0f} s on: {said.decode()}")
        ready, _, _ = select.select([proc.stderr], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(proc.stderr.fileno(), 65536)
            assert chunk, f"the run ended before printing {text!r}: {said.decode()}"
            said += chunk


Fleet = Callable[[int], list[Server]]


def _await_job(proc: subprocess.Popen[bytes], server: Server) -> None:
    while not server.running_a_job():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)


def test_a_frozen_host_fails_its_case_within_the_bound_and_the_run_goes_on(
        fleet: Fleet, tmp_path: Path) -> None:
    survivor, victim = fleet(2)
    suite = tmp_path / "hang.suite.yaml"
    suite.write_text(TWO_CASES)
    out = tmp_path / "r.json"
    proc = _start(suite, f"{survivor.host.key},{victim.host.key}", out)
    said = bytearray()
    try:
        _await_job(proc, victim)
        victim.freeze()
        _await_said(proc, said, "hang.suite.yaml::frozen: error", WATCHDOG_S)
        victim.thaw()  # the second case runs on both hosts again
        stdout, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 3, (said + rest).decode()  # a case in error, none failed
    first, second = json.loads(out.read_text())["cases"]
    assert first["outcome"] == "error"
    assert first["error"].startswith(f"host {victim.host.key} stopped answering: ")
    assert f"not done {BOUND_S:.0f} s after its run started" in first["error"]
    assert f"grace {backend.HOST_GRACE_S:.0f} s" in first["error"]
    assert survivor.host.key not in first["error"]
    # The run went on to the next case. A server resumed from a stop may still be ending
    # the job it was given before, and refuse the next one: that is said, never a hang.
    assert second["id"].endswith("::after"), second
    assert second["outcome"] in ("passed", "error"), second
    if second["outcome"] == "passed":
        assert sorted(second["hosts"]) == sorted([survivor.host.key, victim.host.key])
    else:
        assert "stopped answering" not in second["error"], second["error"]
    assert b"Traceback" not in said + rest + stdout


def test_a_host_whose_job_is_frozen_fails_the_run_naming_it(fleet: Fleet) -> None:
    """The server still answers; only its job, stopped in its I/O loop, never ends."""
    (server,) = fleet(1)
    frozen: list[float] = []

    def freeze_its_job() -> bool:
        if not frozen and server.job_past_startup():
            server.freeze(jobs_only=True)
            frozen.append(time.monotonic())
        if frozen and time.monotonic() - frozen[0] > WATCHDOG_S:
            pytest.fail(f"still waiting on the frozen job {WATCHDOG_S:.0f} s on")
        return False

    job = spec(time_based=True, runtime_ns=RUNTIME_S * 1_000_000_000)
    with pytest.raises(EngineError) as caught:
        backend.run([job], hosts=[server.host], should_stop=freeze_its_job,
                    poll_interval=0.02)
    assert frozen, "the job was never seen running"
    assert caught.value.errno == errno.ETIMEDOUT
    message = str(caught.value)
    assert message.startswith(f"host {server.host.key} stopped answering: not done "
                              f"{BOUND_S:.0f} s after its run started")
    assert "its fio client was killed" in message


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_ends_a_case_on_a_frozen_host_at_once(fleet: Fleet, tmp_path: Path,
                                                           signum: int) -> None:
    """The frozen host never answers fio's stop: its client is killed after a short grace,
    not after the case's bound (the case asked for ten minutes)."""
    (server,) = fleet(1)
    suite = tmp_path / "hang.suite.yaml"
    suite.write_text(LONG_CASE)
    out = tmp_path / "r.json"
    proc = _start(suite, server.host.key, out)
    try:
        _await_job(proc, server)
        server.freeze()
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=120)  # a watchdog, not a measure
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130, stderr.decode()
    (case,) = json.loads(out.read_text())["cases"]
    assert case["outcome"] == "interrupted"
    assert b"Traceback" not in stdout + stderr
