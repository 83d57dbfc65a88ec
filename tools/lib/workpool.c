// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Worker pool + reorder window. Workers take read jobs from a ring under
 * one mutex and mark them done with a release store; the submitter polls
 * a job with an acquire load (no lock) and sleeps on a condition
 * variable only when it must wait. Nothing here is touched on the path
 * where every chunk is a page-cache hit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workpool.h"

/* The read of one job; a worker runs it, or wp_run_here(). */
static void wp_read(struct wp_job *job)
{
	job->err = pc_read_full(job->fd, job->buf, job->len, job->off,
				&job->res);
}

void wp_run_here(struct wp_job *job)
{
	__atomic_store_n(&job->state, WP_RUNNING, __ATOMIC_RELAXED);
	wp_read(job);
	__atomic_store_n(&job->state, WP_DONE, __ATOMIC_RELEASE);
}

static void *wp_worker(void *arg)
{
	struct wp_pool *wp = arg;
	struct wp_job *job;

	pthread_mutex_lock(&wp->lock);
	for (;;) {
		while (!wp->qlen && !wp->stop)
			pthread_cond_wait(&wp->wake, &wp->lock);
		if (wp->stop)
			break;
		job = wp->queue[wp->qhead];
		wp->qhead = (wp->qhead + 1) % wp->qcap;
		wp->qlen--;
		__atomic_store_n(&job->state, WP_RUNNING, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&wp->lock);

		wp_read(job);

		pthread_mutex_lock(&wp->lock);
		__atomic_store_n(&job->state, WP_DONE, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&wp->done);
	}
	pthread_mutex_unlock(&wp->lock);
	return NULL;
}

int wp_pool_init(struct wp_pool *wp, unsigned int nthreads,
		 unsigned int depth)
{
	int rc;

	memset(wp, 0, sizeof(*wp));
	if (!nthreads || !depth)
		return -EINVAL;
	wp->threads = calloc(nthreads, sizeof(*wp->threads));
	wp->queue = calloc(depth, sizeof(*wp->queue));
	if (!wp->threads || !wp->queue) {
		rc = -ENOMEM;
		goto err_free;
	}
	rc = -pthread_mutex_init(&wp->lock, NULL);
	if (rc)
		goto err_free;
	rc = -pthread_cond_init(&wp->wake, NULL);
	if (rc)
		goto err_mutex;
	rc = -pthread_cond_init(&wp->done, NULL);
	if (rc)
		goto err_wake;
	wp->nthreads = nthreads;
	wp->qcap = depth;
	return 0;

err_wake:
	pthread_cond_destroy(&wp->wake);
err_mutex:
	pthread_mutex_destroy(&wp->lock);
err_free:
	free(wp->queue);
	free(wp->threads);
	memset(wp, 0, sizeof(*wp));
	return rc;
}

void wp_pool_deinit(struct wp_pool *wp)
{
	unsigned int i;

	if (!wp->qcap)
		return;		/* never initialised */
	pthread_mutex_lock(&wp->lock);
	wp->stop = true;
	pthread_cond_broadcast(&wp->wake);
	pthread_mutex_unlock(&wp->lock);
	for (i = 0; i < wp->started; i++)
		pthread_join(wp->threads[i], NULL);
	pthread_cond_destroy(&wp->done);
	pthread_cond_destroy(&wp->wake);
	pthread_mutex_destroy(&wp->lock);
	free(wp->queue);
	free(wp->threads);
	memset(wp, 0, sizeof(*wp));
}

/* Start the workers; called with the lock held. */
static int wp_start(struct wp_pool *wp)
{
	int rc;

	while (wp->started < wp->nthreads) {
		rc = pthread_create(&wp->threads[wp->started], NULL,
				    wp_worker, wp);
		if (rc)
			/* run with fewer workers, but not with none */
			return wp->started ? 0 : -rc;
		wp->started++;
	}
	return 0;
}

int wp_submit(struct wp_pool *wp, struct wp_job *job)
{
	int rc = 0;

	pthread_mutex_lock(&wp->lock);
	if (wp->qlen == wp->qcap) {
		rc = -EBUSY;
		goto out;
	}
	if (wp->started < wp->nthreads) {
		rc = wp_start(wp);
		if (rc)
			goto out;
	}
	job->err = 0;
	__atomic_store_n(&job->state, WP_QUEUED, __ATOMIC_RELAXED);
	wp->queue[(wp->qhead + wp->qlen) % wp->qcap] = job;
	wp->qlen++;
	pthread_cond_signal(&wp->wake);
out:
	pthread_mutex_unlock(&wp->lock);
	return rc;
}

void wp_wait(struct wp_pool *wp, struct wp_job *job)
{
	if (wp_is_done(job))
		return;
	pthread_mutex_lock(&wp->lock);
	while (__atomic_load_n(&job->state, __ATOMIC_ACQUIRE) != WP_DONE)
		pthread_cond_wait(&wp->done, &wp->lock);
	pthread_mutex_unlock(&wp->lock);
}

/* The index of a done job in @jobs[0..@n), or -1. */
static int first_done(struct wp_job *const *jobs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (wp_is_done(jobs[i]))
			return (int)i;
	return -1;
}

unsigned int wp_wait_any(struct wp_pool *wp, struct wp_job *const *jobs,
			 unsigned int n)
{
	int i = first_done(jobs, n);

	if (i >= 0)
		return (unsigned int)i;
	/* a worker marks a job done and broadcasts under the lock */
	pthread_mutex_lock(&wp->lock);
	while ((i = first_done(jobs, n)) < 0)
		pthread_cond_wait(&wp->done, &wp->lock);
	pthread_mutex_unlock(&wp->lock);
	return (unsigned int)i;
}

int wp_window_init(struct wp_window *w, unsigned int nslots, size_t bufsz)
{
	struct wp_slot *s;

	memset(w, 0, sizeof(*w));
	w->slots = calloc(nslots, sizeof(*w->slots));
	if (!w->slots)
		return -ENOMEM;
	w->nslots = nslots;
	w->bufsz = bufsz;
	/* the first buffer is needed by every read, allocate it now */
	return wp_window_next(w, &s);
}

void wp_window_deinit(struct wp_window *w)
{
	unsigned int i;

	for (i = 0; i < w->nslots; i++)
		free(w->slots[i].buf);
	free(w->slots);
	memset(w, 0, sizeof(*w));
}

int wp_window_next(struct wp_window *w, struct wp_slot **slot)
{
	struct wp_slot *s;
	long pagesz;
	void *p;

	if (w->count == w->nslots)
		return -EBUSY;
	s = &w->slots[(w->head + w->count) % w->nslots];
	if (!s->buf) {
		pagesz = sysconf(_SC_PAGESIZE);
		if (pagesz <= 0)
			pagesz = 4096;
		if (posix_memalign(&p, (size_t)pagesz, w->bufsz))
			return -ENOMEM;
		s->buf = p;
	}
	s->off = 0;
	s->want = 0;
	s->have = 0;
	s->pending = false;
	s->here = false;
	*slot = s;
	return 0;
}

void wp_window_push(struct wp_window *w)
{
	w->count++;
}

void wp_window_pop(struct wp_window *w)
{
	w->head = (w->head + 1) % w->nslots;
	w->count--;
}
