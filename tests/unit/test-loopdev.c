// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the parts of tools/lib/loopdev.c that need no loop
 * device and no root: which names mean a loop device, and the sector
 * size the automatic choice picks.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "loopdev.h"
#include "tap.h"

static void test_is_device_name(void)
{
	char dir[] = "/tmp/nbio-unit-XXXXXX";
	int fd;

	if (!tap_ok(mkdtemp(dir) && !chdir(dir), "a scratch directory"))
		return;
	tap_ok(loopdev_is_device_name("loop7"),
	       "a bare loopN with no such file is a device name");
	fd = open("loop7", O_CREAT | O_WRONLY, 0600);
	tap_ok(fd >= 0 && !loopdev_is_device_name("loop7"),
	       "a file called loop7 in the current directory is a file");
	if (fd >= 0)
		close(fd);
	unlink("loop7");
	tap_ok(!loopdev_is_device_name("/dev/null"),
	       "another device is not a loop device");
	tap_ok(!loopdev_is_device_name("./loop7"),
	       "a path that does not exist is not a device name");
	tap_ok(!loopdev_is_device_name("image.img"), "a file name is not");
	if (chdir("/") || rmdir(dir))
		tap_ok(false, "scratch directory removed");
}

static void test_auto_sector(void)
{
	struct loopdev_dio d = { .best_sector = 4096 };

	tap_ok(loopdev_auto_sector(&d) == 4096,
	       "auto sector: the smallest that allows direct I/O");
	d.best_sector = 0;
	tap_ok(loopdev_auto_sector(&d) == LOOPDEV_SECTOR_MIN,
	       "auto sector: 512 when none does");
}

int main(void)
{
	test_is_device_name();
	test_auto_sector();
	return tap_done();
}
