// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultread.so - LD_PRELOAD fault injection for nbcat's read paths: a
 * cold file whose blocking reads are slow and whose byte at an offset
 * cannot be read (a bad sector), without root, a device mapper target or
 * a real disk error. Only reads of one file (by st_dev/st_ino) change:
 *
 *   NBIO_FAULT_FILE      the file
 *   NBIO_FAULT_EIO_AT    offset of the bad byte: a blocking read stops
 *                        short before it and fails (EIO) at it; a
 *                        RWF_NOWAIT read that reaches it fails with EIO
 *   NBIO_FAULT_DELAY_MS  every blocking read sleeps this long first
 *
 * Every other RWF_NOWAIT read finds nothing cached (EAGAIN).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "c.h"

typedef ssize_t (*preadv2_fn)(int, const struct iovec *, int, off_t, int);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

static int is_target(int fd)
{
	const char *path = getenv("NBIO_FAULT_FILE");
	struct stat a, b;

	return path && fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static long long bad_offset(void)
{
	const char *s = getenv("NBIO_FAULT_EIO_AT");

	return s ? atoll(s) : -1;
}

static void delay(void)
{
	const char *s = getenv("NBIO_FAULT_DELAY_MS");
	long ms = s ? atol(s) : 0;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

/* A blocking read of @len at @off: how much may be read, -1 for EIO. */
static ssize_t blocking_len(off_t off, size_t len)
{
	long long bad = bad_offset();

	delay();
	if (bad < 0 || off + (long long)len <= bad)
		return (ssize_t)len;
	if (off >= bad) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)(bad - off);
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
		int flags)
{
	preadv2_fn real = (preadv2_fn)dlsym(RTLD_NEXT, "preadv2");
	long long bad;
	size_t len = 0;
	struct iovec one;
	ssize_t n;
	int i;

	if (!is_target(fd))
		return real(fd, iov, cnt, off, flags);
	for (i = 0; i < cnt; i++)
		len += iov[i].iov_len;
	if (flags & RWF_NOWAIT) {
		bad = bad_offset();
		errno = bad >= 0 && off + (long long)len > bad ? EIO : EAGAIN;
		return -1;
	}
	n = blocking_len(off, len);
	if (n < 0 || cnt != 1)
		return n < 0 ? -1 : real(fd, iov, cnt, off, flags);
	one.iov_base = iov[0].iov_base;
	one.iov_len = (size_t)n;
	return real(fd, &one, 1, off, flags);
}

ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off,
		   int flags)
{
	return preadv2(fd, iov, cnt, off, flags);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	pread_fn real = (pread_fn)dlsym(RTLD_NEXT, "pread");
	ssize_t n;

	if (!is_target(fd))
		return real(fd, buf, len, off);
	n = blocking_len(off, len);
	return n < 0 ? -1 : real(fd, buf, (size_t)n, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}
