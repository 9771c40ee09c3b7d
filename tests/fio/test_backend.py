"""The fio backend on this machine: fio's json+ output read into iogate's results.

These run the real fio binary (CI installs it); without it they are skipped, except those
that prove what happens when fio is missing, too old or never needed.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from tests.fio.common import KiB, MiB, children, needs_fio, spec

from iogate.errors import EngineError
from iogate.fio import backend
from iogate.fio.hosts import Host
from iogate.fio.options import FioUnsupported
from iogate.histogram import bucket_index
from iogate.job import JobSpec


def fio_json(specs: list[JobSpec], tmp_path: Path) -> tuple[str, dict]:
    """Run fio by hand on the backend's job file: its raw output and the parsed JSON, so
    that a test can hold the backend's reading against fio's own figures of the same run."""
    jobfile = tmp_path / "jobs.fio"
    jobfile.write_text(backend.jobfile(specs))
    out = tmp_path / "out.json"
    subprocess.run(["fio", "--output-format=json+", f"--output={out}", "--eta=never",
                    str(jobfile)], check=True, stdout=subprocess.DEVNULL)
    raw = out.read_text()
    return raw, json.loads(raw[raw.index("{"):])


def clamp(value: float, block: dict) -> float:
    return min(max(value, block["min"]), block["max"])


# -- results ------------------------------------------------------------------------------

@needs_fio
def test_counts_and_rates_are_fio_s(tmp_path):
    specs = [spec(size=2 * MiB)]
    raw, doc = fio_json(specs, tmp_path)
    fio_read = doc["jobs"][0]["read"]
    read = backend.parse_output(raw, specs).result.jobs[0].read
    assert read.ios == fio_read["total_ios"] == 512  # 2 MiB in 4 KiB requests
    assert read.bytes == fio_read["io_bytes"] == 2 * MiB
    assert read.iops == fio_read["iops"]
    assert read.bw == fio_read["bw_bytes"]
    assert read.runtime_ns == fio_read["runtime"] * 1_000_000
    for kind in ("clat", "lat"):
        ours, theirs = getattr(read, kind), fio_read[f"{kind}_ns"]
        assert (ours.count, ours.min, ours.max) == (theirs["N"], theirs["min"], theirs["max"])
        assert (ours.mean, ours.stdev) == (theirs["mean"], theirs["stddev"])
        assert ours.histogram.total == theirs["N"] == sum(theirs["bins"].values())


@needs_fio
def test_every_bin_lands_in_the_bucket_of_its_value(tmp_path):
    specs = [spec(engine="psync", rw="write", filename=str(tmp_path / "f"))]
    raw, doc = fio_json(specs, tmp_path)
    bins = doc["jobs"][0]["write"]["clat_ns"]["bins"]
    hist = backend.parse_output(raw, specs).result.jobs[0].write.clat.histogram
    expected: dict[int, int] = {}
    for value, count in bins.items():
        expected[bucket_index(int(value))] = expected.get(bucket_index(int(value)), 0) + count
    assert {i: c for i, c in enumerate(hist.counts) if c} == expected


@needs_fio
def test_percentiles_from_the_bins_agree_with_fio_s(tmp_path):
    """fio reports each percentile as the middle value of its bin (64 per power of two);
    iogate reads it from the middle of its own bucket holding that value (128 per power of
    two) and clamps it into [min, max]. So the two agree within 1/128 of the value."""
    specs = [spec(engine="psync", rw="randwrite", size=4 * MiB, filename=str(tmp_path / "f"))]
    raw, doc = fio_json(specs, tmp_path)
    block = doc["jobs"][0]["write"]["clat_ns"]
    clat = backend.parse_output(raw, specs).result.jobs[0].write.clat
    points = {float(p): v for p, v in block["percentile"].items()}
    ours = clat.percentiles(list(points))
    for (p, theirs), mine in zip(points.items(), ours, strict=True):
        assert mine is not None
        assert abs(mine - clamp(theirs, block)) <= clamp(theirs, block) / 128 + 1, p


@needs_fio
def test_mixed_rw_keeps_each_direction(tmp_path):
    specs = [spec(rw="randrw", rwmixread=70, size=4 * MiB)]
    raw, doc = fio_json(specs, tmp_path)
    job = backend.parse_output(raw, specs).result.jobs[0]
    for name in ("read", "write"):
        d, theirs = job.direction(name), doc["jobs"][0][name]
        assert d.ios == theirs["total_ios"] > 0
        assert d.clat.histogram.total == theirs["clat_ns"]["N"] == d.ios
    assert job.read.ios + job.write.ios == 1024
    assert job.read.ios > job.write.ios  # 70% reads


@needs_fio
def test_threads_of_a_job_are_summed(tmp_path):
    specs = [spec(numjobs=2, size=1 * MiB)]
    raw, doc = fio_json(specs, tmp_path)
    clones = [e["read"] for e in doc["jobs"]]
    assert len(clones) == 2  # fio reports each thread on its own
    read = backend.parse_output(raw, specs).result.jobs[0].read
    assert read.ios == sum(c["total_ios"] for c in clones)
    assert read.bytes == sum(c["io_bytes"] for c in clones)
    assert read.runtime_ns == max(c["runtime"] for c in clones) * 1_000_000
    assert read.iops == pytest.approx(read.ios * 1e9 / read.runtime_ns)
    assert read.clat.count == read.clat.histogram.total == sum(c["clat_ns"]["N"] for c in clones)
    assert read.clat.min == min(c["clat_ns"]["min"] for c in clones)
    assert read.clat.max == max(c["clat_ns"]["max"] for c in clones)
    # fio's CPU figures are percentages of each thread's runtime: their sum is the run's cost
    cpu = backend.parse_output(raw, specs).result.cpu
    jobs = doc["jobs"]
    assert cpu is not None
    assert cpu.user_ns == round(sum(j["usr_cpu"] / 100 * j["job_runtime"] * 1e6 for j in jobs))
    assert cpu.system_ns == round(sum(j["sys_cpu"] / 100 * j["job_runtime"] * 1e6 for j in jobs))
    assert cpu.wall_ns == max(j["job_runtime"] for j in jobs) * 1_000_000


@needs_fio
def test_two_jobs_run_together_each_with_its_result():
    run = backend.run([spec(size=1 * MiB), spec(rw="write", size=2 * MiB)])
    assert run.hosts == {}
    first, second = run.result.jobs
    assert (first.read.ios, first.write.ios) == (256, 0)
    assert (second.read.ios, second.write.ios) == (0, 512)
    metrics = run.result.metrics()
    assert metrics["read.ios"] == 256
    assert metrics["write.ios"] == 512
    assert metrics["read.clat.p99"] > 0
    assert "read.resp.p99" not in metrics  # fio does not measure iogate's resp


@needs_fio
def test_psync_file_job_with_fsync(tmp_path):
    path = tmp_path / "data"
    job = backend.run([spec(engine="psync", rw="write", size=1 * MiB, filename=str(path),
                            sync_kind="fsync", sync_every=8)]).result.jobs[0]
    assert path.stat().st_size == 1 * MiB
    assert (job.write.ios, job.write.bytes) == (256, 1 * MiB)
    assert job.write.errors == 0
    assert job.nfiles == 1
    # fio counts the fsyncs its job issued; each has a latency.
    assert 0 < job.sync.ios <= 256 // 8
    assert job.sync.lat.count == job.sync.ios == job.sync.lat.histogram.total


@needs_fio
def test_fdatasync_calls_are_counted_too(tmp_path):
    # fio's JSON counts fdatasync calls only in their latency, not in its total_ios.
    job = backend.run([spec(engine="psync", rw="write", size=1 * MiB,
                            filename=str(tmp_path / "data"), sync_kind="fdatasync",
                            sync_every=8)]).result.jobs[0]
    assert 0 < job.sync.ios == job.sync.lat.count <= 256 // 8


@needs_fio
def test_an_io_error_is_in_the_result_not_an_exception():
    job = backend.run([spec(engine="psync", rw="write", size=64 * KiB, offset=8 * KiB,
                            filename="/dev/full")]).result.jobs[0]
    assert job.write.errors == 1
    assert job.write.first_errno == errno.ENOSPC
    assert job.write.first_error_offset == 8 * KiB  # from fio's message about it
    assert job.read.errors == 0


@needs_fio
def test_should_stop_interrupts_fio_with_what_it_measured():
    job = spec(time_based=True, runtime_ns=10 * 10**9)
    run = backend.run([job], should_stop=_fio_job_started, poll_interval=0.02)
    assert run.result.interrupted
    assert run.result.jobs[0].read.runtime_ns < job.runtime_ns  # stopped, not run out


@needs_fio
def test_progress_reports_elapsed_time():
    seen = []
    backend.run([spec(time_based=True, runtime_ns=500_000_000)], on_progress=seen.append,
                poll_interval=0.05)
    assert seen
    assert all(a.elapsed_ns <= b.elapsed_ns for a, b in itertools.pairwise(seen))
    assert seen[0].expected_ns == 500_000_000
    assert seen[0].jobs == 1


@needs_fio
def test_fio_dies_with_iogate():
    """An aborted runner (killed outright) leaves no fio behind: fio gets SIGTERM."""
    job = vars(spec(time_based=True, runtime_ns=60 * 10**9))
    script = ("from iogate.job import JobSpec\n"
              "from iogate.fio import backend\n"
              f"backend.run([JobSpec(**{job!r})])\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runner = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        while not (fio := [(p, children(p)) for p in children(runner.pid)]) or \
                not fio[0][1]:  # no clock: the runner ending first is the failure
            assert runner.poll() is None, "fio never ran"
            time.sleep(0.01)
        pids = [fio[0][0], *fio[0][1]]
    finally:
        runner.kill()
        runner.wait()
    deadline = time.monotonic() + 20
    while alive := [p for p in pids if _alive(p)]:
        assert time.monotonic() < deadline, f"fio outlived iogate: {alive}"
        time.sleep(0.01)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _fio_job_started() -> bool:
    """Whether fio, a child of this process, has forked a job process of its own (this
    process has other children: the engine's fork server)."""
    return any(children(pid) for pid in children(os.getpid()) if _name(pid) == "fio")


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


# -- errors -------------------------------------------------------------------------------

def test_fio_missing_names_the_binary_and_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(backend.FIO_ENV, raising=False)
    with pytest.raises(EngineError, match=r"'fio' is not on PATH.*apt-get install fio"):
        backend.run([spec()])
    with pytest.raises(EngineError, match=r"'/no/such/fio' does not exist"):
        backend.run([spec()], binary="/no/such/fio")


def _fake_fio(tmp_path: Path, says: str) -> str:
    path = tmp_path / "fio"
    path.write_text(f"#!/bin/sh\necho '{says}'\n")
    path.chmod(0o755)
    return str(path)


def test_fio_too_old_names_its_version(tmp_path):
    with pytest.raises(EngineError, match=r"is fio 3\.1; the fio backend needs fio 3\.19"):
        backend.run([spec()], binary=_fake_fio(tmp_path, "fio-3.1"))


def test_not_fio_at_all(tmp_path):
    with pytest.raises(EngineError, match=r"said 'hello'.*not a fio"):
        backend.run([spec()], binary=_fake_fio(tmp_path, "hello"))


def test_the_fio_binary_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(backend.FIO_ENV, _fake_fio(tmp_path, "fio-2.2"))
    with pytest.raises(EngineError, match=r"fio 2\.2"):
        backend.run([spec()])


def test_unsupported_job_is_refused_before_fio_runs():
    # The binary does not exist: the refusal comes first, so fio never ran.
    bad = spec(io_timeout_ns=10**9)
    with pytest.raises(FioUnsupported, match="io_timeout"):
        backend.run([bad], binary="/no/such/fio")
    with pytest.raises(FioUnsupported, match=r"job 2: io_timeout"):
        backend.run([spec(), bad], binary="/no/such/fio")


@needs_fio
def test_a_job_fio_refuses_is_an_error_with_fio_s_words():
    with pytest.raises(EngineError, match=r"fio exited with status 1: .*iodepth"):
        backend.run([spec(iodepth=0)])


@needs_fio
def test_a_job_fio_cannot_set_up_is_an_error_with_fio_s_words():
    with pytest.raises(EngineError, match=r"fio exited with status 1: .*failed to create dir"):
        backend.run([spec(engine="psync", rw="read", filename="/proc/self/no-such-dir/f")])


def test_output_without_a_result():
    with pytest.raises(EngineError, match="fio wrote no result"):
        backend.parse_output("", [spec()])
    with pytest.raises(EngineError, match=r"fio was killed by SIGKILL: fio: out of memory"):
        backend.parse_output("", [spec()], status=-9, messages="fio: out of memory\n")


def test_a_host_that_did_not_report_is_given_what_its_own_client_said():
    """One client per host: a line that names the host only by the server's own name (the
    text a server sends, "<name> ...") or by no name is still that host's, and never the
    other host's."""
    quiet, hung = Host("127.0.0.1", 8765), Host("127.0.0.1", 8766)
    said = ["", "fio: something before\n<buildhost> fio: job startup hung? exiting.\n"]
    with pytest.raises(EngineError) as caught:
        backend.parse_output(["", ""], [spec()], [quiet, hung], messages=said, status=1)
    assert caught.value.errno == errno.EHOSTUNREACH
    first, second = str(caught.value).split("; ")
    assert first == f"host {quiet.key} did not report: fio said nothing"
    assert second == (f"host {hung.key} did not report: fio: something before | "
                      "<buildhost> fio: job startup hung? exiting.")
    # One text for several hosts (one client served them all): only lines naming a host.
    with pytest.raises(EngineError) as caught:
        backend.parse_output([""], [spec()], [quiet, hung], messages="".join(said), status=1)
    assert "job startup hung" not in str(caught.value)


def test_output_after_text_and_with_a_missing_thread():
    entry = {"jobname": "job0", "error": 0,
             "read": {"total_ios": 1, "io_bytes": 4096, "runtime": 1, "iops": 1000.0,
                      "bw_bytes": 4096000, "clat_ns": {"N": 1, "min": 5, "max": 5,
                                                       "mean": 5.0, "stddev": 0.0,
                                                       "bins": {"5": 1}}},
             "write": {"total_ios": 0, "io_bytes": 0, "runtime": 0, "iops": 0.0,
                       "bw_bytes": 0}}
    raw = "fio: a warning {not json}\n" + json.dumps({"fio version": "fio-3.33",
                                                       "jobs": [entry]})
    run = backend.parse_output(raw, [spec()])
    assert run.result.jobs[0].read.clat.percentiles([50.0]) == [5.0]
    with pytest.raises(EngineError, match=r"fio reported 1 of the 2 threads of job 1"):
        backend.parse_output(raw, [replace(spec(), numjobs=2)])


@needs_fio
def test_a_metric_fio_does_not_measure_is_said_so(tmp_path):
    from iogate.cli import main

    suite = tmp_path / "s.yaml"
    suite.write_text("suite: s\nworkloads:\n  - name: r\n    rw: randread\n    size: 1m\n"
                     "    ioengine: psync\n    expect:\n      read.iops: '> 0'\n"
                     "      read.resp.p99: '< 1s'\n")
    out = tmp_path / "r.json"
    main(["run", str(suite), "--backend", "fio", "--json", str(out)])
    text = out.read_text()
    assert "fio does not measure" in text
    assert "did no reads" not in text


def test_a_read_of_a_file_iogate_may_not_extend_is_never_run_beside_writers(
        tmp_path: Path) -> None:
    """fio's --readonly (where it extends no file it reads) is the whole run's: a run that
    only reads gets it; one that also writes cannot protect the read file, and is refused
    before fio starts."""
    reader = replace(spec(rw="randread", filename=str(tmp_path / "user.data")), no_layout=True)
    writer = spec(rw="randwrite", filename=str(tmp_path / "own.data"))
    assert backend._readonly([reader], ()) == ["--readonly"]
    assert backend._readonly([writer], ()) == []
    with pytest.raises(FioUnsupported, match="run them apart"):
        backend.run([reader, writer])
