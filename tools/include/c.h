/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small C helpers every file of the project may use (util-linux keeps
 * the same in include/c.h), and the kernel constants that old C library
 * headers lack, defined here once (the test helpers include this too).
 */
#ifndef NBIO_C_H
#define NBIO_C_H

#include <sys/uio.h>	/* preadv2() and its RWF_* flags */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* preadv2(): fail with EAGAIN rather than wait for I/O (Linux 4.14) */
#ifndef RWF_NOWAIT
# define RWF_NOWAIT	0x00000008
#endif

#endif /* NBIO_C_H */
