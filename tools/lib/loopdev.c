// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Loop-device context. The kernel keeps direct I/O off without an error
 * when it cannot honour it (__loop_update_dio() in drivers/block/loop.c,
 * 6.1): this file predicts that decision from the backing file alone,
 * asks for direct I/O only when it can work, reads back what the kernel
 * did, and releases a device it bound when the result is not what was
 * required. It never prints; every function returns 0 or -errno.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/loop.h>

#include "c.h"
#include "loopdev.h"

/* Linux 5.8; the struct came with it, in the same header. */
#ifndef LOOP_CONFIGURE
# define LOOP_CONFIGURE		0x4C0A
struct loop_config {
	__u32 fd;
	__u32 block_size;
	struct loop_info64 info;
	__u64 __reserved[8];
};
#endif
#ifndef LOOP_SET_DIRECT_IO
# define LOOP_SET_DIRECT_IO	0x4C08	/* Linux 4.4 */
#endif
#ifndef LOOP_SET_BLOCK_SIZE
# define LOOP_SET_BLOCK_SIZE	0x4C09	/* Linux 4.14 */
#endif
#ifndef LO_FLAGS_DIRECT_IO
# define LO_FLAGS_DIRECT_IO	16	/* Linux 4.4 */
#endif

/*
 * STATX_DIOALIGN is Linux 6.1 (ext4, f2fs, xfs, block devices). Headers
 * without it lack the struct fields too: read them through the kernel's
 * layout of struct statx.
 */
#ifndef STATX_DIOALIGN
# define STATX_DIOALIGN		0x00002000U
# define LOOPDEV_STATX_COMPAT	1
#endif

/* LOOP_CTL_GET_FREE + bind rounds before attach gives up with -EBUSY. */
#define LOOPDEV_ALLOC_TRIES	32
/*
 * Jittered back-off between rounds: a random pause in [0, window), the
 * window doubling from MIN to MAX microseconds.
 */
#define LOOPDEV_BACKOFF_MIN_US	1000
#define LOOPDEV_BACKOFF_MAX_US	100000
/*
 * Kernels up to 5.1x return EAGAIN from LOOP_SET_STATUS64 and
 * LOOP_SET_BLOCK_SIZE while the device still has page-cache pages after
 * invalidating it; 6.1 flushes and invalidates instead.
 */
#define LOOPDEV_EAGAIN_TRIES	20
#define LOOPDEV_EAGAIN_PAUSE_US	50000
/*
 * LOOP_CTL_REMOVE answers EBUSY while someone (udev, blkid) has the
 * device open.
 */
#define LOOPDEV_REMOVE_TRIES	20
#define LOOPDEV_REMOVE_PAUSE_US	50000
/* mincore() window: bounds the residency vector to 64 KiB. */
#define LOOPDEV_MINCORE_WINDOW	(256ULL << 20)

#define SYSFS_BLOCK		"/sys/block"
#define SYSFS_DEV_BLOCK		"/sys/dev/block"

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static void pause_us(unsigned long us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * xorshift64: jitter only, seeded per process so that concurrent runs
 * started at once do not retry in lock step.
 */
static uint64_t jitter_state;

static uint64_t jitter_next(void)
{
	struct timespec ts;
	uint64_t x = jitter_state;

	if (!x) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
		    (uint64_t)ts.tv_sec;
		if (!x)
			x = 0x9e3779b97f4a7c15ULL;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	jitter_state = x;
	return x;
}

static void backoff(unsigned int attempt)
{
	unsigned long window = LOOPDEV_BACKOFF_MIN_US;

	while (attempt-- && window < LOOPDEV_BACKOFF_MAX_US)
		window *= 2;
	if (window > LOOPDEV_BACKOFF_MAX_US)
		window = LOOPDEV_BACKOFF_MAX_US;
	pause_us(jitter_next() % window + 1);
}

/* Read a small sysfs/proc file, without the trailing newline. */
static int read_str(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		rc = -errno;
		n = 0;
	}
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	close(fd);
	return rc;
}

/* Copy with truncation, always terminated. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int read_u64(const char *path, uint64_t *val)
{
	char buf[64], *end;
	unsigned long long v;
	int rc;

	rc = read_str(path, buf, sizeof(buf));
	if (rc)
		return rc;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	*val = v;
	return 0;
}

static int read_bool(const char *path, bool *val)
{
	uint64_t v;
	int rc = read_u64(path, &v);

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

	return rc ? rc : read_u64(path, val);
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

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

void loopdev_deinit(struct loopdev_ctx *lc)
{
	close_fd(&lc->fd);
	close_fd(&lc->ctl_fd);
	close_fd(&lc->back_fd);
}

int loopdev_set_device_nr(struct loopdev_ctx *lc, int nr)
{
	if (nr < 0)
		return -EINVAL;
	close_fd(&lc->fd);
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
	close_fd(&lc->fd);
	lc->fd = open(lc->path, mode | O_CLOEXEC);
	if (lc->fd < 0)
		return -errno;
	/* the node may have been replaced since loopdev_set_device() */
	if (lc->rdev && (fstat(lc->fd, &st) < 0 || !S_ISBLK(st.st_mode) ||
			 st.st_rdev != lc->rdev)) {
		close_fd(&lc->fd);
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
	close_fd(&lc->back_fd);

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
/* the direct I/O analysis                                             */

#ifdef LOOPDEV_STATX_COMPAT
/* struct statx as of Linux 6.1 (include/uapi/linux/stat.h). */
struct loopdev_statx {
	uint32_t stx_mask, stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink, stx_uid, stx_gid;
	uint16_t stx_mode, pad1;
	uint64_t stx_ino, stx_size, stx_blocks, stx_attributes_mask;
	struct { int64_t s; uint32_t ns; int32_t r; } ts[4];
	uint32_t stx_rdev_major, stx_rdev_minor, stx_dev_major, stx_dev_minor;
	uint64_t stx_mnt_id;
	uint32_t stx_dio_mem_align, stx_dio_offset_align;
	uint64_t spare[12];
};
# include <sys/syscall.h>
static int statx_dioalign(int fd, struct loopdev_statx *stx)
{
	return (int)syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_DIOALIGN,
			    stx);
}
#else
# define loopdev_statx statx
static int statx_dioalign(int fd, struct statx *stx)
{
	return statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, stx);
}
#endif

static int get_dioalign(int fd, struct loopdev_dio *d)
{
	struct loopdev_statx stx;

	memset(&stx, 0, sizeof(stx));
	if (statx_dioalign(fd, &stx) < 0)
		return -errno;
	if (stx.stx_mask & STATX_DIOALIGN) {
		d->has_dioalign = true;
		d->dio_mem_align = stx.stx_dio_mem_align;
		d->dio_offset_align = stx.stx_dio_offset_align;
	}
	return 0;
}

/* File system type of a device number, from /proc/self/mountinfo. */
static void fstype_of(dev_t dev, char *buf, size_t len)
{
	char want[32], *line = NULL, *p, *sep;
	size_t cap = 0;
	FILE *f;

	snprintf(buf, len, "unknown");
	snprintf(want, sizeof(want), "%u:%u", major(dev), minor(dev));
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		/* "ID PARENT MAJ:MIN ROOT MOUNT OPTS [TAGS...] - TYPE ..." */
		p = strchr(line, ' ');
		if (p)
			p = strchr(p + 1, ' ');
		if (!p)
			continue;
		p++;
		if (strncmp(p, want, strlen(want)) || p[strlen(want)] != ' ')
			continue;
		sep = strstr(p, " - ");
		if (!sep)
			continue;
		sep += 3;
		p = strchr(sep, ' ');
		if (p)
			*p = '\0';
		copy_str(buf, len, sep);
		break;
	}
	free(line);
	fclose(f);
}

/*
 * Logical block size of the block device @dev from sysfs. A partition
 * has no queue/ of its own: use its disk's.
 */
static int bdev_lbs_sysfs(dev_t dev, char *name, size_t namelen,
			  uint32_t *lbs)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *base;
	uint64_t v;
	ssize_t n;
	int rc;

	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK "/%u:%u",
		 major(dev), minor(dev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	base = strrchr(link, '/');
	copy_str(name, namelen, base ? base + 1 : link);

	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK
		 "/%u:%u/queue/logical_block_size", major(dev), minor(dev));
	rc = read_u64(path, &v);
	if (rc == -ENOENT) {
		snprintf(path, sizeof(path), SYSFS_DEV_BLOCK
			 "/%u:%u/../queue/logical_block_size",
			 major(dev), minor(dev));
		rc = read_u64(path, &v);
	}
	if (rc)
		return rc;
	if (!v || v > UINT32_MAX)
		return -EINVAL;
	*lbs = (uint32_t)v;
	return 0;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

int loopdev_check_dio(int fd, struct loopdev_dio *d)
{
	struct stat st;
	int fl, lbs, rc;
	uint32_t align;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;
	d->type = st.st_mode & S_IFMT;
	d->st_dev = st.st_dev;
	d->st_ino = st.st_ino;
	d->reasons = 0;
	d->bdev = 0;
	d->bdev_lbs = 0;
	d->bdev_name[0] = '\0';
	d->has_dioalign = false;
	d->dio_offset_align = d->dio_mem_align = 0;

	/*
	 * 1. O_DIRECT: do_dentry_open() and setfl() apply the same test
	 * (FMODE_CAN_ODIRECT, i.e. a ->direct_IO address space operation),
	 * so flipping the flag on our descriptor answers "would an O_DIRECT
	 * open succeed" without opening the file again.
	 */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	d->odirect_errno = 0;
	if (!(fl & O_DIRECT)) {
		if (fcntl(fd, F_SETFL, fl | O_DIRECT) < 0)
			d->odirect_errno = errno;
		else if (fcntl(fd, F_SETFL, fl) < 0)
			return -errno;
	}

	/*
	 * 2. The device __loop_update_dio() checks: the block device itself,
	 * or the file system's s_bdev (none for tmpfs, 9p, NFS, overlay).
	 */
	if (S_ISBLK(st.st_mode)) {
		snprintf(d->fstype, sizeof(d->fstype), "block device");
		d->bdev = st.st_rdev;
		if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
			d->bdev_lbs = (uint32_t)lbs;
		if (bdev_lbs_sysfs(st.st_rdev, d->bdev_name,
				   sizeof(d->bdev_name), &align) == 0 &&
		    !d->bdev_lbs)
			d->bdev_lbs = align;
	} else {
		fstype_of(st.st_dev, d->fstype, sizeof(d->fstype));
		if (major(st.st_dev) != 0 &&
		    bdev_lbs_sysfs(st.st_dev, d->bdev_name,
				   sizeof(d->bdev_name), &d->bdev_lbs) == 0)
			d->bdev = st.st_dev;
		else
			d->bdev_lbs = 0;
	}

	/*
	 * 3. What the file system itself needs (6.1+; older kernels ignore
	 * the mask bit and leave it unset).
	 */
	rc = get_dioalign(fd, d);
	if (rc && rc != -EINVAL && rc != -ENOSYS)
		return rc;

	/*
	 * The sector size attach picks when none is given and direct I/O is
	 * wanted. The kernel's own default is 512 for a file without
	 * O_DIRECT, which is how attach opens every file (see
	 * loopdev_attach()); 6.1's loop_configure() matched s_bdev's block
	 * size for an O_DIRECT file, so attach passes that size itself.
	 * A block device's inode has no s_bdev: 512 there, as before.
	 */
	if (d->sector_size)
		d->sector_used = d->sector_size;
	else if (S_ISREG(st.st_mode) && !d->odirect_errno && d->bdev_lbs)
		d->sector_used = d->bdev_lbs;
	else
		d->sector_used = LOOPDEV_SECTOR_MIN;

	align = max_u32(d->bdev_lbs, LOOPDEV_SECTOR_MIN);
	if (d->has_dioalign && d->dio_offset_align > 1)
		align = max_u32(align, d->dio_offset_align);
	d->required = align;

	/* __loop_update_dio(): FMODE_CAN_ODIRECT, then lo_bdev_can_use_dio() */
	if (d->odirect_errno)
		d->reasons |= LOOPDEV_DIO_NO_ODIRECT;
	if (d->bdev_lbs && d->sector_used < d->bdev_lbs)
		d->reasons |= LOOPDEV_DIO_SECTOR;
	if (d->bdev_lbs && d->offset % d->bdev_lbs)
		d->reasons |= LOOPDEV_DIO_OFFSET;
	/* what the kernel does not check but the I/O would trip over */
	if (d->has_dioalign && d->dio_offset_align > d->bdev_lbs &&
	    d->dio_offset_align > 1 &&
	    (d->sector_used < d->dio_offset_align ||
	     d->offset % d->dio_offset_align))
		d->reasons |= LOOPDEV_DIO_FS_ALIGN;
	if (d->required > loopdev_sector_max())
		d->reasons |= LOOPDEV_DIO_TOO_LARGE;
	if (d->has_dioalign && !d->dio_offset_align && !d->odirect_errno)
		d->reasons |= LOOPDEV_DIO_FS_BUFFERED;
	if (!d->has_dioalign && !d->bdev_lbs && !d->odirect_errno)
		d->reasons |= LOOPDEV_DIO_ALIGN_UNKNOWN;

	if (d->reasons & (LOOPDEV_DIO_NO_ODIRECT | LOOPDEV_DIO_TOO_LARGE))
		d->best_sector = 0;
	else
		d->best_sector = d->required;
	return 0;
}

int loopdev_check_dio_request(const struct loopdev_ctx *lc, int fd,
			      struct loopdev_dio *d)
{
	int rc;

	d->offset = lc->offset;
	if (!(lc->flags & LOOPDEV_FL_SECTOR_AUTO)) {
		d->sector_size = lc->sector_size;
		return loopdev_check_dio(fd, d);
	}
	d->sector_size = 0;
	rc = loopdev_check_dio(fd, d);
	if (rc)
		return rc;
	d->sector_size = loopdev_auto_sector(d);
	return loopdev_check_dio(fd, d);
}

int loopdev_backing_size(int fd, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return -EINVAL;
	return ioctl(fd, BLKGETSIZE64, size) < 0 ? -errno : 0;
}

int loopdev_check_extent(int fd, uint64_t offset, uint64_t *size)
{
	uint64_t sz;
	int rc;

	rc = loopdev_backing_size(fd, &sz);
	if (rc)
		return rc;
	if (size)
		*size = sz;
	/*
	 * The kernel sizes the device in whole 512-byte sectors
	 * (get_size()): with less than one left, loop_set_size() makes a
	 * device of 0 bytes, and succeeds.
	 */
	return offset >= sz || sz - offset < LOOPDEV_SECTOR_MIN ? -ENODATA : 0;
}

int loopdev_plan(struct loopdev_ctx *lc, struct loopdev_dio *d)
{
	bool auto_sector = lc->flags & LOOPDEV_FL_SECTOR_AUTO;
	int rc;

	memset(d, 0, sizeof(*d));
	lc->planned = false;
	lc->want_dio = false;
	lc->sector_attach = lc->sector_size;
	if (lc->back_fd < 0)
		return -EBADF;
	rc = loopdev_check_extent(lc->back_fd, lc->offset, &lc->back_size);
	if (rc)
		return rc;
	if (lc->dio == LOOPDEV_DIO_OFF && !auto_sector) {
		lc->planned = true;
		return 0;
	}
	rc = loopdev_check_dio_request(lc, lc->back_fd, d);
	if (rc)
		return rc;
	if (auto_sector)
		lc->sector_size = d->sector_size;
	lc->sector_attach = lc->sector_size;
	lc->planned = true;
	if (lc->dio == LOOPDEV_DIO_OFF)
		return 0;
	lc->want_dio = loopdev_dio_possible(d);
	if (!lc->want_dio && lc->dio == LOOPDEV_DIO_ON)
		return -EOPNOTSUPP;
	/* the size the analysis judged, not the kernel's 512 */
	if (lc->want_dio)
		lc->sector_attach = d->sector_used;
	return 0;
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
	    read_str(path, buf, sizeof(buf)))
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
	rc = loop_sysfs_path(lc, "loop", path, sizeof(path));
	if (rc)
		return rc;
	if (access(path, F_OK) < 0)
		return errno == ENOENT ? 0 : -errno;

	/*
	 * The attributes vanish when the device is detached under us:
	 * ENOENT then means "not bound".
	 */
	rc = loop_sysfs_path(lc, "loop/backing_file", path, sizeof(path));
	if (!rc)
		rc = read_str(path, s->back_file, sizeof(s->back_file));
	if (!rc)
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
	if (!rc)
		rc = loop_read_u64(lc, "size", &s->size);
	s->size *= 512;			/* sysfs counts 512-byte sectors */
	if (!rc)
		rc = loop_read_u64(lc, "queue/logical_block_size", &v);
	if (!rc)
		s->sector_size = (uint32_t)v;
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

/* ------------------------------------------------------------------ */
/* attach                                                              */

/* Kernel EAGAIN (older kernels, while dirty pages are flushed): retry. */
static int ioctl_retry(int fd, unsigned long req, unsigned long arg)
{
	int tries;

	for (tries = 0; ; tries++) {
		if (ioctl(fd, req, arg) == 0)
			return 0;
		if (errno != EAGAIN || tries + 1 >= LOOPDEV_EAGAIN_TRIES)
			return -errno;
		pause_us(LOOPDEV_EAGAIN_PAUSE_US);
	}
}

/* Undo a bind we made; never called for a device we did not claim. */
static void release_claimed(struct loopdev_ctx *lc)
{
	int saved = errno;

	if ((lc->flags & LOOPDEV_FL_CLAIMED) && lc->fd >= 0)
		ioctl(lc->fd, LOOP_CLR_FD, 0);
	lc->flags &= ~LOOPDEV_FL_CLAIMED;
	errno = saved;
}

static void fill_info(const struct loopdev_ctx *lc, struct loop_info64 *info)
{
	const char *name = lc->back_path;
	size_t n = strlen(name);

	memset(info, 0, sizeof(*info));
	info->lo_offset = lc->offset;
	info->lo_sizelimit = lc->sizelimit;
	if (lc->flags & LOOPDEV_FL_READONLY)
		info->lo_flags |= LO_FLAGS_READ_ONLY;
	if (lc->flags & LOOPDEV_FL_AUTOCLEAR)
		info->lo_flags |= LO_FLAGS_AUTOCLEAR;
	if (lc->flags & LOOPDEV_FL_PARTSCAN)
		info->lo_flags |= LO_FLAGS_PARTSCAN;
	if (lc->want_dio)
		info->lo_flags |= LO_FLAGS_DIRECT_IO;
	/* lo_file_name is informational; keep the tail of a long path */
	if (n >= LO_NAME_SIZE)
		name += n - (LO_NAME_SIZE - 1);
	memcpy(info->lo_file_name, name, strlen(name));
}

/* Pre-5.8: bind, then configure step by step; release on failure. */
static int configure_legacy(struct loopdev_ctx *lc)
{
	struct loop_info64 info;
	int rc;

	if (ioctl(lc->fd, LOOP_SET_FD, lc->back_fd) < 0)
		return -errno;
	lc->flags |= LOOPDEV_FL_CLAIMED;

	fill_info(lc, &info);
	rc = ioctl_retry(lc->fd, LOOP_SET_STATUS64, (unsigned long)&info);
	if (!rc && lc->sector_attach)
		rc = ioctl_retry(lc->fd, LOOP_SET_BLOCK_SIZE,
				 lc->sector_attach);
	/*
	 * EINVAL here means "direct I/O impossible": the caller reads the
	 * state back and decides.
	 */
	if (!rc && lc->want_dio &&
	    ioctl(lc->fd, LOOP_SET_DIRECT_IO, 1UL) < 0 && errno != EINVAL)
		rc = -errno;
	if (rc) {
		release_claimed(lc);
		return rc;
	}
	return 0;
}

static int configure(struct loopdev_ctx *lc)
{
	struct loop_config cfg;

	if (!(lc->flags & (LOOPDEV_FL_LEGACY | LOOPDEV_FL_USED_LEGACY))) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (__u32)lc->back_fd;
		cfg.block_size = lc->sector_attach;
		fill_info(lc, &cfg.info);
		if (ioctl(lc->fd, LOOP_CONFIGURE, &cfg) == 0) {
			lc->flags |= LOOPDEV_FL_CLAIMED;
			return 0;
		}
		/*
		 * Unknown ioctls end in lo_simple_ioctl()'s EINVAL before
		 * 5.8; nothing is bound after a failed LOOP_CONFIGURE, so
		 * the old path can safely try and report its own error.
		 */
		if (errno != EINVAL && errno != ENOTTY)
			return -errno;
		lc->flags |= LOOPDEV_FL_USED_LEGACY;
	}
	if (lc->flags & LOOPDEV_FL_LEGACY)
		lc->flags |= LOOPDEV_FL_USED_LEGACY;
	return configure_legacy(lc);
}

/*
 * The backing descriptor never carries O_DIRECT into the kernel: before
 * commit f2fed441c69b ("loop: stop using vfs_iter_{read,write} for
 * buffered I/O", 6.15) lo_read_simple()/lo_write_bvec() build their
 * kiocb from the file's flags, so "buffered" I/O on an O_DIRECT file is
 * direct I/O whatever LOOP_SET_DIRECT_IO says, and LOOP_SET_BLOCK_SIZE
 * and LOOP_CHANGE_FD turn direct I/O back on from it (loop_update_dio()).
 * Direct I/O is asked for with LO_FLAGS_DIRECT_IO alone; the sector size
 * 6.1 derived from O_DIRECT is passed explicitly (loopdev_plan()).
 */
static int clear_backing_odirect(struct loopdev_ctx *lc)
{
	int fl = fcntl(lc->back_fd, F_GETFL);

	if (fl < 0)
		return -errno;
	if (!(fl & O_DIRECT))
		return 0;
	return fcntl(lc->back_fd, F_SETFL, fl & ~O_DIRECT) < 0 ? -errno : 0;
}

static int attach_named(struct loopdev_ctx *lc)
{
	int rc;

	lc->alloc_tries = 1;
	rc = loopdev_open(lc, O_RDWR);
	if (rc)
		return rc;
	rc = configure(lc);
	if (rc == -EAGAIN) {
		pause_us(LOOPDEV_EAGAIN_PAUSE_US);
		rc = configure(lc);
	}
	return rc;
}

/*
 * Find a free device and bind it. The flock serialises loopctl (and
 * systemd, which takes the same lock) between LOOP_CTL_GET_FREE and the
 * bind; tools that do not lock can still take "our" device first: the
 * bind then fails with EBUSY and we retry with another one.
 */
static int attach_free(struct loopdev_ctx *lc)
{
	unsigned int attempt;
	int nr, rc = -EBUSY;

	lc->ctl_fd = open(LOOPDEV_CONTROL, O_RDWR | O_CLOEXEC);
	if (lc->ctl_fd < 0)
		return -errno;
	while (flock(lc->ctl_fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			rc = -errno;
			goto out;
		}

	for (attempt = 0; attempt < LOOPDEV_ALLOC_TRIES; attempt++) {
		lc->alloc_tries = attempt + 1;
		nr = ioctl(lc->ctl_fd, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			rc = -errno;
			if (rc != -EBUSY && rc != -EAGAIN && rc != -EINTR)
				break;
			backoff(attempt);
			continue;
		}
		loopdev_set_device_nr(lc, nr);
		rc = loopdev_open(lc, O_RDWR);
		if (rc == -ENOENT || rc == -ENXIO) {
			/* removed meanwhile, or the node is not there yet */
			backoff(attempt);
			continue;
		}
		if (rc)
			break;
		rc = configure(lc);
		if (rc != -EBUSY && rc != -EAGAIN)
			break;
		close_fd(&lc->fd);
		backoff(attempt);
	}
	if (rc == -ENOENT || rc == -ENXIO)
		rc = -EBUSY;
	flock(lc->ctl_fd, LOCK_UN);
out:
	close_fd(&lc->ctl_fd);
	return rc;
}

int loopdev_attach(struct loopdev_ctx *lc)
{
	struct loopdev_dio d;
	int rc;

	if (lc->back_fd < 0)
		return -EBADF;
	if (!lc->planned) {
		rc = loopdev_plan(lc, &d);
		if (rc)
			return rc;
	}
	lc->attached_plain = false;
	rc = clear_backing_odirect(lc);
	if (rc)
		return rc;

	rc = lc->nr >= 0 ? attach_named(lc) : attach_free(lc);
	if (rc)
		goto fail;

	rc = loopdev_read_state(lc);
	if (!rc && !lc->state.bound)
		rc = -ENXIO;		/* detached under us */
	if (rc)
		goto fail;
	if (lc->dio == LOOPDEV_DIO_ON && !lc->state.dio) {
		rc = -EOPNOTSUPP;
		goto fail;
	}
	lc->attached_plain = true;
	return 0;
fail:
	release_claimed(lc);
	memset(&lc->state, 0, sizeof(lc->state));
	return rc;
}

int loopdev_release(struct loopdev_ctx *lc)
{
	if (!(lc->flags & LOOPDEV_FL_CLAIMED) || lc->fd < 0)
		return -EPERM;
	if (ioctl(lc->fd, LOOP_CLR_FD, 0) < 0)
		return -errno;
	lc->flags &= ~LOOPDEV_FL_CLAIMED;
	memset(&lc->state, 0, sizeof(lc->state));
	return 0;
}

/* ------------------------------------------------------------------ */
/* set, detach, remove                                                 */

/* The analysis of a bound device's backing file at @sector. */
static int dio_for_sector(struct loopdev_ctx *lc, uint32_t sector,
			  struct loopdev_dio *d)
{
	int fd, rc;

	memset(d, 0, sizeof(*d));
	fd = loopdev_open_bound_backing(lc);
	if (fd < 0)
		return fd;
	d->offset = lc->state.offset;
	d->sector_size = sector;
	rc = loopdev_check_dio(fd, d);
	close(fd);
	return rc;
}

int loopdev_dio_for_state(struct loopdev_ctx *lc, struct loopdev_dio *d)
{
	return dio_for_sector(lc, lc->state.sector_size, d);
}

static int set_sector(struct loopdev_ctx *lc, uint32_t size)
{
	return ioctl_retry(lc->fd, LOOP_SET_BLOCK_SIZE, size);
}

int loopdev_retune(struct loopdev_ctx *lc, struct loopdev_dio *d)
{
	struct loopdev_served_facts f;
	uint32_t old_sector, new_sector;
	bool old_dio, want;
	int rc;

	memset(d, 0, sizeof(*d));
	if (lc->fd < 0)
		return -EBADF;
	rc = loopdev_read_state(lc);
	if (rc)
		return rc;
	if (!lc->state.bound)
		return -ENXIO;
	old_sector = lc->state.sector_size;
	old_dio = lc->state.dio;

	/*
	 * Predict before changing anything. Without the backing file (it
	 * was deleted or renamed) the kernel's EINVAL is the only answer.
	 */
	if (lc->flags & LOOPDEV_FL_SECTOR_AUTO) {
		rc = dio_for_sector(lc, 0, d);
		if (rc)
			return rc;
		new_sector = loopdev_auto_sector(d);
	} else {
		new_sector = lc->sector_size ? lc->sector_size : old_sector;
	}
	if (dio_for_sector(lc, new_sector, d))
		memset(d, 0, sizeof(*d));

	switch (lc->dio) {
	case LOOPDEV_DIO_OFF:
		want = false;
		break;
	case LOOPDEV_DIO_KEEP:
		/* keeping direct I/O must not turn it off silently */
		want = old_dio;
		if (want && d->sector_used && !loopdev_dio_possible(d))
			return -EOPNOTSUPP;
		break;
	case LOOPDEV_DIO_ON:
		want = true;
		if (d->sector_used && !loopdev_dio_possible(d))
			return -EOPNOTSUPP;
		break;
	case LOOPDEV_DIO_AUTO:
	default:
		want = !d->sector_used || loopdev_dio_possible(d);
		break;
	}

	/*
	 * Asked to go buffered on a kernel whose buffered path may still
	 * be direct for this device (an O_DIRECT backing file): the result
	 * could not be told, so do not pretend.
	 */
	if (!want && lc->dio != LOOPDEV_DIO_KEEP) {
		rc = loopdev_served_facts(lc, NULL, &f);
		if (rc)
			return rc;
		f.dio = false;
		if (loopdev_served_decide(&f, NULL) == LOOPDEV_SERVED_UNKNOWN)
			return -EMEDIUMTYPE;
	}

	/*
	 * Write back what sits in the device's cache first: the kernel
	 * syncs too, but an error is better seen here.
	 */
	if (fsync(lc->fd) < 0 && errno != EINVAL && errno != EROFS)
		return -errno;

	/*
	 * Sector size first: before f2fed441c69b LOOP_SET_BLOCK_SIZE re-runs
	 * loop_update_dio() with the backing file's O_DIRECT flag, which
	 * would undo an earlier LOOP_SET_DIRECT_IO(0) on a device attached
	 * by others with an O_DIRECT file (loopctl's own attaches have none),
	 * and LOOP_SET_DIRECT_IO(1) fails while the sector size is still too
	 * small.
	 */
	if (new_sector != old_sector) {
		rc = set_sector(lc, new_sector);
		if (rc)
			return rc;
	}
	if (ioctl(lc->fd, LOOP_SET_DIRECT_IO, (unsigned long)want) < 0) {
		rc = -errno;
		if (rc == -EINVAL && want && lc->dio == LOOPDEV_DIO_AUTO) {
			rc = 0;		/* auto: buffered is an answer */
		} else {
			/* put things back as they were */
			if (new_sector != old_sector)
				set_sector(lc, old_sector);
			ioctl(lc->fd, LOOP_SET_DIRECT_IO,
			      (unsigned long)old_dio);
			if (rc == -EINVAL && want)
				rc = -EOPNOTSUPP;
		}
	}
	if (rc) {
		loopdev_read_state(lc);
		return rc;
	}
	rc = loopdev_read_state(lc);
	if (!rc && want && !lc->state.dio && lc->dio != LOOPDEV_DIO_AUTO) {
		/*
		 * loop_set_dio() returned 0, so this would be a kernel that
		 * lies: put things back and say so
		 */
		if (new_sector != old_sector)
			set_sector(lc, old_sector);
		ioctl(lc->fd, LOOP_SET_DIRECT_IO, (unsigned long)old_dio);
		loopdev_read_state(lc);
		rc = -EOPNOTSUPP;
	}
	return rc;
}

int loopdev_detach(struct loopdev_ctx *lc, bool *deferred)
{
	dev_t dev;
	ino_t ino;
	int rc;

	*deferred = false;
	if (lc->fd < 0)
		return -EBADF;
	rc = loopdev_read_state(lc);
	if (rc)
		return rc;
	if (!lc->state.bound)
		return -ENXIO;
	dev = lc->state.back_dev;
	ino = lc->state.back_ino;

	if (ioctl(lc->fd, LOOP_CLR_FD, 0) < 0)
		return -errno;

	/*
	 * loop_clr_fd() returns 0 both when it detached and when others
	 * hold the device open and it only set LO_FLAGS_AUTOCLEAR.
	 */
	rc = loopdev_read_state(lc);
	if (rc)
		return rc;
	if (lc->state.bound && lc->state.autoclear &&
	    lc->state.back_dev == dev && lc->state.back_ino == ino)
		*deferred = true;
	return 0;
}

int loopdev_remove(struct loopdev_ctx *lc)
{
	int tries, rc = 0;

	if (lc->nr < 0)
		return -EINVAL;
	close_fd(&lc->fd);	/* our own open would make it busy */
	lc->ctl_fd = open(LOOPDEV_CONTROL, O_RDWR | O_CLOEXEC);
	if (lc->ctl_fd < 0)
		return -errno;
	while (flock(lc->ctl_fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			rc = -errno;
			goto out;
		}
	for (tries = 0; ; tries++) {
		if (ioctl(lc->ctl_fd, LOOP_CTL_REMOVE, lc->nr) >= 0) {
			rc = 0;
			break;
		}
		rc = -errno;
		if (rc != -EBUSY || tries + 1 >= LOOPDEV_REMOVE_TRIES)
			break;
		pause_us(LOOPDEV_REMOVE_PAUSE_US);
	}
	flock(lc->ctl_fd, LOCK_UN);
out:
	close_fd(&lc->ctl_fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* page-cache residency                                                */

int loopdev_cache_file(int fd, uint64_t size, uint64_t *cached)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off, len, i, pages;
	unsigned char *vec;
	void *map;
	int rc = 0;

	*cached = 0;
	if (!size)
		return 0;
	vec = malloc(LOOPDEV_MINCORE_WINDOW / page);
	if (!vec)
		return -ENOMEM;
	for (off = 0; off < size; off += LOOPDEV_MINCORE_WINDOW) {
		len = size - off;
		if (len > LOOPDEV_MINCORE_WINDOW)
			len = LOOPDEV_MINCORE_WINDOW;
		/* mapping reads nothing; mincore() never faults pages in */
		map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
		if (map == MAP_FAILED) {
			rc = -errno;
			break;
		}
		pages = (len + page - 1) / page;
		if (mincore(map, len, vec) < 0) {
			rc = -errno;
			munmap(map, len);
			break;
		}
		for (i = 0; i < pages; i++)
			if (vec[i] & 1)
				*cached += i + 1 == pages && len % page ?
					   len % page : page;
		munmap(map, len);
	}
	free(vec);
	return rc;
}

int loopdev_cache(struct loopdev_ctx *lc, struct loopdev_cache *c)
{
	struct stat st;
	uint64_t size;
	int fd, rc;

	memset(c, 0, sizeof(*c));
	if (lc->fd < 0) {
		rc = loopdev_open(lc, O_RDONLY);
		if (rc)
			return rc;
	}
	rc = loopdev_read_state(lc);
	if (rc)
		return rc;
	if (!lc->state.bound)
		return -ENXIO;

	if (ioctl(lc->fd, BLKGETSIZE64, &size) < 0)
		return -errno;
	c->dev_size = size;
	rc = loopdev_cache_file(lc->fd, size, &c->dev_cached);
	if (rc)
		return rc;

	fd = loopdev_open_bound_backing(lc);
	if (fd < 0)
		return 0;	/* deleted or replaced: back_known false */
	if (fstat(fd, &st) == 0) {
		if (S_ISBLK(st.st_mode)) {
			if (ioctl(fd, BLKGETSIZE64, &size) < 0)
				size = 0;
		} else {
			size = (uint64_t)st.st_size;
		}
		c->back_size = size;
		if (loopdev_cache_file(fd, size, &c->back_cached) == 0)
			c->back_known = true;
	}
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* what was asked for                                                  */

static const char *const dio_words[] = {
	[LOOPDEV_DIO_KEEP] = "keep",
	[LOOPDEV_DIO_OFF] = "off",
	[LOOPDEV_DIO_AUTO] = "auto",
	[LOOPDEV_DIO_ON] = "on",
};

static int request_path(const struct loopdev_ctx *lc, char *buf, size_t len)
{
	int n = snprintf(buf, len, LOOPDEV_STATE_DIR "/loop%d", lc->nr);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
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

/* /sys/block/loopN/diskseq (5.15): a new value with every bind. */
static int read_diskseq(const struct loopdev_ctx *lc, uint64_t *seq)
{
	return loop_read_u64(lc, "diskseq", seq);
}

int loopdev_save_request(struct loopdev_ctx *lc, enum loopdev_dio_mode dio)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32], seq_line[48] = "";
	struct loopdev_request old;
	bool plain = lc->attached_plain;
	uint64_t seq;
	dev_t dev;
	ino_t ino;
	FILE *f;
	int fd, rc;

	if (dio == LOOPDEV_DIO_KEEP)
		return 0;
	rc = request_path(lc, path, sizeof(path));
	if (!rc)
		rc = loopdev_backing_id(lc, &dev, &ino);
	if (rc)
		return rc;
	/* set keeps what attach knew about this binding */
	if (!plain && !loopdev_load_request(lc, &old))
		plain = old.plain;
	if (!read_diskseq(lc, &seq))
		snprintf(seq_line, sizeof(seq_line), "diskseq=%" PRIu64 "\n",
			 seq);
	if (mkdir(LOOPDEV_STATE_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	fprintf(f, "dio=%s\nbackdev=%u:%u\nbackino=%" PRIu64 "\n%s%s",
		dio_words[dio], major(dev), minor(dev), (uint64_t)ino,
		seq_line, plain ? "odirect=0\n" : "");
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	return 0;
}

int loopdev_load_request(struct loopdev_ctx *lc, struct loopdev_request *req)
{
	char path[PATH_MAX], buf[256], word[16];
	unsigned int ma, mi;
	uint64_t ino_rec, seq_rec, seq;
	const char *p;
	dev_t dev;
	ino_t ino;
	size_t i;
	int rc;

	memset(req, 0, sizeof(*req));
	rc = request_path(lc, path, sizeof(path));
	if (rc)
		return rc;
	rc = read_str(path, buf, sizeof(buf));
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	p = strstr(buf, "backdev=");
	if (!p || sscanf(p, "backdev=%u:%u", &ma, &mi) != 2)
		return 0;
	p = strstr(buf, "backino=");
	if (!p || sscanf(p, "backino=%" SCNu64, &ino_rec) != 1)
		return 0;
	if (sscanf(buf, "dio=%15s", word) != 1)
		return 0;
	/* a record for another file is stale: say "unknown" */
	if (loopdev_backing_id(lc, &dev, &ino) || dev != makedev(ma, mi) ||
	    (uint64_t)ino != ino_rec)
		return 0;
	/*
	 * So is one of another binding: the same file (or a new file with
	 * the same inode number) bound again, by anyone, has another
	 * diskseq. Without diskseq (before 5.15) the file's identity is all
	 * there is.
	 */
	p = strstr(buf, "diskseq=");
	if (p && (sscanf(p, "diskseq=%" SCNu64, &seq_rec) != 1 ||
		  read_diskseq(lc, &seq) || seq != seq_rec))
		return 0;
	for (i = LOOPDEV_DIO_OFF; i < ARRAY_SIZE(dio_words); i++)
		if (!strcmp(word, dio_words[i])) {
			req->known = true;
			req->dio = (enum loopdev_dio_mode)i;
		}
	req->plain = req->known && strstr(buf, "\nodirect=0") != NULL;
	return 0;
}

void loopdev_forget_request(struct loopdev_ctx *lc)
{
	char path[PATH_MAX];

	if (!request_path(lc, path, sizeof(path)))
		unlink(path);
}

/* ------------------------------------------------------------------ */
/* what the backing file is really served                              */

/*
 * The first release of each series with commit f2fed441c69b ("loop:
 * stop using vfs_iter_{read,write} for buffered I/O"): 6.15 upstream,
 * and its stable backports. From that commit on, loop's buffered path
 * builds its own kiocb without the backing file's O_DIRECT. A release
 * at or past an entry marked @onwards has it whatever its series.
 */
static const struct {
	unsigned int v[3];
	bool onwards;
} fixed_releases[] = {
	{ { 6, 12, 25 }, false },
	{ { 6, 14, 4 }, false },
	{ { 6, 15, 0 }, true },
};

int loopdev_parse_release(const char *release, unsigned int v[3])
{
	const char *p = release;
	unsigned long n;
	char *end;
	int i;

	v[0] = v[1] = v[2] = 0;
	for (i = 0; i < 3; i++) {
		/* "6.15-rc1" has no third number: 0 */
		if (*p < '0' || *p > '9')
			return i < 2 ? -EINVAL : 0;
		errno = 0;
		n = strtoul(p, &end, 10);
		if (errno || n > UINT_MAX)
			return -EINVAL;
		v[i] = (unsigned int)n;
		p = end;
		if (*p != '.')
			return i < 1 ? -EINVAL : 0;
		p++;
	}
	return 0;
}

/* <0, 0, >0 as @a is older than, the same as, newer than @b. */
static int release_cmp(const unsigned int a[3], const unsigned int b[3])
{
	int i;

	for (i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

bool loopdev_release_has_fix(const char *release)
{
	unsigned int v[3];
	size_t i;

	if (!release || loopdev_parse_release(release, v))
		return false;
	for (i = 0; i < ARRAY_SIZE(fixed_releases); i++) {
		const unsigned int *f = fixed_releases[i].v;

		if (fixed_releases[i].onwards && release_cmp(v, f) >= 0)
			return true;
		if (v[0] == f[0] && v[1] == f[1] && v[2] >= f[2])
			return true;
	}
	return false;
}

enum loopdev_served loopdev_served_decide(const struct loopdev_served_facts *f,
					  enum loopdev_served_why *why)
{
	enum loopdev_served_why w;
	enum loopdev_served ans = LOOPDEV_SERVED_OFF;

	if (f->dio) {
		w = LOOPDEV_SERVED_DIO_FLAG;	/* lo_rw_aio(), IOCB_DIRECT */
		ans = LOOPDEV_SERVED_ON;
	} else if (f->series) {
		w = LOOPDEV_SERVED_SERIES;
	} else if (loopdev_release_has_fix(f->release)) {
		w = LOOPDEV_SERVED_RELEASE;
	} else if (f->plain) {
		w = LOOPDEV_SERVED_PLAIN;
	} else {
		w = LOOPDEV_SERVED_INHERITS;
		ans = LOOPDEV_SERVED_UNKNOWN;
	}
	if (why)
		*why = w;
	return ans;
}

int loopdev_served_facts(struct loopdev_ctx *lc,
			 const struct loopdev_request *req,
			 struct loopdev_served_facts *f)
{
	struct loopdev_request own;
	struct utsname u;

	memset(f, 0, sizeof(*f));
	if (!lc->state.bound)
		return -ENXIO;
	f->dio = lc->state.dio;
	/*
	 * The series' loop/stat (kernel/patches/0005) travels with its
	 * backport of f2fed441c69b (0004): loopdev_read_state() read it.
	 */
	f->series = lc->state.stat.present;
	if (uname(&u) == 0)
		copy_str(f->release, sizeof(f->release), u.release);
	/* no record, or one we may not read: not known to be plain */
	if (!req && loopdev_load_request(lc, &own) == 0)
		req = &own;
	if (req)
		f->plain = req->plain;
	return 0;
}

enum loopdev_served loopdev_dio_served(struct loopdev_ctx *lc,
				       const struct loopdev_request *req,
				       enum loopdev_served_why *why)
{
	struct loopdev_served_facts f;

	if (loopdev_served_facts(lc, req, &f)) {
		if (why)
			*why = LOOPDEV_SERVED_INHERITS;
		return LOOPDEV_SERVED_UNKNOWN;
	}
	return loopdev_served_decide(&f, why);
}
