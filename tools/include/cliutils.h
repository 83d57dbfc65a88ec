/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command-line layer both tools share: standard descriptors made
 * safe at start, output that can be lost checked at exit (util-linux
 * close_stdout), and side files (--trace, --report...) refused when they
 * are an input or standard output, before anything is truncated. Only
 * the at-exit check prints; everything else returns -errno.
 */
#ifndef NBIO_CLIUTILS_H
#define NBIO_CLIUTILS_H

#include <locale.h>	/* setlocale() at the start of each tool */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The fixed pieces of a --help text (util-linux's c.h has the same). */
#define USAGE_HEADER	"Usage:\n"
#define USAGE_OPTIONS	"Options:\n"
#define USAGE_HELP	"display this help\n"
#define USAGE_VERSION	"display version\n"

/* A file as the kernel names it: st_dev and st_ino. */
struct cli_file_id {
	dev_t dev;
	ino_t ino;
	bool reg;		/* regular file: only those get clobbered */
};

/* A name for messages: "''" for an empty one, which would print as nothing. */
static inline const char *cli_name(const char *name)
{
	return name && *name ? name : "''";
}

/*
 * cli_sanitize_fds - open /dev/null onto whichever of 0, 1 and 2 is
 * closed, so that no file opened later takes its number. The descriptor
 * is opened for the opposite direction (0 write-only, 1 and 2 read-only,
 * as gnulib's stdopen does): a program that uses it still fails (EBADF),
 * as it would on a closed descriptor, instead of losing data silently.
 * Returns 0 or -errno.
 */
int cli_sanitize_fds(void);

/*
 * cli_close_stream - fflush, ferror and fclose @fp.
 * Returns 0, or -errno of the failure (-EIO when the stream had an error
 * whose cause is gone). A stream that was closed and never written to
 * is not an error.
 */
int cli_close_stream(FILE *fp);

/*
 * cli_close_stdout_at_exit - at exit, close standard output and standard
 * error; if output was lost, print "write error: <reason>" (nothing for
 * EPIPE or when standard error itself failed) and _exit(@failure).
 */
void cli_close_stdout_at_exit(int failure);

/*
 * cli_file_id_fd / cli_file_id_path - fill @id from fstat(@fd) or
 * stat(@path). Return 0 or -errno.
 */
int cli_file_id_fd(int fd, struct cli_file_id *id);
int cli_file_id_path(const char *path, struct cli_file_id *id);

/*
 * cli_open_side_file - open @path for writing, then truncate it, unless
 * it is a regular file that is one of @avoid[0..@n) (inputs, standard
 * output, other side files).
 * @id: out: the opened file's identity
 * @clash: out: index in @avoid of the file it is, for -EEXIST
 *
 * Opens without O_TRUNC and checks first, so a refused file keeps its
 * data. Returns a descriptor (O_CLOEXEC), -EEXIST when refused, or
 * -errno.
 */
int cli_open_side_file(const char *path, const struct cli_file_id *avoid,
		       size_t n, struct cli_file_id *id, size_t *clash);

/*
 * cli_errtryhelp - "Try '<program> [<cmd> ]--help' for more information."
 * on standard error, then exit(@status). @cmd: a subcommand, or NULL.
 */
void __attribute__((__noreturn__)) cli_errtryhelp(const char *cmd,
						   int status);

/* cli_print_version - "<program> from <package> <version>", exit(0). */
void __attribute__((__noreturn__)) cli_print_version(void);

#endif /* NBIO_CLIUTILS_H */
