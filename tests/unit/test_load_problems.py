"""Loading a suite reports every problem in one pass (fix them all at once, not in rounds),
and refuses expectations the workload can never measure (``write.iops`` of a randread)
where they are written."""

from __future__ import annotations

import pytest

from iogate.errors import SuiteError
from iogate.metrics import Kind, parse_metric
from iogate.spec import load_suite_text

MANY = """\
suite: many
workloads:
  - name: a
    rw: randread
    size: 16m
    bs: 4MB
    ioengine: psync
    iodepth: 8
    rwmixread: 70
    expect:
      read.clat.p99: "<= 1ms"
      write.iops: ">= 100"
      read.iopz: ">= 1"
  - name: b
    rw: randwrite
    size: 10Q
    bssplit: 4k/10:64k/50
    verify: md5
    numjobs: 2
"""


def problems(text: str) -> list[tuple[int, str, str]]:
    with pytest.raises(SuiteError) as info:
        load_suite_text(text, "t.suite.yaml", env={})
    return [(p.line, p.path, p.message) for p in info.value.problems]


def loads(text: str) -> bool:
    try:
        load_suite_text(text, "t.suite.yaml", env={})
    except SuiteError:
        return False
    return True


def test_every_problem_of_a_file_in_one_pass():
    found = problems(MANY)
    assert [(line, path) for line, path, _ in found] == [
        (6, "workloads[0].bs"),  # a wrong value...
        (8, "workloads[0].iodepth"),  # ...does not hide the rules between the other keys
        (9, "workloads[0].rwmixread"),
        (12, "workloads[0].expect.write.iops"),  # nor what the expectations ask
        (13, "workloads[0].expect.read.iopz"),
        (16, "workloads[1].size"),
        (17, "workloads[1].bssplit"),
        (19, "workloads[1].numjobs"),
    ]
    messages = {path: message for _, path, message in found}
    assert messages["workloads[0].iodepth"].startswith("psync is synchronous: iodepth must be 1")
    assert "rwmixread applies only to rw and randrw" in messages["workloads[0].rwmixread"]
    assert messages["workloads[1].numjobs"].startswith("verify needs numjobs 1")


def test_a_rule_about_a_wrong_key_waits_for_the_key():
    # rw is wrong: whether rwmixread fits it cannot be said, nor what it measures.
    found = problems("suite: s\nworkloads:\n  - name: a\n    rw: randomread\n    size: 1m\n"
                     "    rwmixread: 70\n    expect:\n      write.iops: '>= 1'\n")
    assert [path for _, path, _ in found] == ["workloads[0].rw"]


def test_fixing_every_problem_said_leaves_none():
    fixed = (MANY.replace("4MB", "4MiB").replace("    iodepth: 8\n", "")
             .replace("    rwmixread: 70\n", "").replace('      write.iops: ">= 100"\n', "")
             .replace("read.iopz", "read.iops").replace("10Q", "10m")
             .replace("bssplit: 4k/10:64k/50", "bs: 8k").replace("    numjobs: 2\n", ""))
    assert loads(fixed), fixed


def suite(rw: str, metric: str, extra: str = "", key: str = "expect") -> str:
    bound = "<= 1s" if parse_metric(metric.partition("@")[0]).kind is Kind.DURATION else ">= 0"
    return (f"suite: s\nworkloads:\n  - name: a\n    rw: {rw}\n    size: 1m\n{extra}"
            f"    {key}:\n      {metric}: '{bound}'\n")


@pytest.mark.parametrize(("rw", "metric", "extra", "fragment"), [
    ("randread", "write.iops", "", "randread never writes, so write.* is never measured; "
                                   "it measures read.* and total.*"),
    ("write", "read.clat.p99", "", "write never reads"),
    ("randread", "trim.iops", "", "randread never trims"),
    ("trimwrite", "read.iops", "", "it measures trim.*, write.* and total.*"),
    ("randread", "data.compress_ratio", "", "data.* measures the data written, but randread "
                                            "never writes"),
    ("randwrite", "sync.lat.p99", "", "the workload makes none"),
    ("randwrite", "verify.failures", "", "the workload does not verify"),
    ("write", "verify.failures", "    verify: none\n", "the workload does not verify"),
])
def test_a_metric_the_workload_never_measures_is_refused_where_it_is_written(
        rw, metric, extra, fragment):
    for key in ("expect", "per_host"):
        found = problems(suite(rw, metric, extra, key))
        line = 6 + extra.count("\n") + 1
        assert [(ln, path) for ln, path, _ in found] == [(line, f"workloads[0].{key}.{metric}")]
        assert fragment in found[0][2]


@pytest.mark.parametrize(("rw", "metric", "extra"), [
    ("randrw", "write.iops", ""), ("rw", "read.clat.p99", ""), ("trimwrite", "trim.iops", ""),
    ("randtrimwrite", "write.clat.p99", ""), ("randread", "total.iops", ""),
    ("randread", "errors", ""), ("randwrite", "sync.lat.p99", "    fsync: 4\n"),
    ("randwrite", "sync.ios", "    end_fsync: true\n"),
    ("write", "verify.failures", "    verify: crc32c\n"), ("randwrite", "data.dedupe_pct", ""),
    ("randread", "read.iops@min", ""), ("randread", "disk.util_pct", ""),
    # counts are measured, 0, when nothing they count happened
    ("randread", "write.ios", ""), ("randread", "write.bytes", ""), ("write", "trim.ios", ""),
    ("randwrite", "sync.ios", ""), ("randread", "write.runtime", ""),
])
def test_a_metric_the_workload_can_measure_is_accepted(rw, metric, extra):
    assert loads(suite(rw, metric, extra))


def test_each_sweep_point_is_held_to_its_own_mode():
    text = ("suite: s\nworkloads:\n  - name: a\n    size: 1m\n    sweep:\n"
            "      rw: [randread, randwrite]\n    expect:\n      read.iops: '>= 1'\n")
    found = problems(text)
    assert [(line, path) for line, path, _ in found] == [(8, "workloads[0].expect.read.iops")]
    assert "randwrite never reads" in found[0][2]
