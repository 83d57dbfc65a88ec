// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl attach: a file on a loop device, direct I/O decided before
 * anything is attached, nothing left attached after a failure.
 */
#include "loopctl.h"

static void __attribute__((__noreturn__)) usage_attach(void)
{
	fputs(USAGE_HEADER
	      " loopctl attach [options] <file> [<device>]\n"
	      " loopctl attach [options] --autoclear <file> [<device>] -- <command>...\n"
	      "\n"
	      "Attach <file> to <device>, or to the first free loop device, and print\n"
	      "the device name. With --autoclear, run <command> with the device held\n"
	      "open, its name in $LOOPDEV and in place of {} in the arguments; the\n"
	      "device is detached when the command is done with it.\n"
	      "\n"
	      USAGE_OPTIONS
	      "     --direct-io[=<mode>]  direct I/O: on, auto or off (default: auto;\n"
	      "                             alone: on)\n"
	      " -b, --sector-size <size>  logical sector size: a power of two from 512\n"
	      "                             to the page size, or auto\n"
	      " -o, --offset <bytes>      start at this offset in <file>\n"
	      "     --sizelimit <bytes>   use at most this many bytes of <file>\n"
	      " -r, --read-only           attach read-only\n"
	      " -P, --partscan            scan the device for partitions\n"
	      "     --autoclear           detach automatically on the last close (needs\n"
	      "                             a command)\n"
	      " -n, --dry-run             check everything and print the plan, attach\n"
	      "                             nothing\n"
	      " -q, --quiet               do not warn when direct I/O stays off\n"
	      " -h, --help                " USAGE_HELP, stdout);
	exit(LOOPCTL_EXIT_OK);
}

static void print_plan(const struct loopdev_ctx *lc, const char *file,
		       const char *device)
{
	printf("file:        %s\n", file);
	printf("device:      %s\n", device ? device : "first free");
	if (loopdev_get_sector_size(lc))
		printf("sector size: %u%s\n", loopdev_get_sector_size(lc),
		       loopdev_is_flag(lc, LOOPDEV_FL_SECTOR_AUTO) ?
		       " (auto)" : "");
	else if (loopdev_get_attach_sector(lc))
		printf("sector size: %u (the backing device's, for direct I/O)\n",
		       loopdev_get_attach_sector(lc));
	else
		printf("sector size: kernel default\n");
	printf("offset:      %" PRIu64 "\n", loopdev_get_offset(lc));
	printf("sizelimit:   %" PRIu64 "\n", loopdev_get_sizelimit(lc));
	printf("read-only:   %s\n",
	       loopdev_is_flag(lc, LOOPDEV_FL_READONLY) ? "yes" : "no");
	printf("direct I/O:  %s\n", loopdev_wants_dio(lc) ? "on" : "off");
}

/* Exit status of a command that could not be started (as in sh). */
enum {
	CMD_EXIT_CANNOT_EXEC	= 126,
	CMD_EXIT_NOT_FOUND	= 127,
	CMD_EXIT_SIGNAL_BASE	= 128,	/* + the signal number */
};

/* @arg with every "{}" replaced by @dev; a new string. */
static char *subst_dev(const char *arg, const char *dev)
{
	size_t n = 0, dlen = strlen(dev);
	const char *p;
	char *out, *q;

	for (p = arg; (p = strstr(p, "{}")); p += 2)
		n++;
	out = malloc(strlen(arg) + n * dlen + 1);
	if (!out)
		err(LOOPCTL_EXIT_FAILURE, "cannot allocate memory");
	for (q = out; *arg; ) {
		if (arg[0] == '{' && arg[1] == '}') {
			memcpy(q, dev, dlen);
			q += dlen;
			arg += 2;
		} else {
			*q++ = *arg++;
		}
	}
	*q = '\0';
	return out;
}

/*
 * Run @cmd (a NULL-terminated argv) with @dev in $LOOPDEV and in place
 * of {}, while this process holds the device open; returns the
 * command's exit status (128+N when killed by signal N), 126 when it
 * could not be executed, 127 when not found, or -errno when it could
 * not be started at all (no process was created). A command that was
 * not started never used the device: the caller releases it. The
 * child's exec failure comes back through a close-on-exec pipe.
 */
static int run_command(char **cmd, const char *dev, int *exec_errno)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int pfd[2], status, e = 0, i, n;
	char **args;
	ssize_t r;
	pid_t pid;

	*exec_errno = 0;
	for (n = 0; cmd[n]; n++)
		;
	args = calloc((size_t)n + 1, sizeof(*args));
	if (!args)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		args[i] = subst_dev(cmd[i], dev);
	if (setenv("LOOPDEV", dev, 1) < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		e = -errno;
		goto out;
	}
	/* like system(): the terminal's signals are for the command */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(pfd[0]);
		close(pfd[1]);
		goto restore;
	}
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		close(pfd[0]);
		execvp(args[0], args);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(CMD_EXIT_CANNOT_EXEC);
		_exit(e == ENOENT ? CMD_EXIT_NOT_FOUND : CMD_EXIT_CANNOT_EXEC);
	}
	close(pfd[1]);
	do {
		r = read(pfd[0], exec_errno, sizeof(*exec_errno));
	} while (r < 0 && errno == EINTR);
	if (r != sizeof(*exec_errno))
		*exec_errno = 0;	/* EOF: the exec succeeded */
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			e = -errno;
			goto restore;
		}
	}
	if (WIFSIGNALED(status))
		e = CMD_EXIT_SIGNAL_BASE + WTERMSIG(status);
	else
		e = WEXITSTATUS(status);
restore:
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
out:
	for (i = 0; i < n; i++)
		free(args[i]);
	free(args);
	return e;
}

/*
 * Split argv at the first "--": the command after it in *@cmd (NULL when
 * there is none), and the new argc for getopt.
 */
static int split_command(int argc, char **argv, char ***cmd)
{
	int i;

	*cmd = NULL;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--"))
			continue;
		*cmd = argv + i + 1;
		argv[i] = NULL;
		return i;
	}
	return argc;
}

/* What the command line asks for beyond the loop context's settings. */
struct attach_args {
	const char *file;
	const char *device;	/* NULL: the first free device */
	char **cmd;		/* after "--": run while held (--autoclear) */
	bool dry_run;
	bool quiet;
};

/*
 * The operands, and the combinations once every option is known; bad
 * usage exits. @argc: the arguments before "--".
 */
static void check_attach(int argc, char **argv, struct loopdev_ctx *lc,
			 struct attach_args *a)
{
	check_operands(argc, argv, 1, 2, "attach", "file");
	if (a->cmd && !*a->cmd) {
		warnx("attach: no command given after --");
		errtryhelp("attach");
	}
	if (loopdev_is_flag(lc, LOOPDEV_FL_AUTOCLEAR) && !a->cmd) {
		/* our own close would be the last: detached at once */
		warnx("attach: --autoclear needs a command (after --) to run while the device is held; for a mount use 'mount -o loop'");
		errtryhelp("attach");
	}
	if (a->cmd && !loopdev_is_flag(lc, LOOPDEV_FL_AUTOCLEAR)) {
		warnx("attach: a command (after --) needs --autoclear");
		errtryhelp("attach");
	}
	a->file = argv[optind];
	if (argc - optind == 2) {
		a->device = argv[optind + 1];
		set_device_or_die(lc, a->device);
	}
}

/* Options and operands into @lc and @a; bad usage exits. */
static void parse_attach(int argc, char **argv, struct loopdev_ctx *lc,
			 struct attach_args *a)
{
	static const struct option longopts[] = {
		{ "direct-io",   optional_argument, NULL, OPT_DIRECT_IO },
		{ "sector-size", required_argument, NULL, 'b' },
		{ "offset",      required_argument, NULL, 'o' },
		{ "sizelimit",   required_argument, NULL, OPT_SIZELIMIT },
		{ "read-only",   no_argument,       NULL, 'r' },
		{ "partscan",    no_argument,       NULL, 'P' },
		{ "autoclear",   no_argument,       NULL, OPT_AUTOCLEAR },
		{ "dry-run",     no_argument,       NULL, 'n' },
		{ "quiet",       no_argument,       NULL, 'q' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	argc = split_command(argc, argv, &a->cmd);
	while ((c = getopt_long(argc, argv, "b:o:rPnqh", longopts,
				NULL)) != -1) {
		switch (c) {
		case OPT_DIRECT_IO:
			loopdev_set_dio(lc, parse_dio(optarg, "attach"));
			break;
		case 'b':
			parse_sector(lc, optarg);
			break;
		case 'o':
			loopdev_set_offset(lc, parse_bytes(optarg, "--offset"));
			break;
		case OPT_SIZELIMIT:
			loopdev_set_sizelimit(lc, parse_bytes(optarg,
							      "--sizelimit"));
			if (loopdev_get_sizelimit(lc) % 512)
				errx(LOOPCTL_EXIT_FAILURE,
				     "--sizelimit: '%s': not a multiple of 512 bytes (the kernel would round it down)",
				     optarg);
			break;
		case 'r':
			loopdev_set_flags(lc, LOOPDEV_FL_READONLY);
			break;
		case 'P':
			loopdev_set_flags(lc, LOOPDEV_FL_PARTSCAN);
			break;
		case OPT_AUTOCLEAR:
			loopdev_set_flags(lc, LOOPDEV_FL_AUTOCLEAR);
			break;
		case 'n':
			a->dry_run = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			usage_attach();
		default:
			errtryhelp("attach");
		}
	}
	check_attach(argc, argv, lc, a);
	if (getenv("LOOPCTL_LEGACY_SETUP"))
		loopdev_set_flags(lc, LOOPDEV_FL_LEGACY);
}

/*
 * Open the backing file (once; everything after uses the descriptor)
 * and decide direct I/O before anything is attached. Exits when there
 * is nothing to attach or direct I/O is required and impossible.
 */
static void open_and_plan(struct loopdev_ctx *lc, const struct attach_args *a)
{
	const char *file = a->file;
	struct loopdev_dio d;
	int rc;

	rc = loopdev_open_backing(lc, file);
	if (rc == -EINVAL)
		errx(LOOPCTL_EXIT_FAILURE,
		     "%s: not a regular file or block device", file);
	if (rc)
		errx(exit_code_of(rc) == LOOPCTL_EXIT_PERM ?
		     LOOPCTL_EXIT_PERM : LOOPCTL_EXIT_FAILURE, "%s: %s",
		     cli_name(file), strerror(-rc));
	if (!a->quiet && loopdev_is_flag(lc, LOOPDEV_FL_RO_FALLBACK))
		warnx("%s: write-protected, attaching read-only", file);

	rc = loopdev_plan(lc, &d);
	if (rc == -ENODATA) {
		nothing_to_attach(loopdev_get_back_size(lc), file,
				  loopdev_get_offset(lc), true);
		exit(LOOPCTL_EXIT_NO_DATA);
	}
	if (rc == -EOPNOTSUPP) {
		warnx("%s: direct I/O is impossible, nothing attached:", file);
		explain(file, &d, true);
		exit(LOOPCTL_EXIT_NO_DIO);
	}
	if (rc)
		errx(LOOPCTL_EXIT_FAILURE, "%s: %s", file, strerror(-rc));
	if (a->quiet)
		return;
	if (loopdev_get_dio(lc) == LOOPDEV_DIO_AUTO && !loopdev_wants_dio(lc)) {
		warnx("%s: direct I/O is off, attaching with buffered I/O:",
		      file);
		explain(file, &d, true);
	}
	if (loopdev_wants_dio(lc))
		explain_warnings(file, &d, true);
}

/* Attach, or exit with the reason; nothing is left attached then. */
static void attach_or_die(struct loopdev_ctx *lc, const struct attach_args *a)
{
	const char *device = a->device;
	int rc;

	require_access(device ? loopdev_get_path(lc) : LOOPDEV_CONTROL,
		       R_OK | W_OK, "attaching a loop device");
	rc = loopdev_attach(lc);
	if (rc == -EOPNOTSUPP) {
		/* the prediction said yes, the kernel said no */
		warnx("%s: direct I/O was required but the kernel kept it off; nothing attached",
		      a->file);
		exit(LOOPCTL_EXIT_NO_DIO);
	}
	if (rc == -EBUSY)
		errx(LOOPCTL_EXIT_BUSY, device ?
		     "%s: device is busy (already bound; detach it first or omit <device>)" :
		     "%s: no free loop device after %u tries",
		     device ? device : LOOPDEV_CONTROL,
		     loopdev_get_alloc_tries(lc));
	if (rc)
		exit(report(device ? device : a->file, rc, "attach"));
}

/* Requested versus effective: say it when they differ. */
static void warn_differences(struct loopdev_ctx *lc, bool quiet)
{
	const struct loopdev_state *st = loopdev_get_state(lc);
	const char *path = loopdev_get_path(lc);

	if (loopdev_wants_dio(lc) && !st->dio && !quiet)
		warnx("%s: direct I/O was requested but the kernel kept it off although every known condition holds; see 'loopctl why %s'",
		      path, path);
	if (loopdev_get_attach_sector(lc) &&
	    st->sector_size != loopdev_get_attach_sector(lc))
		warnx("%s: sector size is %u, not %u as requested", path,
		      st->sector_size, loopdev_get_attach_sector(lc));
	if (st->offset != loopdev_get_offset(lc) ||
	    st->sizelimit != loopdev_get_sizelimit(lc))
		warnx("%s: offset/sizelimit is %" PRIu64 "/%" PRIu64
		      ", not %" PRIu64 "/%" PRIu64 " as requested", path,
		      st->offset, st->sizelimit, loopdev_get_offset(lc),
		      loopdev_get_sizelimit(lc));
}

/*
 * --autoclear with a command: run it while we hold the device; our
 * close is then the last and detaches it. Returns the command's status.
 */
static int run_held(struct loopdev_ctx *lc, char **cmd)
{
	int rc, exec_errno;

	request_save(lc, loopdev_get_dio(lc));
	rc = run_command(cmd, loopdev_get_path(lc), &exec_errno);
	if (rc < 0 || exec_errno) {
		/* never used: detach it now, not on some later close */
		if (exec_errno)
			warnx("%s: %s", cmd[0], strerror(exec_errno));
		else
			warnx("%s: cannot run: %s", cmd[0], strerror(-rc));
		if (loopdev_release(lc))
			warnx("%s: cannot detach it again",
			      loopdev_get_path(lc));
		if (rc < 0)
			rc = LOOPCTL_EXIT_FAILURE;
	}
	request_forget(lc);
	loopdev_deinit(lc);	/* the last close: autoclear */
	return rc;
}

/*
 * The name is the result: a device nobody can name is a leak, so if it
 * cannot be written, undo the attach and fail.
 */
static void print_name_or_undo(struct loopdev_ctx *lc)
{
	const char *path = loopdev_get_path(lc);
	int rc;

	printf("%s\n", path);
	if (!fflush(stdout) && !ferror(stdout))
		return;
	warn("%s: cannot print the device name", path);
	rc = loopdev_release(lc);
	if (rc)
		warnx("%s: cannot detach it again: %s", path, strerror(-rc));
	else
		warnx("%s: detached again", path);
	clearerr(stdout);	/* said once, here */
	exit(LOOPCTL_EXIT_FAILURE);
}

int cmd_attach(int argc, char **argv)
{
	struct attach_args a = { 0 };
	struct loopdev_ctx lc;

	loopdev_init(&lc);
	parse_attach(argc, argv, &lc, &a);
	open_and_plan(&lc, &a);
	if (a.dry_run) {
		print_plan(&lc, a.file, a.device);
		loopdev_deinit(&lc);
		return LOOPCTL_EXIT_OK;
	}
	attach_or_die(&lc, &a);
	warn_differences(&lc, a.quiet);
	if (a.cmd)
		return run_held(&lc, a.cmd);
	print_name_or_undo(&lc);
	/* best effort: status then shows what was asked for */
	request_save(&lc, loopdev_get_dio(&lc));
	loopdev_deinit(&lc);
	return LOOPCTL_EXIT_OK;
}
