// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/lib/histogram.c: exact count, minimum and
 * maximum; percentiles within one bucket (1/HIST_SUB) of the truth.
 */
#include <stdint.h>

#include "histogram.h"
#include "tap.h"

/* |got - want| <= want / HIST_SUB: the promise of histogram.h */
static bool within(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;

	return d * HIST_SUB <= want;
}

static struct histogram h, h2;

int main(void)
{
	uint64_t v, p;
	int pct;

	hist_init(&h);
	tap_ok(hist_count(&h) == 0 && hist_percentile(&h, 50) == 0,
	       "empty: count 0, percentile 0");

	for (v = 0; v < HIST_SUB; v++)
		hist_add(&h, v);
	tap_ok(hist_percentile(&h, 50) == HIST_SUB / 2 - 1,
	       "small values each have their own bucket (p50 of 0..15 is 7)");

	hist_init(&h);
	for (v = 1; v <= 100000; v++)
		hist_add(&h, v * 1000);		/* 1us .. 100ms */
	tap_ok(hist_count(&h) == 100000, "count is exact");
	tap_ok(hist_percentile(&h, 100) == 100000000ULL,
	       "p100 is the exact maximum");
	tap_ok(hist_max(&h) == 100000000ULL, "max is exact");
	for (pct = 10; pct <= 90; pct += 40) {
		p = hist_percentile(&h, pct);
		tap_ok(within(p, (uint64_t)pct * 1000000ULL),
		       "p%d %llu within 1/%u of %llu", pct,
		       (unsigned long long)p, HIST_SUB,
		       (unsigned long long)pct * 1000000ULL);
	}
	p = hist_percentile(&h, 99);
	tap_ok(within(p, 99000000ULL), "p99 %llu within 1/%u of 99000000",
	       (unsigned long long)p, HIST_SUB);

	hist_init(&h);
	hist_add(&h, 5000);
	tap_ok(hist_percentile(&h, 50) == 5000 &&
	       hist_percentile(&h, 1) == 5000,
	       "one sample: every percentile is it (clamped to min and max)");

	hist_init(&h2);
	hist_add(&h2, UINT64_MAX);
	hist_add(&h2, 1);
	hist_merge(&h, &h2);
	tap_ok(hist_count(&h) == 3, "merge adds the counts");
	tap_ok(hist_percentile(&h, 100) == UINT64_MAX,
	       "merge keeps the largest maximum (UINT64_MAX has a bucket)");
	tap_ok(hist_percentile(&h, 1) == 1, "and the smallest minimum");
	return tap_done();
}
