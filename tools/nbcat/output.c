// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbcat output: standard output, the side files (--missing, --trace,
 * --report) kept apart from the inputs, warnings and the progress line.
 */
#include "nbcat.h"

/*
 * A warning about one file, or a side file: on stderr, or, when the JSON
 * report goes to stderr, kept for its "warnings" array, so that stderr
 * stays one JSON document (nbcat(1)).
 */
void nb_warn(struct nbcat *nb, const char *fmt, ...)
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
void out_write(const void *buf, size_t len)
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
 * standard output, standard error (its warnings would be overwritten by
 * the side file, or the report by them), the inputs, and the side files
 * opened before it.
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

void close_output(struct nbcat *nb, FILE **fp, const char *what)
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

void trace(struct nbcat *nb, const struct input *in, uint64_t off,
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
void missing_line(struct nbcat *nb, const struct input *in,
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

void missing_flush(struct nbcat *nb, struct input *in)
{
	if (in->mr_len)
		missing_line(nb, in, in->mr_off, &in->mr_len);
	in->mr_len = 0;
}

/* Record [off, off + len) as missing, merged with an adjacent range. */
void missing_add(struct nbcat *nb, struct input *in, uint64_t off,
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

void progress_show(struct nbcat *nb, uint64_t now, bool final)
{
	const struct stats *t = &nb->total, *c = &nb->cur;
	uint64_t bytes = t->bytes + c->bytes;
	uint64_t cached = t->hit_bytes + t->partial_bytes +
			  c->hit_bytes + c->partial_bytes;
	uint64_t classified = cached + t->miss_bytes + c->miss_bytes;
	double secs = (double)(now - nb->start_ns) / 1e9;
	char sbytes[HUMAN_LEN], srate[HUMAN_LEN], sratio[HUMAN_LEN];
	int len;

	size_to_human(sbytes, bytes);
	size_to_human(srate, secs > 0 ? (uint64_t)((double)bytes / secs) : 0);
	if (classified)
		ratio_to_human(sratio, cached, classified);
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

void progress_tick(struct nbcat *nb)
{
	uint64_t now;

	if (!nb->progress)
		return;
	now = pc_now_ns();
	if (now - nb->progress_ns >= PROGRESS_NS)
		progress_show(nb, now, false);
}

char *xstrdup_printf(const char *fmt, ...)
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

/*
 * Open the side files (--missing, --trace, --report): never one of the
 * inputs (argv from @first on, or stdin), stdout, stderr, or each other.
 */
void open_side_files(struct nbcat *nb, const struct nbcat_args *a,
		     int first, int argc, char **argv)
{
	struct guard guard = { 0 };
	int i;

	/* the inputs, stdin, stdout, stderr, three side files */
	guard.ids = calloc((size_t)(argc - first) + 6, sizeof(*guard.ids));
	guard.what = calloc((size_t)(argc - first) + 6, sizeof(*guard.what));
	if (!guard.ids || !guard.what)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	guard_add_fd(&guard, STDOUT_FILENO, "standard output");
	guard_add_fd(&guard, STDERR_FILENO, "standard error");
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
void inspect_stdout(struct nbcat *nb)
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
