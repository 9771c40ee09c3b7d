"""Sweeps, repeats, fail_fast and steady_state in suites: the cases they make, every mistake."""

import textwrap
from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.spec import load_suite
from iogate.spec.variables import Expander, references

HEAD = ("suite: s\ndefaults:\n  size: 1MiB\n  ioengine: null\nworkloads:\n"
        "  - name: w\n    rw: randread\n")  # the workload's own lines start on line 8


def load(tmp_path: Path, body: str, env=None):
    f = tmp_path / "s.suite.yaml"
    f.write_text(HEAD + textwrap.indent(textwrap.dedent(body), "    "))
    return load_suite(f, env=env or {})


def problems(tmp_path: Path, body: str, env=None) -> list[str]:
    with pytest.raises(SuiteError) as exc:
        load(tmp_path, body, env)
    return [str(p).replace(str(tmp_path / "s.suite.yaml"), "F") for p in exc.value.problems]


def test_a_mapping_of_lists_is_the_product_in_the_order_written(tmp_path):
    suite = load(tmp_path, """\
        sweep: {bs: [4k, 64k], iodepth: [1, 8, 32]}
        expect:
          read.clat.p99: "<= ${iodepth} * 100us"
        """)
    ids = [c.id for c in suite.cases]
    assert ids == ["w[bs:4k-iodepth:1]", "w[bs:4k-iodepth:8]", "w[bs:4k-iodepth:32]",
                   "w[bs:64k-iodepth:1]", "w[bs:64k-iodepth:8]", "w[bs:64k-iodepth:32]"]
    last = suite.cases[-1]
    assert last.base_name == "w"
    assert last.workload.name == "w"
    assert last.sweep_point == {"bs": "64k", "iodepth": "32"}
    assert list(last.sweep_point) == ["bs", "iodepth"]
    assert (last.workload.bs.read, last.workload.iodepth) == (65536, 32)
    assert [c.expectations[0].literal for c in suite.cases[:3]] == [100_000, 800_000, 3_200_000]
    assert last.expectations[0].line == 10


def test_a_list_of_points_and_variables_in_every_value(tmp_path):
    suite = load(tmp_path, """\
        sweep: [{bs: 4k, min_iops: 10k}, {bs: 64k, min_iops: 2k}]
        precondition:
          - {rw: write, bs: '${bs}'}
        expect:
          read.iops: ">= ${min_iops}"
        """)
    assert [c.id for c in suite.cases] == ["w[bs:4k-min_iops:10k]", "w[bs:64k-min_iops:2k]"]
    assert [c.expectations[0].literal for c in suite.cases] == [10_000, 2_000]
    assert [c.preconditions[0].bs.write for c in suite.cases] == [4096, 65536]


def test_a_key_written_with_its_variable_is_decided_by_the_workload(tmp_path):
    suite = load(tmp_path, """\
        sweep: {iodepth: [1, 4]}
        iodepth: ${iodepth} * 2
        """)
    assert [c.workload.iodepth for c in suite.cases] == [2, 8]


def test_sweep_variables_win_over_the_environment_and_builtins(tmp_path):
    suite = load(tmp_path, """\
        sweep: {ncpus: [3], SIZE: [2MiB]}
        numjobs: ${ncpus}
        size: ${SIZE}
        """, env={"ncpus": "7", "SIZE": "1GiB"})
    assert (suite.cases[0].workload.numjobs, suite.cases[0].workload.size) == (3, 2 << 20)
    assert Expander({"A": "env"}, {"A": "point"}).expand("${A}")[0] == "point"


def test_sweep_values_expand_against_the_environment(tmp_path):
    suite = load(tmp_path, "sweep: {bs: [4k, '${BIG:-1m}']}\n")
    assert [c.id for c in suite.cases] == ["w[bs:4k]", "w[bs:1m]"]


def test_references():
    assert references({"a": "${x} $y $$z ${u:-${v}}", "b": [1, "${w}"]}) == {
        "x", "y", "u", "v", "w"}


def test_defaults_and_plain_workloads_are_unchanged(tmp_path):
    case = load(tmp_path, "").cases[0]
    assert (case.id, case.base_name, case.sweep_point, case.repeat, case.fail_fast,
            case.steady_state) == ("w", "w", {}, 1, False, None)


def test_repeat_fail_fast_and_steady_state(tmp_path):
    f = tmp_path / "s.suite.yaml"
    f.write_text(HEAD.replace("ioengine: null\n", "ioengine: null\n  repeat: 3\n") + (
        "    fail_fast: true\n"
        "    steady_state: {metric: total.clat.p99.9, round: 10s, window: 3, max_rounds: 8,\n"
        "                   range_pct: 15, slope_pct: 5.5, on_unsteady: skip}\n"
        "  - name: v\n    rw: read\n    repeat: 5\n"
        "    steady_state: {metric: read.iops}\n"))
    w, v = load_suite(f, env={}).cases
    assert (w.repeat, w.fail_fast, v.repeat, v.fail_fast) == (3, True, 5, False)
    s = w.steady_state
    assert s is not None
    assert (s.metric, s.round, s.window, s.max_rounds, s.range_pct,
                              s.slope_pct, s.on_unsteady) == (
        "total.clat.p99.9", 10 * 10**9, 3, 8, 15, 5.5, "skip")
    d = v.steady_state
    assert d is not None
    assert (d.round, d.window, d.max_rounds, d.range_pct, d.slope_pct,
                              d.on_unsteady) == (60 * 10**9, 5, 25, 20, 10, "fail")


BAD = [
    ("sweep: {bs: [4k, 64k], depth: [1, 2]}\n",
     "F:8:28: workloads[0].sweep.depth: sweep variable 'depth' is never used: refer to it as "
     "${depth} in this workload, or name it after a workload key"),
    ("sweep: [{bs: 4k, depth: 1}]\n",
     "F:8:22: workloads[0].sweep[0].depth: sweep variable 'depth' is never used: refer to it "
     "as ${depth} in this workload, or name it after a workload key"),
    ("expect:\n  read.clat.p99: \"<= ${depth} * 100us\"\n",
     "F:9:22: workloads[0].expect.read.clat.p99: variable 'depth' is not set; set it or "
     "write ${depth:-default}"),
    ("sweep: {bs: []}\n", "F:8:17: workloads[0].sweep.bs: 'bs' has no values: give at least one"),
    ("sweep: []\n", "F:8:12: workloads[0].sweep: a sweep needs at least one point"),
    ("sweep: {}\n", "F:8:12: workloads[0].sweep: a sweep needs at least one variable"),
    ("sweep: [{bs: 4k, iodepth: 1}, {bs: 64k}]\n",
     "F:8:35: workloads[0].sweep[1]: every point must name the same variables as the first "
     "(bs, iodepth); point 2 lacks iodepth"),
    ("sweep: [{bs: 4k, iodepth: 1}, {bs: 64k, iodepth: 2, x: 3}]\n",
     "F:8:35: workloads[0].sweep[1]: every point must name the same variables as the first "
     "(bs, iodepth); point 2 adds x"),
    ("sweep: {bs: [4k, 64k], iodepth: [1, 1]}\n",
     "F:8:41: workloads[0].sweep.iodepth[1]: '1' is already in the values of 'iodepth'; "
     "each point must be a different case"),
    ("sweep: [{bs: 4k}, {bs: 4k}]\n",
     "F:8:23: workloads[0].sweep[1]: the point bs:4k is already in the sweep; each point "
     "must be a different case"),
    ("sweep: {a: [" + ", ".join(map(str, range(1, 102))) + "], b: ["
     + ", ".join(map(str, range(1, 101))) + "]}\nnumjobs: ${a}\nthinktime_blocks: ${b}\n",
     "F:8:12: workloads[0].sweep: the sweep has 10100 points; at most 10000"),
    ("sweep: {bs: 4k}\n", "F:8:17: workloads[0].sweep.bs: expected a list of values, got the "
                          "string '4k'; write e.g. 'bs: [4k, 64k]'"),
    ("sweep: {bs: [[1]]}\n", "F:8:18: workloads[0].sweep.bs[0]: a sweep value must be a "
                             "string or a number, got a list"),
    ("sweep: 5\n", "F:8:12: workloads[0].sweep: expected variables with lists of values, like "
                   "{bs: [4k, 64k]}, or a list of points; got the integer 5"),
    ("sweep: {1x: [1]}\n", "F:8:13: workloads[0].sweep.1x: '1x' is not a variable name: use "
                           "letters, digits and '_', not starting with a digit"),
    ("iodepth: 4\nsweep: {iodepth: [1, 2]}\n",
     "F:8:5: workloads[0].iodepth: 'iodepth' is swept, but the workload also sets it here; "
     "remove one, or write the value using ${iodepth}"),
    ("sweep: {bs: [4k, 100]}\ndirect: true\n",
     "F:8:22: workloads[0].sweep.bs[1]: direct I/O needs block sizes that are a multiple of "
     "512 bytes; read bs is 100"),
    ("sweep: {bs: ['${NOPE}']}\n", "F:8:18: workloads[0].sweep.bs[0]: variable 'NOPE' is not "
                                   "set; set it or write ${NOPE:-default}"),
    ("expect:\n  read.iops@mediam: \">= 1k\"\n",
     "F:9:25: workloads[0].expect.read.iops@mediam: unknown statistic '@mediam': use one of "
     "@median, @min, @max, @mean, @cv; did you mean '@median'?"),
    ("expect:\n  read.ios: \">= 1 in 99%\"\n",
     "F:9:17: workloads[0].expect.read.ios: read.ios has no per-interval values, so it cannot "
     "be judged 'in' a share of intervals; windows work on read.iops, read.bw, write.iops, "
     "write.bw, trim.iops, trim.bw, read.clat.mean, read.clat.p99, read.lat.mean, "
     "read.lat.p99, read.resp.mean, read.resp.p99, write.clat.mean, write.clat.p99, "
     "write.lat.mean, write.lat.p99, write.resp.mean, write.resp.p99, trim.clat.mean, "
     "trim.clat.p99, trim.lat.mean, trim.lat.p99, trim.resp.mean, trim.resp.p99, disk.*"),
    ("expect:\n  read.iops: \">= 0.8 * mean\"\n",
     "F:9:18: workloads[0].expect.read.iops: '>= 0.8 * mean': 'mean' is the whole-run value, "
     "so it only makes sense in a windowed expectation, e.g. '>= 0.8 * mean in all'"),
    ("expect:\n  read.iops: \">= 1 in 99% of 5ms\"\n",
     "F:9:18: workloads[0].expect.read.iops: '>= 1 in 99% of 5ms': the interval must be at "
     "least 10ms, got 5ms"),
    ("expect:\n  read.iops: \">= 1 in 0%\"\n",
     "F:9:18: workloads[0].expect.read.iops: '>= 1 in 0%': the share of intervals must be "
     "above 0% and at most 100%, got 0%"),
    ("expect:\n  read.iops: \">= 1 in most\"\n",
     "F:9:18: workloads[0].expect.read.iops: '>= 1 in most': after 'in', write a share of "
     "intervals like 'in 99%', 'in 95% of 1s' or 'in all'"),
    ("expect:\n  read.iops@min: \">= 1 in all\"\n",
     "F:9:22: workloads[0].expect.read.iops@min: 'read.iops@min': a windowed expectation "
     "judges intervals, not a statistic over repeats; drop the '@min'"),
    ("expect:\n  read.clat.p99: \"<= baseline * 1ms\"\n",
     "F:9:22: workloads[0].expect.read.clat.p99: '<= baseline * 1ms': 'baseline * 1ms' "
     "multiplies a duration by a duration; one side must be a plain number"),
    ("expect:\n  read.iops: \">= 90%\"\n",
     "F:9:18: workloads[0].expect.read.iops: '90%' is a percentage, but read.iops is an IOPS "
     "figure; write e.g. '>= 250k'"),
    ("steady_state: {metric: read.iops, window: 10, max_rounds: 5}\n",
     "F:8:63: workloads[0].steady_state.max_rounds: max_rounds (5) must be at least the "
     "window (10 rounds), or steady state could never be judged"),
    ("steady_state: {metric: read.iops, max_rounds: 4}\n",
     "F:8:51: workloads[0].steady_state.max_rounds: max_rounds (4) must be at least the "
     "window (5 rounds), or steady state could never be judged"),
    ("steady_state: {metric: read.iops, window: 1}\n",
     "F:8:47: workloads[0].steady_state.window: must be at least 2, got 1"),
    ("steady_state: {metric: read.ios}\n",
     "F:8:28: workloads[0].steady_state.metric: steady state tracks IOPS, bandwidth or a "
     "latency's percentile or mean, e.g. read.iops, write.bw, total.iops, read.clat.p99, "
     "read.clat.mean or total.lat.p99.9; not 'read.ios'"),
    ("steady_state: {metric: read.clat.stdev}\n",
     "F:8:28: workloads[0].steady_state.metric: steady state tracks IOPS, bandwidth or a "
     "latency's percentile or mean, e.g. read.iops, write.bw, total.iops, read.clat.p99, "
     "read.clat.mean or total.lat.p99.9; not 'read.clat.stdev'"),
    ("steady_state: {metric: total.clat.p99, on_unsteady: maybe}\n",
     "F:8:57: workloads[0].steady_state.on_unsteady: expected one of 'fail' or 'skip'; got "
     "the string 'maybe'"),
    ("steady_state: {metric: read.iops, windw: 3}\n",
     "F:8:39: workloads[0].steady_state.windw: unknown key 'windw'; did you mean 'window'?"),
    ("steady_state: {window: 3}\n",
     "F:8:5: workloads[0].steady_state.metric: metric is required"),
    ("repeat: 0\n", "F:8:13: workloads[0].repeat: must be at least 1, got 0"),
    ("fail_fast: yes\n", "F:8:16: workloads[0].fail_fast: expected true or false, got the "
                         "string 'yes' (only true and false are booleans)"),
]


@pytest.mark.parametrize(("body", "message"), BAD, ids=[b.split("\n")[0][:40] for b, _ in BAD])
def test_bad_input(tmp_path, body, message):
    assert problems(tmp_path, body) == [message]


def test_a_point_that_breaks_a_rule_is_blamed_once_per_distinct_message(tmp_path):
    got = problems(tmp_path, """\
        sweep: {depth: [1, 2]}
        expect:
          read.clat.p99: "<= ${depth} * 100"
        """)
    assert got == [
        "F:10:22: workloads[0].expect.read.clat.p99: '<= 1 * 100': '1 * 100' has no unit, "
        "but the value is a duration",
        "F:10:22: workloads[0].expect.read.clat.p99: '<= 2 * 100': '2 * 100' has no unit, "
        "but the value is a duration",
    ]


@pytest.mark.parametrize("key", ["sweep", "fail_fast", "steady_state"])
def test_workload_only_keys_are_not_defaults(tmp_path, key):
    f = tmp_path / "s.suite.yaml"
    f.write_text(HEAD.replace("  size: 1MiB\n", f"  size: 1MiB\n  {key}: x\n"))
    with pytest.raises(SuiteError) as exc:
        load_suite(f, env={})
    assert [str(p).replace(str(f), "F") for p in exc.value.problems] == [
        f"F:4:3: defaults.{key}: '{key}' cannot be a default; set it in each workload"]


def test_a_precondition_step_has_no_repeat(tmp_path):
    assert problems(tmp_path, "precondition:\n  - {rw: write, repeat: 2}\n") == [
        "F:9:21: workloads[0].precondition[0].repeat: a precondition step has no 'repeat'; "
        "it belongs to the workload"]
