// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page-cache reader. preadv2(RWF_NOWAIT) copies what the page cache holds
 * and fails with EAGAIN instead of waiting for the disk, which turns a
 * read into a cheap "is this cached?" probe that also returns the data.
 * This file classifies each such read; it never prints and never decides
 * what to do about a miss (that is the caller's policy).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/fs.h>

#include "c.h"
#include "pagecache.h"

/* cachestat(2), Linux 6.5; glibc and kernel headers may lack it. */
#ifndef __NR_cachestat
# if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || \
     defined(__i386__) || defined(__arm__) || defined(__powerpc__) || \
     defined(__s390__)
#  define __NR_cachestat 451	/* the unified syscall number */
# endif
#endif

/* Our own copies: <linux/mman.h> has them only from 6.5 on. */
struct pc_cachestat_range {
	uint64_t off;
	uint64_t len;		/* 0: to the end of the file */
};

struct pc_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

/* faccessat2(2), Linux 5.8, for AT_EMPTY_PATH on a descriptor. */
#ifndef __NR_faccessat2
# define __NR_faccessat2 439
#endif
#ifndef AT_EMPTY_PATH
# define AT_EMPTY_PATH 0x1000
#endif

/* Pages per cachestat() bisection step below which we ask page by page. */
#define PC_CACHESTAT_LEAF	1

uint64_t pc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int pc_stat(struct pc_reader *rd)
{
	struct stat st;
	uint64_t bytes;

	if (fstat(rd->fd, &st) < 0)
		return -errno;
	rd->type = st.st_mode & S_IFMT;
	rd->dev = st.st_dev;
	rd->ino = st.st_ino;
	rd->uid = st.st_uid;
	switch (rd->type) {
	case S_IFDIR:
		return -EISDIR;
	case S_IFREG:
		rd->flags |= PC_FL_SEEKABLE;
		rd->size = (uint64_t)st.st_size;
		break;
	case S_IFBLK:
		rd->flags |= PC_FL_SEEKABLE | PC_FL_BLKDEV;
		if (ioctl(rd->fd, BLKGETSIZE64, &bytes) < 0)
			return -errno;
		rd->size = bytes;
		break;
	default:
		/* pipes, terminals, sockets, character devices */
		rd->flags &= ~PC_FL_SEEKABLE;
		rd->size = 0;
		break;
	}
	return 0;
}

int pc_reader_init(struct pc_reader *rd, int fd)
{
	memset(rd, 0, sizeof(*rd));
	rd->fd = fd;
	return pc_stat(rd);
}

void pc_reader_deinit(struct pc_reader *rd)
{
	rd->fd = -1;
	rd->flags = 0;
	rd->size = 0;
}

int pc_reader_refresh(struct pc_reader *rd)
{
	return pc_stat(rd);
}

/* Errors that mean "this file (or kernel) cannot do RWF_NOWAIT". */
static bool pc_errno_unsupported(int e, bool first)
{
	switch (e) {
	case EOPNOTSUPP:	/* no FMODE_NOWAIT: tmpfs, overlayfs, procfs */
	case ENOSYS:		/* no preadv2 at all (before 4.6) */
		return true;
	case EINVAL:		/* unknown RWF flag on an old kernel */
		return first;
	default:
		return false;
	}
}

int pc_read_nowait(struct pc_reader *rd, void *buf, size_t len,
		   uint64_t off, struct pc_result *res)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	bool first = !(rd->flags & PC_FL_PROBED);
	uint64_t start;
	ssize_t n;
	int rc;

	res->bytes = 0;
	res->eof = false;
	rd->flags |= PC_FL_PROBED;

	start = pc_now_ns();
	do {
		n = preadv2(rd->fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	} while (n < 0 && errno == EINTR);
	res->ns = pc_now_ns() - start;

	if (n < 0) {
		if (errno == EAGAIN) {
			/*
			 * filemap_read() returns 0 at or past i_size before it
			 * looks for a page (6.1), so EAGAIN here means the file
			 * grew past the size we knew: learn the new one, or the
			 * caller would never get past the old end.
			 */
			if (off >= rd->size) {
				rc = pc_stat(rd);
				if (rc)
					return rc;
			}
			res->outcome = PC_MISS;
			return 0;
		}
		if (pc_errno_unsupported(errno, first)) {
			rd->flags |= PC_FL_UNSUPPORTED;
			res->outcome = PC_UNSUPPORTED;
			return 0;
		}
		return -errno;
	}

	res->bytes = (size_t)n;

	/*
	 * A full read that reaches the size we knew: the file grew, so
	 * learn by how much (the caller stops at that size). A short or
	 * empty read: end of file, or a page that is not cached. IOCB_NOIO
	 * reads may also return 0 with nothing copied where EAGAIN was
	 * meant (seen on 5.9 and 5.10, where RWF_NOWAIT started to imply
	 * IOCB_NOIO). Never take a short read for EOF, or for a miss, on
	 * its own: only the size can tell, and the file may have grown or
	 * shrunk since we last looked, so stat it again.
	 */
	if ((size_t)n < len || off + (uint64_t)n >= rd->size) {
		rc = pc_stat(rd);
		if (rc)
			return rc;
	}
	if ((size_t)n == len) {
		res->outcome = PC_HIT;
		return 0;
	}
	if (off + (uint64_t)n >= rd->size) {
		if (n == 0) {
			res->outcome = PC_EOF;
			res->eof = true;
		} else {
			res->outcome = PC_HIT;
		}
	} else {
		res->outcome = n ? PC_PARTIAL : PC_MISS;
	}
	return 0;
}

bool pc_page_cached(int fd, uint64_t off)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	ssize_t n;

	do {
		n = preadv2(fd, &iov, 1, (off_t)off, RWF_NOWAIT);
	} while (n < 0 && errno == EINTR);
	return n == 1;
}

int pc_read_full(int fd, void *buf, size_t len, uint64_t off,
		 struct pc_result *res)
{
	uint64_t start = pc_now_ns();
	char *p = buf;
	ssize_t n;
	int rc = 0;

	res->bytes = 0;
	res->eof = false;
	while (res->bytes < len) {
		n = pread(fd, p + res->bytes, len - res->bytes,
			  (off_t)(off + res->bytes));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0) {
			res->eof = true;
			break;
		}
		res->bytes += (size_t)n;
	}
	res->ns = pc_now_ns() - start;
	return rc;
}

int pc_read_stream(int fd, void *buf, size_t len, struct pc_result *res)
{
	uint64_t start = pc_now_ns();
	ssize_t n;

	do {
		n = read(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	res->ns = pc_now_ns() - start;
	res->bytes = n > 0 ? (size_t)n : 0;
	res->eof = n == 0;
	return n < 0 ? -errno : 0;
}

bool pc_nowait_reads_ahead(void)
{
	static int cached = -1;
	struct utsname u;
	unsigned int major, minor;

	if (cached >= 0)
		return cached;
	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		cached = 1;
	else
		cached = major > 6 || (major == 6 && minor >= 12);
	return cached;
}

static long pc_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? p : 4096;
}

/* cachestat() over [off, off + len); -errno on failure. */
static int pc_cachestat(int fd, uint64_t off, uint64_t len,
			struct pc_cachestat *cs)
{
#ifdef __NR_cachestat
	struct pc_cachestat_range r = { .off = off, .len = len };

	if (syscall(__NR_cachestat, fd, &r, cs, 0) < 0)
		return -errno;
	return 0;
#else
	(void)fd; (void)off; (void)len; (void)cs;
	return -ENOSYS;
#endif
}

/*
 * Would mincore() tell us the truth about this file? Since 5.0 (6.1:
 * can_do_mincore() in mm/mincore.c) only to a caller that owns the file
 * (or has CAP_FOWNER) or may open it for writing; to anyone else it
 * reports every page resident. Mirror that rule: owner by the effective
 * uid, CAP_FOWNER in the effective set, or write permission by faccessat2(AT_EACCESS) on the descriptor,
 * which also says no on a read-only mount, as file_permission() does.
 * Anything we cannot check counts as "no".
 */
static bool pc_mincore_truthful(const struct pc_reader *rd)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];

	if (rd->uid == geteuid())
		return true;
	/* inode_owner_or_capable(): CAP_FOWNER counts as owning it */
	if (syscall(SYS_capget, &hdr, caps) == 0 &&
	    (caps[CAP_FOWNER / 32].effective & (1U << (CAP_FOWNER % 32))))
		return true;
	return syscall(__NR_faccessat2, rd->fd, "", W_OK,
		       AT_EACCESS | AT_EMPTY_PATH) == 0;
}

/*
 * Can this file be read with RWF_NOWAIT at all? Ask for one byte at the
 * end of the file: the flags are checked before ->read_iter (EOPNOTSUPP
 * without FMODE_NOWAIT: procfs, sysfs, tmpfs), and filemap_read() stops
 * at i_size before it looks up a page (6.1), so nothing is read or
 * loaded. Returns 0 (PC_FL_UNSUPPORTED set or not) or -errno.
 */
static int pc_probe_nowait(struct pc_reader *rd)
{
	struct pc_result r;
	char byte;
	int rc;

	rc = pc_stat(rd);
	if (rc)
		return rc;
	return pc_read_nowait(rd, &byte, 1, rd->size, &r);
}

/*
 * cachestat(2) where the kernel answers it for this file, else mincore(2)
 * where it tells this caller the truth, else PC_RES_UNKNOWN. Reads
 * nothing. Returns 0 or -errno of an unexpected failure.
 */
static int pc_residency_pick(struct pc_reader *rd)
{
	struct pc_cachestat cs;
	int rc;

	rc = pc_cachestat(rd->fd, 0, (uint64_t)pc_page_size(), &cs);
	switch (rc) {
	case 0:
		rd->res = PC_RES_CACHESTAT;
		return 0;
	case -ENOSYS:		/* before 6.5 */
	case -EPERM:		/* 6.14, 6.12.12, 6.6.y: not owner or writer */
	case -EOPNOTSUPP:	/* hugetlbfs */
	case -EBADF:
	case -EINVAL:
		break;
	default:
		return rc;
	}
	rd->res = pc_mincore_truthful(rd) ? PC_RES_MINCORE : PC_RES_UNKNOWN;
	return 0;
}

int pc_residency_init(struct pc_reader *rd)
{
	int rc;

	rc = pc_probe_nowait(rd);
	if (rc)
		return rc;
	if (pc_reader_is_unsupported(rd)) {
		rd->res = PC_RES_NONE;
		return 0;
	}
	rc = pc_residency_pick(rd);
	if (rc || rd->res != PC_RES_UNKNOWN)
		return rc;
	rd->res = pc_nowait_reads_ahead() ? PC_RES_NONE : PC_RES_PROBE;
	return 0;
}

/*
 * Fill @vec[0..npages) for the pages from @first by cachestat(), halving
 * mixed ranges: a wholly cached or wholly uncached range costs one call.
 */
static int pc_resident_cachestat(int fd, uint64_t first, uint64_t npages,
				 unsigned char *vec, long psz)
{
	struct pc_cachestat cs;
	uint64_t half;
	int rc;

	rc = pc_cachestat(fd, first * (uint64_t)psz, npages * (uint64_t)psz,
			  &cs);
	if (rc)
		return rc;
	if (cs.nr_cache == 0 || cs.nr_cache >= npages ||
	    npages <= PC_CACHESTAT_LEAF) {
		memset(vec, cs.nr_cache ? 1 : 0, npages);
		return 0;
	}
	half = npages / 2;
	rc = pc_resident_cachestat(fd, first, half, vec, psz);
	if (!rc)
		rc = pc_resident_cachestat(fd, first + half, npages - half,
					   vec + half, psz);
	return rc;
}

/* mincore() of a read-only shared mapping: it faults nothing in. */
static int pc_resident_mincore(int fd, uint64_t first, uint64_t npages,
			       unsigned char *vec, long psz)
{
	size_t len = (size_t)(npages * (uint64_t)psz);
	void *map;
	uint64_t i;
	int rc = 0;

	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
		   (off_t)(first * (uint64_t)psz));
	if (map == MAP_FAILED)
		return -errno;
	if (mincore(map, len, vec) < 0)
		rc = -errno;
	munmap(map, len);
	for (i = 0; !rc && i < npages; i++)
		vec[i] &= 1;
	return rc;
}

int pc_resident(struct pc_reader *rd, uint64_t off, uint64_t len,
		unsigned char *vec)
{
	long psz = pc_page_size();
	uint64_t first = off / (uint64_t)psz;
	uint64_t npages = (off + len + (uint64_t)psz - 1) / (uint64_t)psz -
			  first;

	if (!len)
		return -EINVAL;
	switch (rd->res) {
	case PC_RES_CACHESTAT:
		return pc_resident_cachestat(rd->fd, first, npages, vec, psz);
	case PC_RES_MINCORE:
		return pc_resident_mincore(rd->fd, first, npages, vec, psz);
	default:
		return -EOPNOTSUPP;
	}
}

/* First range, in pages, pc_uncached_cachestat() asks about. */
#define PC_RUN_FIRST		64
/* Pages of one mincore() window in pc_uncached_mincore() (256 MiB). */
#define PC_MINCORE_WINDOW	65536

/* cachestat() over pages [@first, @first + @n): how many are cached. */
static int pc_cached_pages(int fd, uint64_t first, uint64_t n, long psz,
			   uint64_t *cached)
{
	struct pc_cachestat cs;
	int rc;

	rc = pc_cachestat(fd, first * (uint64_t)psz, n * (uint64_t)psz, &cs);
	if (!rc)
		*cached = cs.nr_cache;
	return rc;
}

/*
 * Pages from @first, up to @max, before the first cached one, into
 * *@npages: ranges doubling from PC_RUN_FIRST pages while none is
 * cached, then halving the range that holds a cached page.
 */
static int pc_uncached_cachestat(int fd, uint64_t first, uint64_t max,
				 long psz, uint64_t *npages)
{
	uint64_t lo = 0, hi, step = PC_RUN_FIRST, mid, cached;
	int rc;

	/* [0, lo) uncached; find hi such that [lo, hi) has a cached page */
	for (;;) {
		hi = max - lo > step ? lo + step : max;
		rc = pc_cached_pages(fd, first + lo, hi - lo, psz, &cached);
		if (rc)
			return rc;
		if (cached)
			break;
		lo = hi;
		if (lo == max) {
			*npages = max;
			return 0;
		}
		step *= 2;
	}
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		rc = pc_cached_pages(fd, first + lo, mid - lo, psz, &cached);
		if (rc)
			return rc;
		if (cached)
			hi = mid;
		else
			lo = mid;
	}
	*npages = lo;	/* page lo is the cached one */
	return 0;
}

/* The same with mincore(), PC_MINCORE_WINDOW pages at a time. */
static int pc_uncached_mincore(int fd, uint64_t first, uint64_t max,
			       long psz, uint64_t *npages)
{
	unsigned char *vec;
	uint64_t done = 0, n, i;
	int rc = 0;

	vec = malloc(PC_MINCORE_WINDOW);
	if (!vec)
		return -ENOMEM;
	while (done < max) {
		n = max - done < PC_MINCORE_WINDOW ? max - done :
						     PC_MINCORE_WINDOW;
		rc = pc_resident_mincore(fd, first + done, n, vec, psz);
		if (rc)
			break;
		for (i = 0; i < n && !vec[i]; i++)
			;
		done += i;
		if (i < n)
			break;
	}
	free(vec);
	*npages = done;
	return rc;
}

int pc_uncached_run(struct pc_reader *rd, uint64_t off, uint64_t max,
		    uint64_t *run)
{
	long psz = pc_page_size();
	uint64_t first = off / (uint64_t)psz;
	uint64_t npages = (off + max + (uint64_t)psz - 1) / (uint64_t)psz -
			  first;
	uint64_t n = 0, bytes;
	int rc;

	*run = 0;
	if (!max)
		return -EINVAL;
	switch (rd->res) {
	case PC_RES_CACHESTAT:
		rc = pc_uncached_cachestat(rd->fd, first, npages, psz, &n);
		break;
	case PC_RES_MINCORE:
		rc = pc_uncached_mincore(rd->fd, first, npages, psz, &n);
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (rc)
		return rc;
	/* pages to bytes from @off, which may lie inside the first page */
	bytes = (first + n) * (uint64_t)psz;
	bytes = bytes > off ? bytes - off : 0;
	*run = bytes < max ? bytes : max;
	return 0;
}

/* Cached pages among @npages from page 0, by mincore() window by window. */
static int pc_count_mincore(int fd, uint64_t npages, long psz,
			    uint64_t *cached)
{
	unsigned char *vec;
	uint64_t done, n, i;
	int rc = 0;

	vec = malloc(PC_MINCORE_WINDOW);
	if (!vec)
		return -ENOMEM;
	for (done = 0; done < npages && !rc; done += n) {
		n = npages - done < PC_MINCORE_WINDOW ? npages - done :
							PC_MINCORE_WINDOW;
		rc = pc_resident_mincore(fd, done, n, vec, psz);
		for (i = 0; !rc && i < n; i++)
			*cached += vec[i];
	}
	free(vec);
	return rc;
}

int pc_cached_bytes(struct pc_reader *rd, uint64_t *cached)
{
	long psz = pc_page_size();
	uint64_t npages = (rd->size + (uint64_t)psz - 1) / (uint64_t)psz;
	uint64_t n = 0, tail = rd->size % (uint64_t)psz;
	unsigned char last;
	int rc;

	*cached = 0;
	if (rd->res == PC_RES_UNKNOWN) {
		rc = pc_residency_pick(rd);
		if (rc)
			return rc;
	}
	if (rd->res == PC_RES_CACHESTAT)
		rc = npages ? pc_cached_pages(rd->fd, 0, npages, psz, &n) : 0;
	else if (rd->res == PC_RES_MINCORE)
		rc = pc_count_mincore(rd->fd, npages, psz, &n);
	else
		rc = -EOPNOTSUPP;
	if (rc || !n)
		return rc;
	*cached = n * (uint64_t)psz;
	/* a cached last page holds only the file's last bytes */
	if (tail) {
		rc = pc_resident(rd, rd->size - 1, 1, &last);
		if (rc)
			return rc;
		if (last)
			*cached -= (uint64_t)psz - tail;
	}
	return 0;
}

/* Pages whose residency pc_read_mapped() checks per call. */
#define PC_MAPPED_STEP	256

static __thread sigjmp_buf *pc_sigbus_env;

static void pc_sigbus(int sig)
{
	(void)sig;
	siglongjmp(*pc_sigbus_env, 1);
}

/*
 * Copy @len bytes at @map + @pos to @buf; 0, or -EFAULT when the file
 * was truncated under the mapping (SIGBUS, caught only meanwhile).
 */
static int pc_copy_mapped(void *buf, const char *map, size_t pos, size_t len)
{
	struct sigaction sa = { .sa_handler = pc_sigbus }, old;
	sigjmp_buf env;
	int rc = 0;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &old) < 0)
		return -errno;
	pc_sigbus_env = &env;
	if (sigsetjmp(env, 1))
		rc = -EFAULT;
	else
		memcpy(buf, map + pos, len);
	pc_sigbus_env = NULL;
	sigaction(SIGBUS, &old, NULL);
	return rc;
}

/*
 * Copy cached pages through a MADV_RANDOM mapping: a fault on a cached
 * page starts no readahead with VM_RAND_READ (6.1's
 * do_async_mmap_readahead()), where a RWF_NOWAIT read of a page marked
 * PG_readahead starts it on kernels without IOCB_NOIO for RWF_NOWAIT.
 * Each run of pages is checked again just before the copy; the copy
 * stops at the first page not cached any more.
 */
static int pc_read_mapped(struct pc_reader *rd, void *buf, size_t len,
			  uint64_t off, struct pc_result *res)
{
	long psz = pc_page_size();
	unsigned char vec[PC_MAPPED_STEP];
	uint64_t moff = off / (uint64_t)psz * (uint64_t)psz;
	size_t mlen, done = 0, want, n, i, pos;
	uint64_t start = pc_now_ns();
	char *map;
	int rc;

	res->bytes = 0;
	res->eof = false;
	rc = pc_stat(rd);
	if (rc)
		return rc;
	if (off >= rd->size) {
		res->outcome = PC_EOF;
		res->eof = true;
		res->ns = pc_now_ns() - start;
		return 0;
	}
	if (len > rd->size - off)
		len = (size_t)(rd->size - off);
	mlen = (size_t)(off + len - moff);
	map = mmap(NULL, mlen, PROT_READ, MAP_SHARED, rd->fd, (off_t)moff);
	if (map == MAP_FAILED)
		return -errno;
	if (madvise(map, mlen, MADV_RANDOM) < 0) {
		rc = -errno;
		goto out;
	}
	while (done < len) {
		want = len - done;
		if (want > (size_t)psz * PC_MAPPED_STEP)
			want = (size_t)psz * PC_MAPPED_STEP;
		rc = pc_resident(rd, off + done, want, vec);
		if (rc)
			goto out;
		pos = (size_t)(off + done - moff);
		/* bytes up to the end of the first page, then whole pages */
		n = 0;
		for (i = 0; n < want && vec[i]; i++)
			n = ((pos / (size_t)psz + i + 1) * (size_t)psz) - pos;
		if (n > want)
			n = want;
		if (n) {
			rc = pc_copy_mapped((char *)buf + done, map, pos, n);
			if (rc)
				goto out;
			done += n;
		}
		if (n < want)
			break;
	}
out:
	munmap(map, mlen);
	res->ns = pc_now_ns() - start;
	res->bytes = done;
	if (rc == -EFAULT) {
		/* truncated meanwhile: what was copied, then end of file */
		rc = 0;
	}
	if (rc)
		return rc;
	res->outcome = done == len ? PC_HIT : done ? PC_PARTIAL : PC_MISS;
	return 0;
}

int pc_read_resident(struct pc_reader *rd, void *buf, size_t len,
		     uint64_t off, struct pc_result *res)
{
	struct pc_result rest;
	uint64_t ns;
	int rc;

	if (rd->res != PC_RES_CACHESTAT && rd->res != PC_RES_MINCORE)
		return -EOPNOTSUPP;
	if (pc_nowait_reads_ahead())
		return pc_read_mapped(rd, buf, len, off, res);

	rc = pc_read_nowait(rd, buf, len, off, res);
	if (rc || (res->outcome != PC_PARTIAL && res->outcome != PC_MISS))
		return rc;
	/*
	 * Short under IOCB_NOIO: a page evicted since, or a cached folio
	 * marked PG_readahead, where filemap_readahead() returns -EAGAIN
	 * (6.1). The mapping copies the second kind and stops at the first.
	 */
	ns = res->ns;
	rc = pc_read_mapped(rd, (char *)buf + res->bytes, len - res->bytes,
			    off + res->bytes, &rest);
	if (rc)
		return rc;
	res->bytes += rest.bytes;
	res->ns = ns + rest.ns;
	res->outcome = res->bytes == len ? PC_HIT :
		       res->bytes ? PC_PARTIAL : PC_MISS;
	if (rest.outcome == PC_EOF || (rest.outcome == PC_HIT &&
				       res->bytes < len))
		res->outcome = res->bytes ? PC_HIT : PC_EOF;
	return 0;
}
