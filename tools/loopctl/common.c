// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What every loopctl command shares: exit codes, permission checks, error
 * reports naming the object, option parsing, and the explanations of
 * why direct I/O can or cannot work.
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

/* ------------------------------------------------------------------ */
/* what the backing file is really served                              */

/* "on", "off" or "unknown": the DIO columns and why. */
const char *served_word(enum loopdev_served s)
{
	switch (s) {
	case LOOPDEV_SERVED_ON:
		return "on";
	case LOOPDEV_SERVED_OFF:
		return "off";
	default:
		return "unknown";
	}
}

/*
 * What loopdev_dio_served()'s @why means: a sentence for why and set,
 * and a few words for the DIO-WHY column (NULL: nothing to say there).
 */
const char *served_reason(enum loopdev_served_why why, bool brief)
{
	switch (why) {
	case LOOPDEV_SERVED_DIO_FLAG:
		return brief ? NULL : "loop/dio is 1: every request is direct I/O";
	case LOOPDEV_SERVED_SERIES:
		return brief ? NULL : "this kernel carries this project's loop series (loop/stat), whose buffered path ignores the backing file's O_DIRECT";
	case LOOPDEV_SERVED_RELEASE:
		return brief ? NULL : "this kernel has commit f2fed441c69b: its buffered path ignores the backing file's O_DIRECT";
	case LOOPDEV_SERVED_PLAIN:
		return brief ? NULL : "loopctl attached it with the backing file opened without O_DIRECT";
	default:
		return brief ? "may inherit O_DIRECT" :
		       "this kernel's buffered loop path inherits O_DIRECT from the backing file, and whoever attached it may have opened it so (losetup --direct-io=on does)";
	}
}

/* What to do about LOOPDEV_SERVED_INHERITS. */
const char *const served_remedy =
	"detach and attach again with loopctl attach --direct-io=off, or use a kernel with f2fed441c69b (6.15, 6.12.25, 6.14.4, or this project's series)";

/* ------------------------------------------------------------------ */
/* explaining direct I/O                                               */

const char *bdev_label(const struct loopdev_dio *d, char *buf,
		       size_t len)
{
	if (d->bdev_name[0])
		snprintf(buf, len, "%s (%u:%u)", d->bdev_name,
			 major(d->bdev), minor(d->bdev));
	else
		snprintf(buf, len, "%u:%u", major(d->bdev), minor(d->bdev));
	return buf;
}

/*
 * Every reason direct I/O is off or degraded, once: its flag, the short
 * form of the DIO-WHY column, and the long form with what to do. A
 * blocking reason keeps direct I/O off (explain()); the others are notes
 * (explain_warnings()).
 */
struct dio_reason {
	unsigned int flag;
	bool blocking;
	void (*brief)(char *buf, size_t len, const struct loopdev_dio *d);
	void (*detail)(char *buf, size_t len, const struct loopdev_dio *d);
};

static void odirect_brief(char *buf, size_t len, const struct loopdev_dio *d)
{
	snprintf(buf, len, "%s: no O_DIRECT", d->fstype);
}

static void odirect_detail(char *buf, size_t len, const struct loopdev_dio *d)
{
	snprintf(buf, len,
		 "%s does not support O_DIRECT (%s); move the file to a file system that does (ext4, xfs, btrfs) or use --direct-io=off%s",
		 d->fstype, strerror(d->odirect_errno),
		 !strcmp(d->fstype, "tmpfs") ?
		 "; tmpfs supports O_DIRECT from Linux 6.6" : "");
}

static void sector_brief(char *buf, size_t len, const struct loopdev_dio *d)
{
	snprintf(buf, len, "sector size %u < %s's %u", d->sector_used,
		 d->bdev_name[0] ? d->bdev_name : "device", d->bdev_lbs);
}

static void sector_detail(char *buf, size_t len, const struct loopdev_dio *d)
{
	char dev[96];

	snprintf(buf, len,
		 "sector size %u is smaller than %u, the logical block size of %s; use --sector-size %u (or auto); note that this changes how a partition table inside the image is read",
		 d->sector_used, d->bdev_lbs, bdev_label(d, dev, sizeof(dev)),
		 d->best_sector ? d->best_sector : d->bdev_lbs);
}

static void offset_brief(char *buf, size_t len, const struct loopdev_dio *d)
{
	snprintf(buf, len, "offset %" PRIu64 " not aligned to %u", d->offset,
		 d->bdev_lbs);
}

static void offset_detail(char *buf, size_t len, const struct loopdev_dio *d)
{
	char dev[96];

	snprintf(buf, len,
		 "offset %" PRIu64 " is not a multiple of %u, the logical block size of %s; use an offset aligned to %u bytes",
		 d->offset, d->bdev_lbs, bdev_label(d, dev, sizeof(dev)),
		 d->bdev_lbs);
}

static void fs_align_brief(char *buf, size_t len, const struct loopdev_dio *d)
{
	snprintf(buf, len, "%s needs %u-byte alignment", d->fstype,
		 d->dio_offset_align);
}

static void fs_align_detail(char *buf, size_t len,
			    const struct loopdev_dio *d)
{
	snprintf(buf, len,
		 "%s needs direct I/O aligned to %u bytes (STATX_DIOALIGN) but the sector size is %u and the offset %" PRIu64 "; use --sector-size %u and an offset aligned to it (the kernel would not check this and the I/O would fail)",
		 d->fstype, d->dio_offset_align, d->sector_used, d->offset,
		 d->dio_offset_align);
}

static void too_large_brief(char *buf, size_t len,
			    const struct loopdev_dio *d)
{
	snprintf(buf, len, "alignment %u > page size", d->required);
}

static void too_large_detail(char *buf, size_t len,
			     const struct loopdev_dio *d)
{
	snprintf(buf, len,
		 "direct I/O needs %u-byte alignment, more than the largest loop sector size (%u, the page size); use --direct-io=off",
		 d->required, loopdev_sector_max());
}

static void fs_buffered_detail(char *buf, size_t len,
			       const struct loopdev_dio *d)
{
	snprintf(buf, len,
		 "%s reports no direct I/O support for this file (STATX_DIOALIGN): it accepts O_DIRECT but serves it through the page cache (e.g. ext4 data=journal)",
		 d->fstype);
}

static void align_unknown_detail(char *buf, size_t len,
				 const struct loopdev_dio *d)
{
	snprintf(buf, len,
		 "%s reports no direct I/O alignment (no STATX_DIOALIGN) and has no block device: neither the kernel nor loopctl can check the alignment",
		 d->fstype);
}

static const struct dio_reason dio_reasons[] = {
	{ LOOPDEV_DIO_NO_ODIRECT, true, odirect_brief, odirect_detail },
	{ LOOPDEV_DIO_SECTOR, true, sector_brief, sector_detail },
	{ LOOPDEV_DIO_OFFSET, true, offset_brief, offset_detail },
	{ LOOPDEV_DIO_FS_ALIGN, true, fs_align_brief, fs_align_detail },
	{ LOOPDEV_DIO_TOO_LARGE, true, too_large_brief, too_large_detail },
	{ LOOPDEV_DIO_FS_BUFFERED, false, NULL, fs_buffered_detail },
	{ LOOPDEV_DIO_ALIGN_UNKNOWN, false, NULL, align_unknown_detail },
};

/* The blocking reasons, short, joined by "; ", for the DIO-WHY column. */
void short_reasons(const struct loopdev_dio *d, char *buf, size_t len)
{
	const struct dio_reason *r;
	size_t n = 0;

	buf[0] = '\0';
	for (r = dio_reasons; r < dio_reasons + ARRAY_SIZE(dio_reasons); r++) {
		if (!r->blocking || !(d->reasons & r->flag) || n >= len)
			continue;
		if (n)
			n += (size_t)snprintf(buf + n, len - n, "; ");
		if (n < len) {
			r->brief(buf + n, len - n, d);
			n += strlen(buf + n);
		}
	}
}

/*
 * One line a reason of @d that is @blocking or not: "loopctl: OBJ: ..."
 * on stderr when @warn (attach, set), else "@pfx..." on stdout (why).
 */
static void explain_lines(const char *obj, const struct loopdev_dio *d,
			  bool warn, bool blocking, const char *pfx)
{
	const struct dio_reason *r;
	char line[512];

	for (r = dio_reasons; r < dio_reasons + ARRAY_SIZE(dio_reasons); r++) {
		if (r->blocking != blocking || !(d->reasons & r->flag))
			continue;
		r->detail(line, sizeof(line), d);
		if (warn)
			warnx("%s: %s", obj, line);
		else
			printf("%s%s\n", pfx, line);
	}
}

void explain(const char *obj, const struct loopdev_dio *d, bool warn)
{
	explain_lines(obj, d, warn, true, "  ");
}

void explain_warnings(const char *obj, const struct loopdev_dio *d,
		      bool warn)
{
	explain_lines(obj, d, warn, false, "  note: ");
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
