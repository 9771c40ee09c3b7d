"""Job specs as fio options, and fio job files that say exactly that and nothing else.

:func:`job_options` expresses a :class:`~iogate.job.JobSpec` in fio's options, or
raises :class:`FioUnsupported` naming every part of it that fio would run differently.
:func:`render_jobfile` writes sections of options as a job file; it takes only options from
:data:`KNOWN_KEYS` and refuses anything fio would read as more than the value written:

- a value is cut at ``;`` or ``#`` (a comment), has ``${VAR}``, ``$ncpus``, ``$pagesize`` and
  ``$mb_memory`` replaced, loses blanks at either end, and ends at a line break;
- a line longer than fio's line buffer (4096 bytes in older versions) is cut, and its tail is
  read as a line of its own;
- a section whose name starts with ``global`` sets options for every job after it, and a line
  that starts with ``include`` reads another file.

Options that run commands or load code (:data:`FORBIDDEN`, :func:`forbidden`) are never
written, whatever asks for them.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal

from iogate.engine import catalog
from iogate.errors import EngineError
from iogate.expr import printable, shown
from iogate.job import PPM, BsEntry, JobSpec, PrioEntry
from iogate.spec.keys import PLAIN
from iogate.spec.modes import TRIM_MODES

__all__ = [
    "FLAG_KEYS",
    "FORBIDDEN",
    "KNOWN_KEYS",
    "MAX_LINE_BYTES",
    "MAX_SECTION_CHARS",
    "VALUE_FORMS",
    "FioUnsupported",
    "forbidden",
    "job_options",
    "render_jobfile",
    "section_name",
    "split_filenames",
]

PERCENT_PPM = PPM // 100
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "randrw", *TRIM_MODES)
RANDOM_MODES = ("randread", "randwrite", "randrw", "randtrim", "randtrimwrite")

# Never written: options that run a command (exec_prerun, exec_postrun, the exec engine and
# its program/arguments), read another file (include), or load code (an external engine).
FORBIDDEN = frozenset({"exec_prerun", "exec_postrun", "include", "program", "arguments",
                       "ioengine=exec", "ioengine=external"})

_INT = r"[0-9]+"
_BOOL = r"[01]"
_TIME = r"[0-9]+(us|ms|s)"
_PER_DIR = r"[0-9]+(,[0-9]+)?"
_SPLIT = r"[0-9]+/[0-9]+(:[0-9]+/[0-9]+)*"
_RANGE = r"[0-9]+-[0-9]+"
_PRIO_SPLIT = r"[0-9]+/[0-9]+/[0-3]/[0-7](:[0-9]+/[0-9]+/[0-3]/[0-7])*"
_FLAG = ""
# Every option iogate writes, with the form its value must have: what job_options writes,
# what a job file needs to order jobs (stonewall, loops), and reporting options that change
# no I/O. A form of "" is a flag, written without a value; filename is free text (checked by
# _text_problem), ioengine a name of the engine catalog (fio names its engines alike; checked
# by forbidden).
VALUE_FORMS: Mapping[str, str] = {
    "ioengine": r"[a-z0-9_]+", "rw": f"({'|'.join(RW_MODES)})(:-?[0-9]+)?", "rwmixread": _INT,
    "bs": _PER_DIR, "bsrange": f"{_RANGE}(,{_RANGE})?", "bssplit": f"{_SPLIT}(,{_SPLIT})?",
    "blockalign": _PER_DIR, "iodepth": _INT, "numjobs": _INT, "filename": r"(?s).+",
    "size": f"{_INT}|{_INT}%", "offset": f"{_INT}|{_INT}%", "offset_align": _INT,
    "allow_file_create": _BOOL,
    "direct": _BOOL, "invalidate": _BOOL, "overwrite": _BOOL,
    "time_based": _FLAG, "runtime": _TIME, "ramp_time": _TIME, "norandommap": _FLAG,
    "file_service_type": "roundrobin|random|sequential",
    "cpus_allowed": r"[0-9]+(,[0-9]+)*", "cpus_allowed_policy": "shared|split",
    "numa_cpu_nodes": r"[0-9]+(,[0-9]+)*",
    "numa_mem_policy": r"(default|local|prefer:[0-9]+|(bind|interleave):[0-9]+(,[0-9]+)*)",
    "fixedbufs": _FLAG, "registerfiles": _FLAG, "sqthread_poll": _FLAG,
    "sqthread_poll_cpu": _INT, "hipri": _FLAG,
    "random_distribution": r"(zipf|pareto):[0-9]+(\.[0-9]+)?|zoned:" + _SPLIT,
    "randseed": _INT, "randrepeat": _BOOL, "rate": _PER_DIR, "rate_iops": _PER_DIR,
    "rate_process": "linear|poisson", "thinktime": _TIME, "thinktime_blocks": _INT,
    "fsync": _INT, "fdatasync": _INT, "sync": "sync|dsync", "buffer_compress_percentage": _INT,
    "buffer_compress_chunk": _INT, "buffer_pattern": r"0x[0-9a-f]+", "dedupe_percentage": _INT,
    "refill_buffers": _FLAG, "scramble_buffers": _BOOL, "zero_buffers": _FLAG,
    "verify": "crc32c|crc32|crc64|md5|sha1|sha256|sha512|xxhash|meta", "verify_backlog": _INT,
    "verify_fatal": _BOOL,
    "stonewall": _FLAG, "loops": _INT, "group_reporting": _FLAG, "lat_percentiles": _BOOL,
    "clat_percentiles": _BOOL, "slat_percentiles": _BOOL, "io_size": _INT,
    "number_ios": _INT, "end_fsync": _BOOL, "startdelay": _TIME, "fill_device": _BOOL,
    "flow": _INT,
    "iodepth_batch_submit": _INT, "iodepth_batch_complete_min": _INT,
    "iodepth_batch_complete_max": _INT, "iodepth_low": _INT,
    "exitall": _BOOL, "exit_what": "group|stonewall", "new_group": _FLAG,
    "percentile_list": r"[0-9]+(\.[0-9]+)?(:[0-9]+(\.[0-9]+)?)*",
    "prioclass": "[0-3]", "prio": "[0-7]", "cmdprio_percentage": _PER_DIR,
    "cmdprio_class": _PER_DIR, "cmdprio": _PER_DIR,
    "cmdprio_bssplit": f"{_PRIO_SPLIT}(,{_PRIO_SPLIT})?",
    # the plain keys, each in its unit (a plain number: fio reads microseconds there)
    **{row.fio: {"bool": _BOOL}.get(row.fio_unit, _INT) for row in PLAIN.values()},
}
KNOWN_KEYS = frozenset(VALUE_FORMS)
FLAG_KEYS = frozenset(k for k, form in VALUE_FORMS.items() if form == _FLAG)
_FORMS = {k: re.compile(form) for k, form in VALUE_FORMS.items() if form != _FLAG}

# fio reads a job file line into a buffer of 4096 bytes (older versions; 8192 in 3.x).
MAX_LINE_BYTES = 4000
# fio keeps job names of up to 127 bytes in its client/server messages.
MAX_SECTION_CHARS = 120
MAX_COMMENT_CHARS = 1000

# fio's limits on values it stores in narrower integers.
_RANDSEED_MAX = 2**63 - 1
_U32_MAX = 2**32 - 1
# fio's names of iogate's checksums; iogate's xxhash (xxh64) is XXH64, which fio has not:
# fio's xxhash is XXH32, iogate's xxh32.
_FIO_VERIFY = {"crc32c": "crc32c", "crc32": "crc32", "crc64": "crc64", "md5": "md5",
               "sha1": "sha1", "sha256": "sha256", "sha512": "sha512", "xxh32": "xxhash",
               "meta": "meta"}
_SECTION = re.compile(r"[A-Za-z0-9_.,=+@()-]+")
_SECTION_CHAR = re.compile(r"[^A-Za-z0-9_.,=+@()-]")


# Formats a (read, write) pair as fio's per-direction value for the job's directions.
PerDirection = Callable[[object, object], str]


class FioUnsupported(EngineError):
    """fio cannot run a job as iogate would; ``features`` names every reason."""

    def __init__(self, features: Sequence[str]) -> None:
        self.features = list(features)
        super().__init__(errno.EOPNOTSUPP,
                         "fio cannot run this job as iogate would: " + "; ".join(self.features))


# -- job specs to options -----------------------------------------------------------------

def _ring(spec: JobSpec) -> list[tuple[str, str]]:
    """io_uring's fast paths as fio's io_uring options (registered files too: iogate's
    default, not fio's)."""
    if spec.engine != "io_uring":
        return []
    out = [(name, "") for name, on in (("fixedbufs", spec.fixedbufs),
                                       ("registerfiles", spec.registerfiles),
                                       ("sqthread_poll", spec.sqpoll),
                                       ("hipri", spec.hipri)) if on]
    if spec.sqpoll and spec.sqpoll_cpu is not None:
        out.append(("sqthread_poll_cpu", str(spec.sqpoll_cpu)))
    return out


def job_options(spec: JobSpec) -> list[tuple[str, str]]:
    """The fio options of a job, in a fixed order; ``""`` is the value of a flag.

    Raise FioUnsupported naming every feature of ``spec`` that fio would run differently.
    """
    problems: list[str] = []
    out: list[tuple[str, str]] = []
    if catalog.get(spec.engine) is None:
        problems.append(f"engine '{spec.engine}' (fio's engines here: "
                        f"{', '.join(catalog.names())})")
    if spec.rw not in RW_MODES:
        problems.append(f"rw mode '{spec.rw}'")
    if problems:
        raise FioUnsupported(problems)
    reads, writes = _uses(spec, "read"), _uses(spec, "write")

    def per_dir(read: object, write: object) -> str:
        # A single value applies to every direction; a mixed job gives both.
        if reads and writes:
            return f"{read},{write}"
        return str(read if reads else write)

    out.append(("ioengine", spec.engine))
    out.append(("rw", f"{spec.rw}:{spec.seq_skip}" if spec.seq_skip else spec.rw))
    if spec.seq_skip and spec.offset:
        problems.append("seq_skip with an offset (fio wraps a skipping job around the file, "
                        "not the region)")
    if reads and writes:
        out.append(("rwmixread", str(spec.rwmixread)))
    out += _block_sizes(spec, per_dir, problems)
    out.append(("iodepth", str(spec.iodepth)))
    out += _batching(spec)
    out.append(("numjobs", str(spec.numjobs)))
    out += _files(spec, problems)
    if spec.size:  # without one, fio uses the file or device whole, as iogate does
        out.append(("size", str(spec.size)))
    if spec.offset:
        out.append(("offset", str(spec.offset)))
    if spec.direct:
        out.append(("direct", "1"))
    out.append(("invalidate", "1" if spec.invalidate else "0"))
    if spec.time_based:
        out.append(("time_based", ""))
    if spec.runtime_ns:
        out.append(("runtime", _duration(spec.runtime_ns, "runtime", problems)))
    if spec.ramp_ns:
        out.append(("ramp_time", _duration(spec.ramp_ns, "ramp_time", problems)))
    out += _limits(spec, problems)
    if spec.file_service != "roundrobin" and len(spec.files()) > 1:
        out.append(("file_service_type", spec.file_service))
    if spec.cpus:
        out.append(("cpus_allowed", ",".join(str(c) for c in spec.cpus)))
        if spec.cpus_split:
            out.append(("cpus_allowed_policy", "split"))
    if spec.numa_cpu_nodes:
        out.append(("numa_cpu_nodes", ",".join(str(n) for n in spec.numa_cpu_nodes)))
    if spec.numa_mem_policy != "none":
        out.append(("numa_mem_policy", spec.numa_mem_policy + (
            ":" + ",".join(str(n) for n in spec.numa_mem_nodes) if spec.numa_mem_nodes else "")))
    out += _ring(spec)
    if spec.rw in RANDOM_MODES:
        if not spec.random_map:
            out.append(("norandommap", ""))
        out += _distribution(spec, problems)
    if spec.seed > _RANDSEED_MAX:
        problems.append(f"seed {spec.seed} (fio's randseed takes at most {_RANDSEED_MAX})")
    out.append(("randseed", str(spec.seed)))
    out += _rates(spec, per_dir, problems)
    out += _pacing(spec, problems)
    out += _priorities(spec, per_dir, problems)
    out += _plain(spec, problems)
    if writes:
        if spec.files() and spec.write_layout == "data":
            out.append(("overwrite", "1"))
        elif spec.files() and spec.write_layout != "allocate":
            out.append(("fallocate", {"keep_size": "keep"}.get(spec.write_layout,
                                                               spec.write_layout)))
        if spec.does("write"):  # not trims alone: they write no data
            out += _data(spec)
    out += _verify(spec, problems)
    if spec.io_timeout_ns:
        problems.append("io_timeout (fio has no limit on an outstanding request: its "
                        "max_latency judges only requests that complete)")
    # A filling job's file grows as fio's does; a job that only reads a file iogate may not
    # extend runs under fio's --readonly (iogate.fio.backend), where fio extends nothing.
    if spec.no_layout and not spec.fill and writes:
        problems.append("no_layout (fio lays out the files it writes)")
    if spec.test_crash:
        problems.append("test_crash (a test-only fault of iogate's engine)")
    if problems:
        raise FioUnsupported(problems)
    return out


def _table_kind(table: list[BsEntry]) -> str:
    if len(table) == 1:
        return "fixed" if table[0].lo == table[0].hi else "range"
    return "split" if all(e.lo == e.hi for e in table) else "mixed"


def _uses(spec: JobSpec, d: str) -> bool:
    """Whether the job uses the read or write values of the spec: trims take the write
    ones, and a single value written for them is fio's trim value too."""
    return spec.does(d) or (d == "write" and spec.does("trim"))


def _block_sizes(spec: JobSpec, per_dir: PerDirection, problems: list[str]
                 ) -> list[tuple[str, str]]:
    tables = {d: [e for e in spec.bs_table(d) if e.weight > 0] for d in ("read", "write")}
    used = [d for d in ("read", "write") if _uses(spec, d)]
    kinds = {d: _table_kind(tables[d]) for d in used}
    out: list[tuple[str, str]] = []
    if "mixed" in kinds.values():
        problems.append("a block size range inside a bssplit (fio's bssplit has fixed sizes)")
    elif "split" in kinds.values() and "range" in kinds.values():
        problems.append("a bssplit in one direction and a bsrange in the other")
    elif "split" in kinds.values():
        text = {d: _bssplit(tables[d], d, problems) for d in used}
        out.append(("bssplit", per_dir(text.get("read"), text.get("write"))))
    elif "range" in kinds.values():
        text = {d: f"{tables[d][0].lo}-{tables[d][0].hi}" for d in used}
        out.append(("bsrange", per_dir(text.get("read"), text.get("write"))))
    else:
        out.append(("bs", per_dir(spec.bs_read, spec.bs_write)))
    align = {"read": spec.blockalign_read, "write": spec.blockalign_write}
    if any(align[d] for d in used):
        # A direction left at 0 aligns to its smallest block size, fio's default too.
        value = {d: align[d] or min(e.lo for e in tables[d]) for d in used}
        out.append(("blockalign", per_dir(value.get("read"), value.get("write"))))
    return out


def _bssplit(table: list[BsEntry], direction: str, problems: list[str]) -> str:
    # fio reads each percentage as a whole number (atoi), and 0 as "share the rest".
    parts = []
    for e in table:
        if e.weight % PERCENT_PPM:
            problems.append(f"{direction} bssplit share {e.weight / PERCENT_PPM:g}% for "
                            f"{e.lo} bytes (fio's bssplit takes whole percents)")
        parts.append(f"{e.lo}/{e.weight // PERCENT_PPM}")
    return ":".join(parts)


def _files(spec: JobSpec, problems: list[str]) -> list[tuple[str, str]]:
    names = spec.files()
    engine = catalog.get(spec.engine)
    if not names:
        if engine is None or engine.does_io:
            problems.append("a job without a file (fio would make one named after the job)")
        return []
    for i, name in enumerate(names):
        why = _filename_problem(name, last=i == len(names) - 1)
        if why:
            problems.append(f"file name {name!r}: {why}")
        if spec.does("trim") and engine is not None and engine.does_io \
                and not _block_device(name):
            problems.append(f"trims of {name!r}, not a block device (fio trims only block "
                            "devices: on a file it fails with ENOTTY; iogate punches holes)")
    # fio separates names with ':' and reads '\:' as a ':' within a name.
    return [("filename", ":".join(n.replace(":", "\\:") for n in names))]


def _block_device(name: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(name).st_mode)
    except OSError:
        return False  # fio would create a regular file


def _filename_problem(name: str, *, last: bool) -> str | None:
    if name == "-":
        return "fio reads '-' as standard input or output"
    if name.endswith("\\") and not last:
        return "a trailing backslash would escape fio's ':' between file names"
    return _text_problem(name)


def _text_problem(text: str) -> str | None:
    """Why fio would not read ``text`` back as written in a job file, or None."""
    if not text:
        return "empty"
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp")), None)
    if bad is not None:
        return (f"holds the control character U+{ord(bad):04X} (a job file value is one line "
                "of text)")
    if ";" in text or "#" in text:
        return "holds ';' or '#', where fio starts a comment"
    if "$" in text:
        return "holds '$', which fio expands ($VAR, ${VAR}, $ncpus...)"
    if text != text.strip():
        return "starts or ends with a blank, which fio strips"
    return None


def _duration(ns: int, what: str, problems: list[str]) -> str:
    """An exact fio time: fio counts time options in microseconds and has no 'ns' unit."""
    if ns % 1000:
        problems.append(f"{what} {ns}ns (fio's times are whole microseconds)")
    us = ns // 1000
    if us % 1_000_000 == 0:
        return f"{us // 1_000_000}s"
    if us % 1000 == 0:
        return f"{us // 1000}ms"
    return f"{us}us"


def _number(x: float) -> str:
    """A float in plain decimal digits (no exponent), as short as round-trips."""
    return format(Decimal(repr(x)), "f")


def _distribution(spec: JobSpec, problems: list[str]) -> list[tuple[str, str]]:
    if spec.dist == "uniform":
        return []
    if spec.dist in ("zipf", "pareto"):
        return [("random_distribution", f"{spec.dist}:{_number(spec.dist_param)}")]
    if spec.dist == "zoned":
        zones = []
        for z in spec.zones:
            if z.access % PERCENT_PPM or z.size % PERCENT_PPM:
                problems.append(f"zone {z.access / PERCENT_PPM:g}/{z.size / PERCENT_PPM:g} "
                                "(fio's zoned distribution takes whole percents)")
            if z.size == 0:
                problems.append("a zone of size 0 (fio reads 0 as 'the rest')")
            zones.append(f"{z.access // PERCENT_PPM}/{z.size // PERCENT_PPM}")
        return [("random_distribution", "zoned:" + ":".join(zones))]
    if spec.dist == "normal":
        problems.append("random_distribution normal (fio's normal:DEV averages 12 uniform "
                        "draws, adds a uniform jitter of DEV% and scatters the offsets: not a "
                        "normal distribution with a sigma of DEV% of the region)")
        return []
    if spec.dist == "sequence":
        problems.append("random_distribution sequence (newer than fio 3.33, whose options an "
                        "export writes)")
        return []
    problems.append(f"random distribution '{spec.dist}'")
    return []


def _rates(spec: JobSpec, per_dir: PerDirection, problems: list[str]) -> list[tuple[str, str]]:
    """fio limits each of numjobs threads, and a direction by rate (bytes) before rate_iops;
    iogate limits the whole job and holds a direction to the stricter of the two."""
    iops = {"read": 0, "write": 0}
    bw = {"read": 0, "write": 0}
    for d in ("read", "write"):
        n_iops, n_bytes = spec.rate(d)
        if not (n_iops or n_bytes) or not _uses(spec, d):
            continue
        table = [e for e in spec.bs_table(d) if e.weight > 0]
        fixed = _table_kind(table) == "fixed"
        if n_iops and not fixed:
            problems.append(f"{d} rate_iops with several block sizes (fio turns rate_iops "
                            "into bytes per second at the smallest block size)")
            continue
        if n_iops and n_bytes:  # one fixed block size: keep the stricter limit only
            if n_iops * table[0].lo <= n_bytes:
                n_bytes = 0
            else:
                n_iops = 0
        for what, total, into in (("rate_iops", n_iops, iops), ("rate", n_bytes, bw)):
            if not total:
                continue
            if total % spec.numjobs:
                problems.append(f"{d} {what} {total} over {spec.numjobs} threads (fio limits "
                                "each thread, and this total does not divide evenly)")
            into[d] = total // spec.numjobs
        if iops[d] > _U32_MAX:
            problems.append(f"{d} rate_iops {iops[d]} per thread (fio's limit is {_U32_MAX})")
    out: list[tuple[str, str]] = []
    if any(bw.values()):
        out.append(("rate", per_dir(bw["read"], bw["write"])))
    if any(iops.values()):
        out.append(("rate_iops", per_dir(iops["read"], iops["write"])))
    if out:
        out.append(("rate_process", spec.rate_process))
    return out


def _pacing(spec: JobSpec, problems: list[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if spec.thinktime_ns:
        if spec.thinktime_ns // 1000 > _U32_MAX:
            problems.append(f"thinktime {spec.thinktime_ns}ns (fio's limit is {_U32_MAX}us)")
        out.append(("thinktime", _duration(spec.thinktime_ns, "thinktime", problems)))
        out.append(("thinktime_blocks", str(spec.thinktime_blocks or 1)))
    if spec.sync_kind in ("fsync", "fdatasync") and spec.sync_every:
        out.append((spec.sync_kind, str(spec.sync_every)))
    elif spec.sync_kind not in ("none", "fsync", "fdatasync"):
        problems.append(f"sync kind '{spec.sync_kind}'")
    if spec.end_fsync and spec.does("write"):
        out.append(("end_fsync", "1"))
    if spec.open_sync != "none":
        out.append(("sync", spec.open_sync))
    return out


def _plain(spec: JobSpec, problems: list[str]) -> list[tuple[str, str]]:
    """The plain keys set (iogate.spec.keys.PLAIN), each as its fio option in its unit."""
    out = []
    for key, row in PLAIN.items():
        value = spec.plain.get(row.member, 0)
        if not value:
            continue
        if row.fio_unit == "us":
            if value % 1000:
                problems.append(f"{key} {value}ns (fio's {row.fio} is whole microseconds)")
            value //= 1000
        out.append((row.fio, "1" if row.fio_unit == "bool" else str(value)))
    return out


def _batching(spec: JobSpec) -> list[tuple[str, str]]:
    """Submission batching, where set (the defaults are fio's)."""
    return [(key, str(value)) for key, value in (
        ("iodepth_batch_submit", spec.batch_submit),
        ("iodepth_batch_complete_min", spec.batch_complete_min),
        ("iodepth_batch_complete_max", spec.batch_complete_max),
        ("iodepth_low", spec.depth_low)) if value]


def _priorities(spec: JobSpec, per_dir: PerDirection, problems: list[str]
                ) -> list[tuple[str, str]]:
    """The job's I/O priority (prioclass, prio) and its command priorities: one share of
    any size per direction is fio's cmdprio_percentage, shares per size its
    cmdprio_bssplit with the class and level in each entry."""
    out: list[tuple[str, str]] = []
    if spec.ioprio:
        out += [("prioclass", str(spec.ioprio >> 13)), ("prio", str(spec.ioprio & 0x1FFF))]
    tables = {"read": spec.cmdprio_read, "write": spec.cmdprio_write}
    if not any(tables.values()):
        return out
    if any(e.share % 10_000 for t in tables.values() for e in t):
        problems.append("a command priority share that is not a whole percent (fio's are)")
        return out
    if all(len(t) <= 1 and all(e.bs == 0 for e in t) for t in tables.values()):
        pct = {d: t[0].share // 10_000 if t else 0 for d, t in tables.items()}
        prio = {d: t[0].ioprio if t else 1 << 13 for d, t in tables.items()}
        out.append(("cmdprio_percentage", per_dir(pct["read"], pct["write"])))
        out.append(("cmdprio_class", per_dir(prio["read"] >> 13, prio["write"] >> 13)))
        out.append(("cmdprio", per_dir(prio["read"] & 0x1FFF, prio["write"] & 0x1FFF)))
        return out
    if any(e.bs == 0 for t in tables.values() for e in t):
        problems.append("command priorities for any size mixed with ones per size (fio has "
                        "either cmdprio_percentage or cmdprio_bssplit)")
        return out

    def split(direction: str) -> str:
        table = tables[direction] or [PrioEntry(spec.bs_table(direction)[0].lo, 0, 1 << 13)]
        return ":".join(f"{e.bs}/{e.share // 10_000}/{e.ioprio >> 13}/{e.ioprio & 0x1FFF}"
                        for e in table)

    out.append(("cmdprio_bssplit", per_dir(split("read"), split("write"))))
    return out


def _limits(spec: JobSpec, problems: list[str]) -> list[tuple[str, str]]:
    """How much each thread does (fio's limits are per thread too) and when it starts."""
    out: list[tuple[str, str]] = []
    for key, value in (("io_size", spec.io_limit_bytes), ("number_ios", spec.io_limit_ios)):
        if not value:
            continue
        if spec.time_based:
            problems.append(f"{key} with time_based (fio runs a time-based job until its "
                            "runtime, whatever its io_size or number_ios)")
        out.append((key, str(value)))
    if spec.fill:  # until the filesystem is full
        out.append(("fill_device", "1"))
    if spec.flow_weight:  # fio's flow counts each clone's requests, as iogate each thread's
        out.append(("flow", str(spec.flow_weight)))
    if spec.start_delay_ns:
        out.append(("startdelay", _duration(spec.start_delay_ns, "startdelay", problems)))
    return out


def _data(spec: JobSpec) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if spec.zero_buffers:
        out.append(("zero_buffers", ""))
    if spec.compress_pct:
        out.append(("buffer_compress_percentage", str(spec.compress_pct)))
        out.append(("buffer_compress_chunk", str(spec.compress_chunk or 512)))
        if spec.pattern:
            # The compressible part of each chunk repeats the pattern (zeros without one);
            # without compress_pct the pattern is never written.
            out.append(("buffer_pattern", "0x" + spec.pattern.hex()))
    if spec.dedupe_pct:
        out.append(("dedupe_percentage", str(spec.dedupe_pct)))
    if spec.refill:
        out.append(("refill_buffers", ""))
    # fio alters every buffer a little by default; iogate writes what it filled.
    out.append(("scramble_buffers", "0"))
    return out


def _verify(spec: JobSpec, problems: list[str]) -> list[tuple[str, str]]:
    if spec.verify_state:
        problems.append("verify_state (fio records no completed writes and syncs as they "
                        "happen: verify_state_save writes its state once, at the end)")
    if spec.verify == "none":
        return []
    name = _FIO_VERIFY.get(spec.verify)
    if name is None:
        problems.append(f"verify {spec.verify}" + (
            f" (iogate's {spec.verify} is XXH64; fio's verify=xxhash is XXH32, iogate's xxh32)"
            if spec.verify in ("xxhash", "xxh64") else ""))
        return []
    if spec.time_based:
        problems.append("verify on a time-based job (fio counts the reads that verify in "
                        "its runtime, so they would never start)")
    out = [("verify", name)]
    if spec.verify_backlog:
        out.append(("verify_backlog", str(spec.verify_backlog)))
    if spec.verify_fatal:
        out.append(("verify_fatal", "1"))
    return out


# -- job files ----------------------------------------------------------------------------

def forbidden(key: str, value: str = "") -> str | None:
    """Why ``key=value`` must never be written to a job file, or None."""
    if key in FORBIDDEN or key.lower().startswith("include"):
        return f"option '{key}' runs a command, loads code or reads another file"
    if key == "ioengine":
        if catalog.get(value) is not None:
            return None
        if value in ("exec", "external") or value.startswith("external:") \
                or f"ioengine={value}" in FORBIDDEN:
            return f"ioengine '{value}' runs a command or loads code"
        return f"ioengine '{value}' is not one of {', '.join(catalog.names())}"
    return None


def split_filenames(value: str) -> list[str]:
    """The file names fio reads from a ``filename`` value: ':' separates, '\\:' is a ':'
    within a name, and empty names are skipped."""
    names, current, i = [], "", 0
    while i < len(value):
        c = value[i]
        if c == "\\" and value[i + 1:i + 2] == ":":
            current += ":"
            i += 2
            continue
        if c == ":":
            if current:
                names.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        names.append(current)
    return names


def section_name(text: str) -> str:
    """``text`` made a safe section name: letters, digits and ``_.,=+@()-`` only (``[`` and
    ``]`` become parentheses, and a sweep point's ``:`` ``=``, since fio reads ``:`` in
    names as a separator), never starting with 'global', at most MAX_SECTION_CHARS."""
    readable = text.replace("[", "(").replace("]", ")").replace(":", "=")
    name = _SECTION_CHAR.sub("_", readable) or "job"
    if name.lower().startswith("global"):
        name = "job-" + name
    if len(name) > MAX_SECTION_CHARS:
        digest = f"{_crc(text):08x}"
        name = name[:MAX_SECTION_CHARS - len(digest) - 1] + "-" + digest
    return name


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def _check_section(name: str) -> None:
    if not isinstance(name, str) or not _SECTION.fullmatch(name):
        raise ValueError(f"section name {name!r}: use letters, digits and _.,=+@()- only")
    if len(name) > MAX_SECTION_CHARS:
        raise ValueError(f"section name {name!r} is longer than {MAX_SECTION_CHARS} characters")
    if name.lower().startswith("global"):
        raise ValueError(f"section name {name!r}: fio reads a section starting with 'global' "
                         "as options for every job")


def _check_option(section: str, key: str, value: str) -> str:
    """The option as a line, or ValueError saying why it cannot be written."""
    where = f"[{section}] {key!r}"
    if not isinstance(key, str) or not isinstance(value, str):
        raise ValueError(f"{where}: keys and values must be strings")
    why = forbidden(key, value)
    if why:
        raise ValueError(f"{where}: never written: {why}")
    if key not in KNOWN_KEYS:
        raise ValueError(f"{where}: not an option iogate writes")
    if key in FLAG_KEYS:
        if value:
            raise ValueError(f"{where} is a flag, written without a value; got '{shown(value)}'")
        return key
    problem = _text_problem(value)
    if problem:
        raise ValueError(f"{where}: value '{shown(value)}' {problem}")
    if not _FORMS[key].fullmatch(value):
        raise ValueError(f"{where}: value '{shown(value)}' is not of the form fio reads as "
                         "iogate means it")
    if key == "filename" and "-" in split_filenames(value):
        raise ValueError(f"{where}: fio reads the file name '-' as standard input or output")
    line = f"{key}={value}"
    if len(line.encode()) > MAX_LINE_BYTES:
        raise ValueError(f"{where}: the line is {len(line.encode())} bytes; fio cuts lines "
                         f"longer than its buffer (at most {MAX_LINE_BYTES} here)")
    return line


def _comment_lines(text: str) -> list[str]:
    """``text`` as comment lines: control characters escaped, each line cut short, so a
    comment can never end early or grow past fio's line buffer."""
    out = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = printable(raw)
        if len(line) > MAX_COMMENT_CHARS:
            line = line[:MAX_COMMENT_CHARS] + "..."
        out.append(f"; {line}".rstrip())
    return out


def render_jobfile(sections: Iterable[tuple[str, Sequence[tuple[str, str]]]],
                   comment: str = "", *,
                   section_comments: Mapping[str, str] | None = None) -> str:
    """A fio job file: ``comment`` first, then each section with its options in order.

    Raise ValueError when a section name or option cannot be written safely and exactly
    (see the module's docstring); nothing is written partially. ``section_comments`` puts
    a comment above the section of that name.
    """
    lines: list[str] = [*_comment_lines(comment), ""] if comment else []
    seen: set[str] = set()
    notes = dict(section_comments or {})
    for name, options in sections:
        _check_section(name)
        if name in seen:
            raise ValueError(f"section name {name!r} appears twice")
        seen.add(name)
        body = [_check_option(name, key, value) for key, value in options]
        if name in notes:
            lines += _comment_lines(notes.pop(name))
        lines.append(f"[{name}]")
        lines += body
        lines.append("")
    if notes:
        raise ValueError(f"comments for sections that are not written: {sorted(notes)}")
    return "\n".join(lines).rstrip("\n") + "\n"


# -- exitall ------------------------------------------------------------------------------

def exitall_options(specs: Sequence[JobSpec], names: Sequence[str], *, switch: bool = False
                    ) -> list[list[tuple[str, str]]]:
    """fio's options for the exit_mask of each job of ``specs``, jobs that run together (one
    stonewall group, in this order); ``names`` name them in problems. ``switch``: another
    job of the same file sets exitall, which fio turns on for every job.

    fio's exitall is one switch for the whole file: the end of any job then stops others, by
    that job's exit_what: ``stonewall`` every job running (the whole group), ``group`` (the
    default) its reporting group, which ``new_group`` starts, and which holds its own other
    threads. A mask of the whole group is exit_what=stonewall; any other must be a reporting
    group, the same for every job in it, made of consecutive jobs; a job that ends no other
    one is a reporting group of its own, and must have one thread. Raise FioUnsupported
    naming every job that cannot be written so."""
    n = len(specs)
    everyone = frozenset(range(n))
    out: list[list[tuple[str, str]]] = [[] for _ in specs]
    if not switch and not any(s.exit_mask for s in specs):
        return out
    problems: list[str] = []
    wants: dict[int, frozenset[int]] = {}  # job -> the reporting group it must have
    for j, spec in enumerate(specs):
        ends = frozenset(k for k in range(n) if spec.exit_mask >> min(k, 63) & 1)
        if spec.exit_mask and ends == everyone:
            out[j] = [("exitall", "1"), ("exit_what", "stonewall")]
            continue
        if j not in ends and spec.numjobs > 1:
            problems.append(f"{names[j]}: fio's exitall is one switch for the whole job file, "
                            f"so the end of one of its {spec.numjobs} threads would stop the "
                            "others, which iogate lets run on")
            continue
        wants[j] = ends | {j}
        if spec.exit_mask:
            out[j] = [("exitall", "1")]
    def listed(members: frozenset[int]) -> str:
        return ", ".join(names[m] for m in sorted(members))

    group_of: dict[int, frozenset[int]] = {}
    for j, members in wants.items():
        clash = next((k for k in sorted(members) if group_of.setdefault(k, members) != members
                      or wants.get(k, members) != members), None)
        if clash is not None:
            other = wants.get(clash, group_of[clash])
            problems.append(f"{names[j]} and {names[clash]}: fio stops a job's reporting group "
                            f"(new_group) when it ends; {listed(members)} would have to be one "
                            f"for {names[j]}, {listed(other)} for {names[clash]}")
            break
    blocks: list[tuple[frozenset[int], list[int]]] = []  # consecutive jobs of one reporting group
    for j in range(n):
        members = group_of.get(j, frozenset({j}))
        if blocks and blocks[-1][0] == members:
            blocks[-1][1].append(j)
        else:
            blocks.append((members, [j]))
    for members, jobs in blocks:
        if len(jobs) != len(members) and not problems:
            problems.append(f"{listed(members)}: fio's reporting groups (new_group) are "
                            "consecutive jobs; put these next to each other")
    if problems:
        raise FioUnsupported(list(dict.fromkeys(problems)))
    for _, jobs in blocks[1:]:
        out[jobs[0]].insert(0, ("new_group", ""))
    return out

