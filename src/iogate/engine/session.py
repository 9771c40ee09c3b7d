"""Running jobs through libiogate: the job struct, progress, and the run loop.

run() is the simple entry point: it creates a session, starts it, waits in
short slices (reporting progress and honouring cancellation between slices),
collects every job's statistics into a RunResult and always frees the
session. Session is the same thing one step at a time, as a context manager. A session
watches the statistics of the block devices its jobs' files are on (iogate.diskstats),
read by the engine at count start, interval boundaries and the end of the run.
"""

from __future__ import annotations

import ctypes
import errno
import math
import resource
import time
from collections.abc import Callable, Sequence

from iogate import diskstats
from iogate.engine import catalog, limits, native
from iogate.errors import EngineError
from iogate.histogram import Histogram
from iogate.job import JobSpec
from iogate.results import (
    Coverage,
    CpuUse,
    DataSample,
    DirectionResult,
    Fault,
    Interval,
    JobResult,
    LatencyStats,
    Progress,
    RunResult,
    VerifyFailure,
    VerifyResult,
)

U32, U64, I64 = 1 << 32, 1 << 64, 1 << 63


def job_struct(spec: JobSpec) -> ctypes.Structure:
    """The C struct. Names and integer ranges are checked here, so that nothing wraps
    around silently; the meaning of the values is checked by the library."""
    if catalog.get(spec.engine) is None:
        raise EngineError(errno.EINVAL, f"unknown engine '{spec.engine}'; expected one of "
                                        f"{', '.join(catalog.names())}")
    engine = spec.engine.encode()
    rw = _choice("rw mode", spec.rw, native.RW_MODES)
    rate_process = _choice("rate_process", spec.rate_process, native.RATE_PROCESSES)
    dist = _choice("random distribution", spec.dist, native.DISTS)
    sync_kind = _choice("sync kind", spec.sync_kind, native.SYNC_KINDS)
    verify = _choice("verify", spec.verify, native.VERIFIERS)
    names = encode_files(spec.files())
    if len(spec.pattern) > limits.PATTERN_MAX:
        raise EngineError(errno.EINVAL, f"pattern is {len(spec.pattern)} bytes, the limit "
                                        f"is {limits.PATTERN_MAX}")
    if len(spec.zones) > limits.ZONES_MAX:
        raise EngineError(errno.EINVAL, f"{len(spec.zones)} zones, the limit is "
                                        f"{limits.ZONES_MAX}")
    if len(spec.sequence) > limits.SEQUENCE_MAX:
        raise EngineError(errno.EINVAL, f"a sequence of {len(spec.sequence)} blocks, the "
                                        f"limit is {limits.SEQUENCE_MAX}")
    if not math.isfinite(spec.dist_param):
        raise EngineError(errno.EINVAL, f"dist_param must be finite, got {spec.dist_param}")
    _in_range(U32, flow_weight=spec.flow_weight)
    _in_range(U32, rwmixread=spec.rwmixread, iodepth=spec.iodepth, numjobs=spec.numjobs,
              thinktime_blocks=spec.thinktime_blocks, sync_every=spec.sync_every,
              compress_pct=spec.compress_pct, compress_chunk=spec.compress_chunk,
              dedupe_pct=spec.dedupe_pct, verify_backlog=spec.verify_backlog,
              batch_submit=spec.batch_submit, batch_complete_min=spec.batch_complete_min,
              batch_complete_max=spec.batch_complete_max, depth_low=spec.depth_low)
    _in_range(U64, bs_read=spec.bs_read, bs_write=spec.bs_write, size=spec.size,
              io_timeout_ns=spec.io_timeout_ns, offset=spec.offset,
              runtime_ns=spec.runtime_ns, ramp_ns=spec.ramp_ns,
              interval_ns=spec.interval_ns, seed=spec.seed,
              blockalign_read=spec.blockalign_read, blockalign_write=spec.blockalign_write,
              rate_iops_read=spec.rate_iops_read, rate_iops_write=spec.rate_iops_write,
              rate_bytes_read=spec.rate_bytes_read, rate_bytes_write=spec.rate_bytes_write,
              thinktime_ns=spec.thinktime_ns, io_limit_bytes=spec.io_limit_bytes,
              io_limit_ios=spec.io_limit_ios, start_delay_ns=spec.start_delay_ns,
              exit_mask=spec.exit_mask)
    if not -I64 <= spec.seq_skip < I64:
        raise EngineError(errno.EINVAL, f"seq_skip must be in [-{I64}, {I64}), got "
                                        f"{spec.seq_skip}")
    for z in spec.zones:
        _in_range(U32, zone_access=z.access, zone_size=z.size)
    flags = ((native.JOB_TIME_BASED if spec.time_based else 0)
             | (native.JOB_DIRECT if spec.direct else 0)
             | (native.JOB_NO_LAYOUT if spec.no_layout else 0)
             | (native.JOB_REFILL if spec.refill else 0)
             | (native.JOB_ZERO_BUFS if spec.zero_buffers else 0)
             | (native.JOB_INVALIDATE if spec.invalidate else 0)
             | (native.JOB_VERIFY_FATAL if spec.verify_fatal else 0)
             | (native.JOB_TEST_CRASH if spec.test_crash else 0)
             | (native.JOB_END_FSYNC if spec.end_fsync else 0)
             | (native.JOB_FILL if spec.fill else 0)
             | (native.JOB_RANDOM_MAP if spec.random_map else 0)
             | _choice("sync", spec.open_sync, native.OPEN_SYNC_FLAGS)
             | _choice("file service", spec.file_service, native.FILE_SERVICE_FLAGS)
             | (native.JOB_CPUS_SPLIT if spec.cpus_split else 0)
             | (native.JOB_RING_FIXEDBUFS if spec.fixedbufs else 0)
             | (0 if spec.registerfiles else native.JOB_RING_NO_REGFILES)
             | (native.JOB_RING_SQPOLL if spec.sqpoll else 0)
             | (native.JOB_RING_SQPOLL_CPU if spec.sqpoll_cpu is not None else 0)
             | (native.JOB_RING_HIPRI if spec.hipri else 0))
    c_spec = native.job_spec_type()
    out = c_spec(
        struct_size=ctypes.sizeof(c_spec), engine=engine, rw=rw,
        rwmixread=spec.rwmixread, iodepth=spec.iodepth, numjobs=spec.numjobs,
        size=spec.size, offset=spec.offset, runtime_ns=spec.runtime_ns, ramp_ns=spec.ramp_ns,
        interval_ns=spec.interval_ns, seed=spec.seed, flags=flags,
        rate_process=rate_process, dist=dist, dist_param=spec.dist_param,
        nzones=len(spec.zones), thinktime_ns=spec.thinktime_ns,
        thinktime_blocks=spec.thinktime_blocks, sync_kind=sync_kind,
        sync_every=spec.sync_every, compress_pct=spec.compress_pct,
        compress_chunk=spec.compress_chunk, dedupe_pct=spec.dedupe_pct,
        pattern_len=len(spec.pattern), verify=verify, verify_backlog=spec.verify_backlog,
        io_timeout_ns=spec.io_timeout_ns, io_limit_bytes=spec.io_limit_bytes,
        io_limit_ios=spec.io_limit_ios, seq_skip=spec.seq_skip,
        start_delay_ns=spec.start_delay_ns, flow_weight=spec.flow_weight,
        batch_submit=spec.batch_submit,
        batch_complete_min=spec.batch_complete_min,
        batch_complete_max=spec.batch_complete_max, depth_low=spec.depth_low,
        exit_mask=spec.exit_mask,
        write_layout=_choice("write layout", spec.write_layout,
                             {n: i for i, n in enumerate(native.WRITE_LAYOUTS)}),
        sqpoll_cpu=spec.sqpoll_cpu or 0,
        numa_cpu_nodes=_node_mask(spec.numa_cpu_nodes),
        numa_mem_mode=_choice("NUMA memory policy", spec.numa_mem_policy,
                              {n: i for i, n in enumerate(native.NUMA_MEMS)}),
        numa_mem_nodes=_node_mask(spec.numa_mem_nodes))
    for cpu in spec.cpus:
        if not 0 <= cpu < limits.CPUS_MAX:
            raise EngineError(errno.EINVAL, f"CPU {cpu}: the CPUs are 0 to "
                                            f"{limits.CPUS_MAX - 1}")
        out.cpus[cpu // 64] |= 1 << (cpu % 64)
    for d, name in ((native.DIR_READ, "read"), (native.DIR_WRITE, "write")):
        table = spec.bs_table(name)
        if len(table) > limits.BS_ENTRIES_MAX:
            raise EngineError(errno.EINVAL, f"{len(table)} {name} block size entries, the "
                                            f"limit is {limits.BS_ENTRIES_MAX}")
        out.nbs[d] = len(table)
        for i, e in enumerate(table):
            _in_range(U64, bs_lo=e.lo, bs_hi=e.hi)
            _in_range(U32, bs_weight=e.weight)
            out.bs[d][i] = native.IogBsEntry(lo=e.lo, hi=e.hi, weight=e.weight)
        iops, bytes_ = spec.rate(name)
        out.rate_iops[d], out.rate_bytes[d] = iops, bytes_
    _in_range(1 << 16, ioprio=spec.ioprio)
    out.ioprio = spec.ioprio
    for d, entries in ((native.DIR_READ, spec.cmdprio_read),
                       (native.DIR_WRITE, spec.cmdprio_write)):
        if len(entries) > limits.CMDPRIO_MAX:
            raise EngineError(errno.EINVAL, f"{len(entries)} command priority entries, the "
                                            f"limit is {limits.CMDPRIO_MAX}")
        out.ncmdprio[d] = len(entries)
        for i, p in enumerate(entries):
            _in_range(U64, cmdprio_bs=p.bs)
            _in_range(U32, cmdprio_share=p.share)
            _in_range(1 << 16, cmdprio_ioprio=p.ioprio)
            out.cmdprio[d][i] = native.IogCmdprioEntry(bs=p.bs, share=p.share, ioprio=p.ioprio)
    out.blockalign[native.DIR_READ] = spec.blockalign_read
    out.blockalign[native.DIR_WRITE] = spec.blockalign_write
    for i, z in enumerate(spec.zones):
        out.zones[i] = native.IogZone(access=z.access, size=z.size)
    out.nsequence = len(spec.sequence)
    out.sequence_stride = int(spec.sequence_stride)
    for i, block in enumerate(spec.sequence):
        _in_range(U64, sequence_block=block)
        out.sequence[i] = block
    if spec.file_ids:
        if len(spec.file_ids) != len(spec.files()):
            raise EngineError(errno.EINVAL, f"{len(spec.file_ids)} file identities for "
                                            f"{len(spec.files())} files")
        for i, (dev, ino) in enumerate(spec.file_ids):
            _in_range(U64, file_dev=dev, file_ino=ino)
            out.file_ids[i] = native.IogFileId(dev=dev, ino=ino)
    if spec.verify_state:
        state = spec.verify_state.encode()
        if spec.verify_state_id is None or b"\0" in state or len(state) >= limits.PATH_MAX:
            raise EngineError(errno.EINVAL, f"verify state file {spec.verify_state!r}: a "
                                            "path under PATH_MAX bytes and the identity of "
                                            "the file created there are needed")
        dev, ino = spec.verify_state_id
        _in_range(U64, state_dev=dev, state_ino=ino)
        out.verify_state_id = native.IogFileId(dev=dev, ino=ino)
        out.verify_state = state
    _put_plain(out, spec.plain)
    ctypes.memmove(out.pattern, spec.pattern, len(spec.pattern))
    # Assigning bytes to a char array stops at the first NUL; the list needs all of them.
    ctypes.memmove(ctypes.addressof(out) + c_spec.filename.offset, names,
                   len(names))
    return out


def _put_plain(out: ctypes.Structure, values: dict[str, int]) -> None:
    """The plain keys' values into their members of the job struct, each checked against
    its member's C type (what the library's description of the struct says it is)."""
    types = {f[0]: f[1] for f in type(out)._fields_}
    for member, value in values.items():
        ctype = types.get(member)
        code = getattr(ctype, "_type_", None)
        if ctype is None or not isinstance(code, str) or code not in "bBhHiIlLqQ":
            raise EngineError(errno.EINVAL, f"the library's job struct has no integer "
                                            f"{member}; is it older than these bindings?")
        bits = 8 * ctypes.sizeof(ctype)
        signed = code.islower()  # ctypes' codes: b h i l q signed, upper case not
        low, high = (-(1 << (bits - 1)), 1 << (bits - 1)) if signed else (0, 1 << bits)
        if not low <= value < high:
            raise EngineError(errno.EINVAL, f"{member} must be in [{low}, {high}), got {value}")
        setattr(out, member, value)


def _choice(what: str, value: str, table: dict[str, int]) -> int:
    if value not in table:
        raise EngineError(errno.EINVAL, f"unknown {what} '{value}'; expected one of "
                                        f"{', '.join(table)}")
    return table[value]


def _node_mask(nodes: tuple[int, ...]) -> int:
    """NUMA nodes as iog_job_spec's bit mask (bit n: node n)."""
    mask = 0
    for node in nodes:
        if not 0 <= node < limits.NUMA_NODES_MAX:
            raise EngineError(errno.EINVAL, f"NUMA node {node}: the nodes are 0 to "
                                            f"{limits.NUMA_NODES_MAX - 1}")
        mask |= 1 << node
    return mask


def _in_range(limit: int, **values: int) -> None:
    # ctypes would silently wrap an out-of-range number.
    for name, value in values.items():
        if not 0 <= value < limit:
            raise EngineError(errno.EINVAL, f"{name} must be in [0, {limit}), got {value}")


def encode_files(names: list[str]) -> bytes:
    """The library's file list: each name NUL-terminated, then an empty name."""
    if len(names) > limits.FILES_MAX:
        raise EngineError(errno.EINVAL, f"{len(names)} files, the limit is {limits.FILES_MAX}")
    encoded = [n.encode() for n in names]
    for raw, name in zip(encoded, names, strict=True):
        if not raw or b"\0" in raw:
            raise EngineError(errno.EINVAL, f"file name {name!r} is empty or contains NUL")
    blob = b"".join(raw + b"\0" for raw in encoded) + b"\0"
    if len(blob) > limits.PATH_MAX:
        raise EngineError(errno.ENAMETOOLONG,
                          f"file names take {len(blob)} bytes with their terminators, the "
                          f"limit is {limits.PATH_MAX}")
    return blob


def _progress(p: native.IogProgress) -> Progress:
    state = native.STATES[p.state] if p.state < len(native.STATES) else f"state{p.state}"
    return Progress(state=state, elapsed_ns=p.elapsed_ns, counted_ns=p.counted_ns,
                    expected_ns=p.expected_ns, ios=(p.ios[0], p.ios[1]),
                    bytes=(p.bytes[0], p.bytes[1]), errors=p.errors, jobs_done=p.jobs_done,
                    jobs=p.jobs, layout_bytes=p.layout_bytes, layout_total=p.layout_total,
                    trim_ios=p.trim_ios, trim_bytes=p.trim_bytes)


class Session:
    """One library session: create on enter, destroy (cancelling) on exit."""

    def __init__(self, specs: list[JobSpec], disks: Sequence[str] | None = None) -> None:
        """``disks``: the stat files of the devices to watch; None: those of the jobs'
        files (for engines that do I/O), as far as they are on block devices."""
        if not specs:
            raise EngineError(errno.EINVAL, "a run needs at least one job")
        self._job_specs = list(specs)
        self._disks = list(disks) if disks is not None else None
        self._watched: list[tuple[str, list[int]]] = []
        self._specs = [job_struct(s) for s in specs]
        self._handle: native.SessionHandle | None = None
        # CPU and wall clock when the run proper began (file layout done), see _cpu_use
        self._started: tuple[tuple[int, int], int] | None = None
        self._laying_out = False

    def __enter__(self) -> Session:
        self._handle = native.session_create(self._specs)
        return self

    def __exit__(self, *exc: object) -> None:
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

    def _watch_disks(self) -> None:
        if self._disks is not None:
            every = list(range(len(self._job_specs)))
            for path in self._disks:
                native.session_watch_disk(self.handle, path)
                self._watched.append((path, every))
            return
        targets = [(j, name) for j, spec in enumerate(self._job_specs)
                   if (engine := catalog.get(spec.engine)) is not None and engine.does_io
                   for name in spec.files()]
        for path, jobs in list(diskstats.watched(targets).items())[:limits.DISKS_MAX]:
            try:
                native.session_watch_disk(self.handle, path)
            except EngineError:
                continue  # unreadable: the device's statistics are not measured
            self._watched.append((path, jobs))

    def start(self) -> None:
        self._watch_disks()
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
                                             "write": native.DIR_WRITE,
                                             "trim": native.DIR_TRIM}[direction])

    def collect(self, interrupted: bool = False) -> RunResult:
        """Every job's statistics; only after wait() returned True."""
        h = self.handle
        jobs = [_job(h, j, self._job_specs[j] if j < len(self._job_specs) else None)
                for j in range(native.session_jobs(h))]
        disks = [diskstats.DiskStats(diskstats.device_name(path),
                                     [diskstats.Sample(x.end_ns, tuple(x.counters))
                                      for x in native.session_disk_samples(h, i)], jobs)
                 for i, (path, jobs) in enumerate(self._watched)]
        return RunResult(jobs=jobs, interrupted=interrupted, elapsed_ns=self.poll().elapsed_ns,
                         specs=list(self._job_specs), cpu=self._cpu_use(), disks=disks,
                         ended=time.monotonic())

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
    return JobResult(read=_direction(h, job, native.DIR_READ,
                                     spec is not None and bool(spec.cmdprio_read)),
                     write=_direction(h, job, native.DIR_WRITE,
                                      spec is not None and bool(spec.cmdprio_write)),
                     sync=_direction(h, job, native.DIR_SYNC),
                     trim=_direction(h, job, native.DIR_TRIM),
                     nfiles=st.nfiles,
                     coverage=Coverage(chunk=st.coverage_chunk, total=st.coverage_total,
                                       touched=st.coverage_touched),
                     data=DataSample(sampled_bytes=st.data_sampled_bytes,
                                     compressed_bytes=st.data_compressed_bytes,
                                     blocks=st.data_blocks,
                                     duplicate_blocks=st.data_duplicate_blocks,
                                     samples_skipped=st.data_samples_skipped),
                     verify=verify, submits=st.submits, reaps=st.reaps)


def _verify(h: native.SessionHandle, job: int, spec: JobSpec) -> VerifyResult:
    st, records = native.session_verify(h, job)
    files = spec.files()
    kinds = native.VERIFY_KINDS
    return VerifyResult(generation=st.generation, blocks_written=st.blocks_written,
                        blocks_checked=st.blocks_checked, failures=st.failures,
                        by_kind={name: st.by_kind[i] for i, name in enumerate(kinds)},
                        elapsed_ns=st.elapsed_ns,
                        records=[verify_failure(r, files) for r in records],
                        state_records=st.state_records if spec.verify_state else None,
                        state_error=(errno.errorcode.get(st.state_error, str(st.state_error))
                                     if st.state_error else None))


def verify_failure(r: native.IogVerifyFailure, files: list[str]) -> VerifyFailure:
    """A failure record of the library, its file named from the job's ``files``."""
    kinds = native.VERIFY_KINDS
    return VerifyFailure(kind=kinds[r.kind] if r.kind < len(kinds) else f"kind{r.kind}",
                         file=r.file, offset=r.offset, length=r.len,
                         expected_generation=r.expected_generation,
                         expected_seq=r.expected_seq, found_generation=r.found_generation,
                         found_seq=r.found_seq, found_offset=r.found_offset,
                         found_file=r.found_file, error=r.error,
                         stored_checksum=r.stored_checksum,
                         computed_checksum=r.computed_checksum,
                         filename=files[r.file] if r.file < len(files) else None)


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


def _prio_clat(h: native.SessionHandle, job: int, d: int, s: native.IogLatSummary
               ) -> LatencyStats:
    if not s.count:
        return LatencyStats()
    return LatencyStats(count=s.count, min=s.min_ns, max=s.max_ns, mean=s.mean_ns,
                        stdev=s.stdev_ns, histogram=Histogram.from_buckets(
                            *native.session_histogram(h, job, d, native.HIST_PRIO_CLAT)))


def _direction(h: native.SessionHandle, job: int, d: int, prio: bool = False
               ) -> DirectionResult:
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
                           bs_counts=bs_counts, bs_other_ios=st.bs_other_ios,
                           prio_ios=st.prio_ios if prio else None,
                           prio_clat=_prio_clat(h, job, d, st.prio_clat) if prio
                           else LatencyStats())


def drive(session: Session, *, slice_s: float, report_s: float,
          on_progress: Callable[[Progress], None] | None = None,
          should_stop: Callable[[], bool] | None = None,
          stop_when: Callable[[Session], str | None] | None = None,
          on_fault: Callable[[Fault], None] | None = None) -> tuple[bool, str | None]:
    """Wait for a started session to end: the one loop of every run, in this process or in
    the engine's (:mod:`iogate.engine.worker`).

    It waits in slices of ``slice_s`` seconds; every ``report_s`` the progress goes to
    ``on_progress``. After each slice, ``on_fault`` (when given) is told of a fault (an I/O
    past its timeout), ``should_stop()`` returning True, or Ctrl-C while waiting, cancels
    the session as interrupted, and ``stop_when(session)`` may judge the series so far: a
    reason it returns cancels the session on purpose. A cancelled session is waited for
    (its workers stop within one I/O each; a second Ctrl-C then propagates). Returns
    (interrupted, the reason it was stopped) once every worker has ended. Ctrl-C before
    anything started raises KeyboardInterrupt.
    """
    interrupted = False
    stopped: str | None = None
    last_report = -math.inf  # the first progress goes out at once

    def ended() -> bool:
        done = session.wait(slice_s)
        if on_fault is not None and (fault := session.fault()) is not None:
            on_fault(fault)
        return done

    try:
        while not ended():
            clock = time.monotonic()
            if on_progress is not None and clock - last_report >= report_s:
                last_report = clock
                on_progress(session.poll())
            if should_stop is not None and should_stop():
                interrupted = True
                break
            if stop_when is not None and (stopped := stop_when(session)):
                break
    except KeyboardInterrupt:
        if session.poll().state == "created":
            raise  # interrupted before anything started
        interrupted = True
    if interrupted or stopped:
        session.cancel()
        while not ended():
            pass
    return interrupted, stopped


def run(specs: list[JobSpec], on_progress: Callable[[Progress], None] | None = None,
        poll_interval: float = 0.2, should_stop: Callable[[], bool] | None = None,
        stop_when: Callable[[Session], str | None] | None = None) -> RunResult:
    """Run the jobs concurrently to completion, in this process, and return their results.

    on_progress is called every poll_interval seconds and once more at the end. When
    should_stop() returns True, or Ctrl-C raises KeyboardInterrupt while waiting, the
    session is cancelled, the workers are waited for, and the partial result is returned
    with interrupted=True; the caller decides what an interruption means. Errors (invalid
    spec, unopenable file) raise EngineError; failures after start (file layout, I/O) are
    job errors in the result. Layout runs in the background, so it can be interrupted like
    the run itself. stop_when(session) may judge the run as it goes (its series so far): a
    reason it returns stops the run on purpose, kept in result.stopped (not an
    interruption: what was measured is judged as usual). See :func:`drive`.
    """
    with Session(specs) as session:
        early = False  # interrupted while starting, after something started
        try:
            session.start()
        except KeyboardInterrupt:
            if session.poll().state == "created":
                raise
            early = True
        interrupted, stopped = drive(
            session, slice_s=poll_interval, report_s=poll_interval, on_progress=on_progress,
            should_stop=lambda: early or (should_stop is not None and should_stop()),
            stop_when=stop_when)
        result = session.collect(interrupted)
        result.stopped = stopped
        if on_progress is not None:
            on_progress(session.poll())
        return result
