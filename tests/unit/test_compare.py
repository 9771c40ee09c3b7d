"""Comparing runs: verdicts on synthetic results documents, the table, and the command
(``iogate compare``, in this process and as ``python -m iogate compare``)."""

import json
import random
import re
import subprocess
import sys

import pytest

from iogate import cli
from iogate.baseline import Baseline
from iogate.compare import compare, higher_is_better, render

ENV = {"host": "ci-7", "kernel": "6.8.0", "device_model": "ACME", "firmware": "1.0"}


def noisy(centre, n=5, seed=0, cv=0.02):
    rng = random.Random(seed)
    return [centre * rng.gauss(1.0, cv) for _ in range(n)]


def document(per_case, environment=ENV):
    """A results document: case id -> metric -> per-repeat samples."""
    cases = []
    for case_id, metrics in per_case.items():
        medians = {m: sorted(v)[len(v) // 2] for m, v in metrics.items()}
        entry = {"id": case_id, "outcome": "passed", "metrics": medians, "checks": []}
        if any(len(v) > 1 for v in metrics.values()):
            entry["samples"] = metrics
        cases.append(entry)
    return {"schema_version": 1, "iogate_version": "0.1.0", "environment": dict(environment),
            "summary": {}, "cases": cases}


def run_pair(old_iops, new_iops, *, lat_old=1e6, lat_new=1e6):
    old = document({"s::rand": {"read.iops": noisy(old_iops, seed=1),
                                "read.clat.p99": noisy(lat_old, seed=3)}})
    new = document({"s::rand": {"read.iops": noisy(new_iops, seed=2),
                                "read.clat.p99": noisy(lat_new, seed=4)}})
    return old, new


def row(comparison, metric):
    (found,) = [r for r in comparison.rows if r.metric == metric]
    return found


def test_ten_percent_iops_drop_regresses():
    old, new = run_pair(100_000, 90_000)
    c = compare(old, new)
    r = row(c, "read.iops")
    assert r.verdict == "REGRESSED"
    assert r.p_value is not None
    assert r.p_value < 0.05  # significant, yet too small to matter
    assert r.delta_pct == pytest.approx(-10, abs=3)
    assert c.regressed
    assert c.regressions == [r]


def test_a_document_against_itself_does_not_regress():
    old, _ = run_pair(100_000, 90_000)
    c = compare(old, old)
    assert not c.regressed
    assert {r.verdict for r in c.rows} == {"~"}  # p = 1: no difference at all
    assert all(r.delta_pct == 0 for r in c.rows)


def test_one_percent_change_is_below_the_minimum_effect():
    old = document({"s::a": {"read.iops": [100_000.0 + i for i in range(5)]}})
    new = document({"s::a": {"read.iops": [99_000.0 + i for i in range(5)]}})
    r = row(compare(old, new), "read.iops")
    assert r.p_value is not None
    assert r.p_value < 0.05
    assert r.verdict == "ok"
    # The same change with a threshold under it is a regression.
    assert row(compare(old, new, min_effect_pct=0.5), "read.iops").verdict == "REGRESSED"


def test_latency_rise_regresses_and_improvement_is_better():
    old, new = run_pair(100_000, 112_000, lat_new=1.3e6)
    c = compare(old, new)
    assert row(c, "read.clat.p99").verdict == "REGRESSED"
    assert row(c, "read.iops").verdict == "better"


def test_directions_follow_the_metric_kind():
    assert higher_is_better("read.iops") is True
    assert higher_is_better("total.bw") is True
    assert higher_is_better("write.clat.p99.9") is False
    assert higher_is_better("mix.read_pct") is None


def test_baseline_file_against_results_and_unpaired_cases(tmp_path):
    old, new = run_pair(100_000, 90_000)
    old["cases"].append({"id": "s::gone", "outcome": "passed", "metrics": {"read.iops": 1.0}})
    new["cases"].append({"id": "s::added", "outcome": "passed", "metrics": {"read.iops": 1.0}})
    base = Baseline.from_results(old)
    c = compare(base.to_document(), new)
    assert row(c, "read.iops").verdict == "REGRESSED"
    assert "s::added: not in the old results" in c.notes
    assert "s::gone: not in the new results" in c.notes


def test_old_baseline_in_several_environments_pairs_the_closest():
    old_a = document({"s::a": {"read.iops": noisy(50_000, seed=1)}}, {**ENV, "host": "other"})
    old_b = document({"s::a": {"read.iops": noisy(100_000, seed=1)}})
    base = Baseline.from_results(old_a).merge(Baseline.from_results(old_b))
    new = document({"s::a": {"read.iops": noisy(100_000, seed=2)}}, {**ENV, "firmware": "2.0"})
    # Firmware differs on every entry; device and host pick the matching machine.
    assert not compare(base, new).regressed


def test_named_metrics_missing_on_a_side_are_noted():
    old, new = run_pair(100_000, 100_000)
    c = compare(old, new, metrics=["read.iops", "write.iops"])
    assert [r.metric for r in c.rows] == ["read.iops"]
    assert any("write.iops not measured in the old results" in n for n in c.notes)
    with pytest.raises(ValueError, match="unknown metric"):
        compare(old, new, metrics=["read.iopz"])


def test_render_is_an_aligned_table_with_units():
    old, new = run_pair(100_000, 90_000)
    text = render(compare(old, new))
    lines = text.splitlines()
    assert lines[0].split() == ["case", "metric", "old", "new", "delta", "p", "verdict"]
    iops = next(line for line in lines if "read.iops" in line and "REGRESSED" in line)
    assert "k ±" in iops
    assert re.search(r"p=[\d.e-]+ n=5\+5", iops)
    assert "%" in iops
    lat = next(line for line in lines if "read.clat.p99" in line)
    assert "ms" in lat
    # Columns follow the rule's dashes; old, new and delta end at the right edge.
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    for line in (lines[0], iops, lat):
        for start, end in spans[2:5]:
            cell = line[start:end]
            assert cell.strip()
            assert not cell.endswith(" ")
        assert line[spans[0][0]:spans[0][1]].strip() in ("case", "s::rand")
    assert "regressions:" in text
    assert "1 regression(s)" in text


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def iogate_compare(*args):
    """``iogate compare ARGS`` run in this process: its exit code."""
    return cli.main(["compare", *args])


def python_m_iogate_compare(*args):
    """``python -m iogate compare ARGS``: the process, its output captured."""
    return subprocess.run([sys.executable, "-m", "iogate", "compare", *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_compare_exit_codes(tmp_path, capsys):
    old, new = run_pair(100_000, 90_000)
    old_path, new_path = _write(tmp_path, "old.json", old), _write(tmp_path, "new.json", new)
    assert iogate_compare(old_path, new_path) == 1
    out = capsys.readouterr().out
    assert "REGRESSED" in out
    assert iogate_compare(old_path, old_path) == 0
    assert iogate_compare(old_path, new_path, "--min-effect", "15%") == 0
    # at 0.0001, 5+5 samples at 2 % noise cannot call a 10 % drop significant
    assert iogate_compare(old_path, new_path, "--alpha", "0.0001") == 0
    assert "no significant difference" in capsys.readouterr().out
    # a single old run has no noise to test with: the effect decides, and the table says so
    one = _write(tmp_path, "one.json", document({"s::rand": {"read.iops": [100_000.0]}}))
    assert iogate_compare(one, new_path) == 1
    # (wrapped to 120 columns: the words are there in order)
    assert "decided by the effect size alone" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("content", "message"), [
    (None, "missing.json: no such file"),
    ("{oops", "bad.json: not JSON"),
    ('{"hello": 1}', "bad.json: neither an iogate results document nor a baseline file"),
    ('{"format": "iogate-baseline", "version": 2, "entries": []}', "version 2"),
    ('{"schema_version": 7, "cases": []}', "bad.json: the results document has schema_version 7"),
    ('{"schema_version": 1, "cases": [{"id": "s::a", "metrics": {"read.iops": -1}}]}',
     "bad.json: cases[0] (s::a): metrics.read.iops is -1"),
])
def test_bad_input_names_the_file(tmp_path, capsys, content, message):
    good = _write(tmp_path, "good.json", run_pair(1.0, 1.0)[0])
    if content is None:
        bad = str(tmp_path / "missing.json")
    else:
        bad = str(tmp_path / "bad.json")
        (tmp_path / "bad.json").write_text(content)
    assert iogate_compare(good, bad) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "message"), [
    (["--alpha", "1.5"], "1.5 is not strictly between 0 and 1"),
    (["--min-effect", "-3"], "-3 is not a percentage >= 0"),
    (["--min-effect", "lots"], "'lots' is not a percentage"),
    (["--metric", "read.iosp"], "unknown metric 'read.iosp'"),
])
def test_the_command_rejects_bad_options(tmp_path, args, message):
    good = _write(tmp_path, "good.json", run_pair(1.0, 1.0)[0])
    proc = python_m_iogate_compare(good, good, *args)
    assert proc.returncode == 2, proc.stderr
    assert "iogate compare" in proc.stderr, proc.stderr
    assert message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not proc.stdout


def test_the_command_needs_both_files(tmp_path):
    good = _write(tmp_path, "good.json", run_pair(1.0, 1.0)[0])
    proc = python_m_iogate_compare(good)
    assert proc.returncode == 2
    assert "iogate compare: error: the following arguments are required: NEW.json" in \
        proc.stderr


def test_nothing_in_common_is_bad_input(tmp_path, capsys):
    a = _write(tmp_path, "a.json", document({"s::a": {"read.iops": [1.0]}}))
    b = _write(tmp_path, "b.json", document({"s::b": {"read.iops": [1.0]}}))
    assert iogate_compare(a, b) == 2
    assert "no case and metric measured on both sides" in capsys.readouterr().out
