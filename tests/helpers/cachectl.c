// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cachectl - put one file's pages into or out of the page cache, and say
 * what is there, so host tests get deterministic hits and misses without
 * root and without dropping the whole machine's cache (the tests' tool,
 * not nbcat's library: that is tools/lib/pagecache.c).
 *
 *   cachectl evict FILE [OFFSET LENGTH]     fdatasync + FADV_DONTNEED
 *   cachectl load FILE [OFFSET LENGTH]      read the range (no readahead)
 *   cachectl probe FILE                     0: RWF_NOWAIT works, 77: not
 *                                           supported, 1: other error
 *   cachectl resident FILE [OFFSET LENGTH]  "<resident> <total>" pages
 *   cachectl nowait FILE OFFSET LENGTH      one preadv2(RWF_NOWAIT): print
 *                                           the bytes read or "EAGAIN"
 *   cachectl holes FILE                     "OFFSET<tab>LENGTH" of each
 *                                           run of pages not resident,
 *                                           clipped to the file size
 *
 * OFFSET and LENGTH are decimal bytes; LENGTH 0 means "to the end of the
 * file", as for posix_fadvise(). Exit 0 on success, 1 on error, 77 for a
 * missing kernel feature (the Automake skip code): probe.h.
 *
 * Ranges are meant to be page aligned: the kernel evicts and maps whole
 * pages (and whole folios: evict() checks that the range really left).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "c.h"
#include "probe.h"

/* FADV_DONTNEED skips pages that are locked or under writeback: retry. */
#define CC_EVICT_TRIES	10

#define CC_BUFSZ	(1024 * 1024)

struct cc_range {
	const char *path;
	int fd;
	uint64_t size;		/* st_size */
	uint64_t off;		/* start of the range */
	uint64_t len;		/* length of the range, clipped to st_size */
	long pagesz;
};

static void usage(FILE *out)
{
	fputs("Usage:\n"
	      " cachectl evict FILE [OFFSET LENGTH]\n"
	      " cachectl load FILE [OFFSET LENGTH]\n"
	      " cachectl probe FILE\n"
	      " cachectl resident FILE [OFFSET LENGTH]\n"
	      " cachectl nowait FILE OFFSET LENGTH\n"
	      " cachectl holes FILE\n"
	      "\n"
	      "LENGTH 0 means to the end of the file. Exit status: 0 ok,\n"
	      "1 error, 77 RWF_NOWAIT not supported (probe).\n", out);
}

/* Open @path and fill @r; offsets come from argv when given. */
static int range_open(struct cc_range *r, const char *path,
		      const char *off, const char *len)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->path = path;
	r->pagesz = sysconf(_SC_PAGESIZE);
	if (off && (probe_parse_u64(off, &r->off) || probe_parse_u64(len, &r->len))) {
		fprintf(stderr, "cachectl: invalid range: '%s' '%s'\n",
			off, len);
		return -EINVAL;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		fprintf(stderr, "cachectl: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (fstat(r->fd, &st)) {
		fprintf(stderr, "cachectl: %s: %s\n", path, strerror(errno));
		close(r->fd);
		return -errno;
	}
	r->size = st.st_size;
	if (r->off > r->size)
		r->off = r->size;
	if (!r->len || r->len > r->size - r->off)
		r->len = r->size - r->off;
	return 0;
}

/*
 * Count resident pages of [off, off + len) with mincore() on a shared
 * read-only mapping. Mapping does not fault pages in; mincore() only looks.
 */
static int count_resident(struct cc_range *r, uint64_t *resident,
			  uint64_t *total)
{
	uint64_t start = r->off & ~((uint64_t)r->pagesz - 1);
	uint64_t maplen = r->off + r->len - start;
	uint64_t npages = (maplen + r->pagesz - 1) / r->pagesz;
	unsigned char *vec;
	void *map;
	uint64_t i;

	*resident = 0;
	*total = npages;
	if (!npages)
		return 0;
	map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, r->fd, start);
	if (map == MAP_FAILED) {
		fprintf(stderr, "cachectl: %s: mmap: %s\n", r->path,
			strerror(errno));
		return -errno;
	}
	vec = malloc(npages);
	if (!vec) {
		munmap(map, maplen);
		fputs("cachectl: out of memory\n", stderr);
		return -ENOMEM;
	}
	if (mincore(map, maplen, vec)) {
		int e = errno;

		fprintf(stderr, "cachectl: %s: mincore: %s\n", r->path,
			strerror(e));
		free(vec);
		munmap(map, maplen);
		return -e;
	}
	for (i = 0; i < npages; i++)
		*resident += vec[i] & 1;
	free(vec);
	munmap(map, maplen);
	return 0;
}

/*
 * Print the runs of non-resident pages, as nbcat --missing writes them
 * (without the path). mincore() is the truth for root and the owner.
 */
static int do_holes(struct cc_range *r)
{
	uint64_t npages = (r->size + r->pagesz - 1) / r->pagesz, i, start;
	unsigned char *vec;
	void *map;
	int rc = PROBE_EXIT_FAIL;

	if (!npages)
		return PROBE_EXIT_OK;
	map = mmap(NULL, r->size, PROT_READ, MAP_SHARED, r->fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "cachectl: %s: mmap: %s\n", r->path,
			strerror(errno));
		return PROBE_EXIT_FAIL;
	}
	vec = malloc(npages);
	if (!vec) {
		fputs("cachectl: out of memory\n", stderr);
		goto out;
	}
	if (mincore(map, r->size, vec)) {
		fprintf(stderr, "cachectl: %s: mincore: %s\n", r->path,
			strerror(errno));
		goto out;
	}
	for (i = 0; i < npages; i++) {
		if (vec[i] & 1)
			continue;
		start = i;
		while (i < npages && !(vec[i] & 1))
			i++;
		printf("%" PRIu64 "\t%" PRIu64 "\n", start * r->pagesz,
		       (i * r->pagesz < r->size ? i * r->pagesz : r->size) -
		       start * r->pagesz);
	}
	rc = PROBE_EXIT_OK;
out:
	free(vec);
	munmap(map, r->size);
	return rc;
}

static int do_evict(struct cc_range *r)
{
	uint64_t res, total;
	int i, rc;

	if (fdatasync(r->fd)) {
		fprintf(stderr, "cachectl: %s: fdatasync: %s\n", r->path,
			strerror(errno));
		return PROBE_EXIT_FAIL;
	}
	for (i = 0; i < CC_EVICT_TRIES; i++) {
		rc = posix_fadvise(r->fd, r->off, r->len, POSIX_FADV_DONTNEED);
		if (rc) {
			fprintf(stderr, "cachectl: %s: posix_fadvise: %s\n",
				r->path, strerror(rc));
			return PROBE_EXIT_FAIL;
		}
		if (count_resident(r, &res, &total))
			return PROBE_EXIT_FAIL;
		if (!res)
			return PROBE_EXIT_OK;
		usleep(10000);
	}
	/*
	 * DONTNEED drops only whole folios inside the range: a large folio
	 * that straddles a range boundary stays. Say so rather than let a
	 * test assert on a cache state we did not produce.
	 */
	fprintf(stderr, "cachectl: %s: %" PRIu64 " of %" PRIu64
		" pages still resident after eviction\n", r->path, res, total);
	return PROBE_EXIT_FAIL;
}

static int do_load(struct cc_range *r)
{
	uint64_t pos = r->off, end = r->off + r->len;
	char *buf;
	int rc;

	/*
	 * FADV_RANDOM turns readahead off for this open file, so only the
	 * pages of the range come in and "warm exactly this range" holds.
	 */
	rc = posix_fadvise(r->fd, 0, 0, POSIX_FADV_RANDOM);
	if (rc) {
		fprintf(stderr, "cachectl: %s: posix_fadvise: %s\n",
			r->path, strerror(rc));
		return PROBE_EXIT_FAIL;
	}
	buf = malloc(CC_BUFSZ);
	if (!buf) {
		fputs("cachectl: out of memory\n", stderr);
		return PROBE_EXIT_FAIL;
	}
	while (pos < end) {
		size_t want = end - pos < CC_BUFSZ ? end - pos : CC_BUFSZ;
		ssize_t n = pread(r->fd, buf, want, pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "cachectl: %s: read: %s\n", r->path,
				strerror(errno));
			free(buf);
			return PROBE_EXIT_FAIL;
		}
		if (n == 0)
			break;	/* shrank under us: nothing more to load */
		pos += n;
	}
	free(buf);
	return PROBE_EXIT_OK;
}

/*
 * Probe at EOF: the flag check (FMODE_NOWAIT, kernel 4.14+) comes before
 * any page-cache lookup, and a read at EOF returns 0 without touching the
 * cache, so probing never changes what a test set up.
 */
static int do_probe(struct cc_range *r)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	ssize_t n;

	n = preadv2(r->fd, &iov, 1, r->size, RWF_NOWAIT);
	if (n >= 0 || errno == EAGAIN)
		return PROBE_EXIT_OK;
	if (errno == EOPNOTSUPP || errno == ENOSYS) {
		printf("%s: RWF_NOWAIT not supported: %s\n", r->path,
		       strerror(errno));
		return PROBE_EXIT_SKIP;
	}
	fprintf(stderr, "cachectl: %s: preadv2: %s\n", r->path,
		strerror(errno));
	return PROBE_EXIT_FAIL;
}

static int do_resident(struct cc_range *r)
{
	uint64_t res, total;

	if (count_resident(r, &res, &total))
		return PROBE_EXIT_FAIL;
	printf("%" PRIu64 " %" PRIu64 "\n", res, total);
	return PROBE_EXIT_OK;
}

/* One non-blocking read, as nbcat's probe does it: what does it return? */
static int do_nowait(struct cc_range *r)
{
	struct iovec iov;
	ssize_t n;
	int rc = PROBE_EXIT_OK;

	iov.iov_len = r->len ? r->len : 1;
	iov.iov_base = malloc(iov.iov_len);
	if (!iov.iov_base) {
		fputs("cachectl: out of memory\n", stderr);
		return PROBE_EXIT_FAIL;
	}
	do {
		n = preadv2(r->fd, &iov, 1, r->off, RWF_NOWAIT);
	} while (n < 0 && errno == EINTR);
	if (n >= 0) {
		printf("%zd\n", n);
	} else if (errno == EAGAIN) {
		puts("EAGAIN");
	} else if (errno == EOPNOTSUPP || errno == ENOSYS) {
		printf("%s\n", strerror(errno));
		rc = PROBE_EXIT_SKIP;
	} else {
		fprintf(stderr, "cachectl: %s: preadv2: %s\n", r->path,
			strerror(errno));
		rc = PROBE_EXIT_FAIL;
	}
	free(iov.iov_base);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct cc_range *);
		int min_args, max_args;	/* after the command name */
	} cmds[] = {
		{ "evict", do_evict, 1, 3 },
		{ "load", do_load, 1, 3 },
		{ "probe", do_probe, 1, 1 },
		{ "resident", do_resident, 1, 3 },
		{ "nowait", do_nowait, 3, 3 },
		{ "holes", do_holes, 1, 1 },
	};
	struct cc_range r;
	size_t i;
	int nargs = argc - 2, rc;

	if (argc == 2 && (!strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return PROBE_EXIT_OK;
	}
	for (i = 0; argc >= 3 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* FILE alone, or FILE OFFSET LENGTH */
		if (nargs < cmds[i].min_args || nargs > cmds[i].max_args ||
		    nargs == 2)
			break;
		if (range_open(&r, argv[2], nargs == 3 ? argv[3] : NULL,
			       nargs == 3 ? argv[4] : NULL))
			return PROBE_EXIT_FAIL;
		rc = cmds[i].fn(&r);
		close(r.fd);
		return rc;
	}
	usage(stderr);
	return PROBE_EXIT_FAIL;
}
