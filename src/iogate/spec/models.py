"""The validated shape of a suite: strict pydantic models of jobs, workloads and files.

:class:`JobFields` is what one engine job runs; :class:`Workload` adds a name, a group,
expectations, repeats, ``fail_fast`` and :class:`SteadyState`; :class:`PreconditionStep`
adds ``loops``. :class:`Defaults`, :class:`WorkloadEntry` and :class:`PreconditionEntry` are
the same keys as written, where any may be missing. :class:`SuiteFile` is a whole file.

Field types are :mod:`iogate.spec.fields`'s; a job is checked against the rules between
its fields (:func:`iogate.spec.rules.workload_rules`) as it is validated. Numeric fields
also take arithmetic (:mod:`iogate.expr`): ``numjobs: ${ncpus} * 2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from iogate.metrics import describe, key_patterns, parse_metric, standard_paths
from iogate.spec.fields import (
    BS_KEYS,
    DEFAULT_ENGINE,
    STRICT,
    AtLeastOne,
    BlockAlign,
    BlockSize,
    BlockSizes,
    BsRangeField,
    BsSplitField,
    CmdprioBsSplit,
    CmdprioClass,
    CmdprioLevel,
    CmdprioPercentage,
    Description,
    DirName,
    Duration,
    FileNames,
    Integer,
    IoEngine,
    Name,
    OutputPath,
    Pattern,
    Percent,
    PositiveDuration,
    PositiveNumber,
    PositiveSize,
    PrioClass,
    PrioLevel,
    RandomDistribution,
    RateBytes,
    RateIops,
    RegionOffset,
    RegionSize,
    Seed,
    SignedSize,
    SteadyMetric,
    Verify,
)
from iogate.spec.modes import RwMode, is_mixed
from iogate.spec.rules import workload_rules


class JobFields(BaseModel):
    """What one engine job runs: every workload key except its name, expectations and phases.

    Sizes in bytes, durations in nanoseconds.
    """

    model_config = STRICT
    filename: FileNames | None = None
    ioengine: IoEngine = DEFAULT_ENGINE
    rw: RwMode = "read"
    bs: BlockSize = BlockSizes()
    bsrange: BsRangeField | None = None
    bssplit: BsSplitField | None = None
    blockalign: BlockAlign | None = None
    iodepth: Annotated[Integer, Field(ge=1, le=4096)] = 1  # the engine's limits
    numjobs: Annotated[Integer, Field(ge=1, le=1024)] = 1
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
    runtime: PositiveDuration | None = None
    time_based: bool = False
    ramp_time: Duration = 0
    direct: bool = False
    rwmixread: Percent | None = None
    rwmixwrite: Percent | None = None
    rate_iops: RateIops | None = None
    rate: RateBytes | None = None
    rate_process: Literal["linear", "poisson"] | None = None
    buffer_compress_percentage: Percent | None = None
    buffer_compress_chunk: PositiveSize | None = None
    refill_buffers: bool | None = None
    buffer_pattern: Pattern | None = None
    zero_buffers: bool = False
    dedupe_percentage: Percent | None = None
    random_distribution: RandomDistribution | None = None
    randseed: Seed | None = None
    randrepeat: bool = True
    thinktime: PositiveDuration | None = None
    thinktime_blocks: AtLeastOne | None = None
    fsync: AtLeastOne | None = None
    sync: Literal["none", "sync", "dsync"] = Field(default="none", description=(
        "open the files for writing O_SYNC ('sync') or O_DSYNC ('dsync'), fio's sync: "
        "every write completes only once it is durable (a direct write to a device with a "
        "volatile cache goes out with FUA); not with mmap"))
    fdatasync: AtLeastOne | None = None
    invalidate: bool = True
    verify: Verify | None = Field(default=None, description=(
        "checksum every written block and read it back: crc32c, crc32, crc64, xxhash (XXH64, "
        "as xxh64; fio's xxhash is xxh32), xxh32, md5, sha1, sha256, sha512 (whole digests "
        "after the header), meta (no data checksum: the header and the 512-byte sector "
        "stamps), or none; rw write or randwrite, one block size of at least 64 bytes (80 "
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
    flow_id: Annotated[Integer, Field(ge=0, lt=1 << 32)] = Field(default=0, description=(
        "the flow a workload with a flow weight belongs to (fio's flow_id)"))
    flow_sleep: Duration = Field(default=0, description=(
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
        "default iodepth (fio's iodepth_batch_complete_max)"))
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
    allow_overwrite: bool = False
    allow_file_create: bool = Field(default=True, description=(
        "false: every target must exist; iogate creates none (fio's allow_file_create=0, "
        "so that a mistyped device name never becomes a regular file)"))
    target_root: DirName | None = None

    @property
    def filenames(self) -> list[str]:
        """The files as a list; empty when none was given."""
        if self.filename is None:
            return []
        return [self.filename] if isinstance(self.filename, str) else list(self.filename)

    @model_validator(mode="before")
    @classmethod
    def _mixed_default(cls, data: Any) -> Any:
        # Mixed workloads read half the time unless told otherwise, like fio;
        # rwmixwrite alone says the same thing from the other side.
        if isinstance(data, Mapping) and is_mixed(data.get("rw")) and "rwmixread" not in data:
            write = data.get("rwmixwrite")
            read = 100 - write if isinstance(write, int) and not isinstance(write, bool) \
                and 0 <= write <= 100 else 50
            data = {**data, "rwmixread": read}
        return data

    @model_validator(mode="after")
    def _rules(self) -> JobFields:
        rules = list(workload_rules(self))
        if rules:
            raise PydanticCustomError("workload_rules", "{summary}", {
                "summary": "; ".join(m for _, m in rules), "rules": rules})
        return self


class SteadyState(BaseModel):
    """Measurement rounds until a window of them is steady (SNIA PTS): the tracked metric's
    range within ``range_pct`` of the window mean and its least-squares slope across the
    window within ``slope_pct`` of the mean (each limit set to null is not asked; a
    ``deviation_pct`` asks every round to be that close to the mean, fio's rule), in at
    most ``max_rounds`` rounds; rounds that start within ``ramp`` are in no window."""

    model_config = STRICT
    metric: SteadyMetric
    round: PositiveDuration = 60 * 10**9
    window: Annotated[Integer, Field(ge=2)] = 5
    ramp: Duration = 0
    max_rounds: AtLeastOne = 25
    range_pct: PositiveNumber | None = 20.0
    slope_pct: PositiveNumber | None = 10.0
    deviation_pct: PositiveNumber | None = None
    on_unsteady: Literal["fail", "skip"] = "fail"

    @property
    def ramp_rounds(self) -> int:
        """Rounds run before any window may start: those that start within ``ramp``."""
        return -(-self.ramp // self.round)

    @field_validator("max_rounds")
    @classmethod
    def _room_for_a_window(cls, value: int, info: ValidationInfo) -> int:
        window, ramp, round_ = (info.data.get(k) for k in ("window", "ramp", "round"))
        if not isinstance(window, int):
            return value
        skip = -(-ramp // round_) if isinstance(ramp, int) and isinstance(round_, int) else 0
        if value < skip + window:
            ramp_text = f"{skip} ramp rounds and " if skip else ""
            raise ValueError(f"max_rounds ({value}) must be at least {ramp_text}the window "
                             f"({window} rounds), or steady state could never be judged")
        return value

    @model_validator(mode="after")
    def _a_limit(self) -> SteadyState:
        if self.range_pct is None and self.slope_pct is None and self.deviation_pct is None:
            raise ValueError("steady state needs a limit: range_pct, slope_pct or "
                             "deviation_pct")
        return self


EXITALL_DESCRIPTION = (
    "when a thread of this workload ends its run (its size, io_size, number_ios or runtime "
    "reached), stop others as if their runtime had run out (fio's exitall): true stops every "
    "workload of its group (and its own other threads), a list stops the named workloads of "
    "its group (itself may be named); a workload stopped this way still runs its end_fsync "
    "and verify and passes or fails on what it did")
ExitAll = bool | Annotated[list[Name], Field(min_length=1)]
VERIFY_STATE_DESCRIPTION = (
    "power-loss verification: a file where the verified write workload records, as it runs, "
    "every write that completed and every fsync or fdatasync (fsync: N, fdatasync: N, "
    "end_fsync) that made them durable (with sync: dsync or sync, each write itself); "
    "after a crash, a power cut or a device reset, 'iogate verify SUITE' reads the target "
    "back against it and tells blocks lost after a completed sync from blocks not yet "
    "durable. Needs verify and a filename; each workload "
    "(and sweep point) its own file, best on another filesystem than the target; a relative "
    "path is from the working directory; replaced at every run")
EXIT_MASK_JOBS = 64  # an exitall list is a mask of 64 bits over the jobs of one session


class Workload(JobFields):
    """One validated workload, defaults merged."""

    name: Name
    group: Name | None = None
    exitall: ExitAll = False
    verify_state: OutputPath | None = None
    expect: dict[str, Any] = Field(default_factory=dict)
    per_host: dict[str, Any] = Field(default_factory=dict)
    repeat: AtLeastOne = 1
    fail_fast: bool = False
    steady_state: SteadyState | None = None


class PreconditionStep(JobFields):
    """A step run before its workload, not measured; ``loops`` passes over the region."""

    rw: RwMode  # required: a step says what it does
    loops: AtLeastOne = 1


# Keys a precondition step takes from its workload unless it sets them itself.
STEP_INHERITS = ("filename", "size", "offset", "ioengine", "direct", "allow_overwrite",
                 "target_root", *BS_KEYS)
# Keys of which setting one replaces the others coming from further out.
EXCLUSIVE_GROUPS = (frozenset(BS_KEYS), frozenset(("rwmixread", "rwmixwrite")),
                    frozenset(("cmdprio_percentage", "cmdprio_bssplit")))


def _as_written(name: str, doc: str, **own: Any) -> type[BaseModel]:
    """A model of the same keys as JobFields as written in a file, where every key may be
    missing (it comes from further out), plus the model's `own` fields."""
    fields: dict[str, Any] = {}
    for key, info in JobFields.model_fields.items():
        annotation: Any = info.annotation
        if info.metadata:
            args = (annotation, *info.metadata)
            annotation = Annotated[args]  # type: ignore[valid-type]
        fields[key] = (Optional[annotation], Field(  # noqa: UP045 - built at run time
            default=None, description=info.description, json_schema_extra=info.json_schema_extra))
    fields.update(own)
    model = create_model(name, __config__=STRICT, __doc__=doc, **fields)
    model.__module__ = __name__
    return model


if TYPE_CHECKING:  # the checker sees plain models; they are built below at run time
    class PreconditionEntry(BaseModel): ...

    class Defaults(BaseModel): ...
else:
    PreconditionEntry = _as_written(
        "PreconditionEntry",
        "A precondition step as written: ``rw`` and any job key, inherited ones included.",
        rw=(RwMode, ...), loops=(Optional[AtLeastOne], None))  # noqa: UP045
    Defaults = _as_written(
        "Defaults",
        "Values every workload of the suite starts from; a workload's own keys win.",
        group=(Optional[Name], None),  # noqa: UP045
        repeat=(Optional[AtLeastOne], None),  # noqa: UP045
        precondition=(Optional[list[PreconditionEntry]], None))  # noqa: UP045


SWEEP_VALUE_SCHEMA = {"type": ["string", "integer", "number", "boolean"]}
SWEEP_SCHEMA = {
    "anyOf": [
        {"type": "object", "minProperties": 1,
         "additionalProperties": {"type": "array", "items": SWEEP_VALUE_SCHEMA, "minItems": 1},
         "description": "variable -> values; every combination is a point, in the order "
                        "written"},
        {"type": "array", "minItems": 1,
         "items": {"type": "object", "minProperties": 1,
                   "additionalProperties": SWEEP_VALUE_SCHEMA},
         "description": "explicit points, each a mapping of the same variables"},
    ],
    "description": "run the workload once per point; a variable is used as ${name}, and one "
                   "named like a workload key sets that key",
}


def _expect_schema(schema: dict[str, Any]) -> None:
    """Expectation keys as the metric table has them (iogate.metrics): every standard path
    named, with what it measures, so that an editor completes them; any other path of the
    table by its pattern; nothing else."""
    comparison = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"},
                                                "minItems": 1}]}
    schema["properties"] = {path: {**comparison, "description": describe(parse_metric(path))}
                            for path in standard_paths()}
    schema["patternProperties"] = {regex: {**comparison, "description": about}
                                   for regex, about in key_patterns()}
    schema["additionalProperties"] = False


class WorkloadEntry(Defaults):
    """A workload as written in the file: any field may come from the defaults."""

    name: Name
    # Checked by iogate.spec, which reports each point's problem at its place.
    sweep: Annotated[Any, WithJsonSchema(SWEEP_SCHEMA)] = None
    fail_fast: bool | None = None
    steady_state: SteadyState | None = None
    exitall: ExitAll | None = Field(default=None, description=EXITALL_DESCRIPTION)
    verify_state: OutputPath | None = Field(default=None,
                                              description=VERIFY_STATE_DESCRIPTION)
    # Values are checked by iogate.expect, which explains a bare number better.
    expect: dict[str, Any] = Field(default_factory=dict, description=(
        "metric -> comparison, e.g. 'read.clat.p99': '<= 1.2ms', or a list of comparisons "
        "on the same metric, e.g. ['>= 0.45', '<= 0.55']"), json_schema_extra=_expect_schema)
    per_host: dict[str, Any] = Field(default_factory=dict, description=(
        "expectations like expect's, judged on each host of a fleet on its own (expect "
        "judges the fleet as a whole); a run on this machine is one host"),
        json_schema_extra=_expect_schema)


class SuiteFile(BaseModel):
    """A suite file as written."""

    model_config = ConfigDict(strict=True, extra="forbid", title="iogate suite")
    suite: Name
    description: Description | None = None
    defaults: Defaults | None = None
    workloads: Annotated[list[WorkloadEntry], Field(min_length=1)]
