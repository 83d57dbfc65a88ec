/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal TAP producer for the library's unit tests, read by
 * Automake's tap-driver.sh: "ok N - what" or "not ok N - what", then the
 * plan. A test program exits 0 when every check passed, 1 otherwise,
 * 77 to skip.
 */
#ifndef NBIO_TAP_H
#define NBIO_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static inline __attribute__((format(printf, 2, 3)))
bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	return cond;
}

/* tap_is_str - @got equals @want; on a difference both are shown. */
static inline bool tap_is_str(const char *got, const char *want,
			      const char *what)
{
	bool same = got && !strcmp(got, want);

	if (!tap_ok(same, "%s: \"%s\"", what, want))
		printf("# got \"%s\"\n", got ? got : "(null)");
	return same;
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif /* NBIO_TAP_H */
