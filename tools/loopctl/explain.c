// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Why direct I/O is or is not in effect, in words: what the backing file
 * is really served (loopdev_dio_served()), and every reason a struct
 * loopdev_dio gives for direct I/O being off or degraded, in the short
 * form of the DIO-WHY column and in the long form, with what to do, that
 * attach, set and why print.
 */
#include "loopctl.h"

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
