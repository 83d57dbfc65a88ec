// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command-line layer shared by nbcat and loopctl: what every CLI
 * must do about its standard descriptors and its output files so that
 * it never destroys a user's data and never exits 0 after losing output.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cliutils.h"

int cli_sanitize_fds(void)
{
	int fd;

	for (fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free number: this very one */
		if (open("/dev/null", fd == STDIN_FILENO ? O_WRONLY :
			 O_RDONLY) != fd)
			return -(errno ? errno : EBADF);
	}
	return 0;
}

int cli_close_stream(FILE *fp)
{
	bool had_error = ferror(fp);
	bool pending = __fpending(fp) != 0;
	int rc;

	errno = 0;
	rc = fclose(fp);
	if (rc && !had_error && !pending && errno == EBADF)
		return 0;	/* closed and never written to */
	if (rc || had_error)
		return errno ? -errno : -EIO;
	return 0;
}

static int close_failure = EXIT_FAILURE;

static void close_stdout(void)
{
	int rc = cli_close_stream(stdout);

	if (rc && rc != -EPIPE) {
		errno = -rc;
		warn("write error");
	}
	if (cli_close_stream(stderr) || rc)
		_exit(close_failure);
}

void cli_close_stdout_at_exit(int failure)
{
	close_failure = failure;
	atexit(close_stdout);
}

static void file_id_set(struct cli_file_id *id, const struct stat *st)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->reg = S_ISREG(st->st_mode);
}

int cli_file_id_fd(int fd, struct cli_file_id *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	file_id_set(id, &st);
	return 0;
}

int cli_file_id_path(const char *path, struct cli_file_id *id)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	file_id_set(id, &st);
	return 0;
}

int cli_open_side_file(const char *path, const struct cli_file_id *avoid,
		       size_t n, struct cli_file_id *id, size_t *clash)
{
	size_t i;
	int fd, rc;

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
	if (fd < 0)
		return -errno;
	rc = cli_file_id_fd(fd, id);
	if (rc)
		goto fail;
	for (i = 0; id->reg && i < n; i++) {
		if (avoid[i].reg && avoid[i].dev == id->dev &&
		    avoid[i].ino == id->ino) {
			*clash = i;
			rc = -EEXIST;
			goto fail;
		}
	}
	if (id->reg && ftruncate(fd, 0) < 0) {
		rc = -errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return rc;
}

void cli_errtryhelp(const char *cmd, int status)
{
	fprintf(stderr, "Try '%s %s%s--help' for more information.\n",
		program_invocation_short_name, cmd ? cmd : "", cmd ? " " : "");
	exit(status);
}

void cli_print_version(void)
{
	printf("%s from %s %s\n", program_invocation_short_name,
	       PACKAGE_NAME, PACKAGE_VERSION);
	exit(EXIT_SUCCESS);
}
