// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/lib/strutils.c: strict parsing of sizes and
 * integers, the numbers printed for people, and UTF-8 escaping.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "c.h"
#include "strutils.h"
#include "tap.h"

static void test_strtosize(void)
{
	static const struct {
		const char *in;
		int rc;
		uint64_t want;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "128K", 0, 128 << 10 },
		{ "128KiB", 0, 128 << 10 },
		{ "1k", 0, 1024 },
		{ "1KB", 0, 1000 },
		{ "2M", 0, 2 << 20 },
		{ "1G", 0, 1ULL << 30 },
		{ "1T", 0, 1ULL << 40 },
		{ "1MB", 0, 1000000 },
		{ "15E", 0, 15ULL << 60 },
		{ "16E", -ERANGE, 0 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ " 1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "1X", -EINVAL, 0 },
		{ "1Kib", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
	};
	uint64_t v;
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 0;
		rc = strtosize(cases[i].in, &v);
		tap_ok(rc == cases[i].rc && (rc || v == cases[i].want),
		       "strtosize(\"%s\") = %d, %llu", cases[i].in, rc,
		       (unsigned long long)v);
	}
	tap_ok(strtosize(NULL, &v) == -EINVAL, "strtosize(NULL) is -EINVAL");
}

static void test_strtou64_strict(void)
{
	uint64_t v = 0;

	tap_ok(!strtou64_strict("42", &v) && v == 42, "strtou64_strict 42");
	tap_ok(strtou64_strict("42K", &v) == -EINVAL,
	       "strtou64_strict takes no suffix");
	tap_ok(strtou64_strict("+1", &v) == -EINVAL,
	       "strtou64_strict takes no sign");
	tap_ok(strtou64_strict("99999999999999999999", &v) == -ERANGE,
	       "strtou64_strict overflow is -ERANGE");
}

static void test_size_to_human(void)
{
	static const struct {
		uint64_t in;
		const char *want;
	} cases[] = {
		{ 0, "0B" },
		{ 1, "1B" },
		{ 1023, "1023B" },
		{ 1024, "1K" },
		{ 1536, "1.5K" },
		{ 1024 + 50, "1K" },		/* 1.049: .0 is left out */
		{ 1024 + 52, "1.1K" },		/* 1.051 rounds up */
		{ 10 * 1024 - 1, "10K" },	/* 9.999 is 10, no decimal */
		{ 64 << 20, "64M" },
		{ 3000000, "2.9M" },
		{ (1 << 20) - 1, "1M" },	/* 1023.999K is 1M */
		{ 3ULL << 29, "1.5G" },
		{ 1ULL << 40, "1T" },
		{ UINT64_MAX, "16E" },
	};
	char buf[HUMAN_LEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		tap_is_str(size_to_human(buf, cases[i].in), cases[i].want,
			   "size_to_human");
}

static void test_ns_to_human(void)
{
	static const struct {
		uint64_t in;
		const char *want;
	} cases[] = {
		{ 0, "0ns" },
		{ 850, "850ns" },
		{ 999, "999ns" },
		{ 1000, "1us" },
		{ 8400, "8.4us" },
		{ 12345, "12us" },
		{ 999600, "1ms" },
		{ 1200000, "1.2ms" },
		{ 3500000000ULL, "3.5s" },
		{ 7200000000000ULL, "7200s" },	/* no unit past seconds */
	};
	char buf[HUMAN_LEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		tap_is_str(ns_to_human(buf, cases[i].in), cases[i].want,
			   "ns_to_human");
}

static void test_ratios(void)
{
	static const struct {
		uint64_t part, whole;
		const char *human, *exact;
	} cases[] = {
		{ 0, 1, "0.0%", "0.000000" },
		{ 1, 1, "100.0%", "1.000000" },
		{ 1, 2, "50.0%", "0.500000" },
		{ 2, 3, "66.6%", "0.666666" },
		/* 20 MiB with one 4 KiB page missing: never 100% (nbcat
		 * once printed HIT_RATIO 100.0% with MISSING 4K) */
		{ 20 * 1024 * 1024 - 4096, 20 * 1024 * 1024, "99.9%",
		  "0.999804" },
		{ 999999999, 1000000000, "99.9%", "0.999999" },
		{ 1, 1000000000, "0.0%", "0.000000" },
		{ UINT64_MAX - 1, UINT64_MAX, "99.9%", "0.999999" },
		{ UINT64_MAX, UINT64_MAX, "100.0%", "1.000000" },
	};
	char buf[HUMAN_LEN];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		tap_is_str(ratio_to_human(buf, cases[i].part, cases[i].whole),
			   cases[i].human, "ratio_to_human");
		tap_is_str(ratio_to_exact(buf, cases[i].part, cases[i].whole),
			   cases[i].exact, "ratio_to_exact");
	}
}

static void test_utf8_escape_dup(void)
{
	static const struct {
		const char *in, *want, *what;
	} cases[] = {
		{ "plain", "plain", "ASCII unchanged" },
		{ "caf\xc3\xa9", "caf\xc3\xa9", "valid 2-byte sequence kept" },
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "valid 4-byte kept" },
		{ "a\xffz", "a\\xffz", "invalid byte escaped" },
		{ "\xc0\xaf", "\\xc0\\xaf", "overlong form escaped" },
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80", "surrogate escaped" },
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80",
		  "past U+10FFFF escaped" },
		{ "\xc3", "\\xc3", "truncated sequence escaped" },
	};
	size_t i;
	char *s;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		s = utf8_escape_dup(cases[i].in);
		tap_is_str(s, cases[i].want, cases[i].what);
		free(s);
	}
}

int main(void)
{
	test_strtosize();
	test_strtou64_strict();
	test_size_to_human();
	test_ns_to_human();
	test_ratios();
	test_utf8_escape_dup();
	return tap_done();
}
