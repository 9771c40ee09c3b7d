"""A job description: what one engine job runs, in the engine's units, free of any binding.

:class:`JobSpec` is what the suite is lowered to (:mod:`iogate.lower`), what every backend
runs (the native engine, fio) and what results are read against; :func:`file_identity`
and :func:`open_pinned` are how its files stay the very files that were checked.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field

from iogate.errors import EngineError

__all__ = ["PPM", "READS", "WRITES", "BsEntry", "JobSpec", "PrioEntry", "Zone",
           "file_identity", "open_pinned"]

PPM = 1_000_000  # shares (weights, zones, mixes) are parts per million


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


@dataclass(frozen=True)
class PrioEntry:
    """One command priority entry of a direction: of the requests of `bs` bytes (0: of any
    size), `share` ppm carry the I/O priority `ioprio` (class << 13 | level)."""

    bs: int
    share: int
    ioprio: int


def ioprio_value(prio_class: int, level: int) -> int:
    """The I/O priority ioprio_set(2) takes; class 0 (none) means best effort, as fio has
    it."""
    return ((prio_class or 2) << 13) | level


READS = ("read", "randread", "rw", "randrw")
WRITES = ("write", "randwrite", "rw", "randrw", "trimwrite", "randtrimwrite")
TRIMS = ("trim", "randtrim", "trimwrite", "randtrimwrite")


@dataclass(kw_only=True)
class JobSpec:
    """One job, in the engine's terms (sizes in bytes, times in ns, shares in ppm).

    Every field but ``size`` has a default.
    """

    size: int  # bytes of the region; 0 only in a job file exported without size
    engine: str = "io_uring"  # a name of iogate.engine.catalog
    # read | write | randread | randwrite | rw | randrw | trim | randtrim | trimwrite |
    # randtrimwrite; the trim modes take the write fields (bs_write, bssplit_write,
    # blockalign_write, rate_*_write) for their trims, as the engine's slot 1
    rw: str = "read"
    bs_read: int = 4096
    bs_write: int = 4096
    iodepth: int = 1
    numjobs: int = 1
    offset: int = 0
    runtime_ns: int = 0  # 0: until size is done
    ramp_ns: int = 0
    time_based: bool = False
    direct: bool = False
    rwmixread: int = 50
    filename: str = ""  # empty with the null engine
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
    dist: str = "uniform"  # uniform | zipf | pareto | normal | zoned | sequence
    dist_param: float = 0.0
    zones: list[Zone] = field(default_factory=list)
    # sequence: block indices (units of blockalign) in the order visited, repeated; with
    # sequence_stride, relative to a base that moves on by len(sequence) after each pass
    sequence: list[int] = field(default_factory=list)
    sequence_stride: bool = False
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
    # how a job that only writes finds a short file (iog_job_spec.write_layout): data
    # (written first), allocate (fallocate), posix (posix_fallocate), keep_size (allocated,
    # size kept), truncate (holes) or none (grows as written)
    write_layout: str = "allocate"
    # random offsets visit every block once per pass (iog's IOG_JOB_RANDOM_MAP, fio's random
    # map); suites ask for it unless norandommap (iogate.lower)
    random_map: bool = False
    # how a thread goes from file to file: roundrobin, random or sequential
    # (IOG_JOB_FILES_*, fio's file_service_type)
    file_service: str = "roundrobin"
    # the CPUs the job's threads run on (iog_job_spec.cpus, fio's cpus_allowed), sorted; empty:
    # anywhere; cpus_split: each thread on one of them (fio's cpus_allowed_policy=split)
    cpus: tuple[int, ...] = ()
    cpus_split: bool = False
    # io_uring's fast paths (IOG_JOB_RING_*, fio's io_uring options): registered buffers,
    # registered files (iogate's default; fio's is not to), a submission polling thread
    # (on CPU sqpoll_cpu, when given) and polled completions
    # NUMA placement (iog_job_spec.numa_*, fio's numa_cpu_nodes and numa_mem_policy): the
    # nodes whose CPUs the threads run on; the memory policy (none, default, local, prefer,
    # bind, interleave) and its nodes
    numa_cpu_nodes: tuple[int, ...] = ()
    numa_mem_policy: str = "none"
    numa_mem_nodes: tuple[int, ...] = ()
    fixedbufs: bool = False
    registerfiles: bool = True
    sqpoll: bool = False
    sqpoll_cpu: int | None = None
    hipri: bool = False
    verify: str = "none"  # none | crc32c | xxhash | crc32
    verify_backlog: int = 0  # 0: read back after the run; N: after every N writes
    verify_fatal: bool = False
    # The verify state file (iog_job_spec.verify_state): its path, and the identity of the
    # file the runner created there; empty: none.
    verify_state: str = ""
    verify_state_id: tuple[int, int] | None = None
    io_timeout_ns: int = 0  # 0: no limit
    # How long the job runs and where it goes next (per thread: each runs the whole job).
    io_limit_bytes: int = 0  # stop after this many bytes; 0: size (one pass) or runtime
    io_limit_ios: int = 0  # stop after this many requests; 0: no limit
    end_fsync: bool = False  # fsync every file when a writing thread's run ends
    seq_skip: int = 0  # sequential: bytes skipped after each request (negative: back)
    start_delay_ns: int = 0  # the job starts this long after its group
    fill: bool = False  # sequential writes until the filesystem is full (fio's fill_device)
    open_sync: str = "none"  # none | sync | dsync: the files opened O_SYNC or O_DSYNC
    # flow control between the jobs of a session with the same flow_id (weight 0: none)
    flow_weight: int = 0
    # Submission batching (asynchronous engines), 0: the default (1, 1, iodepth, iodepth)
    batch_submit: int = 0  # requests per submit
    batch_complete_min: int = 0  # completions a reap waits for
    batch_complete_max: int = 0  # completions a reap takes at most
    depth_low: int = 0  # a full queue drains to this before it is filled again
    # exitall: when a thread of this job ends its run, jobs of the session with bit j set
    # (bit 63: also every later job) stop as at the end of their runtime; 0: none
    exit_mask: int = 0
    # I/O priorities: the job's (class << 13 | level; 0: unchanged), and per direction
    # the requests that carry a command priority of their own (io_uring, libaio)
    ioprio: int = 0
    cmdprio_read: list[PrioEntry] = field(default_factory=list)
    cmdprio_write: list[PrioEntry] = field(default_factory=list)
    test_crash: bool = False  # test only: the engine crashes after one request

    # -- what the job asks for, per data direction ---------------------------------------

    # The plain keys (iogate.spec.keys.PLAIN) by the member of the library's job struct each
    # goes to, in its units; a member not here is 0 ("off").
    plain: dict[str, int] = field(default_factory=dict)

    def does(self, direction: str) -> bool:
        """Whether the rw mode issues requests of this direction (read, write or trim)."""
        return self.rw in {"read": READS, "write": WRITES, "trim": TRIMS}[direction]

    def bs_table(self, direction: str) -> list[BsEntry]:
        """The block size entries of a direction: its bssplit, else its single bs (a
        trim's are the write fields')."""
        split = self.bssplit_read if direction == "read" else self.bssplit_write
        if split:
            return list(split)
        bs = self.bs_read if direction == "read" else self.bs_write
        return [BsEntry(bs, bs, PPM)]

    def rate(self, direction: str) -> tuple[int, int]:
        """(IOPS, bytes per second) requested for a direction; 0 means unlimited (a
        trim's are the write fields')."""
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
