// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What attach or set asked for, remembered under REQUEST_DIR: the kernel
 * keeps only the effective state, and status, why and cache show both.
 * A record is keyed by the backing inode and the device's diskseq, so a
 * record of another file or of an earlier binding is never believed.
 */
#include "loopctl.h"

static int request_path(const struct loopdev_ctx *lc, char *buf, size_t len)
{
	int n = snprintf(buf, len, REQUEST_DIR "/loop%d", loopdev_get_nr(lc));

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Write @text to @path atomically (a temporary file, then rename). */
static int write_record(const char *path, const char *text)
{
	char tmp[PATH_MAX + 32];
	FILE *f;
	int fd, rc;

	if (mkdir(REQUEST_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		rc = -errno;
		close(fd);
		unlink(tmp);
		return rc;
	}
	fputs(text, f);
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		rc = -errno;
		unlink(tmp);
		return rc;
	}
	return 0;
}

int request_save(struct loopdev_ctx *lc, enum loopdev_dio_mode dio)
{
	char path[PATH_MAX], text[256], seq_line[48] = "";
	struct request old;
	bool plain = loopdev_is_plain(lc);
	uint64_t seq;
	dev_t dev;
	ino_t ino;
	int rc;

	if (dio == LOOPDEV_DIO_KEEP)
		return 0;
	rc = request_path(lc, path, sizeof(path));
	if (!rc)
		rc = loopdev_backing_id(lc, &dev, &ino);
	if (rc)
		return rc;
	/* set keeps what attach knew about this binding */
	if (!plain && !request_load(lc, &old))
		plain = old.plain;
	if (!loopdev_read_diskseq(lc, &seq))
		snprintf(seq_line, sizeof(seq_line), "diskseq=%" PRIu64 "\n",
			 seq);
	snprintf(text, sizeof(text),
		 "dio=%s\nbackdev=%u:%u\nbackino=%" PRIu64 "\n%s%s",
		 dio_word(dio), major(dev), minor(dev), (uint64_t)ino,
		 seq_line, plain ? "odirect=0\n" : "");
	return write_record(path, text);
}

/* "on", "auto" or "off" to the mode; KEEP for anything else. */
static enum loopdev_dio_mode record_dio(const char *word)
{
	enum loopdev_dio_mode m;

	for (m = LOOPDEV_DIO_OFF; m <= LOOPDEV_DIO_ON; m++)
		if (!strcmp(word, dio_word(m)))
			return m;
	return LOOPDEV_DIO_KEEP;
}

/* Is the record in @buf about the binding @lc has now? */
static bool record_matches(const struct loopdev_ctx *lc, const char *buf)
{
	unsigned int ma, mi;
	uint64_t ino_rec, seq_rec, seq;
	const char *p;
	dev_t dev;
	ino_t ino;

	p = strstr(buf, "backdev=");
	if (!p || sscanf(p, "backdev=%u:%u", &ma, &mi) != 2)
		return false;
	p = strstr(buf, "backino=");
	if (!p || sscanf(p, "backino=%" SCNu64, &ino_rec) != 1)
		return false;
	/* a record for another file is stale: say "unknown" */
	if (loopdev_backing_id(lc, &dev, &ino) || dev != makedev(ma, mi) ||
	    (uint64_t)ino != ino_rec)
		return false;
	/*
	 * So is one of another binding: the same file (or a new file with
	 * the same inode number) bound again, by anyone, has another
	 * diskseq. Without diskseq (before 5.15) the file's identity is all
	 * there is.
	 */
	p = strstr(buf, "diskseq=");
	return !p || (sscanf(p, "diskseq=%" SCNu64, &seq_rec) == 1 &&
		      !loopdev_read_diskseq(lc, &seq) && seq == seq_rec);
}

int request_load(struct loopdev_ctx *lc, struct request *req)
{
	char path[PATH_MAX], buf[256], word[16];
	int rc;

	memset(req, 0, sizeof(*req));
	rc = request_path(lc, path, sizeof(path));
	if (rc)
		return rc;
	rc = read_file_str(path, buf, sizeof(buf));
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	if (sscanf(buf, "dio=%15s", word) != 1 || !record_matches(lc, buf))
		return 0;
	req->dio = record_dio(word);
	req->known = req->dio != LOOPDEV_DIO_KEEP;
	req->plain = req->known && strstr(buf, "\nodirect=0") != NULL;
	return 0;
}

int request_apply(struct loopdev_ctx *lc, struct request *req)
{
	int rc = request_load(lc, req);

	if (req->plain)
		loopdev_set_plain(lc, true);
	return rc;
}

void request_forget(struct loopdev_ctx *lc)
{
	char path[PATH_MAX];

	if (!request_path(lc, path, sizeof(path)))
		unlink(path);
}
