"""Choosing the baseline entry a run is judged against (--baseline-match, the closest
environment, ambiguity, entries from another environment), the minimum effect of a
regression, and baselines or results that cannot be right, through the CLI and pytest."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

IOGATE = [sys.executable, "-m", "iogate"]

# Judged on a count of requests, which does not depend on the machine's speed or load: every
# run issues exactly that many, so a baseline scaled by 2 is an exact, fully separated change.
GATE = """\
suite: gate
workloads:
  - name: paced
    ioengine: null
    rw: randread
    size: 16MiB
    number_ios: ${N:-1000}
    repeat: 5
    expect:
      read.ios: ">= baseline"
"""
CASE = "g.suite.yaml::paced"


def iogate(*args: str, cwd: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess:
    return subprocess.run([*IOGATE, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def _scaled(entry: dict[str, Any], factor: float, **environment: str) -> dict[str, Any]:
    """The entry recorded elsewhere (``environment`` overrides) with its values scaled."""
    out = copy.deepcopy(entry)
    out["environment"].update(environment)
    out["metrics"] = {k: v * factor for k, v in out["metrics"].items()}
    out["samples"] = {k: [v * factor for v in vs] for k, vs in out["samples"].items()}
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A baseline of the suite recorded on this machine (1000 requests a run), as a document."""
    where = tmp_path_factory.mktemp("recorded")
    (where / "g.suite.yaml").write_text(GATE)
    proc = iogate("run", "g.suite.yaml", "--save-baseline", "base.json", cwd=where)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document: dict[str, Any] = json.loads((where / "base.json").read_text())
    return document


def write_baseline(where: Path, document: dict[str, Any], entries: list[dict[str, Any]],
                   name: str = "base.json") -> None:
    (where / "g.suite.yaml").write_text(GATE)
    (where / name).write_text(json.dumps({**document, "entries": entries}))


def two_firmwares(recorded: dict[str, Any]) -> list[dict[str, Any]]:
    """FW1 measured what this machine does; FW2 twice as much (so FW2 fails this run)."""
    [entry] = recorded["entries"]
    return [_scaled(entry, 1.0, firmware="FW1"), _scaled(entry, 2.0, firmware="FW2")]


def test_entries_of_two_firmwares_matching_neither_is_a_usage_error(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    write_baseline(tmp_path, recorded, two_firmwares(recorded))
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no baseline is loaded" not in proc.stdout + proc.stderr
    assert f"2 entries for case '{CASE}' are equally close to this run" in proc.stderr
    assert "they differ in firmware" in proc.stderr
    assert "--baseline-match" in proc.stderr
    assert "firmware=FW1 " in proc.stderr
    assert "firmware=FW2 " in proc.stderr


def test_baseline_match_judges_against_the_firmware_asked_for(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    write_baseline(tmp_path, recorded, two_firmwares(recorded))
    fw1 = iogate("run", "g.suite.yaml", "--baseline", "base.json",
                 "--baseline-match", "firmware=FW1", "--json", "r.json", cwd=tmp_path)
    assert fw1.returncode == 0, fw1.stdout + fw1.stderr
    # Asked for: the firmware that differs from this run's is no surprise to warn about.
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["warnings"] == []
    fw2 = iogate("run", "g.suite.yaml", "--baseline", "base.json",
                 "--baseline-match", "firmware=FW2", cwd=tmp_path)
    assert fw2.returncode == 1, fw2.stdout + fw2.stderr  # half of what FW2 measured
    # Several facts, in one option or repeated.
    both = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--baseline-match",
                  f"firmware=FW1,host={recorded['entries'][0]['environment']['host']}",
                  "--baseline-match", "device_model=", cwd=tmp_path)
    assert both.returncode == 0, both.stdout + both.stderr


def test_no_entry_with_the_facts_asked_for_lists_the_entries(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    write_baseline(tmp_path, recorded, two_firmwares(recorded))
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json",
                  "--baseline-match", "firmware=FW3", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "base.json: no entry is recorded with firmware=FW3" in proc.stderr
    lines = [line.strip() for line in proc.stderr.splitlines()]
    assert any(line.startswith("device_model= firmware=FW1 host=") and
               line.endswith("(1 case)") for line in lines)
    assert any(line.startswith("device_model= firmware=FW2 host=") for line in lines)
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("match", "message"), [
    ("firmwre=FW1", "unknown key 'firmwre' in 'firmwre=FW1': an entry records device_model, "
                    "firmware, host, kernel, iogate_version"),
    ("FW1", "'FW1' is not KEY=VALUE"),
])
def test_bad_criteria_are_usage_errors(tmp_path: Path, recorded: dict[str, Any],
                                       match: str, message: str) -> None:
    write_baseline(tmp_path, recorded, two_firmwares(recorded))
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--baseline-match", match,
                  cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr, proc.stderr


def test_a_single_entry_from_another_environment_is_used_with_a_warning(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    write_baseline(tmp_path, recorded,
                   [_scaled(entry, 1.0, host="lab-3", firmware="FW1", kernel="5.15.0")])
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--json", "r.json",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    [warning] = case["warnings"]
    here = entry["environment"]
    assert warning.startswith("baseline: judged against a baseline entry from another "
                              "environment: ")
    assert "firmware 'FW1' in the baseline, (not recorded) in this run" in warning
    assert f"host 'lab-3' in the baseline, '{here['host']}' in this run" in warning
    assert f"kernel '5.15.0' in the baseline, '{here['kernel']}' in this run" in warning
    assert "device_model" not in warning
    assert "iogate_version" not in warning
    # (wrapped to a log's width: the words in order)
    assert " ".join(f"{CASE}: warning: {warning}".split()) in " ".join(proc.stderr.split())


def test_the_closest_of_several_entries_is_chosen_and_said_so(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    # Another host on FW1 shares 3 of the 5 facts with this run, this host on FW1 shares 4:
    # the latter is closer, and it measured what this run does.
    write_baseline(tmp_path, recorded, [_scaled(entry, 2.0, host="lab-3", firmware="FW1"),
                                        _scaled(entry, 1.0, firmware="FW1")])
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--json", "r.json",
                  cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [case] = json.loads((tmp_path / "r.json").read_text())["cases"]
    [warning] = case["warnings"]
    assert "the closest of 2 entries for this case" in warning
    assert "firmware 'FW1' in the baseline" in warning
    assert "host" not in warning


def test_a_case_the_baseline_does_not_hold_is_a_usage_error(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    write_baseline(tmp_path, recorded, [{**entry, "case": "other.suite.yaml::x"}])
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"no entry for case '{CASE}'; record one with --save-baseline" in proc.stderr
    # Recording into the same file: the new case is recorded, not judged.
    both = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--save-baseline",
                  "base.json", cwd=tmp_path)
    assert both.returncode == 0, both.stdout + both.stderr
    assert "not judged: recording the baseline" in both.stdout
    assert iogate("run", "g.suite.yaml", "--baseline", "base.json",
                  cwd=tmp_path).returncode == 0


def test_pytest_baseline_match_and_its_usage_errors(pytester: pytest.Pytester,
                                                     recorded: dict[str, Any]) -> None:
    write_baseline(pytester.path, recorded, two_firmwares(recorded))
    pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json",
                       "--iogate-baseline-match=firmware=FW1").assert_outcomes(passed=1)
    pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json",
                       "--iogate-baseline-match=firmware=FW2").assert_outcomes(failed=1)
    missing = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json",
                                 "--iogate-baseline-match=firmware=FW3")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*no entry is recorded with firmware=FW3*",
                                  "*device_model= firmware=FW1 host=*"])
    ambiguous = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json")
    assert ambiguous.ret == pytest.ExitCode.USAGE_ERROR
    ambiguous.stdout.fnmatch_lines(["*2 entries for case*equally close*--baseline-match*"])
    unknown = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json",
                                 "--iogate-baseline-match=cpu=8")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    unknown.stderr.fnmatch_lines(["*unknown key 'cpu'*device_model, firmware, host*"])
    [entry] = recorded["entries"]
    write_baseline(pytester.path, recorded, [{**entry, "case": "other.suite.yaml::x"}],
                   name="other.json")
    absent = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=other.json")
    assert absent.ret == pytest.ExitCode.USAGE_ERROR
    absent.stderr.fnmatch_lines([f"*no entry for case '{CASE}'; record one*"])


def test_pytest_summary_warns_of_an_entry_from_another_environment(
        pytester: pytest.Pytester, recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    write_baseline(pytester.path, recorded, [_scaled(entry, 1.0, host="lab-3")])
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-baseline=base.json")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*warnings summary*",
                                 "*baseline: judged against a baseline entry from another "
                                 "environment: host 'lab-3' in the baseline*"])




def test_a_significant_but_small_change_is_within_the_minimum_effect(tmp_path: Path) -> None:
    (tmp_path / "g.suite.yaml").write_text(GATE)
    record = iogate("run", "g.suite.yaml", "--save-baseline", "base.json", "--json",
                    "old.json", cwd=tmp_path)
    assert record.returncode == 0, record.stdout + record.stderr
    fewer = {"N": "930"}  # 7% below the recorded 1000: significant with 5+5 runs
    lenient = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--min-effect", "10",
                     "--json", "new.json", cwd=tmp_path, env=fewer)
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    [case] = json.loads((tmp_path / "new.json").read_text())["cases"]
    [check] = case["checks"]
    assert check["passed"]
    assert check["evidence"]["decision"] == "within min effect"
    assert check["why"].startswith("within the minimum effect of 10%: -7.0% vs baseline 1k")
    strict = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--min-effect", "0",
                    cwd=tmp_path, env=fewer)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "regression: -7.0% vs baseline 1k" in strict.stdout
    assert "(5 runs), n=5, p=" in strict.stdout
    # compare judges the same two runs the same way.
    assert iogate("compare", "old.json", "new.json", "--min-effect", "10",
                  "--metric", "read.ios", cwd=tmp_path).returncode == 0
    assert iogate("compare", "old.json", "new.json", "--min-effect", "0",
                  "--metric", "read.ios", cwd=tmp_path).returncode == 1
    bad = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--min-effect", "-1",
                 cwd=tmp_path)
    assert bad.returncode == 2
    assert "--min-effect" in bad.stderr


def test_the_minimum_effect_never_excuses_a_missed_improvement(tmp_path: Path) -> None:
    (tmp_path / "g.suite.yaml").write_text(
        GATE.replace('">= baseline"', '">= baseline + 10%"').replace("repeat: 5", "repeat: 1"))
    record = iogate("run", "g.suite.yaml", "--save-baseline", "base.json", cwd=tmp_path)
    assert record.returncode == 0, record.stdout + record.stderr
    # The same count again: no change at all, yet the suite asked for 10% more.
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", "--min-effect", "50",
                  cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "within the minimum effect" not in proc.stdout


def test_impossible_baseline_values_are_refused_naming_entry_and_metric(
        tmp_path: Path, recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    broken = copy.deepcopy(entry)
    broken["metrics"]["read.iops"] = -5.0
    write_baseline(tmp_path, recorded, [broken])
    proc = iogate("run", "g.suite.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (f"base.json: entries[0] ({CASE}): metrics.read.iops is -5: a measured "
            "read.iops is never negative") in proc.stderr


def test_compare_refuses_results_of_an_unknown_schema_version(tmp_path: Path,
                                                             recorded: dict[str, Any]) -> None:
    [entry] = recorded["entries"]
    results = {"schema_version": 1, "environment": entry["environment"],
               "cases": [{"id": CASE, "outcome": "passed", "metrics": entry["metrics"]}]}
    (tmp_path / "old.json").write_text(json.dumps(results))
    (tmp_path / "new.json").write_text(json.dumps({**results, "schema_version": 99}))
    assert iogate("compare", "old.json", "old.json", cwd=tmp_path).returncode == 0
    proc = iogate("compare", "old.json", "new.json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "new.json: the results document has schema_version 99; this iogate reads " \
           "schema_version 1" in proc.stderr


# -- what a baseline holds: the cases that passed ----------------------------------------------

# Two cases: one meets its expectation, the other (exactly 1 request asked of 1000) cannot.
MIXED = """\
suite: gate
workloads:
  - name: ok
    ioengine: null
    rw: randread
    size: 16MiB
    number_ios: 1000
    expect:
      read.ios: "== 1000"
  - name: bad
    ioengine: null
    rw: randread
    size: 16MiB
    number_ios: 1000
    expect:
      read.ios: "== 1"
"""
OK, BAD = "m.suite.yaml::ok", "m.suite.yaml::bad"
LEFT_OUT = (f"base.json: 1 case left out of the baseline:\n  {BAD}: failed (a baseline holds "
            "what passed; {option} records failed cases too)")


def _cases(path: Path) -> list[str]:
    return [e["case"] for e in json.loads(path.read_text())["entries"]]


def test_save_baseline_records_what_passed_and_names_what_it_left_out(tmp_path: Path) -> None:
    (tmp_path / "m.suite.yaml").write_text(MIXED)
    proc = iogate("run", "m.suite.yaml", "--save-baseline", "base.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _cases(tmp_path / "base.json") == [OK]
    assert "iogate: " + LEFT_OUT.format(option="--save-baseline-all") in proc.stderr
    every = iogate("run", "m.suite.yaml", "--save-baseline-all", "all.json", cwd=tmp_path)
    assert every.returncode == 1, every.stdout + every.stderr
    assert _cases(tmp_path / "all.json") == [OK, BAD]
    assert "left out" not in every.stderr
    both = iogate("run", "m.suite.yaml", "--save-baseline", "a.json", "--save-baseline-all",
                  "b.json", cwd=tmp_path)
    assert both.returncode == 2, both.stdout + both.stderr
    assert "--save-baseline stores the cases that passed, --save-baseline-all every case " \
           "measured in full: give one of them" in both.stderr
    nowhere = iogate("run", "m.suite.yaml", "--save-baseline-all", "no/b.json", cwd=tmp_path)
    assert nowhere.returncode == 2, nowhere.stderr
    assert "--save-baseline-all no/b.json: the directory" in nowhere.stderr, nowhere.stderr


def test_promote_a_reviewed_results_document(tmp_path: Path) -> None:
    (tmp_path / "m.suite.yaml").write_text(MIXED)
    run = iogate("run", "m.suite.yaml", "--json", "r.json", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    # Into an existing baseline: its other entries stay.
    (tmp_path / "g.suite.yaml").write_text(GATE.replace("repeat: 5", "repeat: 1"))
    first = iogate("run", "g.suite.yaml", "--save-baseline", "base.json", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    proc = iogate("baseline", "promote", "r.json", "-o", "base.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _cases(tmp_path / "base.json") == [CASE, OK]
    assert "iogate: " + LEFT_OUT.format(option="--all") in proc.stderr
    assert "base.json: 1 case(s) promoted from r.json" in proc.stderr
    every = iogate("baseline", "promote", "r.json", "-o", "all.json", "--all", "-k", "bad",
                   cwd=tmp_path)
    assert every.returncode == 0, every.stdout + every.stderr
    assert _cases(tmp_path / "all.json") == [BAD]
    # Runs judged against what was promoted: the entry holds what was measured.
    judged = iogate("run", "g.suite.yaml", "--baseline", "base.json", cwd=tmp_path)
    assert judged.returncode == 0, judged.stdout + judged.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["-k", "bad"], "iogate: r.json: nothing to promote: m.suite.yaml::bad: failed (a "
                    "baseline holds what passed; --all records failed cases too)"),
    (["-k", "nothing"], "iogate: r.json: no case matches -k 'nothing'"),
    (["-o", "r.json"], "iogate: r.json is the results file itself"),
    (["-o", "."], "iogate: --output .: is a directory; name a file"),
    (["-o", "base.json"], "iogate: base.json: not a baseline file"),
])
def test_promote_refusals(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "m.suite.yaml").write_text(MIXED)
    assert iogate("run", "m.suite.yaml", "--json", "r.json", cwd=tmp_path).returncode == 1
    (tmp_path / "base.json").write_text('{"format": "other"}')
    output = [] if "-o" in args else ["-o", "new.json"]
    proc = iogate("baseline", "promote", "r.json", *output, *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "new.json").exists()
    assert (tmp_path / "base.json").read_text() == '{"format": "other"}'


def test_pytest_save_baseline_records_what_passed(pytester: pytest.Pytester) -> None:
    pytester.makefile(".suite.yaml", m=MIXED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--iogate-save-baseline=base.json")
    result.assert_outcomes(passed=1, failed=1)
    assert _cases(pytester.path / "base.json") == [OK]
    result.stdout.fnmatch_lines([
        "iogate: base.json: 1 case left out of the baseline:",
        f"  {BAD}: failed (a baseline holds what passed; --iogate-save-baseline-all records "
        "failed cases too)"])
    every = pytester.runpytest("-p", "no:cacheprovider", "--iogate-save-baseline-all=all.json")
    every.assert_outcomes(passed=1, failed=1)
    assert _cases(pytester.path / "all.json") == [OK, BAD]
