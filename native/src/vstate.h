/*
 * vstate.h - the verify state file (iog_job_spec.verify_state): the
 * durable record of a verified write job's completed writes and completed
 * syncs, written while the job runs, and its check after a crash
 * (iog_verify_state_check).
 *
 * Writing. The job's I/O thread only puts a 16-byte entry into a ring per
 * completed write (vstate_wrote) or completed sync (vstate_synced); a
 * thread of the state file's own encodes the entries as records, appends
 * them with write(2) and makes them durable with fdatasync(2) whenever it
 * wrote something, then records how far the file is durable. A ring that is
 * full makes the I/O thread wait (counted): a record is never dropped, so a
 * sync record never claims more than the writes before it.
 *
 * The file (little endian):
 *   header, VS_HEADER_FIXED bytes and the job's file names, padded to 8:
 *     0  "IOGSTATE"   8 u32 version        12 u32 header bytes
 *     16 u64 generation                    24 u32 job
 *     28 u32 verify kind                   32 u64 block size
 *     40 u64 region start                  48 u64 block positions per file
 *     56 u32 files                         60 u32 bytes of the names
 *     64 u32 flags (VS_DURABLE_WRITES)     68 u32 zero
 *     72 the names (as iog_job_spec.filename, the empty name included)
 *     last 4 bytes: crc32c of the header before them
 *   then records of VS_RECORD bytes, record i at header + i * VS_RECORD:
 *     0 u32 crc32c of the record's index (u64) and bytes 4..23, seeded with
 *       the generation: a record moved, left from an earlier run or torn
 *       does not check
 *     4 u8 type (enum vs_type), 5..7 zero
 *     8 u32 block position (WRITE: file * positions per file + index)
 *     12 u32 zero
 *     16 u64 value: WRITE: the sequence number the block must hold at
 *        least (0: writes to it raced, any of this run passes); DURABLE:
 *        the file was synced up to this byte; otherwise 0.
 *
 * A WRITE record is appended once the write completed in full; a SYNC
 * record once a sync that started after every earlier WRITE record's write
 * completed has itself completed: it covers every WRITE record before it.
 * With VS_DURABLE_WRITES (files opened O_SYNC or O_DSYNC) every WRITE record
 * is covered by itself.
 * A crash may cut the file after its last DURABLE point: reading stops at
 * the first record that does not check, and what follows is ignored, unless
 * a DURABLE record after it says that point was already durable (then the
 * file is damaged).
 */
#ifndef IOGATE_VSTATE_H
#define IOGATE_VSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

#define VS_VERSION        1
#define VS_HEADER_FIXED   72
#define VS_RECORD         24
#define VS_DURABLE_WRITES (1u << 0) /* header flag: each write was durable when it completed */

enum vs_type {
    VS_WRITE = 1,   /* a write completed in full */
    VS_SYNC = 2,    /* a sync of every file completed: covers the writes before it */
    VS_DURABLE = 3, /* the state file itself was synced up to a byte */
    VS_END = 4,     /* the session closed the file at the end of its run */
};

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
