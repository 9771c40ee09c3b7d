/*
 * iogate.h - the public C ABI of libiogate, the iogate I/O engine.
 *
 * This is the only public header. A caller describes one or more jobs with
 * struct iog_job_spec, creates a session from them, starts it (worker threads
 * run in the background), polls progress, optionally cancels, waits, and then
 * copies out statistics, latency histograms and per-interval series. All jobs
 * of one session run concurrently.
 *
 * Conventions
 *  - Every function that can fail returns 0 (or a non-negative count) on
 *    success and a negative errno on failure. When `err` is not NULL, a
 *    NUL-terminated human-readable message is written into it (at most
 *    `errlen` bytes including the NUL).
 *  - The library never aborts the process on bad input or I/O errors; I/O
 *    errors are counted in the statistics of the job that saw them.
 *  - Every struct exchanged with the library starts with `struct_size`, which
 *    the caller sets to sizeof() of the struct it was compiled against, and
 *    structs only ever grow at their end. A caller compiled against an older
 *    header passes a smaller struct: on input its missing tail is taken as
 *    zero (every field added later means "as before" when zero), on output
 *    only its prefix is written. A caller compiled against a newer header
 *    passes a larger struct: on input it is accepted when every byte past
 *    what this library knows is zero (else -E2BIG: the caller asked for
 *    something this library cannot do), on output that tail is zeroed. A
 *    size below the struct's first version (IOG_<NAME>_SIZE_VER0) is -EINVAL.
 *  - Times are nanoseconds, sizes bytes, on CLOCK_MONOTONIC.
 *  - Versions. IOG_ABI_VERSION (iog_abi_version()) changes when, and only
 *    when, a caller built against the previous header could go wrong: a
 *    field moves, shrinks or changes meaning, a function changes its
 *    signature or meaning or is removed, a constant changes its value.
 *    Callers must check it before use. Additions are compatible and change
 *    IOG_ABI_REVISION instead (one up; back to 0 when IOG_ABI_VERSION
 *    changes): a field appended to a struct (see struct_size), a new
 *    function, a new constant, enum value or flag bit. A caller finds what a
 *    library has with iog_describe_struct (fields), iog_describe_constants
 *    (constants, the revision among them) and the symbols it exports.
 *
 * Latency histograms
 *  Values (ns) below IOG_HIST_LINEAR are counted exactly, one bucket per
 *  nanosecond. Above that, every power-of-two range [2^k, 2^(k+1)) is split
 *  into IOG_HIST_SUB_BUCKETS equal buckets, for 2^k < IOG_HIST_TOP_NS. A value
 *  reported as the midpoint of its bucket is therefore within
 *  1 / (2 * IOG_HIST_SUB_BUCKETS) = 0.39% of the recorded value (the stated
 *  bound is 1%). Values at or above IOG_HIST_TOP_NS (about 1100 s) are not
 *  clamped: they are counted in the last bucket, the overflow bucket, and the
 *  exact maximum is kept in the summary. Histograms are plain count arrays:
 *  merging two is adding them element by element.
 */
#ifndef IOGATE_H
#define IOGATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define IOG_API __attribute__((visibility("default")))
#else
#define IOG_API
#endif

/* 8: batch_complete_max 0 means batch_complete_min, the ramp's requests count
 * toward size and the limits, iog_job_spec.write_layout (after
 * thinktime_spin_ns, an addition to 7). Revision 1: IOG_JOB_FILES_RANDOM and
 * IOG_JOB_FILES_SEQUENTIAL. Revision 2: iog_job_spec.cpus, IOG_JOB_CPUS_SPLIT. Revision 3:
 * IOG_ENGINE_RING, the IOG_JOB_RING_* flags, iog_job_spec.sqpoll_cpu, the NUMA fields
 * (numa_cpu_nodes, numa_mem_nodes, numa_mem_mode), enum iog_numa_mem. */
#define IOG_ABI_VERSION  8
#define IOG_ABI_REVISION 3

/* The size of the first version of each struct with a struct_size: the
 * smallest the library accepts. These never change; fields added later are
 * appended after them (see the top). */
#define IOG_JOB_SPEC_SIZE_VER0     8824
#define IOG_DIR_STATS_SIZE_VER0    408
#define IOG_JOB_STATS_SIZE_VER0    72
#define IOG_VERIFY_STATS_SIZE_VER0 80
#define IOG_FAULT_SIZE_VER0        56
#define IOG_PROGRESS_SIZE_VER0     96
#define IOG_ENGINE_INFO_SIZE_VER0  176
#define IOG_DISK_SAMPLE_SIZE_VER0  152
#define IOG_STATE_CHECK_SIZE_VER0  144

/* Histogram geometry (see the comment at the top). */
#define IOG_HIST_SUB_BITS    7
#define IOG_HIST_SUB_BUCKETS (1u << IOG_HIST_SUB_BITS)   /* 128 per octave   */
#define IOG_HIST_LINEAR      (2u * IOG_HIST_SUB_BUCKETS) /* 256 exact values */
#define IOG_HIST_TOP_BITS    40                          /* 2^40 ns ~ 1100 s */
#define IOG_HIST_TOP_NS      (1ull << IOG_HIST_TOP_BITS)
/* linear part + one group per octave from 2^8 to 2^39 + the overflow bucket */
#define IOG_HIST_BUCKETS                                                                           \
    (IOG_HIST_LINEAR + (IOG_HIST_TOP_BITS - IOG_HIST_SUB_BITS - 1) * IOG_HIST_SUB_BUCKETS + 1)

#define IOG_PATH_MAX 4096
#define IOG_ERR_MAX  512

#define IOG_DATA_DIRS      2        /* read and write: directions that move data          */
#define IOG_BS_ENTRIES_MAX 64       /* block size entries per direction (bssplit, bsrange) */
#define IOG_BS_TABLE_MAX   64       /* distinct realized block sizes counted per direction */
#define IOG_ZONES_MAX      16       /* zones of random_distribution=zoned                  */
#define IOG_SEQUENCE_MAX   64       /* block indices of random_distribution=sequence       */
#define IOG_PATTERN_MAX    256      /* bytes of buffer_pattern                            */
#define IOG_FILES_MAX      64       /* files per job                                       */
#define IOG_QD_BUCKETS     13       /* queue depth buckets: [1], [2,3], [4,7], ... [4096,8191] */
#define IOG_WEIGHT_TOTAL   1000000u /* weights are parts per million                 */
#define IOG_VERIFY_HEADER  64       /* bytes of the header at the start of a verified block */
#define IOG_VERIFY_RECORDS 16       /* verification failures kept in detail per job        */
#define IOG_CMDPRIO_MAX    16       /* command priority entries per direction (cmdprio)    */
#define IOG_CPUS_MAX       1024     /* CPUs iog_job_spec.cpus can name (0 .. 1023)         */
#define IOG_CPU_WORDS      16       /* words of iog_job_spec.cpus: IOG_CPUS_MAX / 64       */
#define IOG_NUMA_NODES_MAX 64       /* NUMA nodes a job can name: bits of a uint64_t       */

/* I/O engines are named (iog_job_spec.engine); the library lists the ones
 * it has with iog_engine_count and iog_engine_describe. */
#define IOG_ENGINE_NAME_MAX    32  /* bytes of an engine name, with its NUL  */
#define IOG_ENGINE_SUMMARY_MAX 128 /* bytes of an engine summary, with its NUL */

/* iog_engine_info.flags: what a caller must know of an engine. */
#define IOG_ENGINE_DOES_IO   (1u << 0) /* touches files (null does not: no file, no verify) */
#define IOG_ENGINE_NO_DIRECT (1u << 1) /* cannot do O_DIRECT: IOG_JOB_DIRECT is refused     */
#define IOG_ENGINE_CMDPRIO   (1u << 2) /* passes an I/O priority per request (cmdprio)      */
#define IOG_ENGINE_NO_EXTEND (1u << 3) /* writes need the file laid out to its size first   */
#define IOG_ENGINE_RING      (1u << 4) /* takes the IOG_JOB_RING_* options (io_uring's)     */

enum iog_rw {
    IOG_RW_READ = 0,
    IOG_RW_WRITE = 1,
    IOG_RW_RANDREAD = 2,
    IOG_RW_RANDWRITE = 3,
    IOG_RW_RW = 4,     /* sequential mix of reads and writes */
    IOG_RW_RANDRW = 5, /* random mix of reads and writes     */
    /* Trims (discards): BLKDISCARD on a block device, a punched hole
     * (fallocate PUNCH_HOLE | KEEP_SIZE) in a regular file; every engine
     * performs them synchronously on the worker thread, an engine that does
     * no I/O (null) completes them at once. Counted in IOG_DIR_TRIM. The
     * job spec's second per-direction slot (index 1: nbs, bs, blockalign,
     * rate_iops, rate_bytes) describes the trims; the first is ignored. */
    IOG_RW_TRIM = 6,     /* sequential trims                                     */
    IOG_RW_RANDTRIM = 7, /* random trims                                         */
    /* Each block is trimmed, then written with the same offset and size
     * (slot 1 describes both, and its rate limits the pair's requests
     * alike); `size` counts the trims: one pass trims and rewrites it all. */
    IOG_RW_TRIMWRITE = 8,     /* sequential trim + write pairs */
    IOG_RW_RANDTRIMWRITE = 9, /* random trim + write pairs     */
};

/* Statistics directions. SYNC holds the fsync/fdatasync calls a job makes
 * (sync_every): ios counts them, bytes is 0, and their latency is the whole
 * call (slat 0, clat = lat = resp). TRIM holds the trims of the trim rw
 * modes: ios and bytes as for data, and, performed synchronously, slat 0 and
 * clat = lat. The job spec's per-direction arrays have IOG_DATA_DIRS
 * entries, READ and WRITE; trims take theirs from slot 1 (see enum iog_rw).
 * IOG_DIR_COUNT grows as directions are added: no public struct is sized
 * by it. */
enum iog_dir {
    IOG_DIR_READ = 0,
    IOG_DIR_WRITE = 1,
    IOG_DIR_SYNC = 2,
    IOG_DIR_TRIM = 3,
    IOG_DIR_COUNT = 4,
};

/* slat: submission (prepare to handed to the kernel); clat: handed to the
 * kernel to completion; lat: prepare to completion (slat + clat).
 * resp: from when the request was due to completion. Under a rate limit a
 * request is due at its scheduled time, otherwise when it is prepared, so
 * resp = lag + lat and a stalled device cannot hide its latency by delaying
 * the requests that should have been issued meanwhile (coordinated
 * omission). lag: from due to prepared (0 without a rate limit). */
enum iog_lat {
    IOG_LAT_SLAT = 0,
    IOG_LAT_CLAT = 1,
    IOG_LAT_LAT = 2,
    IOG_LAT_RESP = 3,
    IOG_LAT_LAG = 4,
    IOG_LAT_COUNT = 5,
};
/* iog_session_histogram only: the clat of the requests that carried a
 * command priority (iog_job_spec.cmdprio). */
#define IOG_HIST_PRIO_CLAT 5

/* How a rate-limited direction spaces its requests. */
enum iog_rate_process {
    IOG_RATE_LINEAR = 0,  /* evenly spaced due times                        */
    IOG_RATE_POISSON = 1, /* exponential gaps with the same mean (arrivals) */
};

/* Where random requests land in the region (random rw modes only). Block
 * numbers are counted in units of blockalign. For ZIPF and PARETO the hot
 * blocks are spread over the region by a fixed permutation derived from the
 * seed, not bunched at its start. */
enum iog_dist {
    IOG_DIST_UNIFORM = 0, /* every aligned block equally likely                */
    IOG_DIST_ZIPF = 1,    /* dist_param = theta > 0, theta != 1                 */
    IOG_DIST_PARETO = 2,  /* dist_param = h, 0 < h < 1                          */
    IOG_DIST_NORMAL = 3,  /* dist_param = standard deviation, percent of region, */
                          /* centred on the middle of the region (redrawn when   */
                          /* outside it)                                         */
    IOG_DIST_ZONED = 4,   /* zones[]: access share and size share per zone,      */
                          /* consecutive from the start of the region            */
    IOG_DIST_SEQUENCE = 5 /* sequence[]: block indices visited in that order, over */
                          /* and over (see iog_job_spec.nsequence); each thread  */
                          /* of the job follows it from its start                */
};

/* What a job does every sync_every writes. */
enum iog_sync_kind { IOG_SYNC_NONE = 0, IOG_SYNC_FSYNC = 1, IOG_SYNC_FDATASYNC = 2 };

/* A session moves through these states in order, skipping none but RAMP:
 * CREATED until iog_session_start; LAYOUT while the background thread
 * prepares the files (also for the moment it takes to set up the run when
 * there is nothing to write); RAMP once the run clock started and workers
 * run, while no job counts yet (every job has ramp_ns > 0); RUNNING once
 * counting began (at the earliest count start over jobs); DONE when every
 * worker finished, was cancelled, or never started (cancel or a layout
 * error during LAYOUT). VERIFY (only for jobs with verify and no
 * verify_backlog) comes after RUNNING once every worker's run ended and some
 * workers read back what they wrote; the interval series end with the run,
 * the read-back is not part of them. */
enum iog_state {
    IOG_STATE_CREATED = 0,
    IOG_STATE_LAYOUT = 1,  /* creating or extending files, in the background */
    IOG_STATE_RAMP = 2,    /* running, not yet counted (ramp_time)         */
    IOG_STATE_RUNNING = 3, /* running and counted                          */
    IOG_STATE_VERIFY = 4,  /* reading back written blocks (read-back phase) */
    IOG_STATE_DONE = 5,    /* every worker finished (or was cancelled)     */
};

/* Checksum of verified blocks (iog_job_spec.verify). */
enum iog_verify {
    IOG_VERIFY_NONE = 0,
    IOG_VERIFY_CRC32C = 1, /* CRC-32C (Castagnoli), ISA-L crc32_iscsi */
    IOG_VERIFY_XXH64 = 2,  /* XXH64 of libxxhash, seed 0             */
    IOG_VERIFY_CRC32 = 3,  /* CRC-32 (IEEE), zlib crc32              */
    /* Digests of OpenSSL's libcrypto (EVP), kept whole after the header. */
    IOG_VERIFY_MD5 = 4,    /* MD5, 16 bytes                          */
    IOG_VERIFY_SHA1 = 5,   /* SHA-1, 20 bytes                        */
    IOG_VERIFY_SHA256 = 6, /* SHA-256, 32 bytes                      */
    IOG_VERIFY_SHA512 = 7, /* SHA-512, 64 bytes                      */
    /* CRC-64 with the polynomial of fio's crc64 (0xad93d23594c935a9, "Jones",
     * reflected), initial value 0 and no final inversion: ISA-L
     * crc64_jones_refl. */
    IOG_VERIFY_CRC64 = 8,
    IOG_VERIFY_XXH32 = 9, /* XXH32 of libxxhash, seed 0 (fio's xxhash) */
    /* No data checksum: the header fields (offset, length, generation,
     * sequence, file, job) and every sector's stamp are checked (fio's meta). */
    IOG_VERIFY_META = 10,
};

/* What a read-back found wrong with a block (iog_verify_failure.kind). */
enum iog_verify_kind {
    IOG_VERIFY_TORN = 0,        /* checksum mismatch: the block is partly old, partly new */
    IOG_VERIFY_LOST = 1,        /* an older write (earlier generation or sequence), or no
                                   header at all, where a later write was acknowledged */
    IOG_VERIFY_MISDIRECTED = 2, /* a valid block written for another offset or file */
    IOG_VERIFY_READ_ERROR = 3,  /* the read-back itself failed or came back short */
    IOG_VERIFY_KINDS = 4,
};

/*
 * What iog_verify_state_check found: how each block position named by the
 * state file's write records reads now.
 *  - intact: every write to it was covered by a completed sync, and it
 *    holds the last of them (or a later write of the same run: one whose
 *    completion was not yet recorded).
 *  - not_durable: its last write completed after the last completed sync
 *    (or never saw one): it may hold that write, an earlier one or what
 *    was there before, but no damaged or misplaced data; not_durable_new of
 *    them hold the last write recorded, or a later one.
 *  - lost: it holds data older than the last write a completed sync
 *    covered (an earlier write, another run's block, no block header, or
 *    the file ends before it): the device broke its promise.
 *  - torn, misdirected, read_errors: as the iog_verify_kind of that name,
 *    whether or not a sync covered its writes.
 * The six counts add up to blocks.
 */
struct iog_state_check {
    uint32_t struct_size;
    uint32_t nrecords;   /* failures kept in detail, at most IOG_VERIFY_RECORDS */
    uint64_t generation; /* of the session that wrote the state file */
    uint32_t job;        /* the job's index in that session */
    uint32_t verify;     /* enum iog_verify */
    uint64_t block_size;
    uint64_t region_start; /* offset of the first block position in each file */
    uint64_t file_blocks;  /* block positions of each file */
    uint32_t nfiles;
    uint32_t complete;      /* 1: the session closed the state file at its end */
    uint64_t writes;        /* write records read */
    uint64_t syncs;         /* records of completed syncs read */
    uint64_t ignored_bytes; /* bytes after the last whole record that checks (a crash
                               cut the file while it was being written): not used */
    uint64_t blocks;        /* block positions written: the sum of the six counts */
    uint64_t intact;
    uint64_t not_durable;
    uint64_t not_durable_new;
    uint64_t lost;
    uint64_t torn;
    uint64_t misdirected;
    uint64_t read_errors;
};

/* iog_job_spec.numa_mem_mode: a thread's memory policy (set_mempolicy(2)'s). */
enum iog_numa_mem {
    IOG_NUMA_MEM_NONE = 0,       /* left as it is */
    IOG_NUMA_MEM_DEFAULT = 1,    /* the system's default */
    IOG_NUMA_MEM_LOCAL = 2,      /* the node of the CPU that allocates */
    IOG_NUMA_MEM_PREFER = 3,     /* the one node of numa_mem_nodes first, others when full */
    IOG_NUMA_MEM_BIND = 4,       /* only the nodes of numa_mem_nodes */
    IOG_NUMA_MEM_INTERLEAVE = 5, /* page by page over the nodes of numa_mem_nodes */
};

/* What ended a session abnormally (iog_session_fault). */
enum iog_fault_kind {
    IOG_FAULT_NONE = 0,
    IOG_FAULT_IO_TIMEOUT = 1, /* a request outstanding longer than io_timeout_ns */
};

/* iog_job_spec.flags */
#define IOG_JOB_TIME_BASED   (1u << 0) /* run for runtime_ns, looping over the region */
#define IOG_JOB_DIRECT       (1u << 1) /* O_DIRECT with aligned buffers               */
#define IOG_JOB_NO_LAYOUT    (1u << 2) /* never create or extend the file             */
#define IOG_JOB_REFILL       (1u << 3) /* new buffer contents before every write        */
#define IOG_JOB_ZERO_BUFS    (1u << 4) /* write buffers are all zeros                   */
#define IOG_JOB_INVALIDATE   (1u << 5) /* drop the files' page cache before the run     */
#define IOG_JOB_VERIFY_FATAL (1u << 6) /* stop the job at the first verification failure */
/* Test only: the job's first worker thread dies of SIGSEGV (a real invalid
 * memory access) after its first completed request. It exists so that
 * callers can prove they survive a crash of the engine. */
#define IOG_JOB_TEST_CRASH (1u << 7)
/* When a writing thread's run ends (not when cancelled), it lets its requests
 * complete and fsyncs each of its files: one IOG_DIR_SYNC request per file,
 * inside the job's counted time (fio's end_fsync). Ignored by a job that
 * never writes. */
#define IOG_JOB_END_FSYNC (1u << 8)
/* Sequential writes that fill the filesystem holding the file (fio's
 * fill_device): a write that fails with ENOSPC or EDQUOT ends the thread's
 * run instead of counting as an error; the requests still in flight that
 * fail the same way are not counted either, and `size` is only the most the
 * run writes. Use with IOG_JOB_NO_LAYOUT (the file grows as it is written);
 * rw IOG_RW_WRITE only, not TIME_BASED, no ramp_ns. */
#define IOG_JOB_FILL (1u << 9)
/* The job's files are opened O_SYNC (IOG_JOB_OSYNC) or O_DSYNC
 * (IOG_JOB_ODSYNC) for writing (fio's sync=sync and sync=dsync): every write
 * completes only once its data (O_SYNC: and metadata) is durable; a direct
 * write to a device that has a volatile cache goes out with FUA. At most
 * one of the two; a job that never writes, or the mmap engine, is refused.
 * With a verify state file, every write it records is durable. */
#define IOG_JOB_OSYNC  (1u << 10)
#define IOG_JOB_ODSYNC (1u << 11)
/* A random job visits every block of each file once per pass (fio's random
 * map, its default without norandommap), in a new random order each pass,
 * when its requests are one size (one block size, the same for every
 * direction it issues) and its distribution is IOG_DIST_UNIFORM; otherwise,
 * and without the flag, each offset is drawn on its own (with repeats). */
#define IOG_JOB_RANDOM_MAP (1u << 12)
/* How a thread of a job with several files goes from one to the next (fio's
 * file_service_type); without either flag, in turn, one request each
 * (roundrobin). FILES_RANDOM: each request to a file drawn at random.
 * FILES_SEQUENTIAL: every request to one file until its share of the pass
 * is issued (the whole blocks of its region with one block size, else the
 * region's bytes), then the next file. At most one of the two. */
#define IOG_JOB_FILES_RANDOM     (1u << 13)
#define IOG_JOB_FILES_SEQUENTIAL (1u << 14)
/* Each thread on one CPU of iog_job_spec.cpus (see there). */
#define IOG_JOB_CPUS_SPLIT (1u << 15)
/* io_uring's fast paths, for an engine with IOG_ENGINE_RING only (fio's io_uring options).
 * FIXEDBUFS: each thread registers its request buffers with its ring and issues
 * READ_FIXED / WRITE_FIXED (fio's fixedbufs). NO_REGFILES: the job's files are not
 * registered with the ring (fio's default; without the flag they are, when the kernel
 * allows). SQPOLL: a kernel thread per ring polls the submission queue, so a submit
 * enters the kernel only to wake it (fio's sqthread_poll); with SQPOLL_CPU that thread
 * runs on CPU sqpoll_cpu (fio's sqthread_poll_cpu; one this process may run on). HIPRI:
 * completions are polled for instead of interrupting (IORING_SETUP_IOPOLL, fio's hipri):
 * with IOG_JOB_DIRECT only, and every file on a block device whose queue polls
 * (its queue/io_poll is 1), else refused when the job starts. */
#define IOG_JOB_RING_FIXEDBUFS   (1u << 16)
#define IOG_JOB_RING_NO_REGFILES (1u << 17)
#define IOG_JOB_RING_SQPOLL      (1u << 18)
#define IOG_JOB_RING_SQPOLL_CPU  (1u << 19)
#define IOG_JOB_RING_HIPRI       (1u << 20)

/* One entry of a direction's block size table. lo == hi: requests of exactly
 * lo bytes. lo < hi: request sizes drawn uniformly among the multiples of lo
 * in [lo, hi] (fio's bsrange). Each request picks an entry with probability
 * weight / IOG_WEIGHT_TOTAL; the weights of a direction's entries sum to
 * IOG_WEIGHT_TOTAL. */
struct iog_bs_entry {
    uint64_t lo;
    uint64_t hi;
    uint32_t weight;
    uint32_t reserved0; /* must be 0 */
};

/* One zone of IOG_DIST_ZONED: `access` of the requests land uniformly in the
 * next `size` of the region (both parts per million; each sums to
 * IOG_WEIGHT_TOTAL over the zones). */
struct iog_zone {
    uint32_t access;
    uint32_t size;
};

/* One entry of a direction's command priority table (iog_job_spec.cmdprio):
 * of the requests of exactly `bs` bytes (0: of any size), `share` parts per
 * million carry the I/O priority `ioprio` (class << 13 | level, as
 * ioprio_set(2) takes it). Entries that apply to one size add up: a request
 * carries the priority of the first whose running share exceeds one draw. */
struct iog_cmdprio_entry {
    uint64_t bs;
    uint32_t share;
    uint32_t ioprio;
};

/* What identifies one file of a job: see iog_job_spec.file_ids. */
struct iog_file_id {
    uint64_t dev;
    uint64_t ino;
};

struct iog_job_spec {
    uint32_t struct_size; /* sizeof(struct iog_job_spec)                              */
    /* The engine's name, NUL-terminated (see iog_engine_describe). */
    char engine[IOG_ENGINE_NAME_MAX];
    uint32_t rw;        /* enum iog_rw                                              */
    uint32_t rwmixread; /* 0..100, share of reads for IOG_RW_RW/RANDRW without rate */
    /* Block sizes: nbs[d] entries of bs[d] for each direction the rw mode
     * uses (at least one); the other direction's table is ignored. */
    uint32_t nbs[IOG_DATA_DIRS];
    struct iog_bs_entry bs[IOG_DATA_DIRS][IOG_BS_ENTRIES_MAX];
    /* Random offsets are multiples of blockalign[d] from the region start;
     * 0: the smallest block size of the direction. */
    uint64_t blockalign[IOG_DATA_DIRS];
    uint32_t iodepth;     /* >= 1, at most the engine's max_depth (iog_engine_info)     */
    uint32_t numjobs;     /* worker threads, >= 1, each runs the whole job              */
    uint64_t size;        /* bytes of the region [offset, offset + size), over all files */
    uint64_t offset;      /* start of the region in each file                           */
    uint64_t runtime_ns;  /* 0: no time limit (requires not time_based)             */
    uint64_t ramp_ns;     /* run this long before counting anything; its requests
                             still count toward size, io_limit_bytes and io_limit_ios */
    uint64_t interval_ns; /* series interval; 0 means 1 s                           */
    uint64_t seed;        /* random seed; thread i uses a stream derived from it    */
    uint32_t flags;       /* IOG_JOB_*                                              */
    uint32_t reserved0;   /* must be 0                                              */

    /* Rate limits, per direction, for the whole job (numjobs threads share
     * them evenly); 0: unlimited. A direction with both is held to the
     * stricter. A mixed job is limited in both directions or in neither;
     * then the directions follow their own schedules and rwmixread is not
     * used. Due times are fixed in advance from the start of the run: a
     * request that could not be issued when due is issued as soon as
     * possible and its lateness shows in lag and resp. */
    uint64_t rate_iops[IOG_DATA_DIRS];
    uint64_t rate_bytes[IOG_DATA_DIRS]; /* bytes per second */
    uint32_t rate_process;              /* enum iog_rate_process */

    /* Random offset distribution (enum iog_dist), its parameter and zones. */
    uint32_t dist;
    double dist_param;
    uint32_t nzones;
    uint32_t reserved1; /* must be 0 */
    struct iog_zone zones[IOG_ZONES_MAX];

    /* Pacing: after every thinktime_blocks requests (0 means 1) the thread
     * waits thinktime_ns before issuing more. */
    uint64_t thinktime_ns;
    uint32_t thinktime_blocks;
    /* Every sync_every completed writes (0: never), the thread lets its
     * requests in flight complete and calls fsync or fdatasync (sync_kind),
     * counted in IOG_DIR_SYNC. */
    uint32_t sync_kind;
    uint32_t sync_every;

    /* Write buffer contents. Each buffer is built chunk by chunk
     * (compress_chunk bytes, 0 means 512): the first (100 - compress_pct)%
     * of a chunk is random, the rest repeats pattern (zeros when
     * pattern_len is 0). IOG_JOB_ZERO_BUFS makes buffers all zeros
     * (compress_pct and dedupe_pct must be 0). dedupe_pct percent of writes
     * repeat the contents of one of the last 16 distinct buffers written.
     * Buffers are filled once at start unless IOG_JOB_REFILL. */
    uint32_t compress_pct; /* 0..100 */
    uint32_t compress_chunk;
    uint32_t dedupe_pct;  /* 0..100 */
    uint32_t pattern_len; /* 0..IOG_PATTERN_MAX */
    uint8_t pattern[IOG_PATTERN_MAX];

    /* Verification (verify != IOG_VERIFY_NONE): for write, randwrite, rw
     * and randrw jobs with one block size per write (no range, no split) of
     * at least IOG_VERIFY_HEADER bytes (more for the long digests, see
     * below), and numjobs 1; rw needs its reads of that size too, so that
     * every write starts on a block. The reads of a mix are not verified:
     * the blocks written are, as below. Every written block begins with a header, little endian:
     *   0  u32 magic 0x5647_4f49 ("IOGV")   4 u16 header version (3)
     *   6  u16 checksum kind (enum iog_verify)
     *   8  u64 file offset of the block    16 u64 block length
     *  24  u64 generation (random per session, the same for all its jobs)
     *  32  u64 sequence number of the write in its thread (from 1)
     *  40  u32 file index in the job       44 u32 job index
     *  48  u64 checksum of the whole block, computed with this field (and
     *      the digest area below) 0
     *  56  u64 reserved, 0
     * A checksum of at most 8 bytes (CRC32C, CRC32, XXH32, XXH64, CRC64) is
     * the number the algorithm gives, zero-extended, at 48. A longer digest
     * (MD5 16, SHA1 20, SHA256 32, SHA512 64 bytes) is kept whole right after
     * the header, in its digest area of its length rounded up to 8 bytes
     * (64 .. 64 + area), as the algorithm outputs it, and 48 holds its first
     * 8 bytes read as a little-endian u64 (what iog_verify_failure's
     * checksums show). The smallest block of a kind is therefore 64 bytes
     * plus its digest area: 80 for MD5, 88 for SHA1, 96 for SHA256, 128 for
     * SHA512 (the area lies in the first sector, before any stamp). META has
     * no checksum: 48 is 0, and the header and the stamps are what is checked.
     * Version 2 (before the long digests) had no digest area.
     * Every later 512-byte sector begins with an 8-byte stamp (u64): a
     * function of the generation, sequence number, offset, file and job of the
     * header and of the sector's index, so that every sector of a write differs
     * from that sector of any other write to the block (within a session
     * always, across sessions but with probability 2^-64). The rest of the
     * block is the job's buffer contents (header and stamps make every block
     * and every sector unique, which the data measurements see: dedupe cannot
     * be realized, and the stamps add 8 incompressible bytes per sector, in
     * place of random ones at the default compress chunk). verify_backlog 0:
     * after the run (its runtime or size), each thread reads back every block
     * it wrote (state VERIFY), once, at its final contents. verify_backlog N:
     * after every N completed writes the thread reads those N blocks back
     * before writing more. A block must hold the last write to it that
     * completed in full; while two writes to one block were in flight at once,
     * any block of this generation written for it passes, until a later write
     * runs alone; a block whose last write failed is not read back (its error
     * is counted already). A block any of whose sectors holds another write's
     * bytes (a stale stamp) or whose checksum does not match is torn, so a
     * torn write shows in whichever sector it left stale, even where the
     * buffer's contents repeat from write to write or from run to run. Failures
     * are kept per job (iog_session_verify); IOG_JOB_VERIFY_FATAL stops the
     * job at the first. Verification reads are synchronous (pread), not
     * counted in the statistics, and not subject to io_timeout_ns. At most
     * 2^26 block positions per job. */
    uint32_t verify; /* enum iog_verify */
    uint32_t verify_backlog;
    /* 0 (no limit) or at least 1 ms. A request outstanding longer than this
     * (from when it was handed to the engine; a worker blocked in a system
     * call counts) is a fault: the session records the first one
     * (iog_session_fault), counts an ETIMEDOUT error for each one that was
     * counted (not during ramp_time), whatever it returns later, and cancels.
     * Requests are looked at every quarter of the shortest timeout of the
     * session, but not more often than every 10 ms. See iog_session_fault
     * for what a fault means for wait and destroy. */
    uint64_t io_timeout_ns;

    /* The identity each file had when the caller checked it, or all zero
     * (not pinned). A pinned file is never created, and every open of it
     * (layout, cache drop, each worker's descriptor) names it with O_NOFOLLOW
     * and must reach that very file: for a block device, dev is its device
     * number (st_rdev) and ino 0; for a regular file, st_dev and st_ino. Any
     * other file found there (a path component or the file itself replaced
     * since the check) fails iog_session_start with ESTALE and is not
     * written. The caller keeps the file open meanwhile, so that its inode
     * number cannot be reused. */
    struct iog_file_id file_ids[IOG_FILES_MAX];

    /* One or more files, each NUL-terminated, the list ending with an empty
     * name (a second NUL); at most IOG_FILES_MAX. Every file gets the region
     * [offset, offset + size / nfiles); requests go to the files in turn
     * (round robin). Ignored by an engine that does no I/O (null). */
    char filename[IOG_PATH_MAX];

    /* Job options: how long a job runs and where its next request goes
     * (appended after ABI 6; zero means "as before").
     * io_limit_bytes: a thread stops once it issued that many counted bytes
     * (0: `size`, one pass, unless TIME_BASED: then no byte limit); more
     * than size wraps around the region (sequential jobs start it again).
     * io_limit_ios: a thread stops once it issued that many counted
     * requests, both directions together (0: no limit). With TIME_BASED,
     * the first of runtime_ns and a limit ends the thread.
     * seq_skip: sequential jobs only; after a request of len bytes at off,
     * the file's next offset is off + len + seq_skip (negative: back). A
     * request that would end past the region end goes to its start; an
     * offset that would fall before the region start goes to region end +
     * seq_skip (or the start when that is before it too), so that a
     * negative skip walks the region backwards. The first request of each
     * file is at the region start.
     * start_delay_ns: the job's threads start this long after the run
     * clock; ramp_ns and runtime_ns count from when every thread of the
     * jobs with the same delay is ready to issue (the delay is no part of
     * the job's counted time), and a thread that is late still issues one
     * request. */
    uint64_t io_limit_bytes;
    uint64_t io_limit_ios;
    int64_t seq_skip;
    uint64_t start_delay_ns;

    /* Flow control between jobs (fio's flow, flow_id and flow_sleep;
     * appended after ABI 6, flow_weight 0: none). The threads of the
     * session's jobs with a weight and the same flow_id issue their requests
     * in the proportion of their weights (every thread of a job has the job's
     * weight): before each request, a thread whose share of the requests its
     * flow issued so far exceeds its share of the weights of the flow's
     * threads running waits and asks again: with requests in flight, until
     * one completes (at most flow_sleep_ns when set); else flow_sleep_ns, or
     * (0) a yield. A thread joins its flow with its weight when it starts
     * (after start_delay_ns) and leaves it with its requests when it ends. */
    uint32_t flow_id;
    uint32_t flow_weight;
    uint64_t flow_sleep_ns;
    /* Submission batching (asynchronous engines; must be 0 with a
     * synchronous one), each 0 meaning "as before".
     * batch_submit (1..iodepth, 0 means 1): prepared requests are held until
     * this many are waiting, then handed to the engine in one submit; fewer
     * go when nothing more can be prepared now (the queue is full, the next
     * request is not yet due, the thread stops, a sync or verification
     * read-back is due), so no request waits past its due time for others.
     * batch_complete_min (1..iodepth, 0 means 1): a reap waits for at least
     * this many completions (at most what is in flight; fewer when a paced
     * request falls due first). batch_complete_max (batch_complete_min..
     * iodepth, 0 means batch_complete_min, as in fio): a reap takes at most
     * this many. Taking one completion at a time and replacing it at once
     * keeps iodepth requests in flight; taking many leaves the device short
     * of them while the batch is replaced one request after another.
     * depth_low (1..iodepth, 0 means iodepth): once iodepth requests are in
     * flight, no request is prepared until at most depth_low are. */
    uint32_t batch_submit;
    uint32_t batch_complete_min;
    uint32_t batch_complete_max;
    uint32_t depth_low;
    /* exitall (appended after ABI 6; zero means "as before"): when any
     * thread of this job ends its run normally (a limit or its runtime
     * reached, not a cancel), every job j of the session whose bit j is set
     * (bit 63: also every job from 63 on; ~0: all jobs) stops as if its
     * runtime had run out: it issues nothing more, drains what is in
     * flight, still does its end fsync and verify read-back, and its
     * counted time ends there. A job may name itself (its other threads
     * stop). 0: nothing. */
    uint64_t exit_mask;
    /* I/O priorities (fio's prio / prioclass and cmdprio_*).
     * ioprio: the job's priority (class << 13 | level; 0: left as it is):
     * each worker thread sets it for itself with ioprio_set(2) before its
     * first request, whatever the engine, and the asynchronous engines
     * (io_uring, libaio) also put it on every request that carries no
     * command priority. A thread whose ioprio_set fails counts one error in
     * its job's first direction and issues nothing.
     * cmdprio: per data direction, ncmdprio[d] entries (0: none) deciding
     * which requests carry a command priority of their own (an io_uring SQE's
     * ioprio, a libaio iocb's aio_reqprio). Only for the engines that pass a
     * priority per request (io_uring, libaio); the others are refused. Such
     * requests are counted apart in the statistics (iog_dir_stats.prio_ios,
     * prio_clat, the histogram IOG_HIST_PRIO_CLAT). */
    uint32_t ioprio;
    uint32_t ncmdprio[IOG_DATA_DIRS];
    uint32_t cmdprio_reserved; /* must be 0 */
    struct iog_cmdprio_entry cmdprio[IOG_DATA_DIRS][IOG_CMDPRIO_MAX];
    /* Verify state file (appended after ABI 6; an empty path: none). A
     * verifying job (verify != NONE, one thread) records in it, as they
     * happen, every write that completed in full and every sync (fsync or
     * fdatasync of all its files, sync_every or END_FSYNC) that succeeded,
     * so that iog_verify_state_check can tell after a crash which blocks the
     * device promised to keep. The caller creates the file, keeps it open
     * for the session (its identity cannot be reused) and gives its path
     * and identity; the session opens that very file (no symbolic link in
     * the last component, the same device and inode, else -ESTALE),
     * truncates it and writes its header when the job starts. Its format
     * is private to the library: written by the session's own thread,
     * synced often (fdatasync), every record checksummed, so that a state
     * file cut short by the same crash is still read up to its last durable
     * record. */
    struct iog_file_id verify_state_id;
    char verify_state[IOG_PATH_MAX];
    /* The block indices of IOG_DIST_SEQUENCE (appended after ABI 6; 0 entries
     * for every other distribution), in units of blockalign like every block
     * number of iog_dist. sequence_stride 0: the indices are absolute and
     * repeat as they are; 1: they are relative to a base that moves on by
     * nsequence blocks after each pass over them (2,0,1 then 5,3,4 ...).
     * An index past the last block wraps around to the region's start. */
    uint32_t nsequence;
    uint32_t sequence_stride;
    uint64_t sequence[IOG_SEQUENCE_MAX];
    /* Of each thinktime pause, the first thinktime_spin_ns (at most
     * thinktime_ns) are spent busy on the CPU, the rest asleep (fio's
     * thinktime_spin); 0: the whole pause asleep. */
    uint64_t thinktime_spin_ns;
    /* How the file of a job that only writes data (IOG_RW_WRITE,
     * IOG_RW_RANDWRITE) is prepared when it is shorter than offset + its
     * share of size (IOG_WRITE_LAYOUT_*; 0: written with data to its size
     * first, as before). A job that reads or trims, and an engine with
     * IOG_ENGINE_NO_EXTEND, always has its file written with data. */
    uint32_t write_layout;
    /* The CPUs the job's threads run on: bit n % 64 of cpus[n / 64] for CPU n
     * (fio's cpus_allowed); none set: wherever the system schedules them. With
     * IOG_JOB_CPUS_SPLIT each thread runs on one of them, the thread's index
     * modulo their number in CPU order (fio's cpus_allowed_policy=split).
     * Each must be one this process may run on (sched_getaffinity(2)). */
    uint64_t cpus[IOG_CPU_WORDS];
    /* With IOG_JOB_RING_SQPOLL_CPU: the CPU of each ring's submission polling thread. */
    uint32_t sqpoll_cpu;
    uint32_t ring_reserved; /* must be 0 */
    /* NUMA placement, through libnuma (refused, -EOPNOTSUPP, where it cannot be loaded or
     * the kernel has no NUMA support; a node the machine lacks is -EINVAL). Bit n is node n.
     * numa_cpu_nodes: the threads run on the CPUs of these nodes (fio's numa_cpu_nodes; not
     * with cpus). numa_mem_mode (enum iog_numa_mem) and numa_mem_nodes: each thread's memory
     * policy, also applied to its request buffers, whose pages move to conform (fio's
     * numa_mem_policy); PREFER takes one node, BIND and INTERLEAVE one or more. */
    uint64_t numa_cpu_nodes;
    uint64_t numa_mem_nodes;
    uint32_t numa_mem_mode;
    uint32_t numa_reserved; /* must be 0 */
};

/* iog_job_spec.write_layout: what a job that only writes finds before its
 * first write (fio's overwrite and fallocate options). */
#define IOG_WRITE_LAYOUT_DATA      0 /* written with data to its size (fio: overwrite=1)   */
#define IOG_WRITE_LAYOUT_ALLOCATE  1 /* fallocate(2): blocks allocated, unwritten, size set */
#define IOG_WRITE_LAYOUT_NONE      2 /* nothing: the file grows as it is written            */
#define IOG_WRITE_LAYOUT_TRUNCATE  3 /* ftruncate(2): size set, no block allocated          */
#define IOG_WRITE_LAYOUT_KEEP_SIZE 4 /* fallocate(2) FALLOC_FL_KEEP_SIZE: blocks, same size */
#define IOG_WRITE_LAYOUT_POSIX     5 /* posix_fallocate(3): as ALLOCATE, emulated if need be */
#define IOG_WRITE_LAYOUT_MAX       5

/* Summary of one latency kind. mean and stdev are exact (not from buckets). */
struct iog_lat_summary {
    uint64_t count;
    uint64_t min_ns; /* 0 when count == 0 */
    uint64_t max_ns;
    double mean_ns;
    double stdev_ns; /* sample standard deviation */
};

/* Counted statistics of one job in one direction, all its threads merged.
 * Nothing done during ramp_time is counted. A short transfer does not end a
 * request: the rest is transferred (synchronous engines call again,
 * asynchronous ones resubmit the remainder) until the request is complete,
 * a transfer moves nothing (end of file) or one fails. ios, bytes, the
 * latencies and the block size counts cover only requests complete in full
 * (a request's latency runs from its first submission to its last
 * completion); every other counted request is one error, and the bytes it
 * moved before it failed are counted nowhere. */
struct iog_dir_stats {
    uint32_t struct_size;
    uint32_t dir;        /* enum iog_dir */
    uint64_t ios;        /* requests complete in full */
    uint64_t bytes;      /* their bytes */
    uint64_t runtime_ns; /* counted time of the job (longest thread) */
    double iops;         /* ios / runtime */
    double bw_bytes;     /* bytes / runtime, bytes per second */
    struct iog_lat_summary lat[IOG_LAT_COUNT];
    /* Requests that failed: an errno from the system, ENODATA when a read
     * met the end of its file, EIO when a transfer moved nothing inside it,
     * ETIMEDOUT when io_timeout_ns passed. */
    uint64_t errors;
    int32_t first_errno; /* positive errno of the first error, 0 if none */
    uint32_t reserved0;
    uint64_t first_error_offset; /* where it stopped: its offset + the bytes it moved */
    /* Realized queue depth: at every submission, the number of requests of
     * the thread in flight including this one (1 for synchronous engines);
     * qd_hist[i] counts depths in [2^i, 2^(i+1)). */
    uint64_t qd_sum;
    uint64_t qd_samples;
    uint64_t qd_hist[IOG_QD_BUCKETS];
    /* Counted requests whose size did not fit the table of distinct sizes
     * (see iog_session_bs_counts). */
    uint64_t bs_other_ios;
    /* When the first error happened, since iog_session_start (0 if none). */
    uint64_t first_error_ns;
    /* Command priorities (iog_job_spec.cmdprio): the requests complete in
     * full that carried one, and their completion latency (its histogram:
     * IOG_HIST_PRIO_CLAT). The other requests are the totals minus these. */
    uint64_t prio_ios;
    struct iog_lat_summary prio_clat;
};

/* How many counted requests of a direction had one block size. */
struct iog_bs_count {
    uint64_t bs;
    uint64_t ios;
};

/* What a job did as a whole, all its threads merged. */
struct iog_job_stats {
    uint32_t struct_size;
    uint32_t nfiles;
    /* Offset coverage: the job's regions (all files, concatenated) are cut
     * into coverage_total chunks of coverage_chunk bytes (a multiple of 512,
     * large enough that there are at most 2^20 chunks); coverage_touched
     * chunks saw at least one counted request of either direction. */
    uint64_t coverage_chunk;
    uint64_t coverage_total;
    uint64_t coverage_touched;
    /* Data written, measured on a sample of completed writes: a thread
     * samples its first write and then, after a sample of n bytes, the next
     * write once 256 n more bytes were written (at most 4096 samples per
     * thread; a sample is the first 128 KiB of a longer write). Samples are
     * measured off the I/O path, by a thread with a small CPU budget; a
     * write due when that thread was behind is not sampled but counted in
     * data_samples_skipped. The sampled bytes, their size after zlib
     * compression at level 6 (each sample compressed on its own), and their
     * 4 KiB blocks (a shorter sample is one block), how many of those blocks
     * repeat an earlier sampled block of the job (by a 64-bit content hash). */
    uint64_t data_sampled_bytes;
    uint64_t data_compressed_bytes;
    uint64_t data_blocks;
    uint64_t data_duplicate_blocks;
    /* since ABI 4 */
    uint64_t data_samples_skipped;
    /* Submission batching (asynchronous engines; 0 for synchronous ones):
     * the engine's submit calls that handed it at least one request, and its
     * reap calls that returned at least one completion, made in counted time
     * (from the end of the ramp). */
    uint64_t submits;
    uint64_t reaps;
    /* I/O priorities: what ioprio_get(2) reported in the job's first worker
     * thread right after it set iog_job_spec.ioprio (0 when the job sets
     * none, or no thread ran). */
    uint64_t ioprio;
};

/* One interval of one job in one direction, all its threads merged. */
struct iog_interval {
    uint64_t end_ns; /* interval end, measured from the start of counting */
    uint64_t ios;    /* 0: no completions; the latencies below are then 0, meaning none */
    uint64_t bytes;
    double iops;
    double bw_bytes;
    double clat_mean_ns;
    uint64_t clat_p99_ns;
    double lat_mean_ns;
    uint64_t lat_p99_ns;
    double resp_mean_ns;
    uint64_t resp_p99_ns;
};

/* Verification results of one job, all its threads merged. */
struct iog_verify_stats {
    uint32_t struct_size;
    uint32_t nrecords;                  /* failures kept in detail, at most IOG_VERIFY_RECORDS */
    uint64_t generation;                /* the session's generation                     */
    uint64_t blocks_written;            /* verified writes completed (counted or not)   */
    uint64_t blocks_checked;            /* blocks read back                             */
    uint64_t failures;                  /* blocks that failed, all kinds                */
    uint64_t by_kind[IOG_VERIFY_KINDS]; /* failures per enum iog_verify_kind            */
    uint64_t elapsed_ns;                /* time spent reading back (longest thread)     */
    /* The verify state file (iog_job_spec.verify_state; appended after
     * ABI 6): records written to it, and the first error that stopped its
     * writing (a positive errno, 0: none). A state file that could not be
     * written in full still holds what came before the error. */
    uint64_t state_records;
    int32_t state_error;
    uint32_t state_reserved;
};

/* One verification failure: where, what was expected, what was found. The
 * found_* header fields are what the block's header says (zero when it has
 * no valid magic); for a torn block they may be partly new, partly old. */
struct iog_verify_failure {
    uint32_t kind; /* enum iog_verify_kind */
    uint32_t file; /* index in the job's file list */
    uint64_t offset;
    uint64_t len;
    uint64_t expected_generation;
    uint64_t expected_seq; /* 0 when writes raced: any sequence of this generation passes */
    uint64_t found_generation;
    uint64_t found_seq;
    uint64_t found_offset;
    uint32_t found_file;
    int32_t error; /* positive errno for READ_ERROR (EIO for a short read), else 0 */
    uint64_t stored_checksum;
    uint64_t computed_checksum;
};

/* The first fault of a session (iog_session_fault). */
struct iog_fault {
    uint32_t struct_size;
    uint32_t kind; /* enum iog_fault_kind */
    uint32_t job;
    uint32_t thread;
    uint32_t dir;    /* enum iog_dir of the request */
    uint32_t file;   /* index in the job's file list */
    uint64_t offset; /* the whole request, even when part of it was transferred */
    uint64_t len;
    uint64_t outstanding_ns; /* how long the request had been outstanding when seen */
    uint64_t timeout_ns;     /* the job's io_timeout_ns */
};

/* A snapshot for progress bars; counts are live (counted I/O only).
 * expected_ns is on the same time base as elapsed_ns, so that
 * expected_ns - elapsed_ns is the time left: once the run started it is the
 * time layout took plus the longest ramp_ns + runtime_ns over jobs; during
 * layout it assumes the layout finishes now. It is 0 when some job has no
 * runtime_ns. */
struct iog_progress {
    uint32_t struct_size;
    uint32_t state;              /* enum iog_state */
    uint64_t elapsed_ns;         /* since iog_session_start (until DONE) */
    uint64_t counted_ns;         /* since counting began (0 during layout and ramp) */
    uint64_t expected_ns;        /* estimate of elapsed_ns at DONE, 0 if unknown */
    uint64_t ios[IOG_DATA_DIRS]; /* counted ios so far, all jobs */
    uint64_t bytes[IOG_DATA_DIRS];
    uint64_t errors;
    uint32_t jobs_done; /* jobs whose threads have all finished */
    uint32_t jobs;
    uint64_t layout_bytes; /* bytes written so far by layout, all files */
    uint64_t layout_total; /* bytes layout has to write in total; 0: nothing to lay out */
    /* trims (IOG_DIR_TRIM) counted so far, all jobs; 0 from a library without trims */
    uint64_t trim_ios;
    uint64_t trim_bytes;
};

/* One I/O engine of the library (iog_engine_describe). */
struct iog_engine_info {
    uint32_t struct_size;
    uint32_t max_depth; /* requests one job thread keeps in flight at most; 1: synchronous */
    uint32_t flags;     /* IOG_ENGINE_* */
    uint32_t reserved0;
    char name[IOG_ENGINE_NAME_MAX];       /* what iog_job_spec.engine names it */
    char summary[IOG_ENGINE_SUMMARY_MAX]; /* one line: what it issues          */
};

/* Device statistics: the kernel's counters of a whole block device
 * (/sys/block/DEV/stat, Documentation/block/stat.rst), in the order of that
 * file: read ios, read merges, read sectors, read ticks (ms), write ios,
 * write merges, write sectors, write ticks, in_flight, io_ticks (ms),
 * time_in_queue (ms), discard ios, discard merges, discard sectors, discard
 * ticks, flush ios, flush ticks. Older kernels have fewer (at least 11):
 * ncounters says how many the line had, the others are 0. */
#define IOG_DISK_COUNTERS 17
#define IOG_DISKS_MAX     4 /* watched devices per session */

/* One reading of a watched device (iog_session_disk_samples). */
struct iog_disk_sample {
    uint32_t struct_size;
    uint32_t ncounters; /* fields the stat line had, at most IOG_DISK_COUNTERS */
    /* when, on the series' time base: ns from the session's count start (the
     * earliest over jobs); 0 for the reading at count start, an interval's
     * end_ns for the readings at interval boundaries (jobs that start
     * counting together share these), and the last is the end of the run */
    uint64_t end_ns;
    uint64_t counters[IOG_DISK_COUNTERS];
};

/* A member of a public struct, for bindings to build or check their copy of
 * its layout: its name, offset and size, its C type as this header spells it
 * ("uint64_t", "char", "struct iog_zone", "const char *") and its array
 * lengths, 0 where it has no such dimension (`bs[2][16]` is {2, 16},
 * `engine[32]` is {32, 0}, a plain `uint64_t` is {0, 0}). */
struct iog_layout_field {
    const char *name;
    uint32_t offset;
    uint32_t size;
    const char *type;
    uint32_t dims[2];
};

/* A constant of this header by name, for bindings to check their copies:
 * every #define IOG_* that is a number and every enum value. */
struct iog_constant {
    const char *name; /* as spelled here, "IOG_FILES_MAX" */
    int64_t value;
};

typedef struct iog_session iog_session; /* opaque */

/* Returns IOG_ABI_VERSION of the library. */
IOG_API uint32_t iog_abi_version(void);

/* Library version string, e.g. "0.1.0". Never NULL. */
IOG_API const char *iog_version(void);

/*
 * Describes the layout of the public struct named `name`: every struct of
 * this header, by its tag ("iog_job_spec", "iog_zone", ...). Writes its
 * sizeof into *size and a pointer to a static array of its members, in
 * declaration order, into *fields, returning the number of members; -ENOENT
 * for an unknown name. The library's tables are read from this header when
 * it is built, so they list every member.
 */
IOG_API int iog_describe_struct(const char *name, uint32_t *size,
                                const struct iog_layout_field **fields);

/*
 * Describes every constant of this header (struct iog_constant): writes a
 * pointer to a static array into *out and returns its length; -EINVAL when
 * out is NULL. Names are unique; the order is not part of the ABI. A later
 * revision only adds entries (IOG_ABI_REVISION tells which revision this
 * is); a value never changes within an IOG_ABI_VERSION.
 */
IOG_API int iog_describe_constants(const struct iog_constant **out);

/* Number of I/O engines this library has. */
IOG_API int iog_engine_count(void);

/*
 * Describes engine `index` (0 .. iog_engine_count() - 1, in a fixed order:
 * the order callers list them in) into *out (its struct_size must be set).
 * -EINVAL for a bad size, -ENOENT for an index past the last engine.
 */
IOG_API int iog_engine_describe(uint32_t index, struct iog_engine_info *out);

/*
 * Validates `njobs` job specs and creates a session. Nothing is opened or
 * written yet. Returns 0 and stores the session in *out, or:
 *  -EINVAL     a spec is invalid (message names the job index and field),
 *              among them an engine the library does not have
 *  -E2BIG      a spec larger than the library knows with non-zero bytes past
 *              what it knows (a field this library does not have)
 *  -ENOMEM     out of memory
 * Every spec of the array has the struct_size of the first (the array's
 * stride).
 */
IOG_API int iog_session_create(const struct iog_job_spec *jobs, uint32_t njobs, iog_session **out,
                               char *err, size_t errlen);

/*
 * Starts the session and returns without waiting for any I/O. Synchronously
 * it opens or creates every file (a job that needs layout gets its file
 * created now), sets up every worker (descriptors, buffers, rings) and
 * computes how much layout has to write; then it starts one background
 * thread, which extends the files that are too short with non-zero data
 * (state LAYOUT, progress in layout_bytes / layout_total), then starts the
 * run clock (ramp and runtime are measured from the end of layout) and the
 * worker threads, and keeps the interval series until every worker is done.
 *
 * Returns 0, or a negative errno if a file cannot be opened or created, a
 * worker cannot be set up, or the background thread cannot be started (the
 * message names the file); nothing keeps running after a failure.
 * -EALREADY when called twice.
 *
 * Failures in the background are not lost, they are job errors:
 *  - a layout write or fsync that fails (ENOSPC, EIO, EFBIG...) counts one
 *    error in the WRITE direction of the job whose file it was, with its
 *    errno and the file offset of the failed write (for fsync, the offset
 *    where layout began); the session then stops: no job's workers start,
 *    the session becomes DONE and iog_session_wait returns 0;
 *  - a worker thread that cannot be created counts one error in its job's
 *    first direction (offset: the region start) and cancels the session.
 * iog_session_cancel during layout stops it within one chunk (1 MiB): no
 * worker starts, every statistic stays zero, and the partly extended file
 * is kept (a later run extends it from where it ends).
 */
IOG_API int iog_session_start(iog_session *s, char *err, size_t errlen);

/* Fills a progress snapshot. Safe from any thread, at any time after create. */
IOG_API int iog_session_poll(iog_session *s, struct iog_progress *out);

/* Asks every worker, and layout, to stop soon. Safe from any thread and from
 * signal handlers, idempotent. Counted statistics stay valid. */
IOG_API int iog_session_cancel(iog_session *s);

/*
 * Waits up to timeout_ns (0: do not wait) for every worker to finish.
 * Returns 0 when all finished, -ETIMEDOUT when they are still running,
 * -EINVAL if the session was never started. After a fault
 * (iog_session_fault) a worker whose request never returns keeps this
 * returning -ETIMEDOUT for good.
 */
IOG_API int iog_session_wait(iog_session *s, uint64_t timeout_ns);

/* Number of jobs in the session. */
IOG_API uint32_t iog_session_jobs(const iog_session *s);

/*
 * Copies the statistics of job `job` in direction `dir` into *out (its
 * struct_size must be set). Only after iog_session_wait returned 0.
 * -EINVAL for a bad index or size, -EBUSY while running.
 */
IOG_API int iog_session_dir_stats(const iog_session *s, uint32_t job, uint32_t dir,
                                  struct iog_dir_stats *out);

/*
 * Copies the realized block sizes of job `job` in direction `dir` (READ,
 * WRITE or TRIM): up to `cap` entries, in increasing order of bs, into `out`, and
 * returns how many distinct sizes there are (at most IOG_BS_TABLE_MAX; sizes
 * beyond that are counted in iog_dir_stats.bs_other_ios). -EINVAL, -EBUSY as
 * above.
 */
IOG_API int iog_session_bs_counts(const iog_session *s, uint32_t job, uint32_t dir,
                                  struct iog_bs_count *out, size_t cap);

/*
 * Copies what job `job` did as a whole into *out (its struct_size must be
 * set). -EINVAL, -EBUSY as above.
 */
IOG_API int iog_session_job_stats(const iog_session *s, uint32_t job, struct iog_job_stats *out);

/*
 * Copies the histogram of latency kind `lat` (enum iog_lat, or
 * IOG_HIST_PRIO_CLAT) of job `job` in direction `dir` into `counts`, which has room for `ncounts`
 * entries; it must be at least IOG_HIST_BUCKETS. -EINVAL, -EBUSY as above.
 */
IOG_API int iog_session_histogram(const iog_session *s, uint32_t job, uint32_t dir, uint32_t lat,
                                  uint64_t *counts, size_t ncounts);

/*
 * Copies up to `cap` intervals of job `job` in direction `dir` into `out` and
 * returns the number of intervals the job has (which may exceed cap: call
 * again with a larger buffer). The last interval may be shorter than the
 * interval length. May be called while the session runs (to judge a run as
 * it goes): it then copies the intervals completed so far. -EINVAL for a bad
 * index or a session never started.
 */
IOG_API int iog_session_series(const iog_session *s, uint32_t job, uint32_t dir,
                               struct iog_interval *out, size_t cap);

/*
 * Copies the verification results of job `job` into *out (its struct_size
 * must be set) and up to `cap` of its failure records into `failures` (may
 * be NULL when cap is 0), in the order they were found; returns how many
 * records the job keeps. -EINVAL, -EBUSY as for iog_session_dir_stats.
 */
IOG_API int iog_session_verify(const iog_session *s, uint32_t job, struct iog_verify_stats *out,
                               struct iog_verify_failure *failures, size_t cap);

/*
 * Returns 1 and fills *out (its struct_size must be set) when the session
 * saw a fault, 0 when it did not. Safe from any thread while running.
 * A request past its io_timeout_ns may be stuck in the kernel for good: the
 * session is cancelled, but a worker blocked in a system call, or a
 * request the kernel never completes, keeps iog_session_wait from returning
 * 0 and iog_session_destroy from returning. A caller that sees a fault
 * should report it and end the process the session runs in (iogate runs
 * the engine in a child process for this reason).
 */
IOG_API int iog_session_fault(iog_session *s, struct iog_fault *out);

/*
 * Device statistics. Before iog_session_start, watches the block device
 * statistics file `stat_path` (/sys/block/DEV/stat, or any file holding such
 * a line): opens it and keeps it open, and checks that it reads as at least
 * 11 counters. Returns the index of the watched device (0, 1...), or
 * -EALREADY after start, -ENOSPC past IOG_DISKS_MAX, -EINVAL for a file that
 * is not such a line, a negative errno from open.
 * The background thread reads it (pread at offset 0, nothing on the I/O
 * path) when counting starts, at every interval boundary of any job, and
 * when the last job's run ends (read-back of verify is not part of it);
 * nothing is read during layout or ramp, nor after a cancelled layout.
 */
IOG_API int iog_session_watch_disk(iog_session *s, const char *stat_path, char *err, size_t errlen);

/*
 * Copies up to `n` readings of watched device `disk` into `out` (an array
 * whose elements all have the struct_size of the first) and returns how
 * many there are (which may exceed n: call again with a larger array). A
 * reading that failed (the device went away) is left out. -EINVAL for a bad
 * index or size or a session never started, -EBUSY while running.
 */
IOG_API int iog_session_disk_samples(const iog_session *s, uint32_t disk,
                                     struct iog_disk_sample *out, uint32_t n);

/*
 * Checks a verify state file (iog_job_spec.verify_state) against the files
 * it describes, after a crash, a power cut or a device reset: reads every
 * block position its write records name from `files` (NUL-terminated names,
 * the list ending with an empty name, as iog_job_spec.filename; they must
 * be the files of the job that wrote it, in the same order) and judges it
 * as struct iog_state_check says, filling *out (its struct_size must be
 * set) and up to `cap` failure records (lost, torn, misdirected, read
 * errors) in file and offset order. Only reads. Returns how many failure
 * records there are (at most IOG_VERIFY_RECORDS), or a negative errno with a
 * message in err: the state file cannot be read (-errno), is not a state
 * file or was written by another version (-EINVAL), has a damaged header or
 * a damaged record before a point a completed sync of the file made
 * durable (-EBADMSG), names other files than `files` (-EXDEV, naming both;
 * with IOG_STATE_OTHER_NAMES in flags only their number must agree: a device
 * renamed since, e.g. after a surprise removal), or a file cannot be opened
 * (-errno).
 */
#define IOG_STATE_OTHER_NAMES (1u << 0)

IOG_API int iog_verify_state_check(const char *state_path, const char *files, uint32_t flags,
                                   struct iog_state_check *out, struct iog_verify_failure *failures,
                                   size_t cap, char *err, size_t errlen);

/*
 * Cancels, waits for every worker and frees the session. NULL is ignored.
 */
IOG_API void iog_session_destroy(iog_session *s);

/* Bucket index of a value in ns, and the bounds [lo, hi) of a bucket; for the
 * overflow bucket hi is UINT64_MAX. Exposed so that bindings and tests use
 * exactly the library's geometry. */
IOG_API uint32_t iog_hist_index(uint64_t value_ns);
IOG_API int iog_hist_bounds(uint32_t index, uint64_t *lo, uint64_t *hi);

/*
 * The percentile rule, the one every figure of iogate uses (the per-interval
 * series and the whole-run values alike). counts[i] holds bucket first + i
 * (n buckets: a whole histogram, or the range of it that holds samples).
 * For each ps[j] in [0, 100], read as a decimal to 9 places, out[j] is the
 * representative value of the bucket holding the sample of rank
 * ceil(ps[j]/100 * total) (at least 1): the value itself below
 * IOG_HIST_LINEAR, else the bucket's middle lo + (hi - lo) / 2, which is
 * within 1/256 of every value in the bucket; the overflow bucket reports
 * max_ns. The answer is clamped into [min_ns, max_ns], the exact extremes
 * when known (0 and UINT64_MAX when not). Returns 1, or 0 when the counts
 * are all zero (out untouched), or -EINVAL.
 */
IOG_API int iog_hist_percentiles(const uint64_t *counts, uint32_t first, uint32_t n,
                                 const double *ps, uint32_t np, uint64_t min_ns, uint64_t max_ns,
                                 uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* IOGATE_H */
