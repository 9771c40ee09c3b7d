"""What the fio tests share: a job spec with small defaults, and the process tree read from
/proc (to see when fio runs a job, instead of guessing a delay)."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from iogate.job import JobSpec

KiB, MiB = 1024, 1024 * 1024
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def spec(**kw: Any) -> JobSpec:
    """A 1 MiB null-engine random read, changed by the keywords."""
    base: dict[str, Any] = dict(engine="null", rw="randread", size=1 * MiB, rwmixread=100)
    base.update(kw)
    return JobSpec(**base)


def children(pid: int) -> list[int]:
    """The child processes of pid (of all its threads)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out
