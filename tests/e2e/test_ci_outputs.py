"""The summaries for CI, from both front ends (``iogate run`` and the pytest plugin): the
Markdown summary (``--markdown``) added to what its file held, as GitHub's job summary
expects; the OpenMetrics exposition (``--openmetrics``) holding the results document's
values, as Prometheus's parser reads them; each path refused before anything runs when it
could not be written, and a summary that fails to be written losing neither the others, nor
the results document, nor the exit code."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from tests.e2e.test_outputs import assert_refused_before_running, char_device, iogate
from tests.unit.test_markdown import parse_summary
from tests.unit.test_openmetrics import parse, value

from iogate.units import format_count

SUITE = """\
suite: ci
defaults:
  ioengine: null
  rw: randread
  bs: 4k
  size: 1MiB
workloads:
  - name: fine
    expect:
      read.iops: ">= 1"
  - name: tight
    expect:
      read.clat.p99: "<= 1h"
      read.iops: ">= 1000G"
"""

FAILED = "❌ ci.suite.yaml::tight: failed"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "ci.suite.yaml"
    path.write_text(SUITE)
    return path


def assert_summary_of_the_run(text: str, document: dict) -> None:
    """The summary shows every case of the results document, and the failed check of the
    failing one with the value the document holds."""
    summary = parse_summary(text)
    assert summary.headlines[-1].startswith("❌ iogate: 1 passed, 1 failed, 0 error(s) in ")
    assert [row[0] for row in summary.rows] == [c["id"] for c in document["cases"]]
    assert [row[1] for row in summary.rows] == ["✅ passed", "❌ failed"]
    [line] = summary.sections[FAILED]
    observed = next(c["observed"] for c in document["cases"][1]["checks"]
                    if c["metric"] == "read.iops")
    assert line == f"read.iops {format_count(observed)}, expected >= 1000G"


def assert_exposition_of_the_run(text: str, document: dict) -> None:
    """The exposition holds each case's verdicts and measured values as the results
    document has them."""
    series = parse(text)
    for case in document["cases"]:
        cid = {"case": case["id"], "suite": "ci"}
        assert value(series, "iogate_case_passed", **cid) == (case["outcome"] == "passed")
        assert value(series, "iogate_iops", direction="read", **cid) == \
            case["metrics"]["read.iops"]
        assert value(series, "iogate_latency_seconds", direction="read", kind="clat",
                     quantile="0.99", **cid) == \
            pytest.approx(case["metrics"]["read.clat.p99"] / 1e9)
        for check in case["checks"]:
            assert value(series, "iogate_check_passed", metric=check["metric"],
                         **cid) == check["passed"]
    assert value(series, "iogate_run_cases", outcome="failed") == 1


# -- iogate run ----------------------------------------------------------------------------

def test_run_writes_both_summaries(tmp_path: Path, suite: Path) -> None:
    summary = tmp_path / "step_summary"
    summary.write_text("## Build\n\nok\n")  # what an earlier command of the step wrote
    (tmp_path / "textfile").mkdir()  # node exporter's textfile directory
    prom = tmp_path / "textfile" / "iogate.prom"
    prom.write_text("# EOF\n")  # the last run's
    proc = iogate("run", str(suite), "--json", "r.json", "--markdown", str(summary),
                  "--openmetrics", str(prom), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr  # one expectation failed
    document = json.loads((tmp_path / "r.json").read_text())
    text = summary.read_text()
    assert text.startswith("## Build\n\nok\n\n## ❌ iogate: ")
    assert_summary_of_the_run(text, document)
    assert_exposition_of_the_run(prom.read_text(), document)
    assert [p.name for p in prom.parent.iterdir()] == ["iogate.prom"]  # no temporary left


@pytest.mark.parametrize("option", ["--markdown", "--openmetrics"])
@pytest.mark.parametrize(("where", "problem"), [
    ("missing/s", "does not exist"),
    ("adir", "is a directory"),
])
def test_an_unusable_summary_path_is_refused_before_the_run(tmp_path: Path, suite: Path,
                                                            option: str, where: str,
                                                            problem: str) -> None:
    (tmp_path / "adir").mkdir()
    proc = iogate("run", str(suite), "--json", "r.json", option, where, cwd=tmp_path)
    assert_refused_before_running(proc, option, problem)
    assert not (tmp_path / "r.json").exists()


def test_a_device_node_as_the_summary_is_refused_and_stays(tmp_path: Path,
                                                           suite: Path) -> None:
    device = char_device(tmp_path / "null")
    proc = iogate("run", str(suite), "--markdown", str(device), cwd=tmp_path)
    assert_refused_before_running(proc, "--markdown", "not a regular file")
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_summary_that_cannot_be_written_loses_nothing_else(
        tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from iogate import cli, markdown
    from iogate.files import OutputError

    def full(path: str, text: str, option: str | None = None, separator: str = "") -> None:
        raise OutputError(path, "cannot be written: No space left on device", option)

    monkeypatch.setattr(markdown, "append_whole", full)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", str(suite), "--json", "r.json", "--markdown", "s.md",
                     "--openmetrics", "m.prom"])
    err = capsys.readouterr().err
    assert code == cli.EXIT_RUNTIME, err  # as for a results file that cannot be written
    assert "iogate: --markdown s.md: cannot be written: No space left on device" in err
    document = json.loads((tmp_path / "r.json").read_text())
    assert [c["outcome"] for c in document["cases"]] == ["passed", "failed"]
    assert not (tmp_path / "s.md").exists()
    assert_exposition_of_the_run((tmp_path / "m.prom").read_text(), document)


# -- the pytest plugin ---------------------------------------------------------------------

def test_the_plugin_writes_both_summaries(pytester: pytest.Pytester) -> None:
    (pytester.path / "ci.suite.yaml").write_text(SUITE)
    summary = pytester.path / "summary.md"
    summary.write_text("earlier\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-json=r.json",
                                f"--iogate-markdown={summary}",
                                "--iogate-openmetrics=iogate.prom")
    result.assert_outcomes(passed=1, failed=1)
    document = json.loads((pytester.path / "r.json").read_text())
    text = summary.read_text()
    assert text.startswith("earlier\n\n## ❌ iogate: ")
    assert_summary_of_the_run(text, document)
    assert_exposition_of_the_run((pytester.path / "iogate.prom").read_text(), document)


@pytest.mark.parametrize("option", ["--iogate-markdown", "--iogate-openmetrics"])
def test_the_plugin_refuses_an_unusable_summary_before_collecting(
        pytester: pytest.Pytester, option: str) -> None:
    (pytester.path / "ci.suite.yaml").write_text(SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"{option}=missing/s")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"{option} missing/s" in err, err
    assert "does not exist" in err, err
    assert "Traceback" not in err
    assert "passed" not in result.stdout.str()


def test_the_plugin_fails_the_session_when_a_summary_cannot_be_written(
        pytester: pytest.Pytester) -> None:
    (pytester.path / "ci.suite.yaml").write_text(SUITE.replace('">= 1000G"', '">= 1"'))
    pytester.makeconftest("""
import iogate.markdown
from iogate.files import OutputError

def full(path, text, option=None, separator=""):
    raise OutputError(path, "cannot be written: No space left on device", option)

iogate.markdown.append_whole = full
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--iogate-json=r.json",
                                           "--iogate-markdown=s.md")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR, out  # every item passed
    assert "iogate: --iogate-markdown s.md: cannot be written: No space left on device" in out
    document = json.loads((pytester.path / "r.json").read_text())
    assert [c["outcome"] for c in document["cases"]] == ["passed", "passed"]
