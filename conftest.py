"""Shared fixtures and settings for iogate's own tests.

The tests run against the installed package (``bash scripts/setup.sh test``). Hypothesis runs
derandomized in CI so a red build is reproducible.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    from hypothesis import settings
except ImportError:  # pragma: no cover - hypothesis is a test dependency
    settings = None

if settings is not None:
    settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
    settings.register_profile("dev", deadline=None)
    settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO = Path(__file__).resolve().parent


@pytest.fixture
def disk_dir() -> Iterator[Path]:
    """A temporary directory on a disk-backed filesystem, so O_DIRECT works (unlike tmpfs)."""
    from iogate.plan import scratch_dir

    path = Path(tempfile.mkdtemp(prefix="iogate-test-", dir=scratch_dir()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def repo_root() -> Path:
    return REPO
