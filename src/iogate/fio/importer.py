"""fio job files to iogate suites, with fio's meaning kept.

:func:`import_jobfile` turns a job file into suite YAML: ``[global]`` options that every job
shares become ``defaults``, each job a workload. Values are converted where iogate reads
them differently from fio, with a comment saying so:

- sizes and counts are fio's (``4k`` is 4096, ``4KiB`` is 4000 with the default
  ``kb_base``, ``rate_iops=20k`` is 20480) and are written exactly;
- ``rate`` and ``rate_iops`` are per fio clone and per direction: a single value limits
  each direction, and ``numjobs`` clones each get it; iogate's single value is the job's
  total split by the mix and shared by its threads, so the suite spells out the mapping and
  multiplies by ``numjobs``;
- fio's default engine is psync (iogate's io_uring), and a synchronous engine ignores
  ``iodepth``; options fio ignores for the job's ``rw`` (``rwmixread`` on a read job, write
  data options on a read job, ``fsync`` without writes) are left out, and the comment says
  so;
- ``${VAR}`` stays a reference, so the suite reads the environment when it runs.

fio runs the jobs of a file at once, up to a ``stonewall``; ``wait_for=NAME`` starts a job
when that job ends. iogate runs workloads one after another unless they share a ``group``,
then together. Jobs between stonewalls become a group; a ``wait_for`` becomes a step in
that order when the job it waits for is the only one running before it, the only case
iogate can run as fio does; otherwise it is refused.

Every option is translated, accepted with a comment when it only changes fio's output, or
refused: one :class:`~iogate.errors.SuiteError` names each refused option at its file and
line. The suite is then loaded with iogate's own loader, and whatever that finds is reported
at the fio line it came from.
"""

from __future__ import annotations

import difflib
import json
import re
import textwrap
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iogate.errors import Problem, SuiteError
from iogate.expr import COUNT, DURATION, SIZE, ExprError, evaluate_int, shown
from iogate.fio.jobfile import (
    BARE_FLAGS,
    KEYWORDS,
    JobFile,
    Option,
    Section,
    ValueProblem,
    directions,
    filename_list,
    fio_expression,
    fio_size,
    fio_time,
    has_reference,
    parse_jobfile,
    parse_lenient,
    suite_text,
)
from iogate.spec.fields import DEFAULT_BS, NAME_MAX
from iogate.spec.models import JobFields
from iogate.units import format_duration_exact, format_size_exact

if TYPE_CHECKING:
    from iogate.spec import LoadedSuite

__all__ = ["import_jobfile", "load_jobfile", "is_jobfile", "parse_jobfile", "FIO_OPTIONS"]

# -- what fio has -------------------------------------------------------------------------

# fio's job options (fio 3.33, --cmdhelp=all) and their aliases, plus options of its I/O
# engines that job files often carry: to tell an option iogate refuses from a misspelling.
FIO_OPTIONS = frozenset("""
allow_file_create allow_mounted_write allrandrepeat atomic ba block_error_percentiles
blockalign blocksize blocksize_range blocksize_unaligned bs bs_unaligned bsrange bssplit
buffer_compress_chunk buffer_compress_percentage buffer_pattern buffered bwavgtime cgroup
cgroup_nodelete cgroup_weight clat_percentiles clocksource continue_on_error cpumask
cpus_allowed cpus_allowed_policy create_fsync create_on_open create_only create_serialize
dedupe_global dedupe_mode dedupe_percentage dedupe_working_set_percentage description direct
directory disable_bw disable_bw_measurement disable_clat disable_lat disable_slat disk_util
do_verify end_fsync error_dump exec_postrun exec_prerun exit_what exitall exitall_on_error
experimental_verify fadvise_hint fallocate fdatasync file_append file_service_type filename
filename_format fileoffset filesize fill_device fill_fs flow flow_id flow_sleep fsync
fsync_on_close gid group_reporting gtod_cpu gtod_reduce hugepage-size ignore_error
ignore_zone_limits invalidate io_limit io_size io_submit_mode iodepth iodepth_batch
iodepth_batch_complete iodepth_batch_complete_max iodepth_batch_complete_min
iodepth_batch_submit iodepth_low ioengine iomem iopsavgtime ioscheduler job_max_open_zones
kb_base lat_percentiles latency_percentile latency_run latency_target latency_window lockfile
lockmem log_alternate_epoch log_alternate_epoch_clock_id log_avg_msec log_compression
log_compression_cpus log_entries log_hist_coarseness log_hist_msec log_max_value log_offset
log_prio log_store_compressed log_unix_epoch loops max_latency max_open_zones mem
merge_blktrace_file merge_blktrace_iters merge_blktrace_scalars name new_group nice
norandommap nr_files nrfiles numa_cpu_nodes numa_mem_policy number_ios numjobs offset
offset_align offset_increment opendir openfiles overwrite per_job_logs percentage_random
percentile_list pre_read prio prioclass profile ramp_time random_distribution random_generator
randrepeat randseed rate rate_cycle rate_ignore_thinktime rate_iops rate_iops_min rate_min
rate_process ratecycle ratemin read_beyond_wp read_iolog read_iolog_chunked readwrite
refill_buffers replay_align replay_no_stall replay_redirect replay_scale replay_skip
replay_time_scale runtime rw rw_sequencer rwmixread rwmixwrite scramble_buffers
serialize_overlap significant_figures size slat_percentiles ss ss_dur ss_ramp startdelay stats
steadystate steadystate_duration steadystate_ramp_time stonewall sync sync_file_range
thinktime thinktime_blocks thinktime_blocks_type thinktime_iotime thinktime_spin thread
time_based timeout trim_backlog trim_backlog_batch trim_percentage trim_verify_zero uid
unified_rw_reporting unique_filename unit_base unlink unlink_each_loop verify verify_async
verify_backlog verify_backlog_batch verify_dump verify_fatal verify_interval verify_offset
verify_only verify_pattern verify_state_load verify_state_save wait_for wait_for_previous
write_barrier write_bw_log write_hint write_hist_log write_iolog write_iops_log write_lat_log
zero_buffers zone_reset_frequency zone_reset_threshold zonecapacity zonemode zonerange
zonesize zoneskip
hipri hipri_percentage fixedbufs registerfiles sqthread_poll sqthread_poll_cpu nonvectored
uncached nowait force_async cmdprio cmdprio_percentage cmdprio_class cmdprio_bssplit
userspace_reap cmd_type sg_write_mode readfua writefua
""".split())

_ENGINE_OPTIONS = frozenset("""
hipri hipri_percentage fixedbufs registerfiles sqthread_poll sqthread_poll_cpu nonvectored
uncached nowait force_async cmdprio cmdprio_percentage cmdprio_class cmdprio_bssplit
userspace_reap cmd_type sg_write_mode readfua writefua
""".split())

ALIASES = {
    "readwrite": "rw", "blocksize": "bs", "ba": "blockalign", "blocksize_range": "bsrange",
    "timeout": "runtime", "wait_for_previous": "stonewall", "fileoffset": "offset",
    "nr_files": "nrfiles", "blocksize_unaligned": "bs_unaligned", "io_limit": "io_size",
    "iodepth_batch_submit": "iodepth_batch", "iodepth_batch_complete": "iodepth_batch_complete_min",
    "iomem": "mem", "fill_fs": "fill_device", "ratemin": "rate_min", "ratecycle": "rate_cycle",
    "disable_bw": "disable_bw_measurement", "ss": "steadystate", "ss_dur": "steadystate_duration",
    "ss_ramp": "steadystate_ramp_time",
}

# Options that only shape fio's own output: accepted, with a comment on what iogate does.
_OUTPUT = "iogate keeps a per-second series of every workload in its results (--json) and " \
          "artifacts (--artifacts)"
_PERCENTILES = "iogate keeps whole latency histograms; an expectation may name any percentile"
_LATENCY = "iogate always measures every latency"
OUTPUT_ONLY: dict[str, str] = {
    "group_reporting": "iogate reports each workload on its own",
    "new_group": "iogate reports each workload on its own",
    **dict.fromkeys(("per_job_logs", "write_bw_log", "write_lat_log", "write_iops_log",
                     "write_hist_log", "log_avg_msec", "log_hist_msec", "log_hist_coarseness",
                     "log_max_value", "log_offset", "log_prio", "log_compression",
                     "log_compression_cpus", "log_store_compressed", "log_unix_epoch",
                     "log_alternate_epoch", "log_alternate_epoch_clock_id", "log_entries",
                     "bwavgtime", "iopsavgtime"), _OUTPUT),
    **dict.fromkeys(("clat_percentiles", "lat_percentiles", "slat_percentiles",
                     "percentile_list", "significant_figures"), _PERCENTILES),
    **dict.fromkeys(("gtod_reduce", "disable_lat", "disable_clat", "disable_slat",
                     "disable_bw_measurement"), _LATENCY),
    "disk_util": "iogate reports the device in the environment of each case, not its "
                 "utilisation",
    "unified_rw_reporting": "iogate reports read, write and total for every workload",
    "unit_base": "iogate's results are in bytes",
    "error_dump": "iogate names the first error of a case with its errno and offset",
    "thread": "iogate runs every job as threads of one process",
    "unlink": "iogate removes the temporary files it creates and never deletes a named file",
    "unlink_each_loop": "iogate removes the temporary files it creates and never deletes a "
                        "named file",
}

# Options that say what iogate does anyway: accepted, with a comment (iogate export writes them
# so that fio runs a job the way iogate does).
AS_IOGATE_DOES: dict[str, str] = {
    "overwrite": "iogate lays a file out before it writes it, as fio does with overwrite=1",
}

# Options accepted only at fio's default value (as fio would read them), which iogate shares.
_AT_DEFAULT: dict[str, tuple[str, ...]] = {
    "loops": ("1",), "startdelay": ("0",), "end_fsync": ("0",), "fsync_on_close": ("0",),
    "sync": ("0", "none"), "exitall": ("0",), "exitall_on_error": ("0",),
    "continue_on_error": ("none", "0"), "stats": ("1",), "zonemode": ("none",),
    "io_submit_mode": ("inline",), "do_verify": ("1",), "verify_async": ("0",), "nice": ("0",),
    "percentage_random": ("100",), "file_service_type": ("roundrobin",),
    "create_on_open": ("0",), "pre_read": ("0",), "fill_device": ("0",),
    "allow_file_create": ("1",), "allow_mounted_write": ("0",), "serialize_overlap": ("0",),
    "verify_only": ("0",), "file_append": ("0",), "atomic": ("0",), "lockfile": ("none",),
    "offset_increment": ("0",), "number_ios": ("0",), "thinktime_spin": ("0",),
    "thinktime_iotime": ("0",), "thinktime_blocks_type": ("complete",),
    "rate_ignore_thinktime": ("0",), "bs_unaligned": ("0",),
    "random_generator": ("tausworthe", "tausworthe64"),
}

_NO_TRIM = "iogate does not trim"
_NO_BATCH = "iogate submits and reaps requests as they come; it has no batching settings"
_USE_EXPECT = "state the bound as an expectation instead, e.g. read.iops: \">= 1000\" or " \
              "read.clat.p99: \"<= 2ms\""
_NO_PIN = "iogate does not pin its threads or memory"
_NO_ZONES = "iogate does not run zoned block devices in zone mode"
_VERIFY_WAY = "iogate checks every written block with verify: crc32c, xxhash or crc32, after " \
              "the run or every verify_backlog writes"
_NO_LOGS = "iogate does not replay or record I/O logs"
HINTS: dict[str, str] = {
    "exec_prerun": "it runs a shell command; a suite never runs commands: run it before "
                   "iogate",
    "exec_postrun": "it runs a shell command; a suite never runs commands: run it after "
                    "iogate",
    "loops": "iogate runs a workload once; 'repeat: N' measures N separate runs",
    "io_size": "iogate stops at the end of size, or at runtime",
    "number_ios": "iogate stops at the end of size, or at runtime",
    "startdelay": "iogate starts the workloads of a group together",
    "nrfiles": "name each file: filename=a:b:c",
    "iodepth_batch": _NO_BATCH, "iodepth_batch_complete_min": _NO_BATCH,
    "iodepth_batch_complete_max": _NO_BATCH, "iodepth_low": _NO_BATCH,
    "steadystate": "use iogate's steady_state: {metric: read.iops, round: 60s, window: 5}",
    "steadystate_duration": "use iogate's steady_state", "steadystate_ramp_time":
    "use iogate's steady_state",
    **dict.fromkeys(("rate_min", "rate_iops_min", "latency_target", "latency_window",
                     "latency_percentile", "latency_run", "max_latency", "rate_cycle"),
                    _USE_EXPECT),
    "continue_on_error": "an I/O error ends an iogate case as an error",
    "ignore_error": "an I/O error ends an iogate case as an error",
    "offset_increment": "iogate's numjobs threads share one region: write one workload per "
                        "region",
    **dict.fromkeys(("cpus_allowed", "cpumask", "cpus_allowed_policy", "numa_cpu_nodes",
                     "numa_mem_policy", "gtod_cpu", "lockmem", "hugepage-size", "mem"),
                    _NO_PIN),
    **dict.fromkeys(("zonemode", "zonesize", "zonecapacity", "zonerange", "zoneskip",
                     "read_beyond_wp", "max_open_zones", "job_max_open_zones",
                     "ignore_zone_limits", "zone_reset_threshold", "zone_reset_frequency"),
                    _NO_ZONES),
    **dict.fromkeys(("verify_pattern", "verify_interval", "verify_offset",
                     "verify_backlog_batch", "verify_dump", "verify_async", "verify_state_load",
                     "verify_state_save", "experimental_verify", "verify_only", "do_verify"),
                    _VERIFY_WAY),
    **dict.fromkeys(("trim_percentage", "trim_verify_zero", "trim_backlog",
                     "trim_backlog_batch"), _NO_TRIM),
    **dict.fromkeys(("write_iolog", "read_iolog", "read_iolog_chunked", "replay_no_stall",
                     "replay_redirect", "replay_scale", "replay_align", "replay_time_scale",
                     "replay_skip", "merge_blktrace_file", "merge_blktrace_scalars",
                     "merge_blktrace_iters"), _NO_LOGS),
    "sync": "iogate does not open files O_SYNC; fsync: N or fdatasync: N sync after every N "
            "writes",
    "end_fsync": "iogate does not sync when a job ends; fsync: N syncs during it",
    "fsync_on_close": "iogate does not sync when a job ends; fsync: N syncs during it",
    **dict.fromkeys(("exitall", "exitall_on_error", "exit_what"),
                    "iogate lets every workload of a group run to its end"),
    "stats": "iogate measures every workload",
    "filename_format": "name the files in filename",
    "opendir": "name the files in filename",
    "unique_filename": "iogate does not run fio's client and server",
    "profile": "write the profile's jobs out as options",
    "random_generator": "iogate uses its own generator, as fio's default tausworthe does",
    "percentage_random": "iogate's random workloads are all random and its sequential ones "
                         "all sequential",
    "rw_sequencer": "iogate has no offset modifier",
    "file_service_type": "iogate goes to the files of a job in turn (fio's roundrobin)",
    "norandommap": "",  # translated; listed for completeness
    "bs_unaligned": "iogate's request sizes are multiples of the smallest one",
}

# -- the result ---------------------------------------------------------------------------


@dataclass
class _Entry:
    value: Any  # int, bool, str, list of str, or a {read, write} mapping
    src: Option | None  # None: made up for fio's default
    comment: str = ""


@dataclass
class _Workload:
    section: Section
    fio_name: str
    name: str = ""
    keys: dict[str, _Entry] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # about the job as a whole
    group: str | None = None
    stonewall: bool = False
    wait_for: Option | None = None


@dataclass(frozen=True)
class _Origin:
    """Where a line of the suite came from in the job file."""

    line: int
    what: str  # '[job] bs', or '[job]'


@dataclass
class _Imported:
    text: str
    origins: list[_Origin]  # one per line of text
    path: str


class _Problems:
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.items: list[Problem] = []

    def add(self, line: int, what: str, message: str) -> None:
        p = Problem(self.filename, line, 0, what, message)
        if p not in self.items:
            self.items.append(p)

    def option(self, src: Option, message: str) -> None:
        self.add(src.line, f"[{src.section}] {src}" if len(str(src)) <= 60
                 else f"[{src.section}] {src.key}", message)

    def raise_any(self) -> None:
        if self.items:
            raise SuiteError(sorted(self.items, key=lambda p: p.line))


# -- one job ------------------------------------------------------------------------------

_SYNC_ENGINES = {"psync": "psync", "sync": "sync", "pvsync": "psync", "vsync": "sync",
                 "pvsync2": "psync"}
_ENGINES = ("io_uring", "libaio", "psync", "sync", "null")
_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
_TRIM_MODES = ("trim", "randtrim", "trimwrite", "randtrimwrite")
_LONE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$(?:" + "|".join(KEYWORDS) + r")")
# A drive letter (F:...) or a device namespace path (\\.\PhysicalDrive0, \\?\...).
_WINDOWS_PATH = re.compile(r"[A-Za-z]:|\\\\[.?]\\")


def _flag(src: Option) -> bool:
    """fio's boolean: a bare flag is set (for the options that take one); else 0 or 1."""
    if src.value is None:
        if src.key not in BARE_FLAGS:
            raise ValueProblem(f"fio needs a value: {src.key}=1 or {src.key}=0")
        return True
    try:
        n = fio_size(src.value)
    except ValueProblem:
        raise ValueProblem(f"fio takes 0 or 1 for {src.key}, not '{shown(src.value)}'") \
            from None
    if n > 1:
        raise ValueProblem(f"fio takes 0 or 1 for {src.key}, not {src.value}")
    return n == 1


class _Job:
    """The conversion of one fio job (its global options merged) to workload keys."""

    def __init__(self, problems: _Problems, workload: _Workload,
                 options: dict[str, Option]) -> None:
        self.problems = problems
        self.w = workload
        self.opts = options
        self.used: set[str] = set()
        self.kb_base = 1024
        self.rw: str | None = "read"  # None: set by a variable, unknown until run time
        self.engine = "psync"
        self.files = 1
        self.numjobs: int | str = 1

    # helpers
    def get(self, name: str) -> Option | None:
        self.used.add(name)
        return self.opts.get(name)

    def put(self, key: str, value: Any, src: Option | None, comment: str = "") -> None:
        self.w.keys[key] = _Entry(value, src, comment)

    def note(self, src: Option, text: str) -> None:
        self.w.notes.append(f"{src} (line {src.line}): {text}")

    def refuse(self, src: Option, message: str) -> None:
        self.problems.option(src, message)

    def value(self, src: Option) -> str | None:
        if src.value is None or not src.value.strip():
            self.refuse(src, f"{src.key} needs a value")
            return None
        return src.value.strip()

    def number(self, src: Option, text: str, kind: str) -> int | str:
        """A literal as an exact number of base units (bytes, a count, nanoseconds), or a
        suite expression for a value with references or fio's parenthesised arithmetic."""
        if "$" in text or "(" in text:
            if _LONE_REF.fullmatch(text):
                return suite_text(text)

            def literal(t: str) -> str:
                if kind == "time_s" or kind == "time_us":
                    return str(fio_time(t, 1) // 1000)  # microseconds, fio's unit here
                return str(fio_size(t, self.kb_base))

            expr = fio_expression(text, literal)
            if kind.startswith("time"):
                expr = f"{expr} * 1us" if _LONE_REF.fullmatch(expr) or re.fullmatch(
                    r"\([^()]*\)", expr) else f"({expr}) * 1us"
            if "$" in expr:
                return expr
            # No reference: the value is known now, and reads better as a number.
            expr_kind = DURATION if kind.startswith("time") else SIZE if kind == "size" \
                else COUNT
            try:
                return evaluate_int(expr, kind=expr_kind)
            except ExprError as exc:
                raise ValueProblem(f"'{shown(text)}': {exc}") from None
        if kind == "time_s":
            return fio_time(text, 1_000_000)
        if kind == "time_us":
            return fio_time(text, 1)
        return fio_size(text, self.kb_base)

    def bool_key(self, name: str, key: str | None = None) -> None:
        src = self.get(name)
        if src is None:
            return
        if src.value is not None and has_reference(src.value):
            self.refuse(src, "fio reads 0 or 1 from the variable, iogate true or false: set "
                        "the value in the file")
            return
        try:
            self.put(key or name, _flag(src), src)
        except ValueProblem as exc:
            self.refuse(src, str(exc))

    def size_text(self, n: int | str) -> int | str:
        return format_size_exact(n) if isinstance(n, int) and n else n

    def int_key(self, name: str, *, zero_means_off: str = "") -> int | str | None:
        """An integer option, put under its own name; None when not given or refused."""
        src = self.get(name)
        if src is None:
            return None
        text = self.value(src)
        if text is None:
            return None
        try:
            n = self.number(src, text, "count")
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return None
        if n == 0 and zero_means_off:
            self.note(src, zero_means_off)
            return None
        self.put(name, n, src)
        return n

    # the conversion, in an order where each step knows what it depends on
    def convert(self) -> None:
        self._kb_base()
        self._rw()
        self._engine()
        self._numjobs()
        self._files()
        self._sizes()
        self._block_sizes()
        self._iodepth()
        self._times()
        self._direct()
        self._mix()
        self._rates()
        self._randomness()
        self._thinktime()
        self._syncs()
        self.bool_key("invalidate")
        self._data()
        self._verify()
        self._loose_ends()

    def _kb_base(self) -> None:
        src = self.get("kb_base")
        if src is None:
            return
        if src.value not in ("1024", "1000"):
            self.refuse(src, "kb_base is 1024 or 1000")
            return
        self.kb_base = int(src.value)
        self.note(src, "sizes below are read with it and written in iogate's units "
                  "(k = KiB = 1024)")

    def _rw(self) -> None:
        src = self.get("rw")
        if src is None:
            self.put("rw", "read", None, "fio's default rw")
            return
        text = self.value(src)
        if text is None:
            return
        if has_reference(text):
            self.rw = None
            self.put("rw", suite_text(text), src)
            return
        mode, colon, _ = text.partition(":")
        if mode in _TRIM_MODES:
            self.refuse(src, f"rw={mode}: iogate does not trim; it reads and writes")
        elif mode not in _MODES:
            close = difflib.get_close_matches(mode, _MODES, 1)
            self.refuse(src, f"unknown rw '{shown(mode)}'" + (
                f"; did you mean '{close[0]}'?" if close else
                f"; iogate runs {', '.join(_MODES)}"))
        elif colon:
            self.refuse(src, f"'{shown(text)}': iogate has no ':N' offset modifier; write "
                        f"rw={mode}")
        else:
            self.rw = "rw" if mode == "readwrite" else mode
            self.put("rw", self.rw, src)

    def dirs(self) -> tuple[str, ...] | None:
        if self.rw is None:
            return None
        if self.rw in ("read", "randread"):
            return ("read",)
        if self.rw in ("write", "randwrite"):
            return ("write",)
        return ("read", "write")

    def writes(self) -> bool:
        d = self.dirs()
        return d is None or "write" in d

    def _engine(self) -> None:
        src = self.get("ioengine")
        if src is None:
            self.put("ioengine", "psync", None, "fio's default ioengine; iogate's is io_uring")
            return
        text = self.value(src)
        if text is None:
            return
        if has_reference(text):
            self.engine = ""
            self.put("ioengine", suite_text(text), src)
            return
        if text in _ENGINES:
            self.engine = text
            self.put("ioengine", text, src)
        elif text in _SYNC_ENGINES:
            self.engine = _SYNC_ENGINES[text]
            self.put("ioengine", self.engine, src, f"fio's {text} issues the same requests, "
                     "one buffer per call")
        elif text == "windowsaio":
            self.refuse(src, "windowsaio is fio's Windows engine; iogate runs on Linux with "
                        "io_uring, libaio, psync, sync or null")
        elif text == "exec":
            self.refuse(src, "the exec engine runs a program; a suite never runs commands")
        elif text.startswith("external"):
            self.refuse(src, "an external engine loads a shared library; iogate runs only "
                        "its own engines: io_uring, libaio, psync, sync or null")
        elif text == "posixaio":
            self.refuse(src, "posixaio is not supported; use libaio or io_uring (queued) or "
                        "psync (synchronous)")
        else:
            self.refuse(src, f"ioengine '{shown(text)}' is not supported; iogate runs "
                        "io_uring, libaio, psync, sync or null")

    def _numjobs(self) -> None:
        n = self.int_key("numjobs")
        if n is not None:
            self.numjobs = n

    def _files(self) -> None:
        src = self.get("filename")
        directory = self.get("directory")
        nrfiles = self.get("nrfiles")
        names: list[str] = []
        if src is not None:
            text = self.value(src)
            if text is None:
                return
            for name in filename_list(text):
                if not name:
                    self.refuse(src, "an empty file name (two ':' in a row, or one at an "
                                "end); escape a ':' in a name as '\\:'")
                    return
                if name == "-":
                    self.refuse(src, "'-' is fio's stdin or stdout; iogate needs a file or "
                                "a device")
                    return
                if _WINDOWS_PATH.match(name):
                    escaped = name.replace(":", "\\:")
                    self.refuse(src, f"'{shown(name)}' is a Windows path; on Linux name a "
                                "file or a device such as /dev/sdb (for a file of that name "
                                f"in the working directory, write ./{shown(escaped)})")
                    return
                names.append(name)
        if directory is not None:
            dtext = self.value(directory)
            if dtext is None:
                return
            if ":" in dtext.replace("\\:", ""):
                self.refuse(directory, "several directories: iogate takes one; name the "
                            "files in filename")
                return
            dtext = dtext.replace("\\:", ":")
            if names:
                names = [dtext.rstrip("/") + "/" + n for n in names]
                self.note(directory, "joined to the file names")
            else:
                names = [dtext.rstrip("/") + f"/{self.w.fio_name}.0.0"]
                self.note(directory, f"fio's file name for the job, {self.w.fio_name}.0.0, "
                          "in that directory")
        if nrfiles is not None:
            try:
                count = fio_size(nrfiles.value or "")
            except ValueProblem as exc:
                self.refuse(nrfiles, str(exc))
                count = 1
            if names and count != 1:
                self.note(nrfiles, "fio ignores nrfiles when filename is given")
            elif count != 1:
                self.refuse(nrfiles, f"fio's nrfiles={count} makes {count} files named after "
                            "the job; iogate needs them named: filename=a:b:c")
        if not names:
            self.w.notes.append("no filename: fio makes a file per job and clone in the "
                                "working directory (JOB.0.0); iogate a temporary one per "
                                "workload, shared by its threads, in $IOGATE_TMPDIR (else "
                                "/var/tmp), removed afterwards")
            return
        assert src is not None or directory is not None
        where = src if src is not None else directory
        assert where is not None
        self.files = len(names)
        values = [suite_text(n) for n in names]
        comment = ""
        if any(has_reference(n) for n in names):
            comment = "fio splits a variable's value at ':' into several files; iogate reads " \
                      "it as one name"
        self.put("filename", values[0] if len(values) == 1 else values, where, comment)

    def _sizes(self) -> None:
        size = self.get("size")
        filesize = self.get("filesize")
        offset = self.get("offset")
        size_value: int | str | None = None
        if size is not None and (text := self.value(size)) is not None:
            try:
                size_value = self.number(size, text, "size")
            except ValueProblem as exc:
                self.refuse(size, str(exc))
                return
        if filesize is not None and (text := self.value(filesize)) is not None:
            if re.search(r"\d\s*[-:]\s*\d", text) and "(" not in text:
                self.refuse(filesize, "a range of file sizes: iogate's files of a job are "
                            "all one size")
                return
            try:
                per_file = self.number(filesize, text, "size")
            except ValueProblem as exc:
                self.refuse(filesize, str(exc))
                return
            total: int | str = per_file * self.files if isinstance(per_file, int) else (
                per_file if self.files == 1 else f"{self.files} * ({per_file})")
            comments = [] if self.files == 1 else [
                f"fio's filesize is per file; iogate's size is the total over the "
                f"{self.files} files"]
            if size is not None and size_value != total:
                # fio's size is then the amount to move over files of filesize; going on
                # until the runtime, it only bounds nothing.
                time_based = self.opts.get("time_based")
                if time_based is None or time_based.value not in (None, "1"):
                    self.refuse(filesize, "size and filesize both given: fio then lays out "
                                "files of filesize and moves size bytes; iogate's size is "
                                "both, the region of all its files together: give one")
                    return
                comments.append(f"size={size.value} (line {size.line}) is the amount fio "
                                "moves; time_based runs past it")
            self.put("size", self.size_text(total), filesize, "; ".join(comments))
        elif size_value is not None:
            self.put("size", self.size_text(size_value), size)
        elif size is None:
            self.w.notes.append("no size: fio uses the whole file or device; iogate needs "
                                "one")
            self.problems.add(self.w.section.line, f"[{self.w.section.name}]",
                              "no size (or filesize): fio uses the whole file or device; "
                              "iogate needs a size: add size= to the job or to [global]")
        if offset is not None and (text := self.value(offset)) is not None:
            try:
                n = self.number(offset, text, "size")
            except ValueProblem as exc:
                self.refuse(offset, str(exc))
                return
            self.put("offset", self.size_text(n) if n else 0, offset)

    def _block_sizes(self) -> None:
        given = [(name, src) for name in ("bs", "bsrange", "bssplit")
                 if (src := self.get(name)) is not None]
        align = self.get("blockalign")
        if align is not None and (text := self.value(align)) is not None:
            self._per_direction("blockalign", align, text, 0)
        if not given:
            return
        # fio: bs and bsrange set the same sizes (the last one read wins); bssplit, when
        # set, is used instead of them for its directions.
        split = next((src for name, src in given if name == "bssplit"), None)
        sizes = max((src for name, src in given if name != "bssplit"),
                    key=lambda s: (s.section != "global", s.line), default=None)
        for _, src in given:
            if src is not split and src is not sizes:
                self.note(src, f"fio uses {sizes.key if sizes else 'bssplit'} (line "
                          f"{(sizes or split).line}) instead")  # type: ignore[union-attr]
        if split is not None and sizes is not None:
            self.note(sizes, "fio uses bssplit; this gives the size of a direction bssplit "
                      "leaves empty")
        if split is not None and any(has_reference(s.value or "") for _, s in given):
            self.refuse(split, "bssplit with a variable, or with bs or bsrange from a "
                        "variable: write the values out")
            return
        if split is None:
            assert sizes is not None
            text = self.value(sizes)
            if text is None:
                return
            if sizes.key in ("bs", "blocksize"):
                self._per_direction("bs", sizes, text, DEFAULT_BS)
            else:
                self._bsrange(sizes, text)
            return
        self._bssplit(split, sizes)

    def _per_direction(self, key: str, src: Option, text: str, default: int) -> None:
        if has_reference(text) and "," not in text:
            self.put(key, suite_text(text), src)
            return
        try:
            parts = directions(text, "sizes")
            values = [self.number(src, p, "size") if p else default for p in parts]
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        shown_values = [self.size_text(v) for v in values]
        if shown_values[0] == shown_values[1]:
            self.put(key, shown_values[0], src)
        else:
            self.put(key, {"read": shown_values[0], "write": shown_values[1]}, src)

    def _range(self, src: Option, text: str) -> tuple[int, int, str] | None:
        """One direction of bsrange: (lo, hi, comment) as fio issues it."""
        lo_text, sep, hi_text = text.replace(":", "-").partition("-")
        if not sep:
            lo_text = hi_text = text
        lo, hi = fio_size(lo_text, self.kb_base), fio_size(hi_text, self.kb_base)
        if lo == 0 or hi == 0:
            raise ValueProblem("a block size of 0")
        if lo > hi:
            lo, hi = hi, lo  # fio swaps them
        comment = ""
        if lo & (lo - 1):
            if lo != hi:
                raise ValueProblem(f"'{shown(text)}': with a minimum that is not a power of "
                                   "two fio issues any size in between; iogate's sizes are "
                                   "multiples of the minimum")
        elif hi % lo:
            comment = f"fio issues multiples of {format_size_exact(lo)} up to " \
                      f"{format_size_exact(hi - hi % lo)}"
            hi -= hi % lo
        return lo, hi, comment

    def _bsrange(self, src: Option, text: str) -> None:
        if has_reference(text):
            self.put("bsrange", suite_text(text), src)
            return
        try:
            parts = directions(text, "ranges", ",/")
            ranges = [self._range(src, p) if p else (DEFAULT_BS, DEFAULT_BS, "")
                      for p in parts]
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        texts = [f"{format_size_exact(r[0])}-{format_size_exact(r[1])}" for r in ranges
                 if r is not None]
        comment = "; ".join(dict.fromkeys(r[2] for r in ranges if r is not None and r[2]))
        if ranges[0] == ranges[1] and ranges[0] is not None and ranges[0][0] == ranges[0][1]:
            self.put("bs", format_size_exact(ranges[0][0]), src, comment)
        elif texts[0] == texts[1]:
            self.put("bsrange", texts[0], src, comment)
        else:
            self.put("bsrange", {"read": texts[0], "write": texts[1]}, src, comment)

    def _bssplit(self, split: Option, sizes: Option | None) -> None:
        text = self.value(split)
        if text is None:
            return
        try:
            parts = directions(text, "splits")
            fallback = None
            if sizes is not None and sizes.value:
                fallback = directions(sizes.value, "sizes", "," if sizes.key in (
                    "bs", "blocksize") else ",/")
            out: list[str] = []
            for i, part in enumerate(parts):
                if part:
                    entries = []
                    for entry in part.split(":"):
                        bs_text, slash, pct = entry.partition("/")
                        bs = format_size_exact(fio_size(bs_text, self.kb_base))
                        entries.append(f"{bs}/{pct.strip()}" if slash and pct.strip() else bs)
                    out.append(":".join(entries))
                    continue
                # An empty direction uses the job's bs (or bsrange) for that direction.
                other = fallback[i] if fallback and fallback[i] else ""
                if not other:
                    out.append(f"{format_size_exact(DEFAULT_BS)}/100")
                    continue
                r = self._range(split, other)
                if r is None or r[0] != r[1]:
                    raise ValueProblem("bssplit leaves a direction to a bsrange; iogate "
                                       "cannot mix a split and a range: give both "
                                       "directions in bssplit")
                out.append(f"{format_size_exact(r[0])}/100")
        except ValueProblem as exc:
            self.refuse(split, str(exc))
            return
        self.put("bssplit", out[0] if out[0] == out[1] else {"read": out[0], "write": out[1]},
                 split)

    def _iodepth(self) -> None:
        src = self.get("iodepth")
        if src is None:
            return
        if self.engine in ("psync", "sync"):
            if src.value not in ("1", None):
                self.note(src, f"fio's {self.engine} is synchronous: one request in flight "
                          "whatever iodepth says, so iogate's iodepth stays 1")
                return
        self.int_key("iodepth")

    def _times(self) -> None:
        for name in ("runtime", "ramp_time"):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            try:
                n = self.number(src, text, "time_s")
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                continue
            if n == 0:
                self.note(src, "0 is fio's default: no limit" if name == "runtime" else
                          "0 is fio's default: none")
                continue
            self.put(name, format_duration_exact(n) if isinstance(n, int) else n, src)
        time_based = self.opts.get("time_based")
        if time_based is not None and "runtime" not in self.w.keys:
            self.used.add("time_based")
            self.note(time_based, "no runtime: fio ignores it")
        else:
            self.bool_key("time_based")

    def _direct(self) -> None:
        direct, buffered = self.get("direct"), self.get("buffered")
        last = max((s for s in (direct, buffered) if s is not None),
                   key=lambda s: (s.section != "global", s.line), default=None)
        if last is None:
            return
        if last is buffered:
            if direct is not None:
                self.note(direct, "fio uses buffered, read later")
            try:
                self.put("direct", not _flag(buffered), buffered, "fio's buffered=0 is "
                         "direct I/O" if not _flag(buffered) else "")
            except ValueProblem as exc:
                self.refuse(buffered, str(exc))
            return
        if buffered is not None:
            self.note(buffered, "fio uses direct, read later")
        self.bool_key("direct")

    def _mix(self) -> None:
        srcs = [s for s in (self.get("rwmixread"), self.get("rwmixwrite")) if s is not None]
        if not srcs:
            return
        # fio sets both from either; the last one read wins.
        src = max(srcs, key=lambda s: (s.section != "global", s.line))
        for other in srcs:
            if other is not src:
                self.note(other, f"fio uses {src} (line {src.line}), read later")
        dirs = self.dirs()
        if dirs is not None and len(dirs) == 1:
            self.note(src, f"fio ignores it for rw={self.rw}")
            return
        text = self.value(src)
        if text is None:
            return
        try:
            n = self.number(src, text, "count")
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if isinstance(n, int) and n > 100:
            self.refuse(src, f"{src.key} is a percentage, at most 100")
            return
        if src.key == "rwmixwrite":
            self.put("rwmixread", 100 - n if isinstance(n, int) else f"100 - ({n})", src,
                     f"fio's rwmixwrite={text}")
        else:
            self.put("rwmixread", n, src)

    def _rates(self) -> None:
        for name, kind in (("rate", "size"), ("rate_iops", "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            self._rate(name, kind, src, text)
        src = self.get("rate_process")
        if src is not None and (text := self.value(src)) is not None:
            if text not in ("linear", "poisson"):
                self.refuse(src, "rate_process is linear or poisson")
            elif "rate" in self.w.keys or "rate_iops" in self.w.keys:
                self.put("rate_process", text, src)
            else:
                self.note(src, "no rate is set: fio ignores it")

    def _rate(self, name: str, kind: str, src: Option, text: str) -> None:
        dirs = self.dirs()
        if dirs is None:
            self.refuse(src, f"{name} with rw from a variable: fio's rate is per direction, "
                        "iogate's single rate is split by the mix; set rw in the file")
            return
        try:
            parts = directions(text, "rates")
            values: dict[str, int | str] = {}
            for d, part in zip(("read", "write"), parts, strict=True):
                part = part.removesuffix("/s") if kind == "size" else part
                if d in dirs and part:
                    v = self.number(src, part, kind)
                    if v != 0:
                        values[d] = v
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if not values:
            self.note(src, "no limit for the directions this job issues")
            return
        if len(dirs) == 2 and len(values) == 1:
            only = next(iter(values))
            self.refuse(src, f"fio limits only the {only}s of this mixed job; iogate limits "
                        "both directions of a mixed workload or neither: give both")
            return
        notes = []
        if self.numjobs != 1:
            notes.append(f"fio's {name} is per clone: times numjobs={self.numjobs}")
            for d, v in values.items():
                if isinstance(v, int) and isinstance(self.numjobs, int):
                    values[d] = v * self.numjobs
                else:
                    values[d] = f"{_operand(v)} * {_operand(self.numjobs)}"
        shown_values = {d: (format_size_exact(v) + "/s" if kind == "size" and isinstance(v, int)
                            else v) for d, v in values.items()}
        if len(values) == 2:
            if "," not in text:
                notes.insert(0, f"fio's {name}={text} limits each direction; iogate's single "
                                "value would be the total")
            self.put(name, shown_values, src, "; ".join(notes))
        else:
            self.put(name, next(iter(shown_values.values())), src, "; ".join(notes))

    def _randomness(self) -> None:
        random_rw = self.rw is None or self.rw.startswith("rand")
        src = self.get("random_distribution")
        if src is not None and (text := self.value(src)) is not None:
            if "," in text:
                self.refuse(src, "a distribution per direction: iogate takes one for the job")
            elif text.startswith("zoned_abs"):
                self.refuse(src, "zoned_abs is not supported; zoned takes percentages of the "
                            "region")
            elif re.fullmatch(r"(zipf|pareto|normal):[^:]+:.+", text):
                self.refuse(src, "a distribution with a centre: iogate's have none")
            elif text.partition(":")[0] not in ("random", "zipf", "pareto", "normal", "zoned"):
                self.refuse(src, f"unknown random_distribution '{shown(text)}': fio takes "
                            "random, zipf:THETA, pareto:H, normal:SIGMA or zoned:...")
            elif not random_rw and text != "random":
                self.note(src, f"fio ignores it for rw={self.rw}")
            else:
                self.put("random_distribution", text, src)
        randseed = self.get("randseed")
        if randseed is not None and (text := self.value(randseed)) is not None:
            try:
                self.put("randseed", self.number(randseed, text, "count"), randseed)
            except ValueProblem as exc:
                self.refuse(randseed, str(exc))
        if randseed is not None and "randrepeat" in self.opts:
            self.note(self.opts["randrepeat"], "randseed sets the seed; fio ignores "
                      "randrepeat then")
            self.used.add("randrepeat")
        else:
            self.bool_key("randrepeat")
        norandommap = self.get("norandommap")
        if norandommap is not None:
            self.note(norandommap, "iogate's random offsets never use a random map")
        elif random_rw and self.rw is not None:
            self.w.notes.append("fio touches each block once per pass (its random map); "
                                "iogate draws offsets independently, like fio's norandommap")

    def _thinktime(self) -> None:
        src = self.get("thinktime")
        blocks = self.get("thinktime_blocks")
        set_ = False
        if src is not None and (text := self.value(src)) is not None:
            try:
                n = self.number(src, text, "time_us")
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                return
            if n == 0:
                self.note(src, "0 is fio's default: none")
            else:
                comment = "a bare number in the variable is microseconds to fio, seconds " \
                          "to iogate" if _LONE_REF.fullmatch(text) else ""
                self.put("thinktime", format_duration_exact(n) if isinstance(n, int) else n,
                         src, comment)
                set_ = True
        if blocks is not None:
            if set_:
                self.int_key("thinktime_blocks")
            else:
                self.note(blocks, "no thinktime: fio ignores it")

    def _syncs(self) -> None:
        for name in ("fsync", "fdatasync"):
            src = self.opts.get(name)
            if src is None:
                self.used.add(name)
                continue
            if not self.writes():
                self.used.add(name)
                self.note(src, "the job never writes: fio never syncs")
            elif self.engine == "null":
                self.used.add(name)
                self.note(src, "the null engine has no file to sync")
            else:
                self.int_key(name, zero_means_off="0 is fio's default: no syncs")

    def _data(self) -> None:
        data = ("buffer_compress_percentage", "buffer_compress_chunk", "buffer_pattern",
                "zero_buffers", "refill_buffers", "dedupe_percentage", "scramble_buffers")
        if not self.writes():
            for name in data:
                if (src := self.get(name)) is not None:
                    self.note(src, "shapes written data; this job never writes")
            return
        self.int_key("buffer_compress_percentage")
        chunk = self.get("buffer_compress_chunk")
        if chunk is not None and (text := self.value(chunk)) is not None:
            if "buffer_compress_percentage" not in self.w.keys:
                self.note(chunk, "no buffer_compress_percentage: fio ignores it")
            else:
                try:
                    n = self.number(chunk, text, "size")
                except ValueProblem as exc:
                    self.refuse(chunk, str(exc))
                    n = None
                bs = self.w.keys.get("bs")
                if n == 0:
                    write_bs = bs.value["write"] if bs is not None and isinstance(
                        bs.value, dict) else bs.value if bs is not None else format_size_exact(
                        DEFAULT_BS)
                    if "bsrange" in self.w.keys or "bssplit" in self.w.keys:
                        self.refuse(chunk, "0 means one chunk per block, and this job's "
                                    "blocks vary in size: give a chunk size")
                    else:
                        self.put("buffer_compress_chunk", write_bs, chunk,
                                 "fio's 0: one chunk per block")
                elif n is not None:
                    self.put("buffer_compress_chunk", self.size_text(n), chunk)
        pattern = self.get("buffer_pattern")
        if pattern is not None and (text := self.value(pattern)) is not None:
            self._pattern(pattern, text)
        for name in ("zero_buffers", "refill_buffers"):
            self.bool_key(name)
        self.int_key("dedupe_percentage")
        scramble = self.get("scramble_buffers")
        shaped = any(k in self.w.keys for k in ("refill_buffers", "buffer_compress_percentage",
                                                "dedupe_percentage", "buffer_pattern",
                                                "zero_buffers"))
        if scramble is not None:
            self.note(scramble, "iogate never alters a buffer a little; refill_buffers "
                      "gives every write new contents")
        elif not shaped and "verify" not in self.opts:
            self.w.notes.append("fio alters each buffer a little before it is written again "
                                "(scramble_buffers); iogate writes it as it is: add "
                                "refill_buffers: true for new contents every write")

    def _pattern(self, src: Option, text: str) -> None:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            self.put("buffer_pattern", text, src)
        elif len(text) > 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
            inner = text[1:-1]
            # iogate reads a string as its bytes too, unless it looks like hex.
            keep = inner.strip()[:2].lower() == "0x" or inner != inner.strip()
            self.put("buffer_pattern", suite_text(text if keep else inner), src)
        elif text.startswith("'"):
            self.refuse(src, "a pattern read from a file: iogate takes hex (0xdeadbeef) or a "
                        "\"string\"")
        elif re.fullmatch(r"-?[0-9]+", text):
            self.refuse(src, "a decimal pattern: write its bytes in hex (0x...) or a "
                        "\"string\"")
        else:
            self.refuse(src, f"'{shown(text)}' is not a single hex value or \"string\"; fio's "
                        "combined patterns are not supported")

    def _verify(self) -> None:
        src = self.get("verify")
        names = {"crc32c": "crc32c", "crc32c-intel": "crc32c", "crc32": "crc32",
                 "xxhash": "xxhash", "0": "none", "null": "none"}
        if src is not None and (text := self.value(src)) is not None:
            if text not in names:
                self.refuse(src, f"verify '{shown(text)}' is not supported: " + _VERIFY_WAY)
            elif names[text] == "none":
                self.note(src, "no verification")
            else:
                self.put("verify", names[text], src,
                         "fio's xxhash is XXH32, iogate's XXH64: the same check, a wider sum"
                         if text == "xxhash" else "")
        if "verify" in self.w.keys:
            self.int_key("verify_backlog")
            self.bool_key("verify_fatal")
        else:
            for name in ("verify_backlog", "verify_fatal"):
                if (other := self.get(name)) is not None:
                    self.note(other, "no verify: fio ignores it")

    def _loose_ends(self) -> None:
        """Every option not converted above: noted, accepted at its default, or refused."""
        for name, src in self.opts.items():
            if name in self.used or name in ("name", "description", "wait_for", "stonewall"):
                continue
            if src.value is None and src.key not in BARE_FLAGS and name in FIO_OPTIONS:
                self.refuse(src, f"fio needs a value: {src.key}=...")
            elif name in OUTPUT_ONLY:
                self.note(src, OUTPUT_ONLY[name])
            elif name in AS_IOGATE_DOES:
                self.note(src, AS_IOGATE_DOES[name])
            elif name in _AT_DEFAULT and _default_value(src) in _AT_DEFAULT[name]:
                self.note(src, "fio's default")
            elif name in FIO_OPTIONS:
                hint = HINTS.get(name) or ("an option of fio's I/O engines; iogate's engines "
                                           "take none" if name in _ENGINE_OPTIONS else "")
                self.refuse(src, f"fio's {src.key} is not supported" + (
                    f": {hint}" if hint else ": iogate has no such setting; remove it to "
                    "import the job"))
            else:
                close = [src.key.lower()] if src.key.lower() in FIO_OPTIONS else \
                    difflib.get_close_matches(src.key, sorted(FIO_OPTIONS), 1, 0.75)
                self.refuse(src, f"unknown fio option '{shown(src.key)}'" + (
                    f"; did you mean '{close[0]}'?" if close else ""))


def _operand(value: int | str) -> str:
    """A value as one term of a product: numbers and references as they are."""
    text = str(value)
    return text if isinstance(value, int) or _LONE_REF.fullmatch(text) else f"({text})"


def _default_value(src: Option) -> str:
    if src.value is None:
        return "1"
    return src.value.strip()


# -- the whole file -----------------------------------------------------------------------

_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


def _suite_name(raw: str, fallback: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode()
    name = _NAME_BAD.sub("-", ascii_text).strip("-")[:NAME_MAX]
    return name or fallback


def _effective(sections: list[Section]) -> list[tuple[Section, dict[str, Option]]]:
    """Each job with its options: the global sections above it, then its own; a later
    setting of an option replaces an earlier one, as fio parses them in order."""
    defaults: dict[str, Option] = {}
    jobs = []
    for section in sections:
        own: dict[str, Option] = {}
        for opt in section.options:
            name = ALIASES.get(opt.key, opt.key)
            if name == "name" and section.is_global:
                continue  # fio names each job by its section
            own[name] = opt
        if section.is_global:
            defaults.update(own)
        else:
            jobs.append((section, {**defaults, **own}))
    return jobs


def _groups(workloads: list[_Workload], problems: _Problems) -> None:
    """fio's schedule as iogate's: units that run one after another, the jobs of one unit
    at once (a group when there are several)."""
    by_name: dict[str, list[_Workload]] = {}
    for w in workloads:
        by_name.setdefault(w.fio_name, []).append(w)
    segment: list[_Workload] = []
    segments: list[list[_Workload]] = []
    for w in workloads:
        if w.stonewall and segment:
            segments.append(segment)
            segment = []
        segment.append(w)
    if segment:
        segments.append(segment)
    counter = 0
    for seg in segments:
        level: dict[int, int] = {}  # id(workload) -> level
        for w in seg:
            waitee = None
            if w.wait_for is not None:
                target = (w.wait_for.value or "").strip()
                earlier = [v for v in by_name.get(target, []) if workloads.index(v)
                           < workloads.index(w)]
                if not earlier:
                    problems.option(w.wait_for, f"no job named '{shown(target)}' comes before "
                                    "this one: fio waits only for a job defined earlier")
                elif len(by_name[target]) > 1:
                    problems.option(w.wait_for, f"several jobs are named '{shown(target)}': "
                                    "fio needs the job waited for to have a unique name")
                elif earlier[0] in seg:
                    waitee = earlier[0]
                else:
                    w.notes.append(f"wait_for={target} (line {w.wait_for.line}): that job is "
                                   "behind a stonewall already")
            level[id(w)] = 0 if waitee is None else level[id(waitee)] + 1
        depth = max(level.values())
        units = [[w for w in seg if level[id(w)] == k] for k in range(depth + 1)]
        for k, unit in enumerate(units[:-1]):
            if len(unit) > 1:
                waiter = next(w for w in units[k + 1])
                assert waiter.wait_for is not None
                waited = (waiter.wait_for.value or "").strip()
                others = ", ".join(f"'{w.fio_name}'" for w in unit if w.fio_name != waited)
                problems.option(waiter.wait_for, f"fio starts '{waiter.fio_name}' when "
                                f"'{waited}' ends, while "
                                f"{others} may still run; iogate runs workloads together "
                                "(one group) or one after another: use stonewall, or wait "
                                "for the last of them")
        for k, unit in enumerate(units):
            if k > 0:
                for w in unit:
                    assert w.wait_for is not None
                    w.notes.append(f"wait_for={w.wait_for.value} (line {w.wait_for.line}): "
                                   "runs after it, in the order of the workloads")
            if len(unit) > 1:
                counter += 1
                for w in unit:
                    w.group = f"g{counter}"


def _convert(path: str, text: str | None) -> _Imported:
    jobfile, syntax = parse_lenient(path, text)
    problems = _Problems(path)
    problems.items += syntax
    for inc in jobfile.includes:
        problems.add(inc.line, f"[{inc.section}] include" if inc.section else "include",
                     f"include {shown(inc.value or '')}: iogate imports one file; copy the "
                     "included options into this section")
    workloads: list[_Workload] = []
    used_names: set[str] = set()
    for section, options in _effective(jobfile.sections):
        fio_name = (options["name"].value or "") if "name" in options and \
            options["name"].section == section.name and options["name"].value else \
            section.name
        w = _Workload(section, fio_name)
        base = _suite_name(fio_name, "job")
        name, n = base, 1
        while name in used_names:
            n += 1
            name = f"{base[:NAME_MAX - len(str(n)) - 1]}-{n}"
        used_names.add(name)
        w.name = name
        stonewall = options.get("stonewall")
        if stonewall is not None:
            try:
                w.stonewall = _flag(stonewall)
            except ValueProblem as exc:
                problems.option(stonewall, str(exc))
        w.wait_for = options.get("wait_for")
        desc = options.get("description")
        if desc is not None and desc.section != "global" and desc.value:
            w.notes.insert(0, desc.value)
        job = _Job(problems, w, options)
        try:
            job.convert()
        except ValueProblem as exc:  # a value problem outside the steps' own handling
            problems.add(section.line, f"[{section.name}]", str(exc))
        workloads.append(w)
    _groups(workloads, problems)
    problems.raise_any()
    # The first global description describes the suite; fio names jobs by their sections.
    header: list[str] = []
    description = None
    for opt in (o for s in jobfile.sections if s.is_global for o in s.options):
        if opt.key == "description" and opt.value and description is None:
            description = opt.value
        elif opt.key in ("description", "name"):
            header.append(f"{opt} (line {opt.line}, [global]): fio " + (
                "describes the run by the first description" if opt.key == "description"
                else "names each job by its section or its own name="))
    return _render(path, jobfile, workloads, description, header)


# -- YAML ---------------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./+-]*")
_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_KEY_ORDER = list(JobFields.model_fields)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    # Plain only when any YAML reader takes it for this very string (YAML 1.1 reads more
    # words as numbers, booleans and dates than 1.2 does: the stricter test).
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text and not _NUMBER.fullmatch(text):
        return text
    return json.dumps(text)  # JSON's double-quoted strings are YAML's too


def _value_text(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


class _Lines:
    def __init__(self) -> None:
        self.text: list[str] = []
        self.origins: list[_Origin] = []

    def add(self, line: str, origin: _Origin) -> None:
        self.text.append(line)
        self.origins.append(origin)

    def comment(self, indent: str, text: str, origin: _Origin) -> None:
        for part in textwrap.wrap(text, 98 - len(indent), break_on_hyphens=False,
                                  break_long_words=False) or [""]:
            self.add(f"{indent}# {part}".rstrip(), origin)


def _keys(lines: _Lines, indent: str, keys: dict[str, _Entry], fallback: _Origin) -> None:
    for key in sorted(keys, key=lambda k: _KEY_ORDER.index(k) if k in _KEY_ORDER else 99):
        entry = keys[key]
        origin = fallback if entry.src is None else _Origin(
            entry.src.line, f"[{entry.src.section}] {entry.src.key}")
        for note in entry.src.notes if entry.src is not None else ():
            lines.comment(indent, f"fio: {note}", origin)
        if entry.comment:
            lines.comment(indent, entry.comment, origin)
        lines.add(f"{indent}{key}: {_value_text(entry.value)}", origin)


def _from_global(entry: _Entry) -> bool:
    return entry.src is None or entry.src.section == "global"


def _render(path: str, jobfile: JobFile, workloads: list[_Workload],
            description: str | None, header: list[str]) -> _Imported:
    # A key goes to the defaults when every job has it, the same, from a global section.
    shared: dict[str, _Entry] = {}
    if len(workloads) > 0:
        for key, entry in workloads[0].keys.items():
            same = all(key in w.keys and w.keys[key].value == entry.value
                       and w.keys[key].comment == entry.comment
                       and _from_global(w.keys[key])
                       and (entry.src is None) == (w.keys[key].src is None)
                       for w in workloads)
            if same and (entry.src is not None or len(workloads) > 1):
                shared[key] = entry
    lines = _Lines()
    top = _Origin(1, "")
    source = Path(path).name
    lines.comment("", f"Imported from the fio job file {source} by iogate import. Each "
                  "workload keeps its fio job's meaning; comments say where iogate spells it "
                  "differently or where an option has no effect.", top)
    if any(w.group for w in workloads):
        lines.comment("", "Workloads of one group run together, as fio runs the jobs "
                      "between two stonewalls; the others run one after another.", top)
    if any("${" in str(e.value) for w in workloads for e in w.keys.values()):
        lines.comment("", "${VAR} is read from the environment when the suite is loaded, "
                      "with iogate's units; unlike fio, an unset variable is an error.", top)
    for section in jobfile.sections:
        if section.is_global:
            for note in section.notes:
                lines.comment("", f"fio: {note}", _Origin(section.line, "[global]"))
    for note in header:
        lines.comment("", note, top)
    lines.add(f"suite: {_scalar(_suite_name(Path(path).stem, 'fio-job'))}", top)
    if description:
        lines.add(f"description: {_scalar(description)}", top)
    if shared:
        lines.add("defaults:", top)
        _keys(lines, "  ", shared, top)
    # Notes that hold for every job are said once.
    common = [n for n in workloads[0].notes if all(n in w.notes for w in workloads)] \
        if len(workloads) > 1 else []
    for note in common:
        lines.comment("", f"All jobs: {note}", top)
    lines.add("workloads:", top)
    for w in workloads:
        origin = _Origin(w.section.line, f"[{w.section.name}]")
        for note in w.section.notes:
            lines.comment("  ", f"fio: {note}", origin)
        title = f"[{w.section.name}], line {w.section.line}"
        if w.fio_name != w.section.name:
            title += f", named {w.fio_name}"
        if w.name != w.fio_name:
            title += f" (renamed: iogate's names are {_NAME_BAD.pattern[2:-2]})"
        lines.comment("  ", f"fio job {title}", origin)
        for note in w.notes:
            if note not in common:
                lines.comment("  ", note, origin)
        lines.add(f"  - name: {_scalar(w.name)}", origin)
        if w.group:
            lines.add(f"    group: {w.group}", origin)
        _keys(lines, "    ", {k: e for k, e in w.keys.items() if k not in shared}, origin)
    return _Imported("\n".join(lines.text) + "\n", lines.origins, path)


# -- loading ------------------------------------------------------------------------------

_UNSET = re.compile(r"variable '[A-Za-z_][A-Za-z0-9_]*' is not set")


def _check(imported: _Imported, env: Mapping[str, str] | None, *, strict: bool
           ) -> LoadedSuite | None:
    """Load the suite; report what the loader finds at the fio line each value came from.
    Unless ``strict``, an unset variable is left for the run to report."""
    from iogate.spec import load_suite_text

    try:
        return load_suite_text(imported.text, imported.path, env)
    except SuiteError as exc:
        problems = _Problems(imported.path)
        for p in exc.problems:
            if not strict and _UNSET.search(p.message):
                continue
            origin = imported.origins[p.line - 1] if 0 < p.line <= len(imported.origins) \
                else _Origin(0, "")
            problems.add(origin.line, origin.what, p.message)
        problems.raise_any()
    return None


def import_jobfile(path: Path | str, text: str | None = None) -> str:
    """A fio job file as suite YAML; raise SuiteError naming every problem at its fio line.

    The suite is checked with the current environment; a variable that is not set is left
    for the run to report."""
    imported = _convert(str(path), text)
    _check(imported, None, strict=False)
    return imported.text


def load_jobfile(path: Path | str, text: str | None = None,
                 env: Mapping[str, str] | None = None) -> LoadedSuite:
    """Import a job file and load the suite, as :func:`iogate.spec.load_suite` loads one."""
    imported = _convert(str(path), text)
    suite = _check(imported, env, strict=True)
    assert suite is not None
    return suite


def is_jobfile(path: Path | str) -> bool:
    """A ``.fio`` file, or one whose first line that is not blank or a comment is a
    ``[section]`` (a suite starts with a key)."""
    p = Path(path)
    if p.suffix.lower() == ".fio":
        return True
    try:
        with open(p, "rb") as f:
            head = f.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return False
    for line in head.splitlines():
        s = line.strip()
        if s and s[0] not in ";#":
            return s.startswith("[") and s.endswith("]")
    return False

