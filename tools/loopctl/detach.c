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

int cmd_detach(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all",    no_argument, NULL, 'a' },
		{ "remove", no_argument, NULL, OPT_REMOVE },
		{ "help",   no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct loopdev_iter it;
	struct loopdev_ctx lc;
	bool all = false, remove = false, deferred;
	int c, rc;
	const char *dev;

	while ((c = getopt_long(argc, argv, "ah", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = true;
			break;
		case OPT_REMOVE:
			remove = true;
			break;
		case 'h':
			usage_detach();
		default:
			errtryhelp("detach");
		}
	}
	if (all && optind < argc) {
		warnx("detach: --all and a device list are mutually exclusive");
		errtryhelp("detach");
	}
	if (!all && optind >= argc) {
		warnx("detach: no device given (or --all)");
		errtryhelp("detach");
	}
	/*
	 * Validate every name before detaching anything: a typo in the
	 * list detaches nothing. Every bad name is reported.
	 */
	if (!all) {
		start_devices(&it, argc - optind, argv + optind);
		while (next_device(&it, &lc))
			loopdev_deinit(&lc);
		loopdev_iter_deinit(&it);
		if (exit_status)
			return exit_status;
	}

	start_devices(&it, argc - optind, argv + optind);
	while (next_device(&it, &lc)) {
		dev = loopdev_iter_name(&it);
		rc = check_access(loopdev_get_path(&lc), R_OK,
				  "detaching a loop device");
		if (rc) {
			set_exit(rc);
			loopdev_deinit(&lc);
			continue;
		}
		rc = loopdev_open(&lc, O_RDONLY);
		if (!rc)
			rc = loopdev_detach(&lc, &deferred);
		if (rc) {
			set_exit(report(dev, rc, "detach"));
			loopdev_deinit(&lc);
			continue;
		}
		loopdev_forget_request(&lc);
		if (deferred) {
			warnx("%s: in use: the kernel set autoclear instead; it detaches when the last user closes it",
			      dev);
			set_exit(LOOPCTL_EXIT_BUSY);
		} else if (remove) {
			rc = loopdev_remove(&lc);
			if (rc)
				set_exit(report(dev, rc, "remove"));
		}
		loopdev_deinit(&lc);
	}
	loopdev_iter_deinit(&it);
	return exit_status;
}
