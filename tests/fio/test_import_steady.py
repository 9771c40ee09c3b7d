"""Importing fio's steady state (steadystate/ss, ss_dur, ss_ramp, ss_interval): fio's rules over
samples taken every ss_interval become iogate's steady_state over rounds that long, limits
converted exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.spec import load_suite_text

SECOND = 10**9


def steady_of(tmp_path: Path, body: str):
    job = tmp_path / "ss.fio"
    job.write_text("[global]\nfilename=/dev/loop-nowhere\nsize=4m\ntime_based\nruntime=2m\n"
                   + body)
    text = import_jobfile(job)
    [case] = load_suite_text(text, tmp_path / "ss.suite.yaml").cases
    return case.steady_state, " ".join(text.replace("#", " ").split())


def test_a_deviation_limit_is_fios_rule_and_no_other(tmp_path: Path) -> None:
    steady, prose = steady_of(tmp_path, "[w]\nrw=write\nss=iops:10%\nss_dur=30s\nss_ramp=10s\n")
    assert steady.metric == "write.iops"
    assert steady.round == SECOND
    assert (steady.window, steady.max_rounds, steady.ramp) == (30, 120, 10 * SECOND)
    assert (steady.deviation_pct, steady.range_pct, steady.slope_pct) == (10, None, None)
    assert "fio samples the job every 1s" in prose
    assert "iogate runs rounds that long until a window of them is" in prose


def test_steady_latency_is_the_mean_completion_latency_over_fio_s_interval(
        tmp_path: Path) -> None:
    steady, prose = steady_of(tmp_path, "[r]\nrw=randread\nss=lat:5%\nss_dur=60s\n"
                                        "ss_interval=10s\nss_ramp=20s\n")
    assert steady.metric == "read.clat.mean"
    assert steady.round == 10 * SECOND
    # A window of ss_dur / ss_interval samples, at most runtime / ss_interval rounds.
    assert (steady.window, steady.max_rounds, steady.ramp) == (6, 12, 20 * SECOND)
    assert (steady.deviation_pct, steady.range_pct, steady.slope_pct) == (5, None, None)
    assert "fio samples the job every 10s" in prose


def test_a_latency_slope_is_judged_across_the_window(tmp_path: Path) -> None:
    steady, _ = steady_of(tmp_path, "[w]\nrw=write\nsteadystate=lat_slope:1%\n"
                                    "steadystate_duration=5s\n")
    assert steady.metric == "write.clat.mean"
    assert steady.slope_pct == pytest.approx(4)
    assert steady.deviation_pct is None


def test_a_slope_limit_per_sample_becomes_one_across_the_window(tmp_path: Path) -> None:
    # fio: |slope| per one-second sample within 0.5% of the mean; iogate: across the window
    # of 10 rounds, 9 steps of it.
    steady, _ = steady_of(tmp_path, "[r]\nrw=randrw\nss=bw_slope:0.5%\nss_dur=10s\n")
    assert steady.metric == "total.bw"
    assert steady.slope_pct == pytest.approx(4.5)
    assert steady.range_pct is None
    assert steady.deviation_pct is None
    assert steady.ramp == 0


@pytest.mark.parametrize(("option", "message"), [
    ("ss=iops:300\nss_dur=10s", "an absolute limit"),
    ("ss=iops_mean:1%\nss_dur=10s", "fio's steadystate is iops, iops_slope, bw, bw_slope, lat"),
    ("ss=iops:1%", r"steadystate needs ss_dur of at least two check intervals \(2s\)"),
    ("ss=iops:1%\nss_dur=10s\nss_interval=6s",
     r"at least two check intervals \(12s\)"),
])
def test_what_iogate_cannot_judge_is_refused_with_the_reason(tmp_path: Path, option: str,
                                                             message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        steady_of(tmp_path, f"[w]\nrw=write\n{option}\n")


def test_steady_latency_of_a_mixed_job_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="judges the completion latency of every direction"):
        steady_of(tmp_path, "[m]\nrw=randrw\nss=lat:5%\nss_dur=10s\n")


def test_ss_options_without_ss_are_noted_as_ignored(tmp_path: Path) -> None:
    steady, prose = steady_of(tmp_path, "[w]\nrw=write\nss_dur=10s\n")
    assert steady is None
    assert "no steadystate: fio ignores it" in prose
