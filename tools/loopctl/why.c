// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl why: whether direct I/O can work for a file or a device, and
 * what to change when it cannot.
 */
#include "loopctl.h"

static void __attribute__((__noreturn__)) usage_why(void)
{
	fputs(USAGE_HEADER
	      " loopctl why [options] <file>|<device>\n"
	      "\n"
	      "Explain whether direct I/O can work for <file> with the given offset and\n"
	      "sector size, or for a bound loop <device> as it is set up, and if not,\n"
	      "why and what to do. Opens no loop device.\n"
	      "\n"
	      USAGE_OPTIONS
	      " -b, --sector-size <size>  logical sector size: a power of two from 512\n"
	      "                             to the page size, or auto\n"
	      " -o, --offset <bytes>      start at this offset in <file>\n"
	      " -h, --help                " USAGE_HELP, stdout);
	exit(LOOPCTL_EXIT_OK);
}

static void print_facts(const char *obj, const struct loopdev_dio *d)
{
	char dev[96];

	printf("  file system:    %s\n", d->fstype);
	if (d->odirect_errno)
		printf("  O_DIRECT:       refused (%s)\n",
		       strerror(d->odirect_errno));
	else
		printf("  O_DIRECT:       accepted\n");
	if (!d->has_dioalign)
		printf("  STATX_DIOALIGN: not reported\n");
	else if (!d->dio_offset_align)
		printf("  STATX_DIOALIGN: no direct I/O for this file\n");
	else
		printf("  STATX_DIOALIGN: offset %u, memory %u\n",
		       d->dio_offset_align, d->dio_mem_align);
	if (d->bdev_lbs)
		printf("  block device:   %s, logical block size %u\n",
		       bdev_label(d, dev, sizeof(dev)), d->bdev_lbs);
	else
		printf("  block device:   none (the kernel checks no block size)\n");
	printf("  sector size:    %u%s\n", d->sector_used,
	       d->sector_size ? "" : " (what attach picks for direct I/O)");
	printf("  offset:         %" PRIu64 "\n", d->offset);
	(void)obj;
}

/*
 * The first line for a bound device: direct I/O as the backing file is
 * really served, what was asked for, and, when loop/dio says 0, on what
 * grounds that is buffered I/O, or why it cannot be told.
 */
static enum loopdev_served print_served(const char *obj,
					 struct loopdev_ctx *lc)
{
	const struct loopdev_state *s = loopdev_get_state(lc);
	struct request req;
	enum loopdev_served_why why;
	enum loopdev_served served;

	request_apply(lc, &req);
	served = loopdev_dio_served(lc, &why);
	printf("%s: direct I/O is %s (requested: %s), backing file %s\n",
	       obj, served_word(served),
	       req.known ? dio_word(req.dio) : "unknown", s->back_file);
	if (served == LOOPDEV_SERVED_UNKNOWN) {
		printf("  loop/dio says 0, but %s\n", served_reason(why, false));
		printf("  to be sure of buffered I/O: %s\n", served_remedy);
	} else if (served == LOOPDEV_SERVED_OFF) {
		printf("  buffered for sure: %s\n", served_reason(why, false));
	}
	return served;
}

/* why_device() and why_file(): nothing said yet that ends the answer. */
enum { WHY_GO_ON = -1 };

/*
 * Options into @lc and the one operand, the object returned; *@is_loop:
 * it names a loop device. Bad usage exits.
 */
static const char *parse_why(int argc, char **argv, struct loopdev_ctx *lc,
			     bool *is_loop)
{
	static const struct option longopts[] = {
		{ "sector-size", required_argument, NULL, 'b' },
		{ "offset",      required_argument, NULL, 'o' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_offset = false, have_sector = false;
	const char *obj;
	int c;

	while ((c = getopt_long(argc, argv, "b:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			parse_sector(lc, optarg);
			have_sector = true;
			break;
		case 'o':
			loopdev_set_offset(lc, parse_bytes(optarg,
							   "--offset"));
			have_offset = true;
			break;
		case 'h':
			usage_why();
		default:
			errtryhelp("why");
		}
	}
	check_operands(argc, argv, 1, 1, "why", "file or device");
	obj = argv[optind];
	*is_loop = loopdev_is_device_name(obj);
	if (*is_loop && (have_offset || have_sector))
		errx(LOOPCTL_EXIT_FAILURE,
		     "%s: --offset and --sector-size apply to files; for a device use its own (or try 'loopctl set')",
		     obj);
	return obj;
}

/*
 * A bound device, from sysfs only (no ioctl, not even an open of the
 * device): the first line, then @d as it is set up. Returns WHY_GO_ON,
 * or the exit status when its backing file cannot be analysed.
 */
static int why_device(const char *obj, struct loopdev_ctx *lc,
		      struct loopdev_dio *d, enum loopdev_served *served)
{
	int rc;

	set_device_or_die(lc, obj);
	rc = loopdev_read_state(lc);
	if (rc)
		errx(LOOPCTL_EXIT_FAILURE, "%s: %s", obj, strerror(-rc));
	if (!loopdev_get_state(lc)->bound)
		errx(LOOPCTL_EXIT_NOT_LOOP, "%s: not bound to a file", obj);
	*served = print_served(obj, lc);
	rc = loopdev_dio_for_state(lc, d);
	if (rc) {
		printf("  the backing file cannot be analysed: %s\n",
		       rc == -ESTALE ? "it was replaced" : strerror(-rc));
		return loopdev_get_state(lc)->dio ? LOOPCTL_EXIT_OK :
						    LOOPCTL_EXIT_FAILURE;
	}
	return WHY_GO_ON;
}

/*
 * A file, with the offset and sector size in @lc: @d, and the first
 * line. Returns WHY_GO_ON, or the exit status when there is nothing to
 * attach.
 */
static int why_file(const char *obj, struct loopdev_ctx *lc,
		    struct loopdev_dio *d)
{
	uint64_t size = 0;
	int fd, rc;

	fd = open(obj, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		err(errno == EACCES ? LOOPCTL_EXIT_PERM :
		    LOOPCTL_EXIT_FAILURE, "%s", cli_name(obj));
	rc = loopdev_check_dio_request(lc, fd, d);
	if (!rc)
		rc = loopdev_check_extent(fd, d->offset, &size);
	close(fd);
	if (rc == -ENODATA) {
		nothing_to_attach(size, obj, d->offset, false);
		return LOOPCTL_EXIT_NO_DATA;
	}
	if (rc == -EINVAL)
		errx(LOOPCTL_EXIT_FAILURE, "%s: not a regular file or block device", obj);
	if (rc)
		errx(LOOPCTL_EXIT_FAILURE, "%s: %s", obj, strerror(-rc));
	printf("%s: direct I/O %s with sector size %u and offset %" PRIu64 "\n",
	       obj, loopdev_dio_possible(d) ? "can work" : "cannot work",
	       d->sector_used, d->offset);
	return WHY_GO_ON;
}

/* What to change, or what would do better; then the notes. */
static void print_advice(const char *obj, const struct loopdev_dio *d,
			 bool is_loop, enum loopdev_served served)
{
	if (loopdev_dio_possible(d)) {
		if (is_loop && served == LOOPDEV_SERVED_OFF)
			printf("  direct I/O is off only because it was not asked for: loopctl set %s --direct-io=on\n",
			       obj);
		else if (!is_loop && d->best_sector &&
			 d->best_sector < d->sector_used)
			printf("  the smallest sector size that works is %u\n",
			       d->best_sector);
	} else {
		explain(obj, d, false);
	}
	explain_warnings(obj, d, false);
}

int cmd_why(int argc, char **argv)
{
	enum loopdev_served served = LOOPDEV_SERVED_UNKNOWN;
	struct loopdev_ctx lc;
	struct loopdev_dio d;
	const char *obj;
	bool is_loop;
	int code;

	loopdev_init(&lc);
	obj = parse_why(argc, argv, &lc, &is_loop);
	memset(&d, 0, sizeof(d));
	if (is_loop)
		code = why_device(obj, &lc, &d, &served);
	else
		code = why_file(obj, &lc, &d);
	if (code == WHY_GO_ON) {
		print_facts(obj, &d);
		print_advice(obj, &d, is_loop, served);
		code = loopdev_dio_possible(&d) ? LOOPCTL_EXIT_OK :
						  LOOPCTL_EXIT_NO_DIO;
	}
	loopdev_deinit(&lc);
	return code;
}
