// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nowait-read - issue exactly one preadv2(RWF_NOWAIT) and say what the
 * kernel returned, so guest tests can assert the page-cache semantics of
 * non-blocking buffered reads (EAGAIN on a miss, a short read on a partial
 * hit, EOPNOTSUPP where the file system does not support it).
 *
 *   nowait-read FILE OFFSET LENGTH
 *
 * Prints the number of bytes read, or the errno name (EAGAIN, EOPNOTSUPP,
 * ...). Exit status: 0 data or EOF, 2 EAGAIN, 77 RWF_NOWAIT not supported
 * (EOPNOTSUPP, ENOSYS: the Automake skip code), 1 any other error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "c.h"
#include "probe.h"

/* Besides probe.h's: the read would have blocked. */
enum {
	NR_EXIT_EAGAIN = 2,
};

/* 1 GiB: more than any test reads at once, small enough to allocate. */
#define NR_MAX_LENGTH	(1ULL << 30)

static const char *errno_name(int e)
{
	switch (e) {
	case EAGAIN:
		return "EAGAIN";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENOSYS:
		return "ENOSYS";
	case EINVAL:
		return "EINVAL";
	case EIO:
		return "EIO";
	default:
		return strerror(e);
	}
}

int main(int argc, char **argv)
{
	uint64_t off, len;
	struct iovec iov;
	ssize_t n;
	int fd, e;

	if (argc != 4 || probe_parse_u64(argv[2], &off) || probe_parse_u64(argv[3], &len) ||
	    !len || len > NR_MAX_LENGTH) {
		fputs("Usage: nowait-read FILE OFFSET LENGTH\n"
		      "(decimal bytes, 0 < LENGTH <= 1 GiB)\n", stderr);
		return PROBE_EXIT_FAIL;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "nowait-read: %s: %s\n", argv[1],
			strerror(errno));
		return PROBE_EXIT_FAIL;
	}
	iov.iov_len = len;
	iov.iov_base = malloc(len);
	if (!iov.iov_base) {
		fputs("nowait-read: out of memory\n", stderr);
		close(fd);
		return PROBE_EXIT_FAIL;
	}
	n = preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	e = errno;
	free(iov.iov_base);
	close(fd);
	if (n >= 0) {
		printf("%zd\n", n);
		return PROBE_EXIT_OK;
	}
	printf("%s\n", errno_name(e));
	if (e == EAGAIN)
		return NR_EXIT_EAGAIN;
	if (e == EOPNOTSUPP || e == ENOSYS)
		return PROBE_EXIT_SKIP;
	return PROBE_EXIT_FAIL;
}
