"""The history store through the command line: runs recorded with --history and --label,
listed and filtered with ``iogate history``; change points found by ``iogate detect``;
trends drawn; expectations judged against the history; the nightly loop on SQLite and
PostgreSQL alike; usage errors before anything runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

IOGATE = [sys.executable, "-m", "iogate"]
SUITE = """\
suite: h
workloads:
  - name: quick
    ioengine: null
    rw: randread
    size: 1MiB
    repeat: 3
"""


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    import os

    # lines as wide as the output needs: these tests read messages whole (how they wrap to a
    # log's width is tests/e2e/test_output_width.py's)
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "100000", **(env or {})})


def test_runs_are_recorded_and_listed(tmp_path: Path) -> None:
    (tmp_path / "h.suite.yaml").write_text(SUITE)
    for build, lot in (("101", "A"), ("102", "B")):
        proc = iogate("run", "h.suite.yaml", "--history", "store.sqlite", "--label",
                      f"lot={lot}", cwd=tmp_path, env={"BUILD_NUMBER": build})
        assert proc.returncode == 0, proc.stderr
        assert "store.sqlite: run " in proc.stderr
        assert "recorded, 1 case(s)" in proc.stderr
    listed = iogate("history", "store.sqlite", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert len(lines) == 2
    assert "build=101" in lines[0]
    assert "lot=B" in lines[1]
    only = iogate("history", "store.sqlite", "--label", "lot=A", "-k", "quick", cwd=tmp_path)
    assert only.stdout.count("\n") == 1
    assert "build=101" in only.stdout


def test_history_usage_errors_come_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "h.suite.yaml").write_text(SUITE)
    proc = iogate("run", "h.suite.yaml", "--label", "lot=A", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--label names this run in a history store" in proc.stderr
    proc = iogate("run", "h.suite.yaml", "--history",
                  f"postgresql://u:pw@/x?host={tmp_path}/none&port=1", cwd=tmp_path)
    assert proc.returncode == 2
    assert "cannot connect to the history store" in proc.stderr
    assert "u:***@" in proc.stderr
    assert ":pw@" not in proc.stderr
    proc = iogate("run", "h.suite.yaml", "--history", "mysql://db/x", cwd=tmp_path)
    assert proc.returncode == 2
    assert "a SQLite file path or a postgresql://" in proc.stderr
    proc = iogate("run", "h.suite.yaml", "--history", "h.sqlite", "--label", "oops",
                  cwd=tmp_path)
    assert proc.returncode == 2
    assert "write KEY=VALUE" in proc.stderr
    assert not (tmp_path / "h.sqlite").exists()
    listed = iogate("history", "missing.sqlite", cwd=tmp_path)
    assert listed.returncode == 2
    assert "no such history store" in listed.stderr


PACED = """\
suite: nightly
workloads:
  - name: paced
    ioengine: null
    rw: randread
    bs: 4k
    size: 4MiB
    rate_iops: ${RATE:-2000}
    runtime: 200ms
    time_based: true
    expect:
      read.iops: ">= 0.95 * history"
"""


def nightly(tmp_path: Path, store: str, rates: list[int], *extra: str) -> list[int]:
    """Run the paced suite once per rate (in this process, as CI would run the command),
    recorded in ``store``; the exit codes."""
    import os

    from iogate.cli import main

    suite = tmp_path / "nightly.suite.yaml"
    suite.write_text(PACED)
    codes = []
    for i, rate in enumerate(rates):
        os.environ["RATE"], os.environ["BUILD_NUMBER"] = str(rate), str(100 + i)
        try:
            codes.append(main(["run", str(suite), "--history", store, "--json",
                               str(tmp_path / f"run{i}.json"), *extra]))
        finally:
            del os.environ["RATE"], os.environ["BUILD_NUMBER"]
    return codes


def test_a_nightly_loop_finds_the_slower_build_in_sqlite_and_postgresql(
        tmp_path: Path, postgres_url: str) -> None:
    import json

    from iogate.history import record

    store = str(tmp_path / "nightly.sqlite")
    codes = nightly(tmp_path, store, [2000] * 25 + [1500] * 5)
    # The history expectation: not judged while the history is short, then met, then
    # failed by every run of the 25 % slower build. (A paced run on a busy machine may
    # really fall short of its rate: then, and only then, may a run before it fail. The
    # step is wide enough that such a run, up to 7 % short, is never taken for the slower
    # build's level: a 10 % step once was, in CI. How small a step is found is measured in
    # bench/history_quality.py.)
    assert codes[25:] == [1] * 5
    checks = [json.loads((tmp_path / f"run{i}.json").read_text())["cases"][0]["checks"][0]
              for i in range(30)]
    assert [c["judged"] for c in checks[:5]] == [False] * 5
    for code, check in zip(codes[:25], checks[:25], strict=True):
        assert code == 0 or check["observed"] < 0.95 * 2000, check
    slow = json.loads((tmp_path / "run25.json").read_text())["cases"][0]["checks"][0]
    assert slow["passed"] is False
    assert slow["evidence"]["reference"] == "history"
    assert slow["evidence"]["decision"] == "regression", slow
    for i in range(30):  # the same runs, recorded in a shared PostgreSQL database
        record(postgres_url, json.loads((tmp_path / f"run{i}.json").read_text()),
               environ={"BUILD_NUMBER": str(100 + i)})
    # Both stores give the same change points, the slower build's among them. (A paced run
    # on a busy machine may fall short: two such runs in a row could be a change of their
    # own, which is why the others are not asserted away.)
    outputs = []
    for dest in (store, postgres_url):
        proc = iogate("detect", dest, "--metric", "read.iops", "--json", "cp.json",
                      cwd=tmp_path)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "REGRESSED (new)" in proc.stdout, proc.stdout
        assert "build 125" in proc.stdout, proc.stdout
        points = json.loads((tmp_path / "cp.json").read_text())["change_points"]
        [found] = [p for p in points if p["build"] == "build 125"]
        assert found["new"], points
        assert found["regression"], points
        assert found["runs_after"] == 5
        assert found["change_pct"] == pytest.approx(-25, abs=3)
        outputs.append([{k: v for k, v in p.items() if k not in ("run_id", "recorded_at")}
                        for p in points])
    sqlite_points, postgresql_points = outputs
    assert len(sqlite_points) == len(postgresql_points)
    for a, b in zip(sqlite_points, postgresql_points, strict=True):
        assert a == {k: pytest.approx(v) if isinstance(v, float) else v for k, v in b.items()}
    # After more runs at the new level, the regression is no longer new.
    proc = iogate("detect", store, "--metric", "read.iops", "--recent", "4", "--json",
                  "cp4.json", cwd=tmp_path)
    points = json.loads((tmp_path / "cp4.json").read_text())["change_points"]
    [found] = [p for p in points if p["build"] == "build 125"]
    assert found["regression"], points
    assert not found["new"], points
    # The trend: the plot and the page name the change.
    proc = iogate("history", store, "--metric", "read.iops", "-k", "paced", "--png",
                  "trend.png", "--html", "trend.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "trend.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "trend.html").read_text()
    assert "build 125" in page
    assert "regression (new)" in page
    assert "data:image/png" in page
    assert page.count("<tr><td>20") == 30 + len(sqlite_points)  # every run and change


def test_detect_and_trend_refuse_what_they_cannot_do(tmp_path: Path) -> None:
    store = str(tmp_path / "h.sqlite")
    assert nightly(tmp_path, store, [2000] * 3) == [0] * 3
    proc = iogate("detect", store, cwd=tmp_path)
    assert proc.returncode == 0
    assert "no change point in 7 series" in proc.stdout
    proc = iogate("detect", store, "--alpha", "2", cwd=tmp_path)
    assert proc.returncode == 2
    assert "not strictly between 0 and 1" in proc.stderr
    proc = iogate("detect", "missing.sqlite", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no such history store" in proc.stderr
    proc = iogate("history", store, "--png", "t.png", cwd=tmp_path)
    assert proc.returncode == 2
    assert "give --metric M too" in proc.stderr
    proc = iogate("history", store, "--metric", "write.iops", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no run of the store measured write.iops" in proc.stderr
    (tmp_path / "other.suite.yaml").write_text(PACED.replace("paced", "paced2"))
    from iogate.cli import main

    assert main(["run", str(tmp_path / "other.suite.yaml"), "--history", store]) == 0
    proc = iogate("history", store, "--metric", "read.iops", cwd=tmp_path)
    assert proc.returncode == 2
    assert "2 series of read.iops match; choose one with -k" in \
        proc.stderr
    proc = iogate("history", store, "--metric", "read.iops", "-k", "paced2", cwd=tmp_path)
    assert proc.returncode == 0
    assert "1 runs, no change point" in proc.stdout
    assert not (tmp_path / "t.png").exists()


def test_history_expectations_need_a_store(tmp_path: Path) -> None:
    (tmp_path / "n.suite.yaml").write_text(PACED)
    proc = iogate("run", "n.suite.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "refer to history, but no history store is given" in proc.stderr
    assert "n.suite.yaml:12: nightly.suite.yaml" not in proc.stderr
    assert "n.suite.yaml:12: n.suite.yaml::paced: read.iops" in proc.stderr


def test_a_run_is_recorded_in_postgresql_from_the_command_line(tmp_path: Path,
                                                                postgres_url: str) -> None:
    (tmp_path / "h.suite.yaml").write_text(SUITE)
    proc = iogate("run", "h.suite.yaml", "--history", postgres_url, "--label", "lot=A",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = iogate("history", postgres_url, "--label", "lot=A", cwd=tmp_path)
    assert listed.returncode == 0
    assert "1 case(s)" in listed.stdout
    assert "lot=A" in listed.stdout


def test_a_recorded_run_reports_each_case_s_recent_trend(tmp_path: Path) -> None:
    import json

    store = str(tmp_path / "h.sqlite")
    nightly(tmp_path, store, [2000] * 6)
    assert nightly(tmp_path, store, [1800], "--html", str(tmp_path / "r.html"),
                   "--artifacts", str(tmp_path / "art")) == [1]
    section = json.loads((tmp_path / "run0.json").read_text())["history"]
    assert section["store"] == store
    assert section["runs"] == 30
    trend = section["cases"]["nightly.suite.yaml::paced"]["read.iops"]
    assert len(trend["runs"]) == 6
    assert trend["runs"][0]["build"] == "build 100"
    assert 0 < trend["current"] <= 1800 * 1.01  # paced: at most its rate
    assert set(section["cases"]["nightly.suite.yaml::paced"]) == {"read.iops",
                                                                  "read.clat.p99"}
    [case_dir] = (tmp_path / "art").iterdir()
    assert (case_dir / "trend-read.iops.png").read_bytes()[:4] == b"\x89PNG"
    page = (tmp_path / "r.html").read_text()
    assert "read.iops: the recorded runs&#x27; trend and this run" in page or \
        "read.iops: the recorded runs' trend and this run" in page


def test_a_regression_keeps_failing_until_a_person_accepts_it(tmp_path: Path) -> None:
    """Issue 26: a build four times slower fails every night (its failed runs never become
    the norm by lasting), detect still reports the change, and once the build is accepted
    (history accept --label) its level is the norm and the next night passes."""
    import json

    store = str(tmp_path / "h.sqlite")
    assert nightly(tmp_path, store, [2000] * 6)[5] == 0  # judged from the 6th night
    assert nightly(tmp_path, store, [500] * 6, "--label", "build=b7") == [1] * 6
    check = json.loads((tmp_path / "run5.json").read_text())["cases"][0]["checks"][0]
    assert check["passed"] is False, check
    assert check["judged"] is not False, check
    listed = iogate("history", store, "--label", "build=b7", cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout
    assert listed.stdout.count("1 case(s): 1 failed") == 6, listed.stdout
    proc = iogate("detect", store, "--metric", "read.iops", cwd=tmp_path)
    assert "REGRESSED" in proc.stdout, proc.stdout
    assert "build 100" in proc.stdout, proc.stdout

    proc = iogate("history", "accept", store, "--label", "build=b7", "--by", "carol",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{store}: accepted 6 case(s) of 6 run(s) into the norm by carol" in proc.stdout
    assert proc.stdout.count("nightly.suite.yaml::paced  (failed)") == 6, proc.stdout
    proc = iogate("history", "accept", store, "--label", "build=b7", cwd=tmp_path)
    assert proc.returncode == 0
    assert "nothing to accept" in proc.stdout
    trend = iogate("history", store, "--metric", "read.iops", "-k", "paced", cwd=tmp_path)
    assert "12 runs, 12 in the norm (passed or accepted)" in trend.stdout, trend.stdout
    assert trend.stdout.count(" accepted\n") == 6
    assert "REGRESSED" in trend.stdout
    assert nightly(tmp_path, store, [500], "--label", "build=b7") == [0]
    # detect still reports the change: it looks at every run, accepted or not.
    proc = iogate("detect", store, "--metric", "read.iops", "--recent", "20", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "REGRESSED (new)" in proc.stdout, proc.stdout


def _document(iops: float, outcome: str = "passed") -> dict[str, object]:
    from iogate.report import SCHEMA_VERSION

    return {"schema_version": SCHEMA_VERSION, "iogate_version": "0.1.0",
            "created": "2026-11-24T08:00:00+00:00", "environment": {"host": "node-7"},
            "cases": [{"id": "s.suite.yaml::randread", "outcome": outcome,
                       "metrics": {"read.iops": iops}, "environment": {}}]}


def test_accept_names_one_run_by_a_start_of_its_id(tmp_path: Path) -> None:
    from iogate.history import record

    store = str(tmp_path / "h.sqlite")
    run_id, _ = record(store, _document(100.0, "failed"), environ={"BUILD_NUMBER": "7"})
    proc = iogate("history", "accept", store, run_id[:6], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "accepted 1 case(s) of 1 run(s)" in proc.stdout
    assert f"{run_id[:8]}  build 7  s.suite.yaml::randread  (failed)" in proc.stdout
    listed = iogate("history", store, cwd=tmp_path)
    assert f"{run_id[:8]}  build 7  node-7  1 case(s): 1 accepted" in listed.stdout
    for args, message in (
            (("accept", store, "zz"), "no run's id starts with 'zz'"),
            (("accept", store), "name what to accept: a run (RUN_ID"),
            (("accept", store, run_id, "extra"), "unexpected argument(s) extra"),
            (("accept", store, run_id, "--metric", "read.iops"),
             "--metric does not go with history accept"),
            (("accept",), "name the store: history accept DEST [RUN_ID]"),
            ((store, "extra"), "unexpected argument(s) extra"),
            ((store, "--by", "me"), "--by goes with history accept"),
            (("accept", str(tmp_path / "missing.sqlite"), "ab"), "no such history store")):
        proc = iogate("history", *args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)


def test_runs_are_named_by_their_labels_where_no_ci_variable_is_set(tmp_path: Path) -> None:
    """--label firmware=FW2 (then build, then commit) names a run in the listing, detect,
    its --json and the trend page, where the CI set no variable."""
    import json

    from iogate.history import record

    store = str(tmp_path / "h.sqlite")
    for i in range(10):
        record(store, _document(1000.0 + i % 3), {"build": "b6"}, environ={})
    for i in range(5):
        record(store, _document(700.0 + i % 3, "failed"), {"firmware": "FW2", "build": "b7"},
               environ={})
    listed = iogate("history", store, cwd=tmp_path)
    lines = listed.stdout.splitlines()
    assert "  build b6  node-7  1 case(s): 1 passed" in lines[0]
    assert "  FW2  node-7  1 case(s): 1 failed" in lines[-1]
    assert "firmware=FW2" in lines[-1]
    proc = iogate("detect", store, "--json", "cp.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert " FW2 " in proc.stdout, proc.stdout
    [found] = json.loads((tmp_path / "cp.json").read_text())["change_points"]
    assert found["build"] == "FW2"
    assert found["new"]
    proc = iogate("history", store, "--metric", "read.iops", "-k", "randread", "--html",
                  "t.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("build b6") >= 10
    assert " failed\n" in proc.stdout
    page = (tmp_path / "t.html").read_text()
    assert page.count("<td>FW2</td>") == 5 + 1
    assert page.count("<td>failed</td>") == 5
