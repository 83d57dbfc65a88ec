/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Worker pool for blocking reads, and the bounded reorder window that
 * puts their results back in file order. The pool starts its threads on
 * the first submitted job, so a run that never misses the page cache
 * never creates a thread. The window owns at most nslots buffers of
 * bufsz bytes, allocated on first use: memory is bounded by the window,
 * not by the file. Every name here starts with wp_: the pool and its
 * jobs (wp_pool_init(), wp_submit(), wp_wait()...), the window
 * (wp_window_*()).
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

struct wp_pool {
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
 * wp_pool_init - prepare a pool (no thread is started yet)
 * @wp: pool
 * @nthreads: workers to start on the first submission (>= 1)
 * @depth: most jobs queued at once (the reorder window size)
 *
 * Returns 0 or -errno (-ENOMEM, or from pthread_*_init()).
 */
int wp_pool_init(struct wp_pool *wp, unsigned int nthreads,
		 unsigned int depth);

/*
 * wp_pool_deinit - stop and join the workers, free the pool. Jobs still
 * queued are not run: wait for the ones you care about first.
 */
void wp_pool_deinit(struct wp_pool *wp);

/*
 * wp_submit - queue @job for a worker (starting the workers if
 * none runs yet). The job and its buffer must stay valid until it is
 * done. Returns 0, -EBUSY when @depth jobs are already queued, or
 * -errno from pthread_create() when no worker could be started.
 */
int wp_submit(struct wp_pool *wp, struct wp_job *job);

/*
 * wp_run_here - do @job's read in the calling thread and mark it
 * done, as a worker would: for a caller whose wp_submit() could
 * start no worker (RLIMIT_NPROC, cgroup pids.max). Blocks for the read.
 */
void wp_run_here(struct wp_job *job);

/* wp_is_done - true once @job has finished; does not block. */
static inline bool wp_is_done(const struct wp_job *job)
{
	return __atomic_load_n(&job->state, __ATOMIC_ACQUIRE) == WP_DONE;
}

/* wp_wait - block until @job, which was submitted, is done. */
void wp_wait(struct wp_pool *wp, struct wp_job *job);

/*
 * wp_wait_any - block until one of @jobs[0..@n) is done
 *
 * Every job in @jobs must have been submitted and @n must be > 0, or
 * this never returns. Returns the index of a done job. For callers that
 * take each job as it finishes rather than in order (a server answering
 * requests; tests/bench/poolat) instead of a reorder window.
 */
unsigned int wp_wait_any(struct wp_pool *wp, struct wp_job *const *jobs,
			 unsigned int n);

/* A window slot: one chunk of the file, in file order. */
struct wp_slot {
	char *buf;		/* bufsz bytes, page aligned */
	uint64_t off;		/* file offset of buf[0] */
	size_t want;		/* bytes this slot stands for */
	size_t have;		/* bytes already in buf from a probe */
	bool pending;		/* job is reading buf[have..want) */
	bool here;		/* the submitting thread ran the job */
	struct wp_job job;
};

struct wp_window {
	struct wp_slot *slots;
	unsigned int nslots;
	size_t bufsz;
	unsigned int head;	/* oldest slot, the next to write out */
	unsigned int count;	/* slots in use */
};

/*
 * wp_window_init - allocate a window of @nslots slots of @bufsz bytes each;
 * only the first buffer is allocated now. Returns 0 or -ENOMEM.
 */
int wp_window_init(struct wp_window *w, unsigned int nslots, size_t bufsz);

/* wp_window_deinit - free the buffers; no job may be pending. */
void wp_window_deinit(struct wp_window *w);

/*
 * wp_window_next - the slot wp_window_push() would add (its buffer
 * allocated and its fields reset), usable as scratch space while not
 * pushed.
 * Returns 0, -EBUSY when the window is full, or -ENOMEM.
 */
int wp_window_next(struct wp_window *w, struct wp_slot **slot);

/* wp_window_push - add the slot returned by wp_window_next() at the tail. */
void wp_window_push(struct wp_window *w);

/* wp_window_head - the oldest slot, or NULL when the window is empty. */
static inline struct wp_slot *wp_window_head(struct wp_window *w)
{
	return w->count ? &w->slots[w->head] : NULL;
}

/*
 * wp_window_head_buf - the buffer of the head slot, allocated since
 * wp_window_init() whether or not a slot is in use: scratch space for a
 * caller that has stopped using the window (nothing pending).
 */
static inline char *wp_window_head_buf(struct wp_window *w)
{
	return w->slots[w->head].buf;
}

/* wp_window_pop - drop the oldest slot. */
void wp_window_pop(struct wp_window *w);

static inline bool wp_window_is_empty(const struct wp_window *w)
{
	return !w->count;
}

static inline bool wp_window_is_full(const struct wp_window *w)
{
	return w->count == w->nslots;
}

#endif /* NBIO_WORKPOOL_H */
