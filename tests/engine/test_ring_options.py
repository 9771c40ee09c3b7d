"""io_uring's fast paths through libiogate (IOG_JOB_RING_*, fio's fixedbufs, registerfiles,
sqthread_poll, sqthread_poll_cpu and hipri), read from the kernel while the run goes on: each
ring's /proc/self/fdinfo says how many buffers and files are registered with it and which
thread polls its submission queue, on which CPU. Each run also writes and verifies its
blocks, so a request that used the wrong registered buffer or file would be found."""

from __future__ import annotations

import errno
import os
import re
import time
from pathlib import Path

import pytest

from iogate.engine.session import Session, run
from iogate.errors import EngineError
from iogate.job import JobSpec

DEPTH = 8


def _rings() -> list[str]:
    """The fdinfo of every io_uring instance this process holds."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[io_uring]":
                out.append(Path(f"/proc/self/fdinfo/{fd}").read_text())
        except OSError:  # closed meanwhile
            continue
    return out


def _field(info: str, name: str) -> int:
    m = re.search(rf"^{name}:\s*(-?\d+)", info, re.M)
    assert m is not None, f"no {name} in the ring's fdinfo:\n{info}"
    return int(m.group(1))


def rings_while_running(spec: JobSpec) -> list[str]:
    """The fdinfo of the rings that appear while the job runs, read during the run."""
    before = set(_rings())
    seen: list[str] = []
    with Session([spec]) as session:
        session.start()
        while not session.wait(0.05):
            if not seen:
                # the kernel writes a ring's details only when it can take the ring's lock
                # at once: a read that has them
                seen = [r for r in _rings() if r not in before and "UserFiles:" in r]
        result = session.collect()
    assert result.metric("errors") == 0
    verify = result.jobs[0].verify
    assert verify is not None
    assert verify.blocks_written > 0
    assert verify.failures == 0
    return seen


def job(path: Path, **ring) -> JobSpec:
    return JobSpec(engine="io_uring", rw="randwrite", bs_write=4096, size=1 << 20,
                   iodepth=DEPTH, filename=str(path), runtime_ns=400_000_000,
                   time_based=True, verify="crc32c", **ring)


def test_by_default_the_files_are_registered_and_the_buffers_not(tmp_path):
    (info,) = rings_while_running(job(tmp_path / "f"))
    assert _field(info, "UserFiles") == 1
    assert _field(info, "UserBufs") == 0
    assert _field(info, "SqThread") == -1


def test_fixedbufs_registers_one_buffer_per_request_slot(tmp_path):
    (info,) = rings_while_running(job(tmp_path / "f", fixedbufs=True))
    assert _field(info, "UserBufs") == DEPTH


def test_registerfiles_false_leaves_the_files_unregistered(tmp_path):
    (info,) = rings_while_running(job(tmp_path / "f", registerfiles=False))
    assert _field(info, "UserFiles") == 0


@pytest.mark.parametrize("cpu", [None, *sorted(os.sched_getaffinity(0))[-1:]])
def test_sqthread_poll_starts_a_polling_thread_on_the_cpu_asked(tmp_path, cpu):
    (info,) = rings_while_running(job(tmp_path / "f", sqpoll=True, sqpoll_cpu=cpu,
                                      fixedbufs=True))
    tid = _field(info, "SqThread")
    assert tid > 0
    if cpu is not None:
        assert _field(info, "SqThreadCpu") == cpu


def test_sqthread_poll_takes_reads_from_the_page_cache(tmp_path):
    # Such reads complete as the polling thread issues them, before it frees the entries it
    # took: the ring must still have room for the slots they free.
    path = tmp_path / "f"
    path.write_bytes(os.urandom(1 << 20))
    for depth in (1, DEPTH):
        result = run([JobSpec(engine="io_uring", rw="randread", bs_read=4096, size=1 << 20,
                              iodepth=depth, filename=str(path), runtime_ns=300_000_000,
                              time_based=True, sqpoll=True)])
        assert result.metric("errors") == 0
        assert result.metric("read.ios") > 0


def test_hipri_is_refused_for_a_file_whose_device_does_not_poll(tmp_path):
    dev = os.stat(tmp_path).st_dev
    polls = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}/queue/io_poll")
    if polls.exists() and polls.read_text().strip() == "1":
        pytest.skip(f"{tmp_path} is on a device that polls")
    with pytest.raises(EngineError) as caught:
        run([JobSpec(engine="io_uring", rw="randread", bs_read=4096, size=1 << 20,
                     iodepth=DEPTH, filename=str(tmp_path / "f"), direct=True, hipri=True)])
    assert caught.value.errno == errno.EOPNOTSUPP
    said = str(caught.value)
    assert "hipri polls for completions, but" in said
    assert "does not poll (queue/io_poll is 0)" in said or "has no queue/io_poll" in said


@pytest.mark.parametrize(("engine", "ring"), [
    ("libaio", {"fixedbufs": True}), ("psync", {"sqpoll": True}),
    ("null", {"registerfiles": False})])
def test_another_engine_refuses_them(tmp_path, engine, ring):
    with pytest.raises(EngineError) as caught:
        run([JobSpec(engine=engine, rw="read", bs_read=4096, size=1 << 20,
                     filename=str(tmp_path / "f"), **ring)])
    assert caught.value.errno == errno.EINVAL
    assert f"the {engine} engine takes none of them" in str(caught.value)


def test_hipri_needs_direct_and_a_polling_cpu_needs_the_thread(tmp_path):
    for ring, said in (({"hipri": True}, "set direct"),
                       ({"sqpoll_cpu": 0}, "RING_SQPOLL_CPU needs RING_SQPOLL")):
        with pytest.raises(EngineError) as caught:
            run([JobSpec(engine="io_uring", rw="read", bs_read=4096, size=1 << 20,
                         filename=str(tmp_path / "f"), **ring)])
        assert said in str(caught.value)


def _pollers() -> list[str]:
    """This process's submission polling threads (the kernel names them iou-sqp-PID)."""
    names = []
    for task in Path("/proc/self/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:  # ended meanwhile
            continue
    return [n for n in names if n.startswith("iou-sqp")]


def test_the_polling_thread_is_gone_after_the_run(tmp_path):
    rings_while_running(job(tmp_path / "f", sqpoll=True))
    assert not _rings()  # closed with the session
    # the kernel ends the thread of a closed ring in the background, soon after
    deadline = time.monotonic() + 60
    while _pollers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pollers()
