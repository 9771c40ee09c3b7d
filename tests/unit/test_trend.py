"""What detect reports over series: which metrics it looks at, which change is a regression
(by each metric's better direction), which is new, and how findings print and serialize; and
what the trend of one metric holds for a plugin to draw (its runs, change points, levels)."""

from __future__ import annotations

import random

from iogate import trend
from iogate.history import Point


def series(values: list[float], builds: int = 100) -> list[Point]:
    return [Point(f"run-{i:04d}", f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00", v,
                  build=str(builds + i)) for i, v in enumerate(values)]


def steps(before: float, after: float, n_after: int = 5) -> list[float]:
    rng = random.Random(5)
    return ([before * (1 + rng.gauss(0, 0.005)) for _ in range(25)]
            + [after * (1 + rng.gauss(0, 0.005)) for _ in range(n_after)])


def test_the_metrics_looked_at() -> None:
    names = ["read.iops", "read.bw", "read.clat.p99", "read.clat.p42", "read.lat.p99",
             "data.compress_ratio"]
    assert trend.select_metrics(names, None) == ["read.bw", "read.clat.p99", "read.iops"]
    assert trend.select_metrics(names, ["read.*.p99"]) == ["read.clat.p99", "read.lat.p99"]
    assert trend.select_metrics(names, ["data.compress_ratio"]) == ["data.compress_ratio"]


def test_which_change_is_a_regression_and_which_is_new() -> None:
    key = ("s.suite.yaml::c", "", "")
    found = trend.detect({
        (*key[:2], "read.iops"): series(steps(1000, 900)),  # fewer IOPS: worse
        (*key[:2], "read.clat.p99"): series(steps(1e6, 0.9e6)),  # lower latency: better
        (*key[:2], "data.compress_ratio"): series(steps(0.5, 0.6)),  # no better direction
    })
    by_metric = {f.key[2]: f for f in found}
    assert set(by_metric) == {"read.iops", "read.clat.p99", "data.compress_ratio"}
    assert by_metric["read.iops"].regression
    assert by_metric["data.compress_ratio"].regression
    assert not by_metric["read.clat.p99"].regression
    f = by_metric["read.iops"]
    assert (f.first.run_id, f.first.tag(), f.runs_since) == ("run-0025", "build 125", 5)
    assert f.new(5)
    assert not f.new(4)
    text = trend.render(found, 3, 5)
    assert "s.suite.yaml::c: read.iops" in text
    assert "build 125" in text
    assert "REGRESSED (new)" in text
    assert "improved" in text
    assert "CHANGED (new)" in text
    assert f"{f.change.change_pct:+.1f}%" in text
    assert -11 < f.change.change_pct < -9
    rows = {r["metric"]: r for r in trend.as_json(found, 5)}
    assert rows["read.iops"]["new"]
    assert not rows["read.clat.p99"]["new"]
    assert rows["read.iops"]["runs_before"] == 25
    assert rows["read.iops"]["device_model"] is None
    assert trend.render([], 7, 5) == "no change point in 7 series"


def test_a_trend_holds_what_its_plot_shows() -> None:
    values = steps(1000, 900)
    points = series(values)
    key = ("s.suite.yaml::c", "ACME", "read.iops")
    found = trend.detect({key: points})
    t = trend.Trend.of(key, points, found, 5)
    assert t.title == "s.suite.yaml::c on ACME: read.iops"
    assert [(m.index, m.build, m.regression) for m in t.marks] == [(25, "build 125", True)]
    # The level of each segment between change points: the mean of its runs.
    before, after = t.levels
    assert (before.start, before.end, after.start, after.end) == (0, 25, 25, 30)
    assert before.value == sum(values[:25]) / 25
    assert after.value == sum(values[25:]) / 5
    assert trend.segment_levels([1.0, 3.0, 10.0], []) == [trend.Level(0, 3, 14 / 3)]
    assert t.value_text(1500.0) == "1.5k"  # as the text output shows it


def test_a_run_s_recent_trend_is_read_back_from_its_document() -> None:
    entry = {"runs": [{"run_id": f"r{i}", "recorded_at": f"2026-11-0{i + 1}T00:00:00",
                       "build": f"build {i}", "value": v, "samples": [v - 1, v + 1]}
                      for i, v in enumerate([10.0, 10.0, 20.0])],
             "current": 21.0,
             "change_points": [{"index": 2, "build": "build 2", "change_pct": 100.0,
                                "p_value": 0.01, "regression": False}]}
    t = trend.recent_trend("s::c", "read.iops", entry)
    assert t.key == ("s::c", "", "read.iops")
    assert t.current == 21.0
    assert not t.findings
    assert [p.tag() for p in t.points] == ["build 0", "build 1", "build 2"]
    assert t.points[2].samples == (19.0, 21.0)
    assert t.marks == (trend.Mark(2, 100.0, False, "build 2"),)
    assert [(lv.start, lv.end, lv.value) for lv in t.levels] == [(0, 2, 10.0), (2, 3, 20.0)]
