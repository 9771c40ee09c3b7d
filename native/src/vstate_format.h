/*
 * vstate_format.h - the format of the verify state file (iog_job_spec.verify_state),
 * shared by its writer (vstate.c) and its check after a crash (vstate_check.c),
 * and the encoding helpers both use. Neither side's code is here.
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
#ifndef IOGATE_VSTATE_FORMAT_H
#define IOGATE_VSTATE_FORMAT_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <isa-l/crc.h>

#include "iogate.h"

#define VS_MAGIC          "IOGSTATE"
#define VS_VERSION        1
#define VS_HEADER_FIXED   72
#define VS_RECORD         24
#define VS_DURABLE_WRITES (1u << 0)    /* header flag: each write was durable when it completed */
#define VS_NAMES_MAX      IOG_PATH_MAX /* bytes of the file names, as iog_job_spec.filename */

enum vs_type {
    VS_WRITE = 1,   /* a write completed in full */
    VS_SYNC = 2,    /* a sync of every file completed: covers the writes before it */
    VS_DURABLE = 3, /* the state file itself was synced up to a byte */
    VS_END = 4,     /* the session closed the file at the end of its run */
};

static inline void vs_put32(unsigned char *p, uint32_t v)
{
    v = htole32(v);
    memcpy(p, &v, 4);
}

static inline void vs_put64(unsigned char *p, uint64_t v)
{
    v = htole64(v);
    memcpy(p, &v, 8);
}

static inline uint32_t vs_get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return le32toh(v);
}

static inline uint64_t vs_get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return le64toh(v);
}

/* The checksum of record `index` (its bytes 4.. VS_RECORD). */
static inline uint32_t vs_record_crc(uint64_t generation, uint64_t index, const unsigned char *rec)
{
    unsigned char ix[8];
    vs_put64(ix, index);
    uint32_t c = crc32_iscsi(ix, 8, (uint32_t)(generation ^ (generation >> 32)));
    return crc32_iscsi((unsigned char *)rec + 4, VS_RECORD - 4, c);
}

/* Bytes of a list of names: each name and its NUL, then the empty one. */
static inline size_t vs_names_len(const char *names)
{
    size_t n = 0;
    while (n < VS_NAMES_MAX && names[n])
        n += strnlen(names + n, VS_NAMES_MAX - n) + 1;
    return n < VS_NAMES_MAX ? n + 1 : VS_NAMES_MAX;
}

/* Bytes of the header with `names` bytes of names: fixed part, names,
 * checksum, padded to 8. */
static inline size_t vs_header_len(size_t names)
{
    return (VS_HEADER_FIXED + names + 4 + 7) & ~(size_t)7;
}

#endif
