// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbcat - concatenate files like cat(1), reading every chunk of a regular
 * file or block device with preadv2(RWF_NOWAIT) first, and report what
 * the page cache held. Misses are completed by worker threads while the
 * main thread probes ahead; output stays in file order through a bounded
 * reorder window. --cached-only never blocks and writes only cached data.
 */
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
#define DEFAULT_JOBS	4
#define MAX_JOBS	256
#define DEFAULT_WINDOW	16
#define MAX_WINDOW	1024
#define PROGRESS_NS	250000000ULL	/* refresh at most 4 times a second */

enum strategy {
	STRATEGY_NOWAIT,	/* RWF_NOWAIT probe, workers for misses */
	STRATEGY_BLOCKING,	/* pread() per chunk, like cat */
	STRATEGY_POOL,		/* every chunk read by a worker */
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
	MODE_UNKNOWN,		/* --cached-only: cannot tell, did not read */
	MODE_ERROR,
};

static const char *const mode_names[] = {
	[MODE_NOWAIT]      = "nowait",
	[MODE_UNSUPPORTED] = "unsupported",
	[MODE_STREAM]      = "stream",
	[MODE_BLOCKING]    = "blocking",
	[MODE_POOL]        = "pool",
	[MODE_UNKNOWN]     = "unknown",
	[MODE_ERROR]       = "error",
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
	COL_SECONDS,
	COL_BPS,
	COL_MISSING,
	COL_READAHEAD_ON_MISS,
	COL_RESIDENCY,
	NR_COLS,
};

/* numbers: right aligned, JSON numbers */
#define NUM(name, help) \
	{ name, 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, help }

static const struct cli_colinfo infos[NR_COLS] = {
	[COL_FILE] = { "FILE", 0.3, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING,
		"input file" },
	[COL_TYPE] = { "TYPE", 5, 0, SCOLS_JSON_STRING,
		"row type: file or total" },
	[COL_MODE] = { "MODE", 8, 0, SCOLS_JSON_STRING,
		"nowait, unsupported, unknown, stream, blocking, pool or error" },
	[COL_SIZE] = NUM("SIZE", "file size when opened"),
	[COL_BYTES] = NUM("BYTES", "bytes written to standard output"),
	[COL_CHUNKS] = NUM("CHUNKS", "chunks read"),
	[COL_HIT_CHUNKS] = NUM("HIT_CHUNKS", "chunks wholly in the page cache"),
	[COL_PARTIAL_CHUNKS] =
		NUM("PARTIAL_CHUNKS", "chunks partly in the page cache"),
	[COL_MISS_CHUNKS] = NUM("MISS_CHUNKS", "chunks not in the page cache"),
	[COL_UNSUP_CHUNKS] =
		NUM("UNSUP_CHUNKS", "chunks read without RWF_NOWAIT support"),
	[COL_HIT_BYTES] = NUM("HIT_BYTES", "bytes read from hit chunks"),
	[COL_PARTIAL_BYTES] =
		NUM("PARTIAL_BYTES", "cached bytes of partial chunks"),
	[COL_MISS_BYTES] =
		NUM("MISS_BYTES", "bytes that were not in the page cache"),
	[COL_UNSUP_BYTES] =
		NUM("UNSUP_BYTES", "bytes read without RWF_NOWAIT support"),
	[COL_HIT_RATIO] =
		NUM("HIT_RATIO", "cached share of the classified bytes"),
	[COL_CHUNK_HIT_RATIO] =
		NUM("CHUNK_HIT_RATIO", "hit share of the classified chunks"),
	[COL_NOWAIT_P50] =
		NUM("NOWAIT_P50_NS", "median latency of RWF_NOWAIT reads that returned data"),
	[COL_NOWAIT_P99] = NUM("NOWAIT_P99_NS", "99th percentile of the same"),
	[COL_NOWAIT_MAX] = NUM("NOWAIT_MAX_NS", "slowest of the same"),
	[COL_EAGAIN_P50] =
		NUM("EAGAIN_P50_NS", "median latency of RWF_NOWAIT reads that found nothing"),
	[COL_EAGAIN_P99] = NUM("EAGAIN_P99_NS", "99th percentile of the same"),
	[COL_EAGAIN_MAX] = NUM("EAGAIN_MAX_NS", "slowest of the same"),
	[COL_FALLBACK_P50] =
		NUM("FALLBACK_P50_NS", "median latency of blocking reads"),
	[COL_FALLBACK_P99] =
		NUM("FALLBACK_P99_NS", "99th percentile of the same"),
	[COL_FALLBACK_MAX] = NUM("FALLBACK_MAX_NS", "slowest of the same"),
	[COL_SECONDS] = NUM("SECONDS", "wall-clock time spent"),
	[COL_BPS] = NUM("BPS", "throughput: bytes written per second"),
	[COL_MISSING] = NUM("MISSING", "bytes not written by --cached-only"),
	[COL_READAHEAD_ON_MISS] = { "READAHEAD_ON_MISS", 5, 0,
		SCOLS_JSON_BOOLEAN,
		"our RWF_NOWAIT misses started readahead (kernel 6.12+)" },
	[COL_RESIDENCY] = { "RESIDENCY", 9, 0, SCOLS_JSON_STRING,
		"--cached-only: cachestat, mincore, probe or none" },
};

static const int default_columns[] = {
	COL_FILE, COL_MODE, COL_BYTES, COL_HIT_CHUNKS, COL_PARTIAL_CHUNKS,
	COL_MISS_CHUNKS, COL_HIT_RATIO, COL_NOWAIT_P50, COL_EAGAIN_P50,
	COL_FALLBACK_P50, COL_BPS,
};

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

	int columns[NR_COLS * 2];
	size_t ncolumns;

	FILE *missing_fp;
	FILE *trace_fp;
	FILE *report_fp;

	struct libscols_table *tb;
	struct workpool pool;
	struct reorder_window win;

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
	uint64_t mr_off;	/* missing range being merged */
	uint64_t mr_len;
};

static void __attribute__((__noreturn__)) usage(void)
{
	FILE *out = stdout;

	fputs("Usage:\n", out);
	fprintf(out, " %s [options] [<file>...]\n",
		program_invocation_short_name);

	fputs("\nConcatenate files to standard output. Each chunk of a regular file or\n"
	      "block device is first read with preadv2(RWF_NOWAIT); chunks that are not\n"
	      "in the page cache are completed by worker threads. A report of page-cache\n"
	      "hits and misses is written to standard error.\n", out);

	fputs("\nOptions:\n", out);
	fputs(" -s, --strategy <name>      nowait (default), blocking or pool\n", out);
	fputs(" -j, --jobs <num>           worker threads for misses (default 4)\n", out);
	fputs(" -b, --chunk-size <size>    bytes per read (default 256KiB)\n", out);
	fputs(" -w, --window <num>         chunks in flight at most (default 16)\n", out);
	fputs(" -c, --cached-only[=<how>]  never block: <how> is stop (at the first miss,\n"
	      "                              default) or skip (skip missing ranges)\n", out);
	fputs(" -m, --missing <file>       write the missing ranges to <file>\n", out);
	fputs("     --prefetch             ask the kernel to read missed ranges ahead\n", out);
	fputs(" -q, --quiet                print no report\n", out);
	fputs(" -J, --json                 print the report as JSON\n", out);
	fputs(" -r, --report <file>        write the report to <file>\n", out);
	fputs(" -o, --output <list>        report columns to print\n", out);
	fputs("     --raw                  print the report in raw format\n", out);
	fputs("     --bytes                print exact numbers (bytes, ns, ratios)\n", out);
	fputs(" -n, --noheadings           do not print report headings\n", out);
	fputs(" -t, --trace <file>         write one line per chunk to <file>\n", out);
	fputs(" -p, --progress             show progress on standard error\n", out);
	fputs(" -h, --help                 display this help\n", out);
	fputs(" -V, --version              display version\n", out);

	cli_print_columns(out, "Available report columns (for --output)",
			  infos, NR_COLS);

	fprintf(out, "\nFor more details see %s(1).\n",
		program_invocation_short_name);
	exit(NBCAT_EXIT_SUCCESS);
}

static void __attribute__((__noreturn__)) try_help(void)
{
	cli_errtryhelp(NULL, NBCAT_EXIT_FAILURE);
}

/* ------------------------------------------------------------------ */
/* output */

static void nb_warn(struct nbcat *nb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A warning about one file, or a side file: on stderr, or, when the JSON
 * report goes to stderr, kept for its "warnings" array, so that stderr
 * stays one JSON document (nbcat(1)).
 */
static void nb_warn(struct nbcat *nb, const char *fmt, ...)
{
	va_list ap;
	char *msg, **w;
	int n;

	va_start(ap, fmt);
	if (!nb->collect_warnings) {
		vwarnx(fmt, ap);
		va_end(ap);
		return;
	}
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	w = n < 0 ? NULL : realloc(nb->warnings,
				   (nb->nwarnings + 1) * sizeof(*w));
	if (!w)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	nb->warnings = w;
	w[nb->nwarnings++] = msg;
}

static void __attribute__((__noreturn__)) write_failed(int e)
{
	/*
	 * The reader went away (SIGPIPE ignored, so we see EPIPE): stop at
	 * once and quietly, as the default SIGPIPE action would.
	 */
	if (e == EPIPE)
		exit(NBCAT_EXIT_FAILURE);
	errno = e;
	err(NBCAT_EXIT_FAILURE, "write error");
}

/* Write all of @buf to standard output; any error ends the program. */
static void out_write(const void *buf, size_t len)
{
	const char *p = buf;
	struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };
	ssize_t n;

	while (len) {
		n = write(STDOUT_FILENO, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {	/* O_NONBLOCK stdout */
				poll(&pfd, 1, -1);
				continue;
			}
			write_failed(errno);
		}
		if (n == 0)
			write_failed(ENOSPC);
		p += n;
		len -= (size_t)n;
	}
}

/* /proc/sys/fs/pipe-max-size: the most an unprivileged pipe may hold. */
static long pipe_max_size(void)
{
	long max = -1;
	FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &max) != 1)
		max = -1;
	fclose(f);
	return max;
}

/*
 * Let the pipe on @fd hold @want bytes, or as much as it may: above
 * pipe-max-size F_SETPIPE_SZ fails (EPERM) without CAP_SYS_RESOURCE,
 * and the allowed maximum is then still better than 64 KiB. Failure is
 * harmless: the pipe just takes more wake-ups of the reader.
 */
static void grow_pipe(int fd, size_t want)
{
	int cur = fcntl(fd, F_GETPIPE_SZ);
	long max;

	if (cur <= 0 || (size_t)cur >= want || want > INT_MAX)
		return;
	if (fcntl(fd, F_SETPIPE_SZ, (int)want) >= 0 || errno != EPERM)
		return;
	max = pipe_max_size();
	if (max > cur && (size_t)max < want)
		fcntl(fd, F_SETPIPE_SZ, (int)max);
}

/*
 * The files a side file (--missing, --trace, --report) must not be:
 * standard output, the inputs, and the side files opened before it.
 */
struct guard {
	struct cli_file_id *ids;
	const char **what;	/* "standard output", "an input file"... */
	size_t n;
};

static void guard_add_fd(struct guard *g, int fd, const char *what)
{
	if (!cli_file_id_fd(fd, &g->ids[g->n]))
		g->what[g->n++] = what;
}

/* Open a side file; refuse it, untouched, if it is one of @g's files. */
static FILE *open_output(struct guard *g, const char *opt, const char *path)
{
	struct cli_file_id id;
	size_t clash;
	FILE *fp;
	int fd;

	if (!strcmp(path, "-"))
		errx(NBCAT_EXIT_FAILURE,
		     "%s: '-' is not allowed, standard output carries the data",
		     opt);
	fd = cli_open_side_file(path, g->ids, g->n, &id, &clash);
	if (fd == -EEXIST)
		errx(NBCAT_EXIT_FAILURE,
		     "%s: %s: is %s; refusing to overwrite it", opt, path,
		     g->what[clash]);
	if (fd < 0) {
		errno = -fd;
		err(NBCAT_EXIT_FAILURE, "%s: %s", opt, cli_name(path));
	}
	fp = fdopen(fd, "w");
	if (!fp)
		err(NBCAT_EXIT_FAILURE, "%s", path);
	g->ids[g->n] = id;
	g->what[g->n++] = opt[2] == 'm' ? "the --missing file" :
			  opt[2] == 't' ? "the --trace file" :
					  "the --report file";
	return fp;
}

static void close_output(struct nbcat *nb, FILE **fp, const char *what)
{
	if (!*fp)
		return;
	if (ferror(*fp) | fclose(*fp)) {
		nb_warn(nb, "%s: write error", what);
		nb->failed = true;
	}
	*fp = NULL;
}

/*
 * A path as a field of a tab-separated line: tab, newline and backslash
 * written as \t, \n and \\ (nbcat(1)), so every line stays one record.
 */
static void put_path(FILE *fp, const char *path)
{
	for (; *path; path++) {
		switch (*path) {
		case '\t':
			fputs("\\t", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\\':
			fputs("\\\\", fp);
			break;
		default:
			putc(*path, fp);
			break;
		}
	}
}

static void trace(struct nbcat *nb, const struct input *in, uint64_t off,
		  size_t len, const char *outcome, uint64_t ns)
{
	if (!nb->trace_fp)
		return;
	fprintf(nb->trace_fp, "%" PRIu64 "\t%zu\t%s\t%" PRIu64 "\t",
		off, len, outcome, ns);
	put_path(nb->trace_fp, in->path);
	putc('\n', nb->trace_fp);
}

/* One --missing line; @len NULL: the length is unknown. */
static void missing_line(struct nbcat *nb, const struct input *in,
			 uint64_t off, const uint64_t *len)
{
	if (!nb->missing_fp)
		return;
	put_path(nb->missing_fp, in->path);
	fprintf(nb->missing_fp, "\t%" PRIu64 "\t", off);
	if (len)
		fprintf(nb->missing_fp, "%" PRIu64 "\n", *len);
	else
		fputs("unknown\n", nb->missing_fp);
}

static void missing_flush(struct nbcat *nb, struct input *in)
{
	if (in->mr_len)
		missing_line(nb, in, in->mr_off, &in->mr_len);
	in->mr_len = 0;
}

/* Record [off, off + len) as missing, merged with an adjacent range. */
static void missing_add(struct nbcat *nb, struct input *in, uint64_t off,
			uint64_t len)
{
	if (!len)
		return;
	if (in->mr_len && in->mr_off + in->mr_len == off) {
		in->mr_len += len;
		return;
	}
	missing_flush(nb, in);
	in->mr_off = off;
	in->mr_len = len;
}

static void progress_show(struct nbcat *nb, uint64_t now, bool final)
{
	const struct stats *t = &nb->total, *c = &nb->cur;
	uint64_t bytes = t->bytes + c->bytes;
	uint64_t cached = t->hit_bytes + t->partial_bytes +
			  c->hit_bytes + c->partial_bytes;
	uint64_t classified = cached + t->miss_bytes + c->miss_bytes;
	double secs = (double)(now - nb->start_ns) / 1e9;
	char sbytes[HUMAN_LEN], srate[HUMAN_LEN], sratio[16];
	int len;

	size_to_human(sbytes, bytes);
	size_to_human(srate, secs > 0 ? (uint64_t)((double)bytes / secs) : 0);
	if (classified)
		snprintf(sratio, sizeof(sratio), "%.1f%%",
			 100.0 * (double)cached / (double)classified);
	else
		snprintf(sratio, sizeof(sratio), "-");
	len = fprintf(stderr, "\r%s copied, %s/s, %s cached", sbytes, srate,
		      sratio);
	/* blank out what is left of a longer previous line */
	fprintf(stderr, "%*s%s", nb->progress_len > len ?
		nb->progress_len - len : 0, "", final ? "\n" : "");
	nb->progress_len = len;
	nb->progress_ns = now;
}

static inline void progress_tick(struct nbcat *nb)
{
	uint64_t now;

	if (!nb->progress)
		return;
	now = pc_now_ns();
	if (now - nb->progress_ns >= PROGRESS_NS)
		progress_show(nb, now, false);
}

/* Write @len bytes of file data and count them. */
static inline void emit(struct nbcat *nb, const void *buf, size_t len)
{
	out_write(buf, len);
	nb->cur.bytes += len;
	progress_tick(nb);
}

/* ------------------------------------------------------------------ */
/* reading */

static void count_probe(struct nbcat *nb, const struct input *in,
			uint64_t off, size_t len, const struct pc_result *r)
{
	struct stats *st = &nb->cur;
	uint64_t size;

	switch (r->outcome) {
	case PC_HIT:
		st->hit_chunks++;
		st->hit_bytes += r->bytes;
		hist_add(&st->lat[LAT_NOWAIT], r->ns);
		trace(nb, in, off, r->bytes, "hit", r->ns);
		break;
	case PC_PARTIAL:
		st->partial_chunks++;
		st->partial_bytes += r->bytes;
		st->ra_on_miss |= nb->nowait_ra;
		hist_add(&st->lat[LAT_NOWAIT], r->ns);
		trace(nb, in, off, r->bytes, "partial", r->ns);
		break;
	case PC_MISS:
		st->miss_chunks++;
		/*
		 * A partial read stops at an uncached page, a miss at the
		 * first one: since 6.12 either starts readahead there.
		 */
		st->ra_on_miss |= nb->nowait_ra;
		hist_add(&st->lat[LAT_EAGAIN], r->ns);
		/* the chunk's bytes up to EOF, as miss_bytes counts them */
		size = pc_reader_get_size(&in->rd);
		if (off < size && size - off < len)
			len = size - off;
		trace(nb, in, off, len, "miss", r->ns);
		break;
	default:
		return;
	}
	st->chunks++;
}

/* Plain reads: --strategy=blocking, or a file without RWF_NOWAIT. */
static int copy_plain(struct nbcat *nb, struct input *in, char *buf,
		      enum mode mode)
{
	const char *outcome = mode == MODE_BLOCKING ? "blocking"
						    : "unsupported";
	struct stats *st = &nb->cur;
	struct pc_result r;
	int rc;

	st->mode = mode;
	for (;;) {
		rc = pc_read_full(in->fd, buf, nb->chunk, in->off, &r);
		if (r.bytes) {
			st->chunks++;
			if (mode == MODE_UNSUPPORTED) {
				st->unsup_chunks++;
				st->unsup_bytes += r.bytes;
			}
			hist_add(&st->lat[LAT_FALLBACK], r.ns);
			trace(nb, in, in->off, r.bytes, outcome, r.ns);
			emit(nb, buf, r.bytes);
			in->off += r.bytes;
		}
		if (rc || r.eof)
			return rc;
	}
}

/* Pipes, terminals, sockets: read() until it returns 0. */
static int copy_stream(struct nbcat *nb, struct input *in, char *buf)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	int rc;

	st->mode = MODE_STREAM;
	for (;;) {
		rc = pc_read_stream(in->fd, buf, nb->chunk, &r);
		if (rc)
			return rc;
		if (r.eof)
			return 0;
		st->chunks++;
		hist_add(&st->lat[LAT_FALLBACK], r.ns);
		trace(nb, in, in->off, r.bytes, "stream", r.ns);
		emit(nb, buf, r.bytes);
		in->off += r.bytes;
	}
}

/*
 * Write out a completed window slot. Returns 0, 1 when a blocking read
 * reached the end of the file before the slot was full (what follows
 * must be dropped), or -errno from the read.
 */
static int slot_flush(struct nbcat *nb, struct input *in,
		      struct rwin_slot *s)
{
	struct stats *st = &nb->cur;
	struct wp_job *job = &s->job;
	size_t total = s->have;

	if (s->pending) {
		if (job->err) {
			/* write what was read before the error, as cat does */
			total += job->res.bytes;
			if (total)
				emit(nb, s->buf, total);
			return job->err;
		}
		total += job->res.bytes;
		hist_add(&st->lat[LAT_FALLBACK], job->res.ns);
		trace(nb, in, job->off, job->res.bytes, "fallback",
		      job->res.ns);
		if (nb->strategy == STRATEGY_POOL) {
			if (job->res.bytes)
				st->chunks++;
		} else {
			st->miss_bytes += job->res.bytes;
			missing_add(nb, in, job->off, job->res.bytes);
		}
	}
	if (total)
		emit(nb, s->buf, total);
	if (s->pending && job->res.eof && total < s->want) {
		in->eof = true;
		in->off = s->off + total;
		return 1;
	}
	return 0;
}

static int slot_submit(struct nbcat *nb, struct input *in,
		       struct rwin_slot *s)
{
	struct wp_job *job = &s->job;
	uint64_t size;
	int rc;

	job->fd = in->fd;
	job->buf = s->buf + s->have;
	job->len = s->want - s->have;
	job->off = s->off + s->have;
	if (nb->prefetch) {
		size = pc_reader_get_size(&in->rd);
		if (job->off < size)
			posix_fadvise(in->fd, (off_t)job->off,
				      (off_t)(size - job->off < job->len ?
					      size - job->off : job->len),
				      POSIX_FADV_WILLNEED);
	}
	rc = workpool_submit(&nb->pool, job);
	if (rc)
		return rc;
	s->pending = true;
	rwin_push(&nb->win);
	in->off += s->want;
	return 0;
}

/*
 * Start reading the next chunk into slot @s: a RWF_NOWAIT probe (a hit
 * with nothing pending is written at once, the cat-like fast path), or,
 * for --strategy=pool, a job for a worker.
 */
static int slot_start(struct nbcat *nb, struct input *in,
		      struct rwin_slot *s)
{
	struct pc_result r;
	int rc;

	s->off = in->off;
	s->want = nb->chunk;
	if (nb->strategy == STRATEGY_POOL)
		return slot_submit(nb, in, s);

	rc = pc_read_nowait(&in->rd, s->buf, nb->chunk, in->off, &r);
	if (rc)
		return rc;
	count_probe(nb, in, in->off, nb->chunk, &r);
	switch (r.outcome) {
	case PC_EOF:
		in->eof = true;
		return 0;
	case PC_UNSUPPORTED:
		in->unsupported = true;
		return 0;
	case PC_HIT:
		if (rwin_is_empty(&nb->win)) {
			emit(nb, s->buf, r.bytes);
		} else {
			s->want = s->have = r.bytes;
			rwin_push(&nb->win);
		}
		in->off += r.bytes;
		return 0;
	case PC_PARTIAL:
	case PC_MISS:
		break;
	}
	s->have = r.bytes;
	return slot_submit(nb, in, s);
}

/* --strategy=nowait and --strategy=pool, through the reorder window. */
static int copy_window(struct nbcat *nb, struct input *in)
{
	struct reorder_window *w = &nb->win;
	struct rwin_slot *s;
	int rc = 0, err;

	nb->cur.mode = nb->strategy == STRATEGY_POOL ? MODE_POOL : MODE_NOWAIT;
	for (;;) {
		/* write out, in file order, whatever is complete */
		while ((s = rwin_head(w)) &&
		       (!s->pending || workpool_is_done(&s->job))) {
			rc = slot_flush(nb, in, s);
			rwin_pop(w);
			if (rc)
				goto drop;
		}
		/* read ahead, but not past the known end of the file */
		if (!in->eof && !in->unsupported && !rwin_is_full(w) &&
		    (rwin_is_empty(w) || in->off < pc_reader_get_size(&in->rd))) {
			rc = rwin_next(w, &s);
			if (!rc)
				rc = slot_start(nb, in, s);
			if (rc)
				goto drain;
			continue;
		}
		s = rwin_head(w);
		if (!s)
			break;
		workpool_wait(&nb->pool, &s->job);
	}

	if (in->unsupported) {
		if (!nb->quiet)
			nb_warn(nb, "%s: non-blocking reads not supported, using plain reads",
				in->path);
		return copy_plain(nb, in, rwin_head_buf(w), MODE_UNSUPPORTED);
	}
	return 0;
drain:
	/*
	 * Reading at in->off failed: the chunks in flight all lie before
	 * it, so write them, as cat writes what it read before an error.
	 * An error in one of them comes first and wins.
	 */
	while ((s = rwin_head(w))) {
		if (s->pending)
			workpool_wait(&nb->pool, &s->job);
		err = slot_flush(nb, in, s);
		rwin_pop(w);
		if (err) {
			rc = err < 0 ? err : rc;
			goto drop;
		}
	}
	return rc;
drop:
	/* after an error or an early end of file, the rest is not written */
	while ((s = rwin_head(w))) {
		if (s->pending)
			workpool_wait(&nb->pool, &s->job);
		rwin_pop(w);
	}
	return rc < 0 ? rc : 0;
}

/* --cached-only=stop: the rest of the file, from @from, is missing. */
static int missing_rest(struct nbcat *nb, struct input *in, uint64_t from)
{
	uint64_t size;
	int rc;

	rc = pc_reader_refresh(&in->rd);
	if (rc)
		return rc;
	size = pc_reader_get_size(&in->rd);
	if (from < size) {
		nb->cur.missing += size - from;
		missing_add(nb, in, from, size - from);
	}
	return 0;
}

/*
 * --cached-only=skip: probe [from, end) page by page, write the cached
 * pages, record the others. Returns 0 or -errno; *cached is increased by
 * the bytes written.
 */
static int skip_missing(struct nbcat *nb, struct input *in, char *buf,
			uint64_t from, uint64_t end, uint64_t *cached)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	uint64_t p = from, next, size;
	size_t step;
	int rc;

	while (p < end) {
		next = (p / nb->pagesize + 1) * nb->pagesize;
		step = (size_t)((next < end ? next : end) - p);
		rc = pc_read_nowait(&in->rd, buf, step, p, &r);
		if (rc)
			return rc;
		switch (r.outcome) {
		case PC_HIT:
		case PC_PARTIAL:
			hist_add(&st->lat[LAT_NOWAIT], r.ns);
			trace(nb, in, p, r.bytes,
			      r.outcome == PC_HIT ? "hit" : "partial", r.ns);
			st->partial_bytes += r.bytes;
			*cached += r.bytes;
			emit(nb, buf, r.bytes);
			p += r.bytes;
			break;
		case PC_EOF:
			in->off = p;
			return 0;	/* the file shrank */
		case PC_MISS:
		case PC_UNSUPPORTED:
			/* not past the end of a file that shrank meanwhile */
			size = pc_reader_get_size(&in->rd);
			if (p >= size) {
				in->off = p;
				return 0;
			}
			if (step > size - p)
				step = (size_t)(size - p);
			hist_add(&st->lat[LAT_EAGAIN], r.ns);
			trace(nb, in, p, step, "miss", r.ns);
			st->miss_bytes += step;
			st->missing += step;
			missing_add(nb, in, p, step);
			p += step;
			break;
		}
	}
	in->off = p;
	return 0;
}

/*
 * --cached-only on a file RWF_NOWAIT cannot read (procfs, sysfs, tmpfs),
 * or whose residency nbcat cannot learn without loading it: nothing more
 * is written and the rest is missing by an unknown amount (the size says
 * nothing for procfs and sysfs).
 */
static void cached_unknown(struct nbcat *nb, struct input *in,
			   enum mode mode)
{
	nb->cur.mode = mode;
	nb->cur.missing_unknown = true;
	if (!nb->quiet) {
		if (mode == MODE_UNSUPPORTED)
			nb_warn(nb, "%s: non-blocking reads not supported, nothing read (--cached-only)",
				in->path);
		else
			nb_warn(nb, "%s: cannot tell what is cached without loading it (no cachestat or mincore answer for this user, and this kernel reads ahead on RWF_NOWAIT misses); nothing read",
				in->path);
	}
	missing_flush(nb, in);
	missing_line(nb, in, in->off, NULL);
}

/* --cached-only by probing: a miss starts no I/O on this kernel. */
static int copy_cached_probe(struct nbcat *nb, struct input *in, char *buf)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	uint64_t at, end, size, cached;
	int rc;

	st->mode = MODE_NOWAIT;
	for (;;) {
		rc = pc_read_nowait(&in->rd, buf, nb->chunk, in->off, &r);
		if (rc)
			return rc;
		switch (r.outcome) {
		case PC_EOF:
			return 0;
		case PC_UNSUPPORTED:
			/* plain reads could block: nothing is known cached */
			cached_unknown(nb, in, MODE_UNSUPPORTED);
			return 0;
		case PC_HIT:
			count_probe(nb, in, in->off, nb->chunk, &r);
			emit(nb, buf, r.bytes);
			in->off += r.bytes;
			continue;
		case PC_PARTIAL:
			emit(nb, buf, r.bytes);
			break;
		case PC_MISS:
			break;
		}

		/* first missing byte of this chunk */
		at = in->off + r.bytes;
		if (nb->cached_only == CACHED_ONLY_STOP) {
			count_probe(nb, in, in->off, nb->chunk, &r);
			rc = missing_rest(nb, in, at);
			size = pc_reader_get_size(&in->rd);
			end = in->off + nb->chunk;
			if (end > size)
				end = size;
			if (end > at)
				st->miss_bytes += end - at;
			in->off = at;
			return rc;
		}

		/* skip: sort the rest of the chunk out page by page */
		hist_add(&st->lat[r.bytes ? LAT_NOWAIT : LAT_EAGAIN], r.ns);
		trace(nb, in, in->off, r.bytes ? r.bytes : nb->chunk,
		      r.bytes ? "partial" : "miss", r.ns);
		st->partial_bytes += r.bytes;
		cached = r.bytes;
		size = pc_reader_get_size(&in->rd);
		if (at >= size) {
			/*
			 * Nothing to skip below the size we know: it is stale
			 * (the file grew or shrank). Without a new one this
			 * loop would probe @at for ever.
			 */
			rc = pc_reader_refresh(&in->rd);
			if (rc)
				return rc;
			size = pc_reader_get_size(&in->rd);
			if (at >= size) {
				in->off = at;
				return 0;	/* the file ends here now */
			}
		}
		end = in->off + nb->chunk;
		if (end > size)
			end = size;
		rc = skip_missing(nb, in, buf, at, end, &cached);
		if (rc)
			return rc;
		st->chunks++;
		if (cached)
			st->partial_chunks++;
		else
			st->miss_chunks++;
		if (in->off < end)
			return 0;	/* the file shrank */
	}
}

/* The end of the run of pages with @vec's value at @p, within @end. */
static uint64_t run_end(const struct nbcat *nb, const unsigned char *vec,
			uint64_t first, uint64_t p, uint64_t end)
{
	uint64_t psz = nb->pagesize;
	unsigned char v = vec[p / psz - first];
	uint64_t q = (p / psz + 1) * psz;

	while (q < end && vec[q / psz - first] == v)
		q += psz;
	return q < end ? q : end;
}

/*
 * --cached-only where the residency query works: ask which pages of the
 * chunk are cached (cachestat or mincore, which add none), then read only
 * those, with RWF_NOWAIT. A page evicted between the query and the read
 * costs one EAGAIN or a short read, and is missing. Returns 0 or -errno.
 */
static int copy_cached_resident(struct nbcat *nb, struct input *in,
				char *buf, unsigned char *vec)
{
	struct stats *st = &nb->cur;
	struct pc_result r;
	uint64_t size, end, p, q, at, got, first, cached;
	bool grown_checked = false;
	int rc;

	st->mode = MODE_NOWAIT;
	for (;;) {
		size = pc_reader_get_size(&in->rd);
		if (in->off >= size) {
			/* the file may have grown while we read it */
			if (grown_checked)
				return 0;
			rc = pc_reader_refresh(&in->rd);
			if (rc)
				return rc;
			grown_checked = true;
			continue;
		}
		grown_checked = false;
		end = in->off + nb->chunk < size ? in->off + nb->chunk : size;
		rc = pc_resident(&in->rd, in->off, end - in->off, vec);
		if (rc)
			return rc;
		first = in->off / nb->pagesize;
		if (memchr(vec, 0, (end - 1) / nb->pagesize - first + 1)) {
			/*
			 * Pages past the end of a file that shrank are not
			 * resident either: they are not missing, they are
			 * gone. Stat after the query, so the size is at
			 * least as recent as the answer.
			 */
			rc = pc_reader_refresh(&in->rd);
			if (rc)
				return rc;
			size = pc_reader_get_size(&in->rd);
			if (in->off >= size)
				return 0;	/* the file shrank */
			if (end > size)
				end = size;
		}
		cached = 0;
		at = end;	/* first missing byte of the chunk */
		for (p = in->off; p < end; p = q) {
			q = run_end(nb, vec, first, p, end);
			got = 0;
			if (vec[p / nb->pagesize - first]) {
				rc = pc_read_resident(&in->rd, buf, q - p, p,
						      &r);
				if (rc)
					return rc;
				if (r.outcome == PC_UNSUPPORTED) {
					in->off = p;
					cached_unknown(nb, in, MODE_UNSUPPORTED);
					return 0;
				}
				got = r.bytes;
				hist_add(&st->lat[got ? LAT_NOWAIT :
						 LAT_EAGAIN], r.ns);
				trace(nb, in, p, got ? got : q - p,
				      got == q - p ? "hit" :
				      got ? "partial" : "miss", r.ns);
				emit(nb, buf, got);
				cached += got;
				if (r.outcome == PC_EOF ||
				    (r.outcome == PC_HIT && got < q - p)) {
					end = p + got;	/* the file shrank */
					break;
				}
			} else {
				trace(nb, in, p, q - p, "miss", 0);
			}
			if (got < q - p) {
				if (at == end)
					at = p + got;
				if (nb->cached_only == CACHED_ONLY_STOP)
					break;
				missing_add(nb, in, p + got, q - p - got);
				st->missing += q - p - got;
			}
		}

		st->chunks++;
		if (cached == end - in->off) {
			st->hit_chunks++;
			st->hit_bytes += cached;
		} else if (cached) {
			st->partial_chunks++;
			st->partial_bytes += cached;
		} else {
			st->miss_chunks++;
		}
		if (nb->cached_only == CACHED_ONLY_STOP && at < end) {
			st->miss_bytes += end - at;
			in->off = at;
			return missing_rest(nb, in, at);
		}
		st->miss_bytes += end - in->off - cached;
		if (end < size && end < in->off + nb->chunk) {
			in->off = end;
			return 0;	/* the file shrank */
		}
		in->off = end;
	}
}

/* --cached-only: never block, and never add a page to the cache. */
static int copy_cached(struct nbcat *nb, struct input *in, char *buf)
{
	unsigned char *vec;
	int rc;

	rc = pc_residency_init(&in->rd);
	if (rc)
		return rc;
	nb->cur.res = pc_reader_get_residency(&in->rd);
	switch (nb->cur.res) {
	case PC_RES_CACHESTAT:
	case PC_RES_MINCORE:
		vec = malloc(nb->chunk / nb->pagesize + 2);
		if (!vec)
			return -ENOMEM;
		rc = copy_cached_resident(nb, in, buf, vec);
		free(vec);
		return rc;
	case PC_RES_PROBE:
		return copy_cached_probe(nb, in, buf);
	default:
		cached_unknown(nb, in, pc_reader_is_unsupported(&in->rd) ?
			       MODE_UNSUPPORTED : MODE_UNKNOWN);
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* report */

static char *xstrdup_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static char *xstrdup_printf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	return s;
}

static char *fmt_u64(uint64_t v)
{
	return xstrdup_printf("%" PRIu64, v);
}

/*
 * Report numbers: exact in JSON and with --bytes (bytes, nanoseconds,
 * ratios from 0 to 1), else as people read them: 64M, 8.4us, 99.5%.
 */
static bool exact(const struct nbcat *nb)
{
	return nb->json || nb->bytes;
}

static char *fmt_size(const struct nbcat *nb, uint64_t v)
{
	char buf[HUMAN_LEN];

	return exact(nb) ? fmt_u64(v) : xstrdup_printf("%s",
						       size_to_human(buf, v));
}

static char *fmt_ns(const struct nbcat *nb, uint64_t v)
{
	char buf[HUMAN_LEN];

	return exact(nb) ? fmt_u64(v) : xstrdup_printf("%s",
						       ns_to_human(buf, v));
}

static char *fmt_ratio(const struct nbcat *nb, uint64_t part, uint64_t whole)
{
	double r;

	if (!whole)
		return NULL;
	r = (double)part / (double)whole;
	return exact(nb) ? xstrdup_printf("%.6f", r) :
			   xstrdup_printf("%.1f%%", 100 * r);
}

static char *fmt_lat(const struct nbcat *nb, const struct histogram *h,
		     double pct)
{
	if (!hist_count(h))
		return NULL;
	return fmt_ns(nb, hist_percentile(h, pct));
}

static const char *const residency_names[] = {
	[PC_RES_UNKNOWN]   = "unknown",
	[PC_RES_CACHESTAT] = "cachestat",
	[PC_RES_MINCORE]   = "mincore",
	[PC_RES_PROBE]     = "probe",
	[PC_RES_NONE]      = "none",
};

static char *column_data(const struct nbcat *nb, const struct stats *st,
			 bool total, int col)
{
	uint64_t cached = st->hit_bytes + st->partial_bytes;
	uint64_t classified_chunks = st->hit_chunks + st->partial_chunks +
				     st->miss_chunks;
	char buf[HUMAN_LEN];
	uint64_t bps;

	switch (col) {
	case COL_FILE:
		if (total)
			return nb->json ? NULL : strdup("total");
		/* a file name is bytes; JSON strings must be UTF-8 */
		return nb->json ? utf8_escape_dup(st->path) : strdup(st->path);
	case COL_TYPE:
		return strdup(total ? "total" : "file");
	case COL_MODE:
		return total ? NULL : strdup(mode_names[st->mode]);
	case COL_SIZE:
		return fmt_size(nb, st->size);
	case COL_BYTES:
		return fmt_size(nb, st->bytes);
	case COL_CHUNKS:
		return fmt_u64(st->chunks);
	case COL_HIT_CHUNKS:
		return fmt_u64(st->hit_chunks);
	case COL_PARTIAL_CHUNKS:
		return fmt_u64(st->partial_chunks);
	case COL_MISS_CHUNKS:
		return fmt_u64(st->miss_chunks);
	case COL_UNSUP_CHUNKS:
		return fmt_u64(st->unsup_chunks);
	case COL_HIT_BYTES:
		return fmt_size(nb, st->hit_bytes);
	case COL_PARTIAL_BYTES:
		return fmt_size(nb, st->partial_bytes);
	case COL_MISS_BYTES:
		return fmt_size(nb, st->miss_bytes);
	case COL_UNSUP_BYTES:
		return fmt_size(nb, st->unsup_bytes);
	case COL_HIT_RATIO:
		return fmt_ratio(nb, cached, cached + st->miss_bytes);
	case COL_CHUNK_HIT_RATIO:
		return fmt_ratio(nb, st->hit_chunks, classified_chunks);
	case COL_NOWAIT_P50:
		return fmt_lat(nb, &st->lat[LAT_NOWAIT], 50);
	case COL_NOWAIT_P99:
		return fmt_lat(nb, &st->lat[LAT_NOWAIT], 99);
	case COL_NOWAIT_MAX:
		return fmt_lat(nb, &st->lat[LAT_NOWAIT], 100);
	case COL_EAGAIN_P50:
		return fmt_lat(nb, &st->lat[LAT_EAGAIN], 50);
	case COL_EAGAIN_P99:
		return fmt_lat(nb, &st->lat[LAT_EAGAIN], 99);
	case COL_EAGAIN_MAX:
		return fmt_lat(nb, &st->lat[LAT_EAGAIN], 100);
	case COL_FALLBACK_P50:
		return fmt_lat(nb, &st->lat[LAT_FALLBACK], 50);
	case COL_FALLBACK_P99:
		return fmt_lat(nb, &st->lat[LAT_FALLBACK], 99);
	case COL_FALLBACK_MAX:
		return fmt_lat(nb, &st->lat[LAT_FALLBACK], 100);
	case COL_SECONDS:
		if (!exact(nb))
			return fmt_ns(nb, st->ns);
		return xstrdup_printf("%.6f", (double)st->ns / 1e9);
	case COL_BPS:
		if (!st->ns)
			return NULL;
		bps = (uint64_t)((double)st->bytes * 1e9 / (double)st->ns);
		if (exact(nb))
			return fmt_u64(bps);
		return xstrdup_printf("%s/s", size_to_human(buf, bps));
	case COL_MISSING:
		/* unknown (null) when a file could not be probed at all */
		return st->missing_unknown ? NULL : fmt_size(nb, st->missing);
	case COL_READAHEAD_ON_MISS:
		/* libsmartcols' JSON boolean: "0" is false, "1" true */
		if (nb->json)
			return strdup(st->ra_on_miss ? "1" : "0");
		return strdup(st->ra_on_miss ? "true" : "false");
	case COL_RESIDENCY:
		if (total || !nb->cached_only ||
		    st->res == PC_RES_UNKNOWN)
			return NULL;
		return strdup(residency_names[st->res]);
	}
	return NULL;
}

static void report_add(struct nbcat *nb, const struct stats *st, bool total)
{
	struct libscols_line *ln;
	size_t i;
	char *data;

	if (!nb->tb)
		return;
	ln = scols_table_new_line(nb->tb, NULL);
	if (!ln)
		err(NBCAT_EXIT_FAILURE, "cannot allocate report line");
	for (i = 0; i < nb->ncolumns; i++) {
		data = column_data(nb, st, total, nb->columns[i]);
		if (data && scols_line_refer_data(ln, i, data)) {
			free(data);
			err(NBCAT_EXIT_FAILURE, "cannot set report data");
		}
	}
}

static void report_init(struct nbcat *nb)
{
	if (nb->quiet)
		return;
	scols_init_debug(0);
	nb->tb = cli_new_table(infos, nb->columns, nb->ncolumns, nb->json,
			       nb->raw, nb->noheadings);
	if (!nb->tb)
		err(NBCAT_EXIT_FAILURE, "cannot allocate report table");
	scols_table_set_name(nb->tb, "nbcat");
	scols_table_set_stream(nb->tb, nb->report_fp ? nb->report_fp : stderr);
}

/* @s as a JSON string: quoted, escaped, valid UTF-8. */
static void json_put_string(FILE *fp, const char *s)
{
	char *u = utf8_escape_dup(s);
	const unsigned char *p;

	if (!u)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	putc('"', fp);
	for (p = (const unsigned char *)u; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(fp, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(fp, "\\u%04x", *p);
		else
			putc(*p, fp);
	}
	putc('"', fp);
	free(u);
}

/*
 * Print the report. When the JSON report goes to stderr, the warnings
 * join it as a second key, "warnings": libsmartcols writes one object,
 * {"nbcat": [...]}, so the array goes in before its closing brace.
 */
static void report_print(struct nbcat *nb)
{
	char *doc = NULL, *end;
	size_t i;

	if (!nb->collect_warnings) {
		scols_print_table(nb->tb);
		return;
	}
	if (scols_print_table_to_string(nb->tb, &doc) || !doc ||
	    !(end = strrchr(doc, '}')))
		errx(NBCAT_EXIT_FAILURE, "cannot format the report");
	while (end > doc && isspace((unsigned char)end[-1]))
		end--;
	fprintf(stderr, "%.*s,\n   \"warnings\": [", (int)(end - doc), doc);
	for (i = 0; i < nb->nwarnings; i++) {
		fputs(i ? ",\n      " : "\n      ", stderr);
		json_put_string(stderr, nb->warnings[i]);
		free(nb->warnings[i]);
	}
	fputs(nb->nwarnings ? "\n   ]\n}\n" : "]\n}\n", stderr);
	free(nb->warnings);
	free(doc);
}

static void stats_merge(struct stats *t, const struct stats *s)
{
	int i;

	t->size += s->size;
	t->bytes += s->bytes;
	t->chunks += s->chunks;
	t->hit_chunks += s->hit_chunks;
	t->partial_chunks += s->partial_chunks;
	t->miss_chunks += s->miss_chunks;
	t->unsup_chunks += s->unsup_chunks;
	t->hit_bytes += s->hit_bytes;
	t->partial_bytes += s->partial_bytes;
	t->miss_bytes += s->miss_bytes;
	t->unsup_bytes += s->unsup_bytes;
	t->missing += s->missing;
	t->missing_unknown |= s->missing_unknown;
	t->ra_on_miss |= s->ra_on_miss;
	for (i = 0; i < NR_LAT; i++)
		hist_merge(&t->lat[i], &s->lat[i]);
}

static void stats_reset(struct stats *st, const char *path)
{
	int i;

	st->path = path;
	st->mode = MODE_ERROR;
	st->size = st->bytes = st->chunks = 0;
	st->hit_chunks = st->partial_chunks = 0;
	st->miss_chunks = st->unsup_chunks = 0;
	st->hit_bytes = st->partial_bytes = 0;
	st->miss_bytes = st->unsup_bytes = 0;
	st->missing = st->ns = 0;
	st->missing_unknown = false;
	st->ra_on_miss = false;
	st->res = PC_RES_UNKNOWN;
	for (i = 0; i < NR_LAT; i++)
		hist_init(&st->lat[i]);
}

/* ------------------------------------------------------------------ */
/* one file */

static int read_input(struct nbcat *nb, struct input *in)
{
	struct rwin_slot *s;
	char *buf;
	int rc;

	if (!pc_reader_is_seekable(&in->rd)) {
		rc = rwin_next(&nb->win, &s);
		return rc ? rc : copy_stream(nb, in, s->buf);
	}
	if (!nb->cached_only)
		posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (nb->strategy != STRATEGY_BLOCKING && !nb->cached_only)
		return copy_window(nb, in);

	rc = rwin_next(&nb->win, &s);
	if (rc)
		return rc;
	buf = s->buf;
	if (nb->strategy == STRATEGY_BLOCKING)
		return copy_plain(nb, in, buf, MODE_BLOCKING);
	return copy_cached(nb, in, buf);
}

static void cat_file(struct nbcat *nb, const char *path)
{
	struct input in = { .path = path, .fd = -1 };
	struct stats *st = &nb->cur;
	bool is_stdin = !strcmp(path, "-");
	uint64_t start = pc_now_ns();
	off_t pos;
	int rc;

	stats_reset(st, path);
	if (is_stdin) {
		in.fd = STDIN_FILENO;
	} else {
		in.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in.fd < 0) {
			nb_warn(nb, "%s: %s", cli_name(path), strerror(errno));
			goto failed;
		}
	}
	rc = pc_reader_init(&in.rd, in.fd);
	if (rc) {
		nb_warn(nb, "%s: %s", path, strerror(-rc));
		goto failed;
	}
	st->size = pc_reader_get_size(&in.rd);

	/* cat's check: copying a file onto itself would never end */
	if (nb->out_is_reg && st->size &&
	    pc_reader_is_file(&in.rd, nb->out_dev, nb->out_ino)) {
		nb_warn(nb, "%s: input file is output file", path);
		goto failed;
	}
	if (is_stdin && pc_reader_is_seekable(&in.rd)) {
		/* continue where the shell (or a previous "-") left off */
		pos = lseek(in.fd, 0, SEEK_CUR);
		in.off = pos > 0 ? (uint64_t)pos : 0;
	}

	rc = read_input(nb, &in);
	missing_flush(nb, &in);
	if (is_stdin && pc_reader_is_seekable(&in.rd))
		lseek(in.fd, (off_t)in.off, SEEK_SET);
	if (rc) {
		nb_warn(nb, "%s: %s", path, strerror(-rc));
		goto failed;
	}
	goto done;

failed:
	st->mode = MODE_ERROR;
	nb->failed = true;
done:
	pc_reader_deinit(&in.rd);
	if (!is_stdin && in.fd >= 0)
		close(in.fd);
	st->ns = pc_now_ns() - start;
	report_add(nb, st, false);
	stats_merge(&nb->total, st);
	stats_reset(st, NULL);
	nb->nfiles++;
}

/* ------------------------------------------------------------------ */
/* options */

static void parse_columns(struct nbcat *nb, const char *list)
{
	const char *bad = NULL;
	int badlen = 0;

	switch (cli_parse_columns(list, infos, NR_COLS, nb->columns,
				  &nb->ncolumns, ARRAY_SIZE(nb->columns),
				  &bad, &badlen)) {
	case 0:
		return;
	case -EINVAL:
		errx(NBCAT_EXIT_FAILURE, "unknown column: '%.*s'", badlen,
		     bad);
	case -E2BIG:
		errx(NBCAT_EXIT_FAILURE, "too many columns: '%s'", list);
	default:
		errx(NBCAT_EXIT_FAILURE, "no columns: '%s'", list);
	}
}

static uint64_t parse_num(const char *arg, const char *what, bool size,
			  uint64_t min, uint64_t max)
{
	uint64_t v;
	int rc;

	rc = size ? strtosize(arg, &v) : strtou64_strict(arg, &v);
	if (rc || v < min || v > max)
		errx(NBCAT_EXIT_FAILURE, "invalid %s: '%s'", what, arg);
	return v;
}

static enum strategy parse_strategy(const char *arg)
{
	if (!strcmp(arg, "nowait"))
		return STRATEGY_NOWAIT;
	if (!strcmp(arg, "blocking"))
		return STRATEGY_BLOCKING;
	if (!strcmp(arg, "pool"))
		return STRATEGY_POOL;
	errx(NBCAT_EXIT_FAILURE, "invalid strategy: '%s'", arg);
}

/* --cached-only[=MODE]; also -c=MODE, which getopt hands over as "=MODE" */
static enum cached_only parse_cached_only(const char *arg)
{
	if (arg && *arg == '=')
		arg++;
	if (!arg || !strcmp(arg, "stop"))
		return CACHED_ONLY_STOP;
	if (!strcmp(arg, "skip"))
		return CACHED_ONLY_SKIP;
	errx(NBCAT_EXIT_FAILURE, "invalid cached-only mode: '%s'", arg);
}

/* The side files and columns named on the command line. */
struct nbcat_args {
	const char *missing;	/* --missing */
	const char *trace;	/* --trace */
	const char *report;	/* --report */
	const char *columns;	/* --output */
};

/* Options into @nb and @a; bad usage exits. Returns optind. */
static int parse_args(struct nbcat *nb, struct nbcat_args *a, int argc,
		      char **argv)
{
	enum {
		OPT_PREFETCH = CHAR_MAX + 1,
		OPT_RAW,
		OPT_BYTES,
	};
	static const struct option longopts[] = {
		{ "strategy",	 required_argument, NULL, 's' },
		{ "jobs",	 required_argument, NULL, 'j' },
		{ "chunk-size",	 required_argument, NULL, 'b' },
		{ "window",	 required_argument, NULL, 'w' },
		{ "cached-only", optional_argument, NULL, 'c' },
		{ "missing",	 required_argument, NULL, 'm' },
		{ "prefetch",	 no_argument,	    NULL, OPT_PREFETCH },
		{ "quiet",	 no_argument,	    NULL, 'q' },
		{ "json",	 no_argument,	    NULL, 'J' },
		{ "report",	 required_argument, NULL, 'r' },
		{ "output",	 required_argument, NULL, 'o' },
		{ "raw",	 no_argument,	    NULL, OPT_RAW },
		{ "bytes",	 no_argument,	    NULL, OPT_BYTES },
		{ "noheadings",	 no_argument,	    NULL, 'n' },
		{ "trace",	 required_argument, NULL, 't' },
		{ "progress",	 no_argument,	    NULL, 'p' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ "version",	 no_argument,	    NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	nb->strategy = STRATEGY_NOWAIT;
	nb->jobs = DEFAULT_JOBS;
	nb->window = DEFAULT_WINDOW;
	nb->chunk = DEFAULT_CHUNK;

	while ((c = getopt_long(argc, argv, "s:j:b:w:c::m:qJr:o:nt:phV",
				longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			nb->strategy = parse_strategy(optarg);
			break;
		case 'j':
			nb->jobs = (unsigned int)parse_num(optarg,
					"number of jobs", false, 1, MAX_JOBS);
			break;
		case 'b':
			nb->chunk = (size_t)parse_num(optarg, "chunk size",
					true, MIN_CHUNK, MAX_CHUNK);
			if (nb->chunk % 512)
				errx(NBCAT_EXIT_FAILURE,
				     "invalid chunk size: '%s'", optarg);
			break;
		case 'w':
			nb->window = (unsigned int)parse_num(optarg,
					"window size", false, 1, MAX_WINDOW);
			break;
		case 'c':
			nb->cached_only = parse_cached_only(optarg);
			break;
		case 'm':
			a->missing = optarg;
			break;
		case OPT_PREFETCH:
			nb->prefetch = true;
			break;
		case 'q':
			nb->quiet = true;
			break;
		case 'J':
			nb->json = true;
			break;
		case 'r':
			a->report = optarg;
			break;
		case 'o':
			a->columns = optarg;
			break;
		case OPT_RAW:
			nb->raw = true;
			break;
		case OPT_BYTES:
			nb->bytes = true;
			break;
		case 'n':
			nb->noheadings = true;
			break;
		case 't':
			a->trace = optarg;
			break;
		case 'p':
			nb->progress = true;
			break;
		case 'h':
			usage();
		case 'V':
			cli_print_version();
		default:
			try_help();
		}
	}

	if (nb->json && nb->raw) {
		warnx("--json and --raw are mutually exclusive");
		try_help();
	}
	if (nb->prefetch && nb->cached_only)
		errx(NBCAT_EXIT_FAILURE,
		     "--prefetch and --cached-only are mutually exclusive");
	if (nb->cached_only && nb->strategy != STRATEGY_NOWAIT)
		errx(NBCAT_EXIT_FAILURE,
		     "--cached-only works only with --strategy=nowait");

	return optind;
}

/* The report's columns: the defaults, or every one for JSON, or -o. */
static void set_columns(struct nbcat *nb, const char *list)
{
	int i;

	/* JSON is for scripts: every column unless asked otherwise */
	if (nb->json && !list) {
		for (i = 0; i < NR_COLS; i++)
			nb->columns[nb->ncolumns++] = i;
	} else {
		for (i = 0; i < (int)ARRAY_SIZE(default_columns); i++)
			nb->columns[nb->ncolumns++] = default_columns[i];
		if (nb->cached_only)
			nb->columns[nb->ncolumns++] = COL_MISSING;
		if (list)
			parse_columns(nb, list);
	}
}

/*
 * Open the side files (--missing, --trace, --report): never one of the
 * inputs (argv from @first on, or stdin), stdout, or each other.
 */
static void open_side_files(struct nbcat *nb, const struct nbcat_args *a,
			    int first, int argc, char **argv)
{
	struct guard guard = { 0 };
	int i;

	guard.ids = calloc((size_t)(argc - first) + 4, sizeof(*guard.ids));
	guard.what = calloc((size_t)(argc - first) + 4, sizeof(*guard.what));
	if (!guard.ids || !guard.what)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	guard_add_fd(&guard, STDOUT_FILENO, "standard output");
	if (first == argc)
		guard_add_fd(&guard, STDIN_FILENO, "an input file");
	for (i = first; i < argc; i++) {
		if (!strcmp(argv[i], "-"))
			guard_add_fd(&guard, STDIN_FILENO, "an input file");
		else if (!cli_file_id_path(argv[i], &guard.ids[guard.n]))
			guard.what[guard.n++] = "an input file";
	}
	if (a->missing)
		nb->missing_fp = open_output(&guard, "--missing", a->missing);
	if (a->trace)
		nb->trace_fp = open_output(&guard, "--trace", a->trace);
	if (a->report && !nb->quiet)
		nb->report_fp = open_output(&guard, "--report", a->report);
	free(guard.ids);
	free(guard.what);
}

/* What standard output is: a file to guard, a pipe to widen. */
static void inspect_stdout(struct nbcat *nb)
{
	struct stat st;

	if (fstat(STDOUT_FILENO, &st) < 0)
		err(NBCAT_EXIT_FAILURE, "standard output");
	if (S_ISREG(st.st_mode)) {
		nb->out_is_reg = true;
		nb->out_dev = st.st_dev;
		nb->out_ino = st.st_ino;
	} else if (S_ISFIFO(st.st_mode)) {
		/*
		 * A pipe holds 64 KiB by default: a chunk written into it
		 * takes several wake-ups of the reader. Let it hold a whole
		 * chunk (F_SETPIPE_SZ, 2.6.35; capped by
		 * /proc/sys/fs/pipe-max-size for users).
		 */
		grow_pipe(STDOUT_FILENO, nb->chunk);
	}
}

/* The pool, the reorder window and the counters, before the first file. */
static void setup_reading(struct nbcat *nb)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	int rc;

	nb->pagesize = pagesz > 0 ? (size_t)pagesz : 4096;
	rc = workpool_init(&nb->pool, nb->jobs, nb->window);
	if (rc)
		errx(NBCAT_EXIT_FAILURE, "cannot set up workers: %s",
		     strerror(-rc));
	rc = rwin_init(&nb->win, nb->window, nb->chunk);
	if (rc)
		errx(NBCAT_EXIT_FAILURE, "cannot allocate buffers: %s",
		     strerror(-rc));
	nb->nowait_ra = pc_nowait_reads_ahead();
	report_init(nb);
	nb->collect_warnings = nb->tb && nb->json && !nb->report_fp;
	stats_reset(&nb->total, NULL);
	stats_reset(&nb->cur, NULL);
}

int main(int argc, char **argv)
{
	static struct nbcat ctl;	/* large (histograms): not on the stack */
	struct nbcat *nb = &ctl;
	struct nbcat_args a = { 0 };
	int first, i;

	/* before anything is opened: no file may become fd 0, 1 or 2 */
	if (cli_sanitize_fds())
		return NBCAT_EXIT_FAILURE;	/* nowhere to say it */
	cli_close_stdout_at_exit(NBCAT_EXIT_FAILURE);

	first = parse_args(nb, &a, argc, argv);
	set_columns(nb, a.columns);
	open_side_files(nb, &a, first, argc, argv);
	inspect_stdout(nb);
	setup_reading(nb);

	nb->start_ns = nb->progress_ns = pc_now_ns();
	if (first == argc) {
		cat_file(nb, "-");
	} else {
		for (i = first; i < argc; i++)
			cat_file(nb, argv[i]);
	}
	nb->total.ns = pc_now_ns() - nb->start_ns;

	workpool_deinit(&nb->pool);
	rwin_deinit(&nb->win);
	if (nb->progress)
		progress_show(nb, pc_now_ns(), true);

	if (nb->total.ra_on_miss && !nb->quiet)
		nb_warn(nb, "note: this kernel starts readahead on a RWF_NOWAIT miss (Linux 6.12+), so chunks after a miss may count as hits that nbcat's own probe read in (READAHEAD_ON_MISS)");

	/* before the report, which may carry their warnings */
	close_output(nb, &nb->missing_fp, a.missing);
	close_output(nb, &nb->trace_fp, a.trace);
	if (nb->tb) {
		if (nb->json || nb->nfiles > 1)
			report_add(nb, &nb->total, true);
		report_print(nb);
		scols_unref_table(nb->tb);
	}
	close_output(nb, &nb->report_fp, a.report);

	if (nb->failed)
		return NBCAT_EXIT_FAILURE;
	if (nb->cached_only && (nb->total.missing || nb->total.missing_unknown))
		return NBCAT_EXIT_NOTCACHED;
	return NBCAT_EXIT_SUCCESS;
}
