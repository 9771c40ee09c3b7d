"""The results store: every run recorded with its cases' metrics and repeat samples, the
environment that matters for gating (device model, firmware, host, kernel, iogate version)
and the build's identity (from the CI's environment, or ``--label KEY=VALUE``), so that
runs can be looked back on across builds.

The store is a SQLite database (a file path), created on first use. Its schema is this
module's, with a version (``iogate_schema``): a store written by a newer iogate is refused,
an older one is migrated. A run is written in one transaction under a run id made by the
writer (a UUID): several runners recording into one store at once wait for each other and
never lose or duplicate a run.

The cases recorded are those a baseline would keep (passed or failed: measured in full),
read from the results document with :meth:`iogate.baseline.Baseline.from_results`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.baseline import Baseline, BaselineError
from iogate.errors import IogateError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 120.0  # how long a writer waits for another one to finish its run

# The build's identity, from the first variable of each list that the CI has set.
CI_VARIABLES: dict[str, tuple[str, ...]] = {
    "commit": ("GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "BUILD_SOURCEVERSION",
               "GIT_COMMIT"),
    "build": ("GITHUB_RUN_NUMBER", "CI_PIPELINE_IID", "BUILDKITE_BUILD_NUMBER",
              "BUILD_BUILDNUMBER", "BUILD_NUMBER"),
    "branch": ("GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH",
               "BUILD_SOURCEBRANCHNAME", "GIT_BRANCH"),
}

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
        case_key INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        case_id TEXT NOT NULL,
        suite_file TEXT,
        suite_hash TEXT,
        device_model TEXT,
        firmware TEXT,
        UNIQUE (run_id, case_id))""",
    """CREATE TABLE IF NOT EXISTS metrics (
        case_key INTEGER NOT NULL REFERENCES cases (case_key),
        name TEXT NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (case_key, name))""",
    """CREATE TABLE IF NOT EXISTS samples (
        case_key INTEGER NOT NULL REFERENCES cases (case_key),
        name TEXT NOT NULL,
        repeat_index INTEGER NOT NULL,
        value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (case_key, name, repeat_index))""",
    """CREATE INDEX IF NOT EXISTS cases_by_case ON cases (case_id, run_id)""",
    """CREATE INDEX IF NOT EXISTS runs_by_time ON runs (recorded_at)""",
)


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


def check_destination(dest: str, option: str = "--history") -> None:
    """Refuse, before any work, a destination that cannot be a store."""
    if "://" in dest:
        raise HistoryError(f"{option} {dest}: this iogate keeps its history in a SQLite file; "
                           "give a file path")
    path = Path(dest)
    if path.is_dir():
        raise HistoryError(f"{option} {dest}: is a directory; name a file")
    if not path.parent.is_dir() and str(path.parent):
        raise HistoryError(f"{option} {dest}: the directory {path.parent} does not exist")


@contextlib.contextmanager
def _store(dest: str, *, create: bool) -> Iterator[sqlite3.Connection]:
    """A connection to the store at ``dest`` whose schema is this module's (created when
    ``create``); closed afterwards."""
    if not create and not Path(dest).is_file():
        raise HistoryError(f"{dest}: no such history store (iogate run --history {dest} "
                           "makes one)")
    try:
        db = sqlite3.connect(dest, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise HistoryError(f"{dest}: cannot open the history store: {exc}") from None
    try:
        _prepare(db, dest, create)
        yield db
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{dest}: {exc}") from None
    finally:
        db.close()


def _prepare(db: sqlite3.Connection, dest: str, create: bool) -> None:
    """Create or check the schema, in one transaction (writers creating it at once wait)."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{dest}: not a history store ({exc})") from None
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "iogate_schema" not in tables:
            if tables:
                raise HistoryError(f"{dest}: a SQLite database, but not a history store "
                                   f"(it has tables {', '.join(sorted(tables))})")
            if not create:
                raise HistoryError(f"{dest}: an empty database, not a history store")
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute("INSERT INTO iogate_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        (version,) = db.execute("SELECT MAX(version) FROM iogate_schema").fetchone()
        if version is None or version > SCHEMA_VERSION:
            raise HistoryError(f"{dest}: a history store of schema version {version}; this "
                               f"iogate reads version {SCHEMA_VERSION}: use a newer iogate")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
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
        raise HistoryError(f"{dest}: the run was not recorded: {exc}") from None
    files = {c.get("id"): c.get("file") for c in document.get("cases", [])
             if isinstance(c, Mapping)}
    shared = document.get("environment") or {}
    ci = build_identity(environ)
    run_id = str(uuid.uuid4())
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
    hashes: dict[str, str | None] = {}
    with _store(dest, create=True) as db:
        db.execute("BEGIN IMMEDIATE")
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
                cursor = db.execute(
                    "INSERT INTO cases (run_id, case_id, suite_file, suite_hash, device_model, "
                    "firmware) VALUES (?, ?, ?, ?, ?, ?)",
                    (run_id, entry.case_id, suite_file,
                     _file_hash(suite_file, hashes) if suite_file else None,
                     entry.environment.get("device_model"), entry.environment.get("firmware")))
                key = cursor.lastrowid
                db.executemany("INSERT INTO metrics (case_key, name, value) VALUES (?, ?, ?)",
                               [(key, name, value) for name, value in entry.metrics.items()])
                db.executemany("INSERT INTO samples (case_key, name, repeat_index, value) "
                               "VALUES (?, ?, ?, ?)",
                               [(key, name, i, v) for name, values in
                                entry.repeat_samples.items() for i, v in enumerate(values)])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return run_id, len(entries)


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
    case_terms = [("instr(c.suite_file, ?) > 0", filters.suite),
                  ("instr(c.case_id, ?) > 0", filters.case),
                  ("instr(c.device_model, ?) > 0", filters.device),
                  ("c.firmware = ?", filters.firmware)]
    chosen = [(term, value) for term, value in case_terms if value is not None]
    if chosen:
        where.append("EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND "
                     + " AND ".join(t for t, _ in chosen) + ")")
        args += [v for _, v in chosen]
    if filters.since:
        where.append("r.recorded_at >= ?")
        args.append(parse_time(filters.since, "--since"))
    if filters.until:
        where.append("r.recorded_at < ?")
        args.append(parse_time(filters.until, "--until"))
    out = []
    with _store(dest, create=False) as db:
        rows = db.execute("SELECT r.run_id, r.recorded_at, r.host, r.commit_id, r.build, "
                          "r.branch, r.labels, (SELECT COUNT(*) FROM cases c WHERE c.run_id = "
                          f"r.run_id) FROM runs r WHERE {' AND '.join(where)} "
                          "ORDER BY r.recorded_at, r.run_id", args).fetchall()
        for run_id, at, host, commit, build, branch, labels, ncases in rows:
            tags = json.loads(labels)
            if any(tags.get(k) != v for k, v in filters.labels.items()):
                continue
            devices = [" ".join(filter(None, d)) for d in db.execute(
                "SELECT DISTINCT device_model, firmware FROM cases WHERE run_id = ? "
                "ORDER BY device_model, firmware", (run_id,))]
            out.append(RunRow(run_id, at, host, commit, build, branch, tags, ncases,
                              [d for d in devices if d]))
    return out


def render_runs(rows: Sequence[RunRow]) -> str:
    """The runs as ``iogate history`` prints them: one line each, oldest first."""
    if not rows:
        return "no runs match"
    lines = []
    for r in rows:
        build = " ".join(f"{k}={v}" for k, v in (("commit", r.commit and r.commit[:12]),
                                                  ("build", r.build), ("branch", r.branch))
                         if v)
        tags = " ".join(f"{k}={v}" for k, v in sorted(r.labels.items()))
        lines.append("  ".join(filter(None, [
            r.recorded_at[:19].replace("T", " "), r.run_id[:8], r.host or "-",
            f"{r.cases} case(s)", ", ".join(r.devices), build, tags])))
    return "\n".join(lines)
