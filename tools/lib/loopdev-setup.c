// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Binding and unbinding: attach a backing file to a named or a free loop
 * device, release it again when the result is not what was required,
 * retune a bound device's sector size and direct I/O live, detach and
 * remove. The kernel keeps direct I/O off without an error when it
 * cannot honour it, so every change is read back (loopdev_read_state()).
 * It never prints; every function returns 0 or -errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/loop.h>

#include "c.h"
#include "loopdev-dio.h"
#include "loopdev-private.h"

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

/* ------------------------------------------------------------------ */
/* back-off                                                            */

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
	loopdev_pause_us(jitter_next() % window + 1);
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
		loopdev_pause_us(LOOPDEV_EAGAIN_PAUSE_US);
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
		loopdev_pause_us(LOOPDEV_EAGAIN_PAUSE_US);
		rc = configure(lc);
	}
	return rc;
}

/*
 * Open /dev/loop-control and take its flock: loopctl and systemd take the
 * same lock around LOOP_CTL_GET_FREE + bind and LOOP_CTL_REMOVE. Returns
 * 0 (lc->ctl_fd open and locked) or -errno (lc->ctl_fd closed).
 */
static int lock_control(struct loopdev_ctx *lc)
{
	int rc;

	lc->ctl_fd = open(LOOPDEV_CONTROL, O_RDWR | O_CLOEXEC);
	if (lc->ctl_fd < 0)
		return -errno;
	while (flock(lc->ctl_fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			rc = -errno;
			loopdev_close_fd(&lc->ctl_fd);
			return rc;
		}
	return 0;
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
	int nr, rc;

	rc = lock_control(lc);
	if (rc)
		return rc;
	rc = -EBUSY;
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
		loopdev_close_fd(&lc->fd);
		backoff(attempt);
	}
	if (rc == -ENOENT || rc == -ENXIO)
		rc = -EBUSY;
	flock(lc->ctl_fd, LOCK_UN);
	loopdev_close_fd(&lc->ctl_fd);
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
	lc->plain = false;
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
	lc->plain = true;
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
/* retune                                                              */

static int set_sector(struct loopdev_ctx *lc, uint32_t size)
{
	return ioctl_retry(lc->fd, LOOP_SET_BLOCK_SIZE, size);
}

/*
 * The sector size retune will set, and the analysis at that size. Without
 * the backing file (deleted or renamed) @d is zeroed: the kernel's EINVAL
 * is then the only answer.
 */
static int retune_sector(struct loopdev_ctx *lc, struct loopdev_dio *d,
			 uint32_t *sector)
{
	int rc;

	if (lc->flags & LOOPDEV_FL_SECTOR_AUTO) {
		rc = loopdev_dio_at_sector(lc, 0, d);
		if (rc)
			return rc;
		*sector = loopdev_auto_sector(d);
	} else {
		*sector = lc->sector_size ? lc->sector_size :
					    lc->state.sector_size;
	}
	if (loopdev_dio_at_sector(lc, *sector, d))
		memset(d, 0, sizeof(*d));
	return 0;
}

/*
 * Whether to ask for direct I/O, from lc->dio and the analysis. Refuses
 * (-EOPNOTSUPP) what cannot be honoured, and (-EMEDIUMTYPE) to go
 * buffered on a kernel whose buffered path may still be direct for this
 * device (an O_DIRECT backing file): the result could not be told.
 */
static int retune_want_dio(struct loopdev_ctx *lc,
			   const struct loopdev_dio *d, bool *want)
{
	struct loopdev_served_facts f;
	bool known = d->sector_used != 0;
	int rc;

	switch (lc->dio) {
	case LOOPDEV_DIO_OFF:
		*want = false;
		break;
	case LOOPDEV_DIO_KEEP:
		/* keeping direct I/O must not turn it off silently */
		*want = lc->state.dio;
		if (*want && known && !loopdev_dio_possible(d))
			return -EOPNOTSUPP;
		return 0;
	case LOOPDEV_DIO_ON:
		*want = true;
		if (known && !loopdev_dio_possible(d))
			return -EOPNOTSUPP;
		return 0;
	case LOOPDEV_DIO_AUTO:
	default:
		*want = !known || loopdev_dio_possible(d);
		break;
	}
	if (*want)
		return 0;
	rc = loopdev_served_facts(lc, &f);
	if (rc)
		return rc;
	f.dio = false;
	if (loopdev_served_decide(&f, NULL) == LOOPDEV_SERVED_UNKNOWN)
		return -EMEDIUMTYPE;
	return 0;
}

/* Put the sector size and direct I/O back as they were. */
static void retune_undo(struct loopdev_ctx *lc, uint32_t old_sector,
			uint32_t new_sector, bool old_dio)
{
	if (new_sector != old_sector)
		set_sector(lc, old_sector);
	ioctl(lc->fd, LOOP_SET_DIRECT_IO, (unsigned long)old_dio);
}

int loopdev_retune(struct loopdev_ctx *lc, struct loopdev_dio *d)
{
	uint32_t old_sector, new_sector;
	bool old_dio, want;
	int rc;

	memset(d, 0, sizeof(*d));
	rc = loopdev_read_bound(lc);
	if (rc)
		return rc;
	old_sector = lc->state.sector_size;
	old_dio = lc->state.dio;

	/* predict before changing anything */
	rc = retune_sector(lc, d, &new_sector);
	if (!rc)
		rc = retune_want_dio(lc, d, &want);
	if (rc)
		return rc;

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
			retune_undo(lc, old_sector, new_sector, old_dio);
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
		retune_undo(lc, old_sector, new_sector, old_dio);
		loopdev_read_state(lc);
		rc = -EOPNOTSUPP;
	}
	return rc;
}
/* ------------------------------------------------------------------ */
/* detach, remove                                                      */

int loopdev_detach(struct loopdev_ctx *lc, bool *deferred)
{
	dev_t dev;
	ino_t ino;
	int rc;

	*deferred = false;
	rc = loopdev_read_bound(lc);
	if (rc)
		return rc;
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
	loopdev_close_fd(&lc->fd);	/* our own open would make it busy */
	rc = lock_control(lc);
	if (rc)
		return rc;
	for (tries = 0; ; tries++) {
		if (ioctl(lc->ctl_fd, LOOP_CTL_REMOVE, lc->nr) >= 0) {
			rc = 0;
			break;
		}
		rc = -errno;
		if (rc != -EBUSY || tries + 1 >= LOOPDEV_REMOVE_TRIES)
			break;
		loopdev_pause_us(LOOPDEV_REMOVE_PAUSE_US);
	}
	flock(lc->ctl_fd, LOCK_UN);
	loopdev_close_fd(&lc->ctl_fd);
	return rc;
}
