"""The results store on real SQLite files and a real PostgreSQL server (the same tests on
both): what a run records (cases that measured, their metrics and repeat samples, device and
firmware, the CI's build, labels, outcomes), the filters of the listing, the series read
back, the norm (runs that passed or were accepted) and accepting runs into it, how runs are
named, the schema version and its migrations, refusals, and writers racing each other."""

from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from iogate.history import (
    BEFORE_OUTCOMES,
    SCHEMA_VERSION,
    Filters,
    HistoryError,
    Point,
    accept,
    build_identity,
    check_destination,
    load,
    parse_labels,
    record,
    render_accepted,
    render_runs,
    run_name,
    runs,
    shown,
)
from iogate.report import SCHEMA_VERSION as RESULTS_VERSION


def document(firmware: str = "FW1", *, iops: float = 1000.0, outcome: str = "passed",
             suite_file: str | None = None) -> dict[str, Any]:
    return {
        "schema_version": RESULTS_VERSION, "iogate_version": "0.1.0",
        "created": "2026-11-24T08:00:00+00:00",
        "environment": {"host": "node-7", "kernel": "6.1.0"},
        "cases": [
            {"id": "s.suite.yaml::randread", "file": suite_file, "outcome": outcome,
             "metrics": {"read.iops": iops, "read.clat.p99": 250000.0},
             "samples": {"read.iops": [iops - 10, iops, iops + 10]},
             "environment": {"target.device_model": "ACME NVMe 3000",
                             "target.firmware": firmware}},
            {"id": "s.suite.yaml::broken", "file": suite_file, "outcome": "error",
             "metrics": {"read.iops": 1.0}, "environment": {}},
        ],
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store that does not exist yet: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "h.sqlite")
    return str(request.getfixturevalue("postgres_url"))


def execute(store: str, *statements: str) -> None:
    """Statements run on the store with its own driver, as a damaged or older store would
    have been left."""
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store) as conn:
            for statement in statements:
                conn.execute(statement)
        return
    db = sqlite3.connect(store)
    try:
        for statement in statements:
            db.execute(statement)
        db.commit()
    finally:
        db.close()


def query(store: str, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of the store read with its own driver, in SQLite's spelling."""
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store) as conn:
            return [tuple(r) for r in conn.execute(sql.replace("?", "%s"), args).fetchall()]
    db = sqlite3.connect(store)
    try:
        return db.execute(sql, args).fetchall()
    finally:
        db.close()


def test_a_run_is_recorded_with_its_cases_samples_and_build(store: str,
                                                             tmp_path: Path) -> None:
    suite = tmp_path / "s.suite.yaml"
    suite.write_text("suite: s\n")
    env = {"GITHUB_SHA": "0123456789abcdef", "GITHUB_RUN_NUMBER": "42",
           "GITHUB_REF_NAME": "main"}
    run_id, n = record(store, document(suite_file=str(suite)), {"lot": "A7"}, environ=env)
    assert n == 1  # the case that ended in an error measured only part of its run
    assert query(store, "SELECT commit_id, build, branch, host, kernel, labels FROM runs "
                 "WHERE run_id = ?", (run_id,)) == [
        ("0123456789abcdef", "42", "main", "node-7", "6.1.0", '{"lot": "A7"}')]
    [(case_key, model, firmware, digest)] = query(
        store, "SELECT case_key, device_model, firmware, suite_hash FROM cases")
    assert (model, firmware) == ("ACME NVMe 3000", "FW1")
    assert digest == hashlib.sha256(b"suite: s\n").hexdigest()
    assert dict(query(store, "SELECT name, value FROM metrics WHERE case_key = ?",
                      (case_key,))) == {"read.iops": 1000.0, "read.clat.p99": 250000.0}
    assert [v for (v,) in query(store, "SELECT value FROM samples WHERE name = 'read.iops' "
                                "ORDER BY repeat_index")] == [990.0, 1000.0, 1010.0]
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(SCHEMA_VERSION,)]


def test_series_are_read_back_per_case_device_and_metric(store: str) -> None:
    first, _ = record(store, document("FW1", iops=1000.0), environ={"BUILD_NUMBER": "7"})
    second, _ = record(store, document("FW2", iops=900.0), environ={})
    series = load(store)
    key = ("s.suite.yaml::randread", "ACME NVMe 3000", "read.iops")
    assert set(series) == {key, (*key[:2], "read.clat.p99")}
    assert [(p.run_id, p.value, p.samples, p.tag()) for p in series[key]] == [
        (first, 1000.0, (990.0, 1000.0, 1010.0), "FW1"),
        (second, 900.0, (890.0, 900.0, 910.0), "FW2")]
    assert series[key][0].build == "7"
    assert list(load(store, ["read.iops"], case_id=key[0], device=key[1])) == [key]
    assert load(store, ["read.iops"], case_id="s.suite.yaml::rand") == {}
    assert load(store, ["read.iops"], device="ACME") == {}
    assert [p.run_id for p in load(store, ["read.iops"], filters=Filters(
        firmware="FW2"))[key]] == [second]
    assert load(store, []) == {}


def test_the_listing_filters_runs(store: str) -> None:
    first, _ = record(store, document("FW1"), {"lot": "A7"}, environ={})
    second, _ = record(store, document("FW2"), {"lot": "B1"}, environ={"BUILD_NUMBER": "9"})
    assert [r.run_id for r in runs(store)] == [first, second]
    assert [r.run_id for r in runs(store, Filters(firmware="FW2"))] == [second]
    assert [r.run_id for r in runs(store, Filters(labels={"lot": "A7"}))] == [first]
    assert [r.run_id for r in runs(store, Filters(device="NVMe", case="randread"))] == [
        first, second]
    assert runs(store, Filters(case="nothing-like-it")) == []
    assert runs(store, Filters(since="2999-01-01")) == []
    assert len(runs(store, Filters(until="2999-01-01 00:00"))) == 2
    assert len(runs(store, Filters(since="2000-01-01T00:00+02:00"))) == 2
    with pytest.raises(HistoryError, match="--since 'yesterday': write a date or time"):
        runs(store, Filters(since="yesterday"))
    text = render_runs(runs(store))
    assert "ACME NVMe 3000 FW2" in text
    assert "build=9" in text
    assert "lot=B1" in text
    assert render_runs([]) == "no runs match"


def _record_many(store: str, n: int) -> list[str]:
    return [record(store, document(), {"writer": "x"}, environ={})[0] for _ in range(n)]


def test_writers_racing_never_lose_or_duplicate_a_run(store: str) -> None:
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        ids = [i for part in pool.starmap(_record_many, [(store, 5)] * 8) for i in part]
    assert len(ids) == len(set(ids)) == 40
    listed = runs(store)
    assert sorted(r.run_id for r in listed) == sorted(ids)
    assert all(r.cases == 1 for r in listed)
    assert query(store, "SELECT COUNT(*) FROM samples") == [(40 * 3,)]


def test_stores_that_cannot_be_used_are_refused(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    record(str(newer), document(), environ={})
    sqlite3.connect(newer).execute("INSERT INTO iogate_schema VALUES (99)").connection.commit()
    with pytest.raises(HistoryError,
                       match=f"schema version 99; this iogate reads version {SCHEMA_VERSION}"):
        runs(str(newer))
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(HistoryError, match="not a history store"):
        record(str(other), document(), environ={})
    text = tmp_path / "notes.txt"
    text.write_text("not a database at all\n" * 100)
    with pytest.raises(HistoryError, match="not a history store"):
        runs(str(text))
    with pytest.raises(HistoryError, match="no such history store"):
        runs(str(tmp_path / "missing.sqlite"))
    damaged = tmp_path / "damaged.sqlite"
    record(str(damaged), document(), environ={})
    execute(str(damaged), "INSERT INTO iogate_schema VALUES ('three')")
    with pytest.raises(HistoryError, match=r"damaged\.sqlite: a damaged history store: its "
                       r"schema version \(table iogate_schema\) holds 'three', not a "
                       r"version number"):
        runs(str(damaged))
    execute(str(damaged), "DELETE FROM iogate_schema")
    with pytest.raises(HistoryError, match=r"a damaged history store: .* is empty"):
        load(str(damaged))
    with pytest.raises(HistoryError, match=r"the run was not recorded: .*schema_version"):
        record(str(tmp_path / "h.sqlite"), {**document(), "schema_version": 0}, environ={})
    for bad in ("mysql://db/iogate", str(tmp_path), str(tmp_path / "no" / "h.sqlite")):
        with pytest.raises(HistoryError):
            check_destination(bad)
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    check_destination(str(empty))  # a new store, made when the run is recorded
    assert empty.read_bytes() == b""
    assert sorted(tmp_path.glob("empty*")) == [empty]
    unreachable = f"postgresql://iogate:secret@/iogate?host={tmp_path}/none&port=1"
    with pytest.raises(HistoryError, match=r"--history postgresql://iogate:\*\*\*@/iogate"
                       r".*cannot connect to the history store") as refused:
        check_destination(unreachable)
    assert "secret" not in str(refused.value)


def test_a_postgresql_database_may_hold_other_tables_but_not_foreign_ones_of_ours(
        postgres_url: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE inventory (x int)")
    record(postgres_url, document(), environ={})  # a shared database: its tables are kept
    assert query(postgres_url, "SELECT COUNT(*) FROM inventory") == [(0,)]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP TABLE samples, metrics, cases, runs, iogate_schema")
        conn.execute("CREATE TABLE runs (x int)")
    with pytest.raises(HistoryError, match=r"not a history store .*tables runs"):
        record(postgres_url, document(), environ={})
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP TABLE runs")
        conn.execute("CREATE TABLE iogate_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO iogate_schema VALUES (99)")
    with pytest.raises(HistoryError, match="schema version 99"):
        runs(postgres_url)


def test_labels_and_build_identity() -> None:
    assert parse_labels(["a=1", " b = two words "]) == {"a": "1", "b": "two words"}
    for bad in ("novalue", "=x"):
        with pytest.raises(HistoryError, match="write KEY=VALUE"):
            parse_labels([bad])
    assert build_identity({"CI_COMMIT_SHA": "c", "CI_PIPELINE_IID": "7",
                           "CI_COMMIT_REF_NAME": "dev"}) == {"commit": "c", "build": "7",
                                                             "branch": "dev"}
    assert build_identity({}) == {}


def test_history_is_the_level_of_the_last_segment_that_lasted(tmp_path: Path) -> None:
    from iogate.levels import MIN_HISTORY, history_level

    store = str(tmp_path / "h.sqlite")
    key = ("s.suite.yaml::randread", "ACME NVMe 3000", "read.iops")

    def level() -> Any:
        return history_level(store, *key)

    assert level().judged is False
    assert "holds 0 run(s)" in level().reason
    values = [1000.0, 1001.0, 999.0, 1000.5, 999.5, 1000.0, 1001.0, 999.0]
    for v in values[:MIN_HISTORY - 1]:
        record(store, document(iops=v), environ={})
    short = level()
    assert (short.level, short.judged, short.runs) == (None, False, MIN_HISTORY - 1)
    assert "on ACME NVMe 3000" in short.reason
    assert "5 are needed" in short.reason
    for v in values[MIN_HISTORY - 1:]:
        record(store, document(iops=v), environ={})
    assert level().level is not None
    assert level().level.center == pytest.approx(1000.0)
    # A slower build: its first runs are a change under watch, not the level yet...
    for n in range(1, 5):
        record(store, document(iops=900.0 + n), environ={})
        assert level().level.center == pytest.approx(1000.0, abs=1), n
    # ... until it has lasted RECENT runs: then it is the norm.
    record(store, document(iops=902.0), environ={})
    lasted = level()
    assert lasted.level.center == pytest.approx(902.0, abs=1)
    assert (lasted.level.start, lasted.runs) == (len(values), len(values) + 5)
    other = history_level(store, key[0], "OTHER DRIVE", key[2])
    assert other.runs == 0
    assert other.judged is False
    (tmp_path / "junk.sqlite").write_text("not a database\n" * 100)
    broken = history_level(str(tmp_path / "junk.sqlite"), *key)
    assert broken.judged
    assert broken.level is None
    assert "cannot be read" in broken.reason


def test_a_store_of_version_1_reads_its_sweep_points_under_todays_ids(store: str) -> None:
    """Version 1 wrote sweep points as 'qd[iodepth=1]'; opening the store (to read or to
    record) brings them to 'qd[iodepth:1]', and a new run goes on in the same series."""
    earlier = document(iops=1000.0)
    earlier["cases"][0]["id"] = "s.suite.yaml::qd[bs=4k-iodepth=1]"
    record(store, earlier, environ={})
    # As version 1 left it: the ids of then, and no step to version 2 recorded.
    execute(store, "UPDATE cases SET case_id = 's.suite.yaml::qd[bs=4k-iodepth=1]'",
            "DELETE FROM iogate_schema", "INSERT INTO iogate_schema (version) VALUES (1)")
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(1,)]
    series = load(store, ["read.iops"])  # reading migrates
    assert list(series) == [("s.suite.yaml::qd[bs:4k-iodepth:1]", "ACME NVMe 3000", "read.iops")]
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(SCHEMA_VERSION,)]
    later = document(iops=900.0)
    later["cases"][0]["id"] = "s.suite.yaml::qd[bs:4k-iodepth:1]"
    record(store, later, environ={})
    [points] = load(store, ["read.iops"]).values()
    assert [p.value for p in points] == [1000.0, 900.0]


# -- the norm: runs that passed, or that a person accepted ------------------------------------

IOPS = ("s.suite.yaml::randread", "ACME NVMe 3000", "read.iops")


def test_the_norm_is_the_runs_that_passed_or_were_accepted(store: str) -> None:
    """Issue 26: six nights of a rate-limited workload at 30-39k IOPS, then a build four
    times slower that fails every night. The failed runs are recorded (detect and the
    trend show them) but never form the norm, until a person accepts one."""
    good = [record(store, document(iops=iops), environ={})[0]
            for iops in (35000.0, 31000.0, 39000.0, 30500.0, 36000.0, 38500.0)]
    slow = [record(store, document(iops=8000.0 + n, outcome="failed"), {"build": "b7"},
                   environ={})[0] for n in range(5)]
    every = load(store, ["read.iops"])[IOPS]
    assert [p.run_id for p in every] == good + slow
    assert [p.status() for p in every] == ["passed"] * 6 + ["failed"] * 5
    assert [(p.outcome, p.accepted, p.in_norm) for p in every[-1:]] == [("failed", False,
                                                                          False)]
    norm = load(store, ["read.iops"], norm=True)[IOPS]
    assert [p.run_id for p in norm] == good
    assert load(store, ["read.iops"], case_id=IOPS[0], device=IOPS[1], norm=True) == {
        IOPS: norm}
    assert [r.outcome() for r in runs(store)] == ["1 passed"] * 6 + ["1 failed"] * 5

    # One regressed run accepted by a start of its id: the norm holds 7.
    [taken] = accept(store, slow[2][:8], by="alice")
    assert (taken.run_id, taken.case_id, taken.outcome, taken.by) == (slow[2], IOPS[0],
                                                                      "failed", "alice")
    assert (taken.run, taken.device) == ("FW1", "ACME NVMe 3000 FW1")
    assert "(failed)" in render_accepted([taken])
    assert slow[2][:8] in render_accepted([taken])
    norm = load(store, ["read.iops"], norm=True)[IOPS]
    assert [p.run_id for p in norm] == [*good, slow[2]]
    assert (norm[-1].status(), norm[-1].accepted, norm[-1].in_norm) == ("accepted", True,
                                                                        True)
    [(who, when)] = query(store, "SELECT accepted_by, accepted_at FROM cases WHERE run_id "
                          "= ?", (slow[2],))
    assert who == "alice"
    assert when > every[-1].recorded_at
    assert accept(store, slow[2]) == []  # accepted before: nothing more to do
    assert runs(store)[8].outcome() == "1 accepted"
    assert "1 case(s): 1 accepted" in render_runs(runs(store))
    # Passed cases are in the norm already: accepting their run changes nothing.
    assert accept(store, good[0]) == []
    # The case that ended in an error was never recorded; the listing counts what was.
    assert all(r.cases == 1 for r in runs(store))


def test_a_build_is_accepted_by_label_build_number_or_commit(store: str) -> None:
    def night(label: str, outcome: str, environ: dict[str, str]) -> str:
        doc = document(iops=500.0, outcome=outcome)
        doc["cases"].append({**doc["cases"][0], "id": "s.suite.yaml::seqread"})
        return record(store, doc, {"build": label}, environ=environ)[0]

    b6 = night("b6", "passed", {})
    b7 = [night("b7", "failed", {"BUILD_NUMBER": "42", "GIT_COMMIT": "cafe01234"})
          for _ in range(2)]
    b8 = night("b8", "failed", {"BUILD_NUMBER": "43", "GIT_COMMIT": "beef5678"})
    # -k narrows the cases: one case of each run of build b7.
    taken = accept(store, filters=Filters(labels={"build": "b7"}, case="seqread"), by="bob")
    assert [(a.run_id, a.case_id, a.run) for a in taken] == [
        (b7[0], "s.suite.yaml::seqread", "FW1"), (b7[1], "s.suite.yaml::seqread", "FW1")]
    assert [r.outcome() for r in runs(store)] == ["2 passed", "1 failed, 1 accepted",
                                                  "1 failed, 1 accepted", "2 failed"]
    assert [a.case_id for a in accept(store, filters=Filters(build="42"))] == [
        "s.suite.yaml::randread"] * 2
    assert [a.run_id for a in accept(store, filters=Filters(commit="beef"))] == [b8, b8]
    assert accept(store, filters=Filters(labels={"build": "b6"})) == []
    assert [r.run_id for r in runs(store, Filters(build="42"))] == b7
    assert [r.run_id for r in runs(store, Filters(commit="cafe"))] == b7
    assert [len(v) for v in load(store, ["read.iops"], norm=True).values()] == [4, 4]
    assert b6 in {p.run_id for p in load(store, ["read.iops"], norm=True)[IOPS]}


def test_accepting_refuses_what_names_no_run_or_more_than_one(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import uuid

    ids = iter(["a1a1a1a1-0000-4000-8000-000000000001", "a1a1a1a1-0000-4000-8000-000000000002"])
    monkeypatch.setattr("iogate.history.uuid.uuid4", lambda: uuid.UUID(next(ids)))
    first, _ = record(store, document(outcome="failed"), environ={})
    second, _ = record(store, document(outcome="failed"), {"build": "b7"}, environ={})
    monkeypatch.undo()
    with pytest.raises(HistoryError, match="'a1a1' starts the ids of 2 runs "
                       f"\\({first}, {second}\\): give more of the id"):
        accept(store, "a1a1")
    with pytest.raises(HistoryError, match="no run's id starts with 'ffff'"):
        accept(store, "ffff")
    with pytest.raises(HistoryError, match="name what to accept: a run"):
        accept(store, filters=Filters(case="randread", since="2000-01-01"))
    with pytest.raises(HistoryError, match="the run id to accept is empty"):
        accept(store, " ")
    with pytest.raises(HistoryError, match="no recorded case matches --label build=b9"):
        accept(store, filters=Filters(labels={"build": "b9"}))
    with pytest.raises(HistoryError, match=f"no recorded case matches run {second} -k "
                       "nothing"):
        accept(store, second, filters=Filters(case="nothing"))
    # A refusal accepts nothing; the unique id does.
    assert load(store, norm=True) == {}
    assert [a.run_id for a in accept(store, "a1a1a1a1-0000-4000-8000-000000000002")] == [
        second]
    with pytest.raises(HistoryError, match="no such history store"):
        accept(store + ".missing" if "://" not in store else "missing.sqlite", "a1")


def test_a_store_of_version_2_keeps_its_runs_in_the_norm(store: str) -> None:
    """Version 2 kept no outcomes: the runs recorded then formed the norm, so the migration
    to 3 counts them as accepted (when they were recorded), failed or not."""
    before = [record(store, document(iops=1000.0 + n, outcome=outcome), environ={})[0]
              for n, outcome in enumerate(["passed", "failed", "passed"])]
    execute(store, *(f"ALTER TABLE cases DROP COLUMN {c}" for c in ("outcome", "accepted_at",
                                                                     "accepted_by")),
            "DELETE FROM iogate_schema", "INSERT INTO iogate_schema (version) VALUES (2)")
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(2,)]
    norm = load(store, ["read.iops"], norm=True)[IOPS]  # reading migrates
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(SCHEMA_VERSION,)]
    assert [(p.run_id, p.outcome, p.accepted, p.status()) for p in norm] == [
        (r, None, True, "accepted") for r in before]
    assert query(store, "SELECT DISTINCT accepted_by FROM cases") == [(BEFORE_OUTCOMES,)]
    assert query(store, "SELECT COUNT(*) FROM cases c JOIN runs r ON r.run_id = c.run_id "
                 "WHERE c.accepted_at = r.recorded_at") == [(3,)]
    # Recorded after the migration: a failed run stays out of the norm.
    after, _ = record(store, document(iops=500.0, outcome="failed"), environ={})
    assert after not in {p.run_id for p in load(store, ["read.iops"], norm=True)[IOPS]}
    assert [r.outcome() for r in runs(store)] == ["1 accepted"] * 3 + ["1 failed"]


# -- naming runs ------------------------------------------------------------------------------

def test_a_run_is_named_by_its_firmware_build_or_commit_then_labels() -> None:
    at = "2026-11-24T08:00:00+00:00"
    assert run_name(at) == "2026-11-24"
    assert run_name(at, labels={"lot": "A"}) == "2026-11-24"
    assert run_name(at, labels={"commit": "0123456789abcdef"}) == "0123456789"
    assert run_name(at, labels={"commit": "0123456789abcdef", "build": "b7"}) == "build b7"
    assert run_name(at, labels={"build": "b7", "firmware": "FW2"}) == "FW2"
    # The CI's variables come before the labels; the device's firmware before both.
    assert run_name(at, commit="fedcba9876543", labels={"firmware": "FW2"}) == "fedcba9876"
    assert run_name(at, build="42", commit="fedcba98", labels={"firmware": "FW2"}) == \
        "build 42"
    assert run_name(at, firmware="1.2.3", build="42") == "1.2.3"
    assert Point("r", at, 1.0, labels={"build": "b7"}).tag() == "build b7"


def test_labels_name_the_runs_where_no_ci_variable_does(store: str) -> None:
    plain = document()
    del plain["cases"][0]["environment"]["target.firmware"]
    named = [record(store, plain, labels, environ=environ)[0] for labels, environ in (
        ({"firmware": "FW2", "build": "b7"}, {}), ({"build": "b7", "lot": "A"}, {}),
        ({"commit": "0123456789abcdef"}, {}), ({"firmware": "FW2"}, {"BUILD_NUMBER": "42"}),
        ({}, {}))]
    points = load(store, ["read.iops"])[IOPS]
    day = points[-1].recorded_at[:10]
    assert [p.tag() for p in points] == ["FW2", "build b7", "0123456789", "build 42", day]
    listed = runs(store)
    assert [r.name() for r in listed] == ["FW2", "build b7", "0123456789", "build 42", day]
    lines = render_runs(listed).splitlines()
    assert f"{named[0][:8]}  FW2  node-7" in lines[0]
    assert f"{named[4][:8]}  node-7" in lines[4]  # the date is shown once


def test_a_store_s_secrets_are_hidden_wherever_it_is_shown() -> None:
    assert shown("runs/h.sqlite") == "runs/h.sqlite"
    assert shown("postgres://me@db/iogate") == "postgres://me@db/iogate"
    url = ("postgresql://me:p%40ss@db.example:5432/iogate?sslmode=require&password=two"
           "&PassFile=/home/me/.pgpass&sslpassword=three")
    assert shown(url) == ("postgresql://me:***@db.example:5432/iogate?sslmode=require&"
                          "password=***&PassFile=***&sslpassword=***")
    # An @ left in a password hides all of it, whichever @ a driver takes for the last.
    assert shown("postgresql://me:a@b@db/iogate") == "postgresql://me:***@db/iogate"
    # A driver's message may quote the URL, or a part of it, decoded or not.
    said = shown(url, f'invalid percent-encoded token: "p%40ss"; in "{url}": p@ss, two')
    assert all(s not in said for s in ("p%40ss", "p@ss", "two", ".pgpass", "three")), said
    with pytest.raises(HistoryError) as refused:
        check_destination("postgresql://me:Sekrit-1@[/iogate?password=Sekrit-2")
    assert "Sekrit" not in str(refused.value)
    assert "me:***@" in str(refused.value)


LOCKER = """\
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def test_a_wait_for_the_lock_is_bounded_and_ends_at_an_interrupt_held_off(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Another process holds the store's lock: a read waits at most as long as it is told,
    saying so once; an interrupt held off (as while results are written) ends the wait at
    once, and comes when the hold ends."""
    import signal
    import subprocess
    import sys

    from iogate import interrupts

    store = str(tmp_path / "h.sqlite")
    record(store, document(), environ={})
    before = hashlib.sha256(Path(store).read_bytes()).hexdigest()
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, store], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None
        assert locker.stdout.readline() == "locked\n"
        with pytest.raises(HistoryError, match=r"h\.sqlite: another process holds the history "
                           r"store's lock \(waited 0\.5 s\): try again once it is done"):
            load(store, wait_s=0.5)
        assert capfd.readouterr().err.count("waiting for the history store") == 1
        with pytest.raises(HistoryError, match=r"h\.sqlite: another process holds the history "
                           r"store's lock$"):
            load(store, wait_s=0)  # tried once, not waited for
        assert "waiting" not in capfd.readouterr().err

        def interrupted_while_waiting() -> None:
            with interrupts.handled(), interrupts.deferred():
                signal.raise_signal(signal.SIGINT)  # held: the full wait would be 120 s
                with pytest.raises(HistoryError, match="interrupted while waiting for it"):
                    record(store, document(), environ={})

        with pytest.raises(KeyboardInterrupt):
            interrupted_while_waiting()
    finally:
        assert locker.stdin is not None
        locker.stdin.close()
        locker.wait(timeout=60)
    assert hashlib.sha256(Path(store).read_bytes()).hexdigest() == before
    assert len(runs(store)) == 1
