"""The results of one run: per job and direction statistics, and metric lookup.

RunResult.metric() answers any path of iogate.metrics for the whole run, in
base units (IOPS, bytes/s, ns, bytes, counts), aggregating over all jobs:

- ios, bytes, iops, bw are summed across jobs; runtime is the longest job.
- Latency statistics are merged exactly: histograms are added, min/max are
  the extremes, mean is weighted by count and stdev is the pooled sample
  standard deviation. Percentiles are read from the merged histogram and
  clamped into [min, max].
- total.* adds read and write (total.runtime is the longer of the two);
  sync calls move no data and are only in sync.*.
- errors sums every job and direction, sync calls included.
- Shares and ratios are computed from summed counts: mix.read_pct from read
  and write ios, bs_pct from the realized block size counts, qd.mean from
  the queue depth samples, the data ratios from the sampled writes, and the
  coverage from the touched chunks.
- rate_pct needs the job specs (RunResult.specs): the achieved IOPS (or
  bandwidth, for a byte rate; the nearer of the two when both were asked)
  as a percent of the requested rate, combined over jobs in proportion to
  the IOPS each was asked for.

- disk.* are what the block devices under the targets counted themselves
  (iogate.diskstats), from count start to the end of the run; not measured when no
  target is on a block device.

A metric that was not measured is None: iops, bw and latencies of a direction
(or total) that completed no I/O, shares without any sample, rate_pct
without a requested rate. ios, bytes, runtime and errors are always measured
(a direction that did nothing reports 0).

The first error of a direction is an errno from the engine; ENODATA
(:data:`END_OF_FILE`) is not the system's but the engine's word for a read that
met the end of its file (a file cut shorter than the region behind the run's
back), and is told as such (:meth:`DirectionResult.describe_first_error`).
"""

from __future__ import annotations

import errno
import functools
import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from iogate import diskstats
from iogate.diskstats import DiskStats
from iogate.histogram import Histogram
from iogate.job import JobSpec
from iogate.metrics import BS_PCT, DIRECTIONS, MetricPath, parse_metric, standard_paths


@dataclass
class LatencyStats:
    """One latency kind (slat, clat, lat, resp or lag); mean and stdev are exact."""

    count: int = 0
    min: int = 0  # ns; 0 when count == 0
    max: int = 0
    mean: float = 0.0
    stdev: float = 0.0  # sample standard deviation
    histogram: Histogram = field(default_factory=Histogram)

    @staticmethod
    def merged(parts: Iterable[LatencyStats]) -> LatencyStats:
        """Statistics of the union of the samples behind `parts`."""
        parts = [p for p in parts if p.count]
        out = LatencyStats()
        if not parts:
            return out
        n = sum(p.count for p in parts)
        mean = sum(p.mean * p.count for p in parts) / n
        # Sum of squared deviations from the pooled mean: each part's own
        # (n_i - 1) s_i^2 plus its shift n_i (mean_i - mean)^2.
        m2 = sum((p.count - 1) * p.stdev ** 2 + p.count * (p.mean - mean) ** 2 for p in parts)
        hist = parts[0].histogram
        for p in parts[1:]:
            hist = hist.merge(p.histogram)
        return LatencyStats(count=n, min=min(p.min for p in parts), max=max(p.max for p in parts),
                            mean=mean, stdev=math.sqrt(m2 / (n - 1)) if n > 1 else 0.0,
                            histogram=hist)

    def percentiles(self, ps: list[float]) -> list[float | None]:
        if not self.count:
            return [None] * len(ps)
        return self.histogram.percentiles(ps, self.min, self.max)

    def stat(self, path: MetricPath) -> float | None:
        if not self.count:
            return None
        if path.stat is None:
            return self.percentiles([path.percentile or 0.0])[0]
        return float(getattr(self, path.stat))

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "min_ns": self.min, "max_ns": self.max,
                "mean_ns": self.mean, "stdev_ns": self.stdev,
                "histogram": [list(b) for b in self.histogram.nonzero()]}


@dataclass
class Interval:
    """One series interval of a job in one direction.

    An interval without completions (ios == 0) has no latency: its means and p99s are None,
    never 0 (0 would read as the best interval when it is the worst: a stall).
    """

    end_ns: int  # from the start of counting
    ios: int
    bytes: int
    iops: float
    bw: float  # bytes per second
    clat_mean_ns: float | None
    clat_p99_ns: int | None
    lat_mean_ns: float | None
    lat_p99_ns: int | None
    resp_mean_ns: float | None = None
    resp_p99_ns: int | None = None


def interval_values(intervals: Iterable[Interval], metric: MetricPath) -> list[float | None]:
    """A metric's value in each interval; only metrics that metrics.has_series accepts.

    None for an interval with no completions, whatever the metric: its latency is unknown,
    and its rate of 0 is an absence, not a measurement a window may pass on.
    """
    if metric.name in ("iops", "bw"):
        attr = metric.name
    else:
        attr = f"{metric.name}_{'mean' if metric.stat == 'mean' else 'p99'}_ns"
    out: list[float | None] = []
    for iv in intervals:
        value = getattr(iv, attr)
        out.append(None if not iv.ios or value is None else float(value))
    return out


def requests_due(spec: JobSpec, direction: str, seconds: float) -> float:
    """How many requests of a direction the job's own schedule asks for in `seconds`, all its
    threads together: math.inf when nothing limits it; 0 for a direction it never issues.

    A rate limit (rate_iops, rate: the stricter of the two) is already the whole job's share
    of the direction; thinktime caps each thread at thinktime_blocks requests per thinktime,
    of which a mixed job gives the direction its rwmixread share.
    """
    if not spec.does(direction):
        return 0.0
    per_s = math.inf
    iops, bw = spec.rate(direction)
    if iops:
        per_s = min(per_s, float(iops))
    bs = mean_bs(spec, direction)
    if bw and bs > 0:
        per_s = min(per_s, bw / bs)
    if spec.thinktime_ns:
        share = 1.0
        if spec.does("read") and spec.does("write"):
            share = (spec.rwmixread if direction == "read" else 100 - spec.rwmixread) / 100
        elif spec.does("trim") and spec.does("write"):
            share = 0.5  # trimwrite: a write after every trim
        per_thread = max(1, spec.thinktime_blocks) * 1e9 / spec.thinktime_ns
        per_s = min(per_s, per_thread * spec.numjobs * share)
    return per_s * seconds


def intervals_due(spec: JobSpec | None, direction: str, intervals: Sequence[Interval]
                  ) -> list[float]:
    """requests_due over each interval's own span (the last may be shorter); without a spec,
    math.inf: nothing known excuses an interval."""
    out: list[float] = []
    start = 0
    for iv in intervals:
        out.append(math.inf if spec is None
                   else requests_due(spec, direction, (iv.end_ns - start) / 1e9))
        start = iv.end_ns
    return out


# The engine's errno for a read that moved nothing at or past the end of its file.
END_OF_FILE = errno.ENODATA


def interval_spans(ends_ns: Sequence[int]) -> list[str]:
    """Each interval, given by where it ends (ns from the start of counting), as the span
    of the run it covers, for messages: "0.2-0.4 s"."""
    out: list[str] = []
    start = 0
    for end in ends_ns:
        out.append(f"{start / 1e9:g}-{end / 1e9:g} s")
        start = end
    return out


@dataclass
class DirectionResult:
    """Counted statistics of one job in one direction (all its threads).

    For the sync direction ios counts sync calls, bytes is 0 and the latency
    of a call is in lat (clat and resp hold the same).
    """

    ios: int = 0
    bytes: int = 0
    runtime_ns: int = 0
    iops: float = 0.0
    bw: float = 0.0  # bytes per second
    slat: LatencyStats = field(default_factory=LatencyStats)
    clat: LatencyStats = field(default_factory=LatencyStats)
    lat: LatencyStats = field(default_factory=LatencyStats)
    errors: int = 0
    first_errno: int = 0
    first_error_offset: int = 0
    first_error_ns: int = 0  # when, since the run started (layout included)
    series: list[Interval] = field(default_factory=list)
    resp: LatencyStats = field(default_factory=LatencyStats)
    lag: LatencyStats = field(default_factory=LatencyStats)
    qd_sum: int = 0  # realized queue depth, summed over submissions
    qd_samples: int = 0
    qd_hist: list[int] = field(default_factory=list)  # [i]: depths in [2^i, 2^(i+1))
    bs_counts: dict[int, int] = field(default_factory=dict)  # block size -> counted requests
    bs_other_ios: int = 0  # requests of sizes beyond the counted table
    # requests issued with a command priority (cmdprio_*), and their completion latency;
    # None: the job gave none (or the backend cannot tell them apart)
    prio_ios: int | None = None
    prio_clat: LatencyStats = field(default_factory=LatencyStats)

    @property
    def bs_ios(self) -> int:
        """Requests whose size was counted (in bs_counts or bs_other_ios)."""
        return sum(self.bs_counts.values()) + self.bs_other_ios

    def describe_first_error(self, files: Sequence[str] = ()) -> str:
        """The first error in words, ``files`` being the job's: "Input/output error
        (errno 5) at offset 4096", or for a read that met the end of its file "short read
        at end of file: offset 131072 is at or past the end of f (131072 bytes now)"."""
        at = f"at offset {self.first_error_offset}"
        if self.first_errno != END_OF_FILE:
            return f"{os.strerror(self.first_errno)} (errno {self.first_errno}) {at}"
        if len(files) != 1:
            where = f"of one of its {len(files)} files" if files else "of its file"
            return (f"short read at end of file: offset {self.first_error_offset} is at or "
                    f"past the end {where}")
        try:
            size = f"{os.stat(files[0]).st_size} bytes now"
        except OSError as exc:
            size = f"cannot be read now: {exc.strerror}"
        return (f"short read at end of file: offset {self.first_error_offset} is at or past "
                f"the end of {files[0]} ({size})")

    def to_json(self) -> dict[str, Any]:
        return {"ios": self.ios, "bytes": self.bytes, "runtime_ns": self.runtime_ns,
                "iops": self.iops, "bw_bytes": self.bw,
                "slat": self.slat.to_json(), "clat": self.clat.to_json(), "lat": self.lat.to_json(),
                "resp": self.resp.to_json(), "lag": self.lag.to_json(),
                "errors": self.errors, "first_errno": self.first_errno,
                "first_error_offset": self.first_error_offset,
                "first_error_ns": self.first_error_ns,
                "qd": {"sum": self.qd_sum, "samples": self.qd_samples, "hist": self.qd_hist},
                "bs_counts": [[bs, n] for bs, n in sorted(self.bs_counts.items())],
                "bs_other_ios": self.bs_other_ios,
                **({} if self.prio_ios is None else
                   {"prio_ios": self.prio_ios, "prio_clat": self.prio_clat.to_json()}),
                "series": [vars(i).copy() for i in self.series]}


@dataclass
class Fault:
    """What ended a run abnormally: so far only io_timeout, a request outstanding longer
    than its job's io_timeout. The request is named by its job, thread, direction, file
    (index, and name when known), offset and length; outstanding_ns is how long it had been
    outstanding when the engine saw it."""

    kind: str  # io_timeout
    job: int
    thread: int
    direction: str  # read | write | sync
    file: int  # index in the job's file list
    filename: str | None
    offset: int
    length: int
    outstanding_ns: int
    timeout_ns: int

    def describe(self) -> str:
        """One line naming the request, e.g. "read of 4096 bytes at offset 8192 of /f
        outstanding for 2.01 s (io_timeout 1 s; job 0, thread 0)"."""
        where = self.filename if self.filename else f"file {self.file}"
        return (f"{self.direction} of {self.length} bytes at offset {self.offset} of {where} "
                f"outstanding for {self.outstanding_ns / 1e9:.2f} s "
                f"({self.kind} {self.timeout_ns / 1e9:g} s; job {self.job}, "
                f"thread {self.thread})")

    def to_json(self) -> dict[str, Any]:
        return vars(self).copy()


@dataclass
class Coverage:
    """Offset coverage of a job: `touched` of its `total` chunks of `chunk` bytes saw I/O."""

    chunk: int = 0
    total: int = 0
    touched: int = 0


@dataclass
class DataSample:
    """A sample of a job's written buffers: their size, zlib-compressed size, 4 KiB
    blocks and blocks that repeat an earlier sampled block; samples_skipped: writes due
    for a sample that were not sampled because the measurement was behind."""

    sampled_bytes: int = 0
    compressed_bytes: int = 0
    blocks: int = 0
    duplicate_blocks: int = 0
    samples_skipped: int = 0


@dataclass
class VerifyFailure:
    """One block that failed verification: where it is, what its header should have said
    and what it said (found_* are 0 when the block had no header at all).

    kind: torn (checksum mismatch), lost (an older write, or no header, where a later write
    was acknowledged), misdirected (a valid block written for another offset or file) or
    read_error (the read-back failed or came back short; error is its errno).
    expected_seq 0: writes to the block raced, any sequence of this generation passes.
    """

    kind: str  # torn | lost | misdirected | read_error
    file: int  # index in the job's file list
    offset: int
    length: int
    expected_generation: int
    expected_seq: int
    found_generation: int = 0
    found_seq: int = 0
    found_offset: int = 0
    found_file: int = 0
    error: int = 0  # errno of a read_error
    stored_checksum: int = 0
    computed_checksum: int = 0
    filename: str | None = None  # the file's name, when known

    def describe(self) -> str:
        """One line, e.g. "lost write at offset 1048576 (4096 bytes) of file 0: found
        generation 0x1f... seq 17, expected generation 0x8c... seq 42"."""
        where = (f"at offset {self.offset} ({self.length} bytes) of "
                 f"{self.filename if self.filename else f'file {self.file}'}")
        seq = str(self.expected_seq) if self.expected_seq else "any (writes raced)"
        expected = f"expected generation {self.expected_generation:#x} seq {seq}"
        found = f"generation {self.found_generation:#x} seq {self.found_seq}"
        if self.kind == "read_error":
            name = os.strerror(self.error) if self.error else "short read"
            return f"read error {where}: {name}"
        if self.kind == "torn":
            return (f"torn write {where}: checksum {self.stored_checksum:#x} stored, "
                    f"{self.computed_checksum:#x} computed (header says {found}), {expected}")
        if self.kind == "misdirected":
            return (f"misdirected write {where}: found the block written for offset "
                    f"{self.found_offset} of file {self.found_file} ({found}), {expected}")
        if self.found_generation == 0 and self.found_seq == 0:
            return f"{self.kind} write {where}: no block header found, {expected}"
        return f"{self.kind} write {where}: found {found}, {expected}"

    def to_json(self) -> dict[str, Any]:
        return vars(self).copy()


@dataclass
class VerifyResult:
    """What a job's verification found: blocks_written verified writes completed, of which
    blocks_checked blocks were read back (once per block after the run, or once per write
    with a backlog); failures by kind, the first records in detail (at most 16), and the
    time the read-back took (elapsed_ns). generation tells this run's blocks apart from
    those of earlier runs."""

    generation: int = 0
    blocks_written: int = 0
    blocks_checked: int = 0
    failures: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    elapsed_ns: int = 0
    records: list[VerifyFailure] = field(default_factory=list)
    # The verify state file (verify_state): records written to it, and the error (an errno
    # name, e.g. 'ENOSPC') that stopped its writing; None without a state file.
    state_records: int | None = None
    state_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"generation": self.generation, "blocks_written": self.blocks_written,
               "blocks_checked": self.blocks_checked, "failures": self.failures,
               "by_kind": dict(self.by_kind), "elapsed_ns": self.elapsed_ns,
               "records": [r.to_json() for r in self.records]}
        if self.state_records is not None:
            out["state_records"] = self.state_records
            out["state_error"] = self.state_error
        return out


class SeriesSource(Protocol):
    """What a judge of a running session reads: the intervals completed so far."""

    def series(self, job: int, direction: str) -> list[Interval]: ...


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
    trim_ios: int = 0  # trims so far (the trim direction)
    trim_bytes: int = 0
    counts: bool = True  # False: ios and bytes are not counted while the run goes (fio)

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


@dataclass
class JobResult:
    read: DirectionResult = field(default_factory=DirectionResult)
    write: DirectionResult = field(default_factory=DirectionResult)
    sync: DirectionResult = field(default_factory=DirectionResult)
    trim: DirectionResult = field(default_factory=DirectionResult)
    nfiles: int = 0
    coverage: Coverage = field(default_factory=Coverage)
    data: DataSample = field(default_factory=DataSample)
    verify: VerifyResult | None = None  # None: the job did not verify
    # asynchronous engines, in counted time: submit calls that handed requests to the
    # engine, reap calls that returned completions (0 for synchronous engines)
    submits: int = 0
    reaps: int = 0

    def direction(self, name: str) -> DirectionResult:
        return {"read": self.read, "write": self.write, "sync": self.sync,
                "trim": self.trim}[name]

    def to_json(self) -> dict[str, Any]:
        out = {"read": self.read.to_json(), "write": self.write.to_json(),
               "sync": self.sync.to_json(), "trim": self.trim.to_json(), "nfiles": self.nfiles,
               "coverage": vars(self.coverage).copy(), "data": vars(self.data).copy(),
               "submits": self.submits, "reaps": self.reaps}
        if self.verify is not None:
            out["verify"] = self.verify.to_json()
        return out


@dataclass(frozen=True)
class CpuUse:
    """CPU time the engine's process spent over a run (all its threads), and the run's
    wall time it was measured over."""

    user_ns: int
    system_ns: int
    wall_ns: int

    def to_json(self) -> dict[str, Any]:
        return {"user_ns": self.user_ns, "system_ns": self.system_ns, "wall_ns": self.wall_ns}


@dataclass
class RunResult:
    """Everything one run measured. interrupted: cancelled before completion
    (the statistics cover what ran until then). specs: the jobs as requested,
    in the order of `jobs` (empty when unknown)."""

    jobs: list[JobResult] = field(default_factory=list)
    interrupted: bool = False
    elapsed_ns: int = 0
    specs: list[JobSpec] = field(default_factory=list)
    stopped: str | None = None  # why the run was stopped early on purpose (fail_fast)
    # A run on a fleet: this result is the aggregate, and each host's own result is here,
    # keyed "host:port". Empty for a run on this machine.
    hosts: dict[str, RunResult] = field(default_factory=dict)
    # The engine's CPU use over the run; None when unmeasured (and for one job of several:
    # the threads of a run share one process).
    cpu: CpuUse | None = None
    # The backend that measured the run ("native", "fio", or a plugin's): what it cannot
    # measure is missing for that reason, not because the workload did no such I/O.
    backend: str = "native"
    # The statistics of the block devices the targets are on (empty when none is).
    disks: list[DiskStats] = field(default_factory=list)
    # When the run ended, as time.monotonic() reads it on this machine (0.0: not known): a
    # reading of the device taken since then is one after the run.
    ended: float = 0.0

    def job_result(self, index: int) -> RunResult:
        """The run as seen by one job alone (its statistics and its spec)."""
        specs = self.specs[index:index + 1]
        return RunResult(jobs=[self.jobs[index]], interrupted=self.interrupted,
                         elapsed_ns=self.elapsed_ns, specs=specs, stopped=self.stopped,
                         hosts={k: r.job_result(index) for k, r in self.hosts.items()},
                         cpu=self.cpu if len(self.jobs) == 1 else None,
                         backend=self.backend, disks=self.disks, ended=self.ended)

    def _dirs(self, scope: str) -> list[DirectionResult]:
        names = DIRECTIONS if scope == "total" else (scope,)
        return [job.direction(n) for job in self.jobs for n in names]

    def latency(self, direction: str, kind: str) -> LatencyStats:
        """One latency kind of one direction, merged over all jobs."""
        if direction == "sync":
            kind = "lat"  # a sync call is one step: clat and resp are the same
        return LatencyStats.merged(getattr(job.direction(direction), kind) for job in self.jobs)

    def metric(self, path: str | MetricPath) -> float | None:
        """The value of a metric path for the whole run, or None if unmeasured: computed
        as its row of :data:`iogate.metrics.TABLE` says (``_m_<compute>``)."""
        mp = parse_metric(path) if isinstance(path, str) else path
        if mp.family.plugin is not None:
            return None  # a plugin's row: its iogate_metrics hook measures it, not the run
        compute: Callable[[MetricPath], float | None] = getattr(self, "_m_" + mp.family.compute)
        return compute(mp)

    # -- the computations of iogate.metrics.TABLE, one per ``compute`` name -----------------

    def _m_errors(self, mp: MetricPath) -> float | None:
        return float(sum(d.errors for job in self.jobs
                         for d in (job.read, job.write, job.sync, job.trim)))

    def _m_latency(self, mp: MetricPath) -> float | None:
        assert mp.scope is not None
        return self.latency(mp.scope, mp.name).stat(mp)

    def _m_sum(self, mp: MetricPath) -> float | None:
        return float(sum(getattr(d, mp.name) for d in self._dirs(mp.scope or "")))

    def _m_rate(self, mp: MetricPath) -> float | None:
        dirs = self._dirs(mp.scope or "")
        if not any(d.ios for d in dirs):
            return None  # iops/bw of a direction that did no I/O
        return float(sum(getattr(d, mp.name) for d in dirs))

    def _m_runtime(self, mp: MetricPath) -> float | None:
        return float(max((d.runtime_ns for d in self._dirs(mp.scope or "")), default=0))

    def _m_rate_pct(self, mp: MetricPath) -> float | None:
        return self._rate_pct(mp.scope or "")

    def _m_bs_pct(self, mp: MetricPath) -> float | None:
        dirs = self._dirs(mp.scope or "")
        return _ratio(sum(d.bs_counts.get(mp.size or 0, 0) for d in dirs),
                      sum(d.bs_ios for d in dirs), 100.0)

    def _m_bs_mean(self, mp: MetricPath) -> float | None:
        dirs = self._dirs(mp.scope or "")
        return _ratio(sum(d.bytes for d in dirs), sum(d.ios for d in dirs))

    def _m_qd_mean(self, mp: MetricPath) -> float | None:
        dirs = self._dirs(mp.scope or "")
        return _ratio(sum(d.qd_sum for d in dirs), sum(d.qd_samples for d in dirs))

    def _m_prio(self, mp: MetricPath) -> float | None:
        dirs = [d for d in self._dirs(mp.scope or "") if d.prio_ios is not None]
        if not dirs:
            return None  # no command priority was asked for (or could be measured)
        prio = sum(d.prio_ios or 0 for d in dirs)
        if mp.name == "prio_ios":
            return float(prio)
        return _ratio(prio, sum(d.ios for d in dirs), 100.0)

    def _m_sync_ios(self, mp: MetricPath) -> float | None:
        return float(sum(j.sync.ios for j in self.jobs))

    def _m_read_pct(self, mp: MetricPath) -> float | None:
        reads = sum(j.read.ios for j in self.jobs)
        return _ratio(reads, reads + sum(j.write.ios for j in self.jobs), 100.0)

    def _m_compress_ratio(self, mp: MetricPath) -> float | None:
        return _ratio(sum(j.data.compressed_bytes for j in self.jobs),
                      sum(j.data.sampled_bytes for j in self.jobs))

    def _m_dedupe_pct(self, mp: MetricPath) -> float | None:
        return _ratio(sum(j.data.duplicate_blocks for j in self.jobs),
                      sum(j.data.blocks for j in self.jobs), 100.0)

    def _m_coverage_pct(self, mp: MetricPath) -> float | None:
        return _ratio(sum(j.coverage.touched for j in self.jobs),
                      sum(j.coverage.total for j in self.jobs), 100.0)

    def _m_cpu(self, mp: MetricPath) -> float | None:
        c = self.cpu
        if c is None:
            return None
        busy = c.user_ns + c.system_ns
        if mp.name == "user":
            return float(c.user_ns)
        if mp.name == "system":
            return float(c.system_ns)
        if mp.name == "util_pct":
            return _ratio(busy, c.wall_ns, 100.0)
        return _ratio(busy, sum(d.ios for d in self._dirs("total")))  # per_io

    def _m_verify(self, mp: MetricPath) -> float | None:
        verified = [j.verify for j in self.jobs if j.verify is not None]
        if not verified:
            return None
        if mp.name == "blocks":
            return float(sum(v.blocks_checked for v in verified))
        if mp.name == "failures":
            return float(sum(v.failures for v in verified))
        kind = "read_error" if mp.name == "read_errors" else mp.name
        return float(sum(v.by_kind.get(kind, 0) for v in verified))

    def _m_disk(self, mp: MetricPath) -> float | None:
        return diskstats.combined(self.disks, mp.name)

    def disk_series(self) -> list[dict[str, Any]]:
        """Per interval of the devices' readings: its end and what each device did."""
        rows: dict[int, dict[str, Any]] = {}
        for disk in self.disks:
            for end_ns, d in disk.intervals():
                row = rows.setdefault(end_ns, {"end_ns": end_ns})
                row[disk.device] = d.to_json()
        return [rows[k] for k in sorted(rows)]

    def _rate_pct(self, scope: str) -> float | None:
        if self.hosts:  # every host was asked for the rate: the fleet's share is their mean
            shares = [h._rate_pct(scope) for h in self.hosts.values()]
            known = [s for s in shares if s is not None]
            return sum(known) / len(known) if known and len(known) == len(shares) else None
        weighted = weights = 0.0
        names = DIRECTIONS if scope == "total" else (scope,)
        for spec, job in zip(self.specs, self.jobs, strict=False):
            for name in names:
                target = rate_target(spec, name)
                if target is None:
                    continue
                ratio, iops_asked = achieved_ratio(job.direction(name), target, spec, name)
                weighted += ratio * iops_asked
                weights += iops_asked
        return 100.0 * weighted / weights if weights > 0 else None

    def metrics(self, extra: Iterable[str] = ()) -> dict[str, float]:
        """Flat map of the standard paths plus `extra`, leaving out unmeasured ones."""
        sizes = sorted({(name, bs) for job in self.jobs for name in DIRECTIONS
                        for bs in job.direction(name).bs_counts})
        plan = _metrics_plan(tuple(f"{name}.{BS_PCT}.{bs}" for name, bs in sizes),
                             tuple(extra))
        out: dict[str, float] = {}
        for text, mp in plan.others:
            value = self.metric(mp)
            if value is not None:
                out[text] = value
        # Each latency is merged once; its percentiles are read in one pass over the
        # histogram. A latency without samples has none of its statistics.
        for (direction, kind), stats, percentiles in plan.latencies:
            merged = self.latency(direction, kind)
            if not merged.count:
                continue
            for text, stat in stats:
                out[text] = float(getattr(merged, stat))
            if percentiles:
                values = merged.percentiles([p for _, p in percentiles])
                for (text, _), value in zip(percentiles, values, strict=True):
                    if value is not None:
                        out[text] = value
        return {text: out[text] for text in plan.order if text in out}

    def series(self, scope: str) -> list[dict[str, Any]]:
        """Per-interval ios, bytes, iops and bw of a scope, summed over jobs
        (and over read and write for 'total'), by interval position."""
        rows: list[dict[str, Any]] = []
        for d in self._dirs(scope):
            for i, iv in enumerate(d.series):
                if i == len(rows):
                    rows.append({"end_ns": iv.end_ns, "ios": 0, "bytes": 0, "iops": 0.0, "bw": 0.0})
                row = rows[i]
                row["end_ns"] = max(row["end_ns"], iv.end_ns)
                row["ios"] += iv.ios
                row["bytes"] += iv.bytes
                row["iops"] += iv.iops
                row["bw"] += iv.bw
        return rows

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict; histograms list [lo_ns, hi_ns, count] of
        non-empty buckets (hi is 2^64-1 for the overflow bucket)."""
        out = {"interrupted": self.interrupted, "elapsed_ns": self.elapsed_ns,
               "metrics": self.metrics(),
               "jobs": [j.to_json() for j in self.jobs]}
        if self.cpu is not None:
            out["cpu"] = self.cpu.to_json()
        if self.disks:
            out["disks"] = [d.to_json() for d in self.disks]
        return out


@dataclass(frozen=True)
class _MetricsPlan:
    """How RunResult.metrics reads a list of paths: in ``order`` (each once); the paths that
    are not latencies, and per latency (direction, kind) its plain statistics and its
    percentiles."""

    order: tuple[str, ...]
    others: tuple[tuple[str, MetricPath], ...]
    latencies: tuple[tuple[tuple[str, str], tuple[tuple[str, str], ...],
                           tuple[tuple[str, float], ...]], ...]


@functools.lru_cache(maxsize=256)
def _metrics_plan(sizes: tuple[str, ...], extra: tuple[str, ...]) -> _MetricsPlan:
    """The plan for the standard paths, then ``sizes`` (bs_pct paths), then ``extra``: the
    same for every case that asks for the same paths, so it is made once."""
    order: dict[str, None] = {}
    others: list[tuple[str, MetricPath]] = []
    stats: dict[tuple[str, str], list[tuple[str, str]]] = {}
    percentiles: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for text in (*standard_paths(), *sizes, *extra):
        if text in order:
            continue
        order[text] = None
        mp = parse_metric(text)
        if not mp.is_latency:
            others.append((text, mp))
            continue
        assert mp.scope is not None
        key = (mp.scope, "lat" if mp.scope == "sync" else mp.name)
        stats.setdefault(key, [])
        percentiles.setdefault(key, [])
        if mp.stat is None:
            percentiles[key].append((text, mp.percentile or 0.0))
        else:
            stats[key].append((text, mp.stat))
    return _MetricsPlan(tuple(order), tuple(others),
                        tuple((key, tuple(stats[key]), tuple(percentiles[key]))
                              for key in stats))


def _ratio(part: float, whole: float, scale: float = 1.0) -> float | None:
    return scale * part / whole if whole > 0 else None


def mean_bs(spec: JobSpec, direction: str) -> float:
    """Mean request size a direction's block size table asks for."""
    total = 0.0
    for e in spec.bs_table(direction):
        sizes = e.sizes()
        if len(sizes):
            total += e.weight * (sizes[0] + sizes[-1]) / 2
    return total / 1e6


def rate_target(spec: JobSpec, direction: str) -> tuple[int, int] | None:
    """(IOPS, bytes/s) asked of a direction, or None when it is unlimited or unused."""
    iops, bw = spec.rate(direction)
    if not spec.does(direction) or not (iops or bw):
        return None
    return iops, bw


def achieved_rates(d: DirectionResult) -> tuple[float, float, float]:
    """(IOPS, bytes per second, seconds) a rate-limited direction achieved.

    Over the direction's measured runtime, the same time its iops and bw figures divide by,
    so rate_pct, iops and bw always agree (a time-based job runs for its runtime even when
    its last request was due earlier).
    """
    if not d.runtime_ns:
        return 0.0, 0.0, 0.0
    return d.ios * 1e9 / d.runtime_ns, d.bytes * 1e9 / d.runtime_ns, d.runtime_ns / 1e9


def achieved_ratio(d: DirectionResult, target: tuple[int, int], spec: JobSpec,
                   direction: str) -> tuple[float, float]:
    """(achieved / requested, requested IOPS) of a rate-limited direction.

    With both an IOPS and a byte rate the direction is held to the stricter one,
    so the nearer ratio is the one that tells whether it kept up.
    """
    iops, bw = target
    bs = mean_bs(spec, direction)
    done_iops, done_bw, _ = achieved_rates(d)
    ratios, asked = [], []
    if iops:
        ratios.append(done_iops / iops)
        asked.append(float(iops))
    if bw:
        ratios.append(done_bw / bw)
        asked.append(bw / bs if bs > 0 else 0.0)
    return max(ratios), min(asked)
