// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Why direct I/O is on or off for a loop device's backing file: the
 * facts about the file (fstat, fcntl, statx, sysfs), the rules 6.1's
 * __loop_update_dio() applies to them (loopdev_dio_judge(), pure, so the
 * unit tests check every rule from a table), the plan attach follows,
 * and what a bound device's backing file is really served. It never
 * prints; every function returns 0 or -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/fs.h>

#include "c.h"
#include "loopdev-dio.h"
#include "loopdev-private.h"

/*
 * STATX_DIOALIGN is Linux 6.1 (ext4, f2fs, xfs, block devices). Headers
 * without it lack the struct fields too: read them through the kernel's
 * layout of struct statx.
 */
#ifndef STATX_DIOALIGN
# define STATX_DIOALIGN		0x00002000U
# define LOOPDEV_STATX_COMPAT	1
#endif

/* ------------------------------------------------------------------ */
/* the facts                                                           */

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

/*
 * File system type of a device number, from /proc/self/mountinfo. The
 * last answer is kept: a listing of many devices whose backing files
 * share a file system parses the table once, not once a device.
 */
static void fstype_of(dev_t dev, char *buf, size_t len)
{
	static dev_t last_dev;
	static char last[32];
	char want[32], *line = NULL, *p, *sep;
	size_t cap = 0;
	FILE *f;

	if (last[0] && dev == last_dev) {
		loopdev_copy_str(buf, len, last);
		return;
	}
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
		loopdev_copy_str(buf, len, sep);
		loopdev_copy_str(last, sizeof(last), sep);
		last_dev = dev;
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
	loopdev_copy_str(name, namelen, base ? base + 1 : link);

	snprintf(path, sizeof(path), SYSFS_DEV_BLOCK
		 "/%u:%u/queue/logical_block_size", major(dev), minor(dev));
	rc = loopdev_read_u64(path, &v);
	if (rc == -ENOENT) {
		snprintf(path, sizeof(path), SYSFS_DEV_BLOCK
			 "/%u:%u/../queue/logical_block_size",
			 major(dev), minor(dev));
		rc = loopdev_read_u64(path, &v);
	}
	if (rc)
		return rc;
	if (!v || v > UINT32_MAX)
		return -EINVAL;
	*lbs = (uint32_t)v;
	return 0;
}

/*
 * Would an O_DIRECT open succeed? do_dentry_open() and setfl() apply the
 * same test (FMODE_CAN_ODIRECT, i.e. a ->direct_IO address space
 * operation), so flipping the flag on our descriptor answers without
 * opening the file again. @err: 0, or the errno F_SETFL gave.
 */
static int probe_odirect(int fd, int *err)
{
	int fl = fcntl(fd, F_GETFL);

	*err = 0;
	if (fl < 0)
		return -errno;
	if (fl & O_DIRECT)
		return 0;
	if (fcntl(fd, F_SETFL, fl | O_DIRECT) < 0)
		*err = errno;
	else if (fcntl(fd, F_SETFL, fl) < 0)
		return -errno;
	return 0;
}

/*
 * The device __loop_update_dio() checks: the block device itself, or
 * the file system's s_bdev (none for tmpfs, 9p, NFS, overlay).
 */
static void gather_bdev(int fd, const struct stat *st, struct loopdev_dio *d)
{
	uint32_t lbs_sysfs;
	int lbs;

	if (S_ISBLK(st->st_mode)) {
		snprintf(d->fstype, sizeof(d->fstype), "block device");
		d->bdev = st->st_rdev;
		if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs > 0)
			d->bdev_lbs = (uint32_t)lbs;
		if (bdev_lbs_sysfs(st->st_rdev, d->bdev_name,
				   sizeof(d->bdev_name), &lbs_sysfs) == 0 &&
		    !d->bdev_lbs)
			d->bdev_lbs = lbs_sysfs;
		return;
	}
	fstype_of(st->st_dev, d->fstype, sizeof(d->fstype));
	if (major(st->st_dev) != 0 &&
	    bdev_lbs_sysfs(st->st_dev, d->bdev_name, sizeof(d->bdev_name),
			   &d->bdev_lbs) == 0)
		d->bdev = st->st_dev;
	else
		d->bdev_lbs = 0;
}

/* The file facts of @d for the open backing file @fd. */
static int dio_gather(int fd, struct loopdev_dio *d)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return -EINVAL;
	d->type = st.st_mode & S_IFMT;
	d->st_dev = st.st_dev;
	d->st_ino = st.st_ino;
	d->bdev = 0;
	d->bdev_lbs = 0;
	d->bdev_name[0] = '\0';
	d->has_dioalign = false;
	d->dio_offset_align = d->dio_mem_align = 0;

	rc = probe_odirect(fd, &d->odirect_errno);
	if (rc)
		return rc;
	gather_bdev(fd, &st, d);
	/* 6.1+; older kernels ignore the mask bit and leave it unset */
	rc = get_dioalign(fd, d);
	if (rc && rc != -EINVAL && rc != -ENOSYS)
		return rc;
	return 0;
}
/* ------------------------------------------------------------------ */
/* the rules                                                           */

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

void loopdev_dio_judge(struct loopdev_dio *d)
{
	uint32_t align;

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
	else if (d->type == S_IFREG && !d->odirect_errno && d->bdev_lbs)
		d->sector_used = d->bdev_lbs;
	else
		d->sector_used = LOOPDEV_SECTOR_MIN;

	align = max_u32(d->bdev_lbs, LOOPDEV_SECTOR_MIN);
	if (d->has_dioalign && d->dio_offset_align > 1)
		align = max_u32(align, d->dio_offset_align);
	d->required = align;

	d->reasons = 0;
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
}

int loopdev_check_dio(int fd, struct loopdev_dio *d)
{
	int rc = dio_gather(fd, d);

	if (rc)
		return rc;
	loopdev_dio_judge(d);
	return 0;
}
/* ------------------------------------------------------------------ */
/* the plan                                                            */

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

int loopdev_dio_at_sector(struct loopdev_ctx *lc, uint32_t sector,
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

/* The running kernel's release, asked once (a listing asks per device). */
static const char *kernel_release(void)
{
	static struct utsname u;
	static bool asked;

	if (!asked && uname(&u) < 0)
		u.release[0] = '\0';
	asked = true;
	return u.release;
}

int loopdev_served_facts(struct loopdev_ctx *lc,
			 struct loopdev_served_facts *f)
{
	memset(f, 0, sizeof(*f));
	if (!lc->state.bound)
		return -ENXIO;
	f->dio = lc->state.dio;
	/*
	 * The series' loop/stat (kernel/patches/0005) travels with its
	 * backport of f2fed441c69b (0004): loopdev_read_state() read it.
	 */
	f->series = lc->state.stat.present;
	loopdev_copy_str(f->release, sizeof(f->release), kernel_release());
	f->plain = lc->plain;
	return 0;
}

enum loopdev_served loopdev_dio_served(struct loopdev_ctx *lc,
				       enum loopdev_served_why *why)
{
	struct loopdev_served_facts f;

	if (loopdev_served_facts(lc, &f)) {
		if (why)
			*why = LOOPDEV_SERVED_INHERITS;
		return LOOPDEV_SERVED_UNKNOWN;
	}
	return loopdev_served_decide(&f, why);
}
