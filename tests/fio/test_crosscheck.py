"""Cross-check: the same workloads with iogate's native engine and with fio, on the same file.

Each engine checks the other where the outcome is certain, so the checks hold on any machine
under any load: the requests issued (counts, bytes, block sizes), the read/write mix (within
binomial tolerances), and latencies that agree with each engine's own run time by
construction. How fast each engine is, and how their latencies compare, are measurements:
``bench/matrix.py`` makes them (the row ``psync-randread-4k-qd1`` is the device-bound workload
checked here).

Run with ``pytest -s`` to see the figures.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import pytest
from tests.fio.common import KiB, MiB, spec

from iogate.engine import isolated
from iogate.fio import backend
from iogate.job import JobSpec
from iogate.results import RunResult

FILE_SIZE = 64 * MiB
MS = 1_000_000

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def native(specs: list[JobSpec]) -> RunResult:
    return isolated.run(specs)


def fio(specs: list[JobSpec]) -> RunResult:
    return backend.run(specs).result


@pytest.fixture(scope="module")
def datafile(workdir: Path) -> str:
    """FILE_SIZE bytes of random data, on the disk (not only in the page cache)."""
    path = workdir / "data"
    with open(path, "wb") as f:
        for _ in range(FILE_SIZE // MiB):
            f.write(os.urandom(MiB))
        f.flush()
        os.fsync(f.fileno())
    return str(path)


@pytest.mark.parametrize("job", [
    pytest.param(dict(size=1 * MiB), id="null-randread"),
    pytest.param(dict(numjobs=2, size=1 * MiB), id="null-2-threads"),
    pytest.param(dict(rw="randrw", rwmixread=70, size=2 * MiB), id="null-randrw"),
    pytest.param(dict(engine="psync", rw="write", size=1 * MiB), id="psync-write"),
])
def test_size_based_runs_issue_the_same_requests(job, workdir):
    if job.get("engine") == "psync":
        job = {**job, "filename": str(workdir / "written")}
    results = {name: run([spec(**job)]) for name, run in (("native", native), ("fio", fio))}
    print(f"\n{job}: " + ", ".join(
        f"{name} {r.metric('read.ios'):.0f} reads {r.metric('write.ios'):.0f} writes"
        for name, r in results.items()))
    mine, theirs = results["native"], results["fio"]
    expected = job.get("numjobs", 1) * job["size"] // (4 * KiB)
    assert mine.metric("total.ios") == theirs.metric("total.ios") == expected
    assert mine.metric("total.bytes") == theirs.metric("total.bytes") == expected * 4 * KiB
    if job.get("rw") == "randrw":
        # Each engine draws its own mix of reads and writes, 70% reads on average: within 5
        # standard errors of the draws (512: 2 points each).
        draws = expected
        for r in (mine, theirs):
            assert r.metric("read.ios") + r.metric("write.ios") == draws
            sigma = 100 * math.sqrt(0.7 * 0.3 / draws)
            assert abs(r.metric("mix.read_pct") - 70) <= 5 * sigma + 100 / draws
        return
    for metric in ("read.ios", "write.ios"):
        assert mine.metric(metric) == theirs.metric(metric), metric


def test_device_bound_random_reads_issue_the_same_requests(datafile):
    # 4 KiB random reads, O_DIRECT, one thread at QD1, over the first 4 MiB of a file on the
    # disk: 1024 reads for each engine, whatever the disk's speed.
    job = spec(engine="psync", direct=True, size=4 * MiB, filename=datafile)
    for name, run in (("native", native), ("fio", fio)):
        r = run([job])
        lat, runtime = r.metric("read.lat.mean"), r.metric("read.runtime")
        print(f"\n{name}: {r.metric('read.ios'):.0f} reads in {runtime / MS:.1f} ms, "
              f"lat mean {lat / 1e3:.1f} us")
        assert r.metric("read.ios") == 1024, name
        assert r.metric("read.bytes") == 4 * MiB, name
        assert not r.metric("write.ios"), name
        # every latency positive, the percentiles in order
        assert 0 < r.metric("read.clat.min") <= r.metric("read.clat.max"), name
        assert 0 < r.metric("read.clat.p50") <= r.metric("read.clat.p99"), name
        # One request at a time: the requests' latencies are disjoint spans of the run, so
        # they add up to no more than it (fio states its run time in whole milliseconds). A
        # latency read too large (a unit or an octave off) breaks this.
        assert lat * 1024 <= runtime + MS, name
        assert r.metric("read.clat.mean") <= lat, name
        # IOPS and bandwidth are the counts over the run time (within fio's millisecond)
        iops = r.metric("read.ios") / (runtime / 1e9)
        assert abs(r.metric("read.iops") - iops) <= iops * MS / runtime + 1, name
        assert r.metric("read.bw") == pytest.approx(4096 * r.metric("read.iops"), rel=1e-6,
                                                   abs=1), name
