"""A fleet of real `fio --server` daemons on free loopback ports, for tests.

`fleet` (a fixture) starts n servers and waits until they listen; each `Server` can tell when
it runs a job (read from /proc, not guessed from a delay) and can be killed whole.
"""

from __future__ import annotations

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


@dataclass
class Server:
    host: Host
    proc: subprocess.Popen[bytes]

    def running_a_job(self) -> bool:
        """Whether the server has forked a job process (a descendant three levels down)."""
        level = [self.proc.pid]
        for _ in range(3):
            level = [c for pid in level for c in children(pid)]
        return bool(level)

    def kill(self) -> None:
        """The host dies: the server and every process it forked. fio's connection handler
        leaves the server's process group, so the tree is walked: frozen first (nothing
        forks or is orphaned meanwhile), then killed."""
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in _tree(self.proc.pid):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        self.proc.wait()


def _tree(root: int) -> list[int]:
    """root and all its descendants."""
    out, level = [], [root]
    while level:
        out += level
        level = [c for pid in level for c in children(pid)]
    return out


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
            proc = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], cwd=tmp_path,
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


