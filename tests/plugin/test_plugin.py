"""The pytest plugin, driven through pytester as a user would run it."""

from __future__ import annotations

import json
import platform
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from tests.e2e.test_history_cli import PACED

NULL_SUITE = """\
suite: demo
defaults:
  ioengine: null
  size: 4MiB
  bs: 4k
workloads:
  - name: fast
    rw: randread
    expect:
      read.iops: ">= 1"
      read.ios: "== 1024"
  - name: impossible
    rw: randread
    expect:
      read.clat.p99: "<= 500ms"
      read.iops: ">= 1000G"
"""


def write_suite(pytester: pytest.Pytester, text: str, name: str = "demo") -> None:
    (pytester.path / f"{name}.suite.yaml").write_text(text)


def test_each_workload_is_an_item_that_passes_or_fails(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*demo.suite.yaml::impossible*"])


def test_failure_shows_table_suite_lines_and_workload(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "impossible")
    result.assert_outcomes(failed=1, deselected=1)
    out = result.stdout.str()
    # the table: header, the passing and the failing check
    result.stdout.re_match_lines([r"\s*metric\s+expected\s+observed\s+verdict",
                                  r"\s*read\.clat\.p99\s+<= 500ms\s+\S+\s+ok",
                                  r"\s*read\.iops\s+>= 1000G\s+\S+\s+FAIL"])
    # the user's own suite line, with its line number
    assert "  16 |       read.iops: \">= 1000G\"" in out
    # the workload as run
    assert 'rw: "randread"' in out
    assert "read.clat.p99 <= 500ms" not in out.split("suite lines")[1].split("workload")[0]


def test_items_are_selected_by_id(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "demo.suite.yaml::fast")
    result.assert_outcomes(passed=1)


def test_collection_error_is_one_clean_line_per_problem(pytester: pytest.Pytester) -> None:
    write_suite(pytester, """\
suite: broken
workloads:
  - name: w
    ioengine: null
    rw: randread
    size: 1MiB
    iodepht: 4
    numjobs: 0
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED  # collection errors stop the session
    out = result.stdout.str()
    assert "demo.suite.yaml:7:5: workloads[0].iodepht: unknown key 'iodepht'; " \
           "did you mean 'iodepth'?" in out
    assert "demo.suite.yaml:8:" in out
    assert "workloads[0].numjobs" in out
    assert "Traceback" not in out
    assert "pydantic" not in out


def test_metrics_reach_junit_xml_as_properties(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml", "-k", "fast")
    result.assert_outcomes(passed=1, deselected=1)
    tree = ET.parse(pytester.path / "out.xml")
    props = {p.get("name"): p.get("value") for p in tree.iter("property")}
    assert float(props["read.ios"]) == 1024
    assert float(props["read.iops"]) > 0
    # Each name carries its base unit where the name does not say it.
    assert float(props["read.clat.p99_ns"]) > 0
    assert "read.clat.p99" not in props
    assert float(props["read.bw_bytes_per_s"]) == pytest.approx(
        float(props["read.iops"]) * 4096, rel=1e-6)
    assert "read.rate_pct_pct" not in props
    assert props["outcome"] == "passed"


def junit_cases(path: Path) -> dict[str, tuple[str, dict[str, str | None]]]:
    """Each testcase element of a JUnit file by its name: its classname and properties."""
    return {c.get("name", ""): (c.get("classname", ""),
                                {p.get("name", ""): p.get("value")
                                 for p in c.iter("property")})
            for c in ET.parse(path).iter("testcase")}


def test_junit_classes_cases_by_suite_and_carries_the_facts(pytester: pytest.Pytester) -> None:
    # A suite file's name has dots of its own (demo.suite.yaml): a CI server splits a class
    # at the last one, so the class is the suite's name, and a plain test beside keeps its own.
    write_suite(pytester, NULL_SUITE)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--junitxml=out.xml",
                                "--iogate-fact", "firmware=FW-2.1",
                                "--iogate-fact", "device_model=LabDrive 9")
    result.assert_outcomes(passed=2, failed=1)
    cases = junit_cases(pytester.path / "out.xml")
    assert {name: c[0] for name, c in cases.items()} == {
        "fast": "demo", "impossible": "demo", "test_plain": "test_plain"}
    for name in ("fast", "impossible"):  # a failed case as well
        props = cases[name][1]
        assert props["suite"] == "demo"
        assert props["firmware"] == "FW-2.1"
        assert props["device_model"] == "LabDrive 9"
        assert props["host"] == platform.node()
        assert props["kernel"] == platform.release()
    assert "suite" not in cases["test_plain"][1]
    # pytest's prefix goes before the suite's name, as before a module's
    pytester.runpytest("-p", "no:cacheprovider", "--junitxml=prefixed.xml",
                       "--junit-prefix=lab1", "-k", "fast")
    assert junit_cases(pytester.path / "prefixed.xml")["fast"][0] == "lab1.demo"


def test_json_results_document(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    pytester.runpytest("-p", "no:cacheprovider", "--iogate-json=results.json")
    doc = json.loads((pytester.path / "results.json").read_text())
    assert doc["schema_version"] == 1
    assert doc["environment"]["cpu_count"] >= 1
    cases = {c["id"]: c for c in doc["cases"]}
    assert cases["demo.suite.yaml::fast"]["outcome"] == "passed"
    assert cases["demo.suite.yaml::impossible"]["outcome"] == "failed"
    fast = cases["demo.suite.yaml::fast"]
    assert fast["metrics"]["read.ios"] == 1024
    assert fast["metrics"]["read.bytes"] == 4 * 1024 * 1024
    assert "write.iops" not in fast["metrics"]  # nothing written: not measured, not zero
    failed = [c for c in cases["demo.suite.yaml::impossible"]["checks"] if not c["passed"]]
    assert [c["metric"] for c in failed] == ["read.iops"]
    assert failed[0]["line"] == 16


def test_unmeasured_metric_fails_never_passes_by_absence(pytester: pytest.Pytester) -> None:
    # The null engine has no device, so no device statistics: the check cannot pass.
    write_suite(pytester, """\
suite: absent
workloads:
  - name: no-device
    ioengine: null
    rw: randwrite
    size: 1MiB
    expect:
      disk.util_pct: ">= 0"
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines([r"\s*disk\.util_pct\s+>= 0%?\s+not measured\s+FAIL"])


def test_a_metric_the_workload_can_never_measure_is_a_collection_error(
        pytester: pytest.Pytester) -> None:
    write_suite(pytester, """\
suite: absent
workloads:
  - name: writes-only
    ioengine: null
    rw: randwrite
    size: 1MiB
    expect:
      read.clat.p99: "<= 1s"
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*:8:7: workloads[[]0[]].expect.read.clat.p99: randwrite never "
                                 "reads, so read.* is never measured*"])


def test_summary_table_at_the_end(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    # the problems go under their row where the row would be wider than a CI log's 120
    result.stdout.fnmatch_lines(["*iogate results*", "*case*verdict*",
                                 "*demo.suite.yaml::fast*passed*read.iops=*",
                                 "*demo.suite.yaml::impossible*FAILED*read.iops=*",
                                 "    problems: read.iops >= 1000G (got *)"])


def test_filename_option_overrides_the_target(pytester: pytest.Pytester, disk_dir) -> None:
    target = disk_dir / "override.data"
    write_suite(pytester, """\
suite: target
workloads:
  - name: small-write
    ioengine: psync
    rw: write
    size: 256KiB
    bs: 64k
    filename: /nonexistent-dir/never-used.data
    expect:
      write.ios: "== 4"
""")
    result = pytester.runpytest("-p", "no:cacheprovider", f"--iogate-filename={target}")
    result.assert_outcomes(passed=1)
    assert target.stat().st_size == 256 * 1024


def test_group_members_are_items_that_run_together(pytester: pytest.Pytester) -> None:
    write_suite(pytester, """\
suite: together
defaults:
  ioengine: null
  size: 1MiB
  runtime: 100ms
  time_based: true
  group: pair
workloads:
  - name: reader
    rw: randread
    expect:
      read.ios: "> 0"
  - name: writer
    rw: randwrite
    expect:
      write.ios: "> 0"
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-json=r.json")
    result.assert_outcomes(passed=2)
    doc = json.loads((pytester.path / "r.json").read_text())
    assert [c["id"] for c in doc["cases"]] == ["demo.suite.yaml::reader",
                                               "demo.suite.yaml::writer"]


def test_realized_workload_warnings_reach_pytest(pytester: pytest.Pytester, disk_dir) -> None:
    write_suite(pytester, f"""\
suite: warn
workloads:
  - name: too-fast
    ioengine: psync
    rw: randread
    direct: true
    size: 1MiB
    runtime: 200ms
    time_based: true
    rate_iops: 10M
    filename: {disk_dir}/t.data
""")
    result = pytester.runpytest("-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 1, outcomes
    assert not outcomes.get("failed"), outcomes
    result.stdout.fnmatch_lines(["*RealizedWorkloadWarning*read.rate_pct*could not keep up*"])
    # Other I/O on the same device (another job beside this one) may add a warning of its
    # own (disk.read.ios); each one reaches pytest as a RealizedWorkloadWarning.
    shown = [line for line in result.stdout.lines if "Warning: " in line]
    assert shown, shown
    assert all("RealizedWorkloadWarning: demo.suite.yaml::too-fast: " in line
                         for line in shown), shown
    assert outcomes.get("warnings") == len(shown), (outcomes, shown)


def test_iogate_set_overrides_every_workload(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE.replace('      read.ios: "== 1024"',
                                             '      read.ios: "== 256"'))
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "fast")
    result.assert_outcomes(failed=1, deselected=1)
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "fast",
                                "--iogate-set", "size=1m", "--iogate-set=bs=4k")
    result.assert_outcomes(passed=1, deselected=1)


def test_a_bad_iogate_set_is_a_usage_error(pytester: pytest.Pytester) -> None:
    write_suite(pytester, NULL_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-set", "sise=1m")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--iogate-set sise=1m: unknown key 'sise'; did you mean "
                                 "'size'?*"])


def test_a_session_is_recorded_in_the_history_store(pytester: pytest.Pytester) -> None:
    import sqlite3

    write_suite(pytester, NULL_SUITE)
    store = pytester.path / "h.sqlite"
    for lot in ("A", "B"):
        result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-history", str(store),
                                    "--iogate-label", f"lot={lot}")
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines([f"*{store}: run * recorded, 2 case(s)*"])
    db = sqlite3.connect(store)
    assert db.execute("SELECT labels FROM runs ORDER BY recorded_at").fetchall() == [
        ('{"lot": "A"}',), ('{"lot": "B"}',)]
    assert db.execute("SELECT COUNT(DISTINCT case_id), COUNT(*) FROM cases").fetchone() == (2, 4)
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-label", "lot=A")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--iogate-label names this run in a history store*"])


# The paced suite of the command-line history tests, judged here by pytest.
PACED_SUITE = PACED


def test_a_history_expectation_fails_the_item_of_a_slower_build(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    from iogate.history import record
    from iogate.report import SCHEMA_VERSION

    write_suite(pytester, PACED_SUITE, "nightly")
    store = str(pytester.path / "h.sqlite")
    for i in range(8):  # eight nights at 2000 IOPS, within 0.1 %
        record(store, {"schema_version": SCHEMA_VERSION, "cases": [
            {"id": "nightly.suite.yaml::paced", "outcome": "passed",
             "metrics": {"read.iops": 2000.0 + (i % 3 - 1)}, "environment": {}}]},
            environ={})
    monkeypatch.setenv("RATE", "1800")
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-history", store)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*is not >= 0.95 * history (1.9k)",
                                 "*regression: *% vs history *(8 passed or accepted of 8 runs), "
                                 "n=1, p=* <= 0.05"])
    # pytest's one-line summary names the failed check rather than the item again.
    result.stdout.fnmatch_lines(["FAILED nightly.suite.yaml::paced - 1 of 1 expectation(s) "
                                 "not met: read.iops 1*"])
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*refer to history, but no history store is given*"])


def test_k_selects_one_sweep_point_by_its_id(pytester: pytest.Pytester) -> None:
    write_suite(pytester, """\
suite: swept
workloads:
  - name: scale
    ioengine: null
    rw: randread
    size: 1MiB
    sweep:
      bs: [4k, 64k]
      iodepth: [1, 32]
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "bs:64k-iodepth:32", "-v")
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines(["*demo.suite.yaml::scale[[]bs:64k-iodepth:32[]] PASSED*"])
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "iodepth:32 and not bs:4k")
    result.assert_outcomes(passed=1, deselected=3)
