// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl detach: devices by name, or every bound one.
 */
#include "loopctl.h"

static void __attribute__((__noreturn__)) usage_detach(void)
{
	fputs(USAGE_HEADER
	      " loopctl detach [options] <device>...\n"
	      " loopctl detach [options] --all\n"
	      "\n"
	      "Detach loop devices from their backing files.\n"
	      "\n"
	      USAGE_OPTIONS
	      " -a, --all                 detach every bound loop device\n"
	      "     --remove              also remove the device (LOOP_CTL_REMOVE)\n"
	      " -h, --help                " USAGE_HELP, stdout);
	exit(LOOPCTL_EXIT_OK);
}

/* Options into *@all and *@remove; bad usage exits. */
static void parse_detach(int argc, char **argv, bool *all, bool *remove)
{
	static const struct option longopts[] = {
		{ "all",    no_argument, NULL, 'a' },
		{ "remove", no_argument, NULL, OPT_REMOVE },
		{ "help",   no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "ah", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			*all = true;
			break;
		case OPT_REMOVE:
			*remove = true;
			break;
		case 'h':
			usage_detach();
		default:
			errtryhelp("detach");
		}
	}
	if (*all && optind < argc) {
		warnx("detach: --all and a device list are mutually exclusive");
		errtryhelp("detach");
	}
	if (!*all && optind >= argc) {
		warnx("detach: no device given (or --all)");
		errtryhelp("detach");
	}
}

/*
 * Validate every name before detaching anything: a typo in the list
 * detaches nothing. Every bad name is reported; false if there was one.
 */
static bool names_valid(int argc, char **argv)
{
	struct loopdev_iter it;
	struct loopdev_ctx lc;

	start_devices(&it, argc, argv);
	while (next_device(&it, &lc))
		loopdev_deinit(&lc);
	loopdev_iter_deinit(&it);
	return !exit_status;
}

/* Detach the device of @lc, named @dev, and with @remove remove it. */
static void detach_one(struct loopdev_ctx *lc, const char *dev, bool remove)
{
	bool deferred;
	int rc;

	rc = check_access(loopdev_get_path(lc), R_OK,
			  "detaching a loop device");
	if (rc) {
		set_exit(rc);
		return;
	}
	rc = loopdev_open(lc, O_RDONLY);
	if (!rc)
		rc = loopdev_detach(lc, &deferred);
	if (rc) {
		set_exit(report(dev, rc, "detach"));
		return;
	}
	request_forget(lc);
	if (deferred) {
		warnx("%s: in use: the kernel set autoclear instead; it detaches when the last user closes it",
		      dev);
		set_exit(LOOPCTL_EXIT_BUSY);
	} else if (remove) {
		rc = loopdev_remove(lc);
		if (rc)
			set_exit(report(dev, rc, "remove"));
	}
}

int cmd_detach(int argc, char **argv)
{
	struct loopdev_iter it;
	struct loopdev_ctx lc;
	bool all = false, remove = false;

	parse_detach(argc, argv, &all, &remove);
	if (!all && !names_valid(argc - optind, argv + optind))
		return exit_status;

	start_devices(&it, argc - optind, argv + optind);
	while (next_device(&it, &lc)) {
		detach_one(&lc, loopdev_iter_name(&it), remove);
		loopdev_deinit(&lc);
	}
	loopdev_iter_deinit(&it);
	return exit_status;
}
