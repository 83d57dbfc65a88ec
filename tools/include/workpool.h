/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Worker pool for blocking reads, and the bounded reorder window that
 * puts their results back in file order. The pool starts its threads on
 * the first submitted job, so a run that never misses the page cache
 * never creates a thread. The window owns at most nslots buffers of
 * bufsz bytes, allocated on first use: memory is bounded by the window,
 * not by the file.
 */
#ifndef NBIO_WORKPOOL_H
#define NBIO_WORKPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pagecache.h"

enum wp_state {
	WP_IDLE = 0,	/* not submitted */
	WP_QUEUED,	/* waiting for a worker */
	WP_RUNNING,	/* a worker is reading */
	WP_DONE,	/* res and err are valid */
};

/* One blocking read: pc_read_full(fd, buf, len, off). */
struct wp_job {
	int fd;
	void *buf;
	size_t len;
	uint64_t off;
	struct pc_result res;	/* set by the worker */
	int err;		/* 0 or -errno, set by the worker */
	int state;		/* enum wp_state, atomic */
};

struct workpool {
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* workers: a job was queued, or stop */
	pthread_cond_t done;	/* submitter: a job finished */
	pthread_t *threads;
	unsigned int nthreads;	/* to start */
	unsigned int started;	/* started so far */
	struct wp_job **queue;	/* ring of queued jobs */
	unsigned int qcap;
	unsigned int qhead;
	unsigned int qlen;
	bool stop;
};

/*
 * workpool_init - prepare a pool (no thread is started yet)
 * @wp: pool
 * @nthreads: workers to start on the first submission (>= 1)
 * @depth: most jobs queued at once (the reorder window size)
 *
 * Returns 0 or -errno (-ENOMEM, or from pthread_*_init()).
 */
int workpool_init(struct workpool *wp, unsigned int nthreads,
		  unsigned int depth);

/*
 * workpool_deinit - stop and join the workers, free the pool. Jobs still
 * queued are not run: wait for the ones you care about first.
 */
void workpool_deinit(struct workpool *wp);

/*
 * workpool_submit - queue @job for a worker (starting the workers if
 * none runs yet). The job and its buffer must stay valid until it is
 * done. Returns 0, -EBUSY when @depth jobs are already queued, or
 * -errno from pthread_create() when no worker could be started.
 */
int workpool_submit(struct workpool *wp, struct wp_job *job);

/*
 * workpool_run_here - do @job's read in the calling thread and mark it
 * done, as a worker would: for a caller whose workpool_submit() could
 * start no worker (RLIMIT_NPROC, cgroup pids.max). Blocks for the read.
 */
void workpool_run_here(struct wp_job *job);

/* workpool_is_done - true once @job has finished; does not block. */
static inline bool workpool_is_done(const struct wp_job *job)
{
	return __atomic_load_n(&job->state, __ATOMIC_ACQUIRE) == WP_DONE;
}

/* workpool_wait - block until @job, which was submitted, is done. */
void workpool_wait(struct workpool *wp, struct wp_job *job);

/*
 * workpool_wait_any - block until one of @jobs[0..@n) is done
 *
 * Every job in @jobs must have been submitted and @n must be > 0, or
 * this never returns. Returns the index of a done job. For callers that
 * take each job as it finishes rather than in order (a server answering
 * requests; tests/bench/poolat) instead of a reorder window.
 */
unsigned int workpool_wait_any(struct workpool *wp, struct wp_job *const *jobs,
			       unsigned int n);

/* A window slot: one chunk of the file, in file order. */
struct rwin_slot {
	char *buf;		/* bufsz bytes, page aligned */
	uint64_t off;		/* file offset of buf[0] */
	size_t want;		/* bytes this slot stands for */
	size_t have;		/* bytes already in buf from a probe */
	bool pending;		/* job is reading buf[have..want) */
	struct wp_job job;
};

struct reorder_window {
	struct rwin_slot *slots;
	unsigned int nslots;
	size_t bufsz;
	unsigned int head;	/* oldest slot, the next to write out */
	unsigned int count;	/* slots in use */
};

/*
 * rwin_init - allocate a window of @nslots slots of @bufsz bytes each;
 * only the first buffer is allocated now. Returns 0 or -ENOMEM.
 */
int rwin_init(struct reorder_window *w, unsigned int nslots, size_t bufsz);

/* rwin_deinit - free the buffers; no job may be pending. */
void rwin_deinit(struct reorder_window *w);

/*
 * rwin_next - the slot rwin_push() would add (its buffer allocated and
 * its fields reset), usable as scratch space while not pushed.
 * Returns 0, -EBUSY when the window is full, or -ENOMEM.
 */
int rwin_next(struct reorder_window *w, struct rwin_slot **slot);

/* rwin_push - add the slot returned by rwin_next() at the tail. */
void rwin_push(struct reorder_window *w);

/* rwin_head - the oldest slot, or NULL when the window is empty. */
static inline struct rwin_slot *rwin_head(struct reorder_window *w)
{
	return w->count ? &w->slots[w->head] : NULL;
}

/*
 * rwin_head_buf - the buffer of the head slot, allocated since
 * rwin_init() whether or not a slot is in use: scratch space for a
 * caller that has stopped using the window (nothing pending).
 */
static inline char *rwin_head_buf(struct reorder_window *w)
{
	return w->slots[w->head].buf;
}

/* rwin_pop - drop the oldest slot. */
void rwin_pop(struct reorder_window *w);

static inline bool rwin_is_empty(const struct reorder_window *w)
{
	return !w->count;
}

static inline bool rwin_is_full(const struct reorder_window *w)
{
	return w->count == w->nslots;
}

#endif /* NBIO_WORKPOOL_H */
