"""The results store: every run recorded with its cases' metrics and repeat samples, the
environment that matters for gating (device model, firmware, host, kernel, iogate version)
and the build's identity (from the CI's environment, or ``--label KEY=VALUE``), so that
runs can be looked back on across builds.

A store is a SQLite database (a file path, created on first use) or a PostgreSQL database
that a team shares (a ``postgresql://`` URL; the driver is the ``postgresql`` extra). Both
hold the same schema, this module's, with a version (``iogate_schema``): a store written by
a newer iogate is refused, an older one is migrated. A run is written in one transaction
under a run id made by the writer (a UUID): several runners recording into one store at
once never lose or duplicate a run.

The cases recorded are those a baseline would keep (passed or failed: measured in full),
read from the results document with :meth:`iogate.baseline.Baseline.from_results`, each with
its outcome. :func:`load` reads them back as one series of runs per case, device and metric;
``load(..., norm=True)`` only the runs that form the norm a ``history`` expectation is judged
against: a case that passed, or one a person accepted with :func:`accept` (``iogate history
accept``). A failed run never enters the norm by itself, however long a regression lasts.

A store can neither hang a run, lose it, nor leak a password. :func:`check_destination`
refuses, before any work, what cannot be one (a FIFO or device is never opened; a file that
is not SQLite, one that cannot be written, a damaged store or a newer one). Every wait for
the lock that another process holds is said once on stderr, bounded (:data:`BUSY_TIMEOUT_S`)
and ended by an interrupt, even one held off (it comes when the hold ends): SQLite is tried
every :data:`STEP_S` from Python, never left waiting in C where no signal ends it. Every
value read is checked where it is read (:meth:`_Db.rows`): a damaged one is a HistoryError
naming the store, run and case. :func:`shown` is a store's name wherever one is shown, its
secrets hidden, in the driver's messages too.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import getpass
import hashlib
import json
import math
import os
import signal
import sqlite3
import stat
import sys
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate import ids
from iogate.baseline import Baseline, BaselineError
from iogate.errors import IogateError
from iogate.interrupts import SIGNALS

SCHEMA_VERSION = 3
BUSY_TIMEOUT_S = 120.0  # the longest a store's lock is waited for (another run recording)
STEP_S = 0.1  # how often the lock is tried again while another process holds it
CONNECT_TIMEOUT_S = 30  # PostgreSQL: the longest a connection is waited for
SQLITE_HEADER = b"SQLite format 3\x00"  # how every SQLite database file begins
# The largest value a store may hold: none measured comes near, and the arithmetic of a
# verdict on a larger one (sums, squares) could overflow.
LARGEST_VALUE = 1e100
SCHEMA_LOCK = 0x696F67617465  # PostgreSQL: the advisory lock held while the schema is made

# The build's identity, from the first variable of each list that the CI has set.
CI_VARIABLES: dict[str, tuple[str, ...]] = {
    "commit": ("GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "BUILD_SOURCEVERSION",
               "GIT_COMMIT"),
    "build": ("GITHUB_RUN_NUMBER", "CI_PIPELINE_IID", "BUILDKITE_BUILD_NUMBER",
              "BUILD_BUILDNUMBER", "BUILD_NUMBER"),
    "branch": ("GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH",
               "BUILD_SOURCEBRANCHNAME", "GIT_BRANCH"),
}

# One schema for both databases; {key} is the case key's column type, the one difference.
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS iogate_schema (version INTEGER NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY,
        recorded_at TEXT NOT NULL,
        created TEXT,
        iogate_version TEXT,
        host TEXT,
        kernel TEXT,
        commit_id TEXT,
        build TEXT,
        branch TEXT,
        labels TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS cases (
        case_key {key},
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        case_id TEXT NOT NULL,
        suite_file TEXT,
        suite_hash TEXT,
        device_model TEXT,
        firmware TEXT,
        outcome TEXT,
        accepted_at TEXT,
        accepted_by TEXT,
        UNIQUE (run_id, case_id))""",
    """CREATE TABLE IF NOT EXISTS metrics (
        case_key BIGINT NOT NULL REFERENCES cases (case_key),
        name TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (case_key, name))""",
    """CREATE TABLE IF NOT EXISTS samples (
        case_key BIGINT NOT NULL REFERENCES cases (case_key),
        name TEXT NOT NULL,
        repeat_index INTEGER NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (case_key, name, repeat_index))""",
    """CREATE INDEX IF NOT EXISTS cases_by_case ON cases (case_id, run_id)""",
    """CREATE INDEX IF NOT EXISTS runs_by_time ON runs (recorded_at)""",
)
_KEY_TYPE = {"sqlite": "INTEGER PRIMARY KEY",
             "postgresql": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"}


# A case whose outcome is not "passed" is in the norm once accepted (accepted_at is set).
_IN_NORM = "(c.outcome = 'passed' OR c.accepted_at IS NOT NULL)"
# What the migration to version 3 says accepted the cases recorded before outcomes were.
BEFORE_OUTCOMES = "iogate (recorded before outcomes were kept)"


class HistoryError(IogateError):
    """A store that cannot be used: not a store, a newer schema, a label that is not one."""


def parse_labels(texts: Sequence[str] | None) -> dict[str, str]:
    """``--label KEY=VALUE`` (repeatable) as a mapping; a HistoryError for one without a key
    or an ``=``."""
    out: dict[str, str] = {}
    for text in texts or ():
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise HistoryError(f"--label {text!r}: write KEY=VALUE, e.g. firmware_build=1234")
        out[key.strip()] = value.strip()
    return out


def build_identity(environ: Mapping[str, str]) -> dict[str, str]:
    """commit, build and branch as the CI's environment gives them (those it sets)."""
    out: dict[str, str] = {}
    for key, names in CI_VARIABLES.items():
        value = next((environ[n] for n in names if environ.get(n)), None)
        if value is not None:
            out[key] = value
    return out


def is_url(dest: str) -> bool:
    """Whether ``dest`` names a PostgreSQL store (a URL) rather than a SQLite file."""
    return dest.startswith(("postgresql://", "postgres://"))


def _hidden(dest: str) -> tuple[str, list[str]]:
    """A URL with its secrets hidden, and those secrets as written and decoded: the password
    of its user information (up to the last ``@`` before the query, so that an ``@`` left
    in a password hides it all) and the value of every query parameter whose name says
    ``pass`` (password, sslpassword, passfile)."""
    scheme, _, rest = dest.partition("://")
    body, question, query = rest.partition("?")
    secrets = []
    userinfo, at, hosts = body.rpartition("@")
    user, colon, password = userinfo.partition(":")
    if at and colon:
        body = f"{user}:***@{hosts}"
        secrets.append(password)
    params = []
    for param in query.split("&") if question else ():
        key, eq, value = param.partition("=")
        if eq and "pass" in urllib.parse.unquote(key).lower():
            secrets.append(value)
            param = f"{key}=***"
        params.append(param)
    secrets += [urllib.parse.unquote(s) for s in secrets]
    return (f"{scheme}://{body}{question}{'&'.join(params)}",
            sorted({s for s in secrets if s}, key=len, reverse=True))


def shown(dest: str, text: str | None = None) -> str:
    """``dest`` as anything iogate writes may show it: a URL's password and password-like
    query parameters hidden (``***``). With ``text`` (a message, a driver's too, which may
    quote the URL or a part of it): that text with each of them hidden."""
    if not is_url(dest):
        return dest if text is None else text
    name, secrets = _hidden(dest)
    if text is None:
        return name
    text = text.replace(dest, name)
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def _sqlite_file(path: str) -> bool | None:
    """Whether the file at ``path`` holds a SQLite database (False: it is empty, a new
    store; None: there is none), found without opening a FIFO or a device: a HistoryError
    for one, for a directory and for a file that SQLite did not write."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HistoryError(f"{path}: cannot be read: {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise HistoryError(f"{path}: is a directory; name a file")
    head = None
    if stat.S_ISREG(mode):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:  # a regular file still: not swapped for a FIFO meanwhile
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    head = os.read(fd, len(SQLITE_HEADER))
            finally:
                os.close(fd)
        except OSError as exc:
            raise HistoryError(f"{path}: cannot be read: {exc.strerror}") from None
    if head is None:
        raise HistoryError(f"{path}: not a regular file (a FIFO, device or socket): a "
                           "history store is a SQLite file")
    if head and head != SQLITE_HEADER:
        raise HistoryError(f"{path}: not a SQLite database, so not a history store: name "
                           "a new file, or a store iogate made")
    return bool(head)


def check_destination(dest: str, option: str = "--history") -> None:
    """Refuse, before any work, a destination that cannot be a store: a HistoryError that
    starts with ``option`` and says why. A SQLite path must be a regular file (never opened
    otherwise) that SQLite wrote, or none (the store is made by the run, in a directory
    that exists); both must be writable. A store there already, and a PostgreSQL database
    (its schema made now), is opened and its schema checked (a newer one, a damaged one),
    so that a run is never lost to a store found unusable once it is over."""
    try:
        if is_url(dest):
            with _store(dest, create=True):
                return
        if "://" in dest:
            raise HistoryError(f"{dest}: a store is a SQLite file path or a "
                               "postgresql://user@host/database URL")
        holds = _sqlite_file(dest)
        folder = os.path.dirname(dest) or "."
        if not os.path.isdir(folder):
            raise HistoryError(f"{dest}: the directory {folder} does not exist")
        if holds is not None and not os.access(dest, os.W_OK):
            raise HistoryError(f"{dest}: cannot be written (a read-only file or file "
                               "system): name a store iogate may write")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise HistoryError(f"{dest}: its directory {folder} cannot be written (a "
                               "read-only one, or not yours), and SQLite keeps its journal "
                               "beside the store")
        if holds:
            with _store(dest, create=False):
                pass
    except HistoryError as exc:
        raise HistoryError(f"{option} {exc}") from None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError
    return value


def _text_or_none(value: Any) -> str | None:
    return None if value is None else _text(value)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not abs(value) <= LARGEST_VALUE:
        raise ValueError
    return float(value)


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError
    return value


def _version_number(value: Any) -> int:
    version = _whole(value)
    if version < 1:
        raise ValueError
    return version


def _flag(value: Any) -> bool:
    if value not in (0, 1):
        raise ValueError
    return bool(value)


def _labels(value: Any) -> dict[str, str]:
    labels = json.loads(_text(value))
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError
    return labels


_TEXT, _MAYBE = ("text", _text), ("text or nothing", _text_or_none)
# What each column that is read from a store must hold (by its name in the query), and the
# value it is read as. A query reads no other column.
_COLUMNS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "version": ("a version number", _version_number),
    "run_id": _TEXT, "recorded_at": _TEXT, "case_id": _TEXT, "name": _TEXT,
    "host": _MAYBE, "commit_id": _MAYBE, "build": _MAYBE, "branch": _MAYBE,
    "device_model": _MAYBE, "firmware": _MAYBE, "outcome": _MAYBE,
    "labels": ("a JSON object of text", _labels),
    "value": (f"a number of at most {LARGEST_VALUE:g}", _number),
    "case_key": ("a whole number", _whole),
    "accepted": ("0 or 1", _flag), "in_norm": ("0 or 1", _flag),
}


class _Db:
    """One connection to a store, SQLite or PostgreSQL, in autocommit mode with explicit
    transactions. Statements are written once, in SQLite's spelling (``?`` parameters,
    ``instr``), and translated for PostgreSQL. ``wait_s``: the longest the store's lock is
    waited for (0: tried once)."""

    def __init__(self, dest: str, wait_s: float = BUSY_TIMEOUT_S) -> None:
        self.name = shown(dest)
        self.dest = dest
        self.wait_s = wait_s
        self.kind = "postgresql" if is_url(dest) else "sqlite"
        self.errors: tuple[type[BaseException], ...]
        if self.kind == "postgresql":
            try:
                import psycopg
            except ImportError:
                raise HistoryError(f"{self.name}: a PostgreSQL store needs the psycopg "
                                   "driver: pip install 'iogate[postgresql]'") from None
            self.errors = (psycopg.Error,)
            try:
                # libpq waits at least 2 s; a lock, as long as SQLite's is waited for.
                self.conn: Any = psycopg.connect(
                    dest, autocommit=True,
                    connect_timeout=max(2, min(CONNECT_TIMEOUT_S, math.ceil(wait_s))))
                self.conn.execute("SELECT set_config('lock_timeout', %s, false)",
                                  (f"{max(wait_s, STEP_S) * 1000:.0f}ms",))
            except psycopg.Error as exc:
                raise HistoryError(f"{self.name}: cannot connect to the history store: "
                                   f"{self.why(exc)}") from None
        else:
            self.errors = (sqlite3.Error,)
            try:
                self.conn = sqlite3.connect(dest, timeout=STEP_S, isolation_level=None)
            except sqlite3.Error as exc:
                raise HistoryError(f"{self.name}: cannot open the history store: "
                                   f"{self.why(exc)}") from None

    def why(self, exc: BaseException) -> str:
        """The driver's message, first line, without the store's secrets."""
        return shown(self.dest, (str(exc).strip().splitlines() or [type(exc).__name__])[0])

    def _sql(self, sql: str) -> str:
        if self.kind == "postgresql":
            return sql.replace("?", "%s").replace("instr(", "strpos(")
        return sql

    def wait(self, attempt: Callable[[], bool]) -> None:
        """``attempt()`` until it is done (True) while another process holds the store's
        lock: tried again every :data:`STEP_S`, from Python (where an interrupt ends the
        wait), the wait said once on stderr; a HistoryError after ``wait_s``, or as soon as
        an interrupt is held off meanwhile (it comes when the hold ends)."""
        since = None
        while not attempt():
            now = time.monotonic()
            if since is None:
                since = now
                if self.wait_s:
                    print(f"iogate: waiting for the history store {self.name}: another "
                          f"process holds its lock (for up to {self.wait_s:g} s)",
                          file=sys.stderr, flush=True)
            interrupted = bool(signal.sigpending() & set(SIGNALS))
            if interrupted or now - since >= self.wait_s:
                raise HistoryError(
                    f"{self.name}: another process holds the history store's lock"
                    + ("; interrupted while waiting for it" if interrupted else
                       f" (waited {self.wait_s:g} s): try again once it is done"
                       if self.wait_s else ""))
            if self.kind == "postgresql":
                time.sleep(STEP_S)

    def _done(self, call: Callable[[], object]) -> bool:
        """``call()``; False when SQLite found the lock held (busy), to be tried again."""
        try:
            call()
        except sqlite3.OperationalError as exc:
            if str(exc) != "database is locked":  # SQLITE_BUSY (its code: Python 3.11)
                raise
            return False
        return True

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Any:
        cursor = self.conn.cursor()
        self.wait(lambda: self._done(lambda: cursor.execute(self._sql(sql), tuple(args))))
        return cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            cursor = self.conn.cursor()
            self.wait(lambda: self._done(lambda: cursor.executemany(
                self._sql(sql), [tuple(r) for r in rows])))

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows a query reads, each value checked and read as :data:`_COLUMNS` says
        for its column: a HistoryError naming the store, run, case and metric for a value
        that is not what iogate wrote."""
        cursor = self.execute(sql, args)
        names = [d[0] for d in cursor.description]
        out = []
        for row in cursor.fetchall():
            values = []
            for name, value in zip(names, row, strict=True):
                what, read = _COLUMNS[name]
                try:
                    values.append(read(value))
                except (TypeError, ValueError, OverflowError, RecursionError):
                    raise HistoryError(self._damaged(dict(zip(names, row, strict=True)),
                                                     name, what, value)) from None
            out.append(tuple(values))
        return out

    def _damaged(self, row: Mapping[str, Any], column: str, what: str, value: Any) -> str:
        where = ", ".join(f"{label} {row[key]}" for key, label in (
            ("run_id", "run"), ("case_id", "case"), ("name", "metric"))
            if key != column and isinstance(row.get(key), str))
        called = ("its schema version (table iogate_schema)" if column == "version"
                  else f"the {column}")
        text = repr(value)
        text = text[:60] + "..." if len(text) > 60 else text
        return (f"{self.name}: a damaged history store: {where + ': ' if where else ''}"
                f"{called} holds {text}, not {what} (restore the store from a copy, or "
                "record into a new one)")

    def begin(self) -> None:
        """A write transaction: on SQLite one writer at a time (the others wait)."""
        self.execute("BEGIN IMMEDIATE" if self.kind == "sqlite" else "BEGIN")

    def rollback(self) -> None:
        with contextlib.suppress(*self.errors):
            self.execute("ROLLBACK")

    def tables(self) -> set[str]:
        if self.kind == "sqlite":
            query = "SELECT name FROM sqlite_master WHERE type = 'table'"
        else:
            query = ("SELECT table_name FROM information_schema.tables WHERE "
                     "table_schema = current_schema()")
        return {r[0] for r in self.execute(query).fetchall()}

    def columns(self, table: str) -> set[str]:
        if self.kind == "sqlite":
            return {r[1] for r in self.execute(f"PRAGMA table_info({table})").fetchall()}
        return {r[0] for r in self.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = ?", (table,)).fetchall()}

    def close(self) -> None:
        with contextlib.suppress(*self.errors):
            self.conn.close()


@contextlib.contextmanager
def _store(dest: str, *, create: bool, wait_s: float = BUSY_TIMEOUT_S) -> Iterator[_Db]:
    """A connection to the store at ``dest`` whose schema is this module's (created when
    ``create``; migrated whenever older); closed afterwards. ``wait_s``: the longest its
    lock is waited for."""
    if not is_url(dest) and _sqlite_file(dest) is None and not create:
        raise HistoryError(f"{dest}: no such history store (iogate run --history {dest} "
                           "makes one)")
    db = _Db(dest, wait_s)
    try:
        _prepare(db, create)
        yield db
    except db.errors as exc:
        raise HistoryError(f"{db.name}: the history store cannot be used: {db.why(exc)}"
                           ) from None
    finally:
        db.close()


_OURS = {"runs", "cases", "metrics", "samples"}


def _current_case_ids(db: _Db) -> None:
    """Version 2: case ids of sweep points as written now (iogate.ids), so that the runs
    recorded before go on in the same series."""
    for (old,) in db.rows("SELECT DISTINCT case_id FROM cases"):
        if ids.current(old) != old:
            db.execute("UPDATE cases SET case_id = ? WHERE case_id = ?", (ids.current(old), old))


def _outcomes(db: _Db) -> None:
    """Version 3: each case's outcome, and who accepted it into the norm and when. The
    cases recorded before (outcome unknown) formed the norm then: they stay in it, accepted
    when they were recorded."""
    have = db.columns("cases")
    for column in ("outcome", "accepted_at", "accepted_by"):
        if column not in have:
            db.execute(f"ALTER TABLE cases ADD COLUMN {column} TEXT")
    db.execute("UPDATE cases SET accepted_at = (SELECT r.recorded_at FROM runs r WHERE "
               "r.run_id = cases.run_id), accepted_by = ? WHERE outcome IS NULL AND "
               "accepted_at IS NULL", (BEFORE_OUTCOMES,))


# What takes a store from the version before each one to it: statements, or a step that
# needs Python (each within the one transaction that makes or checks the schema).
_MIGRATIONS: dict[int, tuple[str | Callable[[_Db], None], ...]] = {
    2: (_current_case_ids,), 3: (_outcomes,)}


def _version(db: _Db) -> int:
    """The store's schema version: the highest of table iogate_schema, each of which must
    be a version (a whole number from 1); a HistoryError for a damaged table."""
    versions = [v for (v,) in db.rows("SELECT version FROM iogate_schema")]
    if not versions:
        raise HistoryError(f"{db.name}: a damaged history store: its schema version (table "
                           "iogate_schema) is empty")
    return max(versions)


def _prepare(db: _Db, create: bool) -> None:
    """Create, migrate or check the schema, in one transaction (writers making it at once
    wait for each other)."""
    try:
        db.begin()
    except db.errors as exc:
        raise HistoryError(f"{db.name}: not a history store ({db.why(exc)})") from None
    try:
        if db.kind == "postgresql":
            db.wait(lambda: bool(db.execute("SELECT pg_try_advisory_xact_lock(?)",
                                            (SCHEMA_LOCK,)).fetchone()[0]))
        tables = db.tables()
        if "iogate_schema" not in tables:
            # A SQLite file is the store alone; a PostgreSQL database may hold more.
            foreign = tables if db.kind == "sqlite" else tables & _OURS
            if foreign:
                raise HistoryError(f"{db.name}: a database, but not a history store (it "
                                   f"has tables {', '.join(sorted(foreign))})")
            if not create:
                raise HistoryError(f"{db.name}: an empty database, not a history store")
            for statement in _SCHEMA:
                db.execute(statement.replace("{key}", _KEY_TYPE[db.kind]))
            db.execute("INSERT INTO iogate_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        version = _version(db)
        if version > SCHEMA_VERSION:
            raise HistoryError(f"{db.name}: a history store of schema version {version}; "
                               f"this iogate reads version {SCHEMA_VERSION}: use a newer "
                               "iogate")
        # A store is brought up to date when it is read as well, so that it reads the same
        # cases as the suites that made them.
        if version < SCHEMA_VERSION:
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for migration in _MIGRATIONS[step]:
                    if callable(migration):
                        migration(db)
                    else:
                        db.execute(migration)
                db.execute("INSERT INTO iogate_schema (version) VALUES (?)", (step,))
        db.execute("COMMIT")
    except BaseException:
        db.rollback()
        raise


def _file_hash(path: str, cache: dict[str, str | None]) -> str | None:
    if path not in cache:
        try:
            cache[path] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            cache[path] = None
    return cache[path]


def record(dest: str, document: Mapping[str, Any], labels: Mapping[str, str] | None = None,
           environ: Mapping[str, str] | None = None) -> tuple[str, int]:
    """Record the run of a results document in the store at ``dest`` (created if missing);
    its run id and the number of cases recorded. ``environ``: where the CI's variables
    are read (default: the process's environment)."""
    environ = os.environ if environ is None else environ
    try:
        entries = Baseline.from_results(document, "the results").entries
    except BaselineError as exc:
        raise HistoryError(f"{shown(dest)}: the run was not recorded: {exc}") from None
    cases = [c for c in document.get("cases", []) if isinstance(c, Mapping)]
    files = {c.get("id"): c.get("file") for c in cases}
    # As Baseline.from_results reads it: a case without an outcome passed.
    outcomes = {c.get("id"): str(c.get("outcome", "passed")) for c in cases}
    shared = document.get("environment") or {}
    ci = build_identity(environ)
    run_id = str(uuid.uuid4())
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
    hashes: dict[str, str | None] = {}
    with _store(dest, create=True) as db:
        db.begin()
        try:
            db.execute("INSERT INTO runs (run_id, recorded_at, created, iogate_version, host, "
                       "kernel, commit_id, build, branch, labels) VALUES (?, ?, ?, ?, ?, ?, ?, "
                       "?, ?, ?)",
                       (run_id, now, document.get("created"), document.get("iogate_version"),
                        shared.get("host"), shared.get("kernel"), ci.get("commit"),
                        ci.get("build"), ci.get("branch"),
                        json.dumps(dict(labels or {}), sort_keys=True)))
            for entry in entries:
                suite_file = files.get(entry.case_id)
                (key,) = db.execute(
                    "INSERT INTO cases (run_id, case_id, suite_file, suite_hash, device_model, "
                    "firmware, outcome) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING case_key",
                    (run_id, entry.case_id, suite_file,
                     _file_hash(suite_file, hashes) if suite_file else None,
                     entry.environment.get("device_model"),
                     entry.environment.get("firmware"),
                     outcomes.get(entry.case_id, "passed"))).fetchone()
                db.executemany("INSERT INTO metrics (case_key, name, value) VALUES (?, ?, ?)",
                               [(key, name, value) for name, value in entry.metrics.items()])
                db.executemany("INSERT INTO samples (case_key, name, repeat_index, value) "
                               "VALUES (?, ?, ?, ?)",
                               [(key, name, i, v) for name, values in
                                entry.repeat_samples.items() for i, v in enumerate(values)])
            db.execute("COMMIT")
        except BaseException:
            db.rollback()
            raise
    return run_id, len(entries)


def run_name(recorded_at: str, *, firmware: str | None = None, build: str | None = None,
             commit: str | None = None, labels: Mapping[str, str] | None = None) -> str:
    """What a run is called wherever one is shown: the device's firmware (for one case),
    else the build number or commit the CI's variables gave, else the ``--label``s
    ``firmware``, ``build`` and ``commit`` (in that order), else the day it was recorded."""
    labels = labels or {}
    for kind, value in (("firmware", firmware), ("build", build), ("commit", commit),
                        ("firmware", labels.get("firmware")), ("build", labels.get("build")),
                        ("commit", labels.get("commit"))):
        if value:
            return (f"build {value}" if kind == "build" else value[:10] if kind == "commit"
                    else value)
    return recorded_at[:10]


@dataclass
class RunRow:
    """One recorded run as ``iogate history`` lists it."""

    run_id: str
    recorded_at: str
    host: str | None
    commit: str | None
    build: str | None
    branch: str | None
    labels: dict[str, str]
    cases: int
    devices: list[str] = field(default_factory=list)  # "model firmware", distinct
    firmware: str | None = None  # the firmware of every case, when they share one
    passed: int = 0  # cases that passed
    failed: int = 0  # cases that did not pass, not accepted
    accepted: int = 0  # cases that did not pass (or whose outcome is unknown), accepted

    def name(self) -> str:
        """The run's name (:func:`run_name`)."""
        return run_name(self.recorded_at, firmware=self.firmware, build=self.build,
                        commit=self.commit, labels=self.labels)

    def outcome(self) -> str:
        """Its cases by outcome: ``2 passed, 1 failed``, ``1 accepted``."""
        return ", ".join(f"{n} {what}" for n, what in ((self.passed, "passed"),
                                                      (self.failed, "failed"),
                                                      (self.accepted, "accepted")) if n)


@dataclass(frozen=True)
class Filters:
    """Which runs to list: each given filter must hold (a case filter: some case of it)."""

    suite: str | None = None  # a substring of a case's suite file
    case: str | None = None  # a substring of a case id
    device: str | None = None  # a substring of a case's device model
    firmware: str | None = None  # a case's firmware, exactly
    labels: Mapping[str, str] = field(default_factory=dict)
    since: str | None = None  # ISO 8601, compared with the recording time (UTC)
    until: str | None = None
    build: str | None = None  # the CI's build number, exactly
    commit: str | None = None  # the start of the CI's commit

    def case_terms(self) -> list[tuple[str, str]]:
        """The conditions on a case ``c`` (in SQLite's spelling) with their parameters."""
        terms = [("instr(c.suite_file, ?) > 0", self.suite),
                 ("instr(c.case_id, ?) > 0", self.case),
                 ("instr(c.device_model, ?) > 0", self.device),
                 ("c.firmware = ?", self.firmware)]
        return [(term, value) for term, value in terms if value is not None]

    def time_terms(self) -> list[tuple[str, str]]:
        """The conditions on a run ``r``'s recording time with their parameters."""
        out = []
        if self.since:
            out.append(("r.recorded_at >= ?", parse_time(self.since, "--since")))
        if self.until:
            out.append(("r.recorded_at < ?", parse_time(self.until, "--until")))
        return out

    def run_terms(self) -> list[tuple[str, str]]:
        """The conditions on a run ``r`` (its time and build) with their parameters."""
        terms = [("r.build = ?", self.build), ("instr(r.commit_id, ?) = 1", self.commit)]
        return self.time_terms() + [(t, v) for t, v in terms if v is not None]

    def names_a_build(self) -> bool:
        """Whether the filters name the runs of a build: a label, build, commit or
        firmware (what :func:`accept` needs, short of a run id)."""
        return bool(self.labels) or any(v is not None for v in (self.build, self.commit,
                                                                 self.firmware))

    def options(self) -> str:
        """The filters as the command line gives them."""
        given = [("--label", f"{k}={v}") for k, v in self.labels.items()]
        given += [(o, v) for o, v in (("--build", self.build), ("--commit", self.commit),
                                      ("--firmware", self.firmware), ("--suite", self.suite),
                                      ("-k", self.case), ("--device", self.device),
                                      ("--since", self.since), ("--until", self.until))
                  if v is not None]
        return " ".join(f"{o} {v}" for o, v in given)


def parse_time(text: str, option: str) -> str:
    """An ISO 8601 date or time (UTC unless it says otherwise) as the store writes times;
    a HistoryError for one that is not."""
    try:
        when = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise HistoryError(f"{option} {text!r}: write a date or time such as 2026-11-24 or "
                           "2026-11-24T08:00") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return when.astimezone(_dt.timezone.utc).isoformat(timespec="microseconds")


def runs(dest: str, filters: Filters = Filters()) -> list[RunRow]:
    """The runs of the store that pass ``filters``, oldest first."""
    where, args = ["1 = 1"], []
    chosen = filters.case_terms()
    if chosen:
        where.append("EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND "
                     + " AND ".join(t for t, _ in chosen) + ")")
        args += [v for _, v in chosen]
    for term, value in filters.run_terms():
        where.append(term)
        args.append(value)
    out = []
    with _store(dest, create=False) as db:
        rows = db.rows("SELECT r.run_id, r.recorded_at, r.host, r.commit_id, r.build, "
                       f"r.branch, r.labels FROM runs r WHERE {' AND '.join(where)} ORDER BY "
                       "r.recorded_at, r.run_id", args)
        for run_id, at, host, commit, build, branch, tags in rows:
            if any(tags.get(k) != v for k, v in filters.labels.items()):
                continue
            cases = [row[2:] for row in db.rows(
                "SELECT c.run_id, c.case_id, c.device_model, c.firmware, c.outcome, CASE WHEN "
                "c.accepted_at IS NULL THEN 0 ELSE 1 END AS accepted FROM cases c WHERE "
                "c.run_id = ?", (run_id,))]
            devices = sorted({" ".join(filter(None, (m, f))) for m, f, _, _ in cases} - {""})
            firmwares = {f for _, f, _, _ in cases}
            passed = sum(1 for _, _, o, _ in cases if o == "passed")
            accepted = sum(1 for _, _, o, a in cases if o != "passed" and a)
            out.append(RunRow(run_id, at, host, commit, build, branch, tags, len(cases),
                              devices, next(iter(firmwares)) if len(firmwares) == 1 else None,
                              passed, len(cases) - passed - accepted, accepted))
    return out


def render_runs(rows: Sequence[RunRow]) -> str:
    """The runs as ``iogate history`` prints them: one line each, oldest first: when, the
    run's id and name (unless it is the date), host, its cases by outcome, devices, build
    and labels."""
    if not rows:
        return "no runs match"
    lines = []
    for r in rows:
        build = " ".join(f"{k}={v}" for k, v in (("commit", r.commit and r.commit[:12]),
                                                  ("build", r.build), ("branch", r.branch))
                         if v)
        tags = " ".join(f"{k}={v}" for k, v in sorted(r.labels.items()))
        cases = f"{r.cases} case(s)" + (f": {r.outcome()}" if r.cases else "")
        name = r.name()
        lines.append("  ".join(filter(None, [
            r.recorded_at[:19].replace("T", " "), r.run_id[:8],
            "" if name == r.recorded_at[:10] else name, r.host or "-",
            cases, ", ".join(r.devices), build, tags])))
    return "\n".join(lines)


@dataclass(frozen=True)
class Point:
    """One run's value of a metric for a case on a device, with the run's repeat samples
    (none when the case ran once), what names the build, and the case's outcome in that
    run and whether it was accepted into the norm."""

    run_id: str
    recorded_at: str
    value: float
    samples: tuple[float, ...] = ()
    firmware: str | None = None
    build: str | None = None
    commit: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    outcome: str | None = None  # passed, failed; None: not known (recorded before schema 3)
    accepted: bool = False  # accepted into the norm (by a person, or as recorded before 3)

    def tag(self) -> str:
        """The run's name (:func:`run_name`): firmware, build number, commit (from the CI,
        then from the labels), or the date."""
        return run_name(self.recorded_at, firmware=self.firmware, build=self.build,
                        commit=self.commit, labels=self.labels)

    @property
    def in_norm(self) -> bool:
        """Whether the run is part of the norm: its case passed, or was accepted."""
        return self.outcome == "passed" or self.accepted

    def status(self) -> str:
        """Its outcome in a word: passed, failed, accepted (did not pass, then accepted),
        or - (not known)."""
        if self.outcome == "passed":
            return "passed"
        if self.accepted:
            return "accepted"
        return self.outcome or "-"


# A series of runs: (case id, device model or "", metric).
SeriesKey = tuple[str, str, str]


def load(dest: str, metrics: Sequence[str] | None = None, *, case_id: str | None = None,
         device: str | None = None, filters: Filters = Filters(), norm: bool = False,
         wait_s: float = BUSY_TIMEOUT_S) -> dict[SeriesKey, list[Point]]:
    """Every series of the store, oldest run first: per case, device model and metric
    (``metrics``: the names to read; all when None). ``case_id`` and ``device`` select one
    case and device model exactly; ``filters`` as for :func:`runs` (a case filter selects
    the cases themselves). ``norm``: only the runs that form the norm, those in which the
    case passed or was accepted (:func:`accept`); a failed run is never part of it.
    ``wait_s``: the longest the store's lock is waited for (0: tried once)."""
    where, args = ["1 = 1"], []
    exact = [("c.case_id = ?", case_id), ("COALESCE(c.device_model, '') = ?", device)]
    for term, value in [*filters.case_terms(), *filters.run_terms(),
                        *((t, v) for t, v in exact if v is not None)]:
        where.append(term)
        args.append(value)
    if norm:
        where.append(_IN_NORM)
    if metrics is not None:
        if not metrics:
            return {}
        where.append(f"m.name IN ({', '.join('?' * len(metrics))})")
        args += list(metrics)
    joined = ("FROM runs r JOIN cases c ON c.run_id = r.run_id JOIN {table} m ON "
              "m.case_key = c.case_key WHERE " + " AND ".join(where))
    out: dict[SeriesKey, list[Point]] = {}
    with _store(dest, create=False, wait_s=wait_s) as db:
        repeats: dict[tuple[int, str], list[float]] = {}
        for _, _, key, name, value in db.rows(
                "SELECT r.run_id, c.case_id, c.case_key, m.name, m.value "
                + joined.format(table="samples") + " ORDER BY c.case_key, m.name, "
                "m.repeat_index", args):
            repeats.setdefault((key, name), []).append(value)
        rows = db.rows(
            "SELECT r.run_id, r.recorded_at, r.build, r.commit_id, r.labels, c.case_key, "
            "c.case_id, c.device_model, c.firmware, c.outcome, CASE WHEN c.accepted_at IS "
            "NULL THEN 0 ELSE 1 END AS accepted, m.name, m.value "
            + joined.format(table="metrics") + " ORDER BY r.recorded_at, r.run_id", args)
    for (run_id, at, build, commit, tags, key, cid, model, firmware, outcome, accepted,
         name, value) in rows:
        if any(tags.get(k) != v for k, v in filters.labels.items()):
            continue
        out.setdefault((cid, model or "", name), []).append(Point(
            run_id, at, value, tuple(repeats.get((key, name), ())), firmware, build, commit,
            tags, outcome, accepted))
    return out


# -- accepting a run into the norm -----------------------------------------------------------

@dataclass(frozen=True)
class Accepted:
    """A case of a run that :func:`accept` took into the norm."""

    run_id: str
    recorded_at: str
    run: str  # the run's name (:func:`run_name`)
    case_id: str
    device: str  # model and firmware, "" when not known
    outcome: str | None  # what it was: failed (None: not known)
    by: str | None  # who accepted it


def _user() -> str | None:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return None


def accept(dest: str, run_id: str | None = None, *, filters: Filters = Filters(),
           by: str | None = None) -> list[Accepted]:
    """Take into the norm the cases that did not pass of one run (``run_id``: its id or a
    start of it that no other run's id has) or of every run of a build (``filters`` naming
    a label, build number, commit or firmware), narrowed by the other ``filters`` (suite,
    case, device, time); what was accepted, oldest run first (nothing when every case
    chosen passed or was accepted before). ``by``: who accepts (default: the user), kept
    with the time. A HistoryError for a run id that is unknown or ambiguous, for no run
    named at all, and when nothing recorded matches."""
    if run_id is not None and not run_id.strip():
        raise HistoryError("the run id to accept is empty")
    if run_id is None and not filters.names_a_build():
        raise HistoryError("name what to accept: a run (RUN_ID, or a start of it) or the "
                           "runs of a build (--label KEY=VALUE, --build N, --commit SHA, "
                           "--firmware REV)")
    by = by if by is not None else _user()
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
    where, args = ["1 = 1"], []
    for term, value in [*filters.case_terms(), *filters.run_terms()]:
        where.append(term)
        args.append(value)
    with _store(dest, create=False) as db:
        db.begin()
        try:
            if run_id is not None:
                run_id = run_id.strip()
                found = [r for (r,) in db.rows(
                    "SELECT run_id FROM runs WHERE instr(run_id, ?) = 1 ORDER BY recorded_at, "
                    "run_id", (run_id,))]
                if not found:
                    raise HistoryError(f"{db.name}: no run's id starts with {run_id!r} "
                                       f"(iogate history {db.name} lists the runs)")
                if len(found) > 1:
                    raise HistoryError(f"{db.name}: {run_id!r} starts the ids of "
                                       f"{len(found)} runs ({', '.join(found[:5])}"
                                       f"{', ...' if len(found) > 5 else ''}): give more "
                                       "of the id")
                where.append("r.run_id = ?")
                args.append(found[0])
            rows = [row for row in db.rows(
                "SELECT r.run_id, r.recorded_at, r.build, r.commit_id, r.labels, c.case_key, "
                "c.case_id, c.device_model, c.firmware, c.outcome, CASE WHEN "
                f"{_IN_NORM} THEN 1 ELSE 0 END AS in_norm FROM runs r JOIN cases c ON "
                f"c.run_id = r.run_id WHERE {' AND '.join(where)} ORDER BY r.recorded_at, "
                "r.run_id, c.case_id", args)
                if all(row[4].get(k) == v for k, v in filters.labels.items())]
            if not rows:
                what = " ".join(filter(None, [run_id and f"run {run_id}", filters.options()]))
                raise HistoryError(f"{db.name}: no recorded case matches {what}")
            out = []
            for row in rows:
                chosen, at, build, commit, labels, key, cid, model, firmware, outcome = row[:10]
                if row[10]:
                    continue  # in the norm already
                db.execute("UPDATE cases SET accepted_at = ?, accepted_by = ? WHERE "
                           "case_key = ?", (now, by, key))
                name = run_name(at, firmware=firmware, build=build, commit=commit,
                                labels=labels)
                out.append(Accepted(chosen, at, name, cid,
                                    " ".join(filter(None, (model, firmware))), outcome, by))
            db.execute("COMMIT")
        except BaseException:
            db.rollback()
            raise
    return out


def render_accepted(accepted: Sequence[Accepted]) -> str:
    """What :func:`accept` took into the norm, a line per case, oldest run first."""
    return "\n".join(
        f"  {a.recorded_at[:19].replace('T', ' ')}  {a.run_id[:8]}  {a.run}  {a.case_id}"
        f"{f' on {a.device}' if a.device else ''}  ({a.outcome or 'outcome not known'})"
        for a in accepted)
