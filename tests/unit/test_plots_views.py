"""The report plugin's views (plugins/iogate_plots): the nines axis, the baseline drawn over
the run, the knee of a sweep, round ticks in the unit shown, one colour per direction, and
the HTML's workload parameters, spread of repeats and host facts; on real null-engine runs
judged against a baseline recorded from the same suite."""

from __future__ import annotations

import math
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from iogate import hooks
from iogate.baseline import Baseline
from iogate.judge import Gate
from iogate.outcome import CaseResult
from iogate.plan import plan, scratch_dir
from iogate.report import results_document
from iogate.runner import run_cases
from iogate.spec import load_suite

pytest.importorskip("iogate_plots.plugin")
# after the skip: the package must be importable
import itertools

from iogate_plots import data
from iogate_plots.contents import build
from iogate_plots.page import render

SUITE = """\
suite: views
workloads:
  - name: depth
    ioengine: null
    rw: randread
    bs: 4k
    size: 1MiB
    runtime: 200ms
    time_based: true
    sweep:
      iodepth: [1, 4, 16]
    expect:
      read.clat.p99: "<= baseline * 1000"
      read.clat.mean: "<= 1s"
  - name: paced
    ioengine: null
    rw: randrw
    bssplit: 4k/75:64k/25
    size: 2MiB
    runtime: 200ms
    time_based: true
    rate_iops: 4000
    repeat: 3
    expect:
      read.clat.p99.9: "<= 2 * baseline"
      write.resp.p99: "<= 1s"
      read.clat.max: "<= 1s"
"""


@dataclass
class Runs:
    recorded: list[CaseResult]  # the run the baseline was recorded from
    judged: list[CaseResult]  # the same suite judged against it
    baseline: Baseline


def _run(path: Path, gate: Gate) -> list[CaseResult]:
    out: list[CaseResult] = []
    for unit in plan(load_suite(path).cases):
        out += run_cases(unit, gate=gate)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    disk = Path(tempfile.mkdtemp(prefix="iogate-views-", dir=scratch_dir()))
    path = tmp_path_factory.mktemp("suite") / "views.suite.yaml"
    path.write_text(SUITE)
    old = hooks.set_plugin_manager(hooks.new_plugin_manager(load_entrypoints=False))
    try:
        recorded = _run(path, Gate(recording=True))
        baseline = Baseline.from_results(results_document(recorded))
        yield Runs(recorded, _run(path, Gate(baseline=baseline)), baseline)
    finally:
        hooks.set_plugin_manager(old)
        shutil.rmtree(disk, ignore_errors=True)


def by_name(results: list[CaseResult], name: str) -> CaseResult:
    [found] = [r for r in results if r.case.id == name]
    return found


def test_the_runs_are_as_the_tests_assume(runs: Runs) -> None:
    assert [r.case.id for r in runs.judged] == ["depth[iodepth:1]", "depth[iodepth:4]",
                                                "depth[iodepth:16]", "paced"]
    assert all(r.run is not None for r in runs.judged), [(r.id, r.error) for r in runs.judged]
    assert len(by_name(runs.judged, "paced").samples["read.iops"]) == 3


# -- the baseline reaches the report ----------------------------------------------------------

def test_a_case_judged_against_a_baseline_carries_its_entry(runs: Runs) -> None:
    for old, new in zip(runs.recorded, runs.judged, strict=True):
        assert old.baseline == {}  # recording: nothing to judge against yet
        [entry] = [e for e in runs.baseline.entries if e.case_id == new.id]
        assert new.baseline == entry.metrics
        assert new.baseline["read.clat.p99"] == old.metrics["read.clat.p99"]


# -- the nines axis -----------------------------------------------------------------------------

def test_the_nines_axis_puts_each_nine_one_step_further() -> None:
    assert data.nines(90) == pytest.approx(1)
    assert data.nines(99) == pytest.approx(2)
    assert data.nines(99.9) == pytest.approx(3)
    assert data.nines(99.9999) == pytest.approx(6)
    assert data.nines(50) == pytest.approx(math.log10(2))
    assert data.nines(0) == 0
    assert data.resolved_nines(1000) == pytest.approx(3)  # 1000 samples reach p99.9
    assert data.resolved_nines(1) == 0


def test_percentile_points_read_a_direction_and_kind_in_order() -> None:
    metrics = {"read.clat.p99.9": 9.0, "read.clat.p50": 5.0, "read.clat.p99": 8.0,
               "read.clat.mean": 6.0, "read.resp.p99": 100.0, "write.clat.p99": 50.0,
               "read.clat.max": 12.0}
    assert data.percentile_points(metrics, "read", "clat") == [(50.0, 5.0), (99.0, 8.0),
                                                               (99.9, 9.0)]
    assert data.percentile_points(metrics, "read", "slat") == []


def _lines(ax: object) -> dict[str, object]:
    return {line.get_label(): line for line in ax.get_lines()}  # type: ignore[attr-defined]


def test_the_percentile_plot_overlays_the_baseline_and_draws_the_slos(runs: Runs) -> None:
    figures = pytest.importorskip("iogate_plots.figures")
    paced = by_name(runs.judged, "paced")
    fig = figures.latency_percentiles_figure(paced)
    read, write = fig.axes
    assert read.get_title().startswith("read")
    assert write.get_title().startswith("write")
    # The x axis is the nines axis, labelled with the percentiles.
    ticks = dict(zip([t.get_text() for t in read.get_xticklabels()], read.get_xticks(),
                     strict=True))
    assert ticks["p99.9"] == pytest.approx(3)
    assert ticks["p90"] == pytest.approx(1)
    assert read.get_yscale() == "log"
    lines = _lines(read)
    # clat of each direction, resp too (a rate was set), and each one's baseline.
    assert {"clat baseline", "resp baseline"} <= set(lines)
    old = lines["clat baseline"]
    expected = data.percentile_points(paced.baseline, "read", "clat")
    assert [round(x, 9) for x in old.get_xdata()] == [round(data.nines(p), 9)  # type: ignore[attr-defined]
                                                      for p, _ in expected]
    assert list(old.get_ydata()) == [max(v, 1.0) for _, v in expected]  # type: ignore[attr-defined]
    # Same colour as the run's line of that direction, none of the other direction's.
    run_line = next(v for k, v in lines.items() if k.startswith("clat (n="))
    assert old.get_color() == run_line.get_color() == figures.DIRECTION_COLOURS["read"]  # type: ignore[attr-defined]
    write_lines = _lines(write)
    resp = next(v for k, v in write_lines.items() if k.startswith("resp (n="))
    clat = next(v for k, v in write_lines.items() if k.startswith("clat (n="))
    assert resp.get_color() == clat.get_color() == figures.DIRECTION_COLOURS["write"]  # type: ignore[attr-defined]
    assert resp.get_linestyle() != clat.get_linestyle()  # type: ignore[attr-defined]
    # The p99.9 SLO is a triangle at nines 3 and its threshold (2 * the baseline's p99.9).
    [check] = [c for c in paced.checks if c.expectation.key == "read.clat.p99.9"]
    assert check.threshold == 2 * paced.baseline["read.clat.p99.9"]
    triangles = [(line.get_xdata()[0], line.get_ydata()[0]) for line in read.get_lines()
                 if line.get_marker() == "v"]
    assert (pytest.approx(3), max(check.threshold, 1.0)) in triangles
    labels = [t.get_text() for t in read.texts]
    assert any(t.startswith("read.clat.p99.9 <= 2 * baseline (") for t in labels), labels
    assert any(t.startswith("read.clat.max <= 1s") for t in labels), labels
    # Repeated: the case's metrics (medians of its runs) as dots beside the last run's line.
    medians = lines["clat, median of 3 runs"]
    assert list(medians.get_ydata()) == [  # type: ignore[attr-defined]
        max(v, 1.0) for _, v in data.percentile_points(paced.metrics, "read", "clat")]


def test_without_a_baseline_no_overlay_is_drawn(runs: Runs) -> None:
    figures = pytest.importorskip("iogate_plots.figures")
    fig = figures.latency_percentiles_figure(by_name(runs.recorded, "paced"))
    assert not any("baseline" in label for ax in fig.axes for label in _lines(ax))
    once = figures.latency_percentiles_figure(by_name(runs.recorded, "depth[iodepth:1]"))
    assert not any("median" in label for ax in once.axes for label in _lines(ax))


# -- the knee of a sweep ------------------------------------------------------------------------

def test_knee_curves_follow_the_sweep_order_with_each_point_iops(runs: Runs) -> None:
    [sweep] = data.sweeps(runs.judged)
    curves = {(c.direction, c.metric): c for c in data.knee_curves(sweep)}
    assert set(curves) == {("read", "read.clat.p99"), ("read", "read.clat.mean")}  # no writes
    p99 = curves["read", "read.clat.p99"]
    assert p99.labels == ["1", "4", "16"]
    assert p99.iops == [r.metrics["read.iops"] for r in sweep.results]
    assert p99.latency == [r.metrics["read.clat.p99"] for r in sweep.results]
    assert p99.baseline_iops == [r.baseline["read.iops"] for r in sweep.results]
    assert p99.has_baseline
    [(text, thresholds)] = p99.slos.items()
    assert text == "read.clat.p99 <= baseline * 1000"
    assert thresholds == [1000 * r.baseline["read.clat.p99"] for r in sweep.results]
    mean = curves["read", "read.clat.mean"]
    assert mean.slos == {"read.clat.mean <= 1s": [1e9, 1e9, 1e9]}
    assert data.sweep_value_labels(sweep.results) == ("iodepth", ["1", "4", "16"])


def test_the_knee_plot_joins_the_points_in_sweep_order(runs: Runs) -> None:
    figures = pytest.importorskip("iogate_plots.figures")
    [sweep] = data.sweeps(runs.judged)
    fig = figures.knee_figure(sweep)
    [ax] = fig.axes
    lines = _lines(ax)
    p99 = lines["clat.p99"]
    assert list(p99.get_xdata()) == [r.metrics["read.iops"] for r in sweep.results]  # type: ignore[attr-defined]
    assert list(p99.get_ydata()) == [r.metrics["read.clat.p99"] for r in sweep.results]  # type: ignore[attr-defined]
    assert "clat.p99 baseline" in lines
    assert "clat.mean" in lines
    assert [t.get_text() for t in ax.texts][:3] == ["1", "4", "16"]
    assert ax.get_xlabel() == "read IOPS"
    assert "labelled with iodepth" in fig.texts[0].get_text()  # the suptitle


# -- round ticks in the unit shown --------------------------------------------------------------

MIB = 1 << 20


@pytest.mark.parametrize(("kind", "vmax", "step", "unit"), [
    ("BANDWIDTH", 300 * MIB, 50 * MIB, "MiB/s"),
    ("BANDWIDTH", 2.6 * 1024 * MIB, 512 * MIB, "GiB/s"),
    ("DURATION", 2_600_000, 500_000, "ms"),
    ("IOPS", 2_100_000, 500_000, "M"),
    ("IOPS", 41_000, 10_000, "k"),
])
def test_ticks_fall_on_round_values_of_the_unit_shown(kind: str, vmax: float, step: float,
                                                       unit: str) -> None:
    figures = pytest.importorskip("iogate_plots.figures")
    from iogate.metrics import Kind

    k = Kind[kind]
    ticks = [t for t in figures.HumaneLocator(k).tick_values(0, vmax) if 0 <= t <= vmax]
    assert ticks[0] == 0
    assert len(ticks) >= 3
    steps = {round(b - a, 3) for a, b in itertools.pairwise(ticks)}
    assert steps == {step}, ticks
    formatter = figures.HumaneFormatter(k)
    labels = [formatter.label(t, vmax) for t in ticks]
    assert labels[0] == "0"
    for label in labels[1:]:
        assert re.fullmatch(r"\d+(\.\d+)?" + re.escape(unit), label), labels


def test_a_bandwidth_axis_reads_whole_mib_not_decimal_megabytes() -> None:
    figures = pytest.importorskip("iogate_plots.figures")
    from iogate.metrics import Kind

    formatter = figures.HumaneFormatter(Kind.BANDWIDTH)
    for vmax, expected in ((320 * MIB, ["0", "100MiB/s", "200MiB/s", "300MiB/s"]),
                           (280 * MIB, ["0", "50MiB/s", "100MiB/s", "150MiB/s", "200MiB/s",
                                        "250MiB/s"])):
        ticks = figures.HumaneLocator(Kind.BANDWIDTH).tick_values(0, vmax)
        labels = [formatter.label(t, vmax) for t in ticks if t <= vmax]
        assert labels == expected  # decimal ticks would read 286.1MiB/s


# -- the HTML -----------------------------------------------------------------------------------

def _page(results: list[CaseResult], environment: dict[str, object] | None = None) -> str:
    import io

    document = results_document(results)
    if environment is not None:
        document["environment"] = environment
    return render(build(results, None, io.StringIO(), document), document)


def _section(page: str, case_id: str) -> str:
    start = page.index(f"<code>{case_id}</code> <span")
    return page[start:page.index("</section>", start)]


def test_each_case_shows_its_workload_parameters(runs: Runs) -> None:
    page = _page(runs.judged)
    depth = _section(page, "views.suite.yaml::depth[iodepth:16]")
    rows = dict(re.findall(r"<tr><td><code>([^<]+)</code>[^<]*</td><td>([^<]*)</td></tr>",
                           depth))
    assert {k: rows.get(k) for k in ("ioengine", "rw", "bs", "iodepth", "numjobs", "size",
                                     "runtime", "time_based")} == {
        "ioengine": "null", "rw": "randread", "bs": "4KiB", "iodepth": "16", "numjobs": "1",
        "size": "1MiB", "runtime": "200ms", "time_based": "true"}
    paced = _section(page, "views.suite.yaml::paced")
    rows = dict(re.findall(r"<tr><td><code>([^<]+)</code>[^<]*</td><td>([^<]*)</td></tr>",
                           paced))
    assert rows["bssplit"] == "4KiB/75% 64KiB/25%"
    assert rows["rate_iops"] == "total 4k IOPS"
    assert rows["rwmixread"] == "50"
    assert "bs" not in rows  # bssplit says it
    assert "<code>read.iops</code> requested" in paced  # the rate as resolved per direction


def test_a_repeated_case_shows_the_spread_of_its_repeats(runs: Runs) -> None:
    from iogate.expect import format_value
    from iogate.metrics import Kind

    paced = by_name(runs.judged, "paced")
    page = _page(runs.judged)
    section = _section(page, paced.id)
    assert "spread of the repeats" in section
    values = paced.samples["read.iops"]
    row = re.search(r"<td><code>read\.iops</code></td>(.*?)</tr>", section)
    assert row is not None
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells[1:4] == [format_value(Kind.IOPS, v) for v in (min(values),
                                                              sorted(values)[1],
                                                              max(values))]
    # A case run once has no spread table.
    assert "spread of the repeats" not in _section(page, "views.suite.yaml::depth[iodepth:1]")


def test_host_sizes_are_shown_in_binary_units(runs: Runs) -> None:
    page = _page(runs.judged, {"host": "box", "memory_bytes": 25276502016, "cpu_count": 2})
    assert "<code>memory_bytes</code></td><td>23.54GiB</td>" in page
    assert "25276502016" not in page
    assert data.fact_text("target.size_bytes", 274877906944) == "256GiB"
    assert data.fact_text("target.max_sectors_kb", 4096) == "4MiB"
    assert data.fact_text("cpu_count", 2) == "2"
    assert data.fact_text("given", ["firmware", "device_model"]) == "firmware, device_model"
    assert data.fact_text("target.rotational", True) == "True"


def test_the_sweep_section_lists_its_points_in_order(runs: Runs) -> None:
    pytest.importorskip("matplotlib")
    import io

    from iogate_plots.contents import load_figures

    document = results_document(runs.judged)
    report = build(runs.judged, load_figures(), io.StringIO(), document)
    [sweep] = report.sweeps
    assert [p.name for p in sweep.plots] == ["knee-depth.png", "sweep-depth.png"]
    page = render(report, document)
    section = page[page.index('<section class="sweep">'):]
    section = section[:section.index("</section>")]
    assert re.findall(r">(iodepth=\d+)</a>", section) == ["iodepth=1", "iodepth=4",
                                                          "iodepth=16"]
    assert section.count("<img") == 2


def test_a_case_that_refers_to_no_baseline_is_still_drawn_beside_a_loaded_one(
        tmp_path: Path) -> None:
    path = tmp_path / "plain.suite.yaml"
    path.write_text("suite: plain\nworkloads:\n  - name: w\n    ioengine: null\n"
                    "    rw: randread\n    size: 1MiB\n    expect:\n      read.iops: '>= 1'\n")
    old = hooks.set_plugin_manager(hooks.new_plugin_manager(load_entrypoints=False))
    try:
        recorded = _run(path, Gate(recording=True))
        baseline = Baseline.from_results(results_document(recorded))
        [judged] = _run(path, Gate(baseline=baseline))
        [alone] = _run(path, Gate())
    finally:
        hooks.set_plugin_manager(old)
    assert judged.baseline == baseline.entries[0].metrics
    assert judged.baseline["read.iops"] == recorded[0].metrics["read.iops"]
    assert alone.baseline == {}
