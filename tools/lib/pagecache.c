// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page-cache reader. preadv2(RWF_NOWAIT) copies what the page cache holds
 * and fails with EAGAIN instead of waiting for the disk, which turns a
 * read into a cheap "is this cached?" probe that also returns the data.
 * This file classifies each such read; it never prints and never decides
 * what to do about a miss (that is the caller's policy).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "pagecache.h"

/*
 * RWF_NOWAIT for buffered reads came in 4.14 (it was O_DIRECT only in
 * 4.13); glibc headers older than 2.26 do not define it.
 */
#ifndef RWF_NOWAIT
# define RWF_NOWAIT 0x00000008
#endif

uint64_t pc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int pc_stat(struct pc_reader *rd)
{
	struct stat st;
	uint64_t bytes;

	if (fstat(rd->fd, &st) < 0)
		return -errno;
	rd->type = st.st_mode & S_IFMT;
	rd->dev = st.st_dev;
	rd->ino = st.st_ino;
	switch (rd->type) {
	case S_IFDIR:
		return -EISDIR;
	case S_IFREG:
		rd->flags |= PC_FL_SEEKABLE;
		rd->size = (uint64_t)st.st_size;
		break;
	case S_IFBLK:
		rd->flags |= PC_FL_SEEKABLE | PC_FL_BLKDEV;
		if (ioctl(rd->fd, BLKGETSIZE64, &bytes) < 0)
			return -errno;
		rd->size = bytes;
		break;
	default:
		/* pipes, terminals, sockets, character devices */
		rd->flags &= ~PC_FL_SEEKABLE;
		rd->size = 0;
		break;
	}
	return 0;
}

int pc_reader_init(struct pc_reader *rd, int fd)
{
	memset(rd, 0, sizeof(*rd));
	rd->fd = fd;
	return pc_stat(rd);
}

void pc_reader_deinit(struct pc_reader *rd)
{
	rd->fd = -1;
	rd->flags = 0;
	rd->size = 0;
}

int pc_reader_refresh(struct pc_reader *rd)
{
	return pc_stat(rd);
}

/* Errors that mean "this file (or kernel) cannot do RWF_NOWAIT". */
static bool pc_errno_unsupported(int e, bool first)
{
	switch (e) {
	case EOPNOTSUPP:	/* no FMODE_NOWAIT: tmpfs, overlayfs, procfs */
	case ENOSYS:		/* no preadv2 at all (before 4.6) */
		return true;
	case EINVAL:		/* unknown RWF flag on an old kernel */
		return first;
	default:
		return false;
	}
}

int pc_read_nowait(struct pc_reader *rd, void *buf, size_t len,
		   uint64_t off, struct pc_result *res)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	bool first = !(rd->flags & PC_FL_PROBED);
	uint64_t start;
	ssize_t n;
	int rc;

	res->bytes = 0;
	res->eof = false;
	rd->flags |= PC_FL_PROBED;

	start = pc_now_ns();
	do {
		n = preadv2(rd->fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	} while (n < 0 && errno == EINTR);
	res->ns = pc_now_ns() - start;

	if (n < 0) {
		if (errno == EAGAIN) {
			res->outcome = PC_MISS;
			return 0;
		}
		if (pc_errno_unsupported(errno, first)) {
			rd->flags |= PC_FL_UNSUPPORTED;
			res->outcome = PC_UNSUPPORTED;
			return 0;
		}
		return -errno;
	}

	res->bytes = (size_t)n;
	if ((size_t)n == len) {
		res->outcome = PC_HIT;
		return 0;
	}

	/*
	 * Short or empty read: end of file, or a page that is not cached.
	 * IOCB_NOIO reads may also return 0 with nothing copied where
	 * EAGAIN was meant (seen on 5.9 and 5.10, where RWF_NOWAIT started
	 * to imply IOCB_NOIO). Never take such a 0 for EOF on its own: only
	 * the size can tell, and the file may have grown or shrunk since we
	 * last looked, so stat it again.
	 */
	if (off + (uint64_t)n >= rd->size) {
		rc = pc_stat(rd);
		if (rc)
			return rc;
	}
	if (off + (uint64_t)n >= rd->size) {
		if (n == 0) {
			res->outcome = PC_EOF;
			res->eof = true;
		} else {
			res->outcome = PC_HIT;
		}
	} else {
		res->outcome = n ? PC_PARTIAL : PC_MISS;
	}
	return 0;
}

int pc_read_full(int fd, void *buf, size_t len, uint64_t off,
		 struct pc_result *res)
{
	uint64_t start = pc_now_ns();
	char *p = buf;
	ssize_t n;
	int rc = 0;

	res->bytes = 0;
	res->eof = false;
	while (res->bytes < len) {
		n = pread(fd, p + res->bytes, len - res->bytes,
			  (off_t)(off + res->bytes));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0) {
			res->eof = true;
			break;
		}
		res->bytes += (size_t)n;
	}
	res->ns = pc_now_ns() - start;
	return rc;
}

int pc_read_stream(int fd, void *buf, size_t len, struct pc_result *res)
{
	uint64_t start = pc_now_ns();
	ssize_t n;

	do {
		n = read(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	res->ns = pc_now_ns() - start;
	res->bytes = n > 0 ? (size_t)n : 0;
	res->eof = n == 0;
	return n < 0 ? -errno : 0;
}
