"""NUMA placement through libiogate and libnuma (iog_job_spec.numa_*, fio's numa_cpu_nodes
and numa_mem_policy), read from the kernel while the run goes on: each worker thread's
affinity from /proc/self/task, and the memory policy of the request buffers from
/proc/self/numa_maps. A node the machine lacks is refused before anything runs."""

from __future__ import annotations

import errno
import glob
import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from tests.engine.test_cpus import _affinities

from iogate.engine.session import Session, run
from iogate.errors import EngineError
from iogate.job import JobSpec
from iogate.spec.fields import cpu_list

NODES = Path("/sys/devices/system/node")
pytestmark = [
    pytest.mark.skipif(not (NODES / "node0").exists(), reason="no NUMA nodes are listed"),
    pytest.mark.skipif(not glob.glob("/usr/lib/*/libnuma.so.1") + glob.glob("/lib*/libnuma.so.1"),
                       reason="libnuma.so.1 is not installed"),
]
DEPTH = 8


def node_cpus(node: int) -> tuple[int, ...]:
    """The CPUs of a node."""
    return cpu_list((NODES / f"node{node}" / "cpulist").read_text().strip())


def _policies() -> Counter[str]:
    """How many anonymous pages of this process have each memory policy (numa_maps: the
    second field of a mapping, and its anon= pages). Pages, not mappings: a new mapping
    with the policy of one beside it is merged into that one, and the count of mappings
    does not move."""
    pages: Counter[str] = Counter()
    for line in Path("/proc/self/numa_maps").read_text().splitlines():
        fields = line.split()
        if len(fields) > 1:
            pages[fields[1]] += sum(int(f[5:]) for f in fields[2:] if f.startswith("anon="))
    return pages


def while_running(spec: JobSpec) -> tuple[list[str], Counter[str]]:
    """The affinities of the threads that appear during the run and the most pages seen
    with each memory policy then, both read while it runs."""
    before = set(_affinities())
    seen: dict[str, str] = {}
    policies: Counter[str] = Counter()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update({t: a for t, a in _affinities().items() if t not in before})
            for name, n in _policies().items():  # the most of each seen
                policies[name] = max(policies[name], n)
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with Session([spec]) as session:
            session.start()
            while not session.wait(0.05):
                pass
            result = session.collect()
    finally:
        done.set()
        watcher.join()
    assert result.metric("errors") == 0
    return sorted(a for t, a in seen.items() if t != str(watcher.native_id)), policies


def job(path: Path, **numa) -> JobSpec:
    return JobSpec(engine="io_uring", rw="randwrite", bs_write=4096, size=1 << 20,
                   iodepth=DEPTH, numjobs=2, filename=str(path), runtime_ns=400_000_000,
                   time_based=True, **numa)


def test_the_threads_run_on_the_cpus_of_their_node(tmp_path):
    affinities, _ = while_running(job(tmp_path / "f", numa_cpu_nodes=(0,)))
    # the engine's own threads (monitor, analysis) run anywhere; the two workers on node 0
    assert [cpu_list(a) for a in affinities].count(node_cpus(0)) >= 2


@pytest.mark.parametrize(("policy", "nodes", "shown"), [
    ("bind", (0,), "bind:0"), ("interleave", (0,), "interleave:0"),
    ("prefer", (0,), "prefer:0"), ("local", (), "local")])
def test_the_buffers_take_the_memory_policy(tmp_path, policy, nodes, shown):
    before = _policies()[shown]
    _, policies = while_running(job(tmp_path / "f", numa_mem_policy=policy,
                                    numa_mem_nodes=nodes))
    # each thread's buffers are a mapping of their own, written, so their pages are there
    assert policies[shown] > before
    assert _policies()[shown] == before  # gone with the buffers


def test_a_node_the_machine_lacks_is_refused_by_name(tmp_path):
    missing = 1 + max(int(p.name[4:]) for p in NODES.glob("node[0-9]*"))
    if missing >= 64:
        pytest.skip("every node iogate can name is here")
    for numa in ({"numa_cpu_nodes": (missing,)},
                 {"numa_mem_policy": "bind", "numa_mem_nodes": (0, missing)}):
        with pytest.raises(EngineError) as caught:
            run([job(tmp_path / "f", **numa)])
        assert caught.value.errno == errno.EINVAL
        assert re.search(rf"NUMA node {missing} is not on this machine", str(caught.value))


def test_nodes_and_cpus_together_are_refused(tmp_path):
    with pytest.raises(EngineError) as caught:
        run([job(tmp_path / "f", numa_cpu_nodes=(0,), cpus=(0,))])
    assert "numa_cpu_nodes and cpus exclude each other" in str(caught.value)
