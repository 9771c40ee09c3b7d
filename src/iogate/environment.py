"""The environment a result was measured in: host, kernel, CPU, memory."""

from __future__ import annotations

import os
import platform
import socket

from iogate import __version__


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def _mem_total_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def capture() -> dict[str, object]:
    """Facts about this machine that matter when comparing results."""
    uname = platform.uname()
    return {
        "host": socket.gethostname(),
        "kernel": uname.release,
        "os": uname.system,
        "machine": uname.machine,
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": _mem_total_bytes(),
        "python": platform.python_version(),
        "iogate_version": __version__,
    }
