// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/lib/workpool.c: the pool starts no thread before
 * the first job, runs many jobs (each reads its own range of a scratch
 * file), reports a read error in its job and hands each job back once
 * when they are taken as they finish (wp_wait_any); the reorder
 * window hands slots back in the order they were pushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workpool.h"
#include "tap.h"

#define CHUNK	4096
#define NJOBS	64
#define DEPTH	8

/* byte i of the scratch file */
static char pattern(size_t i)
{
	return (char)('a' + (i / CHUNK + i) % 26);
}

static int scratch_file(void)
{
	char path[] = "/tmp/nbio-unit-XXXXXX", buf[CHUNK];
	size_t i, j;
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	for (i = 0; i < NJOBS; i++) {
		for (j = 0; j < CHUNK; j++)
			buf[j] = pattern(i * CHUNK + j);
		if (write(fd, buf, CHUNK) != CHUNK) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static bool chunk_ok(const char *buf, size_t n)
{
	size_t j;

	for (j = 0; j < CHUNK; j++)
		if (buf[j] != pattern(n * CHUNK + j))
			return false;
	return true;
}

static void test_pool(int fd)
{
	static struct wp_job jobs[NJOBS];
	static char bufs[NJOBS][CHUNK];
	struct wp_pool wp;
	unsigned int next = 0, done = 0, bad = 0;
	struct wp_job err_job = { .fd = -1, .buf = bufs[0], .len = CHUNK };

	tap_ok(wp_pool_init(&wp, 0, DEPTH) == -EINVAL,
	       "init: no threads is -EINVAL");
	if (!tap_ok(!wp_pool_init(&wp, 4, DEPTH), "init: 4 threads, depth 8"))
		return;
	tap_ok(wp.started == 0, "no thread before the first job");

	/* keep DEPTH jobs queued, wait for them in order, as nbcat does */
	while (done < NJOBS) {
		while (next < NJOBS && next - done < DEPTH) {
			jobs[next] = (struct wp_job){
				.fd = fd, .buf = bufs[next], .len = CHUNK,
				.off = (uint64_t)next * CHUNK,
			};
			if (wp_submit(&wp, &jobs[next]))
				break;
			next++;
		}
		wp_wait(&wp, &jobs[done]);
		if (jobs[done].err || jobs[done].res.bytes != CHUNK ||
		    !chunk_ok(bufs[done], done))
			bad++;
		done++;
	}
	tap_ok(wp.started == 4, "4 threads started");
	tap_ok(!bad, "%u jobs, each read its own range exactly (%u bad)",
	       NJOBS, bad);

	tap_ok(!wp_submit(&wp, &err_job), "a job on a bad descriptor");
	wp_wait(&wp, &err_job);
	tap_ok(err_job.err == -EBADF, "its error is in the job (%d)",
	       err_job.err);
	wp_pool_deinit(&wp);
	tap_ok(wp.started == 0 && !wp.threads, "deinit joins and forgets them");
}

/* Take jobs as they finish, as a server would (tests/bench/poolat). */
static void test_wait_any(int fd)
{
	static struct wp_job jobs[NJOBS];
	static char bufs[NJOBS][CHUNK];
	struct wp_job *busy[DEPTH];
	unsigned int next = 0, nbusy = 0, taken = 0, bad = 0, i, seen[NJOBS];
	struct wp_pool wp;

	if (!tap_ok(!wp_pool_init(&wp, 4, DEPTH), "wait_any: a pool of 4"))
		return;
	memset(seen, 0, sizeof(seen));
	while (taken < NJOBS) {
		while (next < NJOBS && nbusy < DEPTH) {
			jobs[next] = (struct wp_job){
				.fd = fd, .buf = bufs[next], .len = CHUNK,
				.off = (uint64_t)next * CHUNK,
			};
			if (wp_submit(&wp, &jobs[next]))
				break;
			busy[nbusy++] = &jobs[next++];
		}
		i = wp_wait_any(&wp, busy, nbusy);
		if (i >= nbusy || !wp_is_done(busy[i])) {
			bad++;
			break;
		}
		seen[busy[i] - jobs]++;
		if (busy[i]->err || busy[i]->res.bytes != CHUNK ||
		    !chunk_ok(busy[i]->buf, (size_t)(busy[i] - jobs)))
			bad++;
		busy[i] = busy[--nbusy];
		taken++;
	}
	for (i = 0; i < NJOBS; i++)
		bad += seen[i] != 1;
	tap_ok(!bad && taken == NJOBS,
	       "wait_any: %u jobs, each handed back done, once, with its own range (%u bad)",
	       taken, bad);
	wp_pool_deinit(&wp);
}

static void test_window(void)
{
	struct wp_window w;
	struct wp_slot *s;
	unsigned int i;
	bool order = true;

	if (!tap_ok(!wp_window_init(&w, 4, CHUNK), "window of 4 slots"))
		return;
	tap_ok(wp_window_is_empty(&w) && !wp_window_head(&w), "empty at first");
	for (i = 0; i < 4; i++) {
		if (wp_window_next(&w, &s))
			break;
		s->off = i;
		wp_window_push(&w);
	}
	tap_ok(wp_window_is_full(&w), "full after 4 pushes");
	tap_ok(wp_window_next(&w, &s) == -EBUSY, "a fifth slot is -EBUSY");
	for (i = 0; i < 2; i++) {
		order &= wp_window_head(&w) && wp_window_head(&w)->off == i;
		wp_window_pop(&w);
	}
	for (i = 4; i < 6; i++) {		/* wraps around */
		if (wp_window_next(&w, &s))
			break;
		s->off = i;
		wp_window_push(&w);
	}
	for (i = 2; i < 6; i++) {
		order &= wp_window_head(&w) && wp_window_head(&w)->off == i;
		wp_window_pop(&w);
	}
	tap_ok(order, "slots come back in push order, across the wrap");
	tap_ok(wp_window_is_empty(&w), "empty again");
	wp_window_deinit(&w);
}

int main(void)
{
	int fd = scratch_file();

	if (fd < 0) {
		printf("1..0 # SKIP no scratch file in /tmp\n");
		return 77;
	}
	test_pool(fd);
	test_wait_any(fd);
	test_window();
	close(fd);
	return tap_done();
}
