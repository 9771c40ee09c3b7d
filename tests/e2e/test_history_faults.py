"""A history store can neither hang a run, lose it, nor leak a password: each fault provoked
for real (a lock held by another process, signals, FIFOs, devices, read-only mounts, damaged
and foreign files, values iogate never writes, a PostgreSQL URL with secrets), and every run
checked: the results file holds every case that finished, the store's bytes are unchanged
where nothing may be written, no traceback, and no secret in anything iogate writes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from iogate.history import SCHEMA_LOCK, SCHEMA_VERSION, record
from iogate.report import SCHEMA_VERSION as RESULTS_VERSION

IOGATE = [sys.executable, "-m", "iogate"]
QUICK = """\
suite: h
workloads:
  - name: quick
    ioengine: null
    rw: randread
    size: 1MiB
"""
# A quick case, then one that lasts long enough for the store to be locked while it runs.
TWO = """\
suite: two
workloads:
  - name: a
    ioengine: null
    rw: randread
    size: 1MiB
  - name: b
    ioengine: null
    rw: randread
    bs: 4k
    size: 4MiB
    rate_iops: 1000
    runtime: 3s
    time_based: true
"""
JUDGED = """\
suite: judged
workloads:
  - name: paced
    ioengine: null
    rw: randread
    size: 1MiB
    expect:
      read.iops: ">= 0.5 * history"
"""
WAITING = "waiting for the history store"
# A second process that holds a SQLite store's lock (BEGIN EXCLUSIVE: no other process may
# read or write it) until its standard input closes.
SQLITE_LOCKER = """\
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""
# The same for PostgreSQL: the lock held while a store's schema is made or checked.
POSTGRESQL_LOCKER = """\
import psycopg, sys
conn = psycopg.connect(sys.argv[1])
conn.execute("SELECT pg_advisory_xact_lock(%s)", (int(sys.argv[2]),))
print("locked", flush=True)
sys.stdin.read()
conn.rollback()
"""


def iogate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``iogate ARGS``, its output laid out on lines as wide as it needs: these tests read
    messages whole (how they wrap to a log's width is tests/e2e/test_output_width.py's)."""
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "100000"})


def digest(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def document(iops: float = 1000.0) -> dict[str, object]:
    return {"schema_version": RESULTS_VERSION, "iogate_version": "0.1.0",
            "created": "2026-11-24T08:00:00+00:00", "environment": {"host": "node-7"},
            "cases": [{"id": "judged.suite.yaml::paced", "outcome": "passed",
                       "metrics": {"read.iops": iops}, "environment": {}}]}


@contextlib.contextmanager
def lock_held(store: str) -> Iterator[subprocess.Popen[str]]:
    """The store's lock, held by another process until the block ends (or its stdin is
    closed)."""
    script, args = ((POSTGRESQL_LOCKER, [store, str(SCHEMA_LOCK)])
                    if store.startswith("postgresql://") else (SQLITE_LOCKER, [store]))
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        release(proc)


def release(locker: subprocess.Popen[str]) -> None:
    if locker.stdin is not None and not locker.stdin.closed:
        locker.stdin.close()
    locker.wait(timeout=60)


class Running:
    """``iogate ARGS`` started in the background, its stderr read line by line as it
    comes."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.proc = subprocess.Popen([*IOGATE, *args], cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        self.stdout = ""

        def read_stdout() -> None:
            assert self.proc.stdout is not None
            self.stdout = self.proc.stdout.read()

        def read_stderr() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr.append(line)
                self.lines.put(line)

        self.readers = [threading.Thread(target=f, daemon=True)
                        for f in (read_stdout, read_stderr)]
        for reader in self.readers:
            reader.start()

    def said(self, text: str, timeout: float = 60.0) -> bool:
        """Whether a line of stderr says ``text`` (waited for until ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if text in self.lines.get(timeout=0.5):
                    return True
            except queue.Empty:
                if self.proc.poll() is not None and self.lines.empty():
                    break
        return False

    def end(self, timeout: float = 60.0) -> int:
        code = self.proc.wait(timeout=timeout)
        for reader in self.readers:
            reader.join(timeout=10)
        return code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()


def stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


# -- a lock that another process holds ------------------------------------------------------

@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_the_store_is_locked_keeps_every_finished_case(
        tmp_path: Path, signum: int) -> None:
    """The store is locked while the run's last case runs: the results document is written
    all the same (its trends said unread), the wait to record the run is said, and an
    interrupt then ends it: exit 130, every case in the results, nothing written in the
    store."""
    (tmp_path / "two.suite.yaml").write_text(TWO)
    store = str(tmp_path / "h.sqlite")
    record(store, document(), environ={})
    run = Running("run", "two.suite.yaml", "--history", store, "--json", "r.json",
                  "--markdown", "r.md", cwd=tmp_path)
    try:
        assert run.said("two.suite.yaml::a: passed"), run.stderr
        os.kill(run.proc.pid, signal.SIGSTOP)  # case b has just begun: lock the store now
        while not stopped(run.proc.pid):
            time.sleep(0.01)
        with lock_held(store):
            before = digest(store)
            os.kill(run.proc.pid, signal.SIGCONT)
            waited = run.said(WAITING, timeout=30)
            run.proc.send_signal(signum)
            code = run.end()
            assert digest(store) == before
    finally:
        run.kill()
    err = "".join(run.stderr)
    assert code == 130, err
    assert "Traceback" not in err, err
    assert waited, err
    assert "another process holds its lock" in err, err
    assert err.count(WAITING) == 1, err
    results = json.loads((tmp_path / "r.json").read_text())
    assert [(c["id"], c["outcome"]) for c in results["cases"]] == [
        ("two.suite.yaml::a", "passed"), ("two.suite.yaml::b", "passed")]
    assert "another process holds the history store's lock" in results["history"]["error"]
    assert (tmp_path / "r.md").exists()
    listed = iogate("history", store, cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout
    assert len(listed.stdout.splitlines()) == 1, listed.stdout


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_store_locked_before_the_run_is_waited_for_and_an_interrupt_ends_the_wait(
        tmp_path: Path, kind: str, request: pytest.FixtureRequest) -> None:
    """The store is locked when the run begins: its check waits, says so once, and an
    interrupt ends the wait at once (nothing ran); once the lock is released, the same wait
    ends and the run is recorded."""
    (tmp_path / "h.suite.yaml").write_text(QUICK)
    store = (str(request.getfixturevalue("postgres_url")) if kind == "postgresql"
             else str(tmp_path / "h.sqlite"))
    record(store, document(), environ={})
    with lock_held(store):
        run = Running("run", "h.suite.yaml", "--history", store, "--json", "r.json",
                      cwd=tmp_path)
        try:
            waited = run.said(WAITING)
            run.proc.send_signal(signal.SIGINT)
            code = run.end()
        finally:
            run.kill()
    err = "".join(run.stderr)
    assert code == 130, err
    assert "Traceback" not in err, err
    assert "h.suite.yaml::quick" not in err, err
    assert waited, err
    assert not (tmp_path / "r.json").exists()
    with lock_held(store) as locker:
        run = Running("run", "h.suite.yaml", "--history", store, "--json", "r.json",
                      cwd=tmp_path)
        try:
            waited = run.said(WAITING)
            release(locker)
            code = run.end()
        finally:
            run.kill()
    err = "".join(run.stderr)
    assert code == 0, err
    assert "run " in err, err
    assert "recorded, 1 case(s)" in err, err
    assert waited, err
    assert err.count(WAITING) == 1, err
    listed = iogate("history", store, cwd=tmp_path)
    assert len(listed.stdout.splitlines()) == 2, listed.stdout + listed.stderr


# -- destinations refused before the run ---------------------------------------------------

def _damaged_version(path: Path) -> None:
    record(str(path), document(), environ={})
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("UPDATE iogate_schema SET version = 'three'")
        db.commit()


def _newer(path: Path) -> None:
    record(str(path), document(), environ={})
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("INSERT INTO iogate_schema VALUES (99)")
        db.commit()


def _malformed(path: Path) -> None:
    record(str(path), document(), environ={})
    data = bytearray(path.read_bytes())
    data[100:] = b"\xa5" * (len(data) - 100)  # SQLite's header kept, its pages overwritten
    path.write_bytes(bytes(data))


def _not_sqlite(path: Path) -> None:
    path.write_text("kept notes, not a database\n" * 40)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a character device needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # what /dev/null is


@pytest.mark.parametrize(("make", "why"), [
    (_damaged_version, "a damaged history store: its schema version (table iogate_schema) "
                       "holds 'three', not a version number"),
    (_newer, f"schema version 99; this iogate reads version {SCHEMA_VERSION}"),
    (_malformed, "malformed"),
    (_not_sqlite, "not a SQLite database, so not a history store"),
    (_fifo, "not a regular file (a FIFO, device or socket)"),
    (_device, "not a regular file (a FIFO, device or socket)"),
])
def test_what_cannot_be_a_store_is_refused_before_the_run(tmp_path: Path, make: object,
                                                          why: str) -> None:
    (tmp_path / "h.suite.yaml").write_text(QUICK)
    dest = tmp_path / "dest"
    make(dest)  # type: ignore[operator]
    before = digest(dest) if dest.is_file() else None
    proc = iogate("run", "h.suite.yaml", "--history", str(dest), "--json", "r.json",
                  cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"iogate: --history {dest}: " in proc.stderr, proc.stderr
    assert why in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "h.suite.yaml::quick" not in proc.stderr
    assert not (tmp_path / "r.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest", "h.suite.yaml"]
    assert (digest(dest) if dest.is_file() else None) == before


def test_dev_null_is_refused_without_a_journal_beside_it(tmp_path: Path) -> None:
    (tmp_path / "h.suite.yaml").write_text(QUICK)
    journal = Path("/dev/null-journal")
    there = journal.exists()
    proc = iogate("run", "h.suite.yaml", "--history", "/dev/null", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--history /dev/null: not a regular file" in proc.stderr
    assert journal.exists() == there


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A directory mounted read-only (a bind mount of a writable one), holding a store."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    source, mount = tmp_path / "source", tmp_path / "ro"
    source.mkdir()
    mount.mkdir()
    record(str(source / "h.sqlite"), document(), environ={})
    done = subprocess.run(["mount", "--bind", str(source), str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount: {done.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], check=True)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_a_store_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path,
                                                                  read_only: Path) -> None:
    (tmp_path / "h.suite.yaml").write_text(QUICK)
    before = digest(read_only / "h.sqlite")
    for dest, why in ((read_only / "h.sqlite", "cannot be written (a read-only file or "
                       "file system)"),
                      (read_only / "new.sqlite", f"its directory {read_only} cannot be "
                       "written")):
        proc = iogate("run", "h.suite.yaml", "--history", str(dest), "--json", "r.json",
                      cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert f"--history {dest}: {why}" in proc.stderr, proc.stderr
        assert "h.suite.yaml::quick" not in proc.stderr
        assert not (tmp_path / "r.json").exists()
    assert digest(read_only / "h.sqlite") == before
    assert sorted(p.name for p in read_only.iterdir()) == ["h.sqlite"]


# -- values iogate never writes -------------------------------------------------------------

def _store_with(path: Path, *statements: str) -> str:
    """A store of six passing runs, then changed by ``statements`` as a damaged one would
    have been (the metrics table first made without its constraints)."""
    for i in range(6):
        record(str(path), document(1000.0 + i), environ={})
    with contextlib.closing(sqlite3.connect(path)) as db:
        for statement in ("CREATE TABLE loose AS SELECT * FROM metrics", "DROP TABLE metrics",
                          "ALTER TABLE loose RENAME TO metrics", *statements):
            db.execute(statement)
        db.commit()
    return str(path)


@pytest.mark.parametrize(("statement", "what"), [
    ("UPDATE metrics SET value = 'fast'", "the value holds 'fast', not a number"),
    ("UPDATE metrics SET value = NULL", "the value holds None, not a number"),
    ("UPDATE metrics SET value = 1e308", "the value holds 1e+308, not a number of at most"),
    ("UPDATE metrics SET value = 1e999", "the value holds inf, not a number"),
    ("UPDATE runs SET labels = '[1]'", "the labels holds '[1]', not a JSON object"),
    ("UPDATE runs SET commit_id = x'c0ffee'",
     "the commit_id holds b'\\xc0\\xff\\xee', not text or nothing"),
])
def test_a_value_iogate_never_writes_is_named_never_a_traceback(tmp_path: Path,
                                                                statement: str,
                                                                what: str) -> None:
    store = _store_with(tmp_path / "h.sqlite", statement)
    (tmp_path / "judged.suite.yaml").write_text(JUDGED)
    for args in (("history", store), ("history", store, "--metric", "read.iops"),
                 ("detect", store, "--metric", "read.iops")):
        proc = iogate(*args, cwd=tmp_path)
        if args == ("history", store) and statement.startswith("UPDATE metrics"):
            assert proc.returncode == 0, proc.stderr  # the listing reads no value
            continue
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        assert f"iogate: {store}: a damaged history store: run " in proc.stderr, proc.stderr
        assert what in proc.stderr, proc.stderr
    # A run judged against it keeps its results: the expectation is said unjudgeable.
    proc = iogate("run", "judged.suite.yaml", "--history", store, "--json", "r.json",
                  cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["outcome"] == "failed", case
    assert what in case["checks"][0]["reason"], case


def test_damaged_values_in_postgresql_are_named_too(tmp_path: Path, postgres_url: str) -> None:
    import psycopg

    for i in range(6):
        record(postgres_url, document(1000.0 + i), environ={})
    for statement, what in (
            ("UPDATE metrics SET value = 'NaN'", "the value holds nan, not a number"),
            ("UPDATE metrics SET value = NULL", "the value holds None, not a number"),
            ("UPDATE runs SET labels = '{'", "the labels holds '{', not a JSON object")):
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE metrics ALTER COLUMN value DROP NOT NULL")
            conn.execute(statement)
        proc = iogate("detect", postgres_url, "--metric", "read.iops", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "a damaged history store: run " in proc.stderr, proc.stderr
        assert what in proc.stderr, proc.stderr
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("UPDATE metrics SET value = 1000")
            conn.execute("UPDATE runs SET labels = '{}'")


# -- secrets ----------------------------------------------------------------------------------

def test_no_password_of_a_postgresql_url_is_ever_written(tmp_path: Path,
                                                         postgres_url: str) -> None:
    """The password of the URL's user and of its query (the test server trusts any) appear
    in no output, file or message, the driver's included."""
    base, _, query = postgres_url.partition("?")
    url = (base.replace("postgresql://iogate@", "postgresql://iogate:Pw-User-7@")
           + f"?{query}&password=Pw-Query-7&sslpassword=Pw-Ssl-7")
    (tmp_path / "h.suite.yaml").write_text(QUICK)
    said = []
    for args in (
            ("run", "h.suite.yaml", "--history", url, "--json", "r.json", "--markdown",
             "r.md", "--openmetrics", "r.prom", "--label", "lot=A"),
            ("history", url), ("history", url, "--metric", "read.iops", "-k", "quick"),
            ("detect", url), ("history", "accept", url, "zz"),
            ("history", url.replace(f"port={query.rpartition('port=')[2]}", "port=1")),
            ("run", "h.suite.yaml", "--history",
             url.replace("Pw-User-7", "Pw%zzUser-7"))):
        proc = iogate(*args, cwd=tmp_path)
        said.append(proc.stdout + proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
    for path in ("r.json", "r.md", "r.prom"):
        said.append((tmp_path / path).read_text())
    assert "iogate:***@" in said[0], said[0]
    assert "password=***" in said[0], said[0]
    assert "recorded, 1 case(s)" in said[0]
    assert json.loads(said[-3])["history"]["store"].startswith("postgresql://iogate:***@")
    assert "no run's id starts with 'zz'" in said[4]
    assert "cannot connect" in said[5]
    assert "invalid percent-encoded token" in said[6], said[6]
    for text in said:
        assert "Pw-" not in text, text
        assert "Pw%" not in text, text
