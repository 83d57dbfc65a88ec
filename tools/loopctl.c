// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl - attach files to loop devices with direct I/O and tell the
 * truth about it: whether direct I/O is really in effect, and if not,
 * why and what to do. Subcommands attach, why, status (list), set,
 * detach and cache; a thin CLI over tools/lib/loopdev.c, which owns every
 * kernel interaction. This file owns every message and exit code.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "c.h"
#include "cliutils.h"
#include "columns.h"
#include "loopdev.h"
#include "strutils.h"

/* Exit status, listed in loopctl(8) EXIT STATUS. */
enum {
	LOOPCTL_EXIT_OK		= 0,	/* done (why: direct I/O can work) */
	LOOPCTL_EXIT_FAILURE	= 1,	/* bad usage or any other error */
	LOOPCTL_EXIT_NOT_LOOP	= 2,	/* not a loop device, or not bound */
	LOOPCTL_EXIT_NO_DIO	= 3,	/* direct I/O impossible */
	LOOPCTL_EXIT_PERM	= 4,	/* permission denied */
	LOOPCTL_EXIT_BUSY	= 5,	/* busy, no free device, deferred */
	LOOPCTL_EXIT_NO_DATA	= 6,	/* empty file, offset past its end */
};

/* Long-only options, numbered past every char. */
enum {
	OPT_DIRECT_IO = CHAR_MAX + 1,
	OPT_SIZELIMIT,
	OPT_AUTOCLEAR,
	OPT_RAW,
	OPT_OUTPUT_ALL,
	OPT_REMOVE,
};

static int exit_status = LOOPCTL_EXIT_OK;
static const char *cmd_name;	/* "status" or "list", for messages */

/* Keep the first failure's code: the one the user sees first. */
static void set_exit(int code)
{
	if (exit_status == LOOPCTL_EXIT_OK)
		exit_status = code;
}

static int exit_code_of(int rc)
{
	switch (rc) {
	case -EACCES:
	case -EPERM:
		return LOOPCTL_EXIT_PERM;
	case -ENXIO:
	case -ENODEV:
		return LOOPCTL_EXIT_NOT_LOOP;
	case -EOPNOTSUPP:
		return LOOPCTL_EXIT_NO_DIO;
	case -EBUSY:
		return LOOPCTL_EXIT_BUSY;
	default:
		return LOOPCTL_EXIT_FAILURE;
	}
}

static void __attribute__((__noreturn__)) errtryhelp(const char *cmd)
{
	cli_errtryhelp(cmd, LOOPCTL_EXIT_FAILURE);
}

/* CAP_SYS_ADMIN in the effective set, from /proc/self/status. */
static bool has_cap_sys_admin(void)
{
	unsigned long long caps = 0;
	char line[256];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			found = true;
			break;
		}
	fclose(f);
	if (!found)
		return geteuid() == 0;
	return caps & (1ULL << 21);	/* CAP_SYS_ADMIN */
}

/*
 * Say so, with a clear message, when @path (a loop device or
 * /dev/loop-control) cannot be opened for @mode: before anything is
 * opened. Returns 0 or the exit code it maps to.
 */
static int check_access(const char *path, int mode, const char *what)
{
	if (faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0)
		return LOOPCTL_EXIT_OK;
	if (errno == EACCES || errno == EPERM || errno == EROFS) {
		warnx("%s: permission denied: %s needs root (CAP_SYS_ADMIN)%s",
		      path, what, has_cap_sys_admin() ? "" :
		      "; run it as root, e.g. with sudo");
		return LOOPCTL_EXIT_PERM;
	}
	if (errno == ENOENT && !strcmp(path, LOOPDEV_CONTROL))
		warnx("%s: does not exist: is the loop driver loaded? "
		      "(modprobe loop)", path);
	else
		warn("%s", path);
	return LOOPCTL_EXIT_FAILURE;
}

/* check_access(), fatal. */
static void require_access(const char *path, int mode, const char *what)
{
	int code = check_access(path, mode, what);

	if (code)
		exit(code);
}

/* Report a failed operation on @obj; returns the exit code it maps to. */
static int report(const char *obj, int rc, const char *what)
{
	int code = exit_code_of(rc);

	switch (rc) {
	case -EACCES:
	case -EPERM:
		warnx("%s: %s: permission denied%s", obj, what,
		      has_cap_sys_admin() ? "" :
		      " (needs root: CAP_SYS_ADMIN)");
		break;
	case -ENXIO:
		warnx("%s: not bound to a file", obj);
		break;
	case -ENODEV:
		warnx("%s: not a loop device", obj);
		break;
	case -EBUSY:
		warnx("%s: %s: device is busy", obj, what);
		break;
	case -ESTALE:
		warnx("%s: %s: the device node changed after it was checked "
		      "(replaced?); nothing done", obj, what);
		break;
	default:
		warnx("%s: %s: %s", obj, what, strerror(-rc));
		break;
	}
	return code;
}

/*
 * Report why loopdev_set_device(@name) failed with @rc; returns the exit
 * code. An empty name is not a loop device either.
 */
static int device_error(const char *name, int rc)
{
	if (rc == -ENODEV || !*name) {
		warnx("%s: not a loop device", cli_name(name));
		return LOOPCTL_EXIT_NOT_LOOP;
	}
	warnx("%s: %s", name, strerror(-rc));
	return rc == -ENOENT ? LOOPCTL_EXIT_NOT_LOOP : LOOPCTL_EXIT_FAILURE;
}

/* Name a device argument; exits on a bad one, like every CLI here. */
static void set_device_or_die(struct loopdev_ctx *lc, const char *name)
{
	int rc = loopdev_set_device(lc, name);

	if (rc)
		exit(device_error(name, rc));
}

/* ------------------------------------------------------------------ */
/* option values                                                       */

static enum loopdev_dio_mode parse_dio(const char *arg, const char *cmd)
{
	if (!arg || !strcmp(arg, "on"))
		return LOOPDEV_DIO_ON;
	if (!strcmp(arg, "off"))
		return LOOPDEV_DIO_OFF;
	if (!strcmp(arg, "auto"))
		return LOOPDEV_DIO_AUTO;
	warnx("--direct-io: '%s': not on, auto or off", arg);
	errtryhelp(cmd);
}

/* A byte count: digits with an optional K, M, G... suffix. */
static uint64_t parse_bytes(const char *arg, const char *opt)
{
	uint64_t v;
	int rc = strtosize(arg, &v);

	if (rc == -ERANGE || (!rc && v > (uint64_t)INT64_MAX))
		errx(LOOPCTL_EXIT_FAILURE, "%s: '%s': too large", opt, arg);
	if (rc)
		errx(LOOPCTL_EXIT_FAILURE, "%s: '%s': not a size in bytes "
		     "(digits, optionally followed by K, M, G, T)", opt, arg);
	return v;
}

/* Sets the size, or LOOPDEV_FL_SECTOR_AUTO for "auto". */
static void parse_sector(struct loopdev_ctx *lc, const char *arg)
{
	uint64_t v;

	if (!strcmp(arg, "auto")) {
		loopdev_set_flags(lc, LOOPDEV_FL_SECTOR_AUTO);
		return;
	}
	if (strtosize(arg, &v) || v > UINT32_MAX ||
	    loopdev_set_sector_size(lc, (uint32_t)v) || !v)
		errx(LOOPCTL_EXIT_FAILURE, "--sector-size: '%s': not a power "
		     "of two from 512 to %u, or auto", arg,
		     loopdev_sector_max());
}

static const char *dio_word(enum loopdev_dio_mode m)
{
	switch (m) {
	case LOOPDEV_DIO_ON:
		return "on";
	case LOOPDEV_DIO_OFF:
		return "off";
	case LOOPDEV_DIO_AUTO:
		return "auto";
	default:
		return "keep";
	}
}

/* ------------------------------------------------------------------ */
/* explaining direct I/O                                               */

static const char *bdev_label(const struct loopdev_dio *d, char *buf,
			      size_t len)
{
	if (d->bdev_name[0])
		snprintf(buf, len, "%s (%u:%u)", d->bdev_name,
			 major(d->bdev), minor(d->bdev));
	else
		snprintf(buf, len, "%u:%u", major(d->bdev), minor(d->bdev));
	return buf;
}

/* One short line per blocking reason, for the DIO-WHY column. */
static void short_reasons(const struct loopdev_dio *d, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...) do {							\
		if (n < len)						\
			n += (size_t)snprintf(buf + n, len - n, "%s",	\
					      n ? "; " : "");		\
		if (n < len)						\
			n += (size_t)snprintf(buf + n, len - n,		\
					      __VA_ARGS__);		\
	} while (0)
	if (d->reasons & LOOPDEV_DIO_NO_ODIRECT)
		ADD("%s: no O_DIRECT", d->fstype);
	if (d->reasons & LOOPDEV_DIO_SECTOR)
		ADD("sector size %u < %s's %u", d->sector_used,
		    d->bdev_name[0] ? d->bdev_name : "device", d->bdev_lbs);
	if (d->reasons & LOOPDEV_DIO_OFFSET)
		ADD("offset %" PRIu64 " not aligned to %u", d->offset,
		    d->bdev_lbs);
	if (d->reasons & LOOPDEV_DIO_FS_ALIGN)
		ADD("%s needs %u-byte alignment", d->fstype,
		    d->dio_offset_align);
	if (d->reasons & LOOPDEV_DIO_TOO_LARGE)
		ADD("alignment %u > page size", d->required);
#undef ADD
}

/*
 * Print why direct I/O cannot work, one reason a line, each with what
 * to do, as "loopctl: OBJ: ..." on stderr (attach, set) or plain lines
 * on stdout (why).
 */
static void explain(FILE *out, const char *obj, const struct loopdev_dio *d,
		    bool to_stderr)
{
	const char *pfx = to_stderr ? "loopctl: " : "  ";
	char dev[96];

	if (d->reasons & LOOPDEV_DIO_NO_ODIRECT) {
		fprintf(out, "%s%s%s%s does not support O_DIRECT (%s); move "
			"the file to a file system that does (ext4, xfs, "
			"btrfs) or use --direct-io=off%s\n", pfx,
			to_stderr ? obj : "", to_stderr ? ": " : "",
			d->fstype, strerror(d->odirect_errno),
			!strcmp(d->fstype, "tmpfs") ?
			"; tmpfs supports O_DIRECT from Linux 6.6" : "");
	}
	if (d->reasons & LOOPDEV_DIO_SECTOR) {
		fprintf(out, "%s%s%ssector size %u is smaller than %u, the "
			"logical block size of %s; use --sector-size %u (or "
			"auto); note that this changes how a partition table "
			"inside the image is read\n", pfx,
			to_stderr ? obj : "", to_stderr ? ": " : "",
			d->sector_used, d->bdev_lbs,
			bdev_label(d, dev, sizeof(dev)),
			d->best_sector ? d->best_sector : d->bdev_lbs);
	}
	if (d->reasons & LOOPDEV_DIO_OFFSET) {
		fprintf(out, "%s%s%soffset %" PRIu64 " is not a multiple of "
			"%u, the logical block size of %s; use an offset "
			"aligned to %u bytes\n", pfx,
			to_stderr ? obj : "", to_stderr ? ": " : "",
			d->offset, d->bdev_lbs,
			bdev_label(d, dev, sizeof(dev)), d->bdev_lbs);
	}
	if (d->reasons & LOOPDEV_DIO_FS_ALIGN) {
		fprintf(out, "%s%s%s%s needs direct I/O aligned to %u bytes "
			"(STATX_DIOALIGN) but the sector size is %u and the "
			"offset %" PRIu64 "; use --sector-size %u and an "
			"offset aligned to it (the kernel would not check this "
			"and the I/O would fail)\n", pfx,
			to_stderr ? obj : "", to_stderr ? ": " : "",
			d->fstype, d->dio_offset_align, d->sector_used,
			d->offset, d->dio_offset_align);
	}
	if (d->reasons & LOOPDEV_DIO_TOO_LARGE) {
		fprintf(out, "%s%s%sdirect I/O needs %u-byte alignment, more "
			"than the largest loop sector size (%u, the page "
			"size); use --direct-io=off\n", pfx,
			to_stderr ? obj : "", to_stderr ? ": " : "",
			d->required, loopdev_sector_max());
	}
}

/* Warnings that do not keep direct I/O off. */
static void explain_warnings(FILE *out, const char *obj,
			     const struct loopdev_dio *d, bool to_stderr)
{
	const char *pfx = to_stderr ? "loopctl: " : "  note: ";

	if (d->reasons & LOOPDEV_DIO_FS_BUFFERED)
		fprintf(out, "%s%s%s%s reports no direct I/O support for this "
			"file (STATX_DIOALIGN): it accepts O_DIRECT but serves "
			"it through the page cache (e.g. ext4 data=journal)\n",
			pfx, to_stderr ? obj : "", to_stderr ? ": " : "",
			d->fstype);
	if (d->reasons & LOOPDEV_DIO_ALIGN_UNKNOWN)
		fprintf(out, "%s%s%s%s reports no direct I/O alignment (no "
			"STATX_DIOALIGN) and has no block device: neither the "
			"kernel nor loopctl can check the alignment\n", pfx,
			to_stderr ? obj : "", to_stderr ? ": " : "",
			d->fstype);
}

/*
 * Say why there is nothing to attach of @file, @size bytes, at @offset
 * (loopdev_check_extent() said -ENODATA for that size).
 * @to_stderr: a warning (attach) or a line on stdout (why).
 */
static void nothing_to_attach(uint64_t size, const char *file,
			      uint64_t offset, bool to_stderr)
{
	char why[128];

	if (!size)
		snprintf(why, sizeof(why), "the file is empty");
	else if (offset >= size)
		snprintf(why, sizeof(why), "offset %" PRIu64 " is at or past "
			 "the end of the file (%" PRIu64 " bytes)", offset,
			 size);
	else
		snprintf(why, sizeof(why), "%" PRIu64 " bytes from offset %"
			 PRIu64 " to the end of the file, less than one "
			 "%d-byte sector", size - offset, offset,
			 LOOPDEV_SECTOR_MIN);
	if (to_stderr)
		warnx("%s: nothing to attach: %s (the device would have 0 "
		      "bytes)", file, why);
	else
		printf("%s: nothing to attach: %s\n", file, why);
}

/* ------------------------------------------------------------------ */
/* attach                                                              */

/* Between @min and @max operands after the options, or a usage error
 * naming what is missing (@what) or the first one too many. */
static void check_operands(int argc, char **argv, int min, int max,
			   const char *cmd, const char *what)
{
	if (argc - optind < min) {
		warnx("%s: no %s given", cmd, what);
		errtryhelp(cmd);
	}
	if (argc - optind > max) {
		warnx("%s: unexpected argument '%s'", cmd, argv[optind + max]);
		errtryhelp(cmd);
	}
}

static void __attribute__((__noreturn__)) usage_attach(void)
{
	fputs("Usage:\n"
	      " loopctl attach [options] <file> [<device>]\n"
	      " loopctl attach [options] --autoclear <file> [<device>] -- <command>...\n"
	      "\n"
	      "Attach <file> to <device>, or to the first free loop device, and print\n"
	      "the device name. With --autoclear, run <command> with the device held\n"
	      "open, its name in $LOOPDEV and in place of {} in the arguments; the\n"
	      "device is detached when the command is done with it.\n"
	      "\n"
	      "Options:\n"
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
	      " -h, --help                display this help\n", stdout);
	exit(LOOPCTL_EXIT_OK);
}

static void print_plan(const struct loopdev_ctx *lc, const char *file,
		       const char *device)
{
	printf("file:        %s\n", file);
	printf("device:      %s\n", device ? device : "first free");
	if (lc->sector_size)
		printf("sector size: %u%s\n", lc->sector_size,
		       loopdev_is_flag(lc, LOOPDEV_FL_SECTOR_AUTO) ?
		       " (auto)" : "");
	else
		printf("sector size: kernel default\n");
	printf("offset:      %" PRIu64 "\n", lc->offset);
	printf("sizelimit:   %" PRIu64 "\n", lc->sizelimit);
	printf("read-only:   %s\n",
	       loopdev_is_flag(lc, LOOPDEV_FL_READONLY) ? "yes" : "no");
	printf("direct I/O:  %s\n", lc->want_dio ? "on" : "off");
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

static int cmd_attach(int argc, char **argv)
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
	struct loopdev_ctx lc;
	struct loopdev_dio d;
	const char *file, *device = NULL;
	bool dry_run = false, quiet = false;
	char **cmd;
	int c, rc, exec_errno;

	loopdev_init(&lc);
	argc = split_command(argc, argv, &cmd);
	while ((c = getopt_long(argc, argv, "b:o:rPnqh", longopts,
				NULL)) != -1) {
		switch (c) {
		case OPT_DIRECT_IO:
			loopdev_set_dio(&lc, parse_dio(optarg, "attach"));
			break;
		case 'b':
			parse_sector(&lc, optarg);
			break;
		case 'o':
			loopdev_set_offset(&lc, parse_bytes(optarg,
							    "--offset"));
			break;
		case OPT_SIZELIMIT:
			loopdev_set_sizelimit(&lc, parse_bytes(optarg,
							       "--sizelimit"));
			if (lc.sizelimit % 512)
				errx(LOOPCTL_EXIT_FAILURE, "--sizelimit: '%s': "
				     "not a multiple of 512 bytes (the kernel "
				     "would round it down)", optarg);
			break;
		case 'r':
			loopdev_set_flags(&lc, LOOPDEV_FL_READONLY);
			break;
		case 'P':
			loopdev_set_flags(&lc, LOOPDEV_FL_PARTSCAN);
			break;
		case OPT_AUTOCLEAR:
			loopdev_set_flags(&lc, LOOPDEV_FL_AUTOCLEAR);
			break;
		case 'n':
			dry_run = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage_attach();
		default:
			errtryhelp("attach");
		}
	}
	check_operands(argc, argv, 1, 2, "attach", "file");
	if (cmd && !*cmd) {
		warnx("attach: no command given after --");
		errtryhelp("attach");
	}
	if (loopdev_is_flag(&lc, LOOPDEV_FL_AUTOCLEAR) && !cmd) {
		/* our own close would be the last: detached at once */
		warnx("attach: --autoclear needs a command (after --) to run "
		      "while the device is held; for a mount use 'mount -o "
		      "loop'");
		errtryhelp("attach");
	}
	if (cmd && !loopdev_is_flag(&lc, LOOPDEV_FL_AUTOCLEAR)) {
		warnx("attach: a command (after --) needs --autoclear");
		errtryhelp("attach");
	}
	file = argv[optind];
	if (argc - optind == 2) {
		device = argv[optind + 1];
		set_device_or_die(&lc, device);
	}
	if (getenv("LOOPCTL_LEGACY_SETUP"))
		loopdev_set_flags(&lc, LOOPDEV_FL_LEGACY);

	/* The file, once; everything after uses the descriptor. */
	rc = loopdev_open_backing(&lc, file);
	if (rc == -EINVAL)
		errx(LOOPCTL_EXIT_FAILURE, "%s: not a regular file or block "
		     "device", file);
	if (rc)
		errx(exit_code_of(rc) == LOOPCTL_EXIT_PERM ?
		     LOOPCTL_EXIT_PERM : LOOPCTL_EXIT_FAILURE, "%s: %s",
		     cli_name(file), strerror(-rc));
	if (!quiet && loopdev_is_flag(&lc, LOOPDEV_FL_RO_FALLBACK))
		warnx("%s: write-protected, attaching read-only", file);

	rc = loopdev_plan(&lc, &d);
	if (rc == -ENODATA) {
		nothing_to_attach(loopdev_get_back_size(&lc), file, lc.offset,
				  true);
		exit(LOOPCTL_EXIT_NO_DATA);
	}
	if (rc == -EOPNOTSUPP) {
		warnx("%s: direct I/O is impossible, nothing attached:", file);
		explain(stderr, file, &d, true);
		exit(LOOPCTL_EXIT_NO_DIO);
	}
	if (rc)
		errx(LOOPCTL_EXIT_FAILURE, "%s: %s", file, strerror(-rc));
	if (lc.dio == LOOPDEV_DIO_AUTO && !lc.want_dio && !quiet) {
		warnx("%s: direct I/O is off, attaching with buffered I/O:",
		      file);
		explain(stderr, file, &d, true);
	}
	if (lc.want_dio && !quiet)
		explain_warnings(stderr, file, &d, true);

	if (dry_run) {
		print_plan(&lc, file, device);
		loopdev_deinit(&lc);
		return LOOPCTL_EXIT_OK;
	}

	require_access(device ? lc.path : LOOPDEV_CONTROL, R_OK | W_OK,
		       "attaching a loop device");
	rc = loopdev_attach(&lc);
	if (rc == -EOPNOTSUPP) {
		/* the prediction said yes, the kernel said no */
		warnx("%s: direct I/O was required but the kernel kept it "
		      "off; nothing attached", file);
		exit(LOOPCTL_EXIT_NO_DIO);
	}
	if (rc == -EBUSY)
		errx(LOOPCTL_EXIT_BUSY, device ? "%s: device is busy (already "
		     "bound; detach it first or omit <device>)" :
		     "%s: no free loop device after %u tries", device ? device :
		     LOOPDEV_CONTROL, lc.alloc_tries);
	if (rc)
		exit(report(device ? device : file, rc, "attach"));

	/* Requested versus effective: say it when they differ. */
	if (lc.want_dio && !lc.state.dio && !quiet)
		warnx("%s: direct I/O was requested but the kernel kept it "
		      "off although every known condition holds; see "
		      "'loopctl why %s'", lc.path, lc.path);
	if (lc.sector_size && lc.state.sector_size != lc.sector_size)
		warnx("%s: sector size is %u, not %u as requested", lc.path,
		      lc.state.sector_size, lc.sector_size);
	if (lc.state.offset != lc.offset ||
	    lc.state.sizelimit != lc.sizelimit)
		warnx("%s: offset/sizelimit is %" PRIu64 "/%" PRIu64
		      ", not %" PRIu64 "/%" PRIu64 " as requested", lc.path,
		      lc.state.offset, lc.state.sizelimit, lc.offset,
		      lc.sizelimit);
	if (cmd) {
		loopdev_save_request(&lc, lc.dio);
		rc = run_command(cmd, lc.path, &exec_errno);
		if (rc < 0 || exec_errno) {
			/* never used: detach it now, not on some later close */
			if (exec_errno)
				warnx("%s: %s", cmd[0], strerror(exec_errno));
			else
				warnx("%s: cannot run: %s", cmd[0],
				      strerror(-rc));
			if (loopdev_release(&lc))
				warnx("%s: cannot detach it again", lc.path);
			if (rc < 0)
				rc = LOOPCTL_EXIT_FAILURE;
		}
		loopdev_forget_request(&lc);
		loopdev_deinit(&lc);	/* the last close: autoclear */
		return rc;
	}
	/*
	 * The name is the result: a device nobody can name is a leak, so
	 * if it cannot be written, undo the attach and fail.
	 */
	printf("%s\n", lc.path);
	if (fflush(stdout) || ferror(stdout)) {
		warn("%s: cannot print the device name", lc.path);
		rc = loopdev_release(&lc);
		if (rc)
			warnx("%s: cannot detach it again: %s", lc.path,
			      strerror(-rc));
		else
			warnx("%s: detached again", lc.path);
		clearerr(stdout);	/* said once, here */
		exit(LOOPCTL_EXIT_FAILURE);
	}
	/* best effort: status then shows what was asked for */
	loopdev_save_request(&lc, lc.dio);
	loopdev_deinit(&lc);
	return LOOPCTL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* why                                                                 */

static void __attribute__((__noreturn__)) usage_why(void)
{
	fputs("Usage:\n"
	      " loopctl why [options] <file>|<device>\n"
	      "\n"
	      "Explain whether direct I/O can work for <file> with the given offset and\n"
	      "sector size, or for a bound loop <device> as it is set up, and if not,\n"
	      "why and what to do. Opens no loop device.\n"
	      "\n"
	      "Options:\n"
	      " -b, --sector-size <size>  logical sector size: a power of two from 512\n"
	      "                             to the page size, or auto\n"
	      " -o, --offset <bytes>      start at this offset in <file>\n"
	      " -h, --help                display this help\n", stdout);
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
		printf("  block device:   none (the kernel checks no block "
		       "size)\n");
	printf("  sector size:    %u%s\n", d->sector_used,
	       d->sector_size ? "" : " (what the kernel picks by default)");
	printf("  offset:         %" PRIu64 "\n", d->offset);
	(void)obj;
}

static int cmd_why(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sector-size", required_argument, NULL, 'b' },
		{ "offset",      required_argument, NULL, 'o' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct loopdev_request req;
	struct loopdev_ctx lc;
	struct loopdev_dio d;
	bool have_offset = false, have_sector = false, is_loop;
	uint64_t size = 0;
	const char *obj;
	int c, fd, rc;

	loopdev_init(&lc);
	while ((c = getopt_long(argc, argv, "b:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			parse_sector(&lc, optarg);
			have_sector = true;
			break;
		case 'o':
			loopdev_set_offset(&lc, parse_bytes(optarg,
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

	is_loop = loopdev_is_device_name(obj);

	memset(&d, 0, sizeof(d));
	if (is_loop) {
		/* sysfs only: no ioctl, not even an open of the device */
		if (have_offset || have_sector)
			errx(LOOPCTL_EXIT_FAILURE, "%s: --offset and "
			     "--sector-size apply to files; for a device use "
			     "its own (or try 'loopctl set')", obj);
		set_device_or_die(&lc, obj);
		rc = loopdev_read_state(&lc);
		if (rc)
			errx(LOOPCTL_EXIT_FAILURE, "%s: %s", obj,
			     strerror(-rc));
		if (!lc.state.bound)
			errx(LOOPCTL_EXIT_NOT_LOOP, "%s: not bound to a file",
			     obj);
		loopdev_load_request(&lc, &req);
		printf("%s: direct I/O is %s (requested: %s), backing file "
		       "%s\n", obj, lc.state.dio ? "on" : "off",
		       req.known ? dio_word(req.dio) : "unknown",
		       lc.state.back_file);
		rc = loopdev_dio_for_state(&lc, &d);
		if (rc) {
			printf("  the backing file cannot be analysed: %s\n",
			       rc == -ESTALE ? "it was replaced" :
			       strerror(-rc));
			loopdev_deinit(&lc);
			return lc.state.dio ? LOOPCTL_EXIT_OK :
					      LOOPCTL_EXIT_FAILURE;
		}
	} else {
		fd = open(obj, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			err(errno == EACCES ? LOOPCTL_EXIT_PERM :
			    LOOPCTL_EXIT_FAILURE, "%s", cli_name(obj));
		d.offset = lc.offset;
		if (loopdev_is_flag(&lc, LOOPDEV_FL_SECTOR_AUTO)) {
			rc = loopdev_check_dio_auto(fd, &d);
		} else {
			d.sector_size = lc.sector_size;
			rc = loopdev_check_dio(fd, &d);
		}
		if (!rc)
			rc = loopdev_check_extent(fd, d.offset, &size);
		if (rc == -ENODATA) {
			nothing_to_attach(size, obj, d.offset, false);
			close(fd);
			loopdev_deinit(&lc);
			return LOOPCTL_EXIT_NO_DATA;
		}
		close(fd);
		if (rc == -EINVAL)
			errx(LOOPCTL_EXIT_FAILURE, "%s: not a regular file or "
			     "block device", obj);
		if (rc)
			errx(LOOPCTL_EXIT_FAILURE, "%s: %s", obj,
			     strerror(-rc));
		if (loopdev_dio_possible(&d))
			printf("%s: direct I/O can work with sector size %u "
			       "and offset %" PRIu64 "\n", obj, d.sector_used,
			       d.offset);
		else
			printf("%s: direct I/O cannot work with sector size %u "
			       "and offset %" PRIu64 "\n", obj, d.sector_used,
			       d.offset);
	}
	print_facts(obj, &d);
	if (loopdev_dio_possible(&d)) {
		if (is_loop && !lc.state.dio)
			printf("  direct I/O is off only because it was not "
			       "asked for: loopctl set %s --direct-io=on\n",
			       obj);
		else if (!is_loop && d.best_sector &&
			 d.best_sector < d.sector_used)
			printf("  the smallest sector size that works is %u\n",
			       d.best_sector);
	} else {
		explain(stdout, obj, &d, false);
	}
	explain_warnings(stdout, obj, &d, false);
	loopdev_deinit(&lc);
	return loopdev_dio_possible(&d) ? LOOPCTL_EXIT_OK : LOOPCTL_EXIT_NO_DIO;
}

/* ------------------------------------------------------------------ */
/* tables: status and cache                                            */

enum {
	COL_NAME,
	COL_BACK_FILE,
	COL_BACK_INO,
	COL_BACK_MAJMIN,
	COL_MAJMIN,
	COL_OFFSET,
	COL_SIZELIMIT,
	COL_SIZE,
	COL_LOG_SEC,
	COL_RO,
	COL_AUTOCLEAR,
	COL_PARTSCAN,
	COL_DIO,
	COL_DIO_REQ,
	COL_DIO_WHY,
	COL_STAT,	/* LOOPDEV_NR_STATS columns from loop/stat */
	NR_STATUS_COLS = COL_STAT + LOOPDEV_NR_STATS,
};

static const struct cli_colinfo status_cols[NR_STATUS_COLS] = {
	[COL_NAME]	  = { "NAME", 0.1, 0, SCOLS_JSON_STRING,
			      "loop device name" },
	[COL_BACK_FILE]	  = { "BACK-FILE", 0.3, SCOLS_FL_NOEXTREMES,
			      SCOLS_JSON_STRING, "backing file" },
	[COL_BACK_INO]	  = { "BACK-INO", 4, SCOLS_FL_RIGHT,
			      SCOLS_JSON_NUMBER, "backing file inode number" },
	[COL_BACK_MAJMIN] = { "BACK-MAJ:MIN", 6, 0, SCOLS_JSON_STRING,
			      "backing file device number" },
	[COL_MAJMIN]	  = { "MAJ:MIN", 3, 0, SCOLS_JSON_STRING,
			      "loop device number" },
	[COL_OFFSET]	  = { "OFFSET", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			      "offset from the beginning, in bytes" },
	[COL_SIZELIMIT]	  = { "SIZELIMIT", 5, SCOLS_FL_RIGHT,
			      SCOLS_JSON_NUMBER,
			      "size limit of the file in bytes (0: none)" },
	[COL_SIZE]	  = { "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			      "device size in bytes" },
	[COL_LOG_SEC]	  = { "LOG-SEC", 4, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			      "logical sector size in bytes" },
	[COL_RO]	  = { "RO", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			      "read-only device" },
	[COL_AUTOCLEAR]	  = { "AUTOCLEAR", 1, SCOLS_FL_RIGHT,
			      SCOLS_JSON_BOOLEAN, "autoclear flag set" },
	[COL_PARTSCAN]	  = { "PARTSCAN", 1, SCOLS_FL_RIGHT,
			      SCOLS_JSON_BOOLEAN, "partition scan flag set" },
	[COL_DIO]	  = { "DIO", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			      "direct I/O in effect" },
	[COL_DIO_REQ]	  = { "DIO-REQ", 4, 0, SCOLS_JSON_STRING,
			      "direct I/O requested: on, auto, off (empty: "
			      "unknown)" },
	[COL_DIO_WHY]	  = { "DIO-WHY", 0.3, SCOLS_FL_TRUNC,
			      SCOLS_JSON_STRING, "why direct I/O is off" },
	/* the loop/stat fields, in the kernel's order */
#define STAT_COL(id, name, help) \
	[COL_STAT + LOOPDEV_STAT_##id] = { name, 5, SCOLS_FL_RIGHT, \
					   SCOLS_JSON_NUMBER, help }
	STAT_COL(DIO_READ_REQS, "DIO-READ-REQS",
		 "read requests completed with direct I/O"),
	STAT_COL(DIO_READ_BYTES, "DIO-READ-BYTES",
		 "bytes read with direct I/O"),
	STAT_COL(DIO_WRITE_REQS, "DIO-WRITE-REQS",
		 "write requests completed with direct I/O"),
	STAT_COL(DIO_WRITE_BYTES, "DIO-WRITE-BYTES",
		 "bytes written with direct I/O"),
	STAT_COL(BUF_READ_REQS, "BUF-READ-REQS",
		 "read requests completed buffered"),
	STAT_COL(BUF_READ_BYTES, "BUF-READ-BYTES",
		 "bytes read buffered"),
	STAT_COL(BUF_WRITE_REQS, "BUF-WRITE-REQS",
		 "write requests completed buffered"),
	STAT_COL(BUF_WRITE_BYTES, "BUF-WRITE-BYTES",
		 "bytes written buffered"),
	STAT_COL(FLUSH_REQS, "FLUSH-REQS",
		 "flush requests completed"),
	STAT_COL(DISCARD_REQS, "DISCARD-REQS",
		 "discard and write-zeroes requests"),
	STAT_COL(DISCARD_BYTES, "DISCARD-BYTES",
		 "bytes discarded or zeroed"),
	STAT_COL(ERRORS, "ERRORS",
		 "requests completed with an error"),
	STAT_COL(SHORT_IO, "SHORT-IO",
		 "short reads or writes of the backing file"),
	STAT_COL(QUEUED, "QUEUED",
		 "requests queued to the workers"),
	STAT_COL(MAX_BACKLOG, "MAX-BACKLOG",
		 "most requests seen waiting for the workers"),
#undef STAT_COL
};

enum {
	CCOL_NAME,
	CCOL_DIO,
	CCOL_SIZE,
	CCOL_CACHED,
	CCOL_BACK_FILE,
	CCOL_BACK_SIZE,
	CCOL_BACK_CACHED,
	NR_CACHE_COLS,
};

static const struct cli_colinfo cache_cols[NR_CACHE_COLS] = {
	[CCOL_NAME]	   = { "NAME", 0.1, 0, SCOLS_JSON_STRING,
			       "loop device name" },
	[CCOL_DIO]	   = { "DIO", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			       "direct I/O in effect" },
	[CCOL_SIZE]	   = { "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			       "device size" },
	[CCOL_CACHED]	   = { "CACHED", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			       "device data in the page cache" },
	[CCOL_BACK_FILE]   = { "BACK-FILE", 0.3, SCOLS_FL_NOEXTREMES,
			       SCOLS_JSON_STRING, "backing file" },
	[CCOL_BACK_SIZE]   = { "BACK-SIZE", 5, SCOLS_FL_RIGHT,
			       SCOLS_JSON_NUMBER, "backing file size" },
	[CCOL_BACK_CACHED] = { "BACK-CACHED", 5, SCOLS_FL_RIGHT,
			       SCOLS_JSON_NUMBER,
			       "backing file data in the page cache" },
};

/* Output options shared by status and cache. */
struct output {
	const struct cli_colinfo *infos;
	size_t ninfos;
	int cols[64];
	size_t ncols;
	bool json, raw, noheadings, bytes;
};

static void add_column(struct output *o, int id)
{
	if (o->ncols == ARRAY_SIZE(o->cols))
		errx(LOOPCTL_EXIT_FAILURE, "--output: too many columns");
	o->cols[o->ncols++] = id;
}

/* --output LIST, or +LIST to add to the defaults. */
static void parse_columns(struct output *o, const char *list, const char *cmd)
{
	const char *bad = NULL;
	int badlen = 0;

	switch (cli_parse_columns(list, o->infos, o->ninfos, o->cols,
				  &o->ncols, ARRAY_SIZE(o->cols), &bad,
				  &badlen)) {
	case 0:
		return;
	case -EINVAL:
		warnx("--output: unknown column '%.*s'", badlen, bad);
		errtryhelp(cmd);
	case -E2BIG:
		errx(LOOPCTL_EXIT_FAILURE, "--output: too many columns");
	default:
		errx(LOOPCTL_EXIT_FAILURE, "--output: no columns given");
	}
}

/* The table options status and cache share; false if @c is not one. */
static bool output_option(struct output *o, int c, const char *arg,
			  const char *cmd)
{
	switch (c) {
	case 'J':
		o->json = true;
		return true;
	case OPT_RAW:
		o->raw = true;
		return true;
	case 'n':
		o->noheadings = true;
		return true;
	case 'O':
		parse_columns(o, arg, cmd);
		return true;
	}
	return false;
}

static struct libscols_table *new_table(const struct output *o,
					const char *name, const char *cmd)
{
	struct libscols_table *tb;

	if (o->json && o->raw) {
		warnx("%s: --json and --raw are mutually exclusive", cmd);
		errtryhelp(cmd);
	}
	tb = cli_new_table(o->infos, o->cols, o->ncols, o->json, o->raw,
			   o->noheadings);
	if (!tb)
		err(LOOPCTL_EXIT_FAILURE, "cannot create a table");
	if (o->json)
		scols_table_set_name(tb, name);
	return tb;
}

/* Print and free @tb: JSON always (an empty list is an answer), a table
 * only when it has lines. */
static void print_table(struct libscols_table *tb, const struct output *o)
{
	if (o->json || scols_table_get_nlines(tb))
		scols_print_table(tb);
	scols_unref_table(tb);
}

static void set_cell(struct libscols_line *ln, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_cell(struct libscols_line *ln, size_t i, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0 || scols_line_refer_data(ln, i, s))
		err(LOOPCTL_EXIT_FAILURE, "cannot fill a table cell");
}

/* A file name: bytes, but JSON strings must be valid UTF-8. */
static void set_name(const struct output *o, struct libscols_line *ln,
		     size_t i, const char *name)
{
	char *s = o->json ? utf8_escape_dup(name) : strdup(name);

	if (!s || scols_line_refer_data(ln, i, s))
		err(LOOPCTL_EXIT_FAILURE, "cannot fill a table cell");
}

static void set_bool(struct libscols_line *ln, size_t i, bool v)
{
	set_cell(ln, i, "%d", v ? 1 : 0);
}

/* "1.5G" like lsblk, or bytes. */
static void set_size(const struct output *o, struct libscols_line *ln,
		     size_t i, uint64_t v)
{
	char buf[HUMAN_LEN];

	if (o->bytes || o->json)
		set_cell(ln, i, "%" PRIu64, v);
	else
		set_cell(ln, i, "%s", size_to_human(buf, v));
}

static void print_columns_help(const struct cli_colinfo *infos, size_t n)
{
	cli_print_columns(stdout, "Available output columns", infos, n);
}
/* Device arguments, or every bound device. Returns a count. */
static int collect_devices(int argc, char **argv, int **nrs, char ***names)
{
	int n;

	*names = NULL;
	*nrs = NULL;
	if (argc > 0) {
		*names = argv;
		return argc;
	}
	n = loopdev_bound_list(nrs);
	if (n < 0)
		errx(LOOPCTL_EXIT_FAILURE, "/sys/block: %s", strerror(-n));
	return n;
}

/* Name the i-th device of collect_devices(); false to skip it. */
static bool pick_device(struct loopdev_ctx *lc, int i, int *nrs, char **names)
{
	int rc;

	if (!names)
		return loopdev_set_device_nr(lc, nrs[i]) == 0;
	rc = loopdev_set_device(lc, names[i]);
	if (rc) {
		set_exit(device_error(names[i], rc));
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* status                                                              */

static void __attribute__((__noreturn__)) usage_status(void)
{
	fputs("Usage:\n"
	      " loopctl status [options] [<device>...]\n"
	      " loopctl list [options] [<device>...]\n"
	      "\n"
	      "Show bound loop devices: the given ones, or all of them.\n"
	      "\n"
	      "Options:\n"
	      " -J, --json                use JSON output format\n"
	      "     --raw                 use raw output format\n"
	      " -n, --noheadings          do not print headings\n"
	      " -O, --output <list>       the columns to show (+<list> adds to the\n"
	      "                             default ones)\n"
	      "     --output-all          show all columns\n"
	      " -s, --stats               add the loop I/O statistics columns (kernels\n"
	      "                             with the series' loop/stat file)\n"
	      " -h, --help                display this help\n", stdout);
	print_columns_help(status_cols, NR_STATUS_COLS);
	exit(LOOPCTL_EXIT_OK);
}

static void status_line(struct libscols_table *tb, const struct output *o,
			struct loopdev_ctx *lc)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	struct loopdev_state *s = &lc->state;
	struct loopdev_request req;
	struct loopdev_dio d;
	char why[512];
	struct stat st;
	size_t i;

	if (!ln)
		err(LOOPCTL_EXIT_FAILURE, "cannot create a table line");
	loopdev_load_request(lc, &req);
	why[0] = '\0';
	if (!s->dio) {
		if (loopdev_dio_for_state(lc, &d) == 0 &&
		    !loopdev_dio_possible(&d))
			short_reasons(&d, why, sizeof(why));
		else if (req.known && req.dio == LOOPDEV_DIO_OFF)
			snprintf(why, sizeof(why), "not requested");
	}
	for (i = 0; i < o->ncols; i++) {
		switch (o->cols[i]) {
		case COL_NAME:
			set_cell(ln, i, "%s", loopdev_get_path(lc));
			break;
		case COL_BACK_FILE:
			set_name(o, ln, i, s->back_file);
			break;
		case COL_BACK_INO:
			if (s->has_ino)
				set_cell(ln, i, "%ju", (uintmax_t)s->back_ino);
			else if (s->back_file[0] == '/' &&
				 !stat(s->back_file, &st))
				set_cell(ln, i, "%ju", (uintmax_t)st.st_ino);
			break;
		case COL_BACK_MAJMIN:
			if (s->has_ino)
				set_cell(ln, i, "%u:%u", major(s->back_dev),
					 minor(s->back_dev));
			else if (s->back_file[0] == '/' &&
				 !stat(s->back_file, &st))
				set_cell(ln, i, "%u:%u", major(st.st_dev),
					 minor(st.st_dev));
			break;
		case COL_MAJMIN:
			if (!stat(loopdev_get_path(lc), &st))
				set_cell(ln, i, "%u:%u", major(st.st_rdev),
					 minor(st.st_rdev));
			break;
		case COL_OFFSET:
			set_cell(ln, i, "%" PRIu64, s->offset);
			break;
		case COL_SIZELIMIT:
			set_cell(ln, i, "%" PRIu64, s->sizelimit);
			break;
		case COL_SIZE:
			set_cell(ln, i, "%" PRIu64, s->size);
			break;
		case COL_LOG_SEC:
			set_cell(ln, i, "%u", s->sector_size);
			break;
		case COL_RO:
			set_bool(ln, i, s->ro);
			break;
		case COL_AUTOCLEAR:
			set_bool(ln, i, s->autoclear);
			break;
		case COL_PARTSCAN:
			set_bool(ln, i, s->partscan);
			break;
		case COL_DIO:
			set_bool(ln, i, s->dio);
			break;
		case COL_DIO_REQ:
			if (req.known)
				set_cell(ln, i, "%s", dio_word(req.dio));
			break;
		case COL_DIO_WHY:
			if (why[0])
				set_cell(ln, i, "%s", why);
			break;
		default:	/* a loop/stat field; empty without the file */
			if (s->stat.present)
				set_cell(ln, i, "%" PRIu64,
					 s->stat.v[o->cols[i] - COL_STAT]);
			break;
		}
	}
}

static int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, OPT_RAW },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'O' },
		{ "output-all", no_argument,       NULL, OPT_OUTPUT_ALL },
		{ "stats",      no_argument,       NULL, 's' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const int stats[] = {
		COL_STAT + LOOPDEV_STAT_DIO_READ_BYTES,
		COL_STAT + LOOPDEV_STAT_DIO_WRITE_BYTES,
		COL_STAT + LOOPDEV_STAT_BUF_READ_BYTES,
		COL_STAT + LOOPDEV_STAT_BUF_WRITE_BYTES,
		COL_STAT + LOOPDEV_STAT_ERRORS,
	};
	static const int defaults[] = {
		COL_NAME, COL_BACK_FILE, COL_OFFSET, COL_SIZELIMIT,
		COL_LOG_SEC, COL_RO, COL_AUTOCLEAR, COL_PARTSCAN, COL_DIO,
		COL_DIO_REQ, COL_DIO_WHY,
	};
	struct output o = { .infos = status_cols, .ninfos = NR_STATUS_COLS };
	struct libscols_table *tb;
	struct loopdev_ctx lc;
	int c, i, n, *nrs = NULL, rc;
	char **names;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(defaults); k++)
		o.cols[o.ncols++] = defaults[k];
	while ((c = getopt_long(argc, argv, "JnO:sh", longopts, NULL)) != -1) {
		if (output_option(&o, c, optarg, cmd_name))
			continue;
		switch (c) {
		case 's':
			for (k = 0; k < ARRAY_SIZE(stats); k++)
				add_column(&o, stats[k]);
			break;
		case OPT_OUTPUT_ALL:
			for (o.ncols = 0; o.ncols < NR_STATUS_COLS; o.ncols++)
				o.cols[o.ncols] = (int)o.ncols;
			break;
		case 'h':
			usage_status();
		default:
			errtryhelp(cmd_name);
		}
	}
	tb = new_table(&o, "loopdevices", cmd_name);
	n = collect_devices(argc - optind, argv + optind, &nrs, &names);
	for (i = 0; i < n; i++) {
		loopdev_init(&lc);
		if (!pick_device(&lc, i, nrs, names))
			continue;
		/* the inode of the backing file, when we may open it */
		rc = 0;
		if (access(loopdev_get_path(&lc), R_OK) == 0)
			rc = loopdev_open(&lc, O_RDONLY);
		if (rc == -ESTALE) {
			set_exit(report(loopdev_get_path(&lc), rc, "status"));
			loopdev_deinit(&lc);
			continue;
		}
		rc = loopdev_read_state(&lc);
		if (rc) {
			set_exit(report(loopdev_get_path(&lc), rc, "status"));
		} else if (!lc.state.bound) {
			if (names) {
				warnx("%s: not bound to a file",
				      loopdev_get_path(&lc));
				set_exit(LOOPCTL_EXIT_NOT_LOOP);
			}
		} else {
			status_line(tb, &o, &lc);
		}
		loopdev_deinit(&lc);
	}
	print_table(tb, &o);
	free(nrs);
	return exit_status;
}

/* ------------------------------------------------------------------ */
/* set                                                                 */

static void __attribute__((__noreturn__)) usage_set(void)
{
	fputs("Usage:\n"
	      " loopctl set [options] <device>\n"
	      "\n"
	      "Change direct I/O and the sector size of a bound loop device, live.\n"
	      "At least one of the two options is needed.\n"
	      "\n"
	      "Options:\n"
	      "     --direct-io[=<mode>]  direct I/O: on, auto or off (alone: on;\n"
	      "                             default: keep it as it is)\n"
	      " -b, --sector-size <size>  logical sector size: a power of two from 512\n"
	      "                             to the page size, or auto\n"
	      " -q, --quiet               do not warn when direct I/O stays off\n"
	      " -h, --help                display this help\n", stdout);
	exit(LOOPCTL_EXIT_OK);
}

static int cmd_set(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "direct-io",   optional_argument, NULL, OPT_DIRECT_IO },
		{ "sector-size", required_argument, NULL, 'b' },
		{ "quiet",       no_argument,       NULL, 'q' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct loopdev_ctx lc;
	struct loopdev_dio d;
	const char *dev;
	bool quiet = false;
	int c, rc;

	loopdev_init(&lc);
	loopdev_set_dio(&lc, LOOPDEV_DIO_KEEP);
	while ((c = getopt_long(argc, argv, "b:qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_DIRECT_IO:
			loopdev_set_dio(&lc, parse_dio(optarg, "set"));
			break;
		case 'b':
			parse_sector(&lc, optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage_set();
		default:
			errtryhelp("set");
		}
	}
	check_operands(argc, argv, 1, 1, "set", "device");
	if (lc.dio == LOOPDEV_DIO_KEEP && !lc.sector_size &&
	    !loopdev_is_flag(&lc, LOOPDEV_FL_SECTOR_AUTO)) {
		warnx("set: nothing to change: give --direct-io or "
		      "--sector-size");
		errtryhelp("set");
	}
	dev = argv[optind];
	set_device_or_die(&lc, dev);
	require_access(lc.path, R_OK | W_OK, "changing a loop device");

	rc = loopdev_open(&lc, O_RDWR);
	if (rc == -EROFS || rc == -EACCES)
		rc = loopdev_open(&lc, O_RDONLY);	/* a read-only device */
	if (rc)
		exit(report(dev, rc, "open"));
	rc = loopdev_retune(&lc, &d);
	if (rc == -EOPNOTSUPP) {
		if (d.sector_used && !loopdev_dio_possible(&d)) {
			warnx("%s: direct I/O %s, nothing changed:", dev,
			      lc.dio == LOOPDEV_DIO_KEEP ?
			      "would be turned off by this sector size" :
			      "is impossible");
			explain(stderr, dev, &d, true);
		} else {
			warnx("%s: the kernel refused direct I/O (EINVAL), "
			      "nothing changed", dev);
		}
		exit(LOOPCTL_EXIT_NO_DIO);
	}
	if (rc)
		exit(report(dev, rc, "set"));
	if (lc.dio == LOOPDEV_DIO_AUTO && !lc.state.dio && !quiet) {
		warnx("%s: direct I/O stays off:", dev);
		if (d.sector_used && !loopdev_dio_possible(&d))
			explain(stderr, dev, &d, true);
		else
			warnx("%s: the kernel refused it (EINVAL)", dev);
	}
	if (lc.dio != LOOPDEV_DIO_KEEP)
		loopdev_save_request(&lc, lc.dio);
	loopdev_deinit(&lc);
	return LOOPCTL_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* detach                                                              */

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

static int cmd_detach(int argc, char **argv)
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

/* ------------------------------------------------------------------ */
/* cache                                                               */

static void __attribute__((__noreturn__)) usage_cache(void)
{
	fputs("Usage:\n"
	      " loopctl cache [options] [<device>...]\n"
	      "\n"
	      "Show how much of each loop device and of its backing file is in the page\n"
	      "cache (the double cache that direct I/O avoids): the given devices, or\n"
	      "all bound ones.\n"
	      "\n"
	      "Options:\n"
	      " -b, --bytes               print sizes in bytes\n"
	      " -J, --json                use JSON output format\n"
	      "     --raw                 use raw output format\n"
	      " -n, --noheadings          do not print headings\n"
	      " -O, --output <list>       the columns to show (+<list> adds to the\n"
	      "                             default ones)\n"
	      " -h, --help                display this help\n", stdout);
	print_columns_help(cache_cols, NR_CACHE_COLS);
	exit(LOOPCTL_EXIT_OK);
}

static int cmd_cache(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bytes",      no_argument,       NULL, 'b' },
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, OPT_RAW },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'O' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct output o = { .infos = cache_cols, .ninfos = NR_CACHE_COLS };
	struct libscols_table *tb;
	struct libscols_line *ln;
	struct loopdev_cache cc;
	struct loopdev_ctx lc;
	int c, i, n, rc, *nrs = NULL;
	char **names;
	size_t k;

	for (k = 0; k < NR_CACHE_COLS; k++)
		o.cols[o.ncols++] = (int)k;
	while ((c = getopt_long(argc, argv, "bJnO:h", longopts, NULL)) != -1) {
		if (output_option(&o, c, optarg, "cache"))
			continue;
		switch (c) {
		case 'b':
			o.bytes = true;
			break;
		case 'h':
			usage_cache();
		default:
			errtryhelp("cache");
		}
	}
	tb = new_table(&o, "loopcache", "cache");
	n = collect_devices(argc - optind, argv + optind, &nrs, &names);
	for (i = 0; i < n; i++) {
		loopdev_init(&lc);
		if (!pick_device(&lc, i, nrs, names))
			continue;
		rc = check_access(lc.path, R_OK,
				  "reading a loop device's cache");
		if (rc) {
			set_exit(rc);
			loopdev_deinit(&lc);
			continue;
		}
		rc = loopdev_cache(&lc, &cc);
		if (rc) {
			set_exit(report(loopdev_get_path(&lc), rc, "cache"));
			loopdev_deinit(&lc);
			continue;
		}
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			err(LOOPCTL_EXIT_FAILURE, "cannot create a table line");
		for (k = 0; k < o.ncols; k++) {
			switch (o.cols[k]) {
			case CCOL_NAME:
				set_cell(ln, k, "%s", loopdev_get_path(&lc));
				break;
			case CCOL_DIO:
				set_bool(ln, k, lc.state.dio);
				break;
			case CCOL_SIZE:
				set_size(&o, ln, k, cc.dev_size);
				break;
			case CCOL_CACHED:
				set_size(&o, ln, k, cc.dev_cached);
				break;
			case CCOL_BACK_FILE:
				set_name(&o, ln, k, lc.state.back_file);
				break;
			case CCOL_BACK_SIZE:
				if (cc.back_known)
					set_size(&o, ln, k, cc.back_size);
				break;
			case CCOL_BACK_CACHED:
				if (cc.back_known)
					set_size(&o, ln, k, cc.back_cached);
				break;
			}
		}
		loopdev_deinit(&lc);
	}
	print_table(tb, &o);
	free(nrs);
	return exit_status;
}

/* ------------------------------------------------------------------ */

static void __attribute__((__noreturn__)) usage(void)
{
	fputs("Usage:\n"
	      " loopctl <command> [options] [<arguments>]\n"
	      "\n"
	      "Attach files to loop devices with direct I/O, and tell whether direct\n"
	      "I/O is really in effect, and why not.\n"
	      "\n"
	      "Commands:\n"
	      " attach <file> [<device>]  attach a file, print the device name\n"
	      " why <file>|<device>       explain whether direct I/O can work\n"
	      " status [<device>...]      show bound loop devices (alias: list)\n"
	      " set <device>              change direct I/O and sector size, live\n"
	      " detach <device>...|--all  detach loop devices\n"
	      " cache [<device>...]       show the page cache of devices and files\n"
	      "\n"
	      "Options:\n"
	      " -h, --help                display this help\n"
	      " -V, --version             display version\n"
	      "\n"
	      "Run 'loopctl <command> --help' for the options of a command.\n"
	      "For more details see loopctl(8).\n", stdout);
	exit(LOOPCTL_EXIT_OK);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "attach", cmd_attach },
		{ "why",    cmd_why },
		{ "status", cmd_status },
		{ "list",   cmd_status },
		{ "set",    cmd_set },
		{ "detach", cmd_detach },
		{ "cache",  cmd_cache },
	};
	char *cmd_argv0;
	size_t i;

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
