"""The results store on real SQLite files and a real PostgreSQL server (the same tests on
both): what a run records (cases that measured, their metrics and repeat samples, device and
firmware, the CI's build, labels), the filters of the listing, the series read back, the
schema version, refusals, and writers racing each other."""

from __future__ import annotations

import hashlib
import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from iogate.history import (
    SCHEMA_VERSION,
    Filters,
    HistoryError,
    build_identity,
    check_destination,
    load,
    parse_labels,
    record,
    render_runs,
    runs,
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
    assert set(series) == {key, key[:2] + ("read.clat.p99",)}
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
    assert "ACME NVMe 3000 FW2" in text and "build=9" in text and "lot=B1" in text
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
    with pytest.raises(HistoryError, match="the run was not recorded: .*schema_version"):
        record(str(tmp_path / "h.sqlite"), {**document(), "schema_version": 0}, environ={})
    for bad in ("mysql://db/iogate", str(tmp_path), str(tmp_path / "no" / "h.sqlite")):
        with pytest.raises(HistoryError):
            check_destination(bad)
    unreachable = f"postgresql://iogate:secret@/iogate?host={tmp_path}/none&port=1"
    with pytest.raises(HistoryError, match="--history postgresql://iogate:\\*\\*\\*@/iogate"
                       ".*cannot connect to the history store") as refused:
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
    with pytest.raises(HistoryError, match="not a history store .*tables runs"):
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
    from iogate.judge import MIN_HISTORY, history_level

    store = str(tmp_path / "h.sqlite")
    key = ("s.suite.yaml::randread", "ACME NVMe 3000", "read.iops")

    def level() -> Any:
        return history_level(store, *key)

    assert level().judged is False and "holds 0 run(s)" in level().reason
    values = [1000.0, 1001.0, 999.0, 1000.5, 999.5, 1000.0, 1001.0, 999.0]
    for v in values[:MIN_HISTORY - 1]:
        record(store, document(iops=v), environ={})
    short = level()
    assert (short.level, short.judged, short.runs) == (None, False, MIN_HISTORY - 1)
    assert "on ACME NVMe 3000, 5 are needed" in short.reason
    for v in values[MIN_HISTORY - 1:]:
        record(store, document(iops=v), environ={})
    assert level().level is not None and level().level.center == pytest.approx(1000.0)
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
    assert other.runs == 0 and other.judged is False
    (tmp_path / "junk.sqlite").write_text("not a database\n" * 100)
    broken = history_level(str(tmp_path / "junk.sqlite"), *key)
    assert broken.judged and broken.level is None and "cannot be read" in broken.reason


def test_a_store_of_version_1_reads_its_sweep_points_under_todays_ids(store: str) -> None:
    """Version 1 wrote sweep points as 'qd[iodepth=1]'; opening the store (to read or to
    record) brings them to 'qd[iodepth:1]', and a new run goes on in the same series."""
    earlier = document(iops=1000.0)
    earlier["cases"][0]["id"] = "s.suite.yaml::qd[bs=4k-iodepth=1]"
    record(store, earlier, environ={})
    # As version 1 left it: the ids of then, and no step to version 2 recorded.
    rows = "UPDATE cases SET case_id = 's.suite.yaml::qd[bs=4k-iodepth=1]'"
    stamps = ("DELETE FROM iogate_schema", "INSERT INTO iogate_schema (version) VALUES (1)")
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store) as conn:
            for statement in (rows, *stamps):
                conn.execute(statement)
    else:
        db = sqlite3.connect(store)
        for statement in (rows, *stamps):
            db.execute(statement)
        db.commit()
        db.close()
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(1,)]
    series = load(store, ["read.iops"])  # reading migrates
    assert list(series) == [("s.suite.yaml::qd[bs:4k-iodepth:1]", "ACME NVMe 3000", "read.iops")]
    assert query(store, "SELECT MAX(version) FROM iogate_schema") == [(2,)]
    later = document(iops=900.0)
    later["cases"][0]["id"] = "s.suite.yaml::qd[bs:4k-iodepth:1]"
    record(store, later, environ={})
    [points] = load(store, ["read.iops"]).values()
    assert [p.value for p in points] == [1000.0, 900.0]
