// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loop-device context, in the shape of util-linux's loopcxt: name a
 * device, open it, read what it is bound to from sysfs (and
 * LOOP_GET_STATUS64), iterate over the bound ones, and measure how much
 * of a device and of its backing file sit in the page cache. Binding is
 * in loopdev-setup.c, the direct-I/O policy in loopdev-dio.c. It never
 * prints; every function returns 0 or -errno.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>

#include "c.h"
#include "loopdev.h"
#include "loopdev-private.h"
#include "pagecache.h"
#include "strutils.h"

#ifndef LO_FLAGS_DIRECT_IO
# define LO_FLAGS_DIRECT_IO	16	/* Linux 4.4 */
#endif

/* ------------------------------------------------------------------ */
/* small helpers, shared with loopdev-*.c (loopdev-private.h)          */

void loopdev_pause_us(unsigned long us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Copy with truncation, always terminated. */
void loopdev_copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

int loopdev_read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	unsigned long long v;
	int rc;

	rc = read_file_str(path, buf, sizeof(buf));
	if (rc)
		return rc;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

void loopdev_close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static int read_bool(const char *path, bool *val)
{
	uint64_t v;
	int rc = loopdev_read_u64(path, &v);

	if (!rc)
		*val = v != 0;
	return rc;
}

/* "/sys/block/loopN/<what>" */
static int loop_sysfs_path(const struct loopdev_ctx *lc, const char *what,
			   char *buf, size_t len)
{
	int n = snprintf(buf, len, SYSFS_BLOCK "/loop%d/%s", lc->nr, what);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int loop_read_u64(const struct loopdev_ctx *lc, const char *what,
			 uint64_t *val)
{
	char path[PATH_MAX];
	int rc = loop_sysfs_path(lc, what, path, sizeof(path));

	return rc ? rc : loopdev_read_u64(path, val);
}

static int loop_read_bool(const struct loopdev_ctx *lc, const char *what,
			  bool *val)
{
	char path[PATH_MAX];
	int rc = loop_sysfs_path(lc, what, path, sizeof(path));

	return rc ? rc : read_bool(path, val);
}

/* The dev_t of LOOP_GET_STATUS64 is the kernel's huge_encode_dev(). */
static dev_t decode_kernel_dev(uint64_t d)
{
	unsigned int ma = (d >> 8) & 0xfff;
	unsigned int mi = (d & 0xff) | ((d >> 12) & 0xfff00);

	return makedev(ma, mi);
}

/* ------------------------------------------------------------------ */
/* context                                                             */

void loopdev_init(struct loopdev_ctx *lc)
{
	memset(lc, 0, sizeof(*lc));
	lc->nr = -1;
	lc->fd = -1;
	lc->ctl_fd = -1;
	lc->back_fd = -1;
	lc->dio = LOOPDEV_DIO_AUTO;
}

void loopdev_deinit(struct loopdev_ctx *lc)
{
	loopdev_close_fd(&lc->fd);
	loopdev_close_fd(&lc->ctl_fd);
	loopdev_close_fd(&lc->back_fd);
}

int loopdev_set_device_nr(struct loopdev_ctx *lc, int nr)
{
	if (nr < 0)
		return -EINVAL;
	loopdev_close_fd(&lc->fd);
	lc->nr = nr;
	lc->rdev = 0;
	snprintf(lc->path, sizeof(lc->path), "/dev/loop%d", nr);
	memset(&lc->state, 0, sizeof(lc->state));
	return 0;
}

bool loopdev_is_device_name(const char *obj)
{
	struct stat st;

	if (!stat(obj, &st))
		return S_ISBLK(st.st_mode) && major(st.st_rdev) == LOOPDEV_MAJOR;
	return !strchr(obj, '/') && !strncmp(obj, "loop", 4);
}

int loopdev_set_device(struct loopdev_ctx *lc, const char *name)
{
	char path[PATH_MAX], link[PATH_MAX], buf[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;
	char *end;
	long nr;

	if (!name || !*name)
		return -EINVAL;
	if (!strchr(name, '/') && !strncmp(name, "loop", 4))
		snprintf(path, sizeof(path), "/dev/%s", name);
	else if (strlen(name) >= sizeof(path))
		return -ENAMETOOLONG;
	else
		strcpy(path, name);

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode) || major(st.st_rdev) != LOOPDEV_MAJOR)
		return -ENODEV;

	/* The number is the sysfs name, not minor >> part_shift guessed. */
	snprintf(link, sizeof(link), SYSFS_DEV_BLOCK "/%u:%u",
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	base = strrchr(buf, '/');
	base = base ? base + 1 : buf;
	if (strncmp(base, "loop", 4))
		return -ENODEV;
	errno = 0;
	nr = strtol(base + 4, &end, 10);
	if (errno || end == base + 4 || *end || nr < 0 || nr > INT_MAX)
		return -ENODEV;
	loopdev_set_device_nr(lc, (int)nr);
	/* keep the name the user gave when it is a path (symlinks...) */
	if (strchr(name, '/'))
		strcpy(lc->path, path);
	lc->rdev = st.st_rdev;	/* loopdev_open() checks it is still so */
	return 0;
}

uint32_t loopdev_sector_max(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (uint32_t)page : 4096;
}

int loopdev_set_sector_size(struct loopdev_ctx *lc, uint32_t size)
{
	if (size && (size < LOOPDEV_SECTOR_MIN || size > loopdev_sector_max() ||
		     (size & (size - 1))))
		return -EINVAL;
	lc->sector_size = size;
	return 0;
}

int loopdev_open(struct loopdev_ctx *lc, int mode)
{
	struct stat st;

	if (lc->nr < 0)
		return -EINVAL;
	loopdev_close_fd(&lc->fd);
	lc->fd = open(lc->path, mode | O_CLOEXEC);
	if (lc->fd < 0)
		return -errno;
	/* the node may have been replaced since loopdev_set_device() */
	if (lc->rdev && (fstat(lc->fd, &st) < 0 || !S_ISBLK(st.st_mode) ||
			 st.st_rdev != lc->rdev)) {
		loopdev_close_fd(&lc->fd);
		return -ESTALE;
	}
	return 0;
}

int loopdev_open_backing(struct loopdev_ctx *lc, const char *path)
{
	struct stat st;
	int fd, fl, rc;
	bool ro = lc->flags & LOOPDEV_FL_READONLY;

	if (strlen(path) >= sizeof(lc->back_path))
		return -ENAMETOOLONG;
	loopdev_close_fd(&lc->back_fd);

	/* O_NONBLOCK: never hang on a FIFO; cleared once we know the type. */
	fd = open(path, (ro ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY |
		  O_NONBLOCK);
	if (fd < 0 && !ro && (errno == EROFS || errno == EACCES)) {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0)
			lc->flags |= LOOPDEV_FL_READONLY |
				     LOOPDEV_FL_RO_FALLBACK;
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto fail;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	lc->back_fd = fd;
	strcpy(lc->back_path, path);
	return 0;
fail:
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* state                                                               */

static const char *const stat_names[LOOPDEV_NR_STATS] = {
	"dio_read_reqs", "dio_read_bytes", "dio_write_reqs", "dio_write_bytes",
	"buf_read_reqs", "buf_read_bytes", "buf_write_reqs", "buf_write_bytes",
	"flush_reqs", "discard_reqs", "discard_bytes", "errors",
	"short_io", "queued", "max_backlog",
};

const char *loopdev_stat_name(unsigned int i)
{
	return i < LOOPDEV_NR_STATS ? stat_names[i] : NULL;
}

/*
 * One line of decimal fields; fields a later kernel appends are ignored,
 * fewer than we know means a format we do not understand: absent.
 */
static void read_stat(struct loopdev_ctx *lc)
{
	struct loopdev_stat *st = &lc->state.stat;
	char path[PATH_MAX], buf[1024], *p, *end;
	unsigned long long v;
	unsigned int n;

	memset(st, 0, sizeof(*st));
	if (loop_sysfs_path(lc, "loop/stat", path, sizeof(path)) ||
	    read_file_str(path, buf, sizeof(buf)))
		return;
	p = buf;
	for (n = 0; n < LOOPDEV_NR_STATS; n++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno)
			return;
		st->v[n] = v;
		p = end;
	}
	st->present = true;
}

/*
 * What LOOP_GET_STATUS64 also tells: read from sysfs only when the
 * device is not open (a user who may not open it).
 */
static int read_flags_sysfs(struct loopdev_ctx *lc, struct loopdev_state *s)
{
	int rc;

	rc = loop_read_u64(lc, "loop/offset", &s->offset);
	if (!rc)
		rc = loop_read_u64(lc, "loop/sizelimit", &s->sizelimit);
	if (!rc)
		rc = loop_read_bool(lc, "loop/autoclear", &s->autoclear);
	if (!rc)
		rc = loop_read_bool(lc, "loop/partscan", &s->partscan);
	if (!rc)
		rc = loop_read_bool(lc, "loop/dio", &s->dio);
	if (!rc)
		rc = loop_read_bool(lc, "ro", &s->ro);
	return rc;
}

int loopdev_read_state(struct loopdev_ctx *lc)
{
	struct loopdev_state *s = &lc->state;
	struct loop_info64 info;
	char path[PATH_MAX];
	uint64_t v;
	size_t n;
	int rc;

	if (lc->nr < 0)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	/*
	 * The loop/ attributes exist while the device is bound, and vanish
	 * when it is detached under us: ENOENT means "not bound".
	 */
	rc = loop_sysfs_path(lc, "loop/backing_file", path, sizeof(path));
	if (!rc)
		rc = read_file_str(path, s->back_file, sizeof(s->back_file));
	if (!rc)
		rc = loop_read_u64(lc, "size", &s->size);
	s->size *= 512;			/* sysfs counts 512-byte sectors */
	if (!rc)
		rc = loop_read_u64(lc, "queue/logical_block_size", &v);
	if (!rc)
		s->sector_size = (uint32_t)v;
	if (!rc && lc->fd < 0)
		rc = read_flags_sysfs(lc, s);
	if (rc == -ENOENT) {
		memset(s, 0, sizeof(*s));
		return 0;
	}
	if (rc)
		return rc;
	s->bound = true;
	read_stat(lc);

	if (lc->fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	if (ioctl(lc->fd, LOOP_GET_STATUS64, &info) < 0) {
		if (errno == ENXIO) {
			memset(s, 0, sizeof(*s));
			return 0;
		}
		return -errno;
	}
	s->has_ino = true;
	s->back_dev = decode_kernel_dev(info.lo_device);
	s->back_ino = (ino_t)info.lo_inode;
	s->offset = info.lo_offset;
	s->sizelimit = info.lo_sizelimit;
	s->ro = info.lo_flags & LO_FLAGS_READ_ONLY;
	s->autoclear = info.lo_flags & LO_FLAGS_AUTOCLEAR;
	s->partscan = info.lo_flags & LO_FLAGS_PARTSCAN;
	s->dio = info.lo_flags & LO_FLAGS_DIRECT_IO;
	if (!s->back_file[0]) {
		n = strnlen((const char *)info.lo_file_name, LO_NAME_SIZE - 1);
		memcpy(s->back_file, info.lo_file_name, n);
		s->back_file[n] = '\0';
	}
	return 0;
}

int loopdev_bound_list(int **nrs)
{
	struct dirent *de;
	char path[PATH_MAX];
	int *v = NULL, *nv, n = 0, cap = 0, nr, i, j, t;
	char *end;
	DIR *dir;

	*nrs = NULL;
	dir = opendir(SYSFS_BLOCK);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "loop", 4))
			continue;
		errno = 0;
		nr = (int)strtol(de->d_name + 4, &end, 10);
		if (errno || end == de->d_name + 4 || *end || nr < 0)
			continue;
		snprintf(path, sizeof(path), SYSFS_BLOCK "/%s/loop",
			 de->d_name);
		if (access(path, F_OK) < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = nr;
	}
	closedir(dir);
	for (i = 1; i < n; i++)		/* insertion sort: a few dozen */
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*nrs = v;
	return n;
}

int loopdev_iter_init(struct loopdev_iter *it, int n, char *const *names)
{
	memset(it, 0, sizeof(*it));
	if (n > 0) {
		it->names = names;
		it->n = n;
		return 0;
	}
	it->n = loopdev_bound_list(&it->nrs);
	if (it->n < 0) {
		n = it->n;
		it->n = 0;
		return n;
	}
	return 0;
}

int loopdev_iter_next(struct loopdev_iter *it, struct loopdev_ctx *lc)
{
	int rc;

	if (it->i >= it->n)
		return 0;
	loopdev_init(lc);
	if (it->names) {
		it->name = it->names[it->i++];
		rc = loopdev_set_device(lc, it->name);
	} else {
		rc = loopdev_set_device_nr(lc, it->nrs[it->i++]);
		it->name = loopdev_get_path(lc);
	}
	return rc ? rc : 1;
}

void loopdev_iter_deinit(struct loopdev_iter *it)
{
	free(it->nrs);
	memset(it, 0, sizeof(*it));
}

int loopdev_open_bound_backing(struct loopdev_ctx *lc)
{
	struct stat st;
	int fd;

	if (!lc->state.bound)
		return -ENXIO;
	if (lc->state.back_file[0] != '/')
		return -ENOENT;
	fd = open(lc->state.back_file, O_RDONLY | O_CLOEXEC | O_NOCTTY |
		  O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 ||
	    (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) ||
	    (lc->state.has_ino && (st.st_dev != lc->state.back_dev ||
				   st.st_ino != lc->state.back_ino))) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int loopdev_backing_id(const struct loopdev_ctx *lc, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (lc->state.has_ino) {
		*dev = lc->state.back_dev;
		*ino = lc->state.back_ino;
		return 0;
	}
	if (lc->state.back_file[0] != '/' || stat(lc->state.back_file, &st))
		return -ENOENT;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

int loopdev_read_bound(struct loopdev_ctx *lc)
{
	int rc;

	if (lc->fd < 0)
		return -EBADF;
	rc = loopdev_read_state(lc);
	if (rc)
		return rc;
	return lc->state.bound ? 0 : -ENXIO;
}

int loopdev_read_diskseq(const struct loopdev_ctx *lc, uint64_t *seq)
{
	return loop_read_u64(lc, "diskseq", seq);
}

/* ------------------------------------------------------------------ */
/* page-cache residency                                                */

/*
 * The size of an open file or block device, and how much of it the page
 * cache holds (pagecache.c: cachestat(2), or mincore(2) where it tells
 * this caller the truth).
 */
static int cached_bytes(int fd, uint64_t *size, uint64_t *cached)
{
	struct pc_reader rd;
	int rc;

	rc = pc_reader_init(&rd, fd);
	if (!rc) {
		*size = pc_reader_get_size(&rd);
		rc = pc_cached_bytes(&rd, cached);
	}
	pc_reader_deinit(&rd);
	return rc;
}

int loopdev_cache(struct loopdev_ctx *lc, struct loopdev_cache *c)
{
	int fd, rc;

	memset(c, 0, sizeof(*c));
	if (lc->fd < 0) {
		rc = loopdev_open(lc, O_RDONLY);
		if (rc)
			return rc;
	}
	rc = loopdev_read_bound(lc);
	if (rc)
		return rc;
	rc = cached_bytes(lc->fd, &c->dev_size, &c->dev_cached);
	if (rc)
		return rc;

	fd = loopdev_open_bound_backing(lc);
	if (fd < 0)
		return 0;	/* deleted or replaced: back_known false */
	if (cached_bytes(fd, &c->back_size, &c->back_cached) == 0)
		c->back_known = true;
	close(fd);
	return 0;
}
