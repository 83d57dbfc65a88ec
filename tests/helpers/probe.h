/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit status of the test helpers' probes (cachectl probe and nowait,
 * nowait-read), named once, as liburing's test/helpers.h names its
 * T_EXIT_* codes: what tests/helpers/rc.bash and the bats files check.
 */
#ifndef NBIO_TESTS_PROBE_H
#define NBIO_TESTS_PROBE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

enum {
	PROBE_EXIT_OK	= 0,	/* done; for a probe: the kernel can */
	PROBE_EXIT_FAIL	= 1,	/* an error, or bad usage */
	PROBE_EXIT_SKIP	= 77,	/* the kernel lacks the feature: Automake's
				 * "skip", which the gates turn into one */
};

/*
 * A decimal number from the command line, digits only (no sign, no
 * space, no suffix). Returns 0, or -EINVAL / -ERANGE.
 */
static inline int probe_parse_u64(const char *s, uint64_t *res)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*res = v;
	return 0;
}

#endif /* NBIO_TESTS_PROBE_H */
