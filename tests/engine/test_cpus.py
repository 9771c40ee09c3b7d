"""CPU placement through libiogate (iog_job_spec.cpus, IOG_JOB_CPUS_SPLIT, fio's cpus_allowed
and cpus_allowed_policy): each worker thread's affinity is read from /proc while the run
goes on. shared: every thread on all of the CPUs; split: each thread on one, in turn. A CPU
this process may not run on is refused before anything runs."""

from __future__ import annotations

import glob
import os
import threading
import time
from pathlib import Path

import pytest

from iogate.engine.session import Session
from iogate.errors import EngineError
from iogate.job import JobSpec

pytestmark = pytest.mark.skipif(not {0, 1} <= os.sched_getaffinity(0),
                                reason="needs CPUs 0 and 1")


def _affinities() -> dict[str, str]:
    """Each thread of this process: its Cpus_allowed_list."""
    out = {}
    for task in glob.glob("/proc/self/task/*"):
        try:
            status = Path(task, "status").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        line = next(x for x in status.splitlines() if x.startswith("Cpus_allowed_list"))
        out[os.path.basename(task)] = line.split()[1]
    return out


def workers_pinned(spec: JobSpec) -> list[str]:
    """The affinity of every thread that appears during the run, read while it runs."""
    before = set(_affinities())
    seen: dict[str, str] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update({t: a for t, a in _affinities().items() if t not in before})
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with Session([spec]) as session:
            session.start()
            while not session.wait(0.05):
                pass
    finally:
        done.set()
        watcher.join()
    return sorted(a for t, a in seen.items() if t != str(watcher.native_id))


def null(**kw) -> JobSpec:
    return JobSpec(engine="null", rw="randread", size=1 << 30, time_based=True,
                   runtime_ns=700_000_000, numjobs=2, **kw)


def test_shared_runs_every_thread_on_the_cpus_given():
    pinned = workers_pinned(null(cpus=(1,)))
    # the two workers, and the library's own threads (monitor) where they are not pinned
    assert pinned.count("1") == 2, pinned
    assert "0" not in pinned, pinned


def test_split_gives_each_thread_one_cpu_in_turn():
    pinned = workers_pinned(null(cpus=(0, 1), cpus_split=True))
    assert pinned.count("0") == 1, pinned
    assert pinned.count("1") == 1, pinned


def test_unpinned_threads_keep_the_process_affinity():
    own = _affinities()[str(threading.get_native_id())]
    pinned = workers_pinned(null())
    assert len(pinned) >= 2, pinned
    assert set(pinned) == {own}, (pinned, own)


def test_a_cpu_the_process_may_not_run_on_is_refused():
    cpu = max(os.sched_getaffinity(0)) + 1
    with pytest.raises(EngineError, match=f"names CPU {cpu}, which this process may not "
                                          "run on"), Session([null(cpus=(cpu,))]):
        pass
