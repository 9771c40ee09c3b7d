"""The fork server and its workers: engine processes are forked by it, their crash signals
still reach the runner, a server that died is replaced for the next session, and a worker
serves session after session while each ends with its result, and only then."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from iogate.engine import forkserver, isolated
from iogate.job import JobSpec

CHILD = """
import os, signal, sys
from iogate.engine import forkserver, isolated
from iogate.job import JobSpec
spec = JobSpec(engine="null", rw="read", bs_read=4096, bs_write=4096, iodepth=1, numjobs=1,
               size=1 << 20, offset=0, runtime_ns=0, ramp_ns=0, time_based=False,
               direct=False, rwmixread=100, filename="", test_crash=sys.argv[1] == "crash")
try:
    result = isolated.run([spec])
    print("result", result.jobs[0].read.ios)
except isolated.EngineCrashed as exc:
    print("crashed", exc.signal)
server = forkserver.current()
print("server", server.process.pid if server else 0)
"""


def _spec(**changes: object) -> JobSpec:
    fields: dict[str, object] = dict(engine="null", size=1 << 20, rwmixread=100)
    fields.update(changes)
    return JobSpec(**fields)  # type: ignore[arg-type]


def _run(mode: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True,
                          timeout=120, env={**os.environ, forkserver.SWITCH_ENV: "1"},
                          preexec_fn=lambda: __import__("resource").setrlimit(
                              __import__("resource").RLIMIT_CORE, (0, 0)))
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_server_reports_the_crash_signal_of_a_child() -> None:
    out = _run("crash")
    assert out[:2] == ["crashed", str(int(signal.SIGSEGV))]
    assert out[2] == "server"  # it went through the fork server
    assert int(out[3]) > 0


def test_a_session_through_the_server_completes() -> None:
    out = _run("ok")
    assert out[:2] == ["result", str((1 << 20) // 4096)]
    assert int(out[3]) > 0


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> forkserver.ForkServer:
    monkeypatch.setenv(forkserver.SWITCH_ENV, "1")
    server = forkserver.server()
    if server is None:
        pytest.skip(f"no fork server: {forkserver._disabled_reason}")
    return server


def test_a_dead_server_is_started_again_for_the_next_session(served) -> None:
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    first = forkserver.current()
    assert first is served
    os.kill(first.process.pid, signal.SIGKILL)
    first.process.wait()
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    second = forkserver.current()
    assert second is not None
    assert second is not first
    assert second.alive()


def test_a_server_killed_while_its_child_runs_is_a_crash_then_replaced(served) -> None:
    spec = _spec(time_based=True, runtime_ns=30_000_000_000)

    def kill_server(progress: object) -> None:
        if served.alive():
            os.kill(served.process.pid, signal.SIGKILL)

    with pytest.raises(isolated.EngineCrashed) as caught:
        isolated.run([spec], on_progress=kill_server, poll_interval=0.05)
    assert caught.value.signal == signal.SIGKILL  # the child died with its server
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    assert forkserver.current() is not served


def test_without_the_server_the_runner_forks_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(forkserver.SWITCH_ENV, "0")
    monkeypatch.setattr(forkserver, "spawn", lambda *a: pytest.fail("the server was asked"))
    assert isolated.run([_spec()]).jobs[0].read.ios == 256


def _worker_pid() -> int:
    idle = isolated._idle
    assert idle is not None, "no worker is waiting for the next session"
    return idle.pid


def test_a_worker_serves_one_session_after_another(served) -> None:
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    pid = _worker_pid()
    for size in (1 << 16, 1 << 18):
        assert isolated.run([_spec(size=size)]).jobs[0].read.ios == size // 4096
        assert _worker_pid() == pid
    os.kill(pid, 0)  # alive between sessions


def test_a_crashed_worker_is_replaced_and_the_next_session_runs(served) -> None:
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    pid = _worker_pid()
    with pytest.raises(isolated.EngineCrashed) as caught:
        isolated.run([_spec(test_crash=True)])
    assert caught.value.signal == signal.SIGSEGV
    assert isolated._idle is None
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    assert _worker_pid() != pid


def test_a_worker_killed_while_idle_is_no_sessions_crash(served) -> None:
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    pid = _worker_pid()
    os.kill(pid, signal.SIGKILL)
    assert isolated._idle is not None
    assert isolated._idle.conn.poll(30)  # its pipe's end
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    assert _worker_pid() != pid


def test_a_session_left_by_the_runner_retires_its_worker(served) -> None:
    # An exception in the runner's callback leaves the session unfinished: that worker
    # must never serve again (its pipe holds the rest of the old session).
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    pid = _worker_pid()

    def boom(progress: object) -> None:
        raise RuntimeError("the runner failed")

    with pytest.raises(RuntimeError):
        isolated.run([_spec(time_based=True, runtime_ns=30_000_000_000)], on_progress=boom,
                     poll_interval=0.01)
    assert isolated._idle is None
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running I/O
        os.kill(pid, 0)
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    assert _worker_pid() != pid


def test_a_worker_of_another_process_state_is_not_reused(served) -> None:
    assert isolated.run([_spec()]).jobs[0].read.ios == 256
    pid = _worker_pid()
    old = os.umask(0o077)
    try:
        assert isolated.run([_spec()]).jobs[0].read.ios == 256
        assert _worker_pid() != pid  # a worker takes on the runner's state when it starts
    finally:
        os.umask(old)
