/*
 * data.h - what write requests carry and what was measured of it. A data
 * writer belongs to one worker thread: it builds write buffers as the job
 * spec asks (compressible chunks with a pattern, zeros, repeated contents for
 * dedupe, refilled before every write or filled once), and it samples
 * completed writes to measure the data for real: zlib (level 6) compressed
 * size and 64-bit content hashes of 4 KiB blocks, merged per job to count
 * duplicate blocks. Nothing here takes a lock; allocation happens only in
 * data_writer_create.
 */
#ifndef IOGATE_DATA_H
#define IOGATE_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

struct data_writer; /* opaque, one per worker thread */

/* What a thread's samples add up to (see struct iog_job_stats). */
struct data_totals {
    uint64_t sampled_bytes;
    uint64_t compressed_bytes;
    uint64_t blocks;
};

/* Creates the writer of thread `thread` of a job whose largest write is
 * max_bs bytes. 0, or -ENOMEM / -EINVAL with a message. */
int data_writer_create(const struct iog_job_spec *spec, uint32_t thread, size_t max_bs,
                       struct data_writer **out, char *err, size_t errlen);

/* Gives a buffer its first contents (at setup, for every request slot). */
void data_fill_initial(struct data_writer *dw, void *buf, size_t len);

/* Just before a write is prepared: new contents when the spec asks for them
 * (refill, dedupe); otherwise returns at once. */
void data_before_write(struct data_writer *dw, void *buf, size_t len);

/* After a counted write completed in full: samples it (every 64th, at most
 * 4096 per thread). Call outside the timed part of the request. */
void data_after_write(struct data_writer *dw, const void *buf, size_t len);

/* The thread's totals, and its block hashes in the order sampled. */
void data_writer_totals(const struct data_writer *dw, struct data_totals *out);
size_t data_writer_hashes(const struct data_writer *dw, const uint64_t **hashes);

/* Counts blocks that repeat an earlier block among all hashes of a job's
 * threads (every occurrence of a hash but the first). 0 or -ENOMEM. */
int data_count_duplicates(const uint64_t *const *hashes, const size_t *counts, size_t nthreads,
                          uint64_t *duplicates);

/* NULL is ignored. */
void data_writer_destroy(struct data_writer *dw);

#endif
