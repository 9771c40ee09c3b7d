"""The report plugin (plugins/iogate_plots): artifacts, HTML page, the path without matplotlib,
and write errors, on results of real null-engine and psync runs."""

from __future__ import annotations

import base64
import contextlib
import csv
import importlib.metadata
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, NamedTuple

import pluggy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iogate import hooks
from iogate.outcome import CaseResult, series_of
from iogate.plan import plan, scratch_dir
from iogate.report import results_document
from iogate.results import DirectionResult, Interval, JobResult, RunResult
from iogate.runner import run_cases
from iogate.spec import load_suite

plugin = pytest.importorskip("iogate_plots.plugin")
from iogate_plots import data  # noqa: E402  (after the skip: the package must be importable)

PNG = b"\x89PNG\r\n\x1a\n"
SERIES_HEADER = ["repeat", "job", "direction", "end_s", "ios", "bytes", "iops", "bw_bytes",
                 "clat_mean_ns", "clat_p99_ns", "lat_mean_ns", "lat_p99_ns", "resp_mean_ns",
                 "resp_p99_ns"]
HOSTILE = "<script>alert(1)</script>"

SUITE = """\
suite: plots
workloads:
  - name: paced
    ioengine: null
    rw: randrw
    size: 1MiB
    runtime: 400ms
    time_based: true
    rate_iops: 20000
    expect:
      read.clat.p99: "<= 1ms"
      write.resp.p99: "<= 1ns"
      read.clat.p99@max: "<= 1ms"
      read.iops: ">= 0.5 * mean in 90% of 100ms"
  - name: scale
    ioengine: null
    rw: randread
    size: 1MiB
    sweep:
      bs: [4k, 64k]
    expect:
      read.bs.mean: "== ${bs}"
  - name: repeated
    ioengine: null
    rw: read
    size: 2MiB
    repeat: 3
  - name: on-disk
    ioengine: psync
    rw: randread
    size: 1MiB
    filename: {disk}/target.data
    precondition:
      - rw: write
        bs: 1MiB
  - name: hostile
    ioengine: psync
    rw: read
    size: 64k
    filename: "{disk}/no-such-dir/{hostile}.data"
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[CaseResult]]:
    """Every case of SUITE, run once for the module (the runs are the slow part)."""
    disk = Path(tempfile.mkdtemp(prefix="iogate-plots-", dir=scratch_dir()))
    path = tmp_path_factory.mktemp("suite") / "plots.suite.yaml"
    path.write_text(SUITE.replace("{disk}", str(disk)).replace("{hostile}", HOSTILE))
    old = hooks.set_plugin_manager(hooks.new_plugin_manager(load_entrypoints=False))
    try:
        out: list[CaseResult] = []
        for unit in plan(load_suite(path).cases):
            out += run_cases(unit)
        yield out
    finally:
        hooks.set_plugin_manager(old)
        shutil.rmtree(disk, ignore_errors=True)


@contextlib.contextmanager
def report_plugin_only() -> Iterator[pluggy.PluginManager]:
    """A manager with only the report plugin, the process-wide one while it is held."""
    manager = hooks.new_plugin_manager(load_entrypoints=False)
    manager.register(plugin)
    old = hooks.set_plugin_manager(manager)
    try:
        yield manager
    finally:
        plugin.iogate_configure(options={})  # no report asked for beyond its holder
        hooks.set_plugin_manager(old)


@pytest.fixture
def pm() -> Iterator[pluggy.PluginManager]:
    """The report plugin alone, for the test."""
    with report_plugin_only() as manager:
        yield manager


def report(pm: pluggy.PluginManager, results: list[CaseResult], **options: str | None
           ) -> dict[str, Any]:
    hooks.configure(lambda o: options.get(o.name), pm)
    document = results_document(results)
    pm.hook.iogate_report(results=results, document=document)
    return document


class Written(NamedTuple):
    """What the report wrote for every case of SUITE: the results document, the artifacts
    directory and the HTML page."""

    document: dict[str, Any]
    artifacts: Path
    page: Path


@pytest.fixture(scope="module")
def written(results: list[CaseResult], tmp_path_factory: pytest.TempPathFactory) -> Written:
    """The artifacts and the page of every case, drawn once for the tests that read them
    (drawing is the slow part): with only the report plugin, as ``pm`` has it."""
    root = tmp_path_factory.mktemp("written")
    page = root / "page" / "report.html"
    page.parent.mkdir()
    with report_plugin_only() as manager:
        document = report(manager, results, artifacts=str(root / "artifacts"), html=str(page))
    return Written(document, root / "artifacts", page)


def by_name(results: list[CaseResult], name: str) -> CaseResult:
    [found] = [r for r in results if r.case.id == name]
    return found


def ran(results: list[CaseResult]) -> list[CaseResult]:
    return [r for r in results if r.run is not None]


def test_the_suite_ran_as_the_tests_assume(results: list[CaseResult]) -> None:
    outcomes = {r.case.id: r.outcome for r in results}
    assert outcomes == {"paced": "failed", "scale[bs:4k]": "passed", "scale[bs:64k]": "passed",
                        "repeated": "passed", "on-disk": "passed", "hostile": "error"}, \
        [(r.id, r.error) for r in results]
    assert HOSTILE in (by_name(results, "hostile").error or "")


# -- options ---------------------------------------------------------------------------------

def test_declares_artifacts_and_html_options(pm: pluggy.PluginManager) -> None:
    options = {o.name: o for o in hooks.collect_options(pm)}
    assert set(options) == {"artifacts", "html"}
    assert options["artifacts"].cli_flag == "--artifacts"
    assert options["artifacts"].pytest_flag == "--iogate-artifacts"
    assert options["html"].cli_flag == "--html"
    assert options["html"].pytest_flag == "--iogate-html"


def test_without_options_nothing_is_written(pm: pluggy.PluginManager,
                                            results: list[CaseResult],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    document = report(pm, results)
    assert "artifacts" not in document
    assert capsys.readouterr().err == ""


def test_importing_the_plugin_imports_no_plotting_code() -> None:
    code = ("import sys, iogate_plots.plugin; print(sorted(m for m in sys.modules "
            "if m.startswith(('matplotlib', 'iogate_plots.'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['iogate_plots.plugin']"


# -- artifacts -------------------------------------------------------------------------------

def test_artifacts_per_case(written: Written, results: list[CaseResult]) -> None:
    pytest.importorskip("matplotlib")
    root = written.artifacts
    listed = written.document["artifacts"]
    assert set(listed) == {r.id for r in results}
    assert listed[by_name(results, "hostile").id] == []  # it never ran
    for r in ran(results):
        names = {Path(f).name for f in listed[r.id]}
        expected = {"series.csv", "histograms.json", "latency_percentiles.png",
                    "timeline.png"}
        if r.samples:
            expected.add("repeats.png")
        if r.case.sweep_point:
            expected |= {"sweep-scale.png", "knee-scale.png"}
        assert names == expected, r.id
        directories = {Path(f).parent for f in listed[r.id] if "/" in f}
        assert len(directories) == 1
        assert re.fullmatch(r"[A-Za-z0-9._=+-]+", str(directories.pop()))
    for files in listed.values():
        for f in files:
            content = (root / f).read_bytes()
            if f.endswith(".png"):
                assert content.startswith(PNG), f
                assert len(content) > 10_000, f  # axes, lines and labels, not an empty canvas
    # A plot directory per run case plus the sweep's plots, and nothing else.
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == ["knee-scale.png",
                                                                      "sweep-scale.png"]
    assert len([p for p in root.iterdir() if p.is_dir()]) == len(ran(results))


def _case_dir(root: Path, document: dict[str, Any], result: CaseResult) -> Path:
    return root / Path(document["artifacts"][result.id][0]).parent


def test_series_csv_has_a_row_per_interval(written: Written,
                                           results: list[CaseResult]) -> None:
    document, root = written.document, written.artifacts
    for r in ran(results):
        assert r.run is not None
        with open(_case_dir(root, document, r) / "series.csv", newline="") as f:
            rows = list(csv.reader(f))
        assert rows[0] == SERIES_HEADER
        body = [dict(zip(SERIES_HEADER, row, strict=True)) for row in rows[1:]]
        runs = len(r.run_series)
        assert {int(row["repeat"]) for row in body} == set(range(1, runs + 1)), r.id
        for direction in ("read", "write"):
            d = r.run.jobs[0].direction(direction)  # the last run
            mine = [row for row in body
                    if row["direction"] == direction and int(row["repeat"]) == runs]
            assert len(mine) == (len(d.series) if d.ios else 0), (r.id, direction)
            assert sum(int(row["ios"]) for row in mine) == d.ios, (r.id, direction)
            if d.ios:
                assert [float(row["end_s"]) for row in mine] == [iv.end_ns / 1e9
                                                                 for iv in d.series]
    assert len(by_name(results, "repeated").run_series) == 3  # every repeat's series is kept
    paced = by_name(results, "paced")
    rows = (_case_dir(root, document, paced) / "series.csv").read_text().splitlines()
    assert len(rows) - 1 >= 2 * 4  # 100 ms intervals over 400 ms, read and write


def test_histograms_json_counts_add_up_to_the_ios(written: Written,
                                                 results: list[CaseResult]) -> None:
    document, root = written.document, written.artifacts
    for r in ran(results):
        assert r.run is not None
        doc = json.loads((_case_dir(root, document, r) / "histograms.json").read_text())
        assert doc["case"] == r.id
        for direction in ("read", "write"):
            ios = r.run.jobs[0].direction(direction).ios
            if not ios:
                assert direction not in doc["histograms"]
                continue
            for kind in ("clat", "lat"):
                h = doc["histograms"][direction][kind]
                assert h["count"] == ios
                assert sum(count for _lo, _hi, count in h["buckets"]) == ios
                assert all(lo < hi for lo, hi, _count in h["buckets"])
                lows = [lo for lo, _hi, _count in h["buckets"]]
                assert lows == sorted(set(lows))
                assert h["buckets"][0][0] <= h["min_ns"] <= h["mean_ns"] <= h["max_ns"] \
                    < h["buckets"][-1][1]
    # A rate was set: the response latency (wait behind the schedule included) is there too.
    paced = json.loads((_case_dir(root, document, by_name(results, "paced"))
                        / "histograms.json").read_text())
    assert paced["histograms"]["read"]["resp"]["count"] == paced["histograms"]["read"][
        "clat"]["count"]


def test_repeats_and_sweeps_are_grouped(results: list[CaseResult]) -> None:
    [sweep] = data.sweeps(results)
    assert sweep.name == "scale"
    assert [data.point_label(r.case.sweep_point) for r in sweep.results] == ["bs=4k",
                                                                             "bs=64k"]
    assert len(by_name(results, "repeated").samples["read.iops"]) == 3


def test_latency_thresholds_go_on_their_distribution(results: list[CaseResult]) -> None:
    paced = by_name(results, "paced")
    dists = {(d.direction, d.kind): d for d in data.distributions(paced)}
    # clat per direction, and resp because a rate was set
    assert set(dists) == {("read", "clat"), ("read", "resp"), ("write", "clat"),
                          ("write", "resp")}
    assert [c.expectation.key for c in dists["read", "clat"].checks] == [
        "read.clat.p99", "read.clat.p99@max"]
    [failed] = dists["write", "resp"].checks
    assert not failed.passed
    assert failed.threshold == 1.0
    assert dists["read", "resp"].checks == []
    # Unpaced: no response latency shown.
    assert {d.kind for d in data.distributions(by_name(results, "on-disk"))} == {"clat"}


def test_percentile_curve_passes_through_the_run_percentiles(
        results: list[CaseResult]) -> None:
    paced = by_name(results, "paced")
    assert paced.run is not None
    measured = paced.run.metrics()
    for dist in data.distributions(paced):
        xs, ys = data.percentile_curve(dist.stats)
        assert xs == sorted(xs)
        assert ys == sorted(ys)  # latency never falls as q rises
        assert xs[0] == 0.0
        assert dist.stats.min <= ys[0] <= ys[1]  # p0: the lowest bucket
        assert xs[-1] == pytest.approx(math.log10(dist.stats.count))  # what n resolves
        at = dict(zip(xs, ys, strict=True))
        for pct in (50.0, 90.0, 99.0):  # the curve is the metrics, not an approximation
            assert at[data.nines(pct)] == measured[f"{dist.direction}.{dist.kind}.p{pct:g}"], \
                (dist.direction, dist.kind, pct)


def _stalled(result: CaseResult) -> CaseResult:
    """`result` with a read series whose middle interval had no completions (a stall)."""
    ms = 1_000_000
    series = [Interval(200 * ms, 10, 40960, 50.0, 204800.0, 800.0, 2000, 900.0, 2100),
              Interval(400 * ms, 0, 0, 0.0, 0.0, None, None, None, None),
              Interval(600 * ms, 12, 49152, 60.0, 245760.0, 700.0, 1500, 800.0, 1600)]
    read = DirectionResult(ios=22, bytes=22 * 4096, runtime_ns=600 * ms, iops=36.7,
                           bw=36.7 * 4096, series=series)
    run = RunResult(jobs=[JobResult(read=read)])
    return replace(result, run=run, run_series=[series_of(run)])


def test_an_interval_without_completions_is_a_gap_not_a_zero(
        results: list[CaseResult]) -> None:
    stalled = _stalled(by_name(results, "paced"))
    assert stalled.run is not None
    rows = list(csv.reader(data.series_csv(stalled).splitlines()))
    empty = dict(zip(SERIES_HEADER, rows[2], strict=True))
    assert (empty["ios"], empty["iops"], empty["clat_p99_ns"], empty["lat_mean_ns"]) == (
        "0", "0.0", "", "")
    figures = pytest.importorskip("iogate_plots.figures")
    ends, iops, p99 = figures.timeline_points(stalled.run_series[0], "read")
    assert ends == [0.2, 0.4, 0.6]
    assert iops == [50.0, 0.0, 60.0]
    assert p99[0] == 2000
    assert math.isnan(p99[1])
    assert p99[2] == 1500
    png = figures.timeline(stalled)
    assert png is not None
    assert png.startswith(b"\x89PNG")


@given(st.lists(st.text(max_size=300), max_size=8))
def test_safe_names_are_distinct_file_names(texts: list[str]) -> None:
    names = data.unique_names(texts)
    assert len(set(names)) == len(names)
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9._=+-]+", name)
        assert not name.startswith(".")
        assert len(name) <= 130


# -- HTML --------------------------------------------------------------------------------------

VOID = {"meta", "br", "img", "hr", "link", "input", "col", "area", "base", "wbr", "source"}


class StrictParser(HTMLParser):
    """Records what a browser would have to repair: unclosed or mismatched tags, a missing
    doctype, and every img source and text node."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.doctype: str | None = None
        self.images: list[str] = []
        self.text: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, text: str) -> None:
        self.text.append(text)


def parse_html(text: str) -> StrictParser:
    parser = StrictParser()
    parser.feed(text)
    parser.close()
    assert parser.problems == []
    assert parser.stack == []
    assert parser.doctype == "DOCTYPE html"
    html_attrs: Mapping[str, str | None] = next(a for t, a in parser.tags if t == "html")
    assert html_attrs.get("lang")
    assert ("meta", {"charset": "utf-8"}) in parser.tags
    return parser


def test_html_page_is_valid_self_contained_and_complete(written: Written,
                                                        results: list[CaseResult]) -> None:
    pytest.importorskip("matplotlib")
    text = written.page.read_text(encoding="utf-8")
    parsed = parse_html(text)
    shown = "".join(parsed.text)
    for r in results:
        assert r.id in shown
    assert "1 failed" in shown
    assert "1 error" in shown
    assert "plots" in shown
    # Every plot embedded as a PNG data URI, nothing fetched from elsewhere.
    assert parsed.images
    for src in parsed.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG)
    expected_plots = sum(2 + bool(r.samples) for r in ran(results)) + 2  # + knee and sweep
    assert len(parsed.images) == expected_plots
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", text)
    # The failed check, expected against observed.
    assert "write.resp.p99" in shown
    assert "&lt;= 1ns" in text


def test_html_escapes_hostile_text(written: Written) -> None:
    text = written.page.read_text(encoding="utf-8")
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    parsed = parse_html(text)
    assert HOSTILE in "".join(parsed.text)  # shown as text, literally
    assert not any(tag == "script" for tag, _ in parsed.tags)


# -- without matplotlib, and when writing fails ------------------------------------------------

def test_without_matplotlib_csv_json_and_html_are_still_written(
        pm: pluggy.PluginManager, results: list[CaseResult], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    page = tmp_path / "report.html"
    document = report(pm, results, artifacts=str(tmp_path / "a"), html=str(page))
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install matplotlib" in err
    for r in ran(results):
        assert sorted(Path(f).name for f in document["artifacts"][r.id]) == [
            "histograms.json", "series.csv"]
    assert not list((tmp_path / "a").rglob("*.png"))
    parsed = parse_html(page.read_text(encoding="utf-8"))
    assert parsed.images == []
    assert "pip install matplotlib" in "".join(parsed.text)


def test_write_errors_are_reported_not_raised(pm: pluggy.PluginManager,
                                              results: list[CaseResult], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.mkdir()  # usable when the options are checked, before the run
    hooks.configure(lambda o: {"artifacts": str(blocker / "artifacts"),
                               "html": str(blocker / "report.html")}.get(o.name), pm)
    blocker.rmdir()
    blocker.write_text("not a directory")  # and no longer when the report is written
    paced = [by_name(results, "paced")]  # one case drawn is as good as all for this
    document = results_document(paced)
    pm.hook.iogate_report(results=paced, document=document)
    err = capsys.readouterr().err
    assert f"cannot create the artifacts directory {blocker / 'artifacts'}" in err
    assert f"cannot write the HTML report {blocker / 'report.html'}" in err
    assert document["artifacts"] == {}


def test_unusable_paths_are_refused_when_configured(pm: pluggy.PluginManager,
                                                    tmp_path: Path) -> None:
    from iogate.files import OutputError

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for options, words in [({"html": str(tmp_path / "missing" / "r.html")}, "does not exist"),
                           ({"html": str(tmp_path)}, "is a directory"),
                           ({"artifacts": str(blocker)}, "is not a directory"),
                           ({"artifacts": str(blocker / "a")}, "is not a directory")]:
        with pytest.raises(OutputError, match=words) as caught:
            hooks.configure(lambda o, options=options: options.get(o.name), pm)
        assert caught.value.flag() == f"--{next(iter(options))}"
    assert blocker.read_text() == "not a directory"


def test_a_plot_that_fails_is_reported_and_the_rest_written(
        pm: pluggy.PluginManager, results: list[CaseResult], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    figures = pytest.importorskip("iogate_plots.figures")

    def broken(result: CaseResult) -> bytes:
        raise RuntimeError("no ink")

    monkeypatch.setattr(figures, "timeline", broken)
    paced = by_name(results, "paced")
    document = report(pm, [paced], artifacts=str(tmp_path))
    assert "cannot draw timeline.png: no ink" in capsys.readouterr().err
    assert sorted(Path(f).name for f in document["artifacts"][paced.id]) == [
        "histograms.json", "latency_percentiles.png", "series.csv"]


# -- through the command line ------------------------------------------------------------------

def _has_entry_point() -> bool:
    return any(ep.name == "plots" for ep in importlib.metadata.entry_points(group="iogate"))


@pytest.mark.skipif(not _has_entry_point(),
                    reason="the 'plots' entry point of the iogate group is not installed "
                           "(reinstall the package after adding it to pyproject.toml)")
def test_cli_writes_artifacts_and_html(tmp_path: Path) -> None:
    (tmp_path / "s.suite.yaml").write_text("""\
suite: cli
workloads:
  - name: quick
    ioengine: null
    rw: randread
    size: 1MiB
    expect:
      read.clat.p99: "<= 10ms"
""")
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", "s.suite.yaml",
                           "--artifacts", "out", "--html", "report.html", "--json", "r.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = json.loads((tmp_path / "r.json").read_text())["artifacts"]
    files = listed["s.suite.yaml::quick"]
    assert {Path(f).name for f in files} >= {"series.csv", "histograms.json"}
    for f in files:
        assert (tmp_path / "out" / f).is_file()
    parse_html((tmp_path / "report.html").read_text(encoding="utf-8"))
