/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nbcat's shared state: options, counters, the report's columns, and the
 * functions that nbcat.c, read.c, uring.c, output.c and report.c call in
 * each other.
 */
#ifndef NBCAT_H
#define NBCAT_H

#include <ctype.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "c.h"
#include "cliutils.h"
#include "columns.h"
#include "histogram.h"
#include "pagecache.h"
#include "strutils.h"
#include "workpool.h"

/* Exit status, listed in nbcat(1) EXIT STATUS. */
enum {
	NBCAT_EXIT_SUCCESS   = 0,	/* everything written */
	NBCAT_EXIT_FAILURE   = 1,	/* bad usage, a file or write failed */
	NBCAT_EXIT_NOTCACHED = 2,	/* --cached-only: some data missing, or
					 * unknown without loading it */
};

#define DEFAULT_CHUNK	(256 * 1024)
#define MIN_CHUNK	(4 * 1024)
#define MAX_CHUNK	(64 * 1024 * 1024)
#define CHUNK_ALIGN	512
/* most bytes the reorder window may hold: window x chunk size */
#define MAX_BUFFERED	((uint64_t)256 * 1024 * 1024)
#define DEFAULT_JOBS	4
#define MAX_JOBS	256
#define DEFAULT_WINDOW	16
#define MAX_WINDOW	1024
#define PROGRESS_NS	250000000ULL	/* refresh at most 4 times a second */

enum strategy {
	STRATEGY_NOWAIT,	/* RWF_NOWAIT probe, workers for misses */
	STRATEGY_BLOCKING,	/* pread() per chunk, like cat */
	STRATEGY_POOL,		/* every chunk read by a worker */
	STRATEGY_URING,		/* the window's reads in flight in io_uring */
};

enum cached_only {
	CACHED_ONLY_OFF,
	CACHED_ONLY_STOP,	/* write up to the first missing byte */
	CACHED_ONLY_SKIP,	/* write cached pages, skip the others */
};

/* How a file was read (the MODE column). */
enum mode {
	MODE_NOWAIT,
	MODE_UNSUPPORTED,
	MODE_STREAM,
	MODE_BLOCKING,
	MODE_POOL,
	MODE_URING,
	MODE_UNKNOWN,		/* --cached-only: cannot tell, did not read */
	MODE_ERROR,
};

/* Latency classes. */
enum {
	LAT_NOWAIT,	/* RWF_NOWAIT reads that returned data */
	LAT_EAGAIN,	/* RWF_NOWAIT reads that found nothing cached */
	LAT_FALLBACK,	/* blocking reads (workers, plain, stream) */
	NR_LAT,
};

/* Counters of one file, or of the whole run. */
struct stats {
	const char *path;
	enum mode mode;
	uint64_t size;
	uint64_t bytes;		/* written to stdout */
	uint64_t chunks;
	uint64_t hit_chunks, partial_chunks, miss_chunks, unsup_chunks;
	uint64_t hit_bytes, partial_bytes, miss_bytes, unsup_bytes;
	uint64_t missing;	/* not written because of --cached-only */
	bool missing_unknown;	/* --cached-only, no RWF_NOWAIT: unread */
	bool ra_on_miss;	/* our RWF_NOWAIT misses started readahead */
	enum pc_residency res;	/* how --cached-only learned residency */
	uint64_t ns;		/* wall time */
	struct histogram lat[NR_LAT];
};

/* Report columns. */
enum {
	COL_FILE,
	COL_TYPE,
	COL_MODE,
	COL_SIZE,
	COL_BYTES,
	COL_CHUNKS,
	COL_HIT_CHUNKS,
	COL_PARTIAL_CHUNKS,
	COL_MISS_CHUNKS,
	COL_UNSUP_CHUNKS,
	COL_HIT_BYTES,
	COL_PARTIAL_BYTES,
	COL_MISS_BYTES,
	COL_UNSUP_BYTES,
	COL_HIT_RATIO,
	COL_CHUNK_HIT_RATIO,
	COL_NOWAIT_P50,
	COL_NOWAIT_P99,
	COL_NOWAIT_MAX,
	COL_EAGAIN_P50,
	COL_EAGAIN_P99,
	COL_EAGAIN_MAX,
	COL_FALLBACK_P50,
	COL_FALLBACK_P99,
	COL_FALLBACK_MAX,
	COL_TIME,
	COL_BPS,
	COL_MISSING,
	COL_READAHEAD_ON_MISS,
	COL_RESIDENCY,
	NR_COLS,
};

struct nb_uring;

struct nbcat {
	enum strategy strategy;
	enum cached_only cached_only;
	unsigned int jobs;
	unsigned int window;
	size_t chunk;
	size_t pagesize;
	bool prefetch;
	bool quiet;
	bool json;
	bool raw;
	bool bytes;		/* --bytes: exact numbers in the table */
	bool noheadings;
	bool progress;
	bool nowait_ra;		/* a RWF_NOWAIT miss starts readahead here */
	bool no_workers;	/* none could be started: read in main() */
	unsigned int miss_run;	/* chunks missed in a row, this file */

	int columns[NR_COLS * 2];
	size_t ncolumns;

	FILE *missing_fp;
	FILE *trace_fp;
	FILE *report_fp;

	struct libscols_table *tb;
	struct wp_pool pool;
	struct wp_window win;
	struct nb_uring *uring;	/* --strategy=uring: the ring (uring.c) */

	bool out_is_reg;	/* stdout is a regular file: out_dev/out_ino */
	dev_t out_dev;
	ino_t out_ino;

	bool collect_warnings;	/* the JSON report goes to stderr */
	char **warnings;	/* ... so they go into it: "warnings" */
	size_t nwarnings;

	size_t nfiles;
	bool failed;		/* exit 1 at the end */
	struct stats total;
	struct stats cur;	/* the file being read */

	uint64_t start_ns;
	uint64_t progress_ns;	/* last progress refresh */
	int progress_len;	/* characters of the last progress line */
};

/* One input file being read. */
struct input {
	const char *path;
	int fd;
	struct pc_reader rd;
	uint64_t off;		/* next byte to read */
	bool eof;
	bool unsupported;	/* RWF_NOWAIT refused: finish with plain reads */
	int unsup_err;		/* 0, or the errno io_uring refused it with */
	bool checked;		/* --strategy=uring: RWF_NOWAIT probed */
	uint64_t mr_off;	/* missing range being merged */
	uint64_t mr_len;
};

/* The side files and columns named on the command line. */
struct nbcat_args {
	const char *missing;	/* --missing */
	const char *trace;	/* --trace */
	const char *report;	/* --report */
	const char *columns;	/* --output */
};

/* output.c */
void nb_warn(struct nbcat *nb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void out_write(const void *buf, size_t len);
void close_output(struct nbcat *nb, FILE **fp, const char *what);
void trace(struct nbcat *nb, const struct input *in, uint64_t off,
	   size_t len, const char *outcome, uint64_t ns);
void missing_line(struct nbcat *nb, const struct input *in,
		  uint64_t off, const uint64_t *len);
void missing_flush(struct nbcat *nb, struct input *in);
void missing_add(struct nbcat *nb, struct input *in, uint64_t off,
		 uint64_t len);
void progress_show(struct nbcat *nb, uint64_t now, bool final);
void progress_tick(struct nbcat *nb);
char *xstrdup_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void open_side_files(struct nbcat *nb, const struct nbcat_args *a,
		     int first, int argc, char **argv);
void inspect_stdout(struct nbcat *nb);

/* read.c */
void cat_file(struct nbcat *nb, const char *path);

/*
 * uring.c: --strategy=uring. uring_setup() exits with the reason when
 * io_uring cannot be used (not built with liburing, or refused by the
 * kernel); uring_read() starts the read of slot @s at in->off and says,
 * in @r, whether the submit completed it (PC_HIT, PC_EOF), or it is in
 * flight (PC_MISS: uring_wait() for it), or PC_UNSUPPORTED; returns 0
 * or -errno.
 */
#ifdef HAVE_LIBURING
void uring_setup(struct nbcat *nb);
void uring_teardown(struct nbcat *nb);
int uring_read(struct nbcat *nb, struct input *in, struct wp_slot *s,
	       struct pc_result *r);
void uring_wait(struct nbcat *nb, struct wp_slot *s);
#else
static inline void __attribute__((__noreturn__))
uring_setup(struct nbcat *nb)
{
	errx(NBCAT_EXIT_FAILURE, "--strategy=uring: not built with liburing");
}
static inline void uring_teardown(struct nbcat *nb) { }
static inline int uring_read(struct nbcat *nb, struct input *in,
			     struct wp_slot *s, struct pc_result *r)
{
	return -ENOSYS;		/* never called: uring_setup() exits */
}
static inline void uring_wait(struct nbcat *nb, struct wp_slot *s) { }
#endif

/* report.c */
extern const struct col_info report_columns[NR_COLS];
void report_add(struct nbcat *nb, const struct stats *st, bool total);
void report_init(struct nbcat *nb);
void report_print(struct nbcat *nb);
void stats_merge(struct stats *t, const struct stats *s);
void stats_reset(struct stats *st, const char *path);
void set_columns(struct nbcat *nb, const char *list);

#endif /* NBCAT_H */
