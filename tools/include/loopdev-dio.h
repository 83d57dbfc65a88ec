/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why direct I/O is or is not on for a loop device's backing file, by
 * the rules of the kernel's __loop_update_dio() (Linux 6.1) and
 * STATX_DIOALIGN: the facts about a file, a pure function that applies
 * the rules to them, the plan attach follows, and what a bound device's
 * backing file is really served (loopdev-dio.c). Functions return 0 or
 * -errno and never print.
 */
#ifndef NBIO_LOOPDEV_DIO_H
#define NBIO_LOOPDEV_DIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "loopdev.h"

/*
 * Why direct I/O cannot work (struct loopdev_dio.reasons). The first
 * three are __loop_update_dio()'s own tests: the kernel then keeps
 * direct I/O off without an error. The others are ours.
 */
enum {
	/*
	 * the file system refuses O_DIRECT (no ->direct_IO: tmpfs before
	 * 6.6, ramfs, 9p without cache=none, ...)
	 */
	LOOPDEV_DIO_NO_ODIRECT	= (1 << 0),
	/* loop sector size < the backing device's logical block size */
	LOOPDEV_DIO_SECTOR	= (1 << 1),
	/* offset not a multiple of the backing device's logical block size */
	LOOPDEV_DIO_OFFSET	= (1 << 2),
	/*
	 * sector size or offset below STATX_DIOALIGN's offset alignment: the
	 * kernel would turn direct I/O on and the I/O would then fail
	 */
	LOOPDEV_DIO_FS_ALIGN	= (1 << 3),
	/* the alignment needed is larger than any loop sector size */
	LOOPDEV_DIO_TOO_LARGE	= (1 << 4),
	/* warnings, not blocking: */
	/*
	 * STATX_DIOALIGN says the file cannot do direct I/O although O_DIRECT
	 * opens succeed (ext4 data=journal...): served through the cache
	 */
	LOOPDEV_DIO_FS_BUFFERED	= (1 << 8),
	/* no STATX_DIOALIGN answer and no block device: alignment unknown */
	LOOPDEV_DIO_ALIGN_UNKNOWN = (1 << 9),
};
#define LOOPDEV_DIO_BLOCKING	(LOOPDEV_DIO_NO_ODIRECT | LOOPDEV_DIO_SECTOR | \
				 LOOPDEV_DIO_OFFSET | LOOPDEV_DIO_FS_ALIGN | \
				 LOOPDEV_DIO_TOO_LARGE)

/* The direct I/O analysis of one backing file (see loopdev_check_dio). */
struct loopdev_dio {
	/* inputs */
	uint64_t offset;		/* loop offset in bytes */
	uint32_t sector_size;		/* loop sector size, 0: default */
	/* file facts */
	mode_t type;			/* S_IFREG or S_IFBLK */
	dev_t st_dev;			/* the file's device and inode */
	ino_t st_ino;
	char fstype[32];		/* "ext4", "tmpfs", "block device"... */
	int odirect_errno;		/* 0: O_DIRECT accepted, else errno */
	bool has_dioalign;		/* statx answered STATX_DIOALIGN */
	uint32_t dio_offset_align;	/* 0: file system cannot do DIO */
	uint32_t dio_mem_align;
	dev_t bdev;			/* device the kernel checks, 0: none */
	char bdev_name[32];		/* its sysfs name, e.g. "vdb" */
	uint32_t bdev_lbs;		/* its logical block size, 0: none */
	/* conclusions */
	uint32_t required;		/* sector/offset alignment needed */
	uint32_t sector_used;		/* sector size that was evaluated */
	uint32_t best_sector;		/* smallest size for DIO, 0: none */
	unsigned int reasons;		/* LOOPDEV_DIO_* */
};

static inline bool loopdev_dio_possible(const struct loopdev_dio *d)
{
	return !(d->reasons & LOOPDEV_DIO_BLOCKING);
}

/*
 * loopdev_check_dio - could direct I/O work for this file?
 * @fd: the backing file (its O_DIRECT flag is probed and restored)
 * @d: in: offset and sector_size (0 = what attach picks when it wants
 *     direct I/O and none is given: for a regular file on a block
 *     device that file's device's logical block size, as 6.1's
 *     loop_configure() did for a file opened O_DIRECT, else 512);
 *     out: every fact and the reasons
 *
 * Applies __loop_update_dio() (6.1) and STATX_DIOALIGN (6.1; the backing
 * device's logical block size from sysfs or BLKSSZGET otherwise). Needs
 * no loop device. Returns 0 (see loopdev_dio_possible()) or -errno.
 */
int loopdev_check_dio(int fd, struct loopdev_dio *d);

/*
 * loopdev_dio_judge - the rules, pure: from @d's inputs and file facts
 * (as loopdev_check_dio() gathers them) fill its conclusions: the sector
 * size evaluated (the one given, else what attach picks), the alignment
 * required, the reasons, and the smallest sector size that allows
 * direct I/O. Touches nothing else; the unit tests call it with facts
 * of their own.
 */
void loopdev_dio_judge(struct loopdev_dio *d);

/*
 * loopdev_auto_sector - the sector size LOOPDEV_FL_SECTOR_AUTO picks from
 * an analysis: the smallest that allows direct I/O, else 512.
 */
static inline uint32_t loopdev_auto_sector(const struct loopdev_dio *d)
{
	return d->best_sector ? d->best_sector : LOOPDEV_SECTOR_MIN;
}

/*
 * loopdev_check_dio_request - loopdev_check_dio() of @fd at the offset
 * and sector size @lc asks for; with LOOPDEV_FL_SECTOR_AUTO at the size
 * loopdev_auto_sector() picks. @d->sector_size says which was used.
 * Returns as loopdev_check_dio().
 */
int loopdev_check_dio_request(const struct loopdev_ctx *lc, int fd,
			      struct loopdev_dio *d);

/*
 * loopdev_backing_size - the size in bytes of a regular file or a block
 * device (BLKGETSIZE64), by descriptor.
 * Returns 0, -EINVAL for any other type, or -errno.
 */
int loopdev_backing_size(int fd, uint64_t *size);

/*
 * loopdev_check_extent - is there anything to attach at @offset?
 * @size: out, may be NULL: the size of the backing file
 *
 * Returns 0, -ENODATA when the file is empty or @offset is at or past
 * its end (the kernel would make a device of 0 bytes), or -errno.
 */
int loopdev_check_extent(int fd, uint64_t offset, uint64_t *size);

/*
 * loopdev_plan - decide how attach will set the device up.
 * @d: out: the direct I/O analysis (zeroed when direct I/O is off and
 *     the sector size is explicit)
 *
 * Resolves LOOPDEV_FL_SECTOR_AUTO (the smallest sector size that allows
 * direct I/O, else 512), whether direct I/O will be asked for (with
 * LOOPDEV_DIO_AUTO only when possible), and the sector size attach
 * passes (loopdev_get_attach_sector()). Touches no loop device. Returns 0,
 * -ENODATA when there is nothing to attach (loopdev_check_extent()),
 * -EOPNOTSUPP for LOOPDEV_DIO_ON when direct I/O is impossible, -errno.
 * The backing file's size it judged is in loopdev_get_back_size().
 */
int loopdev_plan(struct loopdev_ctx *lc, struct loopdev_dio *d);

/*
 * loopdev_dio_at_sector - loopdev_check_dio() for a bound device's
 * backing file (opened by the path sysfs shows, see
 * loopdev_open_bound_backing()), at its own offset and at sector size
 * @sector (0: what attach would pick). Returns 0 or -errno.
 */
int loopdev_dio_at_sector(struct loopdev_ctx *lc, uint32_t sector,
			  struct loopdev_dio *d);

/* loopdev_dio_at_sector() at the device's own sector size. */
static inline int loopdev_dio_for_state(struct loopdev_ctx *lc,
					struct loopdev_dio *d)
{
	return loopdev_dio_at_sector(lc, lc->state.sector_size, d);
}

/*
 * What a bound device's backing file is really served. With loop/dio 1,
 * lo_rw_aio() with IOCB_DIRECT on every kernel. With loop/dio 0, before
 * commit f2fed441c69b ("loop: stop using vfs_iter_{read,write} for
 * buffered I/O", 6.15; 6.12.25, 6.14.4) the buffered path's
 * vfs_iter_read()/vfs_iter_write() build the kiocb from the backing
 * file's open flags: a file opened O_DIRECT (losetup --direct-io=on
 * does) is still served O_DIRECT, whatever loop/dio says.
 */
enum loopdev_served {
	LOOPDEV_SERVED_UNKNOWN = 0,
	LOOPDEV_SERVED_OFF,		/* buffered: the backing file's cache */
	LOOPDEV_SERVED_ON,		/* direct I/O */
};

/* Why loopdev_dio_served() answered as it did. */
enum loopdev_served_why {
	LOOPDEV_SERVED_DIO_FLAG,	/* ON: loop/dio is 1 */
	LOOPDEV_SERVED_SERIES,		/* OFF: this project's series (loop/stat) */
	LOOPDEV_SERVED_RELEASE,		/* OFF: the release has f2fed441c69b */
	LOOPDEV_SERVED_PLAIN,		/* OFF: loopctl attached it, no O_DIRECT */
	LOOPDEV_SERVED_INHERITS,	/* UNKNOWN: may inherit O_DIRECT */
};

/* The facts loopdev_served_decide() judges. */
struct loopdev_served_facts {
	bool dio;			/* /sys/block/loopN/loop/dio */
	bool series;			/* /sys/block/loopN/loop/stat read */
	char release[65];		/* uname(2) release, "": unknown */
	bool plain;			/* loopdev_is_plain() */
};

/*
 * loopdev_parse_release - "6.12.25-amd64" to {6, 12, 25}; a missing
 * third number is 0. Returns 0 or -EINVAL.
 */
int loopdev_parse_release(const char *release, unsigned int v[3]);

/*
 * loopdev_release_has_fix - does a kernel of this release have
 * f2fed441c69b (by version: 6.15 and later, 6.12.25+, 6.14.4+)? False
 * for a release that does not parse.
 */
bool loopdev_release_has_fix(const char *release);

/*
 * loopdev_served_decide - the rules, pure: loop/dio 1 is ON; loop/dio 0
 * is OFF on a kernel whose buffered path honours it (the series, or the
 * release) or when loopctl attached the device without O_DIRECT, else
 * UNKNOWN. @why: out, may be NULL. Returns the answer.
 */
enum loopdev_served loopdev_served_decide(const struct loopdev_served_facts *f,
					  enum loopdev_served_why *why);

/*
 * loopdev_served_facts - gather the facts for a bound device whose state
 * loopdev_read_state() read (sysfs, uname(2), loopdev_is_plain()).
 * Returns 0, -ENXIO when not bound, or -errno.
 */
int loopdev_served_facts(struct loopdev_ctx *lc,
			 struct loopdev_served_facts *f);

/*
 * loopdev_dio_served - loopdev_served_facts() judged by
 * loopdev_served_decide(). @why: out, may be NULL. Returns the answer;
 * LOOPDEV_SERVED_UNKNOWN (with LOOPDEV_SERVED_INHERITS) when the facts
 * cannot be gathered.
 */
enum loopdev_served loopdev_dio_served(struct loopdev_ctx *lc,
				       enum loopdev_served_why *why);

#endif /* NBIO_LOOPDEV_DIO_H */
