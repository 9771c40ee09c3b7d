/*
 * data.h - what write requests carry and what was measured of it. A data
 * writer belongs to one worker thread: it builds write buffers as the job
 * spec asks (compressible chunks with a pattern, zeros, repeated contents for
 * dedupe, refilled before every write or filled once), and it owns the
 * measurement of what was written: a bounded sample of completed writes,
 * measured for real (zlib level 6 compressed size, 64-bit content hashes of
 * 4 KiB blocks, merged per job to count duplicate blocks).
 *
 * The measurement is split in two so that the I/O thread never measures.
 * The worker only captures: data_after_write copies a due write (at most
 * sample_cap bytes of it) into a free slot of the writer's capture ring, a
 * single-producer / single-consumer ring of buffers allocated at create;
 * without a free slot the sample is skipped and counted. Writes are due by
 * bytes written: after a capture of n bytes the next is due once 64 n more
 * bytes were written, so capture copies at most 1/64 (1.6%) of the bytes
 * written plus one sample. The session's analysis thread (analysis.c)
 * drains the rings with data_analyse_one; a writer's totals and hashes are
 * written by that thread only, and read once it has ended. Nothing here takes
 * a lock; allocation happens only in the create functions.
 */
#ifndef IOGATE_DATA_H
#define IOGATE_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

struct data_writer;   /* opaque, one per worker thread */
struct data_analyser; /* opaque: the compression state of one analysing thread */

/* The most bytes of one write a sample keeps (its first bytes). */
#define DATA_SAMPLE_CAP (128u << 10)

/* What a thread's samples add up to (see struct iog_job_stats). */
struct data_totals {
    uint64_t sampled_bytes;
    uint64_t compressed_bytes;
    uint64_t blocks;
    uint64_t samples_skipped; /* due, but no capture slot was free */
};

/* Creates the writer of thread `thread` of a job whose largest write is
 * max_bs bytes; its capture ring takes at most ring_bytes (and at least one
 * slot of 4 KiB). 0, or -ENOMEM / -EINVAL with a message. */
int data_writer_create(const struct iog_job_spec *spec, uint32_t thread, size_t max_bs,
                       size_t ring_bytes, struct data_writer **out, char *err, size_t errlen);

/* Gives a buffer its first contents (at setup, for every request slot). */
void data_fill_initial(struct data_writer *dw, void *buf, size_t len);

/* Whether writes get new contents before each one (refill, dedupe); when
 * not, data_before_write does nothing and need not be called. */
int data_writer_varies(const struct data_writer *dw);

/* Just before a write is prepared: new contents when the spec asks for them
 * (refill, dedupe); otherwise returns at once. */
void data_before_write(struct data_writer *dw, void *buf, size_t len);

/* After a counted write completed in full, on the writer's thread: captures
 * it when it is due (at most 4096 captures per thread). Copies at most
 * sample_cap bytes, never blocks, never allocates. */
void data_after_write(struct data_writer *dw, const void *buf, size_t len);

/* The analysing side (one thread per session, or the writer's own thread in
 * tests). An analyser compresses samples of up to max_len bytes. 0 or
 * -ENOMEM. */
int data_analyser_create(size_t max_len, struct data_analyser **out);
void data_analyser_destroy(struct data_analyser *an);

/* Measures the oldest captured sample of dw (its block hashes, and with
 * `compress` its compressed size too) and frees its slot: 1, or 0 when none
 * is waiting. Only one thread at a time may analyse a writer. */
int data_analyse_one(struct data_writer *dw, struct data_analyser *an, int compress);

/* The thread's totals, and its block hashes in the order sampled (once
 * nothing captures or analyses any more). */
void data_writer_totals(const struct data_writer *dw, struct data_totals *out);
size_t data_writer_hashes(const struct data_writer *dw, const uint64_t **hashes);

/* Counts blocks that repeat an earlier block among all hashes of a job's
 * threads (every occurrence of a hash but the first). 0 or -ENOMEM. */
int data_count_duplicates(const uint64_t *const *hashes, const size_t *counts, size_t nthreads,
                          uint64_t *duplicates);

/* NULL is ignored. */
void data_writer_destroy(struct data_writer *dw);

#endif
