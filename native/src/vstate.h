/*
 * vstate.h - the writer of the verify state file (iog_job_spec.verify_state):
 * the durable record of a verified write job's completed writes and completed
 * syncs, written while the job runs. Its format is in vstate_format.h; its
 * check after a crash (iog_verify_state_check) is vstate_check.c's.
 *
 * Writing. The job's I/O thread only puts a 16-byte entry into a ring per
 * completed write (vstate_wrote) or completed sync (vstate_synced); a
 * thread of the state file's own encodes the entries as records, appends
 * them with write(2) and makes them durable with fdatasync(2) whenever it
 * wrote something, then records how far the file is durable. A ring that is
 * full makes the I/O thread wait (counted): a record is never dropped, so a
 * sync record never claims more than the writes before it.
 */
#ifndef IOGATE_VSTATE_H
#define IOGATE_VSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "iogate.h"
#include "vstate_format.h"

struct vstate_writer;

/* What the header says. */
struct vstate_params {
    const char *path;
    const struct iog_file_id *id;
    uint64_t generation;
    uint32_t job;
    uint32_t kind;
    uint64_t block_size;
    uint64_t region_start;
    uint64_t file_blocks;
    uint32_t nfiles;
    uint32_t flags;    /* VS_DURABLE_WRITES */
    const char *names; /* iog_job_spec.filename: NUL-terminated names, an empty one last */
};

/* Opens the file the caller created (p->path, identity p->id), truncates
 * it, writes and syncs the header and starts the writing thread. 0, or a
 * negative errno with a message. */
int vstate_open(const struct vstate_params *p, struct vstate_writer **out, char *err,
                size_t errlen);

/* The I/O thread: a write to `block` completed in full; the block must
 * hold at least sequence `seq` (0: any of this run). */
void vstate_wrote(struct vstate_writer *w, uint32_t block, uint64_t seq);

/* The I/O thread: a sync of every file completed that started after every
 * write recorded so far had completed. */
void vstate_synced(struct vstate_writer *w);

/* Drains the ring, appends the END record when `complete`, syncs the file
 * and stops the thread; *records and *error (first errno, 0: none) say how
 * it went. NULL is ignored. */
void vstate_close(struct vstate_writer *w, int complete, uint64_t *records, int32_t *error);

#endif
