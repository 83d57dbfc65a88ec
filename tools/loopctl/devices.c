// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The devices a command works on (status, cache, detach): those named
 * on the command line, or every bound one, through loopdev's iterator;
 * a name that is no loop device is reported and skipped.
 */
#include "loopctl.h"

/* The devices named in @argv, or every bound one. */
void start_devices(struct loopdev_iter *it, int argc, char **argv)
{
	int rc = loopdev_iter_init(it, argc, argv);

	if (rc)
		errx(LOOPCTL_EXIT_FAILURE, "/sys/block: %s", strerror(-rc));
}

/*
 * The next device of @it, named in @lc; a name that is no loop device is
 * reported (and sets the exit code) and skipped. False at the end.
 */
bool next_device(struct loopdev_iter *it, struct loopdev_ctx *lc)
{
	int rc;

	while ((rc = loopdev_iter_next(it, lc)) < 0) {
		set_exit(device_error(loopdev_iter_name(it), rc));
		loopdev_deinit(lc);
	}
	return rc > 0;
}
