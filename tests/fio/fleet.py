"""A fleet of real `fio --server` daemons on free loopback ports, for tests.

`fleet` (a fixture) starts n servers and waits until they listen; each `Server` can tell when
it runs a job (read from /proc, not guessed from a delay), can be frozen (SIGSTOP) and thawed
(SIGCONT), whole or only its job processes, and can be killed whole (a frozen one too: the
fixture kills every server at teardown, with every process it forked, orphaned or not).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.fio.common import children

from iogate.fio.hosts import Host

START_TIMEOUT_S = 10.0
CPU_TICKS_PAST_STARTUP = 3


@dataclass
class Server:
    host: Host
    proc: subprocess.Popen[bytes]

    def job_pids(self) -> list[int]:
        """The server's job processes (descendants three levels down: connection handler,
        backend, job)."""
        level = [self.proc.pid]
        for _ in range(3):
            level = [c for pid in level for c in children(pid)]
        return level

    def running_a_job(self) -> bool:
        """Whether the server has forked a job process."""
        return bool(self.job_pids())

    def job_past_startup(self) -> bool:
        """Whether a job process has used CPU_TICKS_PAST_STARTUP of CPU time: a job of the
        null engine then runs its I/O loop (it starts in well under one tick, and only
        there does it spin). One frozen before that is seen by fio's server as a job that
        never started, which it gives up on itself ("job startup hung? exiting.")."""
        for pid in self.job_pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # ended meanwhile
            if int(fields[11]) + int(fields[12]) >= CPU_TICKS_PAST_STARTUP:  # utime, stime
                return True
        return False

    def members(self) -> list[int]:
        """The server and every process it forked, those orphaned too (a job whose handler
        ended): fio forks without exec, so all share the server's command line, whose port
        is this server's alone. fio's connection handler and jobs leave the server's process
        group and session, so neither finds them."""
        argv = b"".join(a.encode() + b"\0" for a in _argv(self.host.port))
        out = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and (entry / "cmdline").read_bytes() == argv:
                    out.append(int(entry.name))
            except OSError:
                pass  # ended meanwhile
        return out

    def freeze(self, *, jobs_only: bool = False) -> None:
        """The host stops answering: SIGSTOP to the server and every process it forked (or
        to its job processes only)."""
        _send(signal.SIGSTOP, self.job_pids() if jobs_only else self.members())

    def thaw(self) -> None:
        """SIGCONT to the server and every process it forked."""
        _send(signal.SIGCONT, self.members())

    def kill(self) -> None:
        """The host dies: the server and every process it forked, frozen first (nothing
        forks meanwhile), then killed."""
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            _send(sig, self.members())
        self.proc.wait()


def _argv(port: int) -> list[str]:
    return ["fio", f"--server=ip:127.0.0.1,{port}"]


def _send(sig: int, pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port (read from /proc, not by connecting,
    which the server would take for a client)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        if state == "0A" and local == f"0100007F:{port:04X}":
            return True
    return False


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Callable[[int], list[Server]]]:
    """start(n): n fio servers on free loopback ports, listening; all killed at teardown."""
    started: list[Server] = []

    def start(n: int) -> list[Server]:
        servers = []
        for i in range(n):
            port = free_port()
            log = open(tmp_path / f"server-{i}.log", "wb")  # noqa: SIM115 - closed with fio
            proc = subprocess.Popen(_argv(port), cwd=tmp_path,
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True)
            log.close()
            servers.append(Server(Host("127.0.0.1", port), proc))
            started.append(servers[-1])
        deadline = time.monotonic() + START_TIMEOUT_S
        for s in servers:
            while not _listening(s.host.port):
                assert s.proc.poll() is None, f"fio server on {s.host} exited: " + \
                    (tmp_path / f"server-{servers.index(s)}.log").read_text()
                assert time.monotonic() < deadline, f"fio server on {s.host} never listened"
                time.sleep(0.01)
        return servers

    try:
        yield start
    finally:
        for s in started:
            s.kill()


