// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Strict number parsing for command-line options. strtoull() alone
 * accepts "-1", leading blanks and trailing junk; options must not.
 * Numbers printed for people, and file names made valid UTF-8 for JSON
 * output.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c.h"
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

/* Bytes in the valid UTF-8 sequence at @s (RFC 3629), or 0. */
static size_t utf8_valid_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;		/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;		/* UTF-16 surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;		/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;		/* past U+10FFFF */
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;	/* also stops at the NUL */
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

char *utf8_escape_dup(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	char *out, *o;
	size_t n;

	/* at worst every byte becomes \xNN */
	out = malloc(strlen(str) * 4 + 1);
	if (!out)
		return NULL;
	for (o = out; *s; ) {
		n = utf8_valid_len(s);
		if (n) {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			o += sprintf(o, "\\x%02x", *s++);
		}
	}
	*o = '\0';
	return out;
}

/*
 * @v in @units[0] as "<n><unit>": scaled by @step while a larger unit is
 * left, with one decimal below 10 (none when it rounds to .0).
 */
static char *to_human(char *buf, uint64_t v, unsigned int step,
		      const char *const *units, size_t nunits)
{
	double d = (double)v;
	uint64_t tenths, whole;
	size_t u = 0;

	while (d >= step && u + 1 < nunits) {
		d /= step;
		u++;
	}
	tenths = (uint64_t)(d * 10 + 0.5);
	if (u && tenths < 100 && tenths % 10) {
		snprintf(buf, HUMAN_LEN, "%" PRIu64 ".%" PRIu64 "%s",
			 tenths / 10, tenths % 10, units[u]);
		return buf;
	}
	whole = u ? (uint64_t)(d + 0.5) : v;
	if (whole >= step && u + 1 < nunits) {
		whole = 1;		/* 1023.7K is 1M */
		u++;
	}
	snprintf(buf, HUMAN_LEN, "%" PRIu64 "%s", whole, units[u]);
	return buf;
}

char *size_to_human(char *buf, uint64_t bytes)
{
	static const char *const units[] = {
		"B", "K", "M", "G", "T", "P", "E"
	};

	return to_human(buf, bytes, 1024, units, ARRAY_SIZE(units));
}

char *ns_to_human(char *buf, uint64_t ns)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };

	return to_human(buf, ns, 1000, units, ARRAY_SIZE(units));
}

/* @part / @whole in units of 1 / @scale, rounded down (no overflow). */
static uint64_t ratio_floor(uint64_t part, uint64_t whole, uint64_t scale)
{
	if (!whole)
		return 0;
	if (part > whole)
		part = whole;
	return (uint64_t)((unsigned __int128)part * scale / whole);
}

char *ratio_to_human(char *buf, uint64_t part, uint64_t whole)
{
	uint64_t t = ratio_floor(part, whole, 1000);	/* tenths of % */

	snprintf(buf, HUMAN_LEN, "%u.%u%%", (unsigned int)(t / 10),
		 (unsigned int)(t % 10));
	return buf;
}

char *ratio_to_exact(char *buf, uint64_t part, uint64_t whole)
{
	uint64_t m = ratio_floor(part, whole, 1000000);	/* millionths */

	snprintf(buf, HUMAN_LEN, "%u.%06u", (unsigned int)(m / 1000000),
		 (unsigned int)(m % 1000000));
	return buf;
}

int read_file_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		rc = -errno;
		n = 0;
	}
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	close(fd);
	return rc;
}
