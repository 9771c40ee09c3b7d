"""The trend of one metric of a history store drawn by the plots plugin through the
``iogate_trend_figure`` hook: the PNG and the page, without matplotlib, and ``iogate history
--metric M`` with and without the plugin (the text output loads no plotting code)."""

from __future__ import annotations

import base64
import os
import random
import subprocess
import sys
from pathlib import Path

import pluggy
import pytest

from iogate import hooks, trend
from iogate.history import Point, record
from iogate.report import SCHEMA_VERSION

plugin = pytest.importorskip("iogate_plots.plugin")
from iogate_plots import trend as trend_files  # noqa: E402  (after the skip, as its plugin)

PNG = b"\x89PNG\r\n\x1a\n"
CASE = "n.suite.yaml::paced"


def values(before: float = 1000.0, after: float = 800.0, n_before: int = 12,
           n_after: int = 5) -> list[float]:
    rng = random.Random(7)
    return ([before * (1 + rng.gauss(0, 0.005)) for _ in range(n_before)]
            + [after * (1 + rng.gauss(0, 0.005)) for _ in range(n_after)])


def series(key_values: list[float]) -> list[Point]:
    return [Point(f"run-{i:04d}", f"2026-11-{1 + i // 24:02d}T{i % 24:02d}:00:00+00:00", v,
                  samples=(v - 5, v + 5), build=str(100 + i)) for i, v in enumerate(key_values)]


def a_trend(key: tuple[str, str, str] = (CASE, "ACME", "read.iops")) -> trend.Trend:
    points = series(values())
    return trend.Trend.of(key, points, trend.detect({key: points}), 5)


@pytest.fixture
def pm() -> pluggy.PluginManager:
    pm = hooks.new_plugin_manager(load_entrypoints=False)
    pm.register(plugin, "plots")
    return pm


# -- the hook ----------------------------------------------------------------------------------

def test_the_plugin_draws_the_png_and_the_page(pm: pluggy.PluginManager) -> None:
    pytest.importorskip("matplotlib")
    t = a_trend()
    assert len(t.marks) == 1
    assert t.marks[0].regression  # the plot has a change to mark
    drawn = pm.hook.iogate_trend_figure(trend=t, forms=["png", "html"])
    assert set(drawn) == {"png", "html"}
    png = drawn["png"]
    assert png[:8] == PNG
    assert len(png) > 10_000  # a real plot, not an empty canvas
    page = drawn["html"].decode("utf-8")
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in page
    assert page.count("<tr><td>2026-") == len(t.points) + len(t.findings)
    assert "build 112" in page
    assert "regression (new)" in page
    only = pm.hook.iogate_trend_figure(trend=t, forms=["png"])
    assert set(only) == {"png"}
    assert only["png"][:8] == PNG


def test_without_the_plugin_no_one_answers() -> None:
    bare = hooks.new_plugin_manager(load_entrypoints=False)
    assert bare.hook.iogate_trend_figure(trend=a_trend(), forms=["png"]) is None


def test_without_matplotlib_the_png_is_refused_and_the_page_made_without_it(
        pm: pluggy.PluginManager, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    t = a_trend()
    for forms in (["png"], ["png", "html"]):
        with pytest.raises(trend.FigureError, match="a trend plot needs matplotlib"):
            pm.hook.iogate_trend_figure(trend=t, forms=forms)
    drawn = pm.hook.iogate_trend_figure(trend=t, forms=["html"])
    page = drawn["html"].decode("utf-8")
    assert "no plot: matplotlib is not installed" in page
    assert "data:image/png" not in page
    assert page.count("<tr><td>2026-") == len(t.points) + len(t.findings)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "needs matplotlib" in err


def test_a_form_the_plugin_does_not_make_is_refused(pm: pluggy.PluginManager) -> None:
    with pytest.raises(trend.FigureError, match="no 'svg' file"):
        pm.hook.iogate_trend_figure(trend=a_trend(), forms=["svg"])


def test_the_trend_page_lists_every_run_and_escapes_what_it_shows() -> None:
    points = series([1000.0] * 25 + [900.0] * 5)
    key = ("<b>s.suite.yaml::c</b>", "ACME & Co", "read.iops")
    t = trend.Trend.of(key, points, trend.detect({key: points}), 5)
    page = trend_files.page(t, None)
    assert "&lt;b&gt;s.suite.yaml::c&lt;/b&gt; on ACME &amp; Co" in page
    assert "<b>s" not in page
    assert page.count("<tr><td>2026-") == len(points) + len(t.findings)
    assert "regression (new)" in page
    assert "no plot: matplotlib is not installed" in page


def test_a_run_s_recent_trend_is_drawn_with_this_run() -> None:
    figures = pytest.importorskip("iogate_plots.figures")
    entry = {"runs": [{"run_id": p.run_id, "recorded_at": p.recorded_at, "build": p.tag(),
                       "value": p.value, "samples": list(p.samples)}
                      for p in series(values())],
             "current": 790.0, "change_points": [{"index": 12, "build": "build 112",
                                                  "change_pct": -20.0, "p_value": 0.001,
                                                  "regression": True}]}
    png = figures.trend(trend.recent_trend(CASE, "read.iops", entry))
    assert png[:8] == PNG
    assert len(png) > 10_000


# -- iogate history --metric M: text, --png and --html ------------------------------------------

def store(tmp_path: Path) -> str:
    """A history store of 17 nightly runs of one case, its IOPS 20% lower from the 13th."""
    dest = str(tmp_path / "h.sqlite")
    for i, v in enumerate(values()):
        record(dest, {"schema_version": SCHEMA_VERSION, "iogate_version": "0.1.0",
                      "environment": {"host": "node-7"},
                      "cases": [{"id": CASE, "outcome": "passed", "metrics": {"read.iops": v},
                                 "samples": {"read.iops": [v - 5, v, v + 5]},
                                 "environment": {"target.device_model": "ACME"}}]},
               environ={"BUILD_NUMBER": str(100 + i)})
    return dest


# The command run in a fresh interpreter; its last line: the exit code and the plotting
# modules it loaded (the plugin's hooks, iogate_plots.plugin, are loaded by every command
# and import none).
PROBE = """
import sys
import iogate.trend
from iogate.cli import main
code = main(sys.argv[1:])
drawing = sorted(m for m in sys.modules if m.split(".")[0] == "matplotlib"
                 or m.startswith("iogate_plots.") and m != "iogate_plots.plugin")
print("probe:", code, *drawing)
"""


def probe(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> tuple[int, list[str], subprocess.CompletedProcess[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})
    last = proc.stdout.splitlines()[-1].split()
    assert last[0] == "probe:", proc.stdout + proc.stderr
    return int(last[1]), last[2:], proc


def test_the_text_output_loads_no_plotting_code(tmp_path: Path) -> None:
    dest = store(tmp_path)
    code, drawing, proc = probe("history", dest, "--metric", "read.iops", "-k", "paced",
                                cwd=tmp_path)
    assert code == 0, proc.stderr
    assert f"{CASE} on ACME: read.iops: 17 runs" in proc.stdout
    assert "REGRESSED (new)" in proc.stdout
    assert "build 112" in proc.stdout
    assert drawing == [], f"the text output loaded {drawing}"


def test_png_and_html_are_drawn_through_the_plugin(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    dest = store(tmp_path)
    code, drawing, proc = probe("history", dest, "--metric", "read.iops", "-k", "paced",
                                "--png", "t.png", "--html", "t.html", cwd=tmp_path)
    assert code == 0, proc.stderr
    assert "matplotlib" in drawing
    assert "iogate_plots.figures" in drawing  # the probe sees
    png = (tmp_path / "t.png").read_bytes()
    assert png[:8] == PNG
    assert len(png) > 10_000
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    assert f'src="data:image/png;base64,{base64.b64encode(png).decode()}"' in page
    assert "build 112" in page
    assert "regression (new)" in page
    assert page.count("<tr><td>20") == 17 + 1  # every run and the change
    assert "t.png: trend of read.iops over 17 runs" in proc.stderr


@pytest.mark.parametrize("option", ["--png", "--html"])
def test_without_the_plots_plugin_the_command_says_it_is_needed(tmp_path: Path,
                                                                option: str) -> None:
    dest = store(tmp_path)
    off = {hooks.DISABLE_ENV: "plots"}
    code, drawing, proc = probe("history", dest, "--metric", "read.iops", "-k", "paced",
                                option, "t.out", cwd=tmp_path, env=off)
    assert code == 2
    assert f"iogate: {option}: the trend is drawn by the plots plugin (iogate_plots)" in \
        proc.stderr, proc.stderr
    assert not (tmp_path / "t.out").exists()
    assert drawing == []
    assert proc.stdout.splitlines() == [proc.stdout.splitlines()[-1]]  # before any output
    # The text output needs no plugin.
    code, _, proc = probe("history", dest, "--metric", "read.iops", "-k", "paced",
                          cwd=tmp_path, env=off)
    assert code == 0, proc.stderr
    assert "17 runs" in proc.stdout, proc.stderr
