"""Running jobs through libiogate: job specs, progress, and the run loop.

run() is the simple entry point: it creates a session, starts it, waits in
short slices (reporting progress and honouring cancellation between slices),
collects every job's statistics into a RunResult and always frees the
session. Session is the same thing one step at a time, as a context manager.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass

from iogate.engine import native
from iogate.errors import EngineError
from iogate.histogram import Histogram
from iogate.results import DirectionResult, Interval, JobResult, LatencyStats, RunResult


@dataclass
class JobSpec:
    """One job, in the library's terms (sizes in bytes, times in ns)."""

    engine: str  # null | psync | io_uring
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

    def to_native(self) -> native.IogJobSpec:
        """The C struct; range checks are the library's, names are checked here."""
        if self.engine not in native.ENGINES:
            raise EngineError(errno.EINVAL, f"unknown engine '{self.engine}'; "
                                            f"expected one of {', '.join(native.ENGINES)}")
        if self.rw not in native.RW_MODES:
            raise EngineError(errno.EINVAL, f"unknown rw mode '{self.rw}'; "
                                            f"expected one of {', '.join(native.RW_MODES)}")
        path = self.filename.encode()
        if len(path) >= native.PATH_MAX:
            raise EngineError(errno.ENAMETOOLONG,
                              f"filename is {len(path)} bytes, the limit is {native.PATH_MAX - 1}")
        flags = ((native.JOB_TIME_BASED if self.time_based else 0)
                 | (native.JOB_DIRECT if self.direct else 0)
                 | (native.JOB_NO_LAYOUT if self.no_layout else 0))
        ints = dict(rwmixread=self.rwmixread, bs_read=self.bs_read, bs_write=self.bs_write,
                    iodepth=self.iodepth, numjobs=self.numjobs, size=self.size, offset=self.offset,
                    runtime_ns=self.runtime_ns, ramp_ns=self.ramp_ns, interval_ns=self.interval_ns,
                    seed=self.seed)
        narrow = ("rwmixread", "iodepth", "numjobs")  # uint32_t in the C struct
        for name, value in ints.items():
            # ctypes would silently wrap an out-of-range number.
            limit = 1 << (32 if name in narrow else 64)
            if not 0 <= value < limit:
                raise EngineError(errno.EINVAL, f"{name} must be in [0, {limit}), got {value}")
        spec = native.IogJobSpec(
            struct_size=native.ctypes.sizeof(native.IogJobSpec),
            engine=native.ENGINES[self.engine], rw=native.RW_MODES[self.rw],
            rwmixread=self.rwmixread, iodepth=self.iodepth, numjobs=self.numjobs,
            size=self.size, offset=self.offset, runtime_ns=self.runtime_ns, ramp_ns=self.ramp_ns,
            interval_ns=self.interval_ns, seed=self.seed, flags=flags, filename=path)
        spec.bs[native.DIR_READ] = self.bs_read
        spec.bs[native.DIR_WRITE] = self.bs_write
        return spec


@dataclass
class Progress:
    """A live snapshot; counts include only counted (post-ramp) I/O.

    expected_ns is on the same time base as elapsed_ns (since start, layout
    included), so expected_ns - elapsed_ns is the time left.
    """

    state: str  # created | layout | ramp | running | done
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
        self._specs = [s.to_native() for s in specs]
        self._handle: native.SessionHandle | None = None

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

    def start(self) -> None:
        native.session_start(self.handle)

    def poll(self) -> Progress:
        return _progress(native.session_poll(self.handle))

    def cancel(self) -> None:
        native.session_cancel(self.handle)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds; True when every worker has finished."""
        return native.session_wait(self.handle, max(0, int(timeout * 1e9)))

    def collect(self, interrupted: bool = False) -> RunResult:
        """Every job's statistics; only after wait() returned True."""
        h = self.handle
        jobs = [JobResult(*(_direction(h, j, d) for d in (native.DIR_READ, native.DIR_WRITE)))
                for j in range(native.session_jobs(h))]
        return RunResult(jobs=jobs, interrupted=interrupted, elapsed_ns=self.poll().elapsed_ns)


def _direction(h: native.SessionHandle, job: int, d: int) -> DirectionResult:
    st = native.session_dir_stats(h, job, d)
    lat = [LatencyStats(count=s.count, min=s.min_ns, max=s.max_ns, mean=s.mean_ns,
                        stdev=s.stdev_ns,
                        histogram=Histogram(native.session_histogram(h, job, d, kind)))
           for kind, s in enumerate(st.lat)]
    series = [Interval(end_ns=i.end_ns, ios=i.ios, bytes=i.bytes, iops=i.iops, bw=i.bw_bytes,
                       clat_mean_ns=i.clat_mean_ns, clat_p99_ns=i.clat_p99_ns,
                       lat_mean_ns=i.lat_mean_ns, lat_p99_ns=i.lat_p99_ns)
              for i in native.session_series(h, job, d)]
    return DirectionResult(ios=st.ios, bytes=st.bytes, runtime_ns=st.runtime_ns, iops=st.iops,
                           bw=st.bw_bytes, slat=lat[native.LAT_SLAT], clat=lat[native.LAT_CLAT],
                           lat=lat[native.LAT_LAT], errors=st.errors, first_errno=st.first_errno,
                           first_error_offset=st.first_error_offset, series=series)


def run(specs: list[JobSpec], on_progress: Callable[[Progress], None] | None = None,
        poll_interval: float = 0.2, should_stop: Callable[[], bool] | None = None) -> RunResult:
    """Run the jobs concurrently to completion and return their results.

    on_progress is called between wait slices of poll_interval seconds and
    once more at the end. When should_stop() returns True, or Ctrl-C raises
    KeyboardInterrupt while waiting, the session is cancelled, the workers
    are waited for, and the partial result is returned with
    interrupted=True; the caller decides what an interruption means.
    Errors (invalid spec, unopenable file) raise EngineError; failures
    after start (file layout, I/O) are job errors in the result. Layout runs
    in the background, so it can be interrupted like the run itself.
    """
    with Session(specs) as session:
        interrupted = False
        try:
            session.start()
            while not session.wait(poll_interval):
                if on_progress is not None:
                    on_progress(session.poll())
                if should_stop is not None and should_stop():
                    interrupted = True
                    break
        except KeyboardInterrupt:
            interrupted = True
        if interrupted:
            if session.poll().state == "created":
                raise KeyboardInterrupt  # interrupted before anything started
            session.cancel()
            # Cancelled workers stop within one I/O; a second Ctrl-C here
            # propagates, and leaving the with-block still cancels and frees.
            while not session.wait(poll_interval):
                pass
        result = session.collect(interrupted)
        if on_progress is not None:
            on_progress(session.poll())
        return result
