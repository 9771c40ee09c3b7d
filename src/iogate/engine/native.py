"""ctypes bindings to libiogate: the only module that declares foreign types.

It loads the library, mirrors the public structs and constants of
native/include/iogate.h that it uses, declares each function once, and wraps the calls the
session layer needs so that negative errno returns become EngineError. The job spec, where
every workload key lands, is not mirrored by hand: it is built from the library's own
description of it (:func:`job_spec_type`).

The library is looked up in the IOGATE_LIB environment variable (a path, for
development builds) and otherwise next to this package (installed wheels). One that cannot
be used (missing, not a shared library, not libiogate, another ABI version, an older ABI
revision, a constant whose value differs from the one used here, or a struct laid out
otherwise) is a :class:`LibraryError` naming it. The limits (array sizes, string lengths)
are iogate.engine.limits'; the enum values and flag bits are here. At load, every one of
them is compared with the library's description of its constants (iog_describe_constants),
and every struct written here with its description of that struct (iog_describe_struct).
"""

from __future__ import annotations

import ctypes
import errno
import importlib.resources
import os
from array import array
from collections.abc import Callable, Sequence
from ctypes import (
    POINTER,
    byref,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from functools import cache
from typing import TYPE_CHECKING, Any

from iogate.engine import limits
from iogate.engine.limits import (
    BS_TABLE_MAX,
    DATA_DIRS,
    DISK_COUNTERS,
    ENGINE_NAME_MAX,
    ENGINE_SUMMARY_MAX,
    ERR_MAX,
    QD_BUCKETS,
    VERIFY_RECORDS,
)
from iogate.engine.limits import WEIGHT_TOTAL as WEIGHT_TOTAL  # the weights of iog_bs_entry
from iogate.errors import EngineError, LibraryError

if TYPE_CHECKING:
    from _ctypes import _CData
    from ctypes import _NamedFuncPointer  # what an attribute of a CDLL is

UINT64_MAX = (1 << 64) - 1

# IOG_ABI_VERSION: the library's must be this one. IOG_ABI_REVISION: the library's must be
# at least this one (a later revision only adds; iogate.h says what changes which).
ABI_VERSION = 8
ABI_REVISION = 3

# The histogram geometry (IOG_HIST_*) is owned by iogate.histogram; the parity tests check it
# against the library.

# I/O engines are named; the library lists its own (engine_infos).
ENGINE_DOES_IO = 1 << 0  # touches files (null does not)
ENGINE_NO_DIRECT = 1 << 1  # cannot do O_DIRECT
ENGINE_CMDPRIO = 1 << 2  # passes an I/O priority per request (cmdprio)
ENGINE_NO_EXTEND = 1 << 3  # writes need the file laid out to its size first (mmap)
ENGINE_RING = 1 << 4  # takes the JOB_RING_* options (io_uring)

# enum iog_rw; the trim modes take their per-direction values from slot 1 (DIR_WRITE)
(RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_RW, RW_RANDRW, RW_TRIM, RW_RANDTRIM,
 RW_TRIMWRITE, RW_RANDTRIMWRITE) = range(10)
RW_MODES = {"read": RW_READ, "write": RW_WRITE, "randread": RW_RANDREAD,
            "randwrite": RW_RANDWRITE, "rw": RW_RW, "randrw": RW_RANDRW, "trim": RW_TRIM,
            "randtrim": RW_RANDTRIM, "trimwrite": RW_TRIMWRITE,
            "randtrimwrite": RW_RANDTRIMWRITE}

# enum iog_dir
DIR_READ, DIR_WRITE, DIR_SYNC, DIR_TRIM, DIR_COUNT = 0, 1, 2, 3, 4
DIRECTIONS = ("read", "write", "sync", "trim")

# enum iog_lat
LAT_SLAT, LAT_CLAT, LAT_LAT, LAT_RESP, LAT_LAG, LAT_COUNT = range(6)
LAT_KINDS = ("slat", "clat", "lat", "resp", "lag")
# iog_session_histogram only: clat of the requests that carried a command priority
HIST_PRIO_CLAT = 5

# enum iog_rate_process
RATE_LINEAR, RATE_POISSON = 0, 1
RATE_PROCESSES = {"linear": RATE_LINEAR, "poisson": RATE_POISSON}

# enum iog_dist
DIST_UNIFORM, DIST_ZIPF, DIST_PARETO, DIST_NORMAL, DIST_ZONED, DIST_SEQUENCE = range(6)
DISTS = {"uniform": DIST_UNIFORM, "zipf": DIST_ZIPF, "pareto": DIST_PARETO,
         "normal": DIST_NORMAL, "zoned": DIST_ZONED, "sequence": DIST_SEQUENCE}

# enum iog_sync_kind
SYNC_NONE, SYNC_FSYNC, SYNC_FDATASYNC = range(3)
SYNC_KINDS = {"none": SYNC_NONE, "fsync": SYNC_FSYNC, "fdatasync": SYNC_FDATASYNC}

# enum iog_state
STATE_CREATED, STATE_LAYOUT, STATE_RAMP, STATE_RUNNING, STATE_VERIFY, STATE_DONE = range(6)
STATES = ("created", "layout", "ramp", "running", "verify", "done")

# enum iog_verify
(VERIFY_NONE, VERIFY_CRC32C, VERIFY_XXH64, VERIFY_CRC32, VERIFY_MD5, VERIFY_SHA1, VERIFY_SHA256,
 VERIFY_SHA512, VERIFY_CRC64, VERIFY_XXH32, VERIFY_META) = range(11)
# iogate's xxhash is XXH64 (xxh64 names it plainly); fio's xxhash is xxh32.
VERIFIERS = {"none": VERIFY_NONE, "crc32c": VERIFY_CRC32C, "xxhash": VERIFY_XXH64,
             "crc32": VERIFY_CRC32, "md5": VERIFY_MD5, "sha1": VERIFY_SHA1,
             "sha256": VERIFY_SHA256, "sha512": VERIFY_SHA512, "crc64": VERIFY_CRC64,
             "xxh32": VERIFY_XXH32, "xxh64": VERIFY_XXH64, "meta": VERIFY_META}

# enum iog_verify_kind
VERIFY_KINDS = ("torn", "lost", "misdirected", "read_error")

# enum iog_fault_kind
FAULT_NONE, FAULT_IO_TIMEOUT = 0, 1

# iog_job_spec.flags
JOB_TIME_BASED = 1 << 0
JOB_DIRECT = 1 << 1
JOB_NO_LAYOUT = 1 << 2
JOB_REFILL = 1 << 3
JOB_ZERO_BUFS = 1 << 4
JOB_INVALIDATE = 1 << 5
JOB_VERIFY_FATAL = 1 << 6
JOB_TEST_CRASH = 1 << 7  # test only: the engine crashes (SIGSEGV) after one request
JOB_END_FSYNC = 1 << 8  # fsync every file when a writing thread's run ends
JOB_FILL = 1 << 9  # a write that finds the filesystem full ends the run, no error
JOB_OSYNC = 1 << 10  # the files are opened O_SYNC for writing
JOB_ODSYNC = 1 << 11  # the files are opened O_DSYNC for writing
JOB_RANDOM_MAP = 1 << 12  # random offsets visit every block once per pass
JOB_FILES_RANDOM = 1 << 13  # each request to a file drawn at random
JOB_FILES_SEQUENTIAL = 1 << 14  # each file's share of the pass, then the next file
JOB_CPUS_SPLIT = 1 << 15  # each thread on one CPU of iog_job_spec.cpus
JOB_RING_FIXEDBUFS = 1 << 16  # io_uring: registered buffers, READ_FIXED / WRITE_FIXED
JOB_RING_NO_REGFILES = 1 << 17  # io_uring: the files are not registered with the ring
JOB_RING_SQPOLL = 1 << 18  # io_uring: a kernel thread polls the submission queue
JOB_RING_SQPOLL_CPU = 1 << 19  # io_uring: ... on CPU iog_job_spec.sqpoll_cpu
JOB_RING_HIPRI = 1 << 20  # io_uring: completions polled for (IOPOLL)
OPEN_SYNC_FLAGS = {"none": 0, "sync": JOB_OSYNC, "dsync": JOB_ODSYNC}  # JobSpec.open_sync
# JobSpec.file_service: how a thread goes from file to file (fio's file_service_type)
FILE_SERVICE_FLAGS = {"roundrobin": 0, "random": JOB_FILES_RANDOM,
                      "sequential": JOB_FILES_SEQUENTIAL}
# iog_job_spec.write_layout (IOG_WRITE_LAYOUT_*), in value order: JobSpec.write_layout
WRITE_LAYOUTS = ("data", "allocate", "none", "truncate", "keep_size", "posix")
# enum iog_numa_mem, in value order: JobSpec.numa_mem_policy
NUMA_MEMS = ("none", "default", "local", "prefer", "bind", "interleave")


class IogBsEntry(ctypes.Structure):
    _fields_ = [
        ("lo", c_uint64),
        ("hi", c_uint64),
        ("weight", c_uint32),
        ("reserved0", c_uint32),
    ]


class IogZone(ctypes.Structure):
    _fields_ = [
        ("access", c_uint32),
        ("size", c_uint32),
    ]


class IogCmdprioEntry(ctypes.Structure):
    _fields_ = [
        ("bs", c_uint64),
        ("share", c_uint32),
        ("ioprio", c_uint32),
    ]


class IogFileId(ctypes.Structure):
    _fields_ = [
        ("dev", c_uint64),
        ("ino", c_uint64),
    ]


class IogLatSummary(ctypes.Structure):
    _fields_ = [
        ("count", c_uint64),
        ("min_ns", c_uint64),
        ("max_ns", c_uint64),
        ("mean_ns", c_double),
        ("stdev_ns", c_double),
    ]


class IogDirStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("dir", c_uint32),
        ("ios", c_uint64),
        ("bytes", c_uint64),
        ("runtime_ns", c_uint64),
        ("iops", c_double),
        ("bw_bytes", c_double),
        ("lat", IogLatSummary * LAT_COUNT),
        ("errors", c_uint64),
        ("first_errno", c_int32),
        ("reserved0", c_uint32),
        ("first_error_offset", c_uint64),
        ("qd_sum", c_uint64),
        ("qd_samples", c_uint64),
        ("qd_hist", c_uint64 * QD_BUCKETS),
        ("bs_other_ios", c_uint64),
        ("first_error_ns", c_uint64),
        # command priorities: the requests that carried one, and their clat
        ("prio_ios", c_uint64),
        ("prio_clat", IogLatSummary),
    ]


class IogBsCount(ctypes.Structure):
    _fields_ = [
        ("bs", c_uint64),
        ("ios", c_uint64),
    ]


class IogJobStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("nfiles", c_uint32),
        ("coverage_chunk", c_uint64),
        ("coverage_total", c_uint64),
        ("coverage_touched", c_uint64),
        ("data_sampled_bytes", c_uint64),
        ("data_compressed_bytes", c_uint64),
        ("data_blocks", c_uint64),
        ("data_duplicate_blocks", c_uint64),
        ("data_samples_skipped", c_uint64),
        # submission batching
        ("submits", c_uint64),
        ("reaps", c_uint64),
        ("ioprio", c_uint64),  # what ioprio_get said in the first thread after setting it
    ]


class IogInterval(ctypes.Structure):
    _fields_ = [
        ("end_ns", c_uint64),
        ("ios", c_uint64),
        ("bytes", c_uint64),
        ("iops", c_double),
        ("bw_bytes", c_double),
        ("clat_mean_ns", c_double),
        ("clat_p99_ns", c_uint64),
        ("lat_mean_ns", c_double),
        ("lat_p99_ns", c_uint64),
        ("resp_mean_ns", c_double),
        ("resp_p99_ns", c_uint64),
    ]


class IogProgress(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("state", c_uint32),
        ("elapsed_ns", c_uint64),
        ("counted_ns", c_uint64),
        ("expected_ns", c_uint64),
        ("ios", c_uint64 * DATA_DIRS),
        ("bytes", c_uint64 * DATA_DIRS),
        ("errors", c_uint64),
        ("jobs_done", c_uint32),
        ("jobs", c_uint32),
        ("layout_bytes", c_uint64),
        ("layout_total", c_uint64),
        ("trim_ios", c_uint64),  # trims counted so far (IOG_DIR_TRIM)
        ("trim_bytes", c_uint64),
    ]


class IogVerifyStats(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("nrecords", c_uint32),
        ("generation", c_uint64),
        ("blocks_written", c_uint64),
        ("blocks_checked", c_uint64),
        ("failures", c_uint64),
        ("by_kind", c_uint64 * len(VERIFY_KINDS)),
        ("elapsed_ns", c_uint64),
        ("state_records", c_uint64),  # written to the verify state file
        ("state_error", c_int32),  # the errno that stopped its writing, 0: none
        ("state_reserved", c_uint32),
    ]


class IogStateCheck(ctypes.Structure):
    """What iog_verify_state_check found (iogate.h)."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("nrecords", c_uint32),
        ("generation", c_uint64),
        ("job", c_uint32),
        ("verify", c_uint32),
        ("block_size", c_uint64),
        ("region_start", c_uint64),
        ("file_blocks", c_uint64),
        ("nfiles", c_uint32),
        ("complete", c_uint32),
        ("writes", c_uint64),
        ("syncs", c_uint64),
        ("ignored_bytes", c_uint64),
        ("blocks", c_uint64),
        ("intact", c_uint64),
        ("not_durable", c_uint64),
        ("not_durable_new", c_uint64),
        ("lost", c_uint64),
        ("torn", c_uint64),
        ("misdirected", c_uint64),
        ("read_errors", c_uint64),
    ]


class IogVerifyFailure(ctypes.Structure):
    _fields_ = [
        ("kind", c_uint32),
        ("file", c_uint32),
        ("offset", c_uint64),
        ("len", c_uint64),
        ("expected_generation", c_uint64),
        ("expected_seq", c_uint64),
        ("found_generation", c_uint64),
        ("found_seq", c_uint64),
        ("found_offset", c_uint64),
        ("found_file", c_uint32),
        ("error", c_int32),
        ("stored_checksum", c_uint64),
        ("computed_checksum", c_uint64),
    ]


class IogFault(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("kind", c_uint32),
        ("job", c_uint32),
        ("thread", c_uint32),
        ("dir", c_uint32),
        ("file", c_uint32),
        ("offset", c_uint64),
        ("len", c_uint64),
        ("outstanding_ns", c_uint64),
        ("timeout_ns", c_uint64),
    ]


class IogEngineInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("max_depth", c_uint32),
        ("flags", c_uint32),
        ("reserved0", c_uint32),
        ("name", c_char * ENGINE_NAME_MAX),
        ("summary", c_char * ENGINE_SUMMARY_MAX),
    ]


class IogDiskSample(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("ncounters", c_uint32),  # fields the stat line had
        ("end_ns", c_uint64),  # since the session's count start
        ("counters", c_uint64 * DISK_COUNTERS),
    ]


class IogLayoutField(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("offset", c_uint32),
        ("size", c_uint32),
        ("type", c_char_p),
        ("dims", c_uint32 * 2),
    ]


class IogConstant(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("value", c_int64),
    ]


# Library struct name -> binding written here, checked against the library's description at
# load. The job spec, where every workload key lands, is built from that description instead
# (job_spec_type): a member added to iogate.h needs nothing here.
STRUCTS: dict[str, type[ctypes.Structure]] = {
    "iog_bs_entry": IogBsEntry,
    "iog_zone": IogZone,
    "iog_cmdprio_entry": IogCmdprioEntry,
    "iog_file_id": IogFileId,
    "iog_lat_summary": IogLatSummary,
    "iog_dir_stats": IogDirStats,
    "iog_bs_count": IogBsCount,
    "iog_job_stats": IogJobStats,
    "iog_interval": IogInterval,
    "iog_progress": IogProgress,
    "iog_verify_stats": IogVerifyStats,
    "iog_verify_failure": IogVerifyFailure,
    "iog_fault": IogFault,
    "iog_engine_info": IogEngineInfo,
    "iog_disk_sample": IogDiskSample,
    "iog_state_check": IogStateCheck,
}

SessionHandle = c_void_p


def _message(code: int, func: _NamedFuncPointer, args: tuple[object, ...]) -> str:
    """The library's message from the error buffer passed in args, else strerror."""
    for arg in args:
        if isinstance(arg, ctypes.Array) and arg._type_ is c_char:
            text: bytes = arg.value  # the value of a c_char array is bytes
            if text:
                return text.decode(errors="replace")
    return f"{func.__name__}: {os.strerror(code)}"


def _check(result: int, func: _NamedFuncPointer, args: tuple[object, ...]) -> int:
    if result < 0:
        raise EngineError(-result, _message(-result, func, args))
    return result


def _check_wait(result: int, func: _NamedFuncPointer, args: tuple[object, ...]) -> int:
    # -ETIMEDOUT is the ordinary "still running" answer, not an error.
    if result < 0 and result != -errno.ETIMEDOUT:
        return _check(result, func, args)
    return result


def _declare(lib: ctypes.CDLL) -> None:
    def fn(name: str, restype: type[ctypes._SimpleCData[Any]] | None,
           argtypes: list[type[_CData]],
           errcheck: Callable[[int, _NamedFuncPointer, tuple[object, ...]], int] | None = _check
           ) -> None:
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
        if errcheck is not None:
            f.errcheck = errcheck

    err = [c_char_p, c_size_t]
    fn("iog_abi_version", c_uint32, [], None)
    fn("iog_version", c_char_p, [], None)
    fn("iog_describe_struct", c_int,
       [c_char_p, POINTER(c_uint32), POINTER(POINTER(IogLayoutField))])
    fn("iog_describe_constants", c_int, [POINTER(POINTER(IogConstant))])
    fn("iog_engine_count", c_int, [])
    fn("iog_engine_describe", c_int, [c_uint32, POINTER(IogEngineInfo)])
    fn("iog_session_create", c_int, [c_void_p, c_uint32, POINTER(SessionHandle), *err])
    fn("iog_session_start", c_int, [SessionHandle, *err])
    fn("iog_session_poll", c_int, [SessionHandle, POINTER(IogProgress)])
    fn("iog_session_cancel", c_int, [SessionHandle])
    fn("iog_session_wait", c_int, [SessionHandle, c_uint64], _check_wait)
    fn("iog_session_jobs", c_uint32, [SessionHandle], None)
    fn("iog_session_dir_stats", c_int, [SessionHandle, c_uint32, c_uint32, POINTER(IogDirStats)])
    fn("iog_session_bs_counts", c_int,
       [SessionHandle, c_uint32, c_uint32, POINTER(IogBsCount), c_size_t])
    fn("iog_session_job_stats", c_int, [SessionHandle, c_uint32, POINTER(IogJobStats)])
    fn("iog_session_histogram", c_int,
       [SessionHandle, c_uint32, c_uint32, c_uint32, POINTER(c_uint64), c_size_t])
    fn("iog_session_series", c_int,
       [SessionHandle, c_uint32, c_uint32, POINTER(IogInterval), c_size_t])
    fn("iog_session_verify", c_int,
       [SessionHandle, c_uint32, POINTER(IogVerifyStats), POINTER(IogVerifyFailure), c_size_t])
    fn("iog_session_fault", c_int, [SessionHandle, POINTER(IogFault)])
    fn("iog_session_watch_disk", c_int, [SessionHandle, c_char_p, *err])
    fn("iog_session_disk_samples", c_int,
       [SessionHandle, c_uint32, POINTER(IogDiskSample), c_uint32])
    fn("iog_session_destroy", None, [SessionHandle], None)
    fn("iog_verify_state_check", c_int,
       [c_char_p, c_char_p, c_uint32, POINTER(IogStateCheck), POINTER(IogVerifyFailure),
        c_size_t, *err])
    fn("iog_hist_index", c_uint32, [c_uint64], None)
    fn("iog_hist_bounds", c_int, [c_uint32, POINTER(c_uint64), POINTER(c_uint64)])
    fn("iog_hist_percentiles", c_int,
       [POINTER(c_uint64), c_uint32, c_uint32, POINTER(c_double), c_uint32, c_uint64, c_uint64,
        POINTER(c_uint64)])


# Enums these bindings list as names in value order: the C name of each is the prefix and the
# name in capitals (DIRECTIONS[3] is IOG_DIR_TRIM).
_ENUM_NAMES = (("IOG_DIR_", "DIRECTIONS"), ("IOG_LAT_", "LAT_KINDS"), ("IOG_STATE_", "STATES"),
               ("IOG_VERIFY_", "VERIFY_KINDS"), ("IOG_WRITE_LAYOUT_", "WRITE_LAYOUTS"),
               ("IOG_NUMA_MEM_", "NUMA_MEMS"))
# Names of this module that stand for no constant of iogate.h, or are compared otherwise.
_NOT_CONSTANTS = frozenset({"UINT64_MAX", "ABI_REVISION"})


def expected_constants() -> list[tuple[str, int, str]]:
    """Every constant of iogate.h these bindings use: (its C name, the value used here, the
    Python name that holds it). Each int of iogate.engine.limits and of this module whose
    name is its C name without IOG_ (a value of this module first: the one the structs and
    calls above use), and each position of the enums listed as names (_ENUM_NAMES)."""
    here = globals()
    out = []
    for name in sorted(set(vars(limits)) | set(here)):
        value = here.get(name, vars(limits).get(name))
        if (name[:1].isalpha() and name.isupper() and type(value) is int
                and name not in _NOT_CONSTANTS):
            out.append((f"IOG_{name}", value, name))
    for prefix, listed in _ENUM_NAMES:
        names = here[listed]
        out += [(prefix + n.upper(), i, f"{listed}[{i}]") for i, n in enumerate(names)]
        if listed == "VERIFY_KINDS":  # the enum's count has the list's name
            out.append(("IOG_VERIFY_KINDS", len(names), "len(VERIFY_KINDS)"))
    return out


def constant_problems(described: dict[str, int]) -> list[str]:
    """What differs between the library's constants (``described``: C name -> value, as
    iog_describe_constants gives them) and these bindings': one phrase per constant, naming
    it and both values; empty when they agree."""
    out = []
    revision = described.get("IOG_ABI_REVISION", 0)
    if revision < ABI_REVISION:
        out.append(f"IOG_ABI_REVISION is {revision} in the library, these bindings need "
                   f"{ABI_REVISION} or later")
    for c_name, value, py_name in expected_constants():
        if c_name not in described:
            out.append(f"{c_name} is not in the library, these bindings use {value} "
                       f"({py_name})")
        elif described[c_name] != value:
            out.append(f"{c_name} is {described[c_name]} in the library, {value} in these "
                       f"bindings ({py_name})")
    return out


def described_constants(handle: ctypes.CDLL) -> dict[str, int]:
    """The library's constants (iog_describe_constants): C name -> value."""
    table = POINTER(IogConstant)()
    n = handle.iog_describe_constants(byref(table))
    return {table[i].name.decode(): int(table[i].value) for i in range(n)}


def library_path() -> str:
    """Where the library is expected: $IOGATE_LIB, else inside the package."""
    explicit = os.environ.get("IOGATE_LIB")
    if explicit:
        return explicit
    return str(importlib.resources.files("iogate") / "libiogate.so")


@cache
def lib() -> ctypes.CDLL:
    """The loaded, declared and version-checked library (loaded once); a LibraryError
    naming its path (and IOGATE_LIB when that gave it) when it cannot be used."""
    return open_library(library_path())


def open_library(path: str) -> ctypes.CDLL:
    """Loads the library at ``path`` (where lib() says), declares its functions and checks
    its ABI version and its constants against these bindings'; a LibraryError naming the
    path (and IOGATE_LIB when that gave it) when it cannot be used."""
    if os.environ.get("IOGATE_LIB"):
        where = f"IOGATE_LIB={path}"
        fix = ("set IOGATE_LIB to libiogate.so as native/ builds it "
               "(native/build/libiogate.so), or unset it to use the installed one")
    else:
        where = f"libiogate at {path}"
        fix = ("reinstall iogate, or build it with 'cmake -S native -B native/build && "
               "cmake --build native/build' and set IOGATE_LIB=native/build/libiogate.so")
    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else (
            "is not a regular file" if os.path.exists(path) else "no such file")
        raise LibraryError(f"{where}: {what}; {fix}")
    try:
        handle = ctypes.CDLL(path)
        version = handle.iog_abi_version
    except (OSError, AttributeError) as e:
        raise LibraryError(f"{where}: not libiogate, the library iogate runs its I/O "
                           f"with ({e}); {fix}") from None
    version.restype, version.argtypes = c_uint32, []
    found = version()
    if found != ABI_VERSION:
        raise LibraryError(f"{where}: libiogate of ABI version {found}, these bindings need "
                           f"{ABI_VERSION}; {fix}")
    try:
        _declare(handle)
    except AttributeError as e:
        raise LibraryError(f"{where}: libiogate of ABI version {found} without a function "
                           f"these bindings call ({e}); {fix}") from None
    problems = constant_problems(described_constants(handle)) + layout_problems(handle)
    try:
        built_struct("iog_job_spec", *described(handle, "iog_job_spec"))
    except ValueError as e:
        problems.append(str(e))
    if problems:
        raise LibraryError(f"{where}: libiogate of ABI version {found} does not match these "
                           f"bindings: {'; '.join(problems)}; {fix}")
    return handle


def version() -> str:
    text: bytes = lib().iog_version()  # its restype, c_char_p, gives bytes
    return text.decode()


def abi_version() -> int:
    return int(lib().iog_abi_version())


Layout = tuple[int, dict[str, tuple[int, int]]]  # sizeof, {member: (offset, size)}

# The C types of iogate.h's struct members that are not structs themselves.
_C_SCALARS: dict[str, type[_CData]] = {
    "char": c_char, "uint8_t": c_uint8, "uint16_t": ctypes.c_uint16, "uint32_t": c_uint32,
    "uint64_t": c_uint64, "int32_t": c_int32, "int64_t": c_int64, "double": c_double,
    "const char *": c_char_p}


def described(handle: ctypes.CDLL, name: str) -> tuple[int, list[IogLayoutField]]:
    """The library's description of its struct ``name`` (iog_describe_struct): its sizeof
    and its members in declaration order (copies: the library's table is read-only)."""
    size = c_uint32()
    fields = POINTER(IogLayoutField)()
    n = handle.iog_describe_struct(name.encode(), byref(size), byref(fields))
    return size.value, [IogLayoutField.from_buffer_copy(fields[i]) for i in range(n)]


def layout_of(size: int, members: Sequence[IogLayoutField]) -> Layout:
    return size, {m.name.decode(): (m.offset, m.size) for m in members}


def built_struct(name: str, size: int, members: Sequence[IogLayoutField]
                 ) -> type[ctypes.Structure]:
    """A ctypes struct built from the library's description of it: each member's type (a
    scalar, or a struct of STRUCTS) and array lengths as iogate.h declares them. ValueError
    when a type is not known here or the result's layout differs from the description."""
    known = {f"struct {n}": t for n, t in STRUCTS.items()}
    fields: list[tuple[str, type[_CData]]] = []
    for m in members:
        spelled = m.type.decode()
        ctype = _C_SCALARS.get(spelled) or known.get(spelled)
        if ctype is None:
            raise ValueError(f"{name}.{m.name.decode()} is a {spelled}, a type these bindings "
                             "do not know")
        for dim in reversed([d for d in m.dims if d]):
            ctype = ctype * dim
        fields.append((m.name.decode(), ctype))
    struct = type(name, (ctypes.Structure,), {"_fields_": fields})
    if binding_layout(struct) != layout_of(size, members):
        raise ValueError(f"{name} built from its description does not have its layout")
    return struct


def layout_problems(handle: ctypes.CDLL) -> list[str]:
    """What differs between the library's structs and the bindings written here (STRUCTS):
    one phrase per struct, empty when every one agrees."""
    out = []
    for name, binding in STRUCTS.items():
        size, members = described(handle, name)
        theirs, ours = layout_of(size, members), binding_layout(binding)
        if theirs != ours:
            moved = sorted(set(theirs[1].items()) ^ set(ours[1].items()))
            out.append(f"struct {name} is {theirs[0]} bytes in the library, {ours[0]} here"
                       + (f" (members that differ: {', '.join(sorted({m for m, _ in moved}))})"
                          if moved else ""))
    return out


@cache
def job_spec_type() -> type[ctypes.Structure]:
    """struct iog_job_spec, as the loaded library describes it: every member iogate.h
    declares, none listed here."""
    return built_struct("iog_job_spec", *described(lib(), "iog_job_spec"))


def layout_report() -> dict[str, Layout]:
    """The library's own view of each public struct these bindings use:
    {name: (size, {field: (offset, size)})}."""
    return {name: layout_of(*described(lib(), name)) for name in [*STRUCTS, "iog_job_spec"]}


def binding_layout(struct: type[ctypes.Structure]) -> Layout:
    """The same report for a ctypes binding."""
    return (ctypes.sizeof(struct),
            {name: (getattr(struct, name).offset, getattr(struct, name).size)
             for name, *_ in struct._fields_})


def hist_index(value_ns: int) -> int:
    return int(lib().iog_hist_index(value_ns))


def hist_bounds(index: int) -> tuple[int, int]:
    lo, hi = c_uint64(), c_uint64()
    lib().iog_hist_bounds(index, byref(lo), byref(hi))
    return lo.value, hi.value


def hist_percentiles(counts: Sequence[int], first: int, ps: Sequence[float],
                     min_ns: int | None, max_ns: int | None) -> list[int] | None:
    """The library's percentile rule (iog_hist_percentiles): counts[i] is bucket first + i.
    None when the counts are all zero."""
    n = len(counts)
    if isinstance(counts, array) and counts.typecode == "Q" and n:
        buf = (c_uint64 * n).from_buffer_copy(counts)
    else:
        buf = (c_uint64 * n)(*counts)
    out = (c_uint64 * len(ps))()
    found = lib().iog_hist_percentiles(buf, first, n, (c_double * len(ps))(*ps), len(ps),
                                       0 if min_ns is None else min_ns,
                                       UINT64_MAX if max_ns is None else max_ns, out)
    return list(out) if found else None


# --- session calls -----------------------------------------------------------

def engine_infos() -> list[IogEngineInfo]:
    """The library's I/O engines, in its order."""
    out = []
    for i in range(lib().iog_engine_count()):
        info = IogEngineInfo(struct_size=ctypes.sizeof(IogEngineInfo))
        lib().iog_engine_describe(i, byref(info))
        out.append(info)
    return out


def session_create(specs: list[ctypes.Structure]) -> SessionHandle:
    arr = (job_spec_type() * len(specs))(*specs)
    handle = SessionHandle()
    err = ctypes.create_string_buffer(ERR_MAX)
    lib().iog_session_create(arr, len(specs), byref(handle), err, ERR_MAX)
    return handle


def session_start(handle: SessionHandle) -> None:
    err = ctypes.create_string_buffer(ERR_MAX)
    lib().iog_session_start(handle, err, ERR_MAX)


def session_poll(handle: SessionHandle) -> IogProgress:
    out = IogProgress(struct_size=ctypes.sizeof(IogProgress))
    lib().iog_session_poll(handle, byref(out))
    return out


def session_cancel(handle: SessionHandle) -> None:
    lib().iog_session_cancel(handle)


def session_wait(handle: SessionHandle, timeout_ns: int) -> bool:
    """True when every worker has finished; the GIL is released while waiting."""
    return int(lib().iog_session_wait(handle, timeout_ns)) == 0


def session_jobs(handle: SessionHandle) -> int:
    return int(lib().iog_session_jobs(handle))


def session_dir_stats(handle: SessionHandle, job: int, direction: int) -> IogDirStats:
    out = IogDirStats(struct_size=ctypes.sizeof(IogDirStats))
    lib().iog_session_dir_stats(handle, job, direction, byref(out))
    return out


def session_bs_counts(handle: SessionHandle, job: int, direction: int) -> dict[int, int]:
    """Realized block size -> counted requests, for READ or WRITE."""
    buf = (IogBsCount * BS_TABLE_MAX)()
    n = lib().iog_session_bs_counts(handle, job, direction, buf, BS_TABLE_MAX)
    return {buf[i].bs: buf[i].ios for i in range(min(n, BS_TABLE_MAX))}


def session_job_stats(handle: SessionHandle, job: int) -> IogJobStats:
    out = IogJobStats(struct_size=ctypes.sizeof(IogJobStats))
    lib().iog_session_job_stats(handle, job, byref(out))
    return out


@cache
def _hist_buckets() -> int:
    return hist_index(UINT64_MAX) + 1  # the overflow bucket is the last


def session_histogram(handle: SessionHandle, job: int, direction: int, kind: int
                      ) -> tuple[int, array[int]]:
    """The range of buckets that hold samples: (index of its first bucket, its counts as
    array('Q')); (0, empty) when the histogram is empty."""
    buckets = _hist_buckets()
    raw = (c_uint64 * buckets)()
    lib().iog_session_histogram(handle, job, direction, kind, raw, buckets)
    data = bytes(raw)
    body = data.lstrip(b"\0")
    if not body:
        return 0, array("Q")
    first = (len(data) - len(body)) // 8
    last = (len(data.rstrip(b"\0")) + 7) // 8
    return first, array("Q", data[first * 8:last * 8])


def session_series(handle: SessionHandle, job: int, direction: int) -> list[IogInterval]:
    cap = 64
    while True:
        buf = (IogInterval * cap)()
        n = lib().iog_session_series(handle, job, direction, buf, cap)
        if n <= cap:
            return list(buf[:n])
        cap = n


def session_verify(handle: SessionHandle, job: int
                   ) -> tuple[IogVerifyStats, list[IogVerifyFailure]]:
    out = IogVerifyStats(struct_size=ctypes.sizeof(IogVerifyStats))
    buf = (IogVerifyFailure * VERIFY_RECORDS)()
    n = lib().iog_session_verify(handle, job, byref(out), buf, VERIFY_RECORDS)
    return out, list(buf[:min(n, VERIFY_RECORDS)])


def session_fault(handle: SessionHandle) -> IogFault | None:
    out = IogFault(struct_size=ctypes.sizeof(IogFault))
    return out if lib().iog_session_fault(handle, byref(out)) else None


def session_watch_disk(handle: SessionHandle, stat_path: str) -> int:
    """Watch a block device's statistics file (before start); its index."""
    err = ctypes.create_string_buffer(ERR_MAX)
    return int(lib().iog_session_watch_disk(handle, os.fsencode(stat_path), err, ERR_MAX))


def session_disk_samples(handle: SessionHandle, disk: int) -> list[IogDiskSample]:
    cap = 64
    while True:
        buf = (IogDiskSample * cap)()
        buf[0].struct_size = ctypes.sizeof(IogDiskSample)
        n = lib().iog_session_disk_samples(handle, disk, buf, cap)
        if n <= cap:
            return list(buf[:n])
        cap = n


STATE_OTHER_NAMES = 1 << 0  # the files may have other names than when the state was written


def verify_state_check(state_path: str, files: bytes, flags: int = 0
                       ) -> tuple[IogStateCheck, list[IogVerifyFailure]]:
    """Check a verify state file against the job's files (``files``: the NUL-separated
    list of iog_job_spec.filename). Raises EngineError with the library's message."""
    out = IogStateCheck(struct_size=ctypes.sizeof(IogStateCheck))
    buf = (IogVerifyFailure * VERIFY_RECORDS)()
    err = ctypes.create_string_buffer(ERR_MAX)
    n = lib().iog_verify_state_check(os.fsencode(state_path), files, flags, byref(out), buf,
                                     VERIFY_RECORDS, err, ERR_MAX)
    return out, list(buf[:min(n, VERIFY_RECORDS)])


def session_destroy(handle: SessionHandle) -> None:
    lib().iog_session_destroy(handle)
