// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Log-linear latency histogram (the HdrHistogram idea, fixed precision):
 * bucket = (octave, top HIST_SUB_BITS bits below the leading one).
 * Adding a sample is a count-leading-zeros and an increment; nothing is
 * allocated and no sample is stored.
 */
#include <string.h>

#include "histogram.h"

static unsigned int hist_bucket(uint64_t v)
{
	unsigned int msb, shift;

	if (v < HIST_SUB)
		return (unsigned int)v;
	/* v >= HIST_SUB, so msb >= HIST_SUB_BITS */
	msb = 63 - (unsigned int)__builtin_clzll(v);
	shift = msb - HIST_SUB_BITS;
	return (shift + 1) * HIST_SUB + (unsigned int)((v >> shift) - HIST_SUB);
}

/* Smallest and largest value that fall into bucket @b. */
static void hist_bounds(unsigned int b, uint64_t *lo, uint64_t *hi)
{
	unsigned int shift;
	uint64_t mant;

	if (b < HIST_SUB) {
		*lo = *hi = b;
		return;
	}
	shift = b / HIST_SUB - 1;
	mant = HIST_SUB + b % HIST_SUB;
	*lo = mant << shift;
	*hi = *lo + ((1ULL << shift) - 1);
}

void hist_init(struct histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void hist_add(struct histogram *h, uint64_t v)
{
	h->buckets[hist_bucket(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void hist_merge(struct histogram *dst, const struct histogram *src)
{
	unsigned int i;

	if (!src->count)
		return;
	for (i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_percentile(const struct histogram *h, double pct)
{
	uint64_t rank, seen = 0, lo, hi, v;
	double want;
	unsigned int i;

	if (!h->count)
		return 0;
	if (pct >= 100.0)
		return h->max;
	want = pct / 100.0 * (double)h->count;
	rank = (uint64_t)want;
	if ((double)rank < want || rank < 1)
		rank++;			/* ceil() without libm */
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank)
			break;
	}
	hist_bounds(i, &lo, &hi);
	v = lo + (hi - lo) / 2;
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}
