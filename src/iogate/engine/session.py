"""Running jobs through libiogate: job specs, progress, and the run loop.

run() is the simple entry point: it creates a session, starts it, waits in
short slices (reporting progress and honouring cancellation between slices),
collects every job's statistics into a RunResult and always frees the
session. Session is the same thing one step at a time, as a context manager.
"""

from __future__ import annotations

import ctypes
import errno
import math
import os
import resource
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from iogate.engine import native
from iogate.errors import EngineError
from iogate.histogram import Histogram
from iogate.results import (
    Coverage,
    CpuUse,
    DataSample,
    DirectionResult,
    Fault,
    Interval,
    JobResult,
    LatencyStats,
    RunResult,
    VerifyFailure,
    VerifyResult,
)


@dataclass(frozen=True)
class BsEntry:
    """One block size entry: exactly `lo` bytes when lo == hi, else a multiple of lo in
    [lo, hi] drawn uniformly; chosen with probability weight / 1e6 (parts per million)."""

    lo: int
    hi: int
    weight: int

    def sizes(self) -> range:
        """Every size this entry can produce."""
        return range(self.lo, self.hi + 1, self.lo) if self.lo > 0 else range(0)


@dataclass(frozen=True)
class Zone:
    """A zone of the zoned distribution: `access` ppm of the requests land uniformly in
    the next `size` ppm of the region."""

    access: int
    size: int


U32, U64 = 1 << 32, 1 << 64
READS = ("read", "randread", "rw", "randrw")
WRITES = ("write", "randwrite", "rw", "randrw")


@dataclass
class JobSpec:
    """One job, in the library's terms (sizes in bytes, times in ns, shares in ppm)."""

    engine: str  # null | psync | io_uring | libaio | sync
    rw: str  # read | write | randread | randwrite | rw | randrw
    bs_read: int
    bs_write: int
    iodepth: int
    numjobs: int
    size: int
    offset: int
    runtime_ns: int
    ramp_ns: int
    time_based: bool
    direct: bool
    rwmixread: int
    filename: str
    interval_ns: int = 1_000_000_000
    seed: int = 0x1234
    no_layout: bool = False
    filenames: list[str] = field(default_factory=list)  # overrides filename when not empty
    # (dev, ino) of each file as checked before the run (iogate.targets), or empty: the
    # engine then opens only that very file (see iog_job_spec.file_ids)
    file_ids: list[tuple[int, int]] = field(default_factory=list)
    bssplit_read: list[BsEntry] = field(default_factory=list)  # empty: bs_read only
    bssplit_write: list[BsEntry] = field(default_factory=list)
    blockalign_read: int = 0  # 0: the smallest block size of the direction
    blockalign_write: int = 0
    rate_iops_read: int = 0  # whole job, 0: unlimited
    rate_iops_write: int = 0
    rate_bytes_read: int = 0  # bytes per second
    rate_bytes_write: int = 0
    rate_process: str = "linear"  # linear | poisson
    dist: str = "uniform"  # uniform | zipf | pareto | normal | zoned
    dist_param: float = 0.0
    zones: list[Zone] = field(default_factory=list)
    thinktime_ns: int = 0
    thinktime_blocks: int = 0
    sync_kind: str = "none"  # none | fsync | fdatasync
    sync_every: int = 0
    compress_pct: int = 0
    compress_chunk: int = 0
    dedupe_pct: int = 0
    pattern: bytes = b""
    refill: bool = False
    zero_buffers: bool = False
    invalidate: bool = False
    verify: str = "none"  # none | crc32c | xxhash | crc32
    verify_backlog: int = 0  # 0: read back after the run; N: after every N writes
    verify_fatal: bool = False
    io_timeout_ns: int = 0  # 0: no limit
    test_crash: bool = False  # test only: the engine crashes after one request

    # -- what the job asks for, per data direction ---------------------------------------

    def does(self, direction: str) -> bool:
        """Whether the rw mode issues requests of this direction (read or write)."""
        return self.rw in (READS if direction == "read" else WRITES)

    def bs_table(self, direction: str) -> list[BsEntry]:
        """The block size entries of a direction: its bssplit, else its single bs."""
        split = self.bssplit_read if direction == "read" else self.bssplit_write
        if split:
            return list(split)
        bs = self.bs_read if direction == "read" else self.bs_write
        return [BsEntry(bs, bs, native.WEIGHT_TOTAL)]

    def rate(self, direction: str) -> tuple[int, int]:
        """(IOPS, bytes per second) requested for a direction; 0 means unlimited."""
        if direction == "read":
            return self.rate_iops_read, self.rate_bytes_read
        return self.rate_iops_write, self.rate_bytes_write

    @property
    def rate_limited(self) -> bool:
        return any(self.rate("read")) or any(self.rate("write"))

    def files(self) -> list[str]:
        if self.filenames:
            return list(self.filenames)
        return [self.filename] if self.filename else []

    # -- the C struct ---------------------------------------------------------------------

    def to_native(self) -> native.IogJobSpec:
        """The C struct. Names and integer ranges are checked here, so that nothing wraps
        around silently; the meaning of the values is checked by the library."""
        engine = _choice("engine", self.engine, native.ENGINES)
        rw = _choice("rw mode", self.rw, native.RW_MODES)
        rate_process = _choice("rate_process", self.rate_process, native.RATE_PROCESSES)
        dist = _choice("random distribution", self.dist, native.DISTS)
        sync_kind = _choice("sync kind", self.sync_kind, native.SYNC_KINDS)
        verify = _choice("verify", self.verify, native.VERIFIERS)
        names = _encode_files(self.files())
        if len(self.pattern) > native.PATTERN_MAX:
            raise EngineError(errno.EINVAL, f"pattern is {len(self.pattern)} bytes, the limit "
                                            f"is {native.PATTERN_MAX}")
        if len(self.zones) > native.ZONES_MAX:
            raise EngineError(errno.EINVAL, f"{len(self.zones)} zones, the limit is "
                                            f"{native.ZONES_MAX}")
        if not math.isfinite(self.dist_param):
            raise EngineError(errno.EINVAL, f"dist_param must be finite, got {self.dist_param}")
        _in_range(U32, rwmixread=self.rwmixread, iodepth=self.iodepth, numjobs=self.numjobs,
                  thinktime_blocks=self.thinktime_blocks, sync_every=self.sync_every,
                  compress_pct=self.compress_pct, compress_chunk=self.compress_chunk,
                  dedupe_pct=self.dedupe_pct, verify_backlog=self.verify_backlog)
        _in_range(U64, bs_read=self.bs_read, bs_write=self.bs_write, size=self.size,
                  io_timeout_ns=self.io_timeout_ns, offset=self.offset,
                  runtime_ns=self.runtime_ns, ramp_ns=self.ramp_ns,
                  interval_ns=self.interval_ns, seed=self.seed,
                  blockalign_read=self.blockalign_read, blockalign_write=self.blockalign_write,
                  rate_iops_read=self.rate_iops_read, rate_iops_write=self.rate_iops_write,
                  rate_bytes_read=self.rate_bytes_read, rate_bytes_write=self.rate_bytes_write,
                  thinktime_ns=self.thinktime_ns)
        for z in self.zones:
            _in_range(U32, zone_access=z.access, zone_size=z.size)
        flags = ((native.JOB_TIME_BASED if self.time_based else 0)
                 | (native.JOB_DIRECT if self.direct else 0)
                 | (native.JOB_NO_LAYOUT if self.no_layout else 0)
                 | (native.JOB_REFILL if self.refill else 0)
                 | (native.JOB_ZERO_BUFS if self.zero_buffers else 0)
                 | (native.JOB_INVALIDATE if self.invalidate else 0)
                 | (native.JOB_VERIFY_FATAL if self.verify_fatal else 0)
                 | (native.JOB_TEST_CRASH if self.test_crash else 0))
        spec = native.IogJobSpec(
            struct_size=ctypes.sizeof(native.IogJobSpec), engine=engine, rw=rw,
            rwmixread=self.rwmixread, iodepth=self.iodepth, numjobs=self.numjobs,
            size=self.size, offset=self.offset, runtime_ns=self.runtime_ns, ramp_ns=self.ramp_ns,
            interval_ns=self.interval_ns, seed=self.seed, flags=flags,
            rate_process=rate_process, dist=dist, dist_param=self.dist_param,
            nzones=len(self.zones), thinktime_ns=self.thinktime_ns,
            thinktime_blocks=self.thinktime_blocks, sync_kind=sync_kind,
            sync_every=self.sync_every, compress_pct=self.compress_pct,
            compress_chunk=self.compress_chunk, dedupe_pct=self.dedupe_pct,
            pattern_len=len(self.pattern), verify=verify, verify_backlog=self.verify_backlog,
            io_timeout_ns=self.io_timeout_ns)
        for d, name in ((native.DIR_READ, "read"), (native.DIR_WRITE, "write")):
            table = self.bs_table(name)
            if len(table) > native.BS_ENTRIES_MAX:
                raise EngineError(errno.EINVAL, f"{len(table)} {name} block size entries, the "
                                                f"limit is {native.BS_ENTRIES_MAX}")
            spec.nbs[d] = len(table)
            for i, e in enumerate(table):
                _in_range(U64, bs_lo=e.lo, bs_hi=e.hi)
                _in_range(U32, bs_weight=e.weight)
                spec.bs[d][i] = native.IogBsEntry(lo=e.lo, hi=e.hi, weight=e.weight)
            iops, bytes_ = self.rate(name)
            spec.rate_iops[d], spec.rate_bytes[d] = iops, bytes_
        spec.blockalign[native.DIR_READ] = self.blockalign_read
        spec.blockalign[native.DIR_WRITE] = self.blockalign_write
        for i, z in enumerate(self.zones):
            spec.zones[i] = native.IogZone(access=z.access, size=z.size)
        if self.file_ids:
            if len(self.file_ids) != len(self.files()):
                raise EngineError(errno.EINVAL, f"{len(self.file_ids)} file identities for "
                                                f"{len(self.files())} files")
            for i, (dev, ino) in enumerate(self.file_ids):
                _in_range(U64, file_dev=dev, file_ino=ino)
                spec.file_ids[i] = native.IogFileId(dev=dev, ino=ino)
        ctypes.memmove(spec.pattern, self.pattern, len(self.pattern))
        # Assigning bytes to a char array stops at the first NUL; the list needs all of them.
        ctypes.memmove(ctypes.addressof(spec) + native.IogJobSpec.filename.offset, names,
                       len(names))
        return spec


def file_identity(st: os.stat_result) -> tuple[int, int]:
    """What pins a file in :attr:`JobSpec.file_ids`: a block device by its device number
    (inode 0), a regular file by its device and inode."""
    if stat.S_ISBLK(st.st_mode):
        return st.st_rdev, 0
    return st.st_dev, st.st_ino


def open_pinned(path: str, dev: int, ino: int) -> int:
    """A read-only descriptor of the pinned file ``path``, opened without following a link
    in the last component and checked to be that very file, as the engine opens it: for
    another program (fio) to open through ``/proc/self/fd``. Raises EngineError (ESTALE)
    when something else is found there."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                     | os.O_NOCTTY)
    except OSError:
        fd = -1
    if fd >= 0:
        st = os.fstat(fd)
        if (stat.S_ISREG(st.st_mode) or stat.S_ISBLK(st.st_mode)) \
                and file_identity(st) == (dev, ino):
            return fd
        os.close(fd)
    raise EngineError(errno.ESTALE, f"'{path}' is no longer the file that was checked before "
                                    "the run (it, or a directory on its path, was replaced "
                                    "since); refusing to touch it")


def _choice(what: str, value: str, table: dict[str, int]) -> int:
    if value not in table:
        raise EngineError(errno.EINVAL, f"unknown {what} '{value}'; expected one of "
                                        f"{', '.join(table)}")
    return table[value]


def _in_range(limit: int, **values: int) -> None:
    # ctypes would silently wrap an out-of-range number.
    for name, value in values.items():
        if not 0 <= value < limit:
            raise EngineError(errno.EINVAL, f"{name} must be in [0, {limit}), got {value}")


def _encode_files(names: list[str]) -> bytes:
    """The library's file list: each name NUL-terminated, then an empty name."""
    if len(names) > native.FILES_MAX:
        raise EngineError(errno.EINVAL, f"{len(names)} files, the limit is {native.FILES_MAX}")
    encoded = [n.encode() for n in names]
    for raw, name in zip(encoded, names, strict=True):
        if not raw or b"\0" in raw:
            raise EngineError(errno.EINVAL, f"file name {name!r} is empty or contains NUL")
    blob = b"".join(raw + b"\0" for raw in encoded) + b"\0"
    if len(blob) > native.PATH_MAX:
        raise EngineError(errno.ENAMETOOLONG,
                          f"file names take {len(blob)} bytes with their terminators, the "
                          f"limit is {native.PATH_MAX}")
    return blob


@dataclass
class Progress:
    """A live snapshot; counts include only counted (post-ramp) I/O.

    expected_ns is on the same time base as elapsed_ns (since start, layout
    included), so expected_ns - elapsed_ns is the time left.
    """

    state: str  # created | layout | ramp | running | verify | done
    elapsed_ns: int
    counted_ns: int
    expected_ns: int  # 0 when unknown (not time based)
    ios: tuple[int, int]  # (read, write)
    bytes: tuple[int, int]
    errors: int
    jobs_done: int
    jobs: int
    layout_bytes: int = 0  # written so far by file layout
    layout_total: int = 0  # to write in total by layout; 0: nothing to lay out

    @property
    def fraction(self) -> float | None:
        """Share done, in [0, 1], or None if unknown: of the layout while
        laying out, else of the expected run time."""
        if self.state == "layout":
            if self.layout_total <= 0:
                return None
            return min(1.0, self.layout_bytes / self.layout_total)
        if self.expected_ns <= 0:
            return None
        return min(1.0, self.elapsed_ns / self.expected_ns)


def _progress(p: native.IogProgress) -> Progress:
    state = native.STATES[p.state] if p.state < len(native.STATES) else f"state{p.state}"
    return Progress(state=state, elapsed_ns=p.elapsed_ns, counted_ns=p.counted_ns,
                    expected_ns=p.expected_ns, ios=(p.ios[0], p.ios[1]),
                    bytes=(p.bytes[0], p.bytes[1]), errors=p.errors, jobs_done=p.jobs_done,
                    jobs=p.jobs, layout_bytes=p.layout_bytes, layout_total=p.layout_total)


class Session:
    """One library session: create on enter, destroy (cancelling) on exit."""

    def __init__(self, specs: list[JobSpec]) -> None:
        if not specs:
            raise EngineError(errno.EINVAL, "a run needs at least one job")
        self._job_specs = list(specs)
        self._specs = [s.to_native() for s in specs]
        self._handle: native.SessionHandle | None = None
        # CPU and wall clock when the run proper began (file layout done), see _cpu_use
        self._started: tuple[tuple[int, int], int] | None = None
        self._laying_out = False

    def __enter__(self) -> Session:
        self._handle = native.session_create(self._specs)
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._handle is not None:
            native.session_destroy(self._handle)
            self._handle = None

    @property
    def handle(self) -> native.SessionHandle:
        if self._handle is None:
            raise EngineError(errno.EINVAL, "session is not open")
        return self._handle

    @property
    def jobs(self) -> int:
        return len(self._job_specs)

    def start(self) -> None:
        self._started = (_cpu_now(), time.monotonic_ns())
        self._laying_out = True
        native.session_start(self.handle)

    def poll(self) -> Progress:
        p = _progress(native.session_poll(self.handle))
        if self._laying_out and p.state not in ("created", "layout"):
            self._laying_out = False  # the run proper starts: measure CPU from here
            if p.layout_total > 0:
                self._started = (_cpu_now(), time.monotonic_ns())
        return p

    def cancel(self) -> None:
        native.session_cancel(self.handle)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds; True when every worker has finished."""
        return native.session_wait(self.handle, max(0, int(timeout * 1e9)))

    def fault(self) -> Fault | None:
        """The first fault of the session (a request past its io_timeout), or None.
        Answers while a worker is stuck; after a fault the session may never finish
        (see iog_session_fault), so the caller should report it and end the process."""
        f = native.session_fault(self.handle)
        return None if f is None else _fault(f, self._job_specs)

    def series(self, job: int, direction: str) -> list[Interval]:
        """The intervals of a job's direction completed so far (also while running)."""
        return _intervals(self.handle, job, {"read": native.DIR_READ,
                                             "write": native.DIR_WRITE}[direction])

    def collect(self, interrupted: bool = False) -> RunResult:
        """Every job's statistics; only after wait() returned True."""
        h = self.handle
        jobs = [_job(h, j, self._job_specs[j] if j < len(self._job_specs) else None)
                for j in range(native.session_jobs(h))]
        return RunResult(jobs=jobs, interrupted=interrupted, elapsed_ns=self.poll().elapsed_ns,
                         specs=list(self._job_specs), cpu=self._cpu_use())

    def _cpu_use(self) -> CpuUse | None:
        """The process's CPU time over the run: the engine's own cost, when the process runs
        nothing else (the engine's child process does only this). It is counted from the
        first poll that saw the run begin after a file layout (so layout is left out to
        within one poll), else from start()."""
        if self._started is None:
            return None
        (user0, system0), wall0 = self._started
        user, system = _cpu_now()
        return CpuUse(user_ns=user - user0, system_ns=system - system0,
                      wall_ns=time.monotonic_ns() - wall0)


def _cpu_now() -> tuple[int, int]:
    """User and system CPU time of the whole process so far, in ns."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return round(r.ru_utime * 1e9), round(r.ru_stime * 1e9)


def _job(h: native.SessionHandle, job: int, spec: JobSpec | None = None) -> JobResult:
    st = native.session_job_stats(h, job)
    verify = _verify(h, job, spec) if spec is not None and spec.verify != "none" else None
    return JobResult(read=_direction(h, job, native.DIR_READ),
                     write=_direction(h, job, native.DIR_WRITE),
                     sync=_direction(h, job, native.DIR_SYNC),
                     nfiles=st.nfiles,
                     coverage=Coverage(chunk=st.coverage_chunk, total=st.coverage_total,
                                       touched=st.coverage_touched),
                     data=DataSample(sampled_bytes=st.data_sampled_bytes,
                                     compressed_bytes=st.data_compressed_bytes,
                                     blocks=st.data_blocks,
                                     duplicate_blocks=st.data_duplicate_blocks,
                                     samples_skipped=st.data_samples_skipped),
                     verify=verify)


def _verify(h: native.SessionHandle, job: int, spec: JobSpec) -> VerifyResult:
    st, records = native.session_verify(h, job)
    files = spec.files()
    kinds = native.VERIFY_KINDS

    def failure(r: native.IogVerifyFailure) -> VerifyFailure:
        return VerifyFailure(kind=kinds[r.kind] if r.kind < len(kinds) else f"kind{r.kind}",
                             file=r.file, offset=r.offset, length=r.len,
                             expected_generation=r.expected_generation,
                             expected_seq=r.expected_seq, found_generation=r.found_generation,
                             found_seq=r.found_seq, found_offset=r.found_offset,
                             found_file=r.found_file, error=r.error,
                             stored_checksum=r.stored_checksum,
                             computed_checksum=r.computed_checksum,
                             filename=files[r.file] if r.file < len(files) else None)

    return VerifyResult(generation=st.generation, blocks_written=st.blocks_written,
                        blocks_checked=st.blocks_checked, failures=st.failures,
                        by_kind={name: st.by_kind[i] for i, name in enumerate(kinds)},
                        elapsed_ns=st.elapsed_ns, records=[failure(r) for r in records])


_FAULT_KINDS = {native.FAULT_IO_TIMEOUT: "io_timeout"}


def _fault(f: native.IogFault, specs: list[JobSpec]) -> Fault:
    files = specs[f.job].files() if f.job < len(specs) else []
    direction = native.DIRECTIONS[f.dir] if f.dir < len(native.DIRECTIONS) else f"dir{f.dir}"
    return Fault(kind=_FAULT_KINDS.get(f.kind, f"fault{f.kind}"), job=f.job, thread=f.thread,
                 direction=direction, file=f.file,
                 filename=files[f.file] if f.file < len(files) else None,
                 offset=f.offset, length=f.len, outstanding_ns=f.outstanding_ns,
                 timeout_ns=f.timeout_ns)


def _intervals(h: native.SessionHandle, job: int, d: int) -> list[Interval]:
    # The engine writes 0 for the latencies of an interval without completions: none known.
    return [Interval(end_ns=i.end_ns, ios=i.ios, bytes=i.bytes, iops=i.iops, bw=i.bw_bytes,
                     clat_mean_ns=i.clat_mean_ns if i.ios else None,
                     clat_p99_ns=i.clat_p99_ns if i.ios else None,
                     lat_mean_ns=i.lat_mean_ns if i.ios else None,
                     lat_p99_ns=i.lat_p99_ns if i.ios else None,
                     resp_mean_ns=i.resp_mean_ns if i.ios else None,
                     resp_p99_ns=i.resp_p99_ns if i.ios else None)
            for i in native.session_series(h, job, d)]


def _direction(h: native.SessionHandle, job: int, d: int) -> DirectionResult:
    st = native.session_dir_stats(h, job, d)
    lat = [LatencyStats(count=s.count, min=s.min_ns, max=s.max_ns, mean=s.mean_ns,
                        stdev=s.stdev_ns,
                        histogram=Histogram.from_buckets(*native.session_histogram(h, job, d, kind))
                        if s.count else Histogram())
           for kind, s in enumerate(st.lat)]
    series = _intervals(h, job, d)
    bs_counts = native.session_bs_counts(h, job, d) if d != native.DIR_SYNC else {}
    return DirectionResult(ios=st.ios, bytes=st.bytes, runtime_ns=st.runtime_ns, iops=st.iops,
                           bw=st.bw_bytes, slat=lat[native.LAT_SLAT], clat=lat[native.LAT_CLAT],
                           lat=lat[native.LAT_LAT], resp=lat[native.LAT_RESP],
                           lag=lat[native.LAT_LAG], errors=st.errors, first_errno=st.first_errno,
                           first_error_offset=st.first_error_offset,
                           first_error_ns=st.first_error_ns, series=series,
                           qd_sum=st.qd_sum, qd_samples=st.qd_samples, qd_hist=list(st.qd_hist),
                           bs_counts=bs_counts, bs_other_ios=st.bs_other_ios)


def run(specs: list[JobSpec], on_progress: Callable[[Progress], None] | None = None,
        poll_interval: float = 0.2, should_stop: Callable[[], bool] | None = None,
        stop_when: Callable[[Session], str | None] | None = None) -> RunResult:
    """Run the jobs concurrently to completion and return their results.

    on_progress is called between wait slices of poll_interval seconds and
    once more at the end. When should_stop() returns True, or Ctrl-C raises
    KeyboardInterrupt while waiting, the session is cancelled, the workers
    are waited for, and the partial result is returned with
    interrupted=True; the caller decides what an interruption means.
    Errors (invalid spec, unopenable file) raise EngineError; failures
    after start (file layout, I/O) are job errors in the result. Layout runs
    in the background, so it can be interrupted like the run itself.
    stop_when(session) may judge the run as it goes (its series so far): a
    reason it returns stops the run on purpose, kept in result.stopped
    (not an interruption: what was measured is judged as usual).
    """
    with Session(specs) as session:
        interrupted = False
        stopped: str | None = None
        try:
            session.start()
            while not session.wait(poll_interval):
                if on_progress is not None:
                    on_progress(session.poll())
                if should_stop is not None and should_stop():
                    interrupted = True
                    break
                if stop_when is not None and (stopped := stop_when(session)):
                    break
        except KeyboardInterrupt:
            interrupted = True
        if interrupted or stopped:
            if session.poll().state == "created":
                raise KeyboardInterrupt  # interrupted before anything started
            session.cancel()
            # Cancelled workers stop within one I/O; a second Ctrl-C here
            # propagates, and leaving the with-block still cancels and frees.
            while not session.wait(poll_interval):
                pass
        result = session.collect(interrupted)
        result.stopped = stopped
        if on_progress is not None:
            on_progress(session.poll())
        return result
