"""A job file means the same workload in fio and in iogate: each test runs one small job
file with fio 3.33 and with ``iogate run FILE``, and compares what each tool says it did
(requests, bytes, queue depths, the blocks written), never how fast: rates are timing, and
belong in ``bench/``.

fio's command-line options are given to fio as themselves and to iogate as ``--set``; both
then mean a value the job file does not give (fio's own options lose to the job file's, iogate's
``--set`` wins over it: these jobs give each value in one place only).

Run with ``pytest -s`` to see the figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.fio.common import MiB, needs_fio

from iogate.errors import SuiteError
from iogate.expect import format_value
from iogate.fio.importer import import_jobfile, load_jobfile
from iogate.lower import lower
from iogate.metrics import parse_metric

pytestmark = needs_fio


def fio_jobs(path: Path, *args: str) -> list[dict[str, Any]]:
    """fio's JSON jobs for the job file at ``path`` (run in its directory)."""
    out = path.with_suffix(".fio.json")
    proc = subprocess.run(["fio", "--output-format=json", f"--output={out}", *args,
                           path.name], cwd=path.parent, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()  # fio's warnings come first, in the same file
    return list(json.loads(text[text.index("{\n"):])["jobs"])


def iogate_cases(path: Path, *args: str) -> list[dict[str, Any]]:
    """The cases of iogate's results document for the job file at ``path``."""
    out = path.with_suffix(".iogate.json")
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", path.name, "--json",
                           str(out), *args], cwd=path.parent, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = json.loads(out.read_text())["cases"]
    assert all(c["outcome"] == "passed" for c in cases), cases
    return list(cases)


def sizes_each(path: Path, *names: str) -> tuple[dict[str, Any], dict[str, Any], list[int],
                                                   list[int]]:
    """fio's job and iogate's case for a one-job file, and the sizes of the files ``names``
    after each tool (each tool makes them anew: fio's are removed before iogate runs)."""
    (theirs,) = fio_jobs(path)
    made = [path.parent / n for n in names]
    fio_sizes = [f.stat().st_size for f in made]
    for f in made:
        f.unlink()
    (mine,) = iogate_cases(path)
    return theirs, mine, fio_sizes, [f.stat().st_size for f in made]


def job_file(workdir: Path, name: str, text: str) -> Path:
    path = workdir / f"{name}.fio"
    path.write_text(text)
    return path


# -- how long, how much ---------------------------------------------------------------------

def test_time_based_counts_with_a_runtime_from_the_command_line(workdir):
    # 16 requests a pass: run for a second, both tools do far more
    path = job_file(workdir, "timed", "[timed]\nioengine=null\nrw=read\nbs=4k\nsize=64k\n"
                    "time_based\n")
    (theirs,) = fio_jobs(path, "--runtime=1")
    (mine,) = iogate_cases(path, "--set", "runtime=1s")
    print(f"\nfio {theirs['read']['total_ios']} requests, iogate {mine['metrics']['read.ios']}")
    assert theirs["read"]["total_ios"] > 16
    assert mine["metrics"]["read.ios"] > 16
    # and without a runtime anywhere, fio ignores time_based: one pass each
    (theirs,) = fio_jobs(path)
    (mine,) = iogate_cases(path)
    assert theirs["read"]["total_ios"] == mine["metrics"]["read.ios"] == 16


def test_a_size_based_job_ends_at_its_size_within_its_ramp(workdir):
    # the ramp's requests count toward size in both tools: 256 requests, all in the ramp;
    # fio then reports them (its ramp never ended), iogate measured none and says why
    path = job_file(workdir, "in-ramp", "[r]\nioengine=null\nrw=write\nbs=64k\nsize=16m\n"
                    "ramp_time=5\n")
    (theirs,) = fio_jobs(path)
    assert theirs["write"]["total_ios"] == 256
    out = path.with_suffix(".iogate.json")
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", path.name, "--json",
                           str(out)], cwd=path.parent, capture_output=True, text=True,
                          timeout=120)
    (case,) = json.loads(out.read_text())["cases"]
    assert proc.returncode == 3
    assert case["outcome"] == "error"
    assert "measured none: it was all done within its ramp_time (5s)" in case["error"]


def test_startdelay_counts_from_the_start_of_the_run(workdir):
    # fio delays a job until startdelay after its own start: once for jobs after a
    # stonewall (fio 3.33, this file: 4.85 s, 2.58 s without the delay, not 6.6). iogate
    # counts a delay from the start of the workload's group, so the import keeps what is
    # left of it when the group starts.
    path = job_file(workdir, "delays", "[global]\nioengine=null\nsize=1m\nruntime=1\n"
                    "time_based\nstartdelay=2\n[a]\nrw=read\n[b]\nstonewall\nrw=write\n"
                    "[c]\nstonewall\nrw=read\nstartdelay=5\n[d]\nstonewall\nrw=read\n"
                    "time_based=0\n[e]\nstonewall\nrw=read\nstartdelay=9\n")
    cases = load_jobfile(path).cases
    delays = [lower(c.workload, filenames=[], seed=1).start_delay_ns / 1e9 for c in cases]
    # a: 2 s at the start (then runs 1 s); b starts at 3 s: its 2 s are over; c, at 4 s,
    # waits 1 s more, then runs 1 s; e: 9 s less what a, b, c surely ran (3 + 1 + 2 s),
    # at most that as d is size-based
    assert delays == [2, 0, 1, 0, 3]
    assert "none if they run longer" in import_jobfile(path)
    names = [j["jobname"] for j in fio_jobs(path)]
    assert names == ["a", "b", "c", "d", "e"]  # fio runs the same file


def test_size_from_the_command_line_is_the_amount_over_a_file_of_filesize(workdir):
    # with filesize, fio's size is how much each job moves, spread over the whole file
    data = workdir / "filesize.dat"
    path = job_file(workdir, "filesize", f"[fs]\nfilename={data}\nioengine=psync\n"
                    "rw=randread\nbs=4k\nfilesize=64m\n")
    log = workdir / "filesize.iolog"
    (theirs,) = fio_jobs(path, "--size=1m", f"--write_iolog={log}")
    offsets = [int(f[3]) for f in map(str.split, log.read_text().splitlines()[1:])
               if len(f) == 5 and f[2] == "read"]
    assert theirs["read"]["io_bytes"] == len(offsets) * 4096 == MiB
    assert max(offsets) >= 32 * MiB  # all of 256 below half the file: 2^-256
    assert data.stat().st_size == 64 * MiB
    data.unlink()
    (mine,) = iogate_cases(path, "--set", "size=1m")
    assert mine["metrics"]["read.bytes"] == MiB
    # 1 MiB of 64: had the region shrunk to 1 MiB, 256 random blocks would cover most of it
    assert mine["metrics"]["offsets.coverage_pct"] < 5
    assert data.stat().st_size == 64 * MiB


def test_variables_are_read_where_fio_reads_a_literal(workdir, monkeypatch):
    monkeypatch.setenv("LOOPS", "3")
    monkeypatch.setenv("SYNC_TYPE", "dsync")
    monkeypatch.setenv("BUFFERED", "1")
    data = workdir / "variables.dat"
    path = job_file(workdir, "variables", f"[v]\nfilename={data}\nioengine=psync\n"
                    "rw=write\nbs=4k\nsize=64k\nloops=${LOOPS}\nsync=${SYNC_TYPE}\n"
                    "buffered=${BUFFERED}\n")
    (theirs,) = fio_jobs(path)
    data.unlink()
    (mine,) = iogate_cases(path)
    assert theirs["write"]["total_ios"] == mine["metrics"]["write.ios"] == 3 * 16
    text = import_jobfile(path)
    assert "sync: dsync" in text
    monkeypatch.delenv("LOOPS")
    with pytest.raises(SuiteError, match="variable 'LOOPS' is not set: set it"):
        import_jobfile(path)


def test_loops_multiply_a_size_from_the_command_line(workdir):
    path = job_file(workdir, "loops", "[loops]\nioengine=null\nrw=read\nbs=4k\nloops=3\n")
    (theirs,) = fio_jobs(path, "--size=64k")
    (mine,) = iogate_cases(path, "--set", "size=64k")
    assert theirs["read"]["total_ios"] == mine["metrics"]["read.ios"] == 3 * 16


# -- the files ------------------------------------------------------------------------------

@pytest.mark.parametrize("fallocate", ["", "fallocate=none\n", "fallocate=truncate\n",
                                       "fallocate=keep\n", "overwrite=1\n"])
def test_a_job_that_only_writes_finds_its_file_prepared_as_in_fio(workdir, fallocate):
    # 4 MiB written at 60 MiB: fio allocates the file's blocks (fallocate=native, its
    # default) and writes nothing but the job's writes; none leaves holes; overwrite=1
    # writes the whole file first
    sizes = {}
    for tool in ("fio", "iogate"):
        target = workdir / f"only-writes.{tool}"
        target.unlink(missing_ok=True)
        path = job_file(workdir, f"only-writes-{tool}",
                        f"[w]\nfilename={target}\nioengine=psync\nrw=write\nbs=1m\n"
                        f"offset=60m\nsize=4m\n{fallocate}")
        if tool == "fio":
            (job,) = fio_jobs(path)
            written = job["write"]["io_bytes"]
        else:
            (case,) = iogate_cases(path)
            written = case["metrics"]["write.bytes"]
        st = target.stat()
        with open(target, "rb") as f:
            unwritten = f.read(MiB) == bytes(MiB)  # reads as zeros: never written
        sizes[tool] = (written, st.st_size, st.st_blocks * 512, unwritten)
        target.unlink()
    print(f"\n{fallocate.strip() or 'default'}: (bytes written, size, allocated, start "
          f"unwritten) {sizes}")
    assert sizes["fio"] == sizes["iogate"]
    assert sizes["fio"][0] == 4 * MiB
    assert sizes["fio"][3] is (fallocate != "overwrite=1\n")


# -- names ----------------------------------------------------------------------------------

def test_a_name_from_the_environment_is_expanded(workdir, monkeypatch):
    monkeypatch.setenv("JOB", "nightly")
    path = job_file(workdir, "names", "[global]\nioengine=null\nsize=64k\n"
                    "[a]\nname=${JOB}\nrw=read\n[b]\nname=${JOB}-w\nrw=write\n")
    theirs = [j["jobname"] for j in fio_jobs(path)]
    mine = [c["id"].rpartition("::")[2] for c in iogate_cases(path)]
    assert theirs == mine == ["nightly", "nightly-w"]


def test_thinktime_waits_for_the_requests_in_flight(workdir):
    # fio quiesces before each pause: with a pause after every request, iodepth 8 issues
    # one at a time (fio after its first fill of the queue, at depths 1..8)
    data = workdir / "think.dat"
    data.write_bytes(b"\x11" * MiB)
    path = job_file(workdir, "think", f"[think]\nfilename={data}\nioengine=libaio\ndirect=1\n"
                    "rw=randread\nbs=4k\niodepth=8\nthinktime=200\nnumber_ios=64\n")
    (theirs,) = fio_jobs(path)
    (mine,) = iogate_cases(path)
    assert theirs["iodepth_level"]["1"] >= 100 * (64 - 8 + 1) / 64 - 0.5
    assert mine["metrics"]["read.qd.mean"] == 1
    assert mine["metrics"]["read.ios"] == theirs["read"]["total_ios"] == 64


# -- what a run prints ----------------------------------------------------------------------

def test_a_job_without_expectations_prints_what_it_measured_per_direction(workdir):
    path = job_file(workdir, "printed", "[mixed]\nioengine=null\nrw=randrw\nbs=4k\n"
                    "size=1m\n[reads]\nioengine=null\nrw=randread\nbs=4k\nsize=1m\n")
    fio_dirs = [{d for d in ("read", "write", "trim") if j[d]["total_ios"]}
                for j in fio_jobs(path)]
    out = path.with_suffix(".iogate.json")
    proc = subprocess.run([sys.executable, "-m", "iogate", "run", path.name, "--json",
                           str(out)], cwd=path.parent, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(out.read_text())["cases"]
    table = proc.stdout.split("\nmeasured\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    rows = {(cells[0], cells[1]): cells[2:] for cells in map(str.split, table)}
    printed = [{d for (case, d) in rows if case == c["id"]} for c in cases]
    assert printed == fio_dirs == [{"read", "write"}, {"read"}]
    for c in cases:
        for (case, d), cells in rows.items():
            if case == c["id"]:
                shown = [format_value(parse_metric(f"{d}.{m}").kind, c["metrics"][f"{d}.{m}"])
                         for m in ("iops", "bw", "clat.mean", "clat.p50", "clat.p99",
                                   "clat.p99.9")]
                assert cells == shown
    assert max(map(len, proc.stdout.splitlines())) <= 120


# -- queue depth ----------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [32, 512])
def test_libaio_keeps_the_depth_asked(workdir, depth):
    # fio samples the depth at each submission in buckets (1, 2, 4, ... 32, >=64); iogate
    # keeps its mean. Both keep the queue full: a completion is replaced before the next is
    # taken (iodepth_batch_complete_max defaults to the minimum, 1).
    data = workdir / "depth.dat"
    if not data.exists():
        with open(data, "wb") as f:
            f.write(b"\x5a" * 16 * MiB)
    path = job_file(workdir, f"depth{depth}",
                    f"[depth]\nfilename={data}\nioengine=libaio\ndirect=1\nrw=randread\n"
                    f"bs=4k\niodepth={depth}\nnumber_ios={8 * depth}\nnorandommap\n")
    (theirs,) = fio_jobs(path)
    (mine,) = iogate_cases(path)
    levels = theirs["iodepth_level"]
    top = levels["32" if depth == 32 else ">=64"]
    qd = mine["metrics"]["read.qd.mean"]
    print(f"\nfio: {top:.1f}% of submissions at the top bucket; iogate: mean depth {qd:.1f}")
    # Kept full: the first fill goes in at depths 1..depth, the other 7 * depth requests
    # at depth. fio's top bucket holds depths 32..63, or 64 and more.
    low = 32 if depth == 32 else 64
    assert top >= 100 * (7 * depth + depth - low + 1) / (8 * depth) - 0.5
    full = (depth * (depth + 1) / 2 + 7 * depth * depth) / (8 * depth)
    assert qd == pytest.approx(full, rel=0.01)
    assert mine["metrics"]["read.ios"] == theirs["read"]["total_ios"] == 8 * depth



# -- what fio reads in a value it was not meant for -------------------------------------------

def test_a_size_range_in_bs_is_read_up_to_its_dash(workdir):
    # fio reads bs=4k-64k as 4k (it stops at the '-'): 64 requests of 4 KiB in both
    path = job_file(workdir, "range", "[range]\nioengine=null\nrw=randread\nbs=4k-64k\n"
                    "size=256k\n")
    (theirs,) = fio_jobs(path)
    (mine,) = iogate_cases(path)
    assert theirs["read"]["total_ios"] == mine["metrics"]["read.ios"] == 64
    assert theirs["read"]["io_kbytes"] * 1024 == mine["metrics"]["read.bytes"] == 256 * 1024
    assert "bsrange=4k-64k" in import_jobfile(path)


def test_files_of_one_name_are_one_file_opened_as_often(workdir):
    # without $filenum fio opens f0 four times, each a region of size/4 from its start,
    # and moves size over them: one file of 64 KiB, 256 KiB moved, every block four times
    path = job_file(workdir, "alike", "[alike]\nnrfiles=4\nfilename_format=f$jobnum\n"
                    "size=256k\nrw=randread\nbs=4k\nioengine=psync\n")
    theirs, mine, fio_sizes, sizes = sizes_each(path, "f0")
    assert fio_sizes == sizes == [64 * 1024]
    assert not list(workdir.glob("f[1-3]*"))
    assert theirs["read"]["total_ios"] == mine["metrics"]["read.ios"] == 64
    assert mine["metrics"]["offsets.coverage_pct"] == 100.0


def test_keyword_arithmetic_in_a_literal_is_computed_as_bc_does(workdir):
    # fio has bc compute a value holding $pagesize with math around it, before it reads it:
    # filesize=$pagesize*16/3 is 21845 bytes at a 4 KiB page (bc cuts the quotient)
    import resource

    page = resource.getpagesize()
    path = job_file(workdir, "bc", "[bc]\nfilename=bc.dat\nfilesize=$pagesize*16/3\n"
                    "size=8k\nrw=read\nbs=1k\nioengine=psync\n")
    theirs, mine, fio_sizes, sizes = sizes_each(path, "bc.dat")
    assert fio_sizes == sizes == [page * 16 // 3]
    assert theirs["read"]["total_ios"] == mine["metrics"]["read.ios"] == 8


@pytest.mark.parametrize(("engine", "kept"), [("aio", "libaio"), ("splice", "psync")])
def test_an_engine_fio_names_otherwise_issues_the_same_requests(workdir, engine, kept):
    path = job_file(workdir, engine, f"[{engine}]\nfilename={engine}.dat\nioengine={engine}\n"
                    "rw=write\nbs=16k\nsize=256k\nend_fsync=1\n")
    theirs, mine, fio_sizes, sizes = sizes_each(path, f"{engine}.dat")
    assert f"ioengine: {kept}\n" in import_jobfile(path)
    assert theirs["write"]["total_ios"] == mine["metrics"]["write.ios"] == 16
    assert fio_sizes == sizes == [256 * 1024]


def test_a_share_offset_of_a_file_yet_to_be_made_is_none(workdir):
    # offset=20% is a share of what the file holds when the run starts: nothing, for a file
    # the job makes; both write 16 MiB from the start, and the file ends there
    path = job_file(workdir, "share", "[share]\ndirectory=.\nsize=16m\noffset=20%\n"
                    "rw=write\nbs=1m\nioengine=psync\n")
    theirs, mine, fio_sizes, sizes = sizes_each(path, "share.0.0")
    assert fio_sizes == sizes == [16 * MiB]
    assert theirs["write"]["io_kbytes"] * 1024 == mine["metrics"]["write.bytes"] == 16 * MiB


def test_every_filename_of_a_job_adds_its_files(workdir):
    # a global filename, then two in the job: fio's job has the three files, each size/3;
    # a job naming the global's file again opens it twice, each a region of size/2
    path = job_file(workdir, "adds", "[global]\nfilename=g.dat\nioengine=psync\nrw=write\n"
                    "bs=64k\nsize=1m\n[three]\nfilename=a.dat\nfilename=b.dat\n[twice]\n"
                    "stonewall\nfilename=g.dat\n")
    theirs = fio_jobs(path)
    sizes = {n: (workdir / n).stat().st_size for n in ("g.dat", "a.dat", "b.dat")}
    for name in sizes:
        (workdir / name).unlink()
    mine = iogate_cases(path)
    assert sizes == {n: (workdir / n).stat().st_size for n in sizes} == {
        "g.dat": 512 * 1024, "a.dat": MiB // 3, "b.dat": MiB // 3}
    assert [j["write"]["io_kbytes"] * 1024 for j in theirs] == \
        [c["metrics"]["write.bytes"] for c in mine] == [3 * 5 * 64 * 1024, MiB]


@pytest.mark.parametrize("rw", ["write", "randwrite"])
def test_a_pass_moves_the_whole_blocks_its_region_holds(workdir, rw):
    # size=100k at bs=64k: one whole block, the 36 KiB tail left alone, in both tools
    path = job_file(workdir, rw, f"[{rw}]\nfilename={rw}.dat\nsize=100k\nrw={rw}\nbs=64k\n"
                    "ioengine=psync\n")
    (theirs,) = fio_jobs(path)
    (workdir / f"{rw}.dat").unlink()
    (mine,) = iogate_cases(path)
    assert theirs["write"]["io_kbytes"] * 1024 == mine["metrics"]["write.bytes"] == 64 * 1024


@pytest.mark.parametrize("service", ["openfiles=1", "file_service_type=sequential",
                                     "file_service_type=roundrobin",
                                     "file_service_type=random"])
def test_a_job_goes_from_file_to_file_as_fio_goes(workdir, service):
    # two files of 256 KiB, 256 KiB written 4 KiB at a time from each file's start: the
    # blocks each file holds afterwards say how the requests went from file to file
    path = job_file(workdir, "svc", "[svc]\ndirectory=.\nnrfiles=2\nfilesize=256k\n"
                    "io_size=256k\nrw=write\nbs=4k\nfallocate=none\nioengine=psync\n"
                    f"{service}\n")
    files = [workdir / "svc.0.0", workdir / "svc.0.1"]

    def held() -> list[int]:
        out = [f.stat().st_blocks * 512 for f in files]
        for f in files:
            f.unlink()
        return out

    fio_jobs(path)
    theirs = held()
    iogate_cases(path)
    mine = held()
    print(f"\n{service}: fio {theirs}, iogate {mine}")
    if service.endswith("random"):
        # 64 requests, each to a file drawn at random: Binomial(64, 1/2) per file, within
        # six standard deviations (4 requests) of 32 in both tools
        for blocks in (theirs, mine):
            assert sum(blocks) == 256 * 1024
            assert all(abs(b // 4096 - 32) <= 24 for b in blocks), blocks
    else:
        assert theirs == mine == ([256 * 1024, 0] if "roundrobin" not in service
                                  else [128 * 1024, 128 * 1024])


@pytest.mark.parametrize("region", ["filesize=64k", "size=256k"])
def test_files_named_twice_in_a_list_are_each_opened_twice(workdir, region):
    # p:q:p:q: fio opens each file twice, each open a region of 64 KiB, 256 KiB moved
    p, q = (f"twice-{region[:4]}-{n}.dat" for n in "pq")
    path = job_file(workdir, f"twice-{region[:4]}", f"[twice]\nfilename={p}:{q}:{p}:{q}\n"
                    f"{region}\nrw=write\nbs=4k\nioengine=psync\n")
    theirs, mine, fio_sizes, sizes = sizes_each(path, p, q)
    assert fio_sizes == sizes == [65536] * 2
    assert theirs["write"]["io_kbytes"] * 1024 == mine["metrics"]["write.bytes"] == 256 * 1024
