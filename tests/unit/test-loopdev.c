// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the parts of tools/lib/loopdev.c that need no loop
 * device and no root: which names mean a loop device, the sector size
 * the automatic choice picks, 6.1's direct-I/O rules (loopdev-dio.c),
 * and what a device's backing file is really served (kernel releases,
 * the table of fixed ones, the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c.h"
#include "loopdev-dio.h"
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

/* loopdev_parse_release(): what uname(2) says, as three numbers. */
static void test_parse_release(void)
{
	static const struct {
		const char *release;
		int rc;
		unsigned int v[3];
	} cases[] = {
		{ "6.1.0-28-amd64", 0, { 6, 1, 0 } },	/* Debian 12 */
		{ "6.1.192+", 0, { 6, 1, 192 } },	/* this project's */
		{ "6.12.25", 0, { 6, 12, 25 } },
		{ "6.12.48+deb13-amd64", 0, { 6, 12, 48 } },
		{ "6.15-rc1", 0, { 6, 15, 0 } },
		{ "6.15.0-rc1-00001-g1234", 0, { 6, 15, 0 } },
		{ "10.0", 0, { 10, 0, 0 } },
		{ "6.14.4.1", 0, { 6, 14, 4 } },
		{ "6", -EINVAL, { 0, 0, 0 } },
		{ "6.", -EINVAL, { 0, 0, 0 } },
		{ "", -EINVAL, { 0, 0, 0 } },
		{ "v6.1", -EINVAL, { 0, 0, 0 } },
		{ "-6.1", -EINVAL, { 0, 0, 0 } },
		{ "99999999999.1", -EINVAL, { 0, 0, 0 } },
	};
	unsigned int v[3];
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		rc = loopdev_parse_release(cases[i].release, v);
		tap_ok(rc == cases[i].rc &&
		       (rc || (v[0] == cases[i].v[0] && v[1] == cases[i].v[1] &&
			       v[2] == cases[i].v[2])),
		       "release \"%s\": %s %u.%u.%u", cases[i].release,
		       cases[i].rc ? "refused" : "parsed",
		       cases[i].v[0], cases[i].v[1], cases[i].v[2]);
	}
}

/*
 * loopdev_release_has_fix(): commit f2fed441c69b ("loop: stop using
 * vfs_iter_{read,write} for buffered I/O") in 6.15, 6.12.25, 6.14.4.
 */
static void test_release_has_fix(void)
{
	static const struct {
		const char *release;
		bool fixed;
	} cases[] = {
		{ "6.1.0-28-amd64", false },
		{ "6.1.192+", false },
		{ "6.6.90", false },
		{ "6.12.24", false },
		{ "6.12.25", true },
		{ "6.12.118+deb12-amd64", true },
		{ "6.13.12", false },
		{ "6.14.3", false },
		{ "6.14.4", true },
		{ "6.15-rc1", true },
		{ "6.15.0", true },
		{ "6.18.1", true },
		{ "7.0.0", true },
		{ "5.15.180", false },
		{ "garbage", false },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		tap_ok(loopdev_release_has_fix(cases[i].release) ==
		       cases[i].fixed, "release %s: %s", cases[i].release,
		       cases[i].fixed ? "has f2fed441c69b" : "lacks it");
	tap_ok(!loopdev_release_has_fix(NULL), "no release: lacks it");
}

/* loopdev_served_decide(): the rules, one claim a line. */
static void test_served_decide(void)
{
	static const struct {
		const char *what;
		struct loopdev_served_facts f;
		enum loopdev_served ans;
		enum loopdev_served_why why;
	} cases[] = {
		{ "dio=1 is on, on an old kernel",
		  { .dio = true, .release = "6.1.0-28-amd64" },
		  LOOPDEV_SERVED_ON, LOOPDEV_SERVED_DIO_FLAG },
		{ "dio=1 is on, whatever else",
		  { .dio = true, .series = true, .release = "6.15.0",
		    .plain = true },
		  LOOPDEV_SERVED_ON, LOOPDEV_SERVED_DIO_FLAG },
		{ "dio=0 on 6.1 without a record: unknown",
		  { .release = "6.1.0-28-amd64" },
		  LOOPDEV_SERVED_UNKNOWN, LOOPDEV_SERVED_INHERITS },
		{ "dio=0 on 6.1 with the series: off",
		  { .series = true, .release = "6.1.192+" },
		  LOOPDEV_SERVED_OFF, LOOPDEV_SERVED_SERIES },
		{ "dio=0 on 6.12.25: off",
		  { .release = "6.12.25" },
		  LOOPDEV_SERVED_OFF, LOOPDEV_SERVED_RELEASE },
		{ "dio=0 on 6.12.24: unknown",
		  { .release = "6.12.24" },
		  LOOPDEV_SERVED_UNKNOWN, LOOPDEV_SERVED_INHERITS },
		{ "dio=0 on 6.13.12 (no backport): unknown",
		  { .release = "6.13.12" },
		  LOOPDEV_SERVED_UNKNOWN, LOOPDEV_SERVED_INHERITS },
		{ "dio=0 on 6.14.4: off",
		  { .release = "6.14.4-arch1" },
		  LOOPDEV_SERVED_OFF, LOOPDEV_SERVED_RELEASE },
		{ "dio=0 on 6.16: off",
		  { .release = "6.16.0" },
		  LOOPDEV_SERVED_OFF, LOOPDEV_SERVED_RELEASE },
		{ "dio=0 on 6.1, loopctl attached it without O_DIRECT: off",
		  { .release = "6.1.0-28-amd64", .plain = true },
		  LOOPDEV_SERVED_OFF, LOOPDEV_SERVED_PLAIN },
		{ "dio=0, release unknown, no record: unknown",
		  { .release = "" },
		  LOOPDEV_SERVED_UNKNOWN, LOOPDEV_SERVED_INHERITS },
		{ "dio=0, release unknown, loopctl's attach: off",
		  { .release = "", .plain = true },
		  LOOPDEV_SERVED_OFF, LOOPDEV_SERVED_PLAIN },
	};
	enum loopdev_served_why why;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		why = (enum loopdev_served_why)-1;
		tap_ok(loopdev_served_decide(&cases[i].f, &why) ==
		       cases[i].ans && why == cases[i].why, "%s",
		       cases[i].what);
	}
	tap_ok(loopdev_served_decide(&cases[0].f, NULL) == LOOPDEV_SERVED_ON,
	       "the reason is optional");
}

/*
 * loopdev_dio_judge(): 6.1's __loop_update_dio() rules and STATX_DIOALIGN
 * from a table of facts, no file needed. Each case names the rule that
 * decides it; dropping that rule changes the case's reasons or sizes.
 */
static void test_dio_rules(void)
{
	const uint32_t big = 2 * loopdev_sector_max();
	const struct {
		const char *what;
		struct loopdev_dio in;
		unsigned int reasons;
		uint32_t used, best;
	} cases[] = {
		{ "ext4 on a 512-byte disk: direct I/O at 512",
		  { .type = S_IFREG, .bdev_lbs = 512, .has_dioalign = true,
		    .dio_offset_align = 512 },
		  0, 512, 512 },
		{ "no ->direct_IO (tmpfs on 6.1): NO_ODIRECT, no size helps",
		  { .type = S_IFREG, .odirect_errno = EINVAL },
		  LOOPDEV_DIO_NO_ODIRECT, 512, 0 },
		{ "4K disk, sector 512 asked: SECTOR",
		  { .type = S_IFREG, .bdev_lbs = 4096, .sector_size = 512,
		    .has_dioalign = true, .dio_offset_align = 4096 },
		  LOOPDEV_DIO_SECTOR, 512, 4096 },
		{ "4K disk, no sector given: attach picks the disk's 4096",
		  { .type = S_IFREG, .bdev_lbs = 4096 },
		  0, 4096, 4096 },
		{ "4K block device, no sector given: 512 (no s_bdev), SECTOR",
		  { .type = S_IFBLK, .bdev_lbs = 4096 },
		  LOOPDEV_DIO_SECTOR, 512, 4096 },
		{ "offset 512 on a 4K disk: OFFSET",
		  { .type = S_IFREG, .bdev_lbs = 4096, .sector_size = 4096,
		    .offset = 512 },
		  LOOPDEV_DIO_OFFSET, 4096, 4096 },
		{ "file system needs 4096 on a 512-byte disk, sector 512: FS_ALIGN",
		  { .type = S_IFREG, .bdev_lbs = 512, .sector_size = 512,
		    .has_dioalign = true, .dio_offset_align = 4096 },
		  LOOPDEV_DIO_FS_ALIGN, 512, 4096 },
		{ "file system needs 4096, offset 512: FS_ALIGN",
		  { .type = S_IFREG, .bdev_lbs = 512, .sector_size = 4096,
		    .offset = 512, .has_dioalign = true,
		    .dio_offset_align = 4096 },
		  LOOPDEV_DIO_FS_ALIGN, 4096, 4096 },
		{ "alignment above the page size: TOO_LARGE, no size helps",
		  { .type = S_IFREG, .bdev_lbs = 512, .sector_size = 512,
		    .has_dioalign = true, .dio_offset_align = big },
		  LOOPDEV_DIO_FS_ALIGN | LOOPDEV_DIO_TOO_LARGE, 512, 0 },
		{ "STATX_DIOALIGN 0 (data=journal): FS_BUFFERED, a warning",
		  { .type = S_IFREG, .bdev_lbs = 512, .has_dioalign = true },
		  LOOPDEV_DIO_FS_BUFFERED, 512, 512 },
		{ "no STATX_DIOALIGN and no disk (9p): ALIGN_UNKNOWN, a warning",
		  { .type = S_IFREG },
		  LOOPDEV_DIO_ALIGN_UNKNOWN, 512, 512 },
	};
	struct loopdev_dio d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		d = cases[i].in;
		/* conclusions are outputs: poison what a rule must set */
		d.required = d.sector_used = d.best_sector = 1;
		d.reasons = ~0U;
		loopdev_dio_judge(&d);
		if (!tap_ok(d.reasons == cases[i].reasons &&
			    d.sector_used == cases[i].used &&
			    d.best_sector == cases[i].best &&
			    loopdev_dio_possible(&d) ==
			    !(cases[i].reasons & LOOPDEV_DIO_BLOCKING),
			    "%s", cases[i].what))
			printf("# reasons %#x used %u best %u\n", d.reasons,
			       d.sector_used, d.best_sector);
	}
}

int main(void)
{
	test_is_device_name();
	test_auto_sector();
	test_parse_release();
	test_release_has_fix();
	test_served_decide();
	test_dio_rules();
	return tap_done();
}
