"""The results store on real SQLite files: what a run records (cases that measured, their
metrics and repeat samples, device and firmware, the CI's build, labels), the filters of
the listing, the schema version, refusals, and writers racing each other."""

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


def test_a_run_is_recorded_with_its_cases_samples_and_build(tmp_path: Path) -> None:
    store = str(tmp_path / "h.sqlite")
    suite = tmp_path / "s.suite.yaml"
    suite.write_text("suite: s\n")
    env = {"GITHUB_SHA": "0123456789abcdef", "GITHUB_RUN_NUMBER": "42",
           "GITHUB_REF_NAME": "main"}
    run_id, n = record(store, document(suite_file=str(suite)), {"lot": "A7"}, environ=env)
    assert n == 1  # the case that ended in an error measured only part of its run
    db = sqlite3.connect(store)
    assert db.execute("SELECT commit_id, build, branch, host, kernel, labels FROM runs "
                      "WHERE run_id = ?", (run_id,)).fetchone() == (
        "0123456789abcdef", "42", "main", "node-7", "6.1.0", '{"lot": "A7"}')
    case_key, model, firmware, digest = db.execute(
        "SELECT case_key, device_model, firmware, suite_hash FROM cases").fetchone()
    assert (model, firmware) == ("ACME NVMe 3000", "FW1")
    assert digest == hashlib.sha256(b"suite: s\n").hexdigest()
    assert dict(db.execute("SELECT name, value FROM metrics WHERE case_key = ?",
                           (case_key,))) == {"read.iops": 1000.0, "read.clat.p99": 250000.0}
    assert [v for (v,) in db.execute("SELECT value FROM samples WHERE name = 'read.iops' "
                                     "ORDER BY repeat_index")] == [990.0, 1000.0, 1010.0]
    assert db.execute("SELECT MAX(version) FROM iogate_schema").fetchone() == (SCHEMA_VERSION,)


def test_the_listing_filters_runs(tmp_path: Path) -> None:
    store = str(tmp_path / "h.sqlite")
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


def test_writers_racing_never_lose_or_duplicate_a_run(tmp_path: Path) -> None:
    store = str(tmp_path / "h.sqlite")
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        ids = [i for part in pool.starmap(_record_many, [(store, 5)] * 8) for i in part]
    assert len(ids) == len(set(ids)) == 40
    listed = runs(store)
    assert sorted(r.run_id for r in listed) == sorted(ids)
    assert all(r.cases == 1 for r in listed)
    db = sqlite3.connect(store)
    assert db.execute("SELECT COUNT(*) FROM samples").fetchone() == (40 * 3,)


def test_stores_that_cannot_be_used_are_refused(tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    record(str(newer), document(), environ={})
    sqlite3.connect(newer).execute("INSERT INTO iogate_schema VALUES (99)").connection.commit()
    with pytest.raises(HistoryError, match="schema version 99; this iogate reads version 1"):
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
    for bad in ("postgresql://db/iogate", str(tmp_path), str(tmp_path / "no" / "h.sqlite")):
        with pytest.raises(HistoryError):
            check_destination(bad)


def test_labels_and_build_identity() -> None:
    assert parse_labels(["a=1", " b = two words "]) == {"a": "1", "b": "two words"}
    for bad in ("novalue", "=x"):
        with pytest.raises(HistoryError, match="write KEY=VALUE"):
            parse_labels([bad])
    assert build_identity({"CI_COMMIT_SHA": "c", "CI_PIPELINE_IID": "7",
                           "CI_COMMIT_REF_NAME": "dev"}) == {"commit": "c", "build": "7",
                                                             "branch": "dev"}
    assert build_identity({}) == {}
