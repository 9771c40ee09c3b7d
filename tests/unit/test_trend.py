"""What detect reports over series: which metrics it looks at, which change is a regression
(by each metric's better direction), which is new, and how findings print and serialize."""

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
        key[:2] + ("read.iops",): series(steps(1000, 900)),  # fewer IOPS: worse
        key[:2] + ("read.clat.p99",): series(steps(1e6, 0.9e6)),  # lower latency: better
        key[:2] + ("data.compress_ratio",): series(steps(0.5, 0.6)),  # no better direction
    })
    by_metric = {f.key[2]: f for f in found}
    assert set(by_metric) == {"read.iops", "read.clat.p99", "data.compress_ratio"}
    assert by_metric["read.iops"].regression and by_metric["data.compress_ratio"].regression
    assert not by_metric["read.clat.p99"].regression
    f = by_metric["read.iops"]
    assert (f.first.run_id, f.first.tag(), f.runs_since) == ("run-0025", "build 125", 5)
    assert f.new(5) and not f.new(4)
    text = trend.render(found, 3, 5)
    assert "s.suite.yaml::c: read.iops" in text and "build 125" in text
    assert "REGRESSED (new)" in text and "improved" in text and "CHANGED (new)" in text
    assert f"{f.change.change_pct:+.1f}%" in text and -11 < f.change.change_pct < -9
    rows = {r["metric"]: r for r in trend.as_json(found, 5)}
    assert rows["read.iops"]["new"] and not rows["read.clat.p99"]["new"]
    assert rows["read.iops"]["runs_before"] == 25 and rows["read.iops"]["device_model"] is None
    assert trend.render([], 7, 5) == "no change point in 7 series"


def test_the_trend_page_lists_every_run_and_escapes_what_it_shows() -> None:
    points = series(steps(1000, 900))
    key = ("<b>s.suite.yaml::c</b>", "ACME & Co", "read.iops")
    found = trend.detect({key: points})
    page = trend.trend_html(key, points, found, None, 5)
    assert "&lt;b&gt;s.suite.yaml::c&lt;/b&gt; on ACME &amp; Co" in page and "<b>s" not in page
    assert page.count("<tr><td>2026-") == len(points) + len(found)
    assert "regression (new)" in page and "no plot: matplotlib is not installed" in page
