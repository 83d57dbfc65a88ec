// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Strict number parsing for command-line options. strtoull() alone
 * accepts "-1", leading blanks and trailing junk; options must not.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strutils.h"

static int parse_digits(const char *str, uint64_t *res, char **end)
{
	unsigned long long v;

	if (!str || !isdigit((unsigned char)*str))
		return -EINVAL;
	errno = 0;
	v = strtoull(str, end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*res = v;
	return 0;
}

int strtou64_strict(const char *str, uint64_t *res)
{
	char *end;
	int rc = parse_digits(str, res, &end);

	if (rc)
		return rc;
	return *end ? -EINVAL : 0;
}

int strtosize(const char *str, uint64_t *res)
{
	static const char units[] = "KMGTPE";
	const char *u;
	uint64_t v, base = 1024, mult = 1;
	char *end;
	int rc = parse_digits(str, &v, &end);

	if (rc)
		return rc;
	if (*end) {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u)
			return -EINVAL;
		end++;
		if (!strcmp(end, "iB") || !*end)
			base = 1024;
		else if (!strcasecmp(end, "B"))
			base = 1000;
		else
			return -EINVAL;
		for (int i = 0; i <= u - units; i++)
			mult *= base;
	}
	if (mult > 1 && v > UINT64_MAX / mult)
		return -ERANGE;
	*res = v * mult;
	return 0;
}
