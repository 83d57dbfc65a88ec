/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Log-linear histogram of 64-bit values (latencies in nanoseconds):
 * each power of two is split into HIST_SUB equal buckets, so any
 * percentile is known within 1/HIST_SUB (6.25%) of the true value while
 * the histogram stays a fixed 8 KiB whatever the number of samples.
 * Count, minimum, maximum and sum are exact.
 */
#ifndef NBIO_HISTOGRAM_H
#define NBIO_HISTOGRAM_H

#include <stdint.h>

#define HIST_SUB_BITS	4
#define HIST_SUB	(1U << HIST_SUB_BITS)
/* values 0..HIST_SUB-1 get a bucket each, then HIST_SUB per octave */
#define HIST_BUCKETS	((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct histogram {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	uint64_t sum;
	uint64_t buckets[HIST_BUCKETS];
};

/* hist_init - empty the histogram. */
void hist_init(struct histogram *h);

/* hist_add - record one value. */
void hist_add(struct histogram *h, uint64_t v);

/* hist_merge - add every sample of @src to @dst. */
void hist_merge(struct histogram *dst, const struct histogram *src);

/*
 * hist_percentile - value below or at which @pct percent of the samples
 * lie (0 < @pct <= 100), as the middle of its bucket, clamped to the
 * exact minimum and maximum; hist_percentile(h, 100) is the maximum.
 * Returns 0 for an empty histogram (check hist_count() first).
 */
uint64_t hist_percentile(const struct histogram *h, double pct);

static inline uint64_t hist_count(const struct histogram *h)
{
	return h->count;
}

static inline uint64_t hist_max(const struct histogram *h)
{
	return h->max;
}

#endif /* NBIO_HISTOGRAM_H */
