/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit status of the test helpers' probes (cachectl probe and nowait,
 * nowait-read), named once, as liburing's test/helpers.h names its
 * T_EXIT_* codes: what tests/helpers/rc.bash and the bats files check.
 */
#ifndef NBIO_TESTS_PROBE_H
#define NBIO_TESTS_PROBE_H

enum {
	PROBE_EXIT_OK	= 0,	/* done; for a probe: the kernel can */
	PROBE_EXIT_FAIL	= 1,	/* an error, or bad usage */
	PROBE_EXIT_SKIP	= 77,	/* the kernel lacks the feature: Automake's
				 * "skip", which the gates turn into one */
};

#endif /* NBIO_TESTS_PROBE_H */
