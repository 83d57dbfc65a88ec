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
 * The cold file is evicted first (fdatasync + POSIX_FADV_DONTNEED), the
 * cached one read fully. Output: one TSV line per request class:
 *   strategy class requests p50_ns p99_ns max_ns mean_ns seconds
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

enum { S_BLOCKING, S_POOL, S_NOWAIT };
enum { C_CACHED, C_COLD, NCLASS };

struct req {
	struct req *next;
	int fd;
	int class;
	uint64_t off;
	size_t len, have;
	uint64_t enter_ns, done_ns;
	char *buf;
};

struct fifo {
	struct req *head, *tail;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static struct fifo workq, doneq;
static bool stopping;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void fifo_push(struct fifo *f, struct req *r)
{
	r->next = NULL;
	if (f->tail)
		f->tail->next = r;
	else
		f->head = r;
	f->tail = r;
}

static struct req *fifo_pop(struct fifo *f)
{
	struct req *r = f->head;

	if (r) {
		f->head = r->next;
		if (!f->head)
			f->tail = NULL;
	}
	return r;
}

static void die(const char *what)
{
	fprintf(stderr, "poolat: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The blocking read of the rest of @r: until len bytes or end of file. */
static void read_rest(struct req *r)
{
	ssize_t n;

	while (r->have < r->len) {
		n = pread(r->fd, r->buf + r->have, r->len - r->have,
			  (off_t)(r->off + r->have));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("pread");
		if (n == 0)
			break;
		r->have += (size_t)n;
	}
	r->done_ns = now_ns();
}

static void *worker(void *arg)
{
	struct req *r;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!workq.head && !stopping)
			pthread_cond_wait(&work_cv, &lock);
		if (stopping)
			break;
		r = fifo_pop(&workq);
		pthread_mutex_unlock(&lock);
		read_rest(r);
		pthread_mutex_lock(&lock);
		fifo_push(&doneq, r);
		pthread_cond_signal(&done_cv);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void pool_submit(struct req *r)
{
	pthread_mutex_lock(&lock);
	fifo_push(&workq, r);
	pthread_cond_signal(&work_cv);
	pthread_mutex_unlock(&lock);
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

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		goto bad;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end || !v)
		goto bad;
	return (size_t)v;
bad:
	fprintf(stderr, "poolat: invalid size: '%s'\n", s);
	exit(1);
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
	int strategy = S_NOWAIT, c, fd[NCLASS] = { -1, -1 };
	unsigned int jobs = 4, window = 16, per_cold = 1, i;
	size_t chunk = 128 << 10, nreq = 4000;
	uint64_t size[NCLASS] = { 0, 0 }, next_off[NCLASS] = { 0, 0 };
	uint64_t issued_cached = 0, t0, t1;
	struct samples lat[NCLASS] = { { 0 } };
	struct req *reqs, *r, *free_list = NULL;
	struct fifo local = { 0 };
	unsigned int in_system = 0, since_cold = 0;
	bool more = true, nowait_ok = true;
	pthread_t *tids;
	struct stat st;
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
		if (fd[c] < 0 || fstat(fd[c], &st))
			die(argv[optind + c]);
		size[c] = (uint64_t)st.st_size;
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
	tids = calloc(jobs, sizeof(*tids));
	if (!reqs || !tids)
		die("calloc");
	for (i = 0; i < window; i++) {
		reqs[i].buf = malloc(chunk);
		if (!reqs[i].buf)
			die("malloc");
		reqs[i].next = free_list;
		free_list = &reqs[i];
	}
	for (i = 0; i < jobs; i++)
		if (pthread_create(&tids[i], NULL, worker, NULL))
			die("pthread_create");

	t0 = now_ns();
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
			r->fd = fd[cls];
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
			r->enter_ns = now_ns();
			if (strategy == S_BLOCKING) {
				fifo_push(&local, r);
				continue;
			}
			if (strategy == S_NOWAIT && nowait_ok) {
				struct iovec iov = { r->buf, r->len };
				ssize_t n = preadv2(r->fd, &iov, 1, (off_t)r->off,
						    RWF_NOWAIT);

				if (n < 0 && errno == EOPNOTSUPP) {
					nowait_ok = false;
					fprintf(stderr, "poolat: RWF_NOWAIT not supported: every request goes to the pool\n");
				} else if (n < 0 && errno != EAGAIN) {
					die("preadv2");
				} else if (n > 0) {
					r->have = (size_t)n;
				}
				if (r->have == r->len) {
					r->done_ns = now_ns();
					sample_add(&lat[r->class], r->done_ns - r->enter_ns);
					in_system--;
					r->next = free_list;
					free_list = r;
					continue;
				}
			}
			pool_submit(r);
		}
		if (!in_system)
			continue;	/* every request so far was a hit */
		/* serve or reap one request */
		if (strategy == S_BLOCKING) {
			r = fifo_pop(&local);
			if (!r)
				continue;
			read_rest(r);
		} else {
			pthread_mutex_lock(&lock);
			while (!doneq.head)
				pthread_cond_wait(&done_cv, &lock);
			r = fifo_pop(&doneq);
			pthread_mutex_unlock(&lock);
		}
		sample_add(&lat[r->class], r->done_ns - r->enter_ns);
		in_system--;
		r->next = free_list;
		free_list = r;
	}
	t1 = now_ns();

	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_broadcast(&work_cv);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < jobs; i++)
		pthread_join(tids[i], NULL);

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
