"""Shared fixtures and settings for iogate's own tests.

The tests run against the installed package (``bash scripts/setup.sh test``). Hypothesis runs
derandomized in CI so a red build is reproducible.
"""

from __future__ import annotations

import contextlib
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

# pytester's in-process runs drop, when they end, every module imported during them, and
# numpy's extension cannot be loaded twice in one process: the scientific modules the
# history's change detection uses are imported once here, before any such run.
for _module in ("numpy", "scipy.stats", "ruptures"):
    with contextlib.suppress(ImportError):  # the history extra is a test dependency
        __import__(_module)


def pytest_configure(config: pytest.Config) -> None:
    """The files iogate makes in tests are recorded in a ledger of this session's own
    (IOGATE_STATE_DIR), never in the user's ~/.local/state/iogate; the commands tests run and
    pytest-xdist's workers inherit it."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        return
    state = tempfile.mkdtemp(prefix="iogate-state-")
    os.environ["IOGATE_STATE_DIR"] = state
    config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))


@pytest.fixture(autouse=True)
def _laid_out_as_a_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """iogate lays its output out for COLUMNS where it is set, else for a CI log's 120
    columns: every test sees the latter unless it sets COLUMNS itself (pytest-xdist's
    workers inherit COLUMNS=80, which a run alone does not)."""
    monkeypatch.delenv("COLUMNS", raising=False)


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


def _postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a Unix socket in a temporary directory, started
    for the session and removed afterwards; its connection URL without a database. Skipped,
    saying why, where it cannot start (no PostgreSQL server installed, not root)."""
    import subprocess

    bindir = _postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL tests need the server (apt-get install postgresql; "
                    "bash scripts/setup.sh test installs it)")
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("PostgreSQL tests start a cluster as the postgres user: run as root")
    base = Path(tempfile.mkdtemp(prefix="iogate-pg-"))
    base.chmod(0o755)
    shutil.chown(base, "postgres")
    port = 20000 + os.getpid() % 20000
    as_pg = ["runuser", "-u", "postgres", "--"]
    data = base / "data"

    def pg(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*as_pg, *argv], capture_output=True, text=True, timeout=120)

    try:
        made = pg(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "iogate")
        started = made.returncode == 0 and pg(
            str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(base / "log"), "-o",
            f"-k {base} -p {port} -c listen_addresses='' -c fsync=off", "start"
        ).returncode == 0
        if not started:
            log = (base / "log").read_text() if (base / "log").exists() else made.stderr
            pytest.skip(f"the PostgreSQL test cluster did not start: {log.strip()[-400:]}")
        yield f"postgresql://iogate@/?host={base}&port={port}"
    finally:
        if data.exists():
            pg(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str, request: pytest.FixtureRequest) -> str:
    """The URL of a new, empty database of the test cluster, for this test alone."""
    import re
    import uuid

    import psycopg

    name = "t_" + re.sub(r"[^a-z0-9]", "_", request.node.name.lower())[:40] + "_" \
        + uuid.uuid4().hex[:8]
    with psycopg.connect(postgres_server.replace("/?", "/postgres?"),
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres_server.replace("/?", f"/{name}?")
