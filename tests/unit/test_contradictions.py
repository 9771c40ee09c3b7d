"""Expectations no run can meet (iogate.spec.contradictions) and rates that set another mix
than the rwmixread beside them (iogate.spec.rules.mix_warnings)."""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iogate import cli
from iogate.errors import SuiteError
from iogate.expect import Expectation, parse_expectation
from iogate.metrics import SCOPES, TABLE, Kind, parse_metric
from iogate.spec import LoadedSuite, load_suite_text
from iogate.spec.contradictions import SHARES, contradictions, impossible, value_range
from iogate.spec.models import Workload
from iogate.spec.rules import mix_warnings

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
       "==": operator.eq, "!=": operator.ne}


def placed(metric: str, *texts: str, first_line: int = 10) -> list[tuple[Expectation, int]]:
    """The expectations of one metric as the loader places them, one line each, each
    located by its line."""
    return [(replace(parse_expectation(metric, t), line=first_line + i), first_line + i)
            for i, t in enumerate(texts)]


# -- one bound -----------------------------------------------------------------------------

@pytest.mark.parametrize(("metric", "text", "said"), [
    ("mix.read_pct", ">= 120%", "mix.read_pct is a share, from 0% to 100%, so no run makes it "
                                "'>= 120%': 100% is the most it can be"),
    ("mix.read_pct", "> 100", "100% is the most it can be ('>= 100%')"),
    ("read.bs_pct.4096", "== 101%", "100% is the most it can be"),
    ("write.prio_pct", ">= 100.5%", "is a share"),
    ("offsets.coverage_pct", "> 100%", "is a share"),
    ("data.dedupe_pct", "> 100%", "is a share"),
    ("disk.util_pct", "> 100%", "is a share"),
    ("read.iops", "< 0", "read.iops is never negative, so no run makes it '< 0': 0 is the "
                         "least it can be ('== 0')"),
    ("read.clat.p99", "<= -1ms", "read.clat.p99 is never negative, so no run makes it "
                                 "'<= -1ms'; did you mean '<= 1ms'?"),
    ("read.clat.p99", "<= -1ms in 99%", "did you mean '<= 1ms in 99%'?"),
    ("errors", "< 0", "errors is never negative"),
    ("total.bw", "<= 1GiB/s - 2GiB/s", "did you mean '<= 1GiB/s'?"),
    ("write.bytes", "== -4k", "did you mean '== 4KiB'?"),
    ("read.iops@cv", "< 0%", "read.iops@cv (a coefficient of variation) is never negative"),
    ("read.iops@min", "< 0", "read.iops@min is never negative"),
    ("sync.ios", "< 0", "never negative"),
    ("mix.read_pct", "< 0%", "0% is the least it can be ('== 0%')"),
])
def test_a_bound_outside_the_metric_is_impossible(metric, text, said):
    why = impossible(parse_expectation(metric, text))
    assert why is not None
    assert said in why


@pytest.mark.parametrize(("metric", "text"), [
    ("mix.read_pct", ">= 100%"), ("mix.read_pct", "== 100%"), ("mix.read_pct", "<= 0%"),
    ("mix.read_pct", "!= 150%"), ("read.iops", "== 0"), ("read.iops", "<= 0"),
    ("read.iops", "!= -1"), ("read.iops", ">= -1"), ("errors", "<= 0"),
    # Not shares: a rate faster than asked, the CPU time of several CPUs, a spread.
    ("read.rate_pct", ">= 150%"), ("cpu.util_pct", ">= 350%"), ("read.iops@cv", ">= 120%"),
    # Not literal: known only when the run is judged.
    ("read.iops", "< baseline - baseline"), ("read.clat.p99", "<= mean - 1s in all"),
])
def test_a_bound_some_run_can_meet_is_not(metric, text):
    assert impossible(parse_expectation(metric, text)) is None


def test_the_shares_are_percentages_of_the_table():
    """Every share is a percent metric of the table; every percent metric of the table is
    either a share or one known to go above 100% (a new one is neither until it is put in
    one of the two)."""
    percents = {(scope, name) for f in TABLE if f.kind is Kind.PERCENT
                for scope in f.scopes for name in f.names}
    above = {(s, "rate_pct") for s in SCOPES} | {("cpu", "util_pct")}
    assert percents >= SHARES
    assert percents == SHARES | above


@pytest.mark.parametrize("path", ["errors", "read.iops", "total.bw", "write.ios",
                                  "trim.bytes", "read.runtime", "write.clat.p99",
                                  "sync.lat.stdev", "read.qd.mean", "data.compress_ratio",
                                  "cpu.per_io", "disk.aqu_sz", "disk.read.await"])
def test_every_core_metric_is_never_negative(path):
    text = "<= 1ms" if parse_metric(path).kind is Kind.DURATION else "<= 1"
    limits = value_range(parse_expectation(path, text))
    assert limits is not None
    assert (limits.lo, limits.hi) == (0, math.inf)


# -- bounds together -----------------------------------------------------------------------

def said(metric: str, *texts: str) -> list[tuple[int, str]]:
    return contradictions(placed(metric, *texts))


def test_bounds_that_leave_no_value_are_refused_at_the_last():
    assert said("write.clat.p99", ">= 2ms", "<= 1ms") == [(11, (
        "'>= 2ms' (line 10) and '<= 1ms' leave no value between them, so no run can pass "
        "both; did you mean '>= 1ms' and '<= 2ms'?"))]


@pytest.mark.parametrize(("texts", "where", "words"), [
    ((">= 2k", "<= 1k", "<= 500"), 12, "'>= 2k' (line 10) and '<= 500' leave no value"),
    (("> 1k", "< 1k"), 11, "drop one, or widen them"),
    (("== 5", "== 6"), 11, "'== 5' (line 10) and '== 6' leave no value"),
    (("== 5", "> 5"), 11, "leave no value"),
    (("<= 4", "== 5"), 11, "leave no value"),
    ((">= 1k", "<= 1k", "!= 1k"), 12, "'!= 1k' excludes 1k, the only value '>= 1k' "
                                      "(line 10) and '<= 1k' (line 11) leave"),
    (("== 7", "!= 7"), 11, "'!= 7' excludes 7, the only value '== 7' (line 10) leaves"),
])
def test_contradictions(texts, where, words):
    found = said("read.iops", *texts)
    assert len(found) == 1, found
    assert found[0][0] == where, found
    assert words in found[0][1], found


def test_the_metric_range_takes_part():
    found = said("mix.read_pct", "!= 100%", ">= 100%")
    assert found == [(11, "'!= 100%' (line 10) excludes 100%, the only value '>= 100%' leaves "
                         "(mix.read_pct is a share, from 0% to 100%): no run can pass them "
                         "all; drop one")]
    assert said("read.iops", "<= 0", "!= 0")[0][1].startswith("'!= 0' excludes 0")
    assert said("read.iops", ">= 0", "!= 0") == []


@pytest.mark.parametrize(("metric", "texts"), [
    ("write.clat.p99", (">= 1ms", "<= 1ms")),
    ("write.clat.p99", (">= 1ms", "<= 2ms", "!= 1.5ms")),
    ("read.iops", ("!= 5", "!= 6", ">= 5", "<= 6")),
    ("read.iops", (">= 0.9 * baseline", "<= 1k", ">= 2k * 0 + history")),
    ("mix.read_pct", (">= 45%", "<= 55%")),
])
def test_bounds_that_leave_a_value_are_not(metric, texts):
    assert said(metric, *texts) == []


def test_one_metric_and_statistic_at_a_time():
    mixed = [*placed("read.iops", ">= 2k"), *placed("read.iops@min", "<= 1k", first_line=11),
             *placed("write.iops", "<= 1k", first_line=12)]
    assert contradictions(mixed) == []
    # A statistic named as the default is the same value; so are sync.lat and sync.clat.
    same = [*placed("read.iops", ">= 2k"), *placed("read.iops@median", "<= 1k", first_line=11)]
    assert [w for w, _ in contradictions(same)] == [11]
    sync = [*placed("sync.lat.p99", ">= 2ms"), *placed("sync.clat.p99", "<= 1ms", first_line=11)]
    assert [w for w, _ in contradictions(sync)] == [11]


def test_an_impossible_bound_is_said_once():
    assert said("read.iops", "< 0", "> 5") == []  # impossible() says the first


def test_windows_contradict_when_their_shares_overlap():
    found = said("read.clat.p99", "<= 1ms in 99%", ">= 2ms in 50%")
    assert len(found) == 1
    assert "99% and 50% of the intervals add up to more than all of them" in found[0][1]
    assert "did you mean '>= 1ms in 99%' and '<= 2ms in 50%'?" in found[0][1]
    assert said("read.clat.p99", "<= 1ms in all", ">= 2ms in all") != []
    # Half the intervals below, half above: both can pass.
    assert said("read.clat.p99", "<= 1ms in 50%", ">= 2ms in 50%") == []
    # A window judges intervals, a whole-run bound the run: different values.
    assert said("read.clat.p99", "<= 1ms in all", ">= 2ms") == []


# -- the property: refused exactly when no value lies between the bounds ---------------------

def _meets(op: str, t: float, v: float) -> bool:
    return OPS[op](v, t)


def _a_value_meets_both(lo: float, hi: float, a: tuple[str, float], b: tuple[str, float]
                        ) -> bool:
    """Whether some value in [lo, hi] meets both comparisons: each is true on intervals
    between the points below, so trying the points, the midpoints and beyond is enough."""
    points = sorted({lo, a[1], b[1]} | ({hi} if math.isfinite(hi) else set()))
    tries = set(points) | {(x + y) / 2 for x, y in itertools.pairwise(points)}
    tries |= {points[-1] + 1, points[0] - 1}
    return any(lo <= v <= hi and _meets(*a, v) and _meets(*b, v) for v in tries)


def _refused(metric: str, a: str, b: str) -> bool:
    pair = placed(metric, a, b)
    return any(impossible(e) for e, _ in pair) or bool(contradictions(pair))


ops = st.sampled_from(sorted(OPS))
small = st.integers(min_value=-3, max_value=6)  # often equal, often at the range's ends


@given(ops, small, ops, small)
def test_a_pair_is_refused_exactly_when_no_count_meets_both(op1, t1, op2, t2):
    refused = _refused("read.iops", f"{op1} {t1}", f"{op2} {t2}")
    assert refused == (not _a_value_meets_both(0, math.inf, (op1, t1), (op2, t2)))


@given(ops, st.integers(min_value=-2, max_value=102), ops,
       st.integers(min_value=-2, max_value=102))
def test_a_pair_is_refused_exactly_when_no_share_meets_both(op1, t1, op2, t2):
    refused = _refused("mix.read_pct", f"{op1} {t1}%", f"{op2} {t2}%")
    assert refused == (not _a_value_meets_both(0, 100, (op1, t1), (op2, t2)))


@given(ops, st.integers(min_value=0, max_value=10**6), ops,
       st.integers(min_value=0, max_value=10**6))
def test_a_pair_of_latencies_is_refused_exactly_when_no_value_meets_both(op1, us1, op2, us2):
    refused = _refused("write.clat.p99", f"{op1} {us1}us", f"{op2} {us2}us")
    assert refused == (not _a_value_meets_both(0, math.inf, (op1, us1), (op2, us2)))


# -- rates and the mix ---------------------------------------------------------------------

def warned(**keys: object) -> list[tuple[tuple[str, ...], str]]:
    w = Workload.model_validate({"name": "a", "size": "1m", "rw": "randrw", **keys})
    return list(mix_warnings(w, keys.keys()))


def test_per_direction_rates_set_the_mix():
    assert warned(rwmixread=70, rate_iops={"read": 100, "write": 500}) == [(
        ("rate_iops", "rwmixread"),
        "rate_iops {read: 100, write: 500} sets the mix: 100 reads/s and 500 writes/s, "
        "16.7% reads, not the 70% that 'rwmixread: 70' asks for; each direction keeps to its "
        "own rate, so the rates decide the mix. For 70% reads, give the total, "
        "'rate_iops: 600' (rwmixread splits it into 420 reads/s and 180 writes/s); or drop "
        "rwmixread if the rates are what you meant")]


def test_rwmixwrite_asks_for_the_mix_too():
    [(blame, message)] = warned(rwmixwrite=30, rate_iops={"read": 100, "write": 500})
    assert blame == ("rate_iops", "rwmixwrite")
    assert "not the 70% that 'rwmixwrite: 30' asks for" in message


def test_bandwidth_per_direction_sets_the_mix_through_the_block_sizes():
    [(blame, message)] = warned(rwmixread=70, rate={"read": "10MiB/s", "write": "10MiB/s"},
                                bs={"read": "4k", "write": "64k"})
    assert blame == ("rate", "rwmixread")
    assert message.startswith("rate {read: 10MiB/s, write: 10MiB/s} sets the mix: 2.56k "
                              "reads/s of 4KiB and 160 writes/s of 64KiB, 94.1% reads")
    assert "'rate_iops: 2720' in place of rate" in message


def test_a_total_bandwidth_split_by_the_mix_is_bytes_not_requests():
    [(_, message)] = warned(rwmixread=70, rate="20MiB/s", bs={"read": "4k", "write": "64k"})
    assert message.startswith("rate 20MiB/s, split 70:30 in bytes, sets the mix: 3.584k "
                              "reads/s of 4KiB and 96 writes/s of 64KiB, 97.4% reads")
    assert warned(rwmixread=70, rate="20MiB/s") == []  # the same sizes: the same mix


def test_the_stricter_of_both_rates_sets_each_direction():
    [(blame, message)] = warned(rwmixread=70, rate="20MiB/s",
                                rate_iops={"read": 100, "write": 100})
    assert blame == ("rate_iops", "rwmixread")
    assert "set the mix: 100 reads/s of 4KiB and 100 writes/s of 4KiB, 50% reads" in message
    assert "'rate_iops: 200' in place of both" in message


def test_a_mean_block_size_for_ranges_and_splits():
    [(_, message)] = warned(rwmixread=70, rate={"read": "1MiB/s", "write": "1MiB/s"},
                            bsrange="4k-16k")
    assert "102.4 reads/s of a mean 10KiB" in message


@pytest.mark.parametrize("keys", [
    {"rate_iops": {"read": 100, "write": 500}},  # no mix asked for: the rates say it
    {"rwmixread": 70, "rate_iops": {"read": 70, "write": 30}},  # the same mix
    {"rwmixread": 67, "rate_iops": {"read": 2, "write": 1}},  # 66.7%: the same, rounded
    {"rwmixread": 70, "rate_iops": 600},  # a total of requests: split by the mix
    {"rwmixread": 70},
])
def test_rates_that_keep_the_mix_say_nothing(keys):
    assert warned(**keys) == []


def test_only_mixed_workloads():
    w = Workload.model_validate({"name": "a", "size": "1m", "rw": "randread",
                                 "rate_iops": {"read": 100}})
    assert list(mix_warnings(w, {"rate_iops"})) == []


# -- through the loader --------------------------------------------------------------------

def load(text: str) -> LoadedSuite:
    return load_suite_text(text, "t.suite.yaml", env={})


def problems(text: str) -> list[tuple[int, str, str]]:
    with pytest.raises(SuiteError) as info:
        load(text)
    return [(p.line, p.path, p.message) for p in info.value.problems]


SEEN = """\
suite: seen
workloads:
  - name: a
    rw: randrw
    size: 16m
    expect:
      mix.read_pct: ">= 120%"
      read.iops: "< 0"
      read.clat.p99: "<= -1ms"
      write.clat.p99:
        - ">= 2ms"
        - "<= 1ms"
      total.iops: [">= 0.9 * baseline", "<= 1k"]
"""


def test_what_issue_26_saw_is_refused_where_it_is_written():
    assert problems(SEEN) == [
        (7, "workloads[0].expect.mix.read_pct", "mix.read_pct is a share, from 0% to 100%, so "
            "no run makes it '>= 120%': 100% is the most it can be"),
        (8, "workloads[0].expect.read.iops", "read.iops is never negative, so no run makes it "
            "'< 0': 0 is the least it can be ('== 0')"),
        (9, "workloads[0].expect.read.clat.p99", "read.clat.p99 is never negative, so no run "
            "makes it '<= -1ms'; did you mean '<= 1ms'?"),
        (12, "workloads[0].expect.write.clat.p99[1]", "'>= 2ms' (line 11) and '<= 1ms' leave no "
             "value between them, so no run can pass both; did you mean '>= 1ms' and "
             "'<= 2ms'?"),
    ]


def test_said_with_every_other_problem_of_the_file():
    found = problems("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 16m\n"
                     "    bs: 4MB\n    ioengine: psync\n    iodepth: 8\n    expect:\n"
                     "      read.iops: ['>= 2k', '<= 1k']\n      read.clat.mean: '< 0us'\n")
    assert [(line, path) for line, path, _ in found] == [
        (6, "workloads[0].bs"), (8, "workloads[0].iodepth"),
        (10, "workloads[0].expect.read.iops[1]"), (11, "workloads[0].expect.read.clat.mean")]


def test_each_sweep_point_on_its_own():
    text = ("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 16m\n"
            "    sweep:\n      n: [1, 10]\n    expect:\n"
            "      read.iops: ['>= ${n}k', '<= 5k']\n")
    assert problems(text) == [(9, "workloads[0].expect.read.iops[1]", (
        "'>= 10k' and '<= 5k' leave no value between them, so no run can pass both; did you "
        "mean '>= 5k' and '<= 10k'?"))]
    assert len(load(text.replace("10]", "5]")).cases) == 2


def test_expect_and_per_host_are_judged_apart():
    # The fleet's total and each host's are different values.
    suite = load("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 16m\n"
                 "    expect: {read.iops: '>= 2k'}\n    per_host: {read.iops: '<= 1k'}\n")
    assert len(suite.cases) == 1
    found = problems("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 16m\n"
                     "    per_host: {read.iops: ['>= 2k', '<= 1k'], mix.read_pct: '> 100%'}\n")
    assert {path for _, path, _ in found} == {"workloads[0].per_host.mix.read_pct",
                                              "workloads[0].per_host.read.iops[1]"}


MIXED = """\
suite: s
defaults:
  size: 16m
workloads:
  - name: a
    rw: randrw
    rwmixread: 70
    rate_iops: {read: 100, write: 500}
  - name: b
    rw: randrw
    rate_iops: {read: 100, write: 500}
"""


def test_rates_that_set_another_mix_are_a_warning_at_the_rate():
    suite = load(MIXED)
    assert [c.id for c in suite.cases] == ["a", "b"]  # valid: it runs
    [w] = suite.warnings
    assert (w.file, w.line, w.col, w.path) == ("t.suite.yaml", 8, 5, "workloads[0].rate_iops")
    assert w.message.startswith("rate_iops {read: 100, write: 500} sets the mix: 100 reads/s "
                                "and 500 writes/s, 16.7% reads, not the 70% that "
                                "'rwmixread: 70' asks for")


def test_a_warning_from_the_defaults_is_said_at_each_workload_once():
    text = ("suite: s\ndefaults:\n  size: 16m\n  rw: randrw\n  rwmixread: 70\n"
            "  rate_iops: {read: 100, write: 500}\nworkloads:\n  - name: a\n  - name: b\n"
            "    sweep:\n      iodepth: [1, 2]\n    ioengine: io_uring\n")
    assert [(w.line, w.path) for w in load(text).warnings] == [
        (8, "workloads[0]"), (9, "workloads[1]")]


def test_validate_prints_the_warning(tmp_path, capsys):
    path = tmp_path / "mixed.suite.yaml"
    path.write_text(MIXED)
    assert cli.main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "ok, 2 case(s)" in out
    assert err.startswith(f"{path}:8:5: workloads[0].rate_iops: warning: rate_iops {{read: "
                          "100, write: 500} sets the mix")


@settings(deadline=None, max_examples=60)
@given(ops, small, ops, small)
def test_the_loader_refuses_a_pair_exactly_when_no_value_meets_both(op1, t1, op2, t2):
    text = ("suite: s\nworkloads:\n  - name: a\n    rw: randread\n    size: 16m\n"
            f"    expect:\n      read.iops: ['{op1} {t1}', '{op2} {t2}']\n")
    try:
        load(text)
        refused = False
    except SuiteError as exc:
        assert {p.line for p in exc.problems} == {7}
        refused = True
    assert refused == (not _a_value_meets_both(0, math.inf, (op1, t1), (op2, t2)))


def test_a_job_file_warning_is_at_the_job_file_line(tmp_path, capsys):
    path = tmp_path / "mixed.fio"
    path.write_text("[global]\nsize=16m\n\n[mixed]\nrw=randrw\nrwmixread=70\n"
                    "rate_iops=100,500\n")
    assert cli.main(["validate", str(path)]) == 0
    assert capsys.readouterr().err.startswith(
        f"{path}:7:1: [mixed] rate_iops: warning: rate_iops {{read: 100, write: 500}} sets")
