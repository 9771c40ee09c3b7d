"""Gating end to end: sweeps, repeats, baselines with significance, compare, windows, steady
state and the failure report's latency histogram, through the CLI and pytest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

IOGATE = [sys.executable, "-m", "iogate"]

GATE = """\
suite: gate
workloads:
  - name: paced
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 200ms
    time_based: true
    rate_iops: ${RATE:-20000}
    repeat: 5
    expect:
      read.iops: ">= 0.8 * baseline"
      read.iops@cv: "<= 10%"
"""
# The regression the gate must catch: half the rate recorded. The same build must pass: on a
# busy machine a time-based run that the scheduler holds up near its end loses the requests
# due meanwhile, a few percent of a 200 ms run, which a floor of 0.95 could not tell from a
# regression.
SLOWER = {"RATE": "10000"}


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def test_sweep_points_are_cases_with_their_own_thresholds(tmp_path: Path) -> None:
    (tmp_path / "s.suite.yaml").write_text("""\
suite: s
workloads:
  - name: scale
    ioengine: null
    rw: randread
    size: 1MiB
    sweep:
      bs: [4k, 64k]
      iodepth: [1, 8]
    expect:
      read.bs.mean: "== ${bs}"
""")
    proc = iogate("run", "s.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert [c["id"] for c in cases] == [
        "s.suite.yaml::scale[bs:4k-iodepth:1]", "s.suite.yaml::scale[bs:4k-iodepth:8]",
        "s.suite.yaml::scale[bs:64k-iodepth:1]", "s.suite.yaml::scale[bs:64k-iodepth:8]"]
    assert [c["metrics"]["read.ios"] for c in cases] == [256, 256, 16, 16]
    assert [c["workload"]["iodepth"] for c in cases] == [1, 8, 1, 8]
    assert "sweep s.suite.yaml::scale" in proc.stdout  # the sweep table


def test_sweep_items_in_pytest(pytester: pytest.Pytester) -> None:
    (pytester.path / "s.suite.yaml").write_text("""\
suite: s
workloads:
  - name: scale
    ioengine: null
    rw: read
    size: 1MiB
    sweep: [{bs: 4k}, {bs: 1MiB}]
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*s.suite.yaml::scale?bs:4k? PASSED*",
                                 "*s.suite.yaml::scale?bs:1MiB? PASSED*"])


def test_baseline_gate_fails_a_real_regression_and_passes_itself(tmp_path: Path) -> None:
    (tmp_path / "g.suite.yaml").write_text(GATE)
    refused = iogate("run", "g.suite.yaml", cwd=tmp_path)
    assert refused.returncode == 2
    assert "no baseline is loaded" in refused.stderr
    assert "g.suite.yaml:12:" in refused.stderr  # where the suite asks for it

    record = iogate("run", "g.suite.yaml", "--save-baseline", "base.json", "--json",
                    "old.json", cwd=tmp_path)
    assert record.returncode == 0, record.stdout + record.stderr
    assert "not judged: recording the baseline" in record.stdout

    same = iogate("run", "g.suite.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr

    slow = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--json", "new.json",
                  cwd=tmp_path, env=SLOWER)
    assert slow.returncode == 1, slow.stdout + slow.stderr
    # the row says why: the effect against the baseline's runs, the test and its level; the
    # effect is the one between the medians the two documents hold
    effect = re.search(r"regression: (-\d+\.\d)% vs baseline \S+k ±", slow.stdout)
    assert effect, slow.stdout
    [entry] = json.loads((tmp_path / "base.json").read_text())["entries"]
    [case] = json.loads((tmp_path / "new.json").read_text())["cases"]
    change = 100 * (case["metrics"]["read.iops"] / entry["metrics"]["read.iops"] - 1)
    assert float(effect.group(1)) == pytest.approx(change, abs=0.051)
    assert "(5 runs), n=5, p=" in slow.stdout
    assert len(case["samples"]["read.iops"]) == 5
    [failed] = [c for c in case["checks"] if not c["passed"]]
    assert failed["metric"] == "read.iops"
    assert failed["line"] == 12

    compared = iogate("compare", "old.json", "new.json", cwd=tmp_path)
    assert compared.returncode == 1
    assert "REGRESSED" in compared.stdout
    assert "read.iops" in compared.stdout
    assert iogate("compare", "old.json", "old.json", cwd=tmp_path).returncode == 0


def test_a_corrupt_baseline_is_named_never_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "g.suite.yaml").write_text(GATE)
    (tmp_path / "bad.json").write_text('{"format": "something-else"}')
    proc = iogate("run", "g.suite.yaml", "--baseline", "bad.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "bad.json" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_baseline_failure_is_the_failure_of_its_pytest_item(pytester: pytest.Pytester) -> None:
    (pytester.path / "g.suite.yaml").write_text(GATE)
    pytester.runpytest("-p", "no:cacheprovider", "--iogate-save-baseline=base.json"
                       ).assert_outcomes(passed=1)
    os.environ["RATE"] = SLOWER["RATE"]
    try:
        result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json")
    finally:
        del os.environ["RATE"]
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*read.iops*>= 0.8 * baseline*FAIL*"])


def test_windowed_expectations_judge_intervals(tmp_path: Path) -> None:
    (tmp_path / "w.suite.yaml").write_text("""\
suite: w
workloads:
  - name: steady-rate
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 1s
    time_based: true
    rate_iops: 10000
    expect:
      read.iops: ">= 0.8 * mean in all of 100ms"
      read.clat.p99: "<= 1ms in 95% of 100ms"
  - name: impossible
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 500ms
    time_based: true
    expect:
      read.iops: ">= 1000G in 50%"
""")
    proc = iogate("run", "w.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 1
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    ok = cases["w.suite.yaml::steady-rate"]
    assert ok["outcome"] == "passed"
    assert all(c["intervals"] >= 9 for c in ok["checks"])  # 100 ms intervals over 1 s
    bad = cases["w.suite.yaml::impossible"]["checks"][0]
    assert not bad["passed"]
    assert bad["observed"] == 0


def test_steady_state_rounds_and_an_unsteady_skip(tmp_path: Path) -> None:
    (tmp_path / "ss.suite.yaml").write_text("""\
suite: ss
defaults:
  ioengine: null
  rw: randread
  size: 1MiB
  rate_iops: 5000
workloads:
  - name: settles
    steady_state: {metric: read.iops, round: 100ms, window: 3, max_rounds: 8}
    expect:
      read.iops: ">= 4500"
  - name: never-settles
    steady_state: {metric: read.iops, round: 100ms, window: 3, max_rounds: 3,
                   range_pct: 0.000001, slope_pct: 0.000001, on_unsteady: skip}
""")
    proc = iogate("run", "ss.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c["id"]: c for c in json.loads((tmp_path / "r.json").read_text())["cases"]}
    settles = cases["ss.suite.yaml::settles"]
    assert settles["outcome"] == "passed"
    assert settles["steady_state"]["steady"] is True
    assert 3 <= len(settles["steady_state"]["rounds"]) <= 8
    never = cases["ss.suite.yaml::never-settles"]
    assert never["outcome"] == "skipped"
    assert len(never["steady_state"]["rounds"]) == 3


def test_steady_state_rounds_within_the_ramp_are_in_no_window(tmp_path: Path) -> None:
    (tmp_path / "ss.suite.yaml").write_text("""\
suite: ss
workloads:
  - name: ramped
    ioengine: null
    rw: randread
    size: 1MiB
    rate_iops: 5000
    steady_state: {metric: read.iops, round: 100ms, window: 3, max_rounds: 9, ramp: 250ms,
                   range_pct: ~, slope_pct: ~, deviation_pct: 50}
""")
    proc = iogate("run", "ss.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    # The three rounds that start within the ramp (at 0, 100 and 200 ms) are in no window,
    # however steady they were; the run stops at the first steady window after them.
    ss = case["steady_state"]
    assert ss["steady"] is True
    assert ss["window_start"] >= 3
    assert ss["window_start"] + 3 == len(ss["rounds"])


def test_steady_state_needs_a_limit_and_room_after_its_ramp(tmp_path: Path) -> None:
    (tmp_path / "ss.suite.yaml").write_text("""\
suite: ss
defaults: {ioengine: null, rw: randread, size: 1MiB}
workloads:
  - name: no-limit
    steady_state: {metric: read.iops, range_pct: ~, slope_pct: ~}
  - name: no-room
    steady_state: {metric: read.iops, round: 1s, window: 5, max_rounds: 6, ramp: 2s}
""")
    proc = iogate("validate", "ss.suite.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "steady state needs a limit: range_pct, slope_pct or deviation_pct" in proc.stderr
    assert "max_rounds (6) must be at least 2 ramp rounds and the window (5 rounds)" \
        in proc.stderr


def test_failure_report_draws_the_latency_distribution(tmp_path: Path) -> None:
    (tmp_path / "f.suite.yaml").write_text("""\
suite: f
workloads:
  - name: tight
    ioengine: null
    rw: randread
    size: 4MiB
    expect:
      read.clat.p99: "<= 1ns"
""")
    proc = iogate("run", "f.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 1
    assert "read.clat distribution (last run):" in proc.stdout
    assert "SLO 1ns" in proc.stdout
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["environment"] == {}  # the null engine has no target
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["environment"]["cpu_count"] >= 1
    assert doc["environment"]["kernel"]


def test_case_environment_names_the_target_filesystem(disk_dir: Path) -> None:
    (disk_dir / "e.suite.yaml").write_text(f"""\
suite: e
workloads:
  - name: on-disk
    ioengine: psync
    rw: read
    size: 256KiB
    filename: {disk_dir}/t.data
""")
    proc = iogate("run", "e.suite.yaml", "--json", "r.json", cwd=disk_dir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [case] = json.loads((disk_dir / "r.json").read_text())["cases"]
    assert case["environment"]["target.fs"]
    assert case["environment"]["target.path"].endswith("t.data")


def test_fail_fast_stops_a_run_that_can_no_longer_pass(tmp_path: Path) -> None:
    (tmp_path / "ff.suite.yaml").write_text("""\
suite: ff
workloads:
  - name: hopeless
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 60s
    time_based: true
    fail_fast: true
    expect:
      read.iops: ">= 1000G in 99% of 100ms"
""")
    proc = iogate("run", "ff.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["outcome"] == "failed"
    assert "fail_fast" in case["error"]
    assert "of 600 planned intervals failed" in case["error"]
    # 600 intervals were planned and 6 may fail: the run stopped long before its 60 s
    assert case["metrics"]["read.runtime"] < 10e9
    [check] = case["checks"]
    assert not check["passed"]
    assert 7 <= check["intervals"] < 100


def test_failure_report_quotes_the_suite_as_it_was_run(tmp_path: Path) -> None:
    """The suite lines of a failure are those the run read, even when the file changed
    while it ran; a bound given in a list is quoted once."""
    from iogate.report import failure_report
    from iogate.runner import run_case
    from iogate.spec import load_suite

    path = tmp_path / "f.suite.yaml"
    path.write_text("suite: f\nworkloads:\n  - name: tight\n    ioengine: null\n"
                    "    rw: randread\n    size: 1MiB\n    expect:\n"
                    "      read.iops: ['>= 1', '>= 1000G']\n      read.ios: '== 1'\n")
    [case] = load_suite(path).cases
    path.write_text("suite: f\n")  # edited meanwhile: the report does not read it again
    result = run_case(case)
    report = failure_report(result)
    # The first line names the case and every failed check with its value and bound.
    ios = result.metrics["read.ios"]
    assert report.splitlines()[0] == (
        f"f.suite.yaml::tight: 2 of 3 expectation(s) not met: read.iops "
        f"{observed(result, 1)}, expected >= 1000G; read.ios {ios:.0f}, expected == 1")
    assert failure_report(result, named=False).splitlines()[0].startswith(
        "2 of 3 expectation(s) not met: read.iops ")
    quoted = report.split("suite lines")[1].split("workload tight")[0]
    assert "     8 |       read.iops: ['>= 1', '>= 1000G']" in quoted
    assert "     9 |       read.ios: '== 1'" in quoted
    assert quoted.count("read.iops: [") == 1


def observed(result: Any, index: int) -> str:
    from iogate.expect import observed_text

    return observed_text(result.checks[index])


ADAPTIVE = """\
suite: adaptive
workloads:
  - name: paced
    ioengine: null
    rw: randread
    size: 1MiB
    runtime: 100ms
    time_based: true
    rate_iops: ${RATE:-20000}
    repeat: ${REPEAT:-5}
    expect:
      read.iops: ">= 0.5 * baseline"
"""
# The builds compared run at a quarter of the baseline's rate or at the same: a floor of half
# the baseline keeps the margin of either from the bound wide, so that a busy machine slowing
# the same build by a few percent (real, and significant over the baseline's tight runs) does
# not decide it.


def test_adaptive_repeats_stop_at_the_fewest_on_a_clear_verdict(tmp_path: Path) -> None:
    """repeat: {min: 3, max: 8}: a build four times slower fails after 3 runs, and an
    unchanged one, meeting its threshold, passes after 3 as well; each row says why."""
    (tmp_path / "a.suite.yaml").write_text(ADAPTIVE)
    record = iogate("run", "a.suite.yaml", "--save-baseline", "base.json", cwd=tmp_path)
    assert record.returncode == 0, record.stdout + record.stderr
    (tmp_path / "a.suite.yaml").write_text(ADAPTIVE.replace("${REPEAT:-5}", "{min: 3, max: 8}"))
    slow = iogate("run", "a.suite.yaml", "--baseline", "base.json", "--json", "slow.json",
                  cwd=tmp_path, env={"RATE": "5000"})
    assert slow.returncode == 1, slow.stdout + slow.stderr
    [case] = json.loads((tmp_path / "slow.json").read_text())["cases"]
    assert len(case["samples"]["read.iops"]) == 3
    [check] = case["checks"]
    assert check["evidence"]["decision"] == "regression"
    assert check["evidence"]["reference_runs"] == 5
    assert check["evidence"]["observed_runs"] == 3
    assert check["evidence"]["looks"] == 6  # alpha spent over the looks from 3 to 8
    # stopped at an interim look: a tenth of alpha spread over the 5 interim looks
    assert check["evidence"]["alpha"] == pytest.approx(0.05 * 0.1 / 5)
    assert check["evidence"]["final"] is False
    # a quarter of the rate: -75%, or about that where a busy machine slows either run
    assert check["evidence"]["effect_pct"] <= -50
    assert check["why"].startswith(
        f"regression: {check['evidence']['effect_pct']:.1f}% vs baseline "), check["why"]
    same = iogate("run", "a.suite.yaml", "--baseline", "base.json", "--json", "same.json",
                  cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
    [case] = json.loads((tmp_path / "same.json").read_text())["cases"]
    # no change: met, at the fewest repeats when the runs agree, later when a busy machine
    # spreads them (19988, 18738, 18380 took a fourth)
    assert 3 <= len(case["samples"]["read.iops"]) <= 8
    assert case["checks"][0]["evidence"]["decision"] == "met"


def test_a_check_that_cannot_reach_significance_is_said_before_any_io(tmp_path: Path) -> None:
    """A baseline of one run gives no noise to test with: said before the run starts, with
    what to do, and the verdict says it was decided by the effect size."""
    (tmp_path / "a.suite.yaml").write_text(ADAPTIVE)
    record = iogate("run", "a.suite.yaml", "--save-baseline", "one.json", cwd=tmp_path,
                    env={"REPEAT": "1"})
    assert record.returncode == 0, record.stdout + record.stderr
    slow = iogate("run", "a.suite.yaml", "--baseline", "one.json", "--json", "r.json",
                  cwd=tmp_path, env={"REPEAT": "2", "RATE": "5000"})
    assert slow.returncode == 1, slow.stdout + slow.stderr
    warning, _, _rest = slow.stderr.partition("a.suite.yaml::paced: failed")
    warning = " ".join(warning.split())  # (wrapped to a log's width: the words in order)
    assert "a.suite.yaml:12: a.suite.yaml::paced: read.iops: the baseline holds 1 run" in warning
    assert "record the baseline with repeat: 3 or more" in warning
    assert "decided by effect size, too few runs for a test" in slow.stdout
