"""The fields of a job as the rules between them read them.

:class:`JobShape` is what :mod:`iogate.spec.rules` asks of a job: the model that runs those
rules as it is validated (:class:`iogate.spec.models.JobFields`) is one, and the rules need
not import it. A field the rules start to read is added here (the type checker says so).
"""

from __future__ import annotations

from typing import Literal, Protocol

from iogate.spec.fields import (
    AtLeastOne,
    BlockAlign,
    BlockSize,
    BsRangeField,
    BsSplitField,
    CmdprioBsSplit,
    CmdprioPercentage,
    Duration,
    FileNames,
    Integer,
    IoEngine,
    Pattern,
    Percent,
    PositiveDuration,
    PositiveSize,
    RandomDistribution,
    RateBytes,
    RateIops,
    RegionOffset,
    RegionSize,
    Seed,
    SignedSize,
    Verify,
)
from iogate.spec.modes import RwMode


class JobShape(Protocol):
    """The fields of one engine job that the rules read (sizes in bytes, durations in
    nanoseconds), and which of them were written (``model_fields_set``)."""

    @property
    def allow_file_create(self) -> bool: ...

    @property
    def blockalign(self) -> BlockAlign | None: ...

    @property
    def bs(self) -> BlockSize: ...

    @property
    def bsrange(self) -> BsRangeField | None: ...

    @property
    def bssplit(self) -> BsSplitField | None: ...

    @property
    def buffer_compress_chunk(self) -> PositiveSize | None: ...

    @property
    def buffer_compress_percentage(self) -> Percent | None: ...

    @property
    def buffer_pattern(self) -> Pattern | None: ...

    @property
    def cmdprio_bssplit(self) -> CmdprioBsSplit | None: ...

    @property
    def cmdprio_percentage(self) -> CmdprioPercentage | None: ...

    @property
    def dedupe_percentage(self) -> Percent | None: ...

    @property
    def direct(self) -> bool: ...

    @property
    def end_fsync(self) -> bool: ...

    @property
    def fdatasync(self) -> AtLeastOne | None: ...

    @property
    def filename(self) -> FileNames | None: ...

    @property
    def fill_device(self) -> bool: ...

    @property
    def flow(self) -> Integer | None: ...

    @property
    def fsync(self) -> AtLeastOne | None: ...

    @property
    def iodepth(self) -> Integer: ...

    @property
    def iodepth_batch_complete_max(self) -> AtLeastOne | None: ...

    @property
    def iodepth_batch_complete_min(self) -> AtLeastOne | None: ...

    @property
    def ioengine(self) -> IoEngine: ...

    @property
    def numjobs(self) -> Integer: ...

    @property
    def offset(self) -> RegionOffset: ...

    @property
    def ramp_time(self) -> Duration: ...

    @property
    def random_distribution(self) -> RandomDistribution | None: ...

    @property
    def random_sequence_stride(self) -> bool | None: ...

    @property
    def randrepeat(self) -> bool: ...

    @property
    def randseed(self) -> Seed | None: ...

    @property
    def rate(self) -> RateBytes | None: ...

    @property
    def rate_iops(self) -> RateIops | None: ...

    @property
    def rate_process(self) -> Literal["linear", "poisson"] | None: ...

    @property
    def refill_buffers(self) -> bool | None: ...

    @property
    def runtime(self) -> PositiveDuration | None: ...

    @property
    def rw(self) -> RwMode: ...

    @property
    def rwmixread(self) -> Percent | None: ...

    @property
    def rwmixwrite(self) -> Percent | None: ...

    @property
    def seq_skip(self) -> SignedSize: ...

    @property
    def size(self) -> RegionSize | None: ...

    @property
    def sync(self) -> Literal["none", "sync", "dsync"]: ...

    @property
    def thinktime(self) -> PositiveDuration | None: ...

    @property
    def thinktime_blocks(self) -> AtLeastOne | None: ...

    @property
    def time_based(self) -> bool: ...

    @property
    def verify(self) -> Verify | None: ...

    @property
    def verify_backlog(self) -> AtLeastOne | None: ...

    @property
    def verify_fatal(self) -> bool: ...

    @property
    def zero_buffers(self) -> bool: ...

    @property
    def model_fields_set(self) -> set[str]: ...
