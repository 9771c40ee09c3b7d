"""Every statistical verdict explains itself: the reference, n on each side, p against the
adjusted significance or why there is none, the effect; optional checks ("if measured")
are never counted as passes; the run's statistical checks share its significance."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from iogate import stats
from iogate.expect import evaluate, evaluate_window, explain, parse_expectation, verdict
from iogate.judge import Gate, power_warnings, statistical, verdict_against
from iogate.report import checks_table

BASE = [250_000.0, 252_000.0, 248_000.0, 251_000.0, 249_000.0]


def test_a_value_beyond_its_threshold_that_passes_says_why_in_its_row() -> None:
    e = parse_expectation("read.iops", ">= 0.95 * baseline")
    # 6 % lower, but with noise this large against 2 runs it is not significant
    noisy = [250_000.0, 300_000.0, 200_000.0, 280_000.0, 220_000.0]
    check = verdict_against(e, noisy, [235_000.0, 235_000.0], Gate())
    assert check.passed
    assert check.observed is not None
    assert check.threshold is not None
    assert check.observed < check.threshold
    assert check.evidence is not None
    assert check.evidence.decision == "within noise"
    lines = checks_table([check]).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("read.iops"))
    # in its row, or (too long for a CI log's 120 columns) on the lines right under it
    under = [line for line in lines[at + 1:] if line.startswith("    why: ")
             or line.startswith("     ")]
    row = " ".join(" ".join([lines[at], *under]).split())
    assert re.search(r"\bok (why: )?within noise: -6\.0% vs baseline 250k ±[\d.]+k \(5 runs\), "
                     r"n=2, p=0\.\d+ > 0\.05: not significant$", row), row


def test_a_significant_regression_names_reference_runs_p_and_the_adjusted_alpha() -> None:
    e = parse_expectation("read.iops", ">= 0.95 * baseline")
    slow = [200_000.0, 201_000.0, 199_000.0]
    last = verdict_against(e, BASE, slow, Gate(family=20), looked=6)
    assert not last.passed
    why = explain(last)
    assert why.startswith("regression: -20.0% vs baseline 250k ±1.581k (5 runs), n=3, p=")
    assert why.endswith("<= 0.0023 (alpha / 20 checks, 90% at the last of 6 looks), "
                        "rank p=0.018")
    assert last.evidence is not None
    assert last.evidence.alpha == pytest.approx(0.05 / 20 * 0.9)
    # an interim look (3 runs of at most 8) holds the test to a tenth of the check's alpha,
    # spread over the 5 interim looks: only a clear regression stops there
    early = verdict_against(e, BASE, slow, Gate(family=20), looked=6, most=8)
    assert not early.passed
    assert early.evidence is not None
    assert early.evidence.alpha == pytest.approx(0.05 / 20 * 0.1 / 5)
    assert "(alpha / 20 checks, 10% over 5 interim looks)" in explain(early)


def test_each_rule_that_decides_is_said() -> None:
    e = parse_expectation("read.iops", ">= 0.95 * baseline")
    small = verdict_against(e, BASE, [235_000.0], Gate(min_effect_pct=10.0))
    assert small.passed
    assert explain(small).startswith("within the minimum effect of 10%: -6.0%")
    one = verdict_against(e, [250_000.0], [200_000.0, 200_000.0], Gate())
    assert not one.passed
    assert explain(one).startswith("decided by effect size, too few runs for a test "
                                   "(baseline holds 1, 2 needed): -20.0%")
    improve = verdict_against(parse_expectation("read.iops", ">= 1.2 * baseline"), BASE,
                              [255_000.0], Gate())
    assert not improve.passed
    assert "asks for an improvement" in explain(improve)
    extreme = verdict_against(parse_expectation("read.iops@min", ">= 0.9 * baseline"), BASE,
                              [200_000.0, 250_000.0], Gate())
    assert not extreme.passed
    assert explain(extreme).startswith("no test for @min")
    met = verdict_against(e, BASE, [251_000.0], Gate())
    assert met.passed
    assert explain(met).startswith("+0.4% vs baseline 250k")


def test_one_slow_run_beside_normal_ones_is_no_regression() -> None:
    """A run that dipped (a neighbour) pulls the mean of the runs far below a quiet
    baseline's, significantly so; but the runs do not rank below the baseline's, so it is
    an outlier, not a new level. Two slow runs of two are a level."""
    e = parse_expectation("read.iops", ">= 0.95 * baseline")
    dip = verdict_against(e, BASE, [250_500.0, 143_000.0], Gate())
    assert dip.passed
    assert dip.evidence is not None
    assert dip.evidence.decision == "one slow run"
    assert dip.evidence.p is not None
    assert dip.evidence.p <= 0.05
    assert explain(dip).startswith("one slow run, not a level: -21.3% vs baseline 250k")
    assert explain(dip).endswith("but the runs do not rank below the baseline's "
                                 "(rank p=0.29 > 0.05)")
    level = verdict_against(e, BASE, [200_000.0, 143_000.0], Gate())
    assert not level.passed
    assert level.evidence is not None
    assert level.evidence.decision == "regression"


def test_adaptive_repeats_stop_when_more_runs_could_not_tell() -> None:
    """Within noise, but undecided while more runs at the same mean could make it
    significant; decided (futile) when even the most runs could not."""
    e = parse_expectation("read.iops", ">= 0.95 * baseline")
    noisy = [100_000.0, 110_000.0, 90_000.0, 105_000.0, 95_000.0]
    # 9 % lower: even 8 runs there would not be significant at the last look's 0.045
    near = verdict_against(e, noisy, [91_000.0] * 3, Gate(), looked=6, most=8)
    assert near.passed
    assert near.evidence is not None
    assert near.evidence.decision == "within noise"
    assert near.evidence.decided
    # 14 % lower: not significant at an interim look with 3 runs, but 8 would be at the last
    far = verdict_against(e, noisy, [86_000.0] * 3, Gate(), looked=6, most=8)
    assert far.evidence is not None
    assert far.evidence.decision == "within noise"
    assert not far.evidence.decided
    done = verdict_against(e, noisy, [86_000.0] * 8, Gate(), looked=6, most=8).evidence
    assert done is not None
    assert done.decision == "regression"
    assert done.decided
    assert done.final


def test_latency_regressions_are_the_higher_values() -> None:
    e = parse_expectation("read.clat.p99", "<= baseline + 10%")
    base = [1.0e6, 1.02e6, 0.98e6, 1.01e6, 0.99e6]  # ns
    slower = verdict_against(e, base, [1.3e6, 1.31e6, 1.29e6], Gate())
    faster = verdict_against(e, base, [0.7e6, 0.71e6, 0.69e6], Gate())
    assert not slower.passed
    assert faster.passed
    assert explain(slower).startswith("regression: +30.0% vs baseline 1ms")


def test_optional_expectations_are_never_a_pass_where_unmeasured() -> None:
    e = parse_expectation("health.media_errors.delta", "== 0 if measured")
    assert e.optional
    assert e.describe() == "== 0 if measured"
    unmeasured = evaluate(e, None, unmeasured="the health plugin did not report it")
    assert not unmeasured.judged
    assert verdict(unmeasured) == "n/a"
    assert unmeasured.reason == ("not measured (optional): the health plugin did not "
                                 "report it")
    assert not evaluate(e, 3).passed  # measured: judged as usual
    assert evaluate(e, 0).passed
    assert evaluate(e, 0).judged
    required = parse_expectation("health.media_errors.delta", "== 0")
    assert not required.optional
    assert not evaluate(required, None).passed
    windowed = parse_expectation("read.iops", ">= 100 in all if measured")
    assert windowed.optional
    assert windowed.window is not None
    assert not evaluate_window(windowed, [], None).judged


def test_the_family_is_the_runs_statistical_checks(tmp_path: Path) -> None:
    from iogate.cli import load_suites

    (tmp_path / "f.suite.yaml").write_text("""\
suite: f
workloads:
  - name: a
    ioengine: null
    rw: randread
    size: 1m
    expect:
      read.iops: ">= 0.95 * baseline"
      read.clat.p99: "<= baseline + 10%"
      read.iops@cv: "<= 5%"
      read.bw: ">= 0.9 * mean in all"
  - name: b
    ioengine: null
    rw: randread
    size: 1m
    expect:
      read.iops: ">= 0.9 * history"
""")
    [suite] = load_suites([str(tmp_path / "f.suite.yaml")])
    assert [e.key for _, e in statistical(suite.cases)] == ["read.iops", "read.clat.p99",
                                                            "read.iops"]
    assert Gate().for_cases(suite.cases).family == 3


def test_power_warning_says_how_many_runs_are_needed(tmp_path: Path) -> None:
    from iogate.baseline import Baseline
    from iogate.cli import load_suites

    (tmp_path / "p.suite.yaml").write_text("""\
suite: p
workloads:
  - name: a
    ioengine: null
    rw: randread
    size: 1m
    repeat: 2
    expect:
      read.iops: ">= 0.95 * baseline"
""")
    [suite] = load_suites([str(tmp_path / "p.suite.yaml")])
    noisy = [100_000.0, 105_000.0, 95_000.0, 103_000.0, 97_000.0]  # 4 % noise, 5 runs
    doc = {"format": "iogate-baseline", "version": 1, "entries": [{
        "case": "p.suite.yaml::a", "environment": {}, "metrics": {"read.iops": 100_000.0},
        "samples": {"read.iops": noisy}}]}
    (tmp_path / "b.json").write_text(json.dumps(doc))
    gate = Gate(baseline=Baseline.load(str(tmp_path / "b.json"))).for_cases(suite.cases)
    [text] = power_warnings(suite.cases, gate)
    assert text.startswith(f"{tmp_path / 'p.suite.yaml'}:9: p.suite.yaml::a: read.iops: ")
    assert "2 run(s) cannot make a 5% regression significant at 0.05" in text
    needed = int(re.search(r"it needs repeat: (\d+)", text).group(1))  # type: ignore[union-attr]
    assert needed > 2
    # the number it names is enough: a 5 % regression over that many runs is significant

    assert stats.worse_p(noisy, [95_000.0] * needed, lower_is_worse=True) <= 0.05
    assert stats.worse_p(noisy, [95_000.0] * (needed - 1), lower_is_worse=True) > 0.05
