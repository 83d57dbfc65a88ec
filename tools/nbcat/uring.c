// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbcat --strategy=uring: the chunks of the reorder window read through
 * io_uring, as buffered IORING_OP_READs, all in flight at once. Each read
 * is submitted on its own, so that one the submit completed (the page
 * cache held it) can be told from one that waited for the disk; read.c's
 * window, counting and output do the rest. This file owns the ring; it
 * lives with nbcat, not in tools/lib, because only nbcat links liburing
 * and what it classifies is nbcat's report.
 */
#include "nbcat.h"

#include <liburing.h>

/* Linux 6.0 and 6.1; liburing's headers before 2.3 lack them */
#ifndef IORING_SETUP_SINGLE_ISSUER
# define IORING_SETUP_SINGLE_ISSUER	(1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
# define IORING_SETUP_DEFER_TASKRUN	(1U << 13)
#endif

struct nb_uring {
	struct io_uring ring;
	/*
	 * IORING_SETUP_DEFER_TASKRUN (6.1): a read that waited completes
	 * only when we ask for completions (io_uring_wait_cqe()), never
	 * while we submit, so a CQE found right after a submit came from
	 * the submit itself. Without it (before 6.1) a wait that ended
	 * before the submit returned looks the same.
	 */
	bool deferred;
};

/* Why io_uring_queue_init() may fail for a user: the hint after it. */
static const struct {
	int err;
	const char *hint;
} setup_hints[] = {
	{ ENOSYS, "kernel without io_uring?" },
	/* io_uring_disabled: 6.6; =1 lets only io_uring_group in */
	{ EPERM,  "kernel.io_uring_disabled, or a seccomp filter?" },
	/* before 5.12 the rings count against RLIMIT_MEMLOCK */
	{ ENOMEM, "RLIMIT_MEMLOCK?" },
};

static void __attribute__((__noreturn__)) setup_failed(int err)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(setup_hints); i++)
		if (setup_hints[i].err == err)
			errx(NBCAT_EXIT_FAILURE,
			     "--strategy=uring: io_uring unavailable: %s (%s)",
			     strerror(err), setup_hints[i].hint);
	errx(NBCAT_EXIT_FAILURE, "--strategy=uring: cannot set up io_uring: %s",
	     strerror(err));
}

void uring_setup(struct nbcat *nb)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SINGLE_ISSUER |
			 IORING_SETUP_DEFER_TASKRUN,
	};
	struct nb_uring *u;
	int rc;

	u = calloc(1, sizeof(*u));
	if (!u)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	/* one entry a window slot: at most that many reads in flight */
	rc = io_uring_queue_init_params(nb->window, &u->ring, &p);
	u->deferred = !rc;
	if (rc == -EINVAL) {
		/* before 6.1: no DEFER_TASKRUN */
		memset(&p, 0, sizeof(p));
		rc = io_uring_queue_init_params(nb->window, &u->ring, &p);
	}
	if (rc)
		setup_failed(-rc);
	nb->uring = u;
}

void uring_teardown(struct nbcat *nb)
{
	if (!nb->uring)
		return;
	io_uring_queue_exit(&nb->uring->ring);
	free(nb->uring);
	nb->uring = NULL;
}

/*
 * Queue the read of what @s's job still lacks, and submit it alone.
 * Returns 0 or -errno (then nothing is under way for @s).
 */
static int submit_read(struct nb_uring *u, struct wp_slot *s)
{
	struct wp_job *job = &s->job;
	struct io_uring_sqe *sqe;
	int rc;

	/* never NULL: one entry a slot, each submitted at once */
	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, job->fd, (char *)job->buf + job->res.bytes,
			   (unsigned int)(job->len - job->res.bytes),
			   job->off + job->res.bytes);
	io_uring_sqe_set_data(sqe, s);
	do {
		rc = io_uring_submit(&u->ring);
	} while (rc == -EINTR);
	if (rc > 0)
		return 0;
	/*
	 * Not taken: the next submit would send it, for a slot that may
	 * hold another chunk by then. A NOP for no slot is harmless.
	 */
	io_uring_prep_nop(sqe);
	io_uring_sqe_set_data(sqe, NULL);
	return rc < 0 ? rc : -EAGAIN;
}

/*
 * A CQE of @s's read. A read that waited and came back short is read on,
 * as pc_read_full() would, up to the chunk or the end of the file; one
 * that did not wait is a hit up to where it stopped, as a RWF_NOWAIT
 * read is.
 */
static void complete_read(struct nb_uring *u, struct wp_slot *s, int res)
{
	struct wp_job *job = &s->job;

	if (res < 0) {
		job->err = res;
	} else if (res == 0) {
		job->res.eof = true;
	} else {
		job->res.bytes += (size_t)res;
		if (s->pending && job->res.bytes < job->len) {
			job->err = submit_read(u, s);
			if (!job->err)
				return;
		}
	}
	/* a waited read's res.ns held its start, now its duration */
	if (s->pending)
		job->res.ns = pc_now_ns() - job->res.ns;
	job->state = WP_DONE;
}

/* The oldest CQE in the ring's memory, or NULL; never enters the kernel. */
static struct io_uring_cqe *ready_cqe(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	unsigned int head;

	io_uring_for_each_cqe(ring, head, cqe)
		return cqe;
	return NULL;
}

/*
 * Take every CQE already posted, without entering the kernel (that
 * would run the deferred completions, which must wait for
 * io_uring_wait_cqe()).
 */
static void reap_ready(struct nb_uring *u)
{
	struct io_uring_cqe *cqe;
	struct wp_slot *s;
	int res;

	while ((cqe = ready_cqe(&u->ring))) {
		s = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		if (s)	/* NULL: submit_read()'s NOP */
			complete_read(u, s, res);
	}
}

void uring_wait(struct nbcat *nb, struct wp_slot *s)
{
	struct io_uring_cqe *cqe;
	int rc;

	while (!wp_is_done(&s->job)) {
		rc = io_uring_wait_cqe(&nb->uring->ring, &cqe);
		if (rc && rc != -EINTR)
			errx(NBCAT_EXIT_FAILURE, "io_uring: %s", strerror(-rc));
		reap_ready(nb->uring);
	}
}

/*
 * Once a file: can it be read without blocking at all? Where RWF_NOWAIT
 * is refused (procfs, and tmpfs in 6.1: no FMODE_NOWAIT), io_uring
 * would hand every read to a worker thread of its own, and each chunk
 * would look waited for: such a file gets plain reads, as in the
 * default strategy. The probe reads at the end of the file: nothing.
 */
static int check_file(struct input *in, char *buf, struct pc_result *r)
{
	int rc;

	in->checked = true;
	rc = pc_read_nowait(&in->rd, buf, 1, pc_reader_get_size(&in->rd), r);
	if (rc || r->outcome == PC_UNSUPPORTED)
		return rc;
	memset(r, 0, sizeof(*r));
	return 0;
}

/* A read that completed during its submit: the page cache held it. */
static int read_inline(struct input *in, const struct wp_job *job,
		       struct pc_result *r)
{
	if (job->err == -EOPNOTSUPP || job->err == -EINVAL) {
		/* io_uring refused the file: plain reads from here */
		in->unsupported = true;
		in->unsup_err = -job->err;
		r->outcome = PC_UNSUPPORTED;
		return 0;
	}
	if (job->err)
		return job->err;
	r->bytes = job->res.bytes;
	r->outcome = r->bytes ? PC_HIT : PC_EOF;
	return 0;
}

int uring_read(struct nbcat *nb, struct input *in, struct wp_slot *s,
	       struct pc_result *r)
{
	struct wp_job *job = &s->job;
	uint64_t start;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!in->checked) {
		rc = check_file(in, s->buf, r);
		if (rc || r->outcome == PC_UNSUPPORTED)
			return rc;
	}
	/*
	 * Near the size known so far, stat again first: the window reads
	 * on into a file that grew, and stops at one that shrank.
	 */
	if (in->off + nb->chunk >= pc_reader_get_size(&in->rd)) {
		rc = pc_reader_refresh(&in->rd);
		if (rc)
			return rc;
	}
	memset(job, 0, sizeof(*job));
	job->fd = in->fd;
	job->buf = s->buf;
	job->len = nb->chunk;
	job->off = in->off;
	job->state = WP_RUNNING;

	start = pc_now_ns();
	rc = submit_read(nb->uring, s);
	r->ns = pc_now_ns() - start;
	if (rc)
		return rc;
	reap_ready(nb->uring);
	if (wp_is_done(job))
		return read_inline(in, job, r);
	job->res.ns = start;	/* complete_read() makes it a duration */
	r->outcome = PC_MISS;
	return 0;
}
