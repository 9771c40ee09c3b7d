/*
 * abi.h - the struct_size convention of the public structs (see the top of
 * iogate.h): one helper copies a caller's input struct in, one copies an
 * output struct out, whatever the caller's size.
 */
#ifndef IOGATE_ABI_H
#define IOGATE_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Copies the caller's input struct `user` of `usize` bytes into `dst`, the
 * library's struct of `ksize` bytes: a smaller one is zero-filled past its
 * end, a larger one must have only zeros past ksize. 0; -EINVAL when usize is
 * below ver0; -E2BIG when a byte past ksize is not zero (its offset into
 * *bad). */
int abi_copy_in(void *dst, size_t ksize, const void *user, size_t usize, size_t ver0, size_t *bad);

/* The size of the caller's output struct `user` (its struct_size), or 0
 * when user is NULL or the size is below ver0. */
uint32_t abi_out_size(const void *user, size_t ver0);

/* Copies the library's struct `src` of ksize bytes into the caller's `user`
 * of `usize` bytes (from abi_out_size): only the caller's prefix when it is
 * smaller, the tail zeroed when it is larger; its struct_size stays usize. */
void abi_copy_out(void *user, uint32_t usize, const void *src, size_t ksize);

#endif
