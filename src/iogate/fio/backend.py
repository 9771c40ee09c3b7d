"""Running job specs with the fio binary: on this machine, or on a fleet of ``fio --server``
hosts through ``fio --client``.

:func:`run` writes one job file section per job spec (all in one group, so they run at
the same time, as the native engine runs a session's jobs), runs
``fio --output-format=json+ --output=FILE`` and reads the file, never stdout (where fio
mixes in warnings). The result has the shape of the native engine's:

- per job and direction: ios (``total_ios``), bytes (``io_bytes``), runtime, IOPS and
  bandwidth as fio reports them; ``sync`` holds fio's fsync/fdatasync calls.
- slat, clat and lat: count, min, max, mean and stdev from fio, and a
  :class:`~iogate.histogram.Histogram` built from fio's json+ bins, so percentiles come from
  the histogram as the native engine's do. fio's bins are coarser than iogate's buckets: 64
  per power of two (128 for iogate), each reported as its middle value, so a latency is
  known to within 1/128 of its value (exact below 128 ns); fio puts everything from about
  17 s up in its last bin. Each bin's count goes to iogate's bucket of that middle value.
- cpu: fio's usr_cpu and sys_cpu (percentages of each thread's runtime) as CPU time,
  summed over the threads: fio's job threads only, not its main process.
- command priorities: the requests of fio's per-priority entries (json+ ``prios``) other
  than the job's own priority are prio_ios; their clat is not measured, as fio gives each
  priority one latency, the total one when lat_percentiles is asked for (always here).
- resp and lag are iogate's own measures: fio has none, so they stay empty (unmeasured),
  as do coverage, data ratios, queue depth and block size counts.
- errors: fio stops a job at its first error, reported as the job's errno (or counts
  them with ``continue_on_error``). On this machine fio's message about the first one
  tells its direction and offset; otherwise (on a fleet) they are put on the job's first
  direction at offset 0. When in the run it happened is unknown (0).

fio runs each of a job's ``numjobs`` threads as a job of its own: their entries are summed
(ios, bytes), their latency statistics merged exactly, runtime is the longest and IOPS and
bandwidth are computed over it, as the native engine does for its threads.

On a fleet every host runs every job, each through its own ``fio --client`` (its own
output file and messages), all started at once; each host's result is kept (keyed
``host:port``) and the fleet's is the aggregate: ios, bytes, IOPS and bandwidth summed,
histograms added, min/max over the hosts, means weighted by count and the standard
deviation pooled exactly. A host that does not report every job (unreachable, or lost
during the run) is an :class:`EngineError` naming it: a fleet result never silently leaves
a host out.

No wait on a host is unbounded. A host has until the run's bound to finish: the time its
jobs are set to take (the longest startdelay + ramp_time + runtime) plus a grace of
HOST_GRACE_S or HOST_GRACE_SHARE of that time, whichever is more; a run with a job bounded
by its size alone (no runtime) has UNTIMED_BOUND_S. A host not done by then (its server or
its job stopped, the network to it gone) is an EngineError naming it and the bound, and its
client is killed (its process group); the runner goes on with the next case. An interrupt
stops every client at once (SIGINT: each asks its server to stop the jobs and report) and
kills those still running after FLEET_STOP_GRACE_S (STOP_GRACE_S for fio on this machine).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from iogate import diskstats
from iogate.backends import Backend
from iogate.diskstats import DiskStats, Sample
from iogate.errors import EngineError
from iogate.fio.hosts import Host
from iogate.histogram import Histogram, bucket_index
from iogate.hooks import hookimpl
from iogate.job import JobSpec, open_pinned
from iogate.results import CpuUse, DirectionResult, JobResult, LatencyStats, Progress, RunResult

FIO_ENV = "IOGATE_FIO"  # the fio binary to run; default: fio on PATH
# fio reports the bins of slat, clat and lat in one run (slat_percentiles) since early
# 2020; 3.19 is the oldest version asked for.
MIN_VERSION = (3, 19)
INSTALL_HINT = "install fio (Debian/Ubuntu: apt-get install fio) or set IOGATE_FIO to its path"
# Every section asks for the bins of all three latencies.
REPORTING = (("clat_percentiles", "1"), ("lat_percentiles", "1"), ("slat_percentiles", "1"))
STOP_GRACE_S = 10.0  # how long fio may take to stop after SIGINT before it is killed
FLEET_STOP_GRACE_S = 2.0  # the same for a fleet's clients: a host that does not stop is lost
HOST_GRACE_S = 30.0  # a host's least time past what its jobs are set to take
HOST_GRACE_SHARE = 0.5  # ... or this share of that time, when it is more
UNTIMED_BOUND_S = 3600.0  # a host's time for a run with a job that has no runtime
TAIL_LINES = 8  # lines of fio's messages quoted in an error
_NS_PER_MS = 1_000_000
_PR_SET_PDEATHSIG = 1
# "fio: io_u error on file /f: No space left on device: write offset=0, buflen=4096"
_IO_ERROR = re.compile(r"io_u error on file (?P<file>.+?): .*: (?P<dir>read|write|trim) "
                       r"offset=(?P<offset>\d+)")


@dataclass
class FioRun:
    """A run through fio: ``result`` is the whole run (on a fleet, the aggregate over the
    hosts); ``hosts`` holds each host's own result keyed ``host:port`` (empty for a run on
    this machine)."""

    result: RunResult
    hosts: dict[str, RunResult] = field(default_factory=dict)


# -- the binary -----------------------------------------------------------------------------

def find_fio(binary: str | None = None) -> tuple[str, tuple[int, int]]:
    """The path and (major, minor) version of the fio to run: ``binary``, else $IOGATE_FIO,
    else fio on PATH. EngineError if it is missing, unusable or older than MIN_VERSION."""
    name = binary or os.environ.get(FIO_ENV) or "fio"
    path = shutil.which(name)
    if path is None:
        where = "does not exist or is not executable" if os.sep in name else "is not on PATH"
        raise EngineError(errno.ENOENT, f"fio not found: '{name}' {where}; {INSTALL_HINT}")
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError as exc:
        raise EngineError(exc.errno or errno.ENOENT, f"fio at {path}: {exc.strerror}") from None
    version = _version(path, mtime)
    if version < MIN_VERSION:
        raise EngineError(errno.ENOTSUP,
                          f"{path} is fio {version[0]}.{version[1]}; the fio backend needs "
                          f"fio {MIN_VERSION[0]}.{MIN_VERSION[1]} or newer (latency bins of "
                          f"slat, clat and lat in one run); {INSTALL_HINT}")
    return path, version


@functools.lru_cache(maxsize=8)
def _version(path: str, mtime_ns: int) -> tuple[int, int]:
    """fio's version, asked once per binary (mtime_ns: a replaced binary is asked again)."""
    try:
        proc = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace", timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineError(errno.ENOEXEC, f"cannot run '{path} --version': {exc}") from None
    said = (proc.stdout + proc.stderr).strip()
    match = re.search(r"fio-(\d+)\.(\d+)", said)
    if proc.returncode != 0 or match is None:
        raise EngineError(errno.ENOEXEC, f"'{path} --version' said {said[:200]!r} (exit "
                                         f"status {proc.returncode}): not a fio iogate knows")
    return int(match.group(1)), int(match.group(2))


# -- the job file ---------------------------------------------------------------------------

def section_names(specs: Sequence[JobSpec]) -> list[str]:
    """The job file section of each spec, in order: fio reports results under these."""
    return [f"job{i}" for i in range(len(specs))]


def jobfile(specs: Sequence[JobSpec]) -> str:
    """The job file that runs ``specs`` together. FioUnsupported names every feature of
    every job that fio cannot run as iogate would."""
    # fio's options are made from the table of suite keys (iogate.spec), imported when a
    # job file is written rather than with this plugin, which every command loads
    from iogate.fio.options import FioUnsupported, exitall_options, job_options, render_jobfile

    if not specs:
        raise EngineError(errno.EINVAL, "a run needs at least one job")
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    problems: list[str] = []
    for i, (name, spec) in enumerate(zip(section_names(specs), specs, strict=True)):
        try:
            sections.append((name, [*job_options(spec), *REPORTING]))
        except FioUnsupported as exc:
            problems += [f"job {i + 1}: {f}" if len(specs) > 1 else f for f in exc.features]
    try:
        exits = exitall_options(specs, [f"job {i + 1}" for i in range(len(specs))])
    except FioUnsupported as exc:
        problems += exc.features
    if problems:
        raise FioUnsupported(problems)
    for (_, options), extra in zip(sections, exits, strict=True):
        options += extra
    try:
        return render_jobfile(sections, comment="iogate jobs, run together (--backend fio)")
    except ValueError as exc:
        raise EngineError(errno.EINVAL, f"cannot write a fio job file for this run: {exc}"
                          ) from None


# -- running --------------------------------------------------------------------------------

def run(specs: list[JobSpec], *, hosts: Sequence[Host] = (),
        on_progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        binary: str | None = None, poll_interval: float = 0.2) -> FioRun:
    """Run the jobs together with fio, here or on every host of ``hosts`` at once.

    Like :func:`iogate.engine.session.run`: should_stop() returning True, or Ctrl-C, stops
    fio (SIGINT, then SIGKILL after STOP_GRACE_S, FLEET_STOP_GRACE_S on a fleet) and returns
    what it measured with ``interrupted`` set, or raises KeyboardInterrupt when it left no
    complete result. on_progress gets the elapsed time (fio's counts arrive only at the
    end). Raises FioUnsupported (before fio runs) for a job fio cannot express, and
    EngineError when fio is missing or too old, refuses the jobs, fails without a result, or
    a host does not report or is not done within the run's bound (:func:`host_bound`); I/O
    errors of a job are in its result, as with the native engine.
    """
    text = jobfile(specs)  # what fio cannot express is refused before anything else
    hosts = list(hosts)
    readonly = _readonly(specs, hosts)
    path, _ = find_fio(binary)
    fds: list[int] = []
    # Here, the devices under the targets are read before and after fio, as the engine
    # reads them (fio's own disk_util knows no device behind /proc/self/fd/N).
    devices = {} if hosts else diskstats.watched(
        (j, f) for j, spec in enumerate(specs) for f in spec.files())
    with contextlib.ExitStack() as held, \
            tempfile.TemporaryDirectory(prefix="iogate-fio-") as tmp:
        if not hosts:  # here, fio opens the very files checked
            specs, fds = _pinned(specs, held)
            text = jobfile(specs)
        work = Path(tmp)
        jobs = work / "jobs.fio"
        jobs.write_text(text, encoding="utf-8")
        # One fio here, or one client per host: what a host says, and whether it ends, is
        # its own client's (fio gives a job file to the --client before it).
        targets = [[f"--client={h.fio_client}", str(jobs)] for h in hosts] or [[str(jobs)]]
        outs = [work / f"out{i}.json" for i in range(len(targets))]
        bound, reckoned = host_bound(specs)
        before = {dev: diskstats.read_sample(dev, 0) for dev in devices}
        started = time.monotonic()
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for i, (target, out) in enumerate(zip(targets, outs, strict=True)):
                with open(work / f"stdout{i}", "wb") as stdout, \
                        open(work / f"stderr{i}", "wb") as stderr:
                    try:
                        # Its own session: a Ctrl-C at the terminal reaches iogate, which
                        # stops fio.
                        procs.append(subprocess.Popen(
                            [path, "--output-format=json+", f"--output={out}", "--eta=never",
                             *readonly, *target], stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=stderr, start_new_session=True,
                            preexec_fn=_dies_with(os.getpid()), pass_fds=fds))
                    except OSError as exc:
                        raise EngineError(exc.errno or errno.ENOEXEC,
                                          f"cannot run {path}: {exc.strerror}") from None
            interrupted, late = _wait(procs, specs, started, on_progress, should_stop,
                                      poll_interval, bound if hosts else None,
                                      FLEET_STOP_GRACE_S if hosts else STOP_GRACE_S)
        finally:
            for proc in procs:
                _kill(proc)
        elapsed_ns = int((time.monotonic() - started) * 1e9)
        disks = _disks(devices, before, elapsed_ns, specs)
        raws = [o.read_text(encoding="utf-8", errors="replace") if o.exists() else ""
                for o in outs]
        said = ["\n".join((work / f"{name}{i}").read_text(encoding="utf-8", errors="replace")
                           for name in ("stderr", "stdout")) for i in range(len(procs))]
    stopped = {hosts[i].key: f"host {hosts[i].key} stopped answering: not done {bound:g} s "
               f"after its run started (its bound: {reckoned}); its fio client was killed. "
               "Check its fio server: stopped, overloaded, or cut off from this machine"
               for i in late}
    try:
        return parse_output(raws, specs, hosts, messages=said, interrupted=interrupted,
                            status=next((p.returncode for p in procs if p.returncode), 0),
                            elapsed_ns=elapsed_ns, disks=disks, late=stopped)
    except EngineError:
        if interrupted:
            raise KeyboardInterrupt from None  # stopped before fio had a result
        raise


def host_bound(specs: Sequence[JobSpec]) -> tuple[float, str]:
    """How long, in seconds, each host of a fleet has to run ``specs``, and how that was
    reckoned (for an error): the module's rule."""
    untimed = next((i for i, s in enumerate(specs) if not s.runtime_ns), None)
    if untimed is not None:
        job = f"job {untimed + 1}" if len(specs) > 1 else "the job"
        return UNTIMED_BOUND_S, (f"{UNTIMED_BOUND_S:g} s, as {job} has no runtime; give it "
                                 "one for a bound of its runtime plus a grace")
    runs = max(s.start_delay_ns + s.ramp_ns + s.runtime_ns for s in specs) / 1e9
    grace = max(HOST_GRACE_S, HOST_GRACE_SHARE * runs)
    return runs + grace, (f"startdelay, ramp_time and runtime {runs:g} s + grace {grace:g} s")


def _readonly(specs: Sequence[JobSpec], hosts: Sequence[Host]) -> list[str]:
    """fio's ``--readonly`` for a run here whose jobs write nothing: fio then extends no
    file it reads (a file cut short after the check is an error, never laid out again).
    A job reading a file iogate may not extend (``no_layout``) beside jobs that write is
    FioUnsupported: fio's read-only mode is the whole run's."""
    if hosts:
        return []
    if not any(s.does("write") or s.does("trim") for s in specs):
        return ["--readonly"]
    if any(s.no_layout and not s.fill for s in specs):
        from iogate.fio.options import FioUnsupported  # as in jobfile()

        raise FioUnsupported(["a job reading a file iogate did not create, run together with "
                              "jobs that write (fio would extend that file; its --readonly "
                              "is the whole run's): run them apart"])
    return []


def _pinned(specs: list[JobSpec], held: contextlib.ExitStack
            ) -> tuple[list[JobSpec], list[int]]:
    """The specs with every pinned file (checked before the run, iogate.targets) replaced
    by a descriptor of that very file, which fio opens as /proc/self/fd/N; the descriptors
    (closed with ``held``). A regular file too short for its region is laid out here first:
    fio lays out a file by removing it and creating another under its name."""
    fds: list[int] = []
    out = []
    for spec in specs:
        if not spec.file_ids:
            out.append(spec)
            continue
        names = []
        for name, (dev, ino) in zip(spec.files(), spec.file_ids, strict=True):
            fd = open_pinned(name, dev, ino)
            held.callback(os.close, fd)
            if ino and not spec.no_layout:
                _lay_out(fd, spec.offset + spec.size // len(spec.files()))
            fds.append(fd)
            names.append(f"/proc/self/fd/{fd}")
        out.append(replace(spec, filenames=names, file_ids=[]))
    return out, fds


def _lay_out(fd: int, length: int) -> None:
    """Extend the regular file open as ``fd`` to ``length`` bytes of non-zero data (real
    blocks, not holes), as the native engine lays out its files."""
    have = os.fstat(fd).st_size
    if have >= length:
        return
    chunk = bytes(b | 1 for b in os.urandom(1 << 20))
    out = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_CLOEXEC)
    try:
        while have < length:
            have += os.pwrite(out, chunk[:min(len(chunk), length - have)], have)
        os.fsync(out)
    except OSError as exc:
        raise EngineError(exc.errno or errno.EIO,
                          f"cannot lay out the file: {exc.strerror}") from None
    finally:
        os.close(out)


def _dies_with(parent: int) -> Callable[[], None]:
    """What fio's process runs before fio: ask for SIGTERM when iogate dies (fio then stops
    its jobs, or its servers' jobs), so that an aborted runner never leaves I/O running."""
    prctl = None
    with contextlib.suppress(OSError, AttributeError):
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork

    def setup() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # iogate died before prctl took effect
            os._exit(1)

    return setup


def _wait(procs: Sequence[subprocess.Popen[bytes]], specs: Sequence[JobSpec], started: float,
          on_progress: Callable[[Progress], None] | None,
          should_stop: Callable[[], bool] | None, poll_interval: float,
          bound: float | None, stop_grace: float) -> tuple[bool, list[int]]:
    """Wait for every fio to finish, or kill those still running ``bound`` seconds after
    ``started`` (None: no bound). Returns whether they were stopped (should_stop or an
    interrupt) and the index of each one killed at the bound. A stop gives them stop_grace
    seconds; those still running then are the caller's to kill, as at a second interrupt
    (which propagates)."""
    try:
        while running := [p for p in procs if p.poll() is None]:
            left = None if bound is None else started + bound - time.monotonic()
            if left is not None and left <= 0:
                return False, [i for i, p in enumerate(procs) if _kill(p)]
            with contextlib.suppress(subprocess.TimeoutExpired):
                running[0].wait(timeout=poll_interval if left is None
                                else min(left, poll_interval))
            if on_progress is not None:
                on_progress(_progress(specs, started))
            if should_stop is not None and should_stop():
                break
        else:
            return False, []
    except KeyboardInterrupt:
        pass
    # SIGINT: fio stops its jobs (a client asks its server to) and writes what it measured.
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    end = time.monotonic() + stop_grace
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=max(0.0, end - time.monotonic()))
    return True, []


def _kill(proc: subprocess.Popen[bytes]) -> bool:
    """Kill fio and its job processes (its whole session) if it still runs; whether it
    did."""
    if proc.poll() is not None:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


def _progress(specs: Sequence[JobSpec], started: float) -> Progress:
    elapsed = int((time.monotonic() - started) * 1e9)
    ramp = max(s.ramp_ns for s in specs)
    # The end is known only when every job runs for a set time.
    expected = max(s.ramp_ns + s.runtime_ns for s in specs) \
        if all(s.time_based and s.runtime_ns for s in specs) else 0
    return Progress(state="ramp" if elapsed < ramp else "running", elapsed_ns=elapsed,
                    counted_ns=max(0, elapsed - ramp), expected_ns=expected, ios=(0, 0),
                    bytes=(0, 0), errors=0, jobs_done=0, jobs=len(specs), counts=False)


# -- reading fio's output -------------------------------------------------------------------

def parse_output(raw: str | Sequence[str], specs: Sequence[JobSpec],
                 hosts: Sequence[Host] = (), *, status: int = 0,
                 messages: str | Sequence[str] = "", interrupted: bool = False,
                 elapsed_ns: int = 0, disks: Sequence[DiskStats] = (),
                 late: Mapping[str, str] | None = None) -> FioRun:
    """The results in what fio wrote to its ``--output`` file (or files: one per client),
    given its exit status (the first that is not 0) and what it said on stderr and stdout
    (``messages``: one text, or one per output file); the same checks as :func:`run`.
    ``disks``: the devices under the targets over fio's run (a local run); ``late``: why
    each host (by key) that was not done within the bound failed."""
    raws = [raw] if isinstance(raw, str) else list(raw)
    texts = [messages] if isinstance(messages, str) else list(messages)
    # fio writes some messages (a lost host, a signal) to the output file before its JSON.
    preambles = [r[:r.find("{")] if "{" in r else r for r in raws]
    # One client per host (as run() starts them): all its client says is about that host.
    own = ({h.key: _lines(t + "\n" + pre) for h, t, pre in zip(hosts, texts, preambles,
                                                               strict=True)}
           if hosts and len(texts) == len(raws) == len(hosts) else {})
    docs = [d for d in map(_document, raws) if d is not None]
    doc = docs[0] if len(docs) == 1 else None
    if len(docs) > 1:  # one per host: their entries together, as from one client
        doc = {"client_stats": [e for d in docs if isinstance(d.get("client_stats"), list)
                                for e in d["client_stats"]]}
    return _results(doc, "\n".join([*texts, *preambles]), status, specs, hosts,
                    interrupted, elapsed_ns, disks, late or {}, own)


def _document(raw: str) -> dict[str, Any] | None:
    """fio's JSON document in its output file, after whatever text precedes it."""
    decoder = json.JSONDecoder()
    start = raw.find("{")
    while start >= 0:
        try:
            doc, _ = decoder.raw_decode(raw, start)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and "fio version" in doc:
            return doc
        start = raw.find("{", start + 1)
    return None


def _results(doc: dict[str, Any] | None, messages: str, status: int,
             specs: Sequence[JobSpec], hosts: Sequence[Host], interrupted: bool,
             elapsed_ns: int, disks: Sequence[DiskStats], late: Mapping[str, str],
             own: Mapping[str, list[str]]) -> FioRun:
    lines = _lines(messages)
    entries: Mapping[str, list[list[dict[str, Any]]]] = {}
    if doc is not None:
        entries = _entries(doc, specs, hosts)
    missing = [h for h in hosts if h.key in late or not any(entries.get(h.key, []))]
    if missing:
        raise EngineError(errno.ETIMEDOUT if late else errno.EHOSTUNREACH, "; ".join(
            late.get(h.key) or _host_problem(h, hosts, own.get(h.key), lines)
            for h in missing))
    if doc is None:
        what = _status(status) if status else "wrote no result"
        raise EngineError(errno.EIO, f"fio {what}{_tail(lines)}")
    by_host: dict[str, RunResult] = {}
    short: str | None = None  # a job with fewer entries than threads
    for key in [h.key for h in hosts] or [""]:
        jobs = entries.get(key) or [[] for _ in specs]
        for i, (spec, clones) in enumerate(zip(specs, jobs, strict=True)):
            if len(clones) != spec.numjobs and short is None:
                short = (f"{f'host {key}' if key else 'fio'} reported {len(clones)} of the "
                         f"{spec.numjobs} threads of job {i + 1}")
        if short is not None:
            continue
        try:
            # fio's messages about I/O errors name no host: they locate errors of a local run.
            said = [] if hosts else lines
            results = [_job(clones, spec, said)
                       for clones, spec in zip(jobs, specs, strict=True)]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise EngineError(errno.EPROTO, f"fio's output is not what iogate reads: {exc!r}"
                              ) from None
        by_host[key] = RunResult(jobs=results, interrupted=interrupted, elapsed_ns=elapsed_ns,
                                 specs=list(specs), cpu=_cpu([c for cs in jobs for c in cs]),
                                 backend="fio", disks=list(disks), ended=time.monotonic())
    if short is not None:
        failed = f" (fio {_status(status)})" if status else ""
        raise EngineError(errno.EIO, f"{short}{failed}{_tail(lines)}")
    io_errors = any(d.errors for r in by_host.values() for j in r.jobs
                    for d in (j.read, j.write))
    if status != 0 and not interrupted and not io_errors:
        # fio failed, and not because a job hit an I/O error (which its result holds).
        raise EngineError(errno.EIO, f"fio {_status(status)}{_tail(lines)}")
    if not hosts:
        return FioRun(result=by_host[""])
    fleet = {h.key: by_host[h.key] for h in hosts}
    aggregate = RunResult(
        jobs=[_sum_hosts([r.jobs[i] for r in fleet.values()]) for i in range(len(specs))],
        interrupted=interrupted, elapsed_ns=elapsed_ns, specs=list(specs), hosts=dict(fleet),
        backend="fio", ended=time.monotonic())
    return FioRun(result=aggregate, hosts=fleet)


def _disks(devices: Mapping[str, list[int]], before: Mapping[str, Sample | None],
           elapsed_ns: int, specs: Sequence[JobSpec]) -> list[DiskStats]:
    """What each device did over fio's run (its ramp included: the jobs are weighed
    against the device's counts, for the realized-value warnings, only without a ramp)."""
    ramp = any(s.ramp_ns for s in specs)
    out = []
    for dev, jobs in devices.items():
        first, last = before.get(dev), diskstats.read_sample(dev, elapsed_ns)
        if first is not None and last is not None:
            out.append(DiskStats(diskstats.device_name(dev), [first, last],
                                 [] if ramp else jobs))
    return out


def _cpu(clones: Sequence[dict[str, Any]]) -> CpuUse | None:
    """The CPU fio's job threads used (its usr_cpu and sys_cpu are percentages of each
    thread's own runtime), over the longest of those runtimes; None when fio gave none."""
    try:
        runtimes = [float(c["job_runtime"]) * _NS_PER_MS for c in clones]
        user = sum(float(c["usr_cpu"]) / 100 * r for c, r in zip(clones, runtimes, strict=True))
        system = sum(float(c["sys_cpu"]) / 100 * r
                     for c, r in zip(clones, runtimes, strict=True))
    except (KeyError, TypeError, ValueError):
        return None
    if not runtimes:
        return None
    return CpuUse(user_ns=round(user), system_ns=round(system), wall_ns=round(max(runtimes)))


def _entries(doc: dict[str, Any], specs: Sequence[JobSpec], hosts: Sequence[Host]
             ) -> dict[str, list[list[dict[str, Any]]]]:
    """fio's entries by host key ("" without hosts), then by job, one per thread."""
    index = {name: i for i, name in enumerate(section_names(specs))}
    by_address: dict[tuple[Any, Any], str] = {(h.name, h.port): h.key for h in hosts}
    listed = doc.get("client_stats" if hosts else "jobs")
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict) or entry.get("jobname") not in index:
            continue  # fio's "All clients" aggregate, or not a job of this run
        if hosts:
            key = by_address.get((entry.get("hostname"), entry.get("port")))
            if key is None:
                continue
        else:
            key = ""
        jobs = out.setdefault(key, [[] for _ in specs])
        jobs[index[entry["jobname"]]].append(entry)
    return out


def _job(clones: list[dict[str, Any]], spec: JobSpec, said: Sequence[str] = ()) -> JobResult:
    """One job's result from the entries of its threads; ``said``: fio's messages, where
    the first I/O error on one of the job's files tells its direction and offset."""
    prio = {"read": bool(spec.cmdprio_read), "write": bool(spec.cmdprio_write)}
    directions = {d: _merge_threads([_direction(c[d], spec.ioprio if prio[d] else None)
                                     for c in clones])
                  for d in ("read", "write")}
    # trims: in every fio 3 output; a job without them has a trim block of zeros
    trims = [_direction(c["trim"]) for c in clones if "trim" in c]
    directions["trim"] = _merge_threads(trims) if trims else DirectionResult()
    sync = _merge_threads([_sync(c.get("sync") or {}) for c in clones])
    errors, first_errno = 0, 0
    for c in clones:
        error = int(c.get("error") or 0)
        # total_err/first_error appear with continue_on_error; else fio stops at the first.
        errors += int(c["total_err"]) if "total_err" in c else int(error != 0)
        first_errno = first_errno or int(c.get("first_error") or error)
    if errors:
        where = next((m for m in map(_IO_ERROR.search, said)
                      if m is not None and m["file"] in spec.files()), None)
        name = where["dir"] if where else next(
            (d for d in ("read", "write", "trim") if spec.does(d)), "read")
        first = directions[name]
        first.errors, first.first_errno = errors, first_errno
        first.first_error_offset = int(where["offset"]) if where else 0
    return JobResult(read=directions["read"], write=directions["write"], sync=sync,
                     trim=directions["trim"], nfiles=len(spec.files()))


def _direction(block: dict[str, Any], own_prio: int | None = None) -> DirectionResult:
    """One direction of one thread; ``own_prio``: the job's own I/O priority when it has
    command priorities (None: it has none), whose requests are the others."""
    out = DirectionResult(
        ios=int(block["total_ios"]), bytes=int(block["io_bytes"]),
        runtime_ns=int(block["runtime"]) * _NS_PER_MS, iops=float(block["iops"]),
        bw=float(block["bw_bytes"]), slat=_latency(block.get("slat_ns")),
        clat=_latency(block.get("clat_ns")), lat=_latency(block.get("lat_ns")))
    if own_prio is not None:
        # fio's json+ has one entry per priority its requests carried: those other than
        # the job's own carried a command priority. Each holds one latency, the total one
        # (lat_ns) when lat_percentiles is asked for, as every section here asks: their
        # count is known, their clat is not.
        prios = [p for p in block.get("prios") or ()
                 if isinstance(p, dict) and (int(p.get("prioclass") or 0) << 13
                                             | int(p.get("prio") or 0)) != own_prio]
        out.prio_ios = sum(int((p.get("clat_ns") or p.get("lat_ns") or {}).get("N") or 0)
                           for p in prios)
        out.prio_clat = LatencyStats.merged(_latency(p.get("clat_ns")) for p in prios)
    return out


def _sync(block: dict[str, Any]) -> DirectionResult:
    # A sync call is one step: its latency is lat, and clat the same (as the native engine).
    lat = _latency(block.get("lat_ns"))
    # fio counts fsync calls in total_ios but fdatasync calls only in their latency.
    return DirectionResult(ios=max(int(block.get("total_ios") or 0), lat.count), lat=lat,
                           clat=lat)


def _latency(block: dict[str, Any] | None) -> LatencyStats:
    """fio's statistics of one latency; the histogram from its json+ bins (ns -> count)."""
    if not block or not int(block.get("N") or 0):
        return LatencyStats()
    counts: dict[int, int] = {}
    for value, count in (block.get("bins") or {}).items():
        index = bucket_index(int(value))
        counts[index] = counts.get(index, 0) + int(count)
    hist = Histogram.from_counts(counts)
    return LatencyStats(count=int(block["N"]), min=int(block["min"]), max=int(block["max"]),
                        mean=float(block["mean"]), stdev=float(block["stddev"]),
                        histogram=hist)


def _merge_threads(parts: list[DirectionResult]) -> DirectionResult:
    """A job's threads as one job: counts summed, runtime the longest, rates over it."""
    if len(parts) == 1:
        return parts[0]  # fio's own figures
    out = _merged(parts)
    out.runtime_ns = max(p.runtime_ns for p in parts)
    if out.runtime_ns:
        out.iops = out.ios * 1e9 / out.runtime_ns
        out.bw = out.bytes * 1e9 / out.runtime_ns
    return out


def _sum_hosts(jobs: list[JobResult]) -> JobResult:
    """One job over the hosts of a fleet: counts and rates summed, latencies merged."""
    dirs = {}
    for name in ("read", "write", "sync", "trim"):
        parts = [j.direction(name) for j in jobs]
        merged = _merged(parts)
        merged.runtime_ns = max(p.runtime_ns for p in parts)
        merged.iops = sum(p.iops for p in parts)
        merged.bw = sum(p.bw for p in parts)
        dirs[name] = merged
    return JobResult(read=dirs["read"], write=dirs["write"], sync=dirs["sync"],
                     trim=dirs["trim"], nfiles=max(j.nfiles for j in jobs))


def _merged(parts: list[DirectionResult]) -> DirectionResult:
    """Counts, latencies and errors of several parts (rates and runtime left to the caller)."""
    first = next((p for p in parts if p.errors), None)
    prio = [p for p in parts if p.prio_ios is not None]
    return DirectionResult(
        prio_ios=sum(p.prio_ios or 0 for p in prio) if prio else None,
        prio_clat=LatencyStats.merged(p.prio_clat for p in prio),
        ios=sum(p.ios for p in parts), bytes=sum(p.bytes for p in parts),
        slat=LatencyStats.merged(p.slat for p in parts),
        clat=LatencyStats.merged(p.clat for p in parts),
        lat=LatencyStats.merged(p.lat for p in parts),
        errors=sum(p.errors for p in parts),
        first_errno=first.first_errno if first is not None else 0)


# -- messages -------------------------------------------------------------------------------

def _lines(text: str) -> list[str]:
    # fio sometimes writes its next message without ending the last line.
    text = re.sub(r"(?<=\S)(?=fio: )", "\n", text)
    return [line.strip() for line in text.splitlines() if line.strip()]


def _status(status: int) -> str:
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"


def _tail(lines: list[str]) -> str:
    # fio says some things twice (on stderr and in its output): once is enough.
    unique = list(dict.fromkeys(lines))
    return (": " + " | ".join(unique[-TAIL_LINES:])) if unique else ""


def _mentions(line: str, host: Host) -> bool:
    name = re.escape(host.name)
    if re.search(rf"(?<![\w.:])\[?{name}\]?[:,]{host.port}(?!\d)", line):
        return True
    # fio names a lost host without its port ("client: host=NAME disconnected").
    return re.search(rf"host={name}(?![\w.:])", line) is not None


def _host_problem(host: Host, hosts: Sequence[Host], own: list[str] | None,
                  lines: list[str]) -> str:
    """"host h:p did not report: <fio's lines about it>": the last lines of its own client
    (``own``, None when one client served several hosts), else the lines naming it and the
    reason fio gives on the line before each. A client names a host by address and port
    only in some lines; others carry the server's own name ("<name> fio: job startup
    hung? exiting.") or no name at all."""
    if own is not None:
        reason = " | ".join(list(dict.fromkeys(own))[-TAIL_LINES:]) or "fio said nothing"
        return f"host {host.key} did not report: {reason}"
    said: list[str] = []
    for i, line in enumerate(lines):
        if not _mentions(line, host):
            continue
        # fio's reason ("fio: connect: Connection refused") comes on the line before.
        before = lines[i - 1] if i else ""
        if before and before not in said and not any(_mentions(before, h) for h in hosts):
            said.append(before)
        if line not in said:
            said.append(line)
    reason = " | ".join(said[-TAIL_LINES:]) if said else "fio said nothing about it"
    return f"host {host.key} did not report: {reason}"


def _engine(hosts: Sequence[Host]) -> Callable[..., RunResult]:
    """The engine of the fio backend: fio on this machine, or on every host of a fleet."""

    def run_fio(specs: list[JobSpec], on_progress: Callable[[Progress], None] | None = None,
                should_stop: Callable[[], bool] | None = None,
                stop_when: Callable[..., str | None] | None = None, **_: Any) -> RunResult:
        # fio's results arrive when it ends: fail_fast (stop_when) judges the whole run.
        fio_run = run(specs, hosts=hosts, on_progress=on_progress, should_stop=should_stop)
        fio_run.result.hosts = dict(fio_run.hosts)
        return fio_run.result

    return run_fio


@hookimpl
def iogate_backends() -> list[Backend]:
    return [Backend("fio", "fio, on this machine or on the fio servers of --hosts", _engine,
                    fleets=True)]
