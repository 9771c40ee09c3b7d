"""The OpenMetrics exposition, read back with Prometheus's own Python parsers (the OpenMetrics
one and the older text format's, which node exporter's textfile collector and the
Pushgateway speak): the same series for both, every measured metric once in base units,
the verdicts, labels escaped whatever the ids hold, and nothing either format refuses."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as prometheus_families

from iogate import openmetrics
from iogate.outcome import OUTCOMES
from iogate.runner import run_cases
from iogate.spec import load_suite

SUITE = """\
suite: om
defaults:
  ioengine: null
  bs: 4k
  size: 1MiB
workloads:
  - name: good
    rw: randread
    expect:
      read.iops: ">= 1"
  - name: tight
    rw: randrw
    expect:
      read.clat.p99: "<= 1h"
      write.iops: ">= 1000G"
  - name: depth
    rw: randwrite
    sweep:
      iodepth: [1, 2]
"""

# Quotes, a backslash and a line break: what label values must escape.
HOSTILE = 'q"b\\s\nn.suite.yaml'

Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str, parser=openmetrics_families) -> Series:
    """Every sample by name and labels; a series given twice fails."""
    out: Series = {}
    for family in parser(text):
        for s in family.samples:
            assert s.timestamp is None
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, f"duplicate series {key}"
            out[key] = s.value
    return out


def value(series: Series, name: str, **labels: str) -> float:
    """The one series of ``name`` whose labels include ``labels``."""
    [found] = [v for (n, ls), v in series.items()
               if n == name and set(labels.items()) <= ls]
    return found


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("om") / HOSTILE
    path.write_text(SUITE)
    return [r for c in load_suite(path, env={}).cases for r in run_cases([c])]


@pytest.fixture(scope="module")
def text(results) -> str:
    return openmetrics.render(results, {"host": 'node"1'}, wall_s=2.5)


def test_both_parsers_read_the_same_series(text: str) -> None:
    assert text.endswith("\n# EOF\n")
    by_openmetrics = parse(text)
    assert by_openmetrics == parse(text, prometheus_families)
    # the older format ends a family's name at the unit the same way
    names = {n for n, _ in by_openmetrics}
    assert all(re.fullmatch(r"iogate_[a-z0-9_]+", n) for n in names)


def test_every_metric_is_a_series_once_and_nothing_else_is(results, text: str) -> None:
    series = parse(text)
    per_case = [len(r.metrics) + 1 + len(OUTCOMES) + 1 + len(r.checks) for r in results]
    run_wide = [k for k in series if k[0].startswith("iogate_run_")]
    assert len(series) == sum(per_case) + len(run_wide)
    assert len(run_wide) == len(OUTCOMES) + 2


def test_values_are_the_measured_ones_in_base_units(results, text: str) -> None:
    series = parse(text)
    good, tight = results[0], results[1]
    for r in results:
        m = r.metrics
        case = {"case": r.id}
        for d in ("read", "write"):
            if f"{d}.iops" not in m:
                continue
            assert value(series, "iogate_iops", direction=d, **case) == m[f"{d}.iops"]
            assert value(series, "iogate_bandwidth_bytes_per_second", direction=d,
                         **case) == m[f"{d}.bw"]
            assert value(series, "iogate_latency_seconds", direction=d, kind="clat",
                         quantile="0.99", **case) == pytest.approx(m[f"{d}.clat.p99"] / 1e9)
            assert value(series, "iogate_latency_seconds", direction=d, kind="lat",
                         quantile="0.999", **case) == pytest.approx(m[f"{d}.lat.p99.9"] / 1e9)
            assert value(series, "iogate_latency_mean_seconds", direction=d, kind="clat",
                         **case) == pytest.approx(m[f"{d}.clat.mean"] / 1e9)
        assert value(series, "iogate_total_iops", **case) == m["total.iops"]
        assert value(series, "iogate_mix_read_ratio", **case) == \
            pytest.approx(m["mix.read_pct"] / 100)
        assert value(series, "iogate_case_duration_seconds", **case) == r.duration_s
    assert value(series, "iogate_case_passed", case=good.id) == 1
    assert value(series, "iogate_case_passed", case=tight.id) == 0
    assert value(series, "iogate_case_outcome", case=tight.id, outcome="failed") == 1
    assert value(series, "iogate_case_outcome", case=tight.id, outcome="passed") == 0
    assert value(series, "iogate_check_passed", case=tight.id, metric="write.iops",
                 expected=">= 1000G") == 0
    assert value(series, "iogate_check_passed", case=tight.id, metric="read.clat.p99") == 1
    assert value(series, "iogate_run_cases", outcome="passed") == 3
    assert value(series, "iogate_run_cases", outcome="failed") == 1
    assert value(series, "iogate_run_duration_seconds") == 2.5


def test_labels_carry_ids_sweep_points_and_the_host_as_they_are(results, text: str) -> None:
    series = parse(text)
    assert HOSTILE in results[0].id
    passed = {dict(ls)["case"]: dict(ls) for n, ls in series if n == "iogate_case_passed"}
    assert list(passed) == [r.id for r in results]
    for r in results:
        labels = passed[r.id]
        assert labels["suite"] == "om"
        assert labels["host"] == 'node"1'
        assert {k[len("sweep_"):]: v for k, v in labels.items() if k.startswith("sweep_")} \
            == r.case.sweep_point
    assert sorted(passed[r.id].get("sweep_iodepth", "") for r in results) == ["", "", "1", "2"]


def test_units_are_declared_and_help_is_given(text: str) -> None:
    for family in openmetrics_families(text):
        assert family.documentation
        if family.name.endswith(("_seconds", "_bytes", "_ratio", "_bytes_per_second")) \
                and family.name != "iogate_data_compress_ratio":
            assert family.unit, family.name
            assert family.name.endswith("_" + family.unit), family.name
        assert all(not math.isnan(s.value) for s in family.samples)


def test_the_file_is_replaced_whole(tmp_path: Path, results) -> None:
    out = tmp_path / "iogate.prom"
    out.write_text("stale\n")
    openmetrics.write(str(out), results[:1], {})
    text = out.read_text()
    assert "stale" not in text
    assert text.endswith("# EOF\n")
    assert value(parse(text), "iogate_case_passed", case=results[0].id) == 1
