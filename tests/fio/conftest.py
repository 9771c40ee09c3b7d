"""Fixtures of the fio tests: a fleet of real fio servers on loopback ports, and a directory
on a disk-backed filesystem where fio and iogate share their files."""

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.fio.fleet import fleet  # noqa: F401 - a fixture, offered to every test here


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    """A directory on a disk-backed filesystem (O_DIRECT), removed at the end."""
    from iogate.plan import scratch_dir

    path = Path(tempfile.mkdtemp(prefix="iogate-fio-", dir=scratch_dir()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
