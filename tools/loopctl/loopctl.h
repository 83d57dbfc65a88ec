/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loopctl's own layer over tools/lib/loopdev.c: exit codes, the
 * messages and checks every command shares (common.c), why direct I/O is
 * or is not in effect (explain.c), the table output of status and cache
 * (output.c), and the devices a command goes over (devices.c). Each
 * command is a file.
 */
#ifndef NBIO_LOOPCTL_H
#define NBIO_LOOPCTL_H

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
#include "loopdev-dio.h"
#include "strutils.h"

/* Exit status, listed in loopctl(8) EXIT STATUS. */
enum {
	LOOPCTL_EXIT_OK		= 0,	/* done (why: direct I/O can work) */
	LOOPCTL_EXIT_FAILURE	= 1,	/* bad usage or any other error */
	LOOPCTL_EXIT_NOT_LOOP	= 2,	/* not a loop device, or not bound */
	LOOPCTL_EXIT_NO_DIO	= 3,	/* direct I/O impossible, or off not
					 * to be told from on (set) */
	LOOPCTL_EXIT_PERM	= 4,	/* permission denied */
	LOOPCTL_EXIT_BUSY	= 5,	/* busy, no free device, deferred */
	LOOPCTL_EXIT_NO_DATA	= 6,	/* empty file, offset past its end */
};

/*
 * request.c: what attach or set asked for, kept in REQUEST_DIR/loopN, one
 * "key=value" a line, unknown keys ignored:
 *   dio=on|auto|off	what attach or set last asked for
 *   backdev=MAJ:MIN	the backing file's st_dev and st_ino: a record
 *   backino=N		for another file is stale
 *   diskseq=N		/sys/block/loopN/diskseq (5.15) when written: it
 *			changes with every bind, so a new binding of the
 *			same file (or of a new file with the same inode
 *			number) does not inherit the record
 *   odirect=0		loopctl attach bound it with a backing descriptor
 *			without O_DIRECT; written by attach, carried over
 *			by set for the same binding; absent: unknown
 *			(records written before this key, or by set only)
 */
#define REQUEST_DIR	"/run/loopctl"

struct request {
	bool known;			/* a record of this very binding */
	enum loopdev_dio_mode dio;	/* OFF, AUTO or ON */
	bool plain;			/* odirect=0 */
};

/*
 * request_save - record @dio for the device @lc is bound to (nothing for
 * LOOPDEV_DIO_KEEP), with odirect=0 when loopdev_is_plain() or a
 * matching record said so. request_load - the record, req->known only
 * when it is of this binding. request_apply - request_load(), then tell
 * the library what the record knows (loopdev_set_plain()). Each returns
 * 0 or -errno. request_forget - remove the record.
 */
int request_save(struct loopdev_ctx *lc, enum loopdev_dio_mode dio);
int request_load(struct loopdev_ctx *lc, struct request *req);
int request_apply(struct loopdev_ctx *lc, struct request *req);
void request_forget(struct loopdev_ctx *lc);

/* Long-only options, numbered past every char. */
enum {
	OPT_DIRECT_IO = CHAR_MAX + 1,
	OPT_SIZELIMIT,
	OPT_AUTOCLEAR,
	OPT_RAW,
	OPT_OUTPUT_ALL,
	OPT_REMOVE,
};

/* The first failure's exit code (set_exit()), and the command's name. */
extern int exit_status;
extern const char *cmd_name;	/* "status" or "list", for messages */

/* common.c */
void set_exit(int code);
int exit_code_of(int rc);
void __attribute__((__noreturn__)) errtryhelp(const char *cmd);
bool has_cap_sys_admin(void);
int check_access(const char *path, int mode, const char *what);
void require_access(const char *path, int mode, const char *what);
int report(const char *obj, int rc, const char *what);
int device_error(const char *name, int rc);
void set_device_or_die(struct loopdev_ctx *lc, const char *name);
enum loopdev_dio_mode parse_dio(const char *arg, const char *cmd);
uint64_t parse_bytes(const char *arg, const char *opt);
void parse_sector(struct loopdev_ctx *lc, const char *arg);
const char *dio_word(enum loopdev_dio_mode m);
void nothing_to_attach(uint64_t size, const char *file,
		       uint64_t offset, bool to_stderr);
void check_operands(int argc, char **argv, int min, int max,
		    const char *cmd, const char *what);

/* explain.c: why direct I/O is or is not in effect, in words */
const char *served_word(enum loopdev_served s);
const char *served_reason(enum loopdev_served_why why, bool brief);
extern const char *const served_remedy;
const char *bdev_label(const struct loopdev_dio *d, char *buf,
		       size_t len);
/* Why direct I/O is off: short (DIO-WHY), or one line a reason with
 * what to do, as warnings on stderr (@warn) or plain lines on stdout. */
void short_reasons(const struct loopdev_dio *d, char *buf, size_t len);
void explain(const char *obj, const struct loopdev_dio *d, bool warn);
void explain_warnings(const char *obj, const struct loopdev_dio *d,
		      bool warn);

/* output.c: tables of status and cache */
/* Output options shared by status and cache. */
struct output {
	const struct col_info *infos;
	size_t ninfos;
	int cols[64];
	size_t ncols;
	bool json, raw, noheadings, bytes;
};

void add_column(struct output *o, int id);
void parse_columns(struct output *o, const char *list, const char *cmd);
bool output_option(struct output *o, int c, const char *arg,
		   const char *cmd);
struct libscols_table *new_table(const struct output *o,
				 const char *name, const char *cmd);
void print_table(struct libscols_table *tb, const struct output *o);
void set_cell(struct libscols_line *ln, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void set_name(const struct output *o, struct libscols_line *ln,
	      size_t i, const char *name);
void set_bool(struct libscols_line *ln, size_t i, bool v);
void set_served(const struct output *o, struct libscols_line *ln, size_t i,
		enum loopdev_served v);
void set_size(const struct output *o, struct libscols_line *ln,
	      size_t i, uint64_t v);
void print_columns_help(const struct col_info *infos, size_t n);

/* devices.c: the devices named, or every bound one */
void start_devices(struct loopdev_iter *it, int argc, char **argv);
bool next_device(struct loopdev_iter *it, struct loopdev_ctx *lc);

/* one function a command, each in its own file */
int cmd_attach(int argc, char **argv);
int cmd_why(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_cache(int argc, char **argv);

#endif /* NBIO_LOOPCTL_H */
