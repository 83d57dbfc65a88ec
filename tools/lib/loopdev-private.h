/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What loopdev.c, loopdev-dio.c and loopdev-setup.c share and nobody
 * else uses: small file readers and sysfs paths. Not installed, not
 * included by the CLIs.
 */
#ifndef NBIO_LOOPDEV_PRIVATE_H
#define NBIO_LOOPDEV_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

struct loopdev_ctx;

#define SYSFS_BLOCK		"/sys/block"
#define SYSFS_DEV_BLOCK		"/sys/dev/block"

/* Sleep @us microseconds, EINTR resumed. */
void loopdev_pause_us(unsigned long us);

/* A sysfs file holding one decimal number. */
int loopdev_read_u64(const char *path, uint64_t *val);

/* Copy with truncation, always terminated. */
void loopdev_copy_str(char *dst, size_t len, const char *src);

/*
 * loopdev_read_state() of an open device that must be bound: 0, -EBADF
 * (not open), -ENXIO (not bound), or its -errno.
 */
int loopdev_read_bound(struct loopdev_ctx *lc);

/* close(*@fd) if open, and mark it closed. */
void loopdev_close_fd(int *fd);

#endif /* NBIO_LOOPDEV_PRIVATE_H */
