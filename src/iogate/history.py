"""The results store: every run recorded with its cases' metrics and repeat samples, the
environment that matters for gating (device model, firmware, host, kernel, iogate version)
and the build's identity (from the CI's environment, or ``--label KEY=VALUE``), so that
runs can be looked back on across builds.

A store is a SQLite database (a file path, created on first use) or a PostgreSQL database
that a team shares (a ``postgresql://`` URL; the driver is the ``postgresql`` extra). Both
hold the same schema, :mod:`iogate.history_store`'s, with a version (``iogate_schema``): a
store written by a newer iogate is refused, an older one is migrated. A run is written in
one transaction under a run id made by the writer (a UUID): several runners recording into
one store at once never lose or duplicate a run.

The cases recorded are those a baseline would keep (passed or failed: measured in full),
read from the results document with :meth:`iogate.baseline.Baseline.from_results`, each with
its outcome. :func:`load` reads them back as one series of runs per case, device and metric;
``load(..., norm=True)`` only the runs that form the norm a ``history`` expectation is judged
against: a case that passed, or one a person accepted with :func:`accept` (``iogate history
accept``). A failed run never enters the norm by itself, however long a regression lasts.

The database itself (where a store may be, its name with its secrets hidden, the
connection, its lock, its schema and the checks of what is read) is
:mod:`iogate.history_store`'s; its public names are importable from here too.
"""

from __future__ import annotations

import datetime as _dt
import getpass
import hashlib
import json
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iogate.baseline import Baseline, BaselineError
from iogate.history_store import BEFORE_OUTCOMES as BEFORE_OUTCOMES
from iogate.history_store import BUSY_TIMEOUT_S as BUSY_TIMEOUT_S
from iogate.history_store import CONNECT_TIMEOUT_S as CONNECT_TIMEOUT_S
from iogate.history_store import LARGEST_VALUE as LARGEST_VALUE
from iogate.history_store import SCHEMA_LOCK as SCHEMA_LOCK
from iogate.history_store import SCHEMA_VERSION as SCHEMA_VERSION
from iogate.history_store import SQLITE_HEADER as SQLITE_HEADER
from iogate.history_store import STEP_S as STEP_S
from iogate.history_store import HistoryError as HistoryError
from iogate.history_store import check_destination as check_destination
from iogate.history_store import is_url as is_url
from iogate.history_store import open_store
from iogate.history_store import shown as shown

# The build's identity, from the first variable of each list that the CI has set.
CI_VARIABLES: dict[str, tuple[str, ...]] = {
    "commit": ("GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "BUILD_SOURCEVERSION",
               "GIT_COMMIT"),
    "build": ("GITHUB_RUN_NUMBER", "CI_PIPELINE_IID", "BUILDKITE_BUILD_NUMBER",
              "BUILD_BUILDNUMBER", "BUILD_NUMBER"),
    "branch": ("GITHUB_REF_NAME", "CI_COMMIT_REF_NAME", "BUILDKITE_BRANCH",
               "BUILD_SOURCEBRANCHNAME", "GIT_BRANCH"),
}

# A case whose outcome is not "passed" is in the norm once accepted (accepted_at is set).
_IN_NORM = "(c.outcome = 'passed' OR c.accepted_at IS NOT NULL)"


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
    with open_store(dest, create=True) as db:
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
    with open_store(dest, create=False) as db:
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
    with open_store(dest, create=False, wait_s=wait_s) as db:
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
    with open_store(dest, create=False) as db:
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
