"""fio's vocabulary as iogate reads it: every job option fio has and what it becomes here
(translated, accepted with a note, accepted at its default value, or refused and why), and
fio's I/O engine names as iogate's engines.

An ioengine whose name is in the engine catalog (:mod:`iogate.engine.catalog`) is that engine:
fio and iogate name their engines alike, so the catalog is the one list. fio's other names
for the same requests (:data:`ENGINE_ALIASES`) are the only engine names kept here.
"""

from __future__ import annotations

from collections.abc import Collection

from iogate.engine import catalog
from iogate.expr import shown
from iogate.fio.jobfile import ValueProblem
from iogate.spec.modes import TRIM_MODES

__all__ = [
    "ALIASES",
    "AT_DEFAULT",
    "ENGINE_ALIASES",
    "ENGINE_OPTIONS",
    "FIO_DEFAULT_ENGINE",
    "FIO_OPTIONS",
    "FIO_VERIFY_KINDS",
    "HINTS",
    "MODES",
    "OUTPUT_ONLY",
    "TRIM_MODES",
    "VERIFY_REFUSED",
    "VERIFY_STATE",
    "VERIFY_WAY",
    "engine_for",
    "fate",
]

# -- what fio has -------------------------------------------------------------------------

# fio's job options (fio 3.33, --cmdhelp=all) and their aliases, plus options of its I/O
# engines that job files often carry, plus the newer ones iogate reads (the last line): to
# tell an option iogate refuses from a misspelling.
FIO_OPTIONS = frozenset("""
allow_file_create allow_mounted_write allrandrepeat threads atomic ba block_error_percentiles
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
verify_async_cpus verify_backlog verify_backlog_batch verify_dump verify_fatal verify_interval
verify_offset verify_only verify_pattern verify_state_load verify_state_save wait_for
wait_for_previous write_barrier write_bw_log write_hint write_hist_log write_iolog write_iops_log
write_lat_log
zero_buffers zone_reset_frequency zone_reset_threshold zonecapacity zonemode zonerange
zonesize zoneskip
hipri hipri_percentage fixedbufs registerfiles sqthread_poll sqthread_poll_cpu nonvectored
uncached nowait force_async cmdprio cmdprio_percentage cmdprio_class cmdprio_bssplit
userspace_reap cmd_type sg_write_mode readfua writefua
steadystate_check_interval random_sequence_stride log_window_value log_issue_time
""".split())

ENGINE_OPTIONS = frozenset("""
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
    "ss_ramp": "steadystate_ramp_time", "ss_interval": "steadystate_check_interval",
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
                     "log_max_value", "log_offset", "log_compression",
                     "log_compression_cpus", "log_store_compressed", "log_unix_epoch",
                     "log_alternate_epoch", "log_alternate_epoch_clock_id", "log_entries",
                     "bwavgtime", "iopsavgtime", "log_window_value", "log_issue_time"),
                    _OUTPUT),
    **dict.fromkeys(("clat_percentiles", "lat_percentiles", "slat_percentiles",
                     "percentile_list", "significant_figures"), _PERCENTILES),
    **dict.fromkeys(("gtod_reduce", "disable_lat", "disable_clat", "disable_slat",
                     "disable_bw_measurement"), _LATENCY),
    "disk_util": "iogate reports the device in the environment of each case, not its "
                 "utilisation",
    "log_prio": "iogate keeps the latency of the requests issued with the command priority "
                "apart: read.prio_clat and write.prio_clat in its results",
    "unified_rw_reporting": "iogate reports read, write and total for every workload",
    "unit_base": "iogate's results are in bytes",
    "error_dump": "iogate names the first error of a case with its errno and offset",
    "thread": "iogate runs every job as threads of one process",
    "unlink": "iogate removes the temporary files it creates and never deletes a named file",
    "unlink_each_loop": "iogate removes the temporary files it creates and never deletes a "
                        "named file",
}

# Options whose value means what iogate does anyway: option -> {value: what iogate does}
# (the key None: any value). Accepted with that comment; any other value is refused.
SAME_MEANING: dict[str, dict[str | None, str]] = {
    "mem": dict.fromkeys(("shm", "mmap", "mmapshared"),
                         "fio takes its buffers from shared memory or an anonymous mapping; "
                         "iogate allocates them aligned to the page: the same requests, from "
                         "memory of the same page size (fio's huge-page kinds are refused)"),
    "verify_async_cpus": {None: "fio runs its verify_async threads on these CPUs; iogate "
                                "verifies in the job's own threads, on the job's CPUs"},
    "exitall_on_error": {"1": "fio stops every job at the first error of one; iogate lets the "
                              "others of the group run to their end: the workload that failed "
                              "is an error either way, and the others are measured whole"},
    "serialize_overlap": {"1": "fio holds back a request whose blocks overlap one in flight, "
                               "so that a block has one writer at a time; iogate issues it, and "
                               "its verify accepts either contents of a block two writes raced "
                               "on (with the random map a verified workload's requests never "
                               "overlap: its passes over the region do not meet in flight)"},
    "continue_on_error": dict.fromkeys(
        ("read", "write", "io", "verify", "all", "1"),
        "fio counts the I/O errors of this kind and goes on; iogate ends the case at the "
        "first one, as an error naming the request and its errno: the same run on a device "
        "that returns none, a stricter verdict on one that does"),
    "io_submit_mode": {"offload": "iogate issues every request at its due time from the "
                                  "job's own thread, which is what fio's offload mode does"},
    "allrandrepeat": {"1": "iogate seeds every random choice (offsets, sizes, the mix) from "
                           "the job's seed: the same on every run unless randrepeat: false",
                      "0": "fio's default; iogate draws sizes and the mix from the job's "
                           "seed like its offsets: the same kind of random, repeated"},
    "fadvise_hint": {"0": "iogate gives the kernel no access-pattern hint",
                     "1": "iogate gives the kernel no access-pattern hint (fio's "
                          "POSIX_FADV_RANDOM/SEQUENTIAL): reads are measured without it"},
    "create_serialize": {None: "iogate lays out the files of a case before its run starts, "
                               "one after another"},
    "clocksource": {None: "iogate times every request with CLOCK_MONOTONIC (clock_gettime), "
                          "whatever clock fio is told to read: the same durations, read from "
                          "iogate's clock"},
    "experimental_verify": {"1": "fio finds the blocks to check by replaying its offsets "
                                 "instead of logging each write; iogate keeps every block "
                                 "written: the same blocks are read back and checked"},
    "threads": {None: "fio reads 'threads' as an option of its tiobench profile, which this "
                      "job does not use: it changes nothing (fio's option for threads is "
                      "'thread')"},
}

# Options accepted only at fio's default value (as fio would read them), which iogate shares.
AT_DEFAULT: dict[str, tuple[str, ...]] = {
    "exitall": ("0",), "exitall_on_error": ("0",), "mem": ("malloc",),
    "continue_on_error": ("none", "0"), "stats": ("1",), "zonemode": ("none",),
    "io_submit_mode": ("inline",), "do_verify": ("1",), "verify_async": ("0",), "nice": ("0",),
    "percentage_random": ("100",), "file_service_type": ("roundrobin",),
    "pre_read": ("0",),
    "allow_mounted_write": ("0",), "serialize_overlap": ("0",),
    "verify_only": ("0",), "file_append": ("0",), "atomic": ("0",), "lockfile": ("none",),
    "thinktime_iotime": ("0",), "thinktime_blocks_type": ("complete",),
    "rate_ignore_thinktime": ("0",), "bs_unaligned": ("0",),
    "random_generator": ("tausworthe", "tausworthe64"), "experimental_verify": ("0",),
}

_NO_TRIM = "it trims the blocks a verifying job wrote; iogate trims only in the trim rw " \
           "modes (trim, randtrim, trimwrite, randtrimwrite), which do not verify"
_USE_EXPECT = "state the bound as an expectation instead, e.g. read.iops: \">= 1000\" or " \
              "read.clat.p99: \"<= 2ms\""
_NO_PIN = "iogate places its threads by cpus_allowed or numa_cpu_nodes and their memory by " \
          "numa_mem_policy: no locked or huge-page memory, no CPU for the clock"
_NO_ZONES = "iogate does not run zoned block devices in zone mode"
VERIFY_WAY = "iogate checks every written block with verify: md5, sha1, sha256, sha512, " \
             "crc64, crc32c, crc32, xxhash or meta, after the run or every verify_backlog " \
             "writes"
_NO_LOGS = "iogate does not replay or record I/O logs"

# fio's verify kinds and the iogate checksum of each (fio's xxhash is XXH32: iogate's
# xxh32); the others (sha3-*, crc16, crc7, pattern) are refused with VERIFY_WAY.
FIO_VERIFY_KINDS = {"md5": "md5", "sha1": "sha1", "sha256": "sha256", "sha512": "sha512",
                    "crc64": "crc64", "crc32c": "crc32c", "crc32c-intel": "crc32c",
                    "crc32": "crc32", "xxhash": "xxh32", "meta": "meta", "0": "none",
                    "null": "none"}
# fio's options on how verification state is kept and reported: what iogate does instead.
VERIFY_STATE = {
    "verify_state_save": "fio saves the written-block state at exit for a later "
                         "verify_state_load; iogate keeps it in memory for the read-back of "
                         "the same run",
    "verify_dump": "fio dumps the blocks that fail verification to files; iogate records each "
                   "failure with its offset, kind and generation in the results",
    "verify_async": "fio verifies in threads of their own (a speed setting); iogate verifies "
                    "in the job's workers",
}
# fio's verify options iogate cannot keep, and why.
VERIFY_REFUSED = {
    "verify_state_load": "it loads the written-block state a previous run saved; iogate "
                         "checks the blocks written in the same run (their headers carry the "
                         "run's generation): verify in the job that writes",
    "verify_only": "it reads back blocks without writing them; iogate checks the blocks a "
                   "job wrote in the same run (their headers carry the run's generation): "
                   "verify in the job that writes",
}
HINTS: dict[str, str] = {
    "exec_prerun": "it runs a shell command; a suite never runs commands: run it before "
                   "iogate",
    "exec_postrun": "it runs a shell command; a suite never runs commands: run it after "
                    "iogate",
    "nrfiles": "name each file: filename=a:b:c",
    **dict.fromkeys(("latency_target", "latency_window", "latency_percentile", "latency_run"),
                    "fio searches for the queue depth whose latency meets the target; "
                    "sweep iodepth instead (sweep: {iodepth: [1, 2, 4, ...]}) with the bound "
                    "as an expectation, e.g. read.clat.p99: \"<= 500us\": the knee plot "
                    "shows the deepest queue that meets it"),
    "max_latency": _USE_EXPECT,
    "continue_on_error": "an I/O error ends an iogate case as an error",
    "ignore_error": "an I/O error ends an iogate case as an error",
    **dict.fromkeys(("gtod_cpu", "lockmem",
                     "hugepage-size", "mem"),
                    _NO_PIN),
    **dict.fromkeys(("zonemode", "zonesize", "zonecapacity", "zonerange", "zoneskip",
                     "read_beyond_wp", "max_open_zones", "job_max_open_zones",
                     "ignore_zone_limits", "zone_reset_threshold", "zone_reset_frequency"),
                    _NO_ZONES),
    **dict.fromkeys(("verify_offset", "verify_backlog_batch"), VERIFY_WAY),
    **dict.fromkeys(("trim_percentage", "trim_verify_zero", "trim_backlog",
                     "trim_backlog_batch"), _NO_TRIM),
    **dict.fromkeys(("write_iolog", "read_iolog", "read_iolog_chunked", "replay_no_stall",
                     "replay_redirect", "replay_scale", "replay_align", "replay_time_scale",
                     "replay_skip", "merge_blktrace_file", "merge_blktrace_scalars",
                     "merge_blktrace_iters"), _NO_LOGS),
    "stats": "iogate measures every workload",
    "filename_format": "name the files in filename",
    "opendir": "name the files in filename",
    "unique_filename": "iogate does not run fio's client and server",
    "profile": "write the profile's jobs out as options",
    "random_generator": "iogate uses its own generator, as fio's default tausworthe does",
    "percentage_random": "iogate's random workloads are all random and its sequential ones "
                         "all sequential",
    "norandommap": "",  # translated; listed for completeness
    "bs_unaligned": "iogate's request sizes are multiples of the smallest one",
    "serialize_overlap": "iogate does not hold back a request whose blocks overlap one in "
                         "flight",
}

# fio's options the import converts that no suite key is named after (a suite key of the
# same name is the option itself), and what each becomes; the options of HINTS listed here
# convert only where the text says, and are refused with their hint elsewhere.
CONVERTED: dict[str, str] = {
    "name": "the workload's name (renamed to iogate's name rules, with a comment, when needed)",
    "description": "a comment above the workload",
    "stonewall": "the end of a group: the jobs between two stonewalls share a group: and run "
                 "together",
    "wait_for": "accepted where iogate runs the jobs the same way (the job waited for ends "
                "before this one starts), refused where it cannot",
    "exit_what": "with exitall: which workloads a finished one stops (exitall: true for its "
                 "group, or the list of fio's reporting group)",
    "buffered": "direct, its opposite",
    "cpumask": "cpus_allowed: the CPUs of the mask, as a list",
    "create_on_open": "for a job that only writes, fallocate: none (the file grows as it is "
                      "written); a job that reads has its file laid out first all the same",
    "directory": "the files fio names itself in it ($jobname.$jobnum.$filenum); a clone with "
                 "files of its own becomes a workload of its own, all in one group",
    "nrfiles": "with directory or filename_format, that many files named as fio names them; "
               "otherwise refused: name each file, filename=a:b:c",
    "filename_format": "with $jobname, $jobnum and $filenum, the files named as fio names "
                       "them; otherwise refused: name the files in filename",
    "openfiles": "accepted at nrfiles or more (every file open, as iogate keeps them), and 1 "
                 "with file_service_type=random as file_service_type: sequential; fewer is "
                 "refused",
    "filesize": "the files' size; a smaller size becomes io_size, the amount moved",
    "fsync_on_close": "end_fsync",
    "iodepth_batch": "iodepth_batch_submit",
    "kb_base": "how the job's sizes are read (1000: 4KiB is 4000 bytes); the suite has them "
               "in bytes",
    "loops": "io_size and number_ios that many times over, with a comment (fio starts each "
             "pass at the region's start)",
    "nonvectored": "a note: iogate's io_uring requests are never vectored",
    "offset_increment": "one workload per clone, each with its own region, in one group",
    "rate_min": "an expectation on every interval of rate_cycle (read.bw: \">= 1MiB/s in all "
                "of 1s\"): fio ends the job, iogate fails the case",
    "rate_iops_min": "an expectation on every interval of rate_cycle (read.iops: \">= 100 in "
                     "all of 1s\")",
    "rate_cycle": "the interval of the rate_min and rate_iops_min expectations",
    "rw_sequencer": "sequential is noted (a sequential job's offsets are sequential either "
                    "way); identical with an offset modifier is refused",
    "scramble_buffers": "a note: iogate never alters a buffer a little; refill_buffers gives "
                        "every write new contents",
    "steadystate": "steady_state: iops:10% is deviation_pct: 10, iops_slope:0.5% a slope_pct "
                   "over the window, lat and lat_slope the mean completion latency; absolute "
                   "limits are refused",
    "steadystate_duration": "steady_state's window, in rounds of steadystate_check_interval",
    "steadystate_ramp_time": "steady_state's rounds before the window starts",
    "steadystate_check_interval": "steady_state's round (one second unless given)",
    "verify_interval": "accepted when a multiple of 512 or at least the block size (iogate "
                       "checks every sector's stamp and the whole block)",
    "verify_pattern": "buffer_pattern, with verify: crc32c when the job has no verify of its "
                      "own",
    **VERIFY_STATE,
}


def fate(option: str, keys: Collection[str]) -> str:
    """What fio's job ``option`` becomes when a job file is imported, in a sentence:
    ``keys`` are the suite's workload keys (an option of the same name is that key)."""
    if option in ALIASES and option not in keys:
        return f"the same as {ALIASES[option]}"
    said: list[str] = []
    if option in keys:
        said.append(f"the suite key {option}, in fio's meaning")
    elif option in CONVERTED:
        said.append(CONVERTED[option])
    if option in OUTPUT_ONLY:
        said.append(f"accepted with a note: {OUTPUT_ONLY[option]}")
    if option in AT_DEFAULT and not said:
        said.append(f"accepted at fio's default ({', '.join(AT_DEFAULT[option])})")
    for value, meaning in SAME_MEANING.get(option, {}).items():
        said.append(f"accepted{'' if value is None else ' as ' + value} with a note: "
                    f"{meaning}")
    if option in VERIFY_REFUSED:
        said.append(f"refused: {VERIFY_REFUSED[option]}")
    if said:
        if option in HINTS and HINTS[option] and option not in CONVERTED:
            said.append(f"other values refused: {HINTS[option]}")
        return "; ".join(said)
    if HINTS.get(option):
        return f"refused: {HINTS[option]}"
    if option in ENGINE_OPTIONS:
        return "refused: an option of fio's I/O engines; iogate's engines take none"
    return "refused: iogate has no such setting"


# -- rw -----------------------------------------------------------------------------------

MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", *TRIM_MODES)

# -- I/O engines --------------------------------------------------------------------------

FIO_DEFAULT_ENGINE = "psync"  # fio's ioengine when a job names none (on Linux)
# fio's engines that issue the requests of an engine of the catalog, under another name.
ENGINE_ALIASES = {"pvsync": "psync", "vsync": "sync", "pvsync2": "psync"}


def engine_for(name: str) -> tuple[str, str]:
    """The iogate engine that runs fio's ``ioengine=name``, and a comment when its name is
    not fio's; raise ValueProblem saying why no engine does."""
    if catalog.get(name) is not None:
        return name, ""
    if name in ("aio", "linuxaio") and catalog.get("libaio") is not None:
        return "libaio", f"fio runs its libaio engine for ioengine={name}"
    if name == "splice":
        return "psync", ("fio's splice moves each block through a pipe with splice(2), "
                         "through the page cache; iogate issues the same requests at the "
                         "same offsets with pread/pwrite")
    if name in ENGINE_ALIASES:
        return ENGINE_ALIASES[name], f"fio's {name} issues the same requests, one buffer per call"
    if name == "windowsaio":
        raise ValueProblem("windowsaio is fio's Windows engine; iogate runs on Linux with "
                           + catalog.spoken())
    if name == "exec":
        raise ValueProblem("the exec engine runs a program; a suite never runs commands")
    if name.startswith("external"):
        raise ValueProblem("an external engine loads a shared library; iogate runs only its "
                           "own engines: " + catalog.spoken())
    raise ValueProblem(f"ioengine '{shown(name)}' is not supported; iogate runs "
                       + catalog.spoken())
