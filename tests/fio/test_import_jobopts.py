"""fio's options of how long a job runs and where it goes next, imported: io_size (io_limit),
number_ios, loops, end_fsync and fsync_on_close, the offset modifier of rw (rw=read:-8k),
startdelay, flow control (flow, flow_id, flow_sleep) and fill_device; the keys they become, the
comments where iogate's meaning differs, the notes where fio ignores them, the refusals where
iogate cannot keep them; and their export."""

from __future__ import annotations

from pathlib import Path

import pytest

from iogate.errors import SuiteError
from iogate.fio.importer import import_jobfile
from iogate.fio.options import FioUnsupported, job_options, render_jobfile
from iogate.job import JobSpec
from iogate.lower import lower
from iogate.spec import load_suite_text

JOBS = Path(__file__).parent / "jobs"
KiB, MiB = 1 << 10, 1 << 20
S, MS = 10**9, 10**6


def one(body: str) -> tuple[JobSpec, str]:
    text = import_jobfile("one.fio", "[j]\nsize=1m\n" + body)
    (case,) = load_suite_text(text, "one.fio", {}).cases
    return lower(case.workload, filenames=case.workload.filenames or ["/var/tmp/x"],
                 seed=1), text


def refused(body: str) -> str:
    with pytest.raises(SuiteError) as info:
        import_jobfile("one.fio", "[j]\nsize=1m\n" + body)
    return "\n".join(str(p) for p in info.value.problems)


@pytest.mark.parametrize(("body", "field", "value", "comment"), [
    # io_size and its alias: bytes per thread, beyond the region too
    ("io_size=3m\n", "io_limit_bytes", 3 * MiB, ""),
    ("io_limit=512k\n", "io_limit_bytes", 512 * KiB, ""),
    ("io_size=0\n", "io_limit_bytes", 0, "0 is fio's default"),
    ("number_ios=100\n", "io_limit_ios", 100, ""),
    ("number_ios=0\n", "io_limit_ios", 0, "0 is fio's default"),
    # fio's time_based job runs until its runtime whatever its io_size or number_ios say
    ("io_size=3m\nruntime=10\ntime_based\n", "io_limit_bytes", 0, "ignores it"),
    ("number_ios=9\nruntime=10\ntime_based\n", "io_limit_ios", 0, "ignores it"),
    # loops: passes of size (or io_size), each ios count too
    ("loops=3\n", "io_limit_bytes", 3 * MiB, "fio's loops=3"),
    ("loops=3\nrw=randread\n", "io_limit_bytes", 3 * MiB, "(invalidate)"),
    ("loops=2\nio_size=3m\n", "io_limit_bytes", 6 * MiB, "fio's loops=2"),
    ("loops=2\nnumber_ios=10\n", "io_limit_ios", 20, "fio's loops=2"),
    ("loops=1\n", "io_limit_bytes", 0, "one pass"),
    ("loops=4\nruntime=1\ntime_based\n", "io_limit_bytes", 0, "whatever loops says"),
    # end_fsync, fsync_on_close: one sync of each file as the job ends
    ("rw=write\nend_fsync=1\n", "end_fsync", True, "out of its statistics"),
    ("rw=write\nfsync_on_close=1\n", "end_fsync", True, "as it closes it"),
    ("rw=write\nend_fsync=1\nfsync_on_close=1\n", "end_fsync", True, "one sync of each"),
    ("rw=write\nend_fsync=0\n", "end_fsync", False, "fio's default"),
    ("rw=read\nend_fsync=1\n", "end_fsync", False, "fio never syncs"),
    ("rw=write\nioengine=null\nend_fsync=1\n", "end_fsync", False, "no file to sync"),
    # the offset modifier of a sequential mode
    ("rw=read:-8k\nbs=4k\n", "seq_skip", -8 * KiB, ""),
    ("rw=write:4k\n", "seq_skip", 4 * KiB, ""),
    ("rw=readwrite:64k\n", "seq_skip", 64 * KiB, ""),
    ("rw=read:0\n", "seq_skip", 0, "skips nothing"),
    ("rw=read:8k\nrw_sequencer=sequential\n", "seq_skip", 8 * KiB, "either way"),
    # startdelay: seconds by default, from the start of the group
    ("startdelay=4\n", "start_delay_ns", 4 * S, "startdelay: 4s"),
    ("startdelay=250ms\n", "start_delay_ns", 250 * MS, ""),
    ("startdelay=0\n", "start_delay_ns", 0, "0 is fio's default"),
    # flow control: weights, the flow's id, the sleep in microseconds
    ("flow=8\n", "flow_weight", 8, ""),
    ("flow=2\nflow_id=3\nflow_sleep=1000\n", "flow_id", 3, ""),
    ("flow=2\nflow_sleep=1000\n", "flow_sleep_ns", MS, ""),
    ("flow=0\nflow_sleep=10\n", "flow_weight", 0, "no flow control"),
    ("flow_id=4\n", "flow_id", 0, "no flow: fio ignores it"),
    ("flow_sleep=10\n", "flow_sleep_ns", 0, "no flow: fio ignores it"),
    # fill_device: a sequential write until the filesystem is full
    ("rw=write\nfill_device=1\n", "fill", True, ""),
    ("rw=write\nfill_fs=1\n", "fill", True, ""),
])
def test_conversion(body: str, field: str, value: object, comment: str) -> None:
    spec, text = one(body)
    # a plain key is in the spec's plain values, by its member of the job struct
    assert (getattr(spec, field) if hasattr(spec, field) else spec.plain.get(field, 0)) == value
    assert comment in text


@pytest.mark.parametrize(("body", "problem"), [
    ("rw=randread:8\n", "draw every offset"),
    ("rw=read:8k\nrw_sequencer=identical\n", "rw_sequencer=identical"),
    ("startdelay=1-5\n", "a range of delays"),
    ("loops=0\n", "loops=1 or more"),
    ("loops=${N}\n", "fio reads loops from the environment"),
])
def test_refusals_name_the_option_and_why(body: str, problem: str) -> None:
    assert problem in refused(body)


def test_loops_without_a_size_is_refused_for_want_of_one() -> None:
    with pytest.raises(SuiteError) as info:
        import_jobfile("one.fio", "[j]\nfilename=/dev/sdz\nloops=2\n")
    assert "give size" in str(info.value.problems[0])


def test_loops_of_a_size_from_a_variable_is_an_expression() -> None:
    text = import_jobfile("one.fio", "[j]\nsize=${SIZE}\nloops=2\n")
    (case,) = load_suite_text(text, "one.fio", {"SIZE": "4m"}).cases
    assert case.workload.io_size == 8 * MiB


def test_the_yaml_of_every_option() -> None:
    text = import_jobfile("one.fio", "[j]\nsize=1m\nrw=read:-8k\nbs=4k\nio_size=3m\n"
                                     "number_ios=100\nstartdelay=2\n")
    assert "io_size: 3MiB\n" in text
    assert "number_ios: 100\n" in text
    assert 'seq_skip: "-8KiB"\n' in text
    assert "startdelay: 2s\n" in text


def test_fios_backwards_read_example_imports() -> None:
    text = import_jobfile(JOBS / "backwards-read.fio")
    (case,) = load_suite_text(text, JOBS / "backwards-read.fio", {}).cases
    spec = lower(case.workload, filenames=["/var/tmp/x"], seed=1)
    assert (spec.rw, spec.bs_read, spec.seq_skip, spec.size) == ("read", 4 * KiB, -8 * KiB,
                                                                 128 * MiB)


# -- export -------------------------------------------------------------------------------

def test_every_job_option_is_exported_as_fio_reads_it() -> None:
    spec = JobSpec(engine="psync", rw="read", size=MiB, filename="/var/tmp/x",
                   io_limit_bytes=3 * MiB, io_limit_ios=100, seq_skip=-8 * KiB,
                   start_delay_ns=2 * S)
    opts = dict(job_options(spec))
    assert (opts["rw"], opts["io_size"], opts["number_ios"], opts["startdelay"]) == (
        "read:-8192", str(3 * MiB), "100", "2s")
    render_jobfile([("j", job_options(spec))])  # every value of a form fio reads
    write = dict(job_options(JobSpec(engine="psync", rw="write", size=MiB,
                                     filename="/var/tmp/x", end_fsync=True)))
    assert write["end_fsync"] == "1"


def test_a_limit_of_a_time_based_job_is_not_exported() -> None:
    # fio would run until the runtime whatever the limit says
    with pytest.raises(FioUnsupported, match="io_size with time_based"):
        job_options(JobSpec(engine="psync", rw="read", size=MiB, filename="/var/tmp/x",
                            time_based=True, runtime_ns=S, io_limit_bytes=3 * MiB))


def test_an_exported_job_imports_back_to_the_same_options(tmp_path: Path) -> None:
    spec = JobSpec(engine="psync", rw="write", size=MiB, filename="/var/tmp/x",
                   io_limit_bytes=3 * MiB, io_limit_ios=100, seq_skip=4 * KiB,
                   start_delay_ns=250 * MS, end_fsync=True)
    jobfile = tmp_path / "j.fio"
    jobfile.write_text(render_jobfile([("j", job_options(spec))]))
    (case,) = load_suite_text(import_jobfile(jobfile), jobfile, {}).cases
    back = lower(case.workload, filenames=["/var/tmp/x"], seed=1)
    assert (back.io_limit_bytes, back.io_limit_ios, back.seq_skip, back.start_delay_ns,
            back.end_fsync) == (3 * MiB, 100, 4 * KiB, 250 * MS, True)


@pytest.mark.parametrize(("body", "mode"), [
    ("rw=write\nsync=1\n", "sync"), ("rw=write\nsync=sync\n", "sync"),
    ("rw=randwrite\nsync=dsync\n", "dsync"), ("rw=write\nsync=0\n", "none"),
    ("rw=write\nsync=none\n", "none"), ("rw=read\nsync=1\n", "none"),
])
def test_sync_opens_the_files_o_sync_or_o_dsync(body: str, mode: str) -> None:
    spec, text = one(body)
    assert spec.open_sync == mode
    if mode != "none":
        assert f"sync: {mode}" in text
        assert ("sync", mode) in job_options(spec)  # and back to fio
    else:
        assert "sync:" not in text.replace("fsync", "")


def test_sync_refusals_say_why() -> None:
    assert "'2' is none of fio's 0, 1, none, sync, dsync" in refused("rw=write\nsync=2\n")
    assert "mmap writes reach the file through memory" in refused(
        "rw=write\nioengine=mmap\nsync=1\n")


@pytest.mark.parametrize(("body", "field", "value", "comment"), [
    # each imports with the one line that says what iogate does instead
    ("rw=write\ncontinue_on_error=write\n", "rw", "write",
     "iogate ends the case at the first one"),
    ("rw=randwrite\niodepth=8\nioengine=libaio\nserialize_overlap=1\n", "rw", "randwrite",
     "its verify accepts either contents of a block two writes raced on"),
    ("rw=read\nmem=shm\n", "rw", "read", "iogate allocates them aligned to the page"),
    ("rw=read\nioengine=mmap\ndirect=1\n", "direct", False,
     "maps the file whatever direct says"),
    ("rw=read\nioengine=splice\n", "engine", "psync", "moves each block through a pipe"),
    ("rw=read\nioengine=aio\niodepth=4\n", "engine", "libaio",
     "fio runs its libaio engine for ioengine=aio"),
    ("rw=read\nexitall_on_error\n", "rw", "read", "iogate lets the others of the group run"),
])
def test_options_whose_difference_is_said_at_the_option(body, field, value, comment) -> None:
    spec, text = one(body)
    assert getattr(spec, field) == value
    assert comment in " ".join(text.replace("#", " ").split())


def test_a_huge_page_buffer_and_expected_errors_stay_refused() -> None:
    assert "fio's mem is not supported" in refused("rw=read\nmem=shmhuge\n")
    assert "fio's ignore_error is not supported" in refused("rw=read\nignore_error=,ENOSPC\n")


@pytest.mark.parametrize(("body", "cpus", "split"), [
    ("cpus_allowed=0-2,5\n", (0, 1, 2, 5), False),
    ("cpumask=0x12\n", (1, 4), False),  # fio's bitmask: CPUs 1 and 4
    ("cpumask=6\n", (1, 2), False),
    ("cpus_allowed=1,3\ncpus_allowed_policy=split\nnumjobs=2\n", (1, 3), True),
    ("cpumask=0xf\ncpus_allowed=7\n", (7,), False),  # the later one wins, as in fio
])
def test_cpu_placement_is_kept(body, cpus, split) -> None:
    spec, _ = one("rw=read\n" + body)
    assert (spec.cpus, spec.cpus_split) == (cpus, split)


def test_split_over_clones_of_their_own_files_gives_each_its_cpu() -> None:
    text = import_jobfile("one.fio", "[j]\nsize=1m\nrw=read\ndirectory=/var/tmp\nnumjobs=3\n"
                                     "cpus_allowed=2,5\ncpus_allowed_policy=split\n")
    cases = load_suite_text(text, "one.fio", {}).cases
    assert [c.workload.cpus_allowed for c in cases] == ["2", "5", "2"]


@pytest.mark.parametrize(("body", "ring"), [
    ("fixedbufs\n", (True, True, False, None, False)),
    ("registerfiles=0\nsqthread_poll=1\n", (False, False, True, None, False)),
    ("sqthread_poll\nsqthread_poll_cpu=1\nregisterfiles\n", (False, True, True, 1, False)),
    ("direct=1\nhipri\nnonvectored=1\n", (False, True, False, None, True)),
])
def test_io_uring_fast_paths_are_kept(body, ring) -> None:
    spec, _ = one("rw=randread\nioengine=io_uring\n" + body)
    assert (spec.fixedbufs, spec.registerfiles, spec.sqpoll, spec.sqpoll_cpu, spec.hipri) \
        == ring


@pytest.mark.parametrize(("body", "numa"), [
    ("numa_cpu_nodes=0\nnuma_mem_policy=bind:0\n", ((0,), "bind", (0,))),
    ("numa_cpu_nodes=0-1\nnuma_mem_policy=interleave:0-1\n", ((0, 1), "interleave", (0, 1))),
    ("numa_cpu_nodes=all\nnuma_mem_policy=local\n", ((), "local", ())),
])
def test_numa_placement_is_kept(body, numa) -> None:
    spec, _ = one("rw=read\n" + body)
    assert (spec.numa_cpu_nodes, spec.numa_mem_policy, spec.numa_mem_nodes) == numa


def test_numa_placement_that_cannot_be_kept_says_why() -> None:
    assert "prefer takes one node" in refused("rw=read\nnuma_mem_policy=prefer:0-1\n")
    assert "'x' is not a node list" in refused("rw=read\nnuma_cpu_nodes=x\n")


def test_nonvectored_is_said_to_change_nothing() -> None:
    _, text = one("rw=randread\nioengine=io_uring\nnonvectored=0\n")
    assert "always non-vectored" in text


@pytest.mark.parametrize(("body", "said"), [
    ("ioengine=io_uring\nsqthread_poll_cpu=1\n", "set sqthread_poll: true"),
    ("ioengine=io_uring\nhipri\n", "hipri polls for completions of direct I/O only"),
    ("ioengine=io_uring\nfixedbufs=2\n", "fio takes 0 or 1 for fixedbufs"),
    ("ioengine=libaio\nfixedbufs\n", "fixedbufs is an option of io_uring"),
])
def test_io_uring_fast_paths_that_cannot_apply_say_why(body, said) -> None:
    assert said in refused("rw=read\n" + body)


@pytest.mark.parametrize(("body", "said"), [
    ("cpus_allowed=3-1\n", "a range low to high"),
    ("cpus_allowed=0-1024\n", "CPUs are 0 to 1023"),
    ("cpumask=0\n", "fio's cpumask is a bitmask of CPUs"),
    ("cpus_allowed=0\ncpus_allowed_policy=spread\n", "shared or split, not 'spread'"),
])
def test_cpu_placement_that_cannot_be_kept_says_why(body, said) -> None:
    assert said in refused("rw=read\n" + body)
