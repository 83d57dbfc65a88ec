// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl set: direct I/O and sector size of a bound device, changed
 * live, with the result read back.
 */
#include "loopctl.h"

static void __attribute__((__noreturn__)) usage_set(void)
{
	fputs(USAGE_HEADER
	      " loopctl set [options] <device>\n"
	      "\n"
	      "Change direct I/O and the sector size of a bound loop device, live.\n"
	      "At least one of the two options is needed.\n"
	      "\n"
	      USAGE_OPTIONS
	      "     --direct-io[=<mode>]  direct I/O: on, auto or off (alone: on;\n"
	      "                             default: keep it as it is)\n"
	      " -b, --sector-size <size>  logical sector size: a power of two from 512\n"
	      "                             to the page size, or auto\n"
	      " -q, --quiet               do not warn when direct I/O stays off\n"
	      " -h, --help                " USAGE_HELP, stdout);
	exit(LOOPCTL_EXIT_OK);
}

/*
 * Options into @lc and the one operand, the device returned; *@quiet:
 * -q. Bad usage, and nothing to change, exit.
 */
static const char *parse_set(int argc, char **argv, struct loopdev_ctx *lc,
			     bool *quiet)
{
	static const struct option longopts[] = {
		{ "direct-io",   optional_argument, NULL, OPT_DIRECT_IO },
		{ "sector-size", required_argument, NULL, 'b' },
		{ "quiet",       no_argument,       NULL, 'q' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	loopdev_set_dio(lc, LOOPDEV_DIO_KEEP);
	while ((c = getopt_long(argc, argv, "b:qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DIRECT_IO:
			loopdev_set_dio(lc, parse_dio(optarg, "set"));
			break;
		case 'b':
			parse_sector(lc, optarg);
			break;
		case 'q':
			*quiet = true;
			break;
		case 'h':
			usage_set();
		default:
			errtryhelp("set");
		}
	}
	check_operands(argc, argv, 1, 1, "set", "device");
	if (loopdev_get_dio(lc) == LOOPDEV_DIO_KEEP &&
	    !loopdev_get_sector_size(lc) &&
	    !loopdev_is_flag(lc, LOOPDEV_FL_SECTOR_AUTO)) {
		warnx("set: nothing to change: give --direct-io or --sector-size");
		errtryhelp("set");
	}
	return argv[optind];
}

/*
 * Say why loopdev_retune() failed with @rc (nothing was changed);
 * returns the exit code.
 */
static int retune_failed(struct loopdev_ctx *lc, const char *dev,
			 const struct loopdev_dio *d, int rc)
{
	if (rc == -EOPNOTSUPP) {
		if (d->sector_used && !loopdev_dio_possible(d)) {
			warnx("%s: direct I/O %s, nothing changed:", dev,
			      loopdev_get_dio(lc) == LOOPDEV_DIO_KEEP ?
			      "would be turned off by this sector size" :
			      "is impossible");
			explain(dev, d, true);
		} else {
			warnx("%s: the kernel refused direct I/O (EINVAL), nothing changed", dev);
		}
		return LOOPCTL_EXIT_NO_DIO;
	}
	if (rc == -EMEDIUMTYPE) {
		warnx("%s: direct I/O would be off only in name, nothing changed: %s",
		      dev, served_reason(LOOPDEV_SERVED_INHERITS, false));
		warnx("%s: %s", dev, served_remedy);
		return LOOPCTL_EXIT_NO_DIO;
	}
	return report(dev, rc, "set");
}

int cmd_set(int argc, char **argv)
{
	struct loopdev_ctx lc;
	struct loopdev_dio d;
	struct request req;
	const char *dev;
	bool quiet = false;
	int rc;

	loopdev_init(&lc);
	dev = parse_set(argc, argv, &lc, &quiet);
	set_device_or_die(&lc, dev);
	require_access(loopdev_get_path(&lc), R_OK | W_OK,
		       "changing a loop device");

	rc = loopdev_open(&lc, O_RDWR);
	if (rc == -EROFS || rc == -EACCES)
		rc = loopdev_open(&lc, O_RDONLY);	/* a read-only device */
	if (rc)
		exit(report(dev, rc, "open"));
	/* what loopctl knows of this binding (no O_DIRECT) guides retune */
	if (!loopdev_read_state(&lc))
		request_apply(&lc, &req);
	rc = loopdev_retune(&lc, &d);
	if (rc)
		exit(retune_failed(&lc, dev, &d, rc));
	if (loopdev_get_dio(&lc) == LOOPDEV_DIO_AUTO &&
	    !loopdev_get_state(&lc)->dio && !quiet) {
		warnx("%s: direct I/O stays off:", dev);
		if (d.sector_used && !loopdev_dio_possible(&d))
			explain(dev, &d, true);
		else
			warnx("%s: the kernel refused it (EINVAL)", dev);
	}
	if (loopdev_get_dio(&lc) != LOOPDEV_DIO_KEEP)
		request_save(&lc, loopdev_get_dio(&lc));
	loopdev_deinit(&lc);
	return LOOPCTL_EXIT_OK;
}
