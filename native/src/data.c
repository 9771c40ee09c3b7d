/*
 * data.c - placeholder for write buffer contents and data measurement (see
 * data.h): buffers get non-zero pseudo-random bytes once, nothing is sampled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

struct data_writer {
    uint64_t state;
};

int data_writer_create(const struct iog_job_spec *spec, uint32_t thread, size_t max_bs,
                       struct data_writer **out, char *err, size_t errlen)
{
    (void)max_bs;
    (void)err;
    (void)errlen;
    struct data_writer *dw = calloc(1, sizeof(*dw));
    if (!dw)
        return -ENOMEM;
    dw->state = spec->seed * 0x9E3779B97F4A7C15ull + thread + 1;
    *out = dw;
    return 0;
}

void data_fill_initial(struct data_writer *dw, void *buf, size_t len)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i++) {
        dw->state ^= dw->state << 13;
        dw->state ^= dw->state >> 7;
        dw->state ^= dw->state << 17;
        p[i] = (unsigned char)(dw->state | 1);
    }
}

void data_before_write(struct data_writer *dw, void *buf, size_t len)
{
    (void)dw;
    (void)buf;
    (void)len;
}

void data_after_write(struct data_writer *dw, const void *buf, size_t len)
{
    (void)dw;
    (void)buf;
    (void)len;
}

void data_writer_totals(const struct data_writer *dw, struct data_totals *out)
{
    (void)dw;
    memset(out, 0, sizeof(*out));
}

size_t data_writer_hashes(const struct data_writer *dw, const uint64_t **hashes)
{
    (void)dw;
    *hashes = NULL;
    return 0;
}

int data_count_duplicates(const uint64_t *const *hashes, const size_t *counts, size_t nthreads,
                          uint64_t *duplicates)
{
    (void)hashes;
    (void)counts;
    (void)nthreads;
    *duplicates = 0;
    return 0;
}

void data_writer_destroy(struct data_writer *dw)
{
    free(dw);
}
