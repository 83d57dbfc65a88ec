/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loop-device context: name a loop device, read its state, iterate over
 * the bound ones, attach a backing file to one with or without direct
 * I/O (loopdev-setup.c), retune, detach and remove it, and measure how
 * much of the backing file and of the device sit in the page cache
 * (loopdev.c). Why direct I/O is or is not on, and what attach plans,
 * is loopdev-dio.h. One struct loopdev_ctx per device; functions return
 * 0 or -errno and never print: the CLI owns every message.
 */
#ifndef NBIO_LOOPDEV_H
#define NBIO_LOOPDEV_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LOOPDEV_CONTROL		"/dev/loop-control"
#define LOOPDEV_MAJOR		7	/* LOOP_MAJOR, uapi/linux/major.h */
#define LOOPDEV_SECTOR_MIN	512	/* blk_validate_block_size() */

struct loopdev_dio;		/* loopdev-dio.h */

/* Direct I/O policy for attach and set. */
enum loopdev_dio_mode {
	LOOPDEV_DIO_KEEP = 0,	/* set: leave direct I/O as it is */
	LOOPDEV_DIO_OFF,	/* buffered I/O through the backing file */
	LOOPDEV_DIO_AUTO,	/* direct I/O when possible, else buffered */
	LOOPDEV_DIO_ON,		/* direct I/O or failure, nothing attached */
};

/* Setup flags (struct loopdev_ctx.flags). */
enum {
	LOOPDEV_FL_READONLY	= (1 << 0),	/* LO_FLAGS_READ_ONLY */
	LOOPDEV_FL_AUTOCLEAR	= (1 << 1),	/* detach on last close */
	LOOPDEV_FL_PARTSCAN	= (1 << 2),	/* scan for partitions */
	LOOPDEV_FL_SECTOR_AUTO	= (1 << 3),	/* smallest size allowing DIO */
	LOOPDEV_FL_LEGACY	= (1 << 4),	/* no LOOP_CONFIGURE (tests) */
	LOOPDEV_FL_RO_FALLBACK	= (1 << 5),	/* file was read-only: RO */
	LOOPDEV_FL_CLAIMED	= (1 << 6),	/* we bound it: may release */
	LOOPDEV_FL_USED_LEGACY	= (1 << 7),	/* no LOOP_CONFIGURE (< 5.8) */
};

/*
 * Loop statistics: /sys/block/loopN/loop/stat, added by the series'
 * kernel/patches/0005-loop-add-per-device-I-O-statistics.patch (see
 * Documentation/ABI/testing/sysfs-block-loop there): one line of decimal
 * fields in this order. Absent on other kernels.
 */
enum {
	LOOPDEV_STAT_DIO_READ_REQS,
	LOOPDEV_STAT_DIO_READ_BYTES,
	LOOPDEV_STAT_DIO_WRITE_REQS,
	LOOPDEV_STAT_DIO_WRITE_BYTES,
	LOOPDEV_STAT_BUF_READ_REQS,
	LOOPDEV_STAT_BUF_READ_BYTES,
	LOOPDEV_STAT_BUF_WRITE_REQS,
	LOOPDEV_STAT_BUF_WRITE_BYTES,
	LOOPDEV_STAT_FLUSH_REQS,
	LOOPDEV_STAT_DISCARD_REQS,
	LOOPDEV_STAT_DISCARD_BYTES,
	LOOPDEV_STAT_ERRORS,
	LOOPDEV_STAT_SHORT_IO,
	LOOPDEV_STAT_QUEUED,
	LOOPDEV_STAT_MAX_BACKLOG,	/* a high-water mark, not a counter */
	LOOPDEV_NR_STATS,
};

struct loopdev_stat {
	bool present;			/* the file exists and parsed */
	uint64_t v[LOOPDEV_NR_STATS];
};

/* loopdev_stat_name - "dio_read_reqs"... for LOOPDEV_STAT_*. */
const char *loopdev_stat_name(unsigned int i);

/* What a bound device looks like (sysfs, plus LOOP_GET_STATUS64). */
struct loopdev_state {
	bool bound;
	char back_file[PATH_MAX];	/* as the kernel prints it */
	uint64_t offset;
	uint64_t sizelimit;		/* 0: up to the end of the file */
	uint64_t size;			/* device size in bytes */
	uint32_t sector_size;		/* logical block size */
	bool ro, autoclear, partscan, dio;
	bool has_ino;			/* back_dev/back_ino are known */
	dev_t back_dev;
	ino_t back_ino;
	struct loopdev_stat stat;
};

struct loopdev_ctx {
	int nr;				/* N of /dev/loopN, -1: none yet */
	char path[PATH_MAX];		/* /dev/loopN */
	dev_t rdev;			/* what path was, checked; 0: unchecked */
	int fd;				/* the device, -1 */
	int ctl_fd;			/* /dev/loop-control, -1 */
	unsigned int flags;		/* LOOPDEV_FL_* */

	/* attach request */
	int back_fd;			/* owned: loopdev_open_backing() */
	char back_path[PATH_MAX];
	uint64_t offset;
	uint64_t sizelimit;
	uint32_t sector_size;		/* 0: kernel default */
	enum loopdev_dio_mode dio;
	uint64_t back_size;		/* as loopdev_plan() saw it */

	/* read back by loopdev_read_state */
	struct loopdev_state state;
	bool planned;			/* loopdev_plan() ran */
	bool want_dio;			/* its verdict: ask for direct I/O */
	uint32_t sector_attach;		/* its sector size for attach, 0: 512 */
	bool plain;			/* bound without O_DIRECT, for sure */
	unsigned int alloc_tries;	/* attach: devices tried */
};

/*
 * loopdev_init - prepare an empty context (no device, no file).
 * loopdev_deinit - close what the context holds; never detaches.
 */
void loopdev_init(struct loopdev_ctx *lc);
void loopdev_deinit(struct loopdev_ctx *lc);

/*
 * loopdev_set_device - name the loop device to work on.
 * @name: "/dev/loopN" or "loopN"
 *
 * Does not open it. Returns 0, -ENOENT if it does not exist, -ENODEV if
 * it is not a loop device (not a block device of major 7), -errno.
 */
int loopdev_set_device(struct loopdev_ctx *lc, const char *name);

/*
 * loopdev_is_device_name - does @obj name a loop device rather than a
 * file? A path to a block device of major 7, or a bare "loopN" that is
 * no file in the current directory (loopdev_set_device() accepts it).
 */
bool loopdev_is_device_name(const char *obj);

/* loopdev_set_device_nr - name /dev/loopN by number. Returns 0, -EINVAL. */
int loopdev_set_device_nr(struct loopdev_ctx *lc, int nr);

/* The backing file's size as loopdev_plan() measured it. */
static inline uint64_t loopdev_get_back_size(const struct loopdev_ctx *lc)
{
	return lc->back_size;
}

static inline const char *loopdev_get_path(const struct loopdev_ctx *lc)
{
	return lc->path;
}

/* N of /dev/loopN, or -1 when no device is named yet. */
static inline int loopdev_get_nr(const struct loopdev_ctx *lc)
{
	return lc->nr;
}

/*
 * The device's backing descriptor is known to be without O_DIRECT:
 * loopdev_attach() bound it so, or the caller knows it of this binding
 * (loopctl's record of its own attach). loopdev_dio_served() and
 * loopdev_retune() rely on it on kernels whose buffered path inherits
 * the file's O_DIRECT.
 */
static inline bool loopdev_is_plain(const struct loopdev_ctx *lc)
{
	return lc->plain;
}

static inline void loopdev_set_plain(struct loopdev_ctx *lc, bool plain)
{
	lc->plain = plain;
}

/*
 * Read-only views of the context for the CLI: the attach request as
 * loopdev_plan() left it, the verdict, and the state read back by
 * loopdev_read_state(). Callers never reach into the struct.
 */
static inline const struct loopdev_state *
loopdev_get_state(const struct loopdev_ctx *lc)
{
	return &lc->state;
}

static inline uint64_t loopdev_get_offset(const struct loopdev_ctx *lc)
{
	return lc->offset;
}

static inline uint64_t loopdev_get_sizelimit(const struct loopdev_ctx *lc)
{
	return lc->sizelimit;
}

static inline uint32_t loopdev_get_sector_size(const struct loopdev_ctx *lc)
{
	return lc->sector_size;
}

static inline enum loopdev_dio_mode
loopdev_get_dio(const struct loopdev_ctx *lc)
{
	return lc->dio;
}

/*
 * The sector size attach passes to the kernel: the one asked for, or,
 * when direct I/O is wanted and none was given, the one loopdev_plan()
 * picked (see loopdev_check_dio()); 0: the kernel's default, 512.
 */
static inline uint32_t loopdev_get_attach_sector(const struct loopdev_ctx *lc)
{
	return lc->sector_attach;
}

/* loopdev_plan()'s verdict: attach will ask for direct I/O. */
static inline bool loopdev_wants_dio(const struct loopdev_ctx *lc)
{
	return lc->want_dio;
}

/* Devices loopdev_attach() tried (for "no free loop device"). */
static inline unsigned int loopdev_get_alloc_tries(const struct loopdev_ctx *lc)
{
	return lc->alloc_tries;
}

static inline void loopdev_set_flags(struct loopdev_ctx *lc, unsigned int fl)
{
	lc->flags |= fl;
}

static inline bool loopdev_is_flag(const struct loopdev_ctx *lc,
				   unsigned int fl)
{
	return lc->flags & fl;
}

static inline void loopdev_set_offset(struct loopdev_ctx *lc, uint64_t off)
{
	lc->offset = off;
}

static inline void loopdev_set_sizelimit(struct loopdev_ctx *lc, uint64_t sz)
{
	lc->sizelimit = sz;
}

static inline void loopdev_set_dio(struct loopdev_ctx *lc,
				   enum loopdev_dio_mode mode)
{
	lc->dio = mode;
}

/*
 * loopdev_set_sector_size - loop logical block size for attach/set.
 * @size: a power of two from 512 to the page size; 0: kernel default.
 * Returns 0 or -EINVAL.
 */
int loopdev_set_sector_size(struct loopdev_ctx *lc, uint32_t size);

/* The largest loop sector size: the page size (blk_validate_block_size). */
uint32_t loopdev_sector_max(void);

/*
 * loopdev_open_backing - open the backing file, once, by path.
 * @path: regular file or block device
 *
 * Opens read-write (read-only with LOOPDEV_FL_READONLY), O_CLOEXEC; when
 * the file is write-protected (EROFS, EACCES) falls back to read-only and
 * sets LOOPDEV_FL_READONLY | LOOPDEV_FL_RO_FALLBACK. Everything after
 * uses the descriptor. Returns 0, -EINVAL if it is neither a regular file
 * nor a block device, or -errno from open().
 */
int loopdev_open_backing(struct loopdev_ctx *lc, const char *path);

/*
 * loopdev_attach - bind the backing file to the named device, or to a
 * free one (LOOP_CTL_GET_FREE under an flock on /dev/loop-control, with
 * bounded jittered retries when another tool takes it first).
 *
 * Uses LOOP_CONFIGURE (5.8), asking for direct I/O with
 * LO_FLAGS_DIRECT_IO and the sector size loopdev_plan() picked; falls
 * back to LOOP_SET_FD + LOOP_SET_STATUS64 + LOOP_SET_BLOCK_SIZE +
 * LOOP_SET_DIRECT_IO when the kernel lacks it. The backing descriptor
 * never has O_DIRECT (it is cleared): before commit f2fed441c69b (6.15)
 * loop's buffered path inherits the file's O_DIRECT, so a device later
 * switched to buffered I/O would still be served O_DIRECT. Calls
 * loopdev_plan() unless the caller did. Reads the state back. With
 * LOOPDEV_DIO_ON, and
 * whenever a step fails after the device was bound, the device is
 * released again (it is ours). On success loopdev_is_plain() is true.
 * Returns 0; -EOPNOTSUPP when direct I/O
 * was required and is not in effect; -EBUSY when the named device is
 * bound or no free device could be claimed; -errno otherwise.
 */
int loopdev_attach(struct loopdev_ctx *lc);

/*
 * loopdev_release - undo a successful loopdev_attach() (LOOP_CLR_FD), for
 * a caller that cannot use the device after all. Never touches a device
 * this context did not bind. Returns 0, -EPERM when it did not bind one,
 * or -errno from the ioctl.
 */
int loopdev_release(struct loopdev_ctx *lc);

/*
 * loopdev_read_state - fill lc->state from sysfs (no ioctl), and with
 * LOOP_GET_STATUS64 when the device is open. Returns 0 (state.bound
 * false when nothing is attached) or -errno.
 */
int loopdev_read_state(struct loopdev_ctx *lc);

/*
 * loopdev_open - open the named device.
 * @mode: O_RDONLY or O_RDWR (O_CLOEXEC is added)
 * When loopdev_set_device() checked a path, the open descriptor must be
 * that device still (fstat, st_rdev): the node may have been replaced
 * in between. Returns 0, -ESTALE when it was, or -errno from open().
 */
int loopdev_open(struct loopdev_ctx *lc, int mode);

/*
 * loopdev_retune - live change of sector size and direct I/O.
 * @d: out: the analysis used (d->sector_used is 0 when the backing file
 *     could not be opened to analyse it)
 *
 * Uses lc->sector_size (0: keep) and lc->dio (KEEP/OFF/AUTO/ON). Syncs
 * the device, sets the sector size first (before f2fed441c69b,
 * LOOP_SET_BLOCK_SIZE re-evaluates direct I/O from the backing file's
 * O_DIRECT flag: never set on loopctl's own attaches, but on a device
 * attached by losetup --direct-io=on it is), then puts direct I/O where
 * it was asked; EAGAIN is retried a bounded number of times. If direct
 * I/O cannot be honoured the sector size is put back. Refuses, before
 * changing anything, to leave direct I/O off where loopdev_dio_served()
 * would then say LOOPDEV_SERVED_UNKNOWN (a caller that knows the binding
 * has no O_DIRECT says so first with loopdev_set_plain()). Returns 0, -EOPNOTSUPP (direct
 * I/O required but impossible: nothing changed), -EMEDIUMTYPE (direct
 * I/O off would not be buffered I/O for sure: nothing changed), -ENXIO
 * (not bound), -errno.
 */
int loopdev_retune(struct loopdev_ctx *lc, struct loopdev_dio *d);

/*
 * loopdev_detach - LOOP_CLR_FD on the named device.
 * @deferred: set when the device is open elsewhere and the kernel only
 *            set autoclear: it detaches on the last close
 * Returns 0, -ENXIO (not bound), -errno.
 */
int loopdev_detach(struct loopdev_ctx *lc, bool *deferred);

/*
 * loopdev_remove - LOOP_CTL_REMOVE the named (unbound, closed) device,
 * retrying EBUSY a bounded number of times. Returns 0 or -errno.
 */
int loopdev_remove(struct loopdev_ctx *lc);

/*
 * loopdev_bound_list - numbers of the bound loop devices, ascending,
 * from sysfs. @nrs is malloc()ed. Returns the count or -errno.
 */
int loopdev_bound_list(int **nrs);

/*
 * Iterate over loop devices the way status, cache and detach take them:
 * the names given, in order, or else every bound device (util-linux's
 * loopcxt_init_iterator / loopcxt_next).
 */
struct loopdev_iter {
	char *const *names;	/* the names given, or NULL */
	int *nrs;		/* else the bound devices' numbers */
	int n, i;
	const char *name;	/* the current name, for messages */
};

/*
 * loopdev_iter_init - over @names[0..@n), or every bound device when @n
 * is 0. Returns 0, or -errno from sysfs.
 */
int loopdev_iter_init(struct loopdev_iter *it, int n, char *const *names);

/*
 * loopdev_iter_next - loopdev_init() @lc and name the next device in it.
 * Returns 1, 0 at the end, or -errno when a given name is no loop device
 * (loopdev_set_device()); loopdev_iter_name() then says which. The
 * caller loopdev_deinit()s @lc after each.
 */
int loopdev_iter_next(struct loopdev_iter *it, struct loopdev_ctx *lc);

/* The name given for the current device, or its /dev path. */
static inline const char *loopdev_iter_name(const struct loopdev_iter *it)
{
	return it->name;
}

/* Whether the devices were named (else: every bound one). */
static inline bool loopdev_iter_by_name(const struct loopdev_iter *it)
{
	return it->names != NULL;
}

void loopdev_iter_deinit(struct loopdev_iter *it);

/*
 * loopdev_backing_id - the backing file of a bound device, as st_dev and
 * st_ino: from LOOP_GET_STATUS64 when the device was open
 * (state.has_ino), else by the path sysfs shows. Returns 0 or -ENOENT.
 */
int loopdev_backing_id(const struct loopdev_ctx *lc, dev_t *dev, ino_t *ino);

/*
 * loopdev_open_bound_backing - open the backing file of a bound device
 * by the path sysfs prints, read-only, and check it is the same inode
 * when state.has_ino. Returns a descriptor or -errno (-ESTALE: a
 * different file now has that name).
 */
int loopdev_open_bound_backing(struct loopdev_ctx *lc);

/* Page-cache residency of the backing file and of the device. */
struct loopdev_cache {
	bool back_known;		/* the backing file's residency is known */
	uint64_t back_size, back_cached;	/* bytes */
	uint64_t dev_size, dev_cached;		/* bytes */
};

/*
 * loopdev_cache - residency of the backing file and of the device's own
 * page cache, by pagecache.c's pc_cached_bytes() (cachestat(2), or
 * mincore(2) where it tells this caller the truth). Opens the device
 * read-only. Returns 0, -EOPNOTSUPP when the device's residency cannot
 * be told to this caller, or -errno; back_known is false when the
 * backing file's cannot.
 */
int loopdev_cache(struct loopdev_ctx *lc, struct loopdev_cache *c);

/*
 * loopdev_read_diskseq - /sys/block/loopN/diskseq (5.15): a new value
 * with every bind (LOOP_CONFIGURE, LOOP_SET_FD, LOOP_CHANGE_FD,
 * LOOP_CLR_FD), so a binding can be told from the next one of the same
 * file. Returns 0, -ENOENT before 5.15, or -errno.
 */
int loopdev_read_diskseq(const struct loopdev_ctx *lc, uint64_t *seq);

#endif /* NBIO_LOOPDEV_H */
