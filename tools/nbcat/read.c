// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbcat reading: one input file chunk by chunk, by strategy (nowait probe
 * with workers for misses, blocking, pool, io_uring's reads from
 * uring.c, --cached-only), in file order.
 */
#include "nbcat.h"

/* Write @len bytes of file data and count them. */
static inline void emit(struct nbcat *nb, const void *buf, size_t len)
{
	out_write(buf, len);
	nb->cur.bytes += len;
	progress_tick(nb);
}

static void count_probe(struct nbcat *nb, const struct input *in,
			uint64_t off, size_t len, const struct pc_result *r)
{
	struct stats *st = &nb->cur;
	uint64_t size;

	switch (r->outcome) {
	case PC_HIT:
		st->hit_chunks++;
		st->hit_bytes += r->bytes;
		hist_add(&st->lat[LAT_NOWAIT], r->ns);
		trace(nb, in, off, r->bytes, "hit", r->ns);
		break;
	case PC_PARTIAL:
		st->partial_chunks++;
		st->partial_bytes += r->bytes;
		st->ra_on_miss |= nb->nowait_ra;
		hist_add(&st->lat[LAT_NOWAIT], r->ns);
		trace(nb, in, off, r->bytes, "partial", r->ns);
		break;
	case PC_MISS:
		st->miss_chunks++;
		/*
		 * A partial read stops at an uncached page, a miss at the
		 * first one: since 6.12 either starts readahead there.
		 */
		st->ra_on_miss |= nb->nowait_ra;
		hist_add(&st->lat[LAT_EAGAIN], r->ns);
		/* the chunk's bytes up to EOF, as miss_bytes counts them */
		size = pc_reader_get_size(&in->rd);
		if (off < size && size - off < len)
			len = size - off;
		trace(nb, in, off, len, "miss", r->ns);
		break;
	default:
		return;
	}
	st->chunks++;
}

/* Plain reads: --strategy=blocking, or a file without RWF_NOWAIT. */
static int copy_plain(struct nbcat *nb, struct input *in, char *buf,
		      enum mode mode)
{
	const char *outcome = mode == MODE_BLOCKING ? "blocking"
						    : "unsupported";
	struct stats *st = &nb->cur;
	struct pc_result r;
	int rc;

	st->mode = mode;
	for (;;) {
		rc = pc_read_full(in->fd, buf, nb->chunk, in->off, &r);
		if (r.bytes) {
			st->chunks++;
			if (mode == MODE_UNSUPPORTED) {
				st->unsup_chunks++;
				st->unsup_bytes += r.bytes;
			}
			hist_add(&st->lat[LAT_FALLBACK], r.ns);
			trace(nb, in, in->off, r.bytes, outcome, r.ns);
			emit(nb, buf, r.bytes);
			in->off += r.bytes;
		}
		if (rc || r.eof)
			return rc;
	}
}

/* Pipes, terminals, sockets: read() until it returns 0. */
static int copy_stream(struct nbcat *nb, struct input *in, char *buf)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	int rc;

	st->mode = MODE_STREAM;
	for (;;) {
		rc = pc_read_stream(in->fd, buf, nb->chunk, &r);
		if (rc)
			return rc;
		if (r.eof)
			return 0;
		st->chunks++;
		hist_add(&st->lat[LAT_FALLBACK], r.ns);
		trace(nb, in, in->off, r.bytes, "stream", r.ns);
		emit(nb, buf, r.bytes);
		in->off += r.bytes;
	}
}

/*
 * Write out a completed window slot. Returns 0, 1 when a blocking read
 * reached the end of the file before the slot was full (what follows
 * must be dropped), or -errno from the read.
 */
static int slot_flush(struct nbcat *nb, struct input *in,
		      struct wp_slot *s)
{
	struct stats *st = &nb->cur;
	struct wp_job *job = &s->job;
	size_t total = s->have;

	if (s->pending) {
		if (job->err) {
			/* write what was read before the error, as cat does */
			total += job->res.bytes;
			if (total)
				emit(nb, s->buf, total);
			return job->err;
		}
		total += job->res.bytes;
		hist_add(&st->lat[LAT_FALLBACK], job->res.ns);
		trace(nb, in, job->off, job->res.bytes,
		      s->here ? "inline" : "fallback", job->res.ns);
		if (nb->strategy == STRATEGY_POOL) {
			if (job->res.bytes)
				st->chunks++;
		} else {
			st->miss_bytes += job->res.bytes;
			missing_add(nb, in, job->off, job->res.bytes);
		}
	}
	if (total)
		emit(nb, s->buf, total);
	if (s->pending && job->res.eof && total < s->want) {
		in->eof = true;
		in->off = s->off + total;
		return 1;
	}
	return 0;
}

/* @s's read is under way: into the window, and the next chunk after it. */
static int slot_pending(struct nbcat *nb, struct input *in,
			struct wp_slot *s)
{
	s->pending = true;
	wp_window_push(&nb->win);
	in->off += s->want;
	return 0;
}

/*
 * Read a miss in the main thread when a worker would buy nothing: the
 * last --jobs chunks missed too (every worker has a miss in hand, and
 * another would only queue) and the page after this chunk is not cached
 * either (nothing cached waits behind it: a cold stretch). A hand-off
 * there costs switches, and reads out of order defeat the kernel's
 * readahead: on a cold file a blocking read is the fastest reader
 * (docs/benchmarks.md).
 */
static bool miss_inline(struct nbcat *nb, struct input *in,
			const struct wp_slot *s)
{
	uint64_t next = s->off + s->want;

	if (nb->strategy != STRATEGY_NOWAIT || nb->miss_run <= nb->jobs)
		return false;
	return next >= pc_reader_get_size(&in->rd) ||
	       !pc_page_cached(in->fd, next);
}

static int slot_submit(struct nbcat *nb, struct input *in,
		       struct wp_slot *s, bool here)
{
	struct wp_job *job = &s->job;
	uint64_t size;
	int rc;

	if (nb->strategy == STRATEGY_URING)
		return slot_pending(nb, in, s);	/* uring_read() started it */
	job->fd = in->fd;
	job->buf = s->buf + s->have;
	job->len = s->want - s->have;
	job->off = s->off + s->have;
	if (nb->prefetch) {
		size = pc_reader_get_size(&in->rd);
		if (job->off < size)
			posix_fadvise(in->fd, (off_t)job->off,
				      (off_t)(size - job->off < job->len ?
					      size - job->off : job->len),
				      POSIX_FADV_WILLNEED);
	}
	if (!here && !nb->no_workers) {
		rc = wp_submit(&nb->pool, job);
		if (rc == -EBUSY)
			return rc;
		if (rc) {
			/*
			 * No worker could be started (RLIMIT_NPROC, pids.max):
			 * read here, blocking, as cat would, rather than fail
			 * the file.
			 */
			nb_warn(nb, "cannot start a worker thread: %s; reading in the main thread",
				strerror(-rc));
			nb->no_workers = true;
		}
	}
	if (here || nb->no_workers) {
		wp_run_here(job);
		s->here = true;
	}
	return slot_pending(nb, in, s);
}

/* Block until @s's read, which is under way, is done. */
static void slot_wait(struct nbcat *nb, struct wp_slot *s)
{
	if (nb->strategy == STRATEGY_URING)
		uring_wait(nb, s);
	else
		wp_wait(&nb->pool, &s->job);
}

/*
 * Start reading the next chunk into slot @s: a RWF_NOWAIT probe (a hit
 * with nothing pending is written at once, the cat-like fast path), or,
 * for --strategy=pool, a job for a worker. --strategy=uring's read is
 * classified like the probe: done by its submit (hit), or under way
 * (miss).
 */
static int slot_start(struct nbcat *nb, struct input *in,
		      struct wp_slot *s)
{
	struct pc_result r;
	int rc;

	s->off = in->off;
	s->want = nb->chunk;
	if (nb->strategy == STRATEGY_POOL)
		return slot_submit(nb, in, s, false);

	if (nb->strategy == STRATEGY_URING)
		rc = uring_read(nb, in, s, &r);
	else
		rc = pc_read_nowait(&in->rd, s->buf, nb->chunk, in->off, &r);
	if (rc)
		return rc;
	count_probe(nb, in, in->off, nb->chunk, &r);
	switch (r.outcome) {
	case PC_EOF:
		in->eof = true;
		return 0;
	case PC_UNSUPPORTED:
		in->unsupported = true;
		return 0;
	case PC_HIT:
		nb->miss_run = 0;
		if (wp_window_is_empty(&nb->win)) {
			emit(nb, s->buf, r.bytes);
		} else {
			s->want = s->have = r.bytes;
			wp_window_push(&nb->win);
		}
		in->off += r.bytes;
		return 0;
	case PC_PARTIAL:
	case PC_MISS:
		break;
	}
	s->have = r.bytes;
	nb->miss_run++;
	return slot_submit(nb, in, s, miss_inline(nb, in, s));
}

/* A file without non-blocking reads: said once, then plain reads. */
static int copy_unsupported(struct nbcat *nb, struct input *in, char *buf)
{
	if (!nb->quiet && in->unsup_err)
		nb_warn(nb, "%s: io_uring cannot read it: %s; using plain reads",
			in->path, strerror(in->unsup_err));
	else if (!nb->quiet)
		nb_warn(nb, "%s: non-blocking reads not supported, using plain reads",
			in->path);
	return copy_plain(nb, in, buf, MODE_UNSUPPORTED);
}

/* --strategy=nowait, pool and uring, through the reorder window. */
static int copy_window(struct nbcat *nb, struct input *in)
{
	static const enum mode modes[] = {
		[STRATEGY_NOWAIT] = MODE_NOWAIT,
		[STRATEGY_POOL]	  = MODE_POOL,
		[STRATEGY_URING]  = MODE_URING,
	};
	struct wp_window *w = &nb->win;
	struct wp_slot *s;
	int rc = 0, err;

	nb->cur.mode = modes[nb->strategy];
	nb->miss_run = 0;
	for (;;) {
		/* write out, in file order, whatever is complete */
		while ((s = wp_window_head(w)) &&
		       (!s->pending || wp_is_done(&s->job))) {
			rc = slot_flush(nb, in, s);
			wp_window_pop(w);
			if (rc)
				goto drop;
		}
		/* read ahead, but not past the known end of the file */
		if (!in->eof && !in->unsupported && !wp_window_is_full(w) &&
		    (wp_window_is_empty(w) ||
		     in->off < pc_reader_get_size(&in->rd))) {
			rc = wp_window_next(w, &s);
			if (!rc)
				rc = slot_start(nb, in, s);
			if (rc)
				goto drain;
			continue;
		}
		s = wp_window_head(w);
		if (!s)
			break;
		slot_wait(nb, s);
	}

	if (in->unsupported)
		return copy_unsupported(nb, in, wp_window_head_buf(w));
	return 0;
drain:
	/*
	 * Reading at in->off failed: the chunks in flight all lie before
	 * it, so write them, as cat writes what it read before an error.
	 * An error in one of them comes first and wins.
	 */
	while ((s = wp_window_head(w))) {
		if (s->pending)
			slot_wait(nb, s);
		err = slot_flush(nb, in, s);
		wp_window_pop(w);
		if (err) {
			rc = err < 0 ? err : rc;
			goto drop;
		}
	}
	return rc;
drop:
	/* after an error or an early end of file, the rest is not written */
	while ((s = wp_window_head(w))) {
		if (s->pending)
			slot_wait(nb, s);
		wp_window_pop(w);
	}
	return rc < 0 ? rc : 0;
}

/* --cached-only=stop: the rest of the file, from @from, is missing. */
static int missing_rest(struct nbcat *nb, struct input *in, uint64_t from)
{
	uint64_t size;
	int rc;

	rc = pc_reader_refresh(&in->rd);
	if (rc)
		return rc;
	size = pc_reader_get_size(&in->rd);
	if (from < size) {
		nb->cur.missing += size - from;
		missing_add(nb, in, from, size - from);
	}
	return 0;
}

/*
 * --cached-only=skip: probe [from, end) page by page, write the cached
 * pages, record the others. Returns 0 or -errno; *cached is increased by
 * the bytes written.
 */
static int skip_missing(struct nbcat *nb, struct input *in, char *buf,
			uint64_t from, uint64_t end, uint64_t *cached)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	uint64_t p = from, next, size;
	size_t step;
	int rc;

	while (p < end) {
		next = (p / nb->pagesize + 1) * nb->pagesize;
		step = (size_t)((next < end ? next : end) - p);
		rc = pc_read_nowait(&in->rd, buf, step, p, &r);
		if (rc)
			return rc;
		switch (r.outcome) {
		case PC_HIT:
		case PC_PARTIAL:
			hist_add(&st->lat[LAT_NOWAIT], r.ns);
			trace(nb, in, p, r.bytes,
			      r.outcome == PC_HIT ? "hit" : "partial", r.ns);
			st->partial_bytes += r.bytes;
			*cached += r.bytes;
			emit(nb, buf, r.bytes);
			p += r.bytes;
			break;
		case PC_EOF:
			in->off = p;
			return 0;	/* the file shrank */
		case PC_MISS:
		case PC_UNSUPPORTED:
			/* not past the end of a file that shrank meanwhile */
			size = pc_reader_get_size(&in->rd);
			if (p >= size) {
				in->off = p;
				return 0;
			}
			if (step > size - p)
				step = (size_t)(size - p);
			hist_add(&st->lat[LAT_EAGAIN], r.ns);
			trace(nb, in, p, step, "miss", r.ns);
			st->miss_bytes += step;
			st->missing += step;
			missing_add(nb, in, p, step);
			p += step;
			break;
		}
	}
	in->off = p;
	return 0;
}

/*
 * --cached-only on a file RWF_NOWAIT cannot read (procfs, sysfs, tmpfs),
 * or whose residency nbcat cannot learn without loading it: nothing more
 * is written and the rest is missing by an unknown amount (the size says
 * nothing for procfs and sysfs).
 */
static void cached_unknown(struct nbcat *nb, struct input *in,
			   enum mode mode)
{
	nb->cur.mode = mode;
	nb->cur.missing_unknown = true;
	if (!nb->quiet) {
		if (mode == MODE_UNSUPPORTED)
			nb_warn(nb, "%s: non-blocking reads not supported, nothing read (--cached-only)",
				in->path);
		else
			nb_warn(nb, "%s: cannot tell what is cached without loading it (no cachestat or mincore answer for this user, and this kernel reads ahead on RWF_NOWAIT misses); nothing read",
				in->path);
	}
	missing_flush(nb, in);
	missing_line(nb, in, in->off, NULL);
}

/*
 * --cached-only=stop by probing: the chunk at in->off holds data up to
 * @at, its first missing byte; the rest of the file is missing.
 */
static int probe_stop(struct nbcat *nb, struct input *in,
		      const struct pc_result *r, uint64_t at)
{
	uint64_t end, size;
	int rc;

	count_probe(nb, in, in->off, nb->chunk, r);
	rc = missing_rest(nb, in, at);
	size = pc_reader_get_size(&in->rd);
	end = in->off + nb->chunk;
	if (end > size)
		end = size;
	if (end > at)
		nb->cur.miss_bytes += end - at;
	in->off = at;
	return rc;
}

/*
 * --cached-only=skip by probing: the chunk at in->off holds data up to
 * @at; sort the rest of it out page by page. Returns 1 to go on with the
 * next chunk, 0 when the file ends (it shrank), or -errno.
 */
static int probe_skip(struct nbcat *nb, struct input *in, char *buf,
		      const struct pc_result *r, uint64_t at)
{
	struct stats *st = &nb->cur;
	uint64_t end, size, cached;
	int rc;

	hist_add(&st->lat[r->bytes ? LAT_NOWAIT : LAT_EAGAIN], r->ns);
	trace(nb, in, in->off, r->bytes ? r->bytes : nb->chunk,
	      r->bytes ? "partial" : "miss", r->ns);
	st->partial_bytes += r->bytes;
	cached = r->bytes;
	size = pc_reader_get_size(&in->rd);
	if (at >= size) {
		/*
		 * Nothing to skip below the size we know: it is stale (the
		 * file grew or shrank). Without a new one the caller would
		 * probe @at for ever.
		 */
		rc = pc_reader_refresh(&in->rd);
		if (rc)
			return rc;
		size = pc_reader_get_size(&in->rd);
		if (at >= size) {
			in->off = at;
			return 0;	/* the file ends here now */
		}
	}
	end = in->off + nb->chunk;
	if (end > size)
		end = size;
	rc = skip_missing(nb, in, buf, at, end, &cached);
	if (rc)
		return rc;
	st->chunks++;
	if (cached)
		st->partial_chunks++;
	else
		st->miss_chunks++;
	return in->off < end ? 0 : 1;	/* short: the file shrank */
}

/* --cached-only by probing: a miss starts no I/O on this kernel. */
static int copy_cached_probe(struct nbcat *nb, struct input *in, char *buf)
{
	struct pc_result r;
	int rc;

	nb->cur.mode = MODE_NOWAIT;
	for (;;) {
		rc = pc_read_nowait(&in->rd, buf, nb->chunk, in->off, &r);
		if (rc)
			return rc;
		switch (r.outcome) {
		case PC_EOF:
			return 0;
		case PC_UNSUPPORTED:
			/* plain reads could block: nothing is known cached */
			cached_unknown(nb, in, MODE_UNSUPPORTED);
			return 0;
		case PC_HIT:
			count_probe(nb, in, in->off, nb->chunk, &r);
			emit(nb, buf, r.bytes);
			in->off += r.bytes;
			continue;
		case PC_PARTIAL:
			emit(nb, buf, r.bytes);
			break;
		case PC_MISS:
			break;
		}
		/* in->off + r.bytes: the first missing byte of this chunk */
		if (nb->cached_only == CACHED_ONLY_STOP)
			return probe_stop(nb, in, &r, in->off + r.bytes);
		rc = probe_skip(nb, in, buf, &r, in->off + r.bytes);
		if (rc <= 0)
			return rc;
	}
}

/* The end of the run of pages with @vec's value at @p, within @end. */
static uint64_t run_end(const struct nbcat *nb, const unsigned char *vec,
			uint64_t first, uint64_t p, uint64_t end)
{
	uint64_t psz = nb->pagesize;
	unsigned char v = vec[p / psz - first];
	uint64_t q = (p / psz + 1) * psz;

	while (q < end && vec[q / psz - first] == v)
		q += psz;
	return q < end ? q : end;
}

/*
 * --cached-only=skip, at a chunk none of whose pages is cached: skip, in
 * one step, the whole chunks of the uncached stretch that starts there
 * (a 1 TiB sparse file is one stretch, not four million chunks to ask
 * about), and count them as missed chunks. Returns 1 to go on (nothing
 * skipped if a page was cached or the file shrank meanwhile: the caller
 * asks about the chunk again), 0 when the file ends at in->off, or
 * -errno.
 */
static int skip_uncached(struct nbcat *nb, struct input *in)
{
	struct stats *st = &nb->cur;
	uint64_t size, run, n;
	int rc;

	rc = pc_uncached_run(&in->rd, in->off,
			     pc_reader_get_size(&in->rd) - in->off, &run);
	if (rc)
		return rc;
	/* stat after the query: the size is as recent as the answer */
	rc = pc_reader_refresh(&in->rd);
	if (rc)
		return rc;
	size = pc_reader_get_size(&in->rd);
	if (in->off >= size)
		return 0;
	if (run > size - in->off)
		run = size - in->off;
	if (run < nb->chunk)
		return 1;	/* cached meanwhile, or shrank: look closer */
	n = run / nb->chunk;
	run = n * nb->chunk;
	trace(nb, in, in->off, run, "miss", 0);
	missing_add(nb, in, in->off, run);
	st->missing += run;
	st->miss_bytes += run;
	st->chunks += n;
	st->miss_chunks += n;
	in->off += run;
	return 1;
}

/*
 * A chunk of --cached-only where the residency query works: [in->off,
 * end), and what reading its cached pages found.
 */
struct resident_chunk {
	uint64_t end;		/* within the file's size */
	uint64_t first;		/* the page vec[0] stands for */
	uint64_t at;		/* its first missing byte (end: none) */
	uint64_t cached;	/* bytes written */
};

/*
 * Read the runs of cached pages of @ch with RWF_NOWAIT and write them;
 * note the runs that are not (or no longer) cached as missing. Stops at
 * the first missing byte for --cached-only=stop, and where the file
 * turns out to have shrunk (ch->end moves there). Returns 0, 1 when
 * RWF_NOWAIT turned out unsupported (the rest is unknown: said), or
 * -errno.
 */
static int read_resident(struct nbcat *nb, struct input *in, char *buf,
			 const unsigned char *vec, struct resident_chunk *ch)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	uint64_t p, q, got;
	int rc;

	ch->cached = 0;
	ch->at = ch->end;
	for (p = in->off; p < ch->end; p = q) {
		q = run_end(nb, vec, ch->first, p, ch->end);
		got = 0;
		if (vec[p / nb->pagesize - ch->first]) {
			rc = pc_read_resident(&in->rd, buf, q - p, p, &r);
			if (rc)
				return rc;
			if (r.outcome == PC_UNSUPPORTED) {
				in->off = p;
				cached_unknown(nb, in, MODE_UNSUPPORTED);
				return 1;
			}
			got = r.bytes;
			hist_add(&st->lat[got ? LAT_NOWAIT : LAT_EAGAIN],
				 r.ns);
			trace(nb, in, p, got ? got : q - p,
			      got == q - p ? "hit" : got ? "partial" : "miss",
			      r.ns);
			emit(nb, buf, got);
			ch->cached += got;
			if (r.outcome == PC_EOF ||
			    (r.outcome == PC_HIT && got < q - p)) {
				ch->end = p + got;	/* the file shrank */
				break;
			}
		} else {
			trace(nb, in, p, q - p, "miss", 0);
		}
		if (got < q - p) {
			if (ch->at == ch->end)
				ch->at = p + got;
			if (nb->cached_only == CACHED_ONLY_STOP)
				break;
			missing_add(nb, in, p + got, q - p - got);
			st->missing += q - p - got;
		}
	}
	return 0;
}

/*
 * Count the chunk @ch that was read, and move past it; @size is the
 * file's size it was cut to. Returns 1 to go on, 0 when the file ends
 * there (it shrank, or --cached-only=stop met a missing byte: the rest
 * of the file is missing), or -errno.
 */
static int resident_done(struct nbcat *nb, struct input *in,
			 const struct resident_chunk *ch, uint64_t size)
{
	struct stats *st = &nb->cur;

	st->chunks++;
	if (ch->cached == ch->end - in->off) {
		st->hit_chunks++;
		st->hit_bytes += ch->cached;
	} else if (ch->cached) {
		st->partial_chunks++;
		st->partial_bytes += ch->cached;
	} else {
		st->miss_chunks++;
	}
	if (nb->cached_only == CACHED_ONLY_STOP && ch->at < ch->end) {
		st->miss_bytes += ch->end - ch->at;
		in->off = ch->at;
		return missing_rest(nb, in, ch->at);
	}
	st->miss_bytes += ch->end - in->off - ch->cached;
	if (ch->end < size && ch->end < in->off + nb->chunk) {
		in->off = ch->end;
		return 0;	/* the file shrank */
	}
	in->off = ch->end;
	return 1;
}

/*
 * --cached-only where the residency query works: ask which pages of the
 * chunk are cached (cachestat or mincore, which add none), then read only
 * those, with RWF_NOWAIT. A page evicted between the query and the read
 * costs one EAGAIN or a short read, and is missing. Returns 0 or -errno.
 */
static int copy_cached_resident(struct nbcat *nb, struct input *in,
				char *buf, unsigned char *vec)
{
	struct resident_chunk ch;
	uint64_t size, npages;
	bool grown_checked = false;
	int rc;

	nb->cur.mode = MODE_NOWAIT;
	for (;;) {
		size = pc_reader_get_size(&in->rd);
		if (in->off >= size) {
			/* the file may have grown while we read it */
			if (grown_checked)
				return 0;
			rc = pc_reader_refresh(&in->rd);
			if (rc)
				return rc;
			grown_checked = true;
			continue;
		}
		grown_checked = false;
		ch.end = in->off + nb->chunk < size ? in->off + nb->chunk :
						      size;
		rc = pc_resident(&in->rd, in->off, ch.end - in->off, vec);
		if (rc)
			return rc;
		ch.first = in->off / nb->pagesize;
		npages = (ch.end - 1) / nb->pagesize - ch.first + 1;
		if (nb->cached_only == CACHED_ONLY_SKIP &&
		    ch.end - in->off == nb->chunk && !memchr(vec, 1, npages)) {
			/* a whole chunk uncached: how many more are? */
			rc = skip_uncached(nb, in);
			if (rc <= 0)
				return rc;
			continue;
		}
		if (memchr(vec, 0, npages)) {
			/*
			 * Pages past the end of a file that shrank are not
			 * resident either: they are not missing, they are
			 * gone. Stat after the query, so the size is at
			 * least as recent as the answer.
			 */
			rc = pc_reader_refresh(&in->rd);
			if (rc)
				return rc;
			size = pc_reader_get_size(&in->rd);
			if (in->off >= size)
				return 0;	/* the file shrank */
			if (ch.end > size)
				ch.end = size;
		}
		rc = read_resident(nb, in, buf, vec, &ch);
		if (rc)
			return rc < 0 ? rc : 0;
		rc = resident_done(nb, in, &ch, size);
		if (rc <= 0)
			return rc;
	}
}

/* --cached-only: never block, and never add a page to the cache. */
static int copy_cached(struct nbcat *nb, struct input *in, char *buf)
{
	unsigned char *vec;
	int rc;

	rc = pc_residency_init(&in->rd);
	if (rc)
		return rc;
	nb->cur.res = pc_reader_get_residency(&in->rd);
	switch (nb->cur.res) {
	case PC_RES_CACHESTAT:
	case PC_RES_MINCORE:
		vec = malloc(nb->chunk / nb->pagesize + 2);
		if (!vec)
			return -ENOMEM;
		rc = copy_cached_resident(nb, in, buf, vec);
		free(vec);
		return rc;
	case PC_RES_PROBE:
		return copy_cached_probe(nb, in, buf);
	default:
		cached_unknown(nb, in, pc_reader_is_unsupported(&in->rd) ?
			       MODE_UNSUPPORTED : MODE_UNKNOWN);
		return 0;
	}
}

/* one file */

static int read_input(struct nbcat *nb, struct input *in)
{
	struct wp_slot *s;
	char *buf;
	int rc;

	if (!pc_reader_is_seekable(&in->rd)) {
		rc = wp_window_next(&nb->win, &s);
		return rc ? rc : copy_stream(nb, in, s->buf);
	}
	if (!nb->cached_only)
		posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (nb->strategy != STRATEGY_BLOCKING && !nb->cached_only)
		return copy_window(nb, in);

	rc = wp_window_next(&nb->win, &s);
	if (rc)
		return rc;
	buf = s->buf;
	if (nb->strategy == STRATEGY_BLOCKING)
		return copy_plain(nb, in, buf, MODE_BLOCKING);
	return copy_cached(nb, in, buf);
}

void cat_file(struct nbcat *nb, const char *path)
{
	struct input in = { .path = path, .fd = -1 };
	struct stats *st = &nb->cur;
	bool is_stdin = !strcmp(path, "-");
	uint64_t start = pc_now_ns();
	off_t pos;
	int rc;

	stats_reset(st, path);
	if (is_stdin) {
		in.fd = STDIN_FILENO;
	} else {
		in.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in.fd < 0) {
			nb_warn(nb, "%s: %s", cli_name(path), strerror(errno));
			goto failed;
		}
	}
	rc = pc_reader_init(&in.rd, in.fd);
	if (rc) {
		nb_warn(nb, "%s: %s", path, strerror(-rc));
		goto failed;
	}
	st->size = pc_reader_get_size(&in.rd);

	/* cat's check: copying a file onto itself would never end */
	if (nb->out_is_reg && st->size &&
	    pc_reader_is_file(&in.rd, nb->out_dev, nb->out_ino)) {
		nb_warn(nb, "%s: input file is output file", path);
		goto failed;
	}
	if (is_stdin && pc_reader_is_seekable(&in.rd)) {
		/* continue where the shell (or a previous "-") left off */
		pos = lseek(in.fd, 0, SEEK_CUR);
		in.off = pos > 0 ? (uint64_t)pos : 0;
	}

	rc = read_input(nb, &in);
	missing_flush(nb, &in);
	if (is_stdin && pc_reader_is_seekable(&in.rd))
		lseek(in.fd, (off_t)in.off, SEEK_SET);
	if (rc) {
		nb_warn(nb, "%s: %s", path, strerror(-rc));
		goto failed;
	}
	goto done;

failed:
	st->mode = MODE_ERROR;
	nb->failed = true;
done:
	pc_reader_deinit(&in.rd);
	if (!is_stdin && in.fd >= 0)
		close(in.fd);
	st->ns = pc_now_ns() - start;
	report_add(nb, st, false);
	stats_merge(&nb->total, st);
	stats_reset(st, NULL);
	nb->nfiles++;
}
