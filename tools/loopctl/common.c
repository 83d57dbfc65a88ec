// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every loopctl command shares: exit codes, permission checks, error
 * reports naming the object, option parsing and operands. Why direct I/O
 * is or is not in effect is said in explain.c.
 */
#include "loopctl.h"

int exit_status = LOOPCTL_EXIT_OK;
const char *cmd_name;

/* Keep the first failure's code: the one the user sees first. */
void set_exit(int code)
{
	if (exit_status == LOOPCTL_EXIT_OK)
		exit_status = code;
}

int exit_code_of(int rc)
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

void __attribute__((__noreturn__)) errtryhelp(const char *cmd)
{
	cli_errtryhelp(cmd, LOOPCTL_EXIT_FAILURE);
}

/* CAP_SYS_ADMIN in the effective set, from /proc/self/status. */
bool has_cap_sys_admin(void)
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
int check_access(const char *path, int mode, const char *what)
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
		warnx("%s: does not exist: is the loop driver loaded? (modprobe loop)", path);
	else
		warn("%s", path);
	return LOOPCTL_EXIT_FAILURE;
}

/* check_access(), fatal. */
void require_access(const char *path, int mode, const char *what)
{
	int code = check_access(path, mode, what);

	if (code)
		exit(code);
}

/* Report a failed operation on @obj; returns the exit code it maps to. */
int report(const char *obj, int rc, const char *what)
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
		warnx("%s: %s: the device node changed after it was checked (replaced?); nothing done",
		      obj, what);
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
int device_error(const char *name, int rc)
{
	if (rc == -ENODEV || !*name) {
		warnx("%s: not a loop device", cli_name(name));
		return LOOPCTL_EXIT_NOT_LOOP;
	}
	warnx("%s: %s", name, strerror(-rc));
	return rc == -ENOENT ? LOOPCTL_EXIT_NOT_LOOP : LOOPCTL_EXIT_FAILURE;
}

/* Name a device argument; exits on a bad one, like every CLI here. */
void set_device_or_die(struct loopdev_ctx *lc, const char *name)
{
	int rc = loopdev_set_device(lc, name);

	if (rc)
		exit(device_error(name, rc));
}

/* ------------------------------------------------------------------ */
/* option values                                                       */

enum loopdev_dio_mode parse_dio(const char *arg, const char *cmd)
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
uint64_t parse_bytes(const char *arg, const char *opt)
{
	uint64_t v;
	int rc = strtosize(arg, &v);

	if (rc == -ERANGE || (!rc && v > (uint64_t)INT64_MAX))
		errx(LOOPCTL_EXIT_FAILURE, "%s: '%s': too large", opt, arg);
	if (rc)
		errx(LOOPCTL_EXIT_FAILURE,
		     "%s: '%s': not a size in bytes (digits, optionally followed by K, M, G, T)",
		     opt, arg);
	return v;
}

/* Sets the size, or LOOPDEV_FL_SECTOR_AUTO for "auto". */
void parse_sector(struct loopdev_ctx *lc, const char *arg)
{
	uint64_t v;

	if (!strcmp(arg, "auto")) {
		loopdev_set_flags(lc, LOOPDEV_FL_SECTOR_AUTO);
		return;
	}
	if (strtosize(arg, &v) || v > UINT32_MAX ||
	    loopdev_set_sector_size(lc, (uint32_t)v) || !v)
		errx(LOOPCTL_EXIT_FAILURE,
		     "--sector-size: '%s': not a power of two from 512 to %u, or auto",
		     arg, loopdev_sector_max());
}

const char *dio_word(enum loopdev_dio_mode m)
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

/*
 * Say why there is nothing to attach of @file, @size bytes, at @offset
 * (loopdev_check_extent() said -ENODATA for that size).
 * @to_stderr: a warning (attach) or a line on stdout (why).
 */
void nothing_to_attach(uint64_t size, const char *file,
		       uint64_t offset, bool to_stderr)
{
	char why[128];

	if (!size)
		snprintf(why, sizeof(why), "the file is empty");
	else if (offset >= size)
		snprintf(why, sizeof(why),
			 "offset %" PRIu64 " is at or past the end of the file (%" PRIu64 " bytes)",
			 offset, size);
	else
		snprintf(why, sizeof(why),
			 "%" PRIu64 " bytes from offset %" PRIu64 " to the end of the file, less than one %d-byte sector",
			 size - offset, offset, LOOPDEV_SECTOR_MIN);
	if (to_stderr)
		warnx("%s: nothing to attach: %s (the device would have 0 bytes)",
		      file, why);
	else
		printf("%s: nothing to attach: %s\n", file, why);
}

/*
 * Between @min and @max operands after the options, or a usage error
 * naming what is missing (@what) or the first one too many.
 */
void check_operands(int argc, char **argv, int min, int max,
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
