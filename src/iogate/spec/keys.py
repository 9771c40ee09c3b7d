"""The table of workload keys: every key a job runs, one declaration each, with its type
(from :mod:`iogate.spec.fields` and its families), its default and what it means.

:class:`JobKeys` is that table as a strict pydantic model, read by everything that needs to
know the keys: :mod:`iogate.spec.rules` (the rules between them), :mod:`iogate.spec.models`
(the models of a suite, which add the rules' check to it), the JSON schema and the
documentation's key reference. Sizes are in bytes and durations in nanoseconds once
validated; numeric keys also take arithmetic (:mod:`iogate.expr`).

A plain key (:class:`Plain`, beside its type) also says which member of the engine's job
struct and which fio option it is; :data:`PLAIN` lists them for lowering, the job struct,
fio's import and export and the documentation's key reference. :data:`KEY_KINDS` says which
keys are sizes and durations, read from their types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

from iogate.spec.blocks import BlockAlign, BlockSize, BlockSizes, BsRangeField, BsSplitField
from iogate.spec.data import Pattern, Verify
from iogate.spec.distributions import RandomDistribution, Seed
from iogate.spec.fields import (
    DEFAULT_ENGINE,
    STRICT,
    AtLeastOne,
    CpuList,
    CpuNumber,
    DirName,
    Duration,
    FileNames,
    Integer,
    IoEngine,
    NodeList,
    NumaMemPolicy,
    Percent,
    PositiveDuration,
    PositiveSize,
    RegionOffset,
    RegionSize,
    SignedSize,
    Size,
)
from iogate.spec.modes import RwMode
from iogate.spec.priorities import (
    CmdprioBsSplit,
    CmdprioClass,
    CmdprioLevel,
    CmdprioPercentage,
    PrioClass,
    PrioLevel,
)
from iogate.spec.rates import RateBytes, RateIops


@dataclass(frozen=True)
class Plain:
    """What makes a key plain, declared beside its type (``Annotated[Duration, Plain(...)]``):
    its value goes as it is to one member of the library's ``struct iog_job_spec``
    (durations in ns, sizes in bytes, counts, true as 1; unset is 0, which the library
    reads as "off"), fio reads and writes it as one option in one unit, and it has no rule
    but, at most, one key it needs. Nothing else names a plain key: lowering, the job struct,
    fio's import and export, the rules and the documentation's key reference read these rows
    (:data:`PLAIN`)."""

    member: str  # the member of struct iog_job_spec (native/include/iogate.h)
    fio: str  # fio's option
    fio_unit: Literal["count", "us", "size", "bool"] = "count"  # how fio writes the value
    needs: str | None = None  # a key without which it does nothing (fio ignores it then)


class JobKeys(BaseModel):
    """What one engine job runs: every workload key except its name, expectations and phases.

    Sizes in bytes, durations in nanoseconds.

    Never validated itself, nor is :class:`iogate.spec.models.JobFields`: only the models
    made from them are (:class:`iogate.spec.models.Workload`, ``PreconditionStep``), so
    neither builds a validator of its own (``defer_build``; a model made from them builds
    its own, at import).
    """

    model_config = STRICT | ConfigDict(defer_build=True)
    filename: FileNames | None = Field(default=None, description=(
        "the file or block device the workload runs on, or a list of them (one job over several"
        " files, each an equal part of size); omitted: a temporary file in $IOGATE_TMPDIR (else"
        " /var/tmp), removed afterwards"))
    file_service_type: Literal["roundrobin", "random", "sequential"] = Field(
        default="roundrobin", description=(
            "with several files, how each thread goes from one to the next (fio's "
            "file_service_type): roundrobin, one request each in turn; random, each request to "
            "a file drawn at random; sequential, every request to one file until its share of "
            "the pass is done, then the next"))
    cpus_allowed: CpuList | None = Field(default=None, description=(
        "the CPUs the workload's threads run on, as fio and Linux list them ('0-3,8'); "
        "omitted: wherever the system schedules them. Each must be one iogate may run on"))
    cpus_allowed_policy: Literal["shared", "split"] = Field(default="shared", description=(
        "with cpus_allowed: shared, every thread on all of them; split, each thread on one of "
        "them, in turn (fio's cpus_allowed_policy)"))
    numa_cpu_nodes: NodeList | None = Field(default=None, description=(
        "the NUMA nodes whose CPUs the workload's threads run on, listed like CPUs ('0-1'; "
        "fio's numa_cpu_nodes); not with cpus_allowed. Needs libnuma"))
    numa_mem_policy: NumaMemPolicy | None = Field(default=None, description=(
        "where the threads' memory and request buffers live (fio's numa_mem_policy): "
        "default, local (the node of the CPU), prefer:NODE, bind:NODES or interleave:NODES; "
        "omitted: as the system places it. Needs libnuma"))
    fixedbufs: bool = Field(default=False, description=(
        "io_uring: register the request buffers with the ring once and issue READ_FIXED / "
        "WRITE_FIXED, so no request maps its pages (fio's fixedbufs)"))
    registerfiles: bool = Field(default=True, description=(
        "io_uring: register the files with the ring, so no request looks its file up; "
        "iogate's default, where fio's is not to (fio's registerfiles)"))
    sqthread_poll: bool = Field(default=False, description=(
        "io_uring: a kernel thread polls the submission queue, so a submit makes no system "
        "call while that thread is awake; it keeps a CPU busy (fio's sqthread_poll)"))
    sqthread_poll_cpu: CpuNumber | None = Field(default=None, description=(
        "with sqthread_poll: the CPU the polling thread runs on, one iogate may run on (fio's "
        "sqthread_poll_cpu); omitted: wherever the system schedules it"))
    hipri: bool = Field(default=False, description=(
        "io_uring: poll for completions instead of waiting for interrupts (fio's hipri): "
        "direct I/O on a device whose queue polls (NVMe with the nvme module's poll_queues); "
        "a file elsewhere is refused when the run starts"))
    ioengine: IoEngine = Field(default=DEFAULT_ENGINE, description=(
        "the I/O engine that issues the requests: io_uring, libaio, posixaio (iodepth requests "
        "in flight), psync, sync, mmap (one at a time), null (no I/O: the tool's own overhead)"))
    rw: RwMode = Field(default="read", description=(
        "the access pattern (fio's rw): read, write, randread, randwrite, rw (readwrite), "
        "randrw, trim, randtrim, trimwrite, randtrimwrite"))
    bs: BlockSize = Field(default=BlockSizes(), description=(
        "block size in bytes (4k, 64KiB); per direction as {read: 4k, write: 64k} or fio's "
        "'4k,64k'; default 4k; bs, bsrange and bssplit exclude each other"))
    bsrange: BsRangeField | None = Field(default=None, description=(
        "block sizes from MIN to MAX in bytes ('1k-16k'), every multiple of MIN equally likely;"
        " per direction like bs"))
    bssplit: BsSplitField | None = Field(default=None, description=(
        "block sizes by share of requests, fio's '4k/80:64k/20' or a list [{bs: 4k, pct: 80}, "
        "{bs: 64k}]; entries without a share split the rest; the shares add up to 100"))
    blockalign: BlockAlign | None = Field(default=None, description=(
        "random offsets are multiples of this many bytes; per direction like bs; default: the "
        "smallest block size"))
    # The engine's limits
    iodepth: Annotated[Integer, Field(ge=1, le=4096)] = Field(default=1, description=(
        "requests in flight per job thread, 1 to 4096 (1 for psync, sync and mmap)"))
    numjobs: Annotated[Integer, Field(ge=1, le=1024)] = Field(default=1, description=(
        "threads, each running the whole workload on its own region, 1 to 1024"))
    size: RegionSize | None = Field(default=None, description=(
        "bytes of the region each job covers, or a share of the file or device ('50%', "
        "rounded down to the smallest block size); omitted: from offset to the end of the "
        "file or block device, which must exist (fio's rule); required for a temporary file"))
    offset: RegionOffset = Field(default=0, description=(
        "where the region starts in each file: bytes, or a share of the file or device "
        "('25%', rounded up to offset_align)"))
    offset_align: PositiveSize | None = Field(default=None, description=(
        "what a share offset is rounded up to a multiple of; default: the smallest block "
        "size"))
    runtime: PositiveDuration | None = Field(default=None, description=(
        "time limit of the measured run (30s, 500ms; a bare number is seconds); omitted: the "
        "run ends when the region (or io_size) is done"))
    time_based: bool = Field(default=False, description=(
        'keep going over the region until runtime ends'))
    ramp_time: Duration = Field(default=0, description=(
        "run this long first, measuring nothing (a duration: 10s); as in fio, its requests "
        "count toward size, io_size and number_ios, so a size-based workload ends at its "
        "size, within the ramp if need be (then it measured nothing: an error that says so)"))
    direct: bool = Field(default=False, description=(
        'O_DIRECT: bypass the page cache; block sizes and offsets must be multiples of 512 bytes'))
    rwmixread: Percent | None = Field(default=None, description=(
        'percent of requests that read, for rw and randrw (default 50)'))
    rwmixwrite: Percent | None = Field(default=None, description=(
        'percent of requests that write, for rw and randrw; with rwmixread, the two add up to 100'))
    rate_iops: RateIops | None = Field(default=None, description=(
        "requests per second ('20k'), the job's total split by rwmixread, or per direction "
        "{read: 70, write: 30} or '70,30'; shared by numjobs threads; every request has a due "
        "time"))
    rate: RateBytes | None = Field(default=None, description=(
        "bandwidth in bytes per second ('100MiB/s', fio's '100m'), the job's total split by "
        "rwmixread, or per direction like rate_iops"))
    rate_process: Literal["linear", "poisson"] | None = Field(default=None, description=(
        "how rate-limited requests are spaced: linear (evenly, the default) or poisson (random "
        "arrivals)"))
    buffer_compress_percentage: Percent | None = Field(default=None, description=(
        "percent of each written chunk that compresses away (0-100): each chunk starts with "
        "random bytes and ends with buffer_pattern, or zeros"))
    buffer_compress_chunk: PositiveSize | None = Field(default=None, description=(
        'bytes per chunk of buffer_compress_percentage (default 512)'))
    refill_buffers: bool | None = Field(default=None, description=(
        "new contents for every write (implied by buffer_compress_percentage and "
        "dedupe_percentage); otherwise buffers are filled once"))
    buffer_pattern: Pattern | None = Field(default=None, description=(
        "bytes written: hex like '0xdeadbeef' or a quoted string, at most 256 bytes; fills "
        "whole buffers, or the compressible end of each chunk"))
    zero_buffers: bool = Field(default=False, description=(
        'write zeros'))
    dedupe_percentage: Percent | None = Field(default=None, description=(
        'percent of writes that repeat an earlier buffer (0-100)'))
    random_distribution: RandomDistribution | None = Field(default=None, description=(
        "where random requests land: random (uniform, the default), zipf:THETA, pareto:H, "
        "normal:SIGMA (percent of the region), zoned:60/10:30/20:10/70 (percent of accesses / "
        "percent of the region), sequence:2,0,1 (block indices in units of blockalign, "
        "visited in that order over and over)"))
    random_sequence_stride: bool | None = Field(default=None, description=(
        "with random_distribution sequence: the indices are relative to a base that moves on "
        "by their number after each pass (2,0,1 then 5,3,4 ...); default false: the same "
        "blocks every pass"))
    norandommap: bool = Field(default=False, description=(
        "random workloads: draw every offset on its own, some blocks more than once and "
        "others not at all (fio's norandommap). By default, as fio's random map, each "
        "thread visits every block of each file once per pass, in a new random order each "
        "pass, when its requests are one size and random_distribution is random; with "
        "several sizes or another distribution, offsets are drawn on their own"))
    randseed: Seed | None = Field(default=None, description=(
        'seed of the random offsets; default: one derived from the suite and the case'))
    randrepeat: bool = Field(default=True, description=(
        'the same random offsets every run; false: new ones each run'))
    thinktime: PositiveDuration | None = Field(default=None, description=(
        "pause after every thinktime_blocks requests, once those in flight completed, as fio "
        "(a duration: 10us; a bare number is seconds)"))
    thinktime_blocks: AtLeastOne | None = Field(default=None, description=(
        'requests between pauses of thinktime (default 1)'))
    thinktime_spin: Annotated[Duration, Plain("thinktime_spin_ns", "thinktime_spin", "us",
                                              needs="thinktime")] = Field(default=0, description=(
        "of each thinktime pause, how long the thread keeps its CPU busy before it sleeps the "
        "rest (fio's thinktime_spin): the host's own work between requests"))
    fsync: AtLeastOne | None = Field(default=None, description=(
        "fsync the file after every N writes (the requests in flight complete first); measured "
        "under sync.*"))
    sync: Literal["none", "sync", "dsync"] = Field(default="none", description=(
        "open the files for writing O_SYNC ('sync') or O_DSYNC ('dsync'), fio's sync: "
        "every write completes only once it is durable (a direct write to a device with a "
        "volatile cache goes out with FUA); not with mmap"))
    fdatasync: AtLeastOne | None = Field(default=None, description=(
        'fdatasync the file after every N writes; measured under sync.*'))
    invalidate: bool = Field(default=True, description=(
        "drop the files' page cache before the run"))
    overwrite: bool = Field(default=False, description=(
        "rw write or randwrite on a file shorter than the workload's region: write it with "
        "data first, so every write overwrites written blocks (fio's overwrite); default "
        "false, as fio: the file is prepared as fallocate says and holds nothing but what "
        "the workload writes. A workload that reads or trims always has its file written "
        "first"))
    fallocate: Literal["native", "posix", "keep", "truncate", "none"] = Field(
        default="native", description=(
            "rw write or randwrite without overwrite, on a file shorter than the "
            "workload's region: how it is extended before the run (fio's fallocate): "
            "native allocates the blocks unwritten (fallocate(2), the default), posix the "
            "same through posix_fallocate(3), keep allocates them without changing the "
            "size, truncate sets the size without blocks (holes), none leaves the file to "
            "grow as it is written"))
    verify: Verify | None = Field(default=None, description=(
        "checksum every written block and read it back: crc32c, crc32, crc64, xxhash (XXH64, "
        "as xxh64; fio's xxhash is xxh32), xxh32, md5, sha1, sha256, sha512 (whole digests "
        "after the header), meta (no data checksum: the header and the 512-byte sector "
        "stamps), or none; rw write, randwrite, rw or randrw (a mix's writes are checked, not "
        "its reads), one block size of at least 64 bytes (80 "
        "md5, 88 sha1, 96 sha256, 128 sha512), numjobs 1"))
    verify_backlog: AtLeastOne | None = Field(default=None, description=(
        "read back after every N writes instead of after the run; needs verify"))
    verify_fatal: bool = Field(default=False, description=(
        "stop the job at the first block that fails verification; needs verify"))
    io_timeout: PositiveDuration | None = Field(default=None, description=(
        "a request outstanding longer than this is a fault: it counts as an ETIMEDOUT error "
        "and the run is cancelled"))
    io_size: PositiveSize | None = Field(default=None, description=(
        "bytes each thread moves before it stops, instead of size (fio's io_size): more than "
        "size goes over the region again; with time_based, the first of runtime and io_size "
        "ends the workload"))
    number_ios: AtLeastOne | None = Field(default=None, description=(
        "requests each thread issues at most, both directions together (fio's number_ios); "
        "it ends the workload early, it never extends it"))
    end_fsync: bool = Field(default=False, description=(
        "when a writing workload's run ends, fsync each of its files (fio's end_fsync): "
        "counted in sync, its time inside the workload's runtime"))
    seq_skip: SignedSize = Field(default=0, description=(
        "sequential workloads: bytes skipped after each request (fio's rw=read:8k); "
        "negative steps back, e.g. bs 4k and seq_skip -8k read the region backwards"))
    flow: Annotated[Integer, Field(ge=1, le=1000)] | None = Field(default=None, description=(
        "weight in flow control between the workloads of a group that share a flow_id "
        "(fio's flow): they issue requests in the proportion of their weights (each thread "
        "has the workload's weight); 1 to 1000"))
    flow_id: Annotated[Integer, Field(ge=0, lt=1 << 32),
                       Plain("flow_id", "flow_id", needs="flow")] = Field(default=0, description=(
        "the flow a workload with a flow weight belongs to (fio's flow_id)"))
    flow_sleep: Annotated[Duration, Plain("flow_sleep_ns", "flow_sleep", "us", needs="flow")
                          ] = Field(default=0, description=(
        "how long a thread held back by its flow waits before it asks again (fio's "
        "flow_sleep); 0: it yields, or waits for one of its requests in flight"))
    fill_device: bool = Field(default=False, description=(
        "rw write only: write until the filesystem holding the file is full (fio's "
        "fill_device): ENOSPC ends the run and is no error; without size, the region is "
        "the filesystem's free space when the run starts"))
    startdelay: Duration = Field(default=0, description=(
        "the workload starts this long after its group (fio's startdelay); the delay is no "
        "part of its runtime"))
    # Submission batching: asynchronous engines, iodepth above 1 (see rules.py)
    iodepth_batch_submit: AtLeastOne | None = Field(default=None, description=(
        "asynchronous engines: prepared requests are held until this many wait, then go to "
        "the kernel in one submit (fewer when no more can be issued yet: the queue is full, "
        "the next request is not due); default 1, each at once (fio's iodepth_batch_submit)"))
    iodepth_batch_complete_min: AtLeastOne | None = Field(default=None, description=(
        "asynchronous engines: each collection of completions waits for at least this many "
        "(at most what is in flight); default 1 (fio's iodepth_batch_complete_min)"))
    iodepth_batch_complete_max: AtLeastOne | None = Field(default=None, description=(
        "asynchronous engines: each collection of completions takes at most this many; "
        "default iodepth_batch_complete_min, as fio: each completion is replaced before the "
        "next is taken, which keeps iodepth in flight (fio's iodepth_batch_complete_max)"))
    iodepth_low: AtLeastOne | None = Field(default=None, description=(
        "asynchronous engines: once iodepth requests are in flight, new ones wait until at "
        "most this many are; default iodepth, refill at once (fio's iodepth_low)"))
    prioclass: PrioClass | None = Field(default=None, description=(
        "I/O priority class of the workload's threads (fio's prioclass, see ionice): 1 or "
        "rt, 2 or be, 3 or idle; 0 means be; rt needs CAP_SYS_ADMIN or CAP_SYS_NICE"))
    prio: PrioLevel | None = Field(default=None, description=(
        "I/O priority level of the workload's threads, 0 (highest) to 7 (fio's prio); "
        "with io_uring and libaio every request carries it too"))
    cmdprio_percentage: CmdprioPercentage | None = Field(default=None, description=(
        "share of requests, in percent, issued with the command priority (cmdprio_class, "
        "cmdprio), per direction like bs: io_uring and libaio only; counted apart in "
        "read.prio.* and write.prio.*"))
    cmdprio_class: CmdprioClass | None = Field(default=None, description=(
        "class of the command priority, per direction (default rt)"))
    cmdprio: CmdprioLevel | None = Field(default=None, description=(
        "level of the command priority, 0 (highest) to 7, per direction (default 0)"))
    cmdprio_bssplit: CmdprioBsSplit | None = Field(default=None, description=(
        "command priority per block size, fio's '4k/10:64k/50' or '4k/10/1/0:64k/50/3/0' "
        "(SIZE/PERCENT[/CLASS/LEVEL]); instead of cmdprio_percentage"))
    # Safety: an existing file iogate did not create is written only with allow_overwrite;
    # with target_root, every target must resolve inside that directory.
    allow_overwrite: bool = Field(default=False, description=(
        "write an existing file iogate did not create (never a device: see "
        "--allow-destructive)"))
    allow_file_create: bool = Field(default=True, description=(
        "false: every target must exist; iogate creates none (fio's allow_file_create=0, "
        "so that a mistyped device name never becomes a regular file)"))
    target_root: DirName | None = Field(default=None, description=(
        "every target must resolve inside this directory (symbolic links followed)"))

    @property
    def filenames(self) -> list[str]:
        """The files as a list; empty when none was given."""
        if self.filename is None:
            return []
        return [self.filename] if isinstance(self.filename, str) else list(self.filename)


# Every plain key (key -> its row), in the table's order.
PLAIN: dict[str, Plain] = {
    key: row for key, field in JobKeys.model_fields.items()
    for row in field.metadata if isinstance(row, Plain)}



def _kind(field: FieldInfo) -> Literal["size", "duration"] | None:
    """Whether a key's value is a size or a duration, from the validators of its type."""
    marks = [*field.metadata]
    todo: list[Any] = [field.annotation]
    while todo:
        tp = todo.pop()
        marks += getattr(tp, "__metadata__", ())
        todo += get_args(tp)
    if any(any(m is d for d in _DURATION_MARKS) for m in marks):
        return "duration"
    if any(any(m is z for z in _SIZE_MARKS) for m in marks):
        return "size"
    return None


_DURATION_MARKS = [m for m in get_args(Duration)[1:] if not isinstance(m, FieldInfo)]
_SIZE_MARKS = [m for t in (Size, SignedSize, RegionSize, RegionOffset)
               for m in get_args(t)[1:] if not isinstance(m, FieldInfo)]
# The keys whose values are sizes (bytes) or durations (ns), for whoever shows them.
KEY_KINDS: dict[str, Literal["size", "duration"]] = {
    key: kind for key, field in JobKeys.model_fields.items() if (kind := _kind(field))}
