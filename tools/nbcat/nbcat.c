// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbcat - concatenate files like cat(1), reading every chunk of a regular
 * file or block device with preadv2(RWF_NOWAIT) first, and report what
 * the page cache held. Misses are completed by worker threads while the
 * main thread probes ahead; output stays in file order through a bounded
 * reorder window. --cached-only never blocks and writes only cached data.
 */
#include "nbcat.h"

static void __attribute__((__noreturn__)) usage(void)
{
	FILE *out = stdout;

	fputs(USAGE_HEADER, out);
	fprintf(out, " %s [options] [<file>...]\n",
		program_invocation_short_name);

	fputs("\nConcatenate files to standard output. Each chunk of a regular file or\n"
	      "block device is first read with preadv2(RWF_NOWAIT); chunks that are not\n"
	      "in the page cache are completed by worker threads. A report of page-cache\n"
	      "hits and misses is written to standard error.\n", out);

	fputs("\n" USAGE_OPTIONS, out);
	fputs(" -s, --strategy <name>      nowait (default), blocking, pool or uring\n", out);
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
	fputs("     --noheadings           do not print report headings\n", out);
	fputs("     --trace <file>         write one line per chunk to <file>\n", out);
	fputs(" -p, --progress             show progress on standard error\n", out);
	fputs(" -u                         (ignored, as by cat)\n", out);
	fputs(" -h, --help                 " USAGE_HELP, out);
	fputs(" -V, --version              " USAGE_VERSION, out);

	col_print_help(out, "Available report columns (for --output)",
		       report_columns, NR_COLS);

	fprintf(out, "\nFor more details see %s(1).\n",
		program_invocation_short_name);
	exit(NBCAT_EXIT_SUCCESS);
}

static void __attribute__((__noreturn__)) try_help(void)
{
	cli_errtryhelp(NULL, NBCAT_EXIT_FAILURE);
}

/* Bad usage (a combination, an option nbcat lacks): the reason, "Try". */
static void __attribute__((__noreturn__, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
	try_help();
}

/*
 * GNU cat's short options (-A -b -e -E -n -s -t -T -u -v) that nbcat
 * does not do. A cat user who types one must get an error, never a file
 * written or an output silently different: -t was --trace and emptied
 * the file named after it. -u is accepted and ignored, as by cat; -s and
 * -b keep their argument (nbcat's --strategy and --chunk-size), so a
 * file name after them is an invalid value, whose error names cat's
 * meaning too.
 */
static const struct cat_option {
	int c;
	const char *meaning;	/* in GNU cat */
	const char *instead;	/* nbcat's nearest option, or NULL */
} cat_options[] = {
	{ 'A', "show all", NULL },
	{ 'e', "show ends and nonprinting", NULL },
	{ 'E', "show ends", NULL },
	{ 'n', "number lines", "--noheadings for a report without headings" },
	{ 't', "show tabs", "--trace FILE for the chunk trace" },
	{ 'T', "show tabs", "--trace FILE for the chunk trace" },
	{ 'v', "show nonprinting", NULL },
};

static void __attribute__((__noreturn__)) cat_option_error(int c)
{
	const struct cat_option *o = NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cat_options); i++)
		if (cat_options[i].c == c)
			o = &cat_options[i];
	if (o && o->instead)
		usage_error("-%c is cat's '%s', which nbcat does not do; use %s",
			    c, o->meaning, o->instead);
	usage_error("-%c is cat's '%s', which nbcat does not do", c,
		    o ? o->meaning : "?");
}

/* "; -b is --chunk-size, not cat's ..." after a bad value of -b or -s */
static const char *cat_hint(int c)
{
	switch (c) {
	case 'b':
		return "; -b is --chunk-size, not cat's 'number nonblank lines'";
	case 's':
		return "; -s is --strategy, not cat's 'squeeze blank lines'";
	default:
		return "";
	}
}

/* A number of @what in [@min, @max]; else exit, stating the rule. */
static uint64_t parse_num(const char *arg, const char *what, uint64_t min,
			  uint64_t max)
{
	uint64_t v;

	if (strtou64_strict(arg, &v) || v < min || v > max)
		errx(NBCAT_EXIT_FAILURE,
		     "invalid %s: '%s': must be between %" PRIu64 " and %" PRIu64,
		     what, arg, min, max);
	return v;
}

static size_t parse_chunk(const char *arg, int c)
{
	uint64_t v;

	if (strtosize(arg, &v) || v < MIN_CHUNK || v > MAX_CHUNK ||
	    v % CHUNK_ALIGN)
		errx(NBCAT_EXIT_FAILURE,
		     "invalid chunk size: '%s': must be a multiple of %d between 4K and 64M%s",
		     arg, CHUNK_ALIGN, cat_hint(c));
	return (size_t)v;
}

/*
 * The strategies by name. uring is known even without liburing, so that
 * asking for it says why it cannot be had (uring_setup()).
 */
static const char *const strategy_names[] = {
	[STRATEGY_NOWAIT]   = "nowait",
	[STRATEGY_BLOCKING] = "blocking",
	[STRATEGY_POOL]     = "pool",
	[STRATEGY_URING]    = "uring",
};

static enum strategy parse_strategy(const char *arg, int c)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(strategy_names); i++)
		if (!strcmp(arg, strategy_names[i]))
			return (enum strategy)i;
	errx(NBCAT_EXIT_FAILURE,
	     "invalid strategy: '%s': must be nowait, blocking, pool or uring%s",
	     arg, cat_hint(c));
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
	errx(NBCAT_EXIT_FAILURE,
	     "invalid cached-only mode: '%s': must be stop or skip", arg);
}

/*
 * The reorder window holds up to window x chunk size bytes (each slot a
 * chunk buffer): at most MAX_BUFFERED. A default window shrinks to fit
 * a large chunk size; a window asked for that does not fit is refused.
 */
static void check_buffered(struct nbcat *nb, bool window_set)
{
	char chunk[HUMAN_LEN], cap[HUMAN_LEN];

	if ((uint64_t)nb->window * nb->chunk <= MAX_BUFFERED)
		return;
	if (!window_set) {
		nb->window = (unsigned int)(MAX_BUFFERED / nb->chunk);
		return;
	}
	size_to_human(chunk, nb->chunk);
	size_to_human(cap, MAX_BUFFERED);
	usage_error("--window %u with --chunk-size %s: window x chunk size must be at most %s (here at most %" PRIu64 " chunks)",
		    nb->window, chunk, cap, MAX_BUFFERED / nb->chunk);
}

/* Long-only options, numbered past every char. */
enum {
	OPT_PREFETCH = CHAR_MAX + 1,
	OPT_RAW,
	OPT_BYTES,
	OPT_NOHEADINGS,
	OPT_TRACE,
	OPT_STRATEGY,
	OPT_CHUNK_SIZE,
};

/*
 * How to read: strategy, workers, chunks, the window, --cached-only.
 * False if @c is not one of these.
 */
static bool read_option(struct nbcat *nb, int c, const char *arg,
			bool *window_set)
{
	switch (c) {
	case 's':
	case OPT_STRATEGY:
		nb->strategy = parse_strategy(arg, c);
		return true;
	case 'j':
		nb->jobs = (unsigned int)parse_num(arg, "number of jobs", 1,
						   MAX_JOBS);
		return true;
	case 'b':
	case OPT_CHUNK_SIZE:
		nb->chunk = parse_chunk(arg, c);
		return true;
	case 'w':
		nb->window = (unsigned int)parse_num(arg, "window size", 1,
						     MAX_WINDOW);
		*window_set = true;
		return true;
	case 'c':
		nb->cached_only = parse_cached_only(arg);
		return true;
	case OPT_PREFETCH:
		nb->prefetch = true;
		return true;
	}
	return false;
}

/*
 * What to tell: the report, its format, the side files, progress.
 * False if @c is not one of these.
 */
static bool report_option(struct nbcat *nb, struct nbcat_args *a, int c,
			  const char *arg)
{
	switch (c) {
	case 'm':
		a->missing = arg;
		return true;
	case 'q':
		nb->quiet = true;
		return true;
	case 'J':
		nb->json = true;
		return true;
	case 'r':
		a->report = arg;
		return true;
	case 'o':
		a->columns = arg;
		return true;
	case OPT_RAW:
		nb->raw = true;
		return true;
	case OPT_BYTES:
		nb->bytes = true;
		return true;
	case OPT_NOHEADINGS:
		nb->noheadings = true;
		return true;
	case OPT_TRACE:
		a->trace = arg;
		return true;
	case 'p':
		nb->progress = true;
		return true;
	}
	return false;
}

/* The combinations, once every option is known; bad usage exits. */
static void check_options(struct nbcat *nb, bool window_set)
{
	if (nb->json && nb->raw)
		usage_error("--json and --raw are mutually exclusive");
	if (nb->prefetch && nb->cached_only)
		usage_error("--prefetch and --cached-only are mutually exclusive");
	if (nb->cached_only && nb->strategy != STRATEGY_NOWAIT)
		usage_error("--cached-only and --strategy=%s are mutually exclusive",
			    strategy_names[nb->strategy]);
	/* a uring miss is known only once its read is under way */
	if (nb->prefetch && nb->strategy == STRATEGY_URING)
		usage_error("--prefetch and --strategy=uring are mutually exclusive");
	check_buffered(nb, window_set);
}

/* Options into @nb and @a; bad usage exits. Returns optind. */
static int parse_args(struct nbcat *nb, struct nbcat_args *a, int argc,
		      char **argv)
{
	static const struct option longopts[] = {
		{ "strategy",	 required_argument, NULL, OPT_STRATEGY },
		{ "jobs",	 required_argument, NULL, 'j' },
		{ "chunk-size",	 required_argument, NULL, OPT_CHUNK_SIZE },
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
		{ "noheadings",	 no_argument,	    NULL, OPT_NOHEADINGS },
		{ "trace",	 required_argument, NULL, OPT_TRACE },
		{ "progress",	 no_argument,	    NULL, 'p' },
		{ "help",	 no_argument,	    NULL, 'h' },
		{ "version",	 no_argument,	    NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	bool window_set = false;
	int c;

	nb->strategy = STRATEGY_NOWAIT;
	nb->jobs = DEFAULT_JOBS;
	nb->window = DEFAULT_WINDOW;
	nb->chunk = DEFAULT_CHUNK;

	/* getopt's own messages name argv[0]: "nbcat", not "./nbcat" */
	argv[0] = program_invocation_short_name;
	while ((c = getopt_long(argc, argv, "s:j:b:w:c::m:qJr:o:phVuAeEntTv",
				longopts, NULL)) != -1) {
		if (read_option(nb, c, optarg, &window_set) ||
		    report_option(nb, a, c, optarg))
			continue;
		switch (c) {
		case 'u':
			break;	/* cat's "unbuffered": nbcat writes at once */
		case 'A': case 'e': case 'E': case 'n': case 't': case 'T':
		case 'v':
			cat_option_error(c);
		case 'h':
			usage();
		case 'V':
			cli_print_version();
		default:
			try_help();
		}
	}
	check_options(nb, window_set);
	return optind;
}

/* The pool, the reorder window and the counters, before the first file. */
static void setup_reading(struct nbcat *nb)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	int rc;

	nb->pagesize = pagesz > 0 ? (size_t)pagesz : 4096;
	rc = wp_pool_init(&nb->pool, nb->jobs, nb->window);
	if (rc)
		errx(NBCAT_EXIT_FAILURE, "cannot set up workers: %s",
		     strerror(-rc));
	rc = wp_window_init(&nb->win, nb->window, nb->chunk);
	if (rc)
		errx(NBCAT_EXIT_FAILURE, "cannot allocate buffers: %s",
		     strerror(-rc));
	/* uring reads nothing with RWF_NOWAIT: no probe of ours reads ahead */
	nb->nowait_ra = nb->strategy != STRATEGY_URING &&
			pc_nowait_reads_ahead();
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

	setlocale(LC_ALL, "");	/* file names in the table, as lsblk */
	/* before anything is opened: no file may become fd 0, 1 or 2 */
	if (cli_sanitize_fds())
		return NBCAT_EXIT_FAILURE;	/* nowhere to say it */
	cli_close_stdout_at_exit(NBCAT_EXIT_FAILURE);

	first = parse_args(nb, &a, argc, argv);
	set_columns(nb, a.columns);
	/* before a side file is truncated: a refusal changes nothing */
	if (nb->strategy == STRATEGY_URING)
		uring_setup(nb);
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

	wp_pool_deinit(&nb->pool);
	uring_teardown(nb);
	wp_window_deinit(&nb->win);
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
