// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl detach: devices by name, or every bound one.
 */
#include "loopctl.h"

static void __attribute__((__noreturn__)) usage_detach(void)
{
	fputs("Usage:\n"
	      " loopctl detach [options] <device>...\n"
	      " loopctl detach [options] --all\n"
	      "\n"
	      "Detach loop devices from their backing files.\n"
	      "\n"
	      "Options:\n"
	      " -a, --all                 detach every bound loop device\n"
	      "     --remove              also remove the device (LOOP_CTL_REMOVE)\n"
	      " -h, --help                display this help\n", stdout);
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
	struct loopdev_ctx lc;
	bool all = false, remove = false, deferred;
	int c, i, n, rc, *nrs = NULL;
	char **names;
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
		warnx("detach: --all and a device list are mutually "
		      "exclusive");
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
	for (i = optind; i < argc; i++) {
		loopdev_init(&lc);
		pick_device(&lc, i - optind, NULL, argv + optind);
		loopdev_deinit(&lc);
	}
	if (exit_status)
		return exit_status;

	n = collect_devices(argc - optind, argv + optind, &nrs, &names);
	for (i = 0; i < n; i++) {
		loopdev_init(&lc);
		if (!pick_device(&lc, i, nrs, names))
			continue;
		dev = names ? names[i] : loopdev_get_path(&lc);
		rc = check_access(lc.path, R_OK, "detaching a loop device");
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
			warnx("%s: in use: the kernel set autoclear instead; "
			      "it detaches when the last user closes it", dev);
			set_exit(LOOPCTL_EXIT_BUSY);
		} else if (remove) {
			rc = loopdev_remove(&lc);
			if (rc)
				set_exit(report(dev, rc, "remove"));
		}
		loopdev_deinit(&lc);
	}
	free(nrs);
	return exit_status;
}
