"""Flow control between the jobs of a session (fio's flow, flow_id, flow_sleep), through
libiogate: jobs sharing a flow_id issue requests in the proportion of their weights, at every
moment to within a few requests (a thread is held back as soon as its share is ahead), so
the counts at the end obey the same bound; jobs of other flows, or without a weight, are not
held; a job that ends leaves its flow and the others go on."""

from __future__ import annotations

import pytest

from iogate.engine.session import run
from iogate.job import JobSpec

KiB, MiB = 1024, 1024 * 1024
MS = 1_000_000


def spec(**overrides) -> JobSpec:
    base = dict(engine="null", rw="randread", size=1024 * MiB, time_based=True,
                runtime_ns=300 * MS)
    base.update(overrides)
    return JobSpec(**base)


def ios(specs: list[JobSpec]) -> list[int]:
    return [j.read.ios + j.write.ios for j in run(specs).jobs]


# With weights w_a and w_b and counter T = a + b + 1, a thread goes on only while its count
# is at most its weighted share of T, so |a * w_b - b * w_a| stays below w_a + w_b + the
# requests a stopping thread admits after the other left (one per thread).
def bound(w_a: int, w_b: int, depth: int = 1) -> int:
    return (w_a + w_b) * (depth + 2)


@pytest.mark.parametrize(("w_a", "w_b"), [(2, 1), (1, 1), (8, 1)])
def test_two_jobs_of_one_flow_issue_in_the_proportion_of_their_weights(w_a, w_b):
    # judged on at least 1000 requests of a, however slow a busy machine makes the threads
    # take turns: the run is made longer until it has them
    for runtime_ms in (300, 1200, 4800, 19200):
        a, b = ios([spec(flow_weight=w_a, runtime_ns=runtime_ms * MS),
                    spec(flow_weight=w_b, runtime_ns=runtime_ms * MS)])
        if a > 1000:
            break
    assert a > 1000
    assert b > 100
    assert abs(a * w_b - b * w_a) <= bound(w_a, w_b), (a, b)


def test_every_thread_has_its_jobs_weight():
    # two threads of weight 1 against one of weight 2: the jobs issue alike
    a, b = ios([spec(flow_weight=1, numjobs=2), spec(flow_weight=2)])
    assert abs(a - b) <= bound(2, 2), (a, b)


def test_an_asynchronous_engine_keeps_the_proportion(tmp_path):
    path = str(tmp_path / "flow.dat")
    common = dict(engine="io_uring", iodepth=8, size=4 * MiB, filename=path,
                  runtime_ns=200 * MS)
    a, b = ios([spec(flow_weight=3, **common), spec(flow_weight=1, rw="randwrite", **common)])
    assert abs(a - 3 * b) <= bound(3, 1, depth=8), (a, b)


def test_other_flows_and_jobs_without_a_weight_are_not_held():
    # job b, alone in flow 2, and job c, in no flow, run as fast as job a's flow partner
    # allows nothing: a 1:1000 flow would hold b to a thousandth of a if they shared it
    a, b, c = ios([spec(flow_weight=1000, plain={"flow_id": 1}),
                   spec(flow_weight=1, plain={"flow_id": 2}),
                   spec()])
    assert b > a / 100, (a, b, c)
    assert c > a / 100, (a, b, c)


def test_a_job_that_ends_leaves_its_flow():
    # job a issues 1000 requests and ends; job b (weight 1 of 1001) then runs unheld
    a, b = ios([spec(flow_weight=1000, time_based=False, io_limit_ios=1000),
                spec(flow_weight=1)])
    assert a == 1000, (a, b)
    assert b > 10 * a, (a, b)


def test_a_held_thread_waits_flow_sleep_between_its_asks():
    # b (weight 1) is ahead of its share only briefly, a (weight 1) too; with a sleep the
    # proportion holds just the same
    a, b = ios([spec(flow_weight=1, plain={"flow_sleep_ns": 100_000}, runtime_ns=200 * MS),
                spec(flow_weight=1, plain={"flow_sleep_ns": 100_000}, runtime_ns=200 * MS)])
    assert a > 100, (a, b)
    assert abs(a - b) <= bound(1, 1), (a, b)
