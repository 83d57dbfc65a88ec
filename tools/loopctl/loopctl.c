// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl - attach files to loop devices with direct I/O and tell the
 * truth about it: whether direct I/O is really in effect, and if not,
 * why and what to do. A thin CLI over tools/lib/loopdev.c, which owns
 * every kernel interaction; each command is a file of this directory,
 * and this one dispatches to them.
 */
#include "loopctl.h"

/* The commands, in the order usage() lists them (kmod's habit). */
static const struct loopctl_cmd {
	const char *name;
	const char *args;
	const char *help;	/* NULL: an alias, not listed */
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "attach", "<file> [<device>]", "attach a file, print the device name",
	  cmd_attach },
	{ "why",    "<file>|<device>", "explain whether direct I/O can work",
	  cmd_why },
	{ "status", "[<device>...]",
	  "show bound loop devices (alias: list)", cmd_status },
	{ "list",   NULL, NULL, cmd_status },
	{ "set",    "<device>", "change direct I/O and sector size, live",
	  cmd_set },
	{ "detach", "<device>...|--all", "detach loop devices", cmd_detach },
	{ "cache",  "[<device>...]", "show the page cache of devices and files",
	  cmd_cache },
};

static void __attribute__((__noreturn__)) usage(void)
{
	char synopsis[64];
	size_t i;

	fputs(USAGE_HEADER
	      " loopctl <command> [options] [<arguments>]\n"
	      "\n"
	      "Attach files to loop devices with direct I/O, and tell whether direct\n"
	      "I/O is really in effect, and why not.\n"
	      "\n"
	      "Commands:\n", stdout);
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!cmds[i].help)
			continue;
		snprintf(synopsis, sizeof(synopsis), "%s %s", cmds[i].name,
			 cmds[i].args);
		printf(" %-25s %s\n", synopsis, cmds[i].help);
	}
	fputs("\n"
	      USAGE_OPTIONS
	      " -h, --help                " USAGE_HELP
	      " -V, --version             " USAGE_VERSION
	      "\n"
	      "Run 'loopctl <command> --help' for the options of a command.\n"
	      "For more details see loopctl(8).\n", stdout);
	exit(LOOPCTL_EXIT_OK);
}

int main(int argc, char **argv)
{
	char *cmd_argv0;
	size_t i;

	setlocale(LC_ALL, "");
	/* before anything is opened: no file may become fd 0, 1 or 2 */
	if (cli_sanitize_fds())
		return LOOPCTL_EXIT_FAILURE;	/* nowhere to say it */
	cli_close_stdout_at_exit(LOOPCTL_EXIT_FAILURE);
	if (argc < 2) {
		warnx("no command given");
		errtryhelp(NULL);
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		usage();
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		cli_print_version();
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* getopt_long() names argv[0] in its messages */
		if (asprintf(&cmd_argv0, "%s %s", program_invocation_short_name,
			     argv[1]) < 0)
			err(LOOPCTL_EXIT_FAILURE, "cannot allocate memory");
		cmd_name = argv[1];
		argv[1] = cmd_argv0;
		return cmds[i].fn(argc - 1, argv + 1);
	}
	if (argv[1][0] == '-')
		warnx("unrecognized option '%s'", argv[1]);
	else
		warnx("unknown command '%s'", argv[1]);
	errtryhelp(NULL);
}
