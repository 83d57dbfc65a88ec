// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nowait-write - write LENGTH bytes of one value with pwritev2(RWF_NOWAIT)
 * and say what the kernel returned, so guest tests can assert which
 * buffered writes complete without blocking and that a refused one
 * changed nothing.
 *
 *   nowait-write [-d] [-t TRIES] FILE OFFSET LENGTH BYTE
 *
 * -d adds RWF_DSYNC. A non-blocking write whose mtime or ctime must
 * change is refused with EAGAIN on 6.1 (file_modified_flags()), and the
 * coarse clock moves every tick; so before each of up to TRIES attempts
 * (default 1) futimens() sets both times to the current tick, and an
 * EAGAIN is tried again. Prints the bytes written, or the errno name.
 * Exit status: 0 written, 2 EAGAIN at every try, 77 EOPNOTSUPP (the
 * kernel cannot try: the Automake skip code), 1 any other error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "c.h"
#include "probe.h"

#ifndef RWF_DSYNC
#define RWF_DSYNC	0x00000002
#endif

/* Besides probe.h's: every try would have blocked. */
enum {
	NW_EXIT_EAGAIN = 2,
};

/* 64 MiB: more than any test writes at once. */
#define NW_MAX_LENGTH	(64ULL << 20)

static void usage(void)
{
	fputs("Usage: nowait-write [-d] [-t TRIES] FILE OFFSET LENGTH BYTE\n"
	      "(decimal; 0 < LENGTH <= 64 MiB, BYTE 0-255)\n", stderr);
}

int main(int argc, char **argv)
{
	uint64_t off, len, byte, tries = 1, i;
	int flags = RWF_NOWAIT, opt, fd, e = 0;
	struct iovec iov;
	ssize_t n = -1;

	while ((opt = getopt(argc, argv, "dt:")) != -1) {
		switch (opt) {
		case 'd':
			flags |= RWF_DSYNC;
			break;
		case 't':
			if (probe_parse_u64(optarg, &tries) || !tries) {
				usage();
				return PROBE_EXIT_FAIL;
			}
			break;
		default:
			usage();
			return PROBE_EXIT_FAIL;
		}
	}
	if (argc - optind != 4 || probe_parse_u64(argv[optind + 1], &off) ||
	    probe_parse_u64(argv[optind + 2], &len) ||
	    probe_parse_u64(argv[optind + 3], &byte) || !len ||
	    len > NW_MAX_LENGTH || byte > 255) {
		usage();
		return PROBE_EXIT_FAIL;
	}
	fd = open(argv[optind], O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "nowait-write: %s: %s\n", argv[optind],
			strerror(errno));
		return PROBE_EXIT_FAIL;
	}
	iov.iov_len = len;
	iov.iov_base = malloc(len);
	if (!iov.iov_base) {
		fputs("nowait-write: out of memory\n", stderr);
		close(fd);
		return PROBE_EXIT_FAIL;
	}
	memset(iov.iov_base, (int)byte, len);
	for (i = 0; i < tries; i++) {
		if (tries > 1 && futimens(fd, NULL)) {
			e = errno;
			break;
		}
		n = pwritev2(fd, &iov, 1, (off_t)off, flags);
		e = n < 0 ? errno : 0;
		if (!(n < 0 && e == EAGAIN))
			break;
	}
	free(iov.iov_base);
	close(fd);
	if (n >= 0) {
		printf("%zd\n", n);
		return PROBE_EXIT_OK;
	}
	printf("%s\n", e == EAGAIN ? "EAGAIN" : e == EOPNOTSUPP ?
	       "EOPNOTSUPP" : strerror(e));
	if (e == EAGAIN)
		return NW_EXIT_EAGAIN;
	if (e == EOPNOTSUPP)
		return PROBE_EXIT_SKIP;
	return PROBE_EXIT_FAIL;
}
