"""The limits of libiogate's public structs, defined once on the Python side.

Each name here is its ``IOG_`` constant of native/include/iogate.h without the prefix, with
the same value: the sizes of the arrays of the job spec and of the results, and the lengths
of the strings the library takes. The bindings (iogate.engine.native), the run loop
(iogate.engine.session) and the suite language (its field types) import them from here.
Importing this module loads nothing: when the library is loaded, the bindings compare every
value here with the library's own (iog_describe_constants) and refuse a library that
disagrees.
"""

from __future__ import annotations

PATH_MAX = 4096  # bytes of a path, or of a job's list of file names, with the final NUL
ERR_MAX = 512  # bytes of a message from the library, with its NUL
DATA_DIRS = 2  # read and write: the directions that move data
BS_ENTRIES_MAX = 64  # block size entries per direction (bssplit, bsrange)
BS_TABLE_MAX = 64  # distinct realized block sizes counted per direction
ZONES_MAX = 16  # zones of the zoned random distribution
SEQUENCE_MAX = 64  # block indices of the sequence random distribution
PATTERN_MAX = 256  # bytes of a buffer pattern
FILES_MAX = 64  # files per job
QD_BUCKETS = 13  # qd_hist[i] counts depths in [2^i, 2^(i+1))
WEIGHT_TOTAL = 1_000_000  # weights are parts per million
VERIFY_HEADER = 64  # bytes of the header at the start of every verified block
VERIFY_RECORDS = 16  # verification failures kept in detail per job
CMDPRIO_MAX = 16  # command priority entries per direction (cmdprio)
CPUS_MAX = 1024  # CPUs a job's cpus can name (0 .. 1023)
CPU_WORDS = 16  # 64-bit words of a job's cpus: CPUS_MAX / 64
NUMA_NODES_MAX = 64  # NUMA nodes a job can name (0 .. 63)
ENGINE_NAME_MAX = 32  # bytes of an engine name, with its NUL
ENGINE_SUMMARY_MAX = 128  # bytes of an engine summary, with its NUL
DISK_COUNTERS = 17  # counters of a block device's stat line
DISKS_MAX = 4  # watched devices per session
