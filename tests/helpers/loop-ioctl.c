// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loop-ioctl - do one thing to a bound loop device that util-linux has
 * no option for, so the guest tests can check what the driver does:
 *
 *   loop-ioctl set-status DEVICE        LOOP_GET_STATUS64, then
 *                                       LOOP_SET_STATUS64 with the same info
 *   loop-ioctl change-fd DEVICE FILE    LOOP_CHANGE_FD to FILE (read-only
 *                                       devices only, as the kernel requires)
 *   loop-ioctl write-mmap DEVICE        write the first page through a
 *                                       shared mapping, then msync
 *
 * Exit status: 0 done, 1 the ioctl or an open failed, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int usage(void)
{
	fprintf(stderr, "usage: loop-ioctl set-status DEVICE\n"
			"       loop-ioctl change-fd DEVICE FILE\n"
			"       loop-ioctl write-mmap DEVICE\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct loop_info64 info;
	int dev, file, rc = 1;
	char *map;

	if (argc < 3)
		return usage();
	dev = open(argv[2], (strcmp(argv[1], "write-mmap") ? O_RDONLY : O_RDWR) |
			    O_CLOEXEC);
	if (dev < 0) {
		fprintf(stderr, "loop-ioctl: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (!strcmp(argv[1], "set-status") && argc == 3) {
		if (ioctl(dev, LOOP_GET_STATUS64, &info) < 0)
			fprintf(stderr, "loop-ioctl: %s: LOOP_GET_STATUS64: %s\n",
				argv[2], strerror(errno));
		else if (ioctl(dev, LOOP_SET_STATUS64, &info) < 0)
			fprintf(stderr, "loop-ioctl: %s: LOOP_SET_STATUS64: %s\n",
				argv[2], strerror(errno));
		else
			rc = 0;
	} else if (!strcmp(argv[1], "change-fd") && argc == 4) {
		file = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (file < 0)
			fprintf(stderr, "loop-ioctl: %s: %s\n", argv[3],
				strerror(errno));
		else if (ioctl(dev, LOOP_CHANGE_FD, file) < 0)
			fprintf(stderr, "loop-ioctl: %s: LOOP_CHANGE_FD %s: %s\n",
				argv[2], argv[3], strerror(errno));
		else
			rc = 0;
		if (file >= 0)
			close(file);
	} else if (!strcmp(argv[1], "write-mmap") && argc == 3) {
		map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, dev, 0);
		if (map == MAP_FAILED) {
			fprintf(stderr, "loop-ioctl: %s: mmap: %s\n", argv[2],
				strerror(errno));
		} else {
			map[0] ^= 0xff;
			if (msync(map, 4096, MS_SYNC) < 0)
				fprintf(stderr, "loop-ioctl: %s: msync: %s\n",
					argv[2], strerror(errno));
			else
				rc = 0;
			munmap(map, 4096);
		}
	} else {
		rc = usage();
	}
	close(dev);
	return rc;
}
