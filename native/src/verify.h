/*
 * verify.h - data verification of written blocks: the block header (its
 * layout is documented in iogate.h above iog_job_spec.verify), the sector
 * stamps, the block checksums, what a read-back finds (verify_classify),
 * and the per-thread state a worker keeps to know what each block should
 * hold.
 *
 * Sector stamps. A torn write shows only where the bytes left behind differ
 * from the bytes meant, and a job that rewrites its own earlier blocks
 * (the same job run again, a buffer reused without refill) writes the same
 * buffer contents there: only the header would differ, so a tear that
 * leaves any sector but the first stale would pass. So every 512-byte
 * sector after the first begins with an 8-byte stamp (little endian),
 * a function of the header's generation, sequence number, offset, file and
 * job and of the sector's index; the first sector has the header. Within
 * a generation the stamp of a sector is a bijection of the sequence number,
 * so two writes of a session to one block differ in every sector; across
 * sessions (another random generation) two stamps agree with probability
 * 2^-64. The stamps are written before the checksum, and a read-back checks
 * both: a block with any sector from another write is torn, whatever the
 * checksum kind. The stamps replace the first 8 bytes of each sector of the
 * buffer's contents (bytes the data writer fills with its random part first,
 * so compressibility is kept at the default compress chunk of 512).
 *
 * Expected state. Every block position of the job's region (per file,
 * region_start + k * bs) has one 64-bit word: the sequence number of the
 * last write to it that completed in full, how many writes to it are in
 * flight, and three flags. A write submitted while another to the same block
 * is in flight makes the block "raced": the device may apply the two in
 * either order, so any valid block of this generation for this offset then
 * passes, until a later write runs alone from submission to completion. A
 * write that failed (or came back short) leaves the block "unknown": its
 * error is already counted, and the read-back skips the block until a later
 * write runs alone and completes. Blocks with a request still in flight are
 * skipped too (only after a run that could not drain them).
 *
 * Nothing here takes a lock: a state belongs to one worker thread; its
 * results are read by the session after the thread finished.
 */
#ifndef IOGATE_VERIFY_H
#define IOGATE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "iogate.h"

#define VERIFY_MAGIC       0x56474f49u  /* "IOGV" read as a little-endian u32 */
#define VERIFY_VERSION     3            /* 2: sector stamps; 3: long digests after the header */
#define VERIFY_SECTOR      512          /* every sector after the first begins with a stamp */
#define VERIFY_STAMP       8            /* bytes of a stamp */
#define VERIFY_MAX_BLOCKS  (1ull << 26) /* block positions per job: 512 MiB of state */
#define VERIFY_MAX_BACKLOG (1u << 20)

/* Byte offsets of the header fields. */
#define VH_MAGIC      0
#define VH_VERSION    4
#define VH_KIND       6
#define VH_OFFSET     8
#define VH_LEN        16
#define VH_GENERATION 24
#define VH_SEQ        32
#define VH_FILE       40
#define VH_JOB        44
#define VH_CHECKSUM   48
#define VH_RESERVED   56
#define VH_DIGEST     64 /* the digest area of a digest longer than 8 bytes */

#define VERIFY_DIGEST_MAX 64 /* bytes of the longest digest (SHA-512) */

struct verify_header {
    uint32_t magic;
    uint16_t version;
    uint16_t kind; /* enum iog_verify */
    uint64_t offset;
    uint64_t len;
    uint64_t generation;
    uint64_t seq;
    uint32_t file;
    uint32_t job;
    uint64_t checksum;
    uint64_t reserved;
};

void verify_header_encode(void *block, const struct verify_header *h);
void verify_header_decode(const void *block, struct verify_header *h);

/* Whether kind is a checksum kind of enum iog_verify (not NONE). */
int verify_kind_known(uint32_t kind);

/* Bytes of the digest of a kind: 0 for META (and unknown kinds), 4 or 8 for
 * the checksums kept in the header, 16 to 64 for the long digests. */
uint32_t verify_digest_len(uint32_t kind);

/* The smallest block of a kind: the header and the digest area (iogate.h). */
uint32_t verify_min_block(uint32_t kind);

/*
 * What computes one kind's checksums. The OpenSSL digests need a context
 * and a fetched algorithm: made once (verify_hasher_init, with the
 * verification state of a worker), so that no checksum on the write path
 * allocates. A hasher is used by one thread at a time.
 */
struct verify_hasher {
    uint32_t kind;
    void *md;  /* EVP_MD *, OpenSSL digests only */
    void *ctx; /* EVP_MD_CTX * */
};

/* 0, or -ENOMEM (-EINVAL for an unknown kind). */
int verify_hasher_init(struct verify_hasher *vh, uint32_t kind);
void verify_hasher_fini(struct verify_hasher *vh);

/* The digest of len bytes into out (verify_digest_len bytes: for the kinds
 * of at most 8 bytes, the number as a little-endian u64, 8 bytes written);
 * returns it as the header's checksum field holds it. */
uint64_t verify_digest(struct verify_hasher *vh, const void *buf, size_t len, unsigned char *out);

/* The checksum of `kind` of len bytes as the header's field holds it (the
 * 32-bit ones zero-extended, the long digests' first 8 bytes; META 0). Makes
 * a hasher of its own: not for the write path. */
uint64_t verify_checksum(uint32_t kind, const void *buf, size_t len);

/* The digest of a block of len bytes as its header defines it: computed
 * with the checksum field and the digest area zero (the block is restored
 * before returning), into digest (VERIFY_DIGEST_MAX bytes, may be NULL);
 * returns it as the checksum field holds it. vh NULL: a hasher of kind is
 * made for the call. */
uint64_t verify_block_checksum(struct verify_hasher *vh, uint32_t kind, void *block, size_t len,
                               unsigned char *digest);

/* The stamp of sector `sector` (from 1) of the block h describes. */
uint64_t verify_stamp(const struct verify_header *h, uint64_t sector);

/* The first sector of a block of len bytes whose stamp is not what its
 * header h calls for, or 0 when all are (sector 0 has no stamp). */
uint64_t verify_stale_sector(const void *block, size_t len, const struct verify_header *h);

/* Writes the sector stamps of h and h itself into the block, with the
 * block's checksum (h->checksum is ignored) and digest: the contents after
 * the header are kept but for the digest area and the first VERIFY_STAMP
 * bytes of every later sector. vh (of h->kind) NULL: a hasher is made for
 * the call. */
void verify_seal(struct verify_hasher *vh, void *block, size_t len, const struct verify_header *h);

/* What a block read back should be. seq 0: writes raced, any sequence of
 * this generation passes. */
struct verify_expect {
    uint64_t generation;
    uint64_t offset;
    uint64_t len;
    uint64_t seq;
    uint32_t file;
    uint32_t job;
};

/*
 * Judges a block read back: `got` is what the read returned (bytes, or a
 * negative errno). Returns 1 when the block is what was expected; else 0
 * and *f describes the failure:
 *  - READ_ERROR: the read failed (error: its errno) or was short (EIO);
 *  - LOST: no valid header (wrong magic, version or checksum kind: found_*
 *    stay 0); a valid block of another generation; a valid block of this
 *    generation for this offset with a lower sequence than expected; or a
 *    header that claims a length the block cannot hold, of another
 *    generation (older data written with another block size);
 *  - TORN: the checksum (or the whole long digest) does not match, or a
 *    sector's stamp is not the one
 *    the header calls for (a sector of another write), or the header of
 *    this generation claims a length the block cannot hold;
 *  - MISDIRECTED: a valid block of this generation written for another
 *    offset, file, job or block size.
 * A block of this generation with a higher sequence than expected passes:
 * nothing acknowledged was lost. The block may be changed (its checksum
 * field is zeroed and restored while the checksum is computed). vh computes
 * the checksum when it is of the block's kind; else (a block of another
 * kind, or vh NULL) a hasher is made for the call.
 */
int verify_classify(struct verify_hasher *vh, void *block, int64_t got,
                    const struct verify_expect *e, struct iog_verify_failure *f);

/* A worker thread's verification state and results. */
struct verify_state;

struct verify_params {
    const struct iog_job_spec *spec;
    const char *names;   /* the job's file names, as spec->filename (the state file's) */
    uint32_t job;        /* job index */
    uint32_t nfiles;     /* files of the job */
    uint64_t file_size;  /* bytes of the region in each file */
    uint64_t generation; /* the session's */
    uint32_t depth;      /* request slots of the worker */
};

/* 0, or a negative errno with a message (-ENOMEM; opening the verify state
 * file, spec->verify_state, when there is one: vstate_open). */
int verify_create(const struct verify_params *p, struct verify_state **out, char *err,
                  size_t errlen);

/* Frees what only the run needs (block states, buffers), keeping the
 * results; NULL is ignored. */
void verify_release(struct verify_state *vs);

/* NULL is ignored. */
void verify_destroy(struct verify_state *vs);

/* Before a write of slot `slot` (len bytes at `offset` of file `file`) is
 * prepared, after its contents: gives it the next sequence number, stamps
 * its sectors and seals its header. */
void verify_before_write(struct verify_state *vs, uint32_t slot, void *buf, uint32_t len,
                         uint32_t file, uint64_t offset);

/* The write of `slot` is handed to the engine. */
void verify_submitted(struct verify_state *vs, uint32_t slot);

/* The write of `slot` completed: ok when in full. */
void verify_completed(struct verify_state *vs, uint32_t slot, int ok);

/* A sync of every file completed, started with nothing in flight: the
 * writes completed so far are durable (recorded in the verify state file). */
void verify_synced(struct verify_state *vs);

/* The run ended (complete: not cancelled): closes the verify state file,
 * keeping how its writing went for the results. */
void verify_finish(struct verify_state *vs, int complete);

/* Whether verify_backlog writes completed since the last read-back. */
int verify_backlog_due(const struct verify_state *vs);

/* Whether a failure asked the job to stop (IOG_JOB_VERIFY_FATAL). */
int verify_stopped(const struct verify_state *vs);

/* Reads back, with nothing in flight, either the writes completed since the
 * last read-back (verify_readback_batch) or every block written this run
 * (verify_readback_all), from fds[file]. Stops early when *cancel becomes
 * non-zero or at a fatal failure. */
void verify_readback_batch(struct verify_state *vs, const int *fds, const int *cancel);
void verify_readback_all(struct verify_state *vs, const int *fds, const int *cancel);

/* Adds the results of a thread into *out (zeroed by the caller, apart from
 * struct_size and generation) and appends its records to recs (up to
 * IOG_VERIFY_RECORDS in all, *nrecs of them so far). */
void verify_merge(const struct verify_state *vs, struct iog_verify_stats *out,
                  struct iog_verify_failure *recs, uint32_t *nrecs);

#endif
