// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * poolat - per-request latency of cached reads, alone and mixed with a
 * cold stream going through the same worker pool: the benchmark half of
 * the article's claim that trying a non-blocking read first lets cached
 * requests skip the thread-pool handoff. Not a test and not installed.
 *
 * A closed loop keeps --window requests in the system (a server with that
 * many requests queued). A request's latency runs from the moment it
 * enters the system to the moment its data is in the buffer, so it
 * includes the queueing in front of the single thread (blocking) or in
 * the pool's FIFO (pool), which nbcat's --json latencies (the system call
 * alone) leave out. Requests alternate: one chunk of the cold file, then
 * --cached-per-cold chunks of the cached file. Strategies, as in nbcat:
 *   blocking  one thread preads every request in arrival order
 *   pool      every request goes to a FIFO served by --jobs threads
 *   nowait    preadv2(RWF_NOWAIT) in the submitting thread; what it
 *             cannot return goes to the pool
 * The pool and the reads are tools/lib's, the ones nbcat ships
 * (wp_submit, pc_read_nowait, pc_read_full); a request's data is
 * "in the buffer" when this loop takes it back (wp_wait_any), so
 * the hand-back to the submitting thread counts too.
 * The cold file is evicted first (fdatasync + POSIX_FADV_DONTNEED), the
 * cached one read fully. Output: one TSV line per request class:
 *   strategy class requests p50_ns p99_ns max_ns mean_ns seconds
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pagecache.h"
#include "strutils.h"
#include "workpool.h"

enum { S_BLOCKING, S_POOL, S_NOWAIT };
enum { C_CACHED, C_COLD, NCLASS };

struct req {
	struct wp_job job;	/* the rest of the read, in the pool */
	struct req *next;	/* free list */
	int class;
	uint64_t off;
	size_t len, have;
	uint64_t enter_ns;
	char *buf;
};

static void die(const char *what)
{
	fprintf(stderr, "poolat: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void die_rc(const char *what, int rc)
{
	errno = -rc;
	die(what);
}

struct samples {
	uint64_t *v;
	size_t n, cap;
};

static void sample_add(struct samples *s, uint64_t ns)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("realloc");
	}
	s->v[s->n++] = ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const struct samples *s, double p)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (size_t)(p * (double)(s->n - 1) + 0.5);
	return s->v[i];
}

/* A count or a size ("128K"): tools/lib's strtosize(), never 0. */
static size_t parse_size(const char *s)
{
	uint64_t v;

	if (strtosize(s, &v) || !v || v > SIZE_MAX) {
		fprintf(stderr, "poolat: invalid size: '%s'\n", s);
		exit(1);
	}
	return (size_t)v;
}

static void usage(FILE *out, int status)
{
	fprintf(out,
		"Usage: poolat [options] <cached-file> [<cold-file>]\n\n"
		"Options:\n"
		" -s, --strategy <name>        blocking, pool or nowait (default nowait)\n"
		" -j, --jobs <num>             pool threads (default 4)\n"
		" -b, --chunk-size <size>      bytes per request (default 128K)\n"
		" -w, --window <num>           requests in the system (default 16)\n"
		" -k, --cached-per-cold <num>  cached requests per cold one (default 1)\n"
		" -n, --requests <num>         cached requests without a cold file\n"
		"                                (default 4000)\n"
		" -h, --help                   display this help\n");
	exit(status);
}

/* The blocking read of the rest of @r, in this thread. */
static void read_rest(int fd, struct req *r)
{
	struct pc_result res = { 0 };
	int rc = pc_read_full(fd, r->buf + r->have, r->len - r->have,
			      r->off + r->have, &res);

	if (rc)
		die_rc("pread", rc);
	r->have += res.bytes;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "strategy",        required_argument, NULL, 's' },
		{ "jobs",            required_argument, NULL, 'j' },
		{ "chunk-size",      required_argument, NULL, 'b' },
		{ "window",          required_argument, NULL, 'w' },
		{ "cached-per-cold", required_argument, NULL, 'k' },
		{ "requests",        required_argument, NULL, 'n' },
		{ "help",            no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const sname[] = { "blocking", "pool", "nowait" };
	static const char *const cname[] = { "cached", "cold" };
	int strategy = S_NOWAIT, c, rc, fd[NCLASS] = { -1, -1 };
	unsigned int jobs = 4, window = 16, per_cold = 1, i;
	size_t chunk = 128 << 10, nreq = 4000;
	uint64_t size[NCLASS] = { 0, 0 }, next_off[NCLASS] = { 0, 0 };
	uint64_t issued_cached = 0, t0, t1;
	struct samples lat[NCLASS] = { { 0 } };
	struct pc_reader rd[NCLASS];
	struct req *reqs, *r, *free_list = NULL;
	struct wp_job **busy;	/* requests in the pool, in no order */
	struct req **local;	/* blocking: requests in arrival order */
	unsigned int nbusy = 0, lhead = 0, llen = 0;
	unsigned int in_system = 0, since_cold = 0;
	bool more = true, nowait_ok = true;
	struct wp_pool wp;
	char *buf;

	while ((c = getopt_long(argc, argv, "s:j:b:w:k:n:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			for (strategy = 0; strategy < 3; strategy++)
				if (!strcmp(optarg, sname[strategy]))
					break;
			if (strategy == 3) {
				fprintf(stderr, "poolat: unknown strategy: '%s'\n", optarg);
				return 1;
			}
			break;
		case 'j': jobs = (unsigned int)parse_size(optarg); break;
		case 'b': chunk = parse_size(optarg); break;
		case 'w': window = (unsigned int)parse_size(optarg); break;
		case 'k': per_cold = (unsigned int)parse_size(optarg); break;
		case 'n': nreq = parse_size(optarg); break;
		case 'h': usage(stdout, 0); break;
		default:
			fprintf(stderr, "Try 'poolat --help' for more information.\n");
			return 1;
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		usage(stderr, 1);

	for (c = 0; c < argc - optind; c++) {
		fd[c] = open(argv[optind + c], O_RDONLY | O_CLOEXEC);
		if (fd[c] < 0)
			die(argv[optind + c]);
		rc = pc_reader_init(&rd[c], fd[c]);
		if (rc)
			die_rc(argv[optind + c], rc);
		size[c] = pc_reader_get_size(&rd[c]);
		if (size[c] < chunk) {
			fprintf(stderr, "poolat: %s: smaller than a chunk\n", argv[optind + c]);
			return 1;
		}
	}
	/* the cached file fully in the page cache, the cold one out of it */
	buf = malloc(chunk);
	if (!buf)
		die("malloc");
	for (uint64_t o = 0; o < size[C_CACHED]; o += chunk)
		if (pread(fd[C_CACHED], buf, chunk, (off_t)o) < 0)
			die("pread");
	if (fd[C_COLD] >= 0 &&
	    (fdatasync(fd[C_COLD]) ||
	     posix_fadvise(fd[C_COLD], 0, 0, POSIX_FADV_DONTNEED)))
		die("evict");
	free(buf);

	reqs = calloc(window, sizeof(*reqs));
	busy = calloc(window, sizeof(*busy));
	local = calloc(window, sizeof(*local));
	if (!reqs || !busy || !local)
		die("calloc");
	for (i = 0; i < window; i++) {
		reqs[i].buf = malloc(chunk);
		if (!reqs[i].buf)
			die("malloc");
		reqs[i].next = free_list;
		free_list = &reqs[i];
	}
	rc = wp_pool_init(&wp, jobs, window);
	if (rc)
		die_rc("wp_pool_init", rc);

	t0 = pc_now_ns();
	while (more || in_system) {
		/* new requests enter while there is room */
		while (more && in_system < window) {
			int cls = C_CACHED;

			if (fd[C_COLD] >= 0 && since_cold >= per_cold) {
				cls = C_COLD;
				since_cold = 0;
			} else {
				since_cold++;
			}
			r = free_list;
			free_list = r->next;
			r->class = cls;
			r->off = next_off[cls];
			r->len = chunk;
			r->have = 0;
			next_off[cls] += chunk;
			if (next_off[cls] + chunk > size[cls]) {
				next_off[cls] = 0;
				if (cls == C_COLD)
					more = false;	/* the cold stream is over */
			}
			if (cls == C_CACHED && fd[C_COLD] < 0 &&
			    ++issued_cached >= nreq)
				more = false;
			in_system++;
			r->enter_ns = pc_now_ns();
			if (strategy == S_BLOCKING) {
				local[(lhead + llen++) % window] = r;
				continue;
			}
			if (strategy == S_NOWAIT && nowait_ok) {
				struct pc_result res;

				rc = pc_read_nowait(&rd[cls], r->buf, r->len,
						    r->off, &res);
				if (rc)
					die_rc("preadv2", rc);
				if (res.outcome == PC_UNSUPPORTED) {
					nowait_ok = false;
					fprintf(stderr, "poolat: RWF_NOWAIT not supported: every request goes to the pool\n");
				}
				r->have = res.bytes;
				if (r->have == r->len) {
					sample_add(&lat[cls], pc_now_ns() - r->enter_ns);
					in_system--;
					r->next = free_list;
					free_list = r;
					continue;
				}
			}
			r->job = (struct wp_job){
				.fd = fd[cls], .buf = r->buf + r->have,
				.len = r->len - r->have, .off = r->off + r->have,
			};
			rc = wp_submit(&wp, &r->job);
			if (rc)
				die_rc("wp_submit", rc);
			busy[nbusy++] = &r->job;
		}
		if (!in_system)
			continue;	/* every request so far was a hit */
		/* serve or take back one request */
		if (strategy == S_BLOCKING) {
			r = local[lhead];
			lhead = (lhead + 1) % window;
			llen--;
			read_rest(fd[r->class], r);
		} else {
			i = wp_wait_any(&wp, busy, nbusy);
			r = (struct req *)busy[i];	/* job is the first member */
			busy[i] = busy[--nbusy];
			if (r->job.err)
				die_rc("pread", r->job.err);
			r->have += r->job.res.bytes;
		}
		sample_add(&lat[r->class], pc_now_ns() - r->enter_ns);
		in_system--;
		r->next = free_list;
		free_list = r;
	}
	t1 = pc_now_ns();
	wp_pool_deinit(&wp);

	for (c = 0; c < NCLASS; c++) {
		struct samples *s = &lat[c];
		uint64_t sum = 0;
		size_t k;

		if (!s->n)
			continue;
		qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
		for (k = 0; k < s->n; k++)
			sum += s->v[k];
		printf("%s\t%s\t%zu\t%llu\t%llu\t%llu\t%llu\t%.3f\n",
		       sname[strategy], cname[c], s->n,
		       (unsigned long long)pct(s, 0.50),
		       (unsigned long long)pct(s, 0.99),
		       (unsigned long long)s->v[s->n - 1],
		       (unsigned long long)(sum / s->n),
		       (double)(t1 - t0) / 1e9);
	}
	return 0;
}
