// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl cache: the page cache of loop devices and their backing files.
 */
#include "loopctl.h"

enum {
	CCOL_NAME,
	CCOL_DIO,
	CCOL_SIZE,
	CCOL_CACHED,
	CCOL_BACK_FILE,
	CCOL_BACK_SIZE,
	CCOL_BACK_CACHED,
	NR_CACHE_COLS,
};

static const struct col_info cache_cols[NR_CACHE_COLS] = {
	[CCOL_NAME]	   = { "NAME", 0.1, 0, SCOLS_JSON_STRING,
			       "loop device name" },
	[CCOL_DIO]	   = { "DIO", 3, SCOLS_FL_RIGHT,
			       SCOLS_JSON_BOOLEAN_OPTIONAL,
			       "direct I/O in effect: on, off, unknown (JSON: null)" },
	[CCOL_SIZE]	   = { "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			       "device size" },
	[CCOL_CACHED]	   = { "CACHED", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			       "device data in the page cache" },
	[CCOL_BACK_FILE]   = { "BACK-FILE", 0.3, SCOLS_FL_NOEXTREMES,
			       SCOLS_JSON_STRING, "backing file" },
	[CCOL_BACK_SIZE]   = { "BACK-SIZE", 5, SCOLS_FL_RIGHT,
			       SCOLS_JSON_NUMBER, "backing file size" },
	[CCOL_BACK_CACHED] = { "BACK-CACHED", 5, SCOLS_FL_RIGHT,
			       SCOLS_JSON_NUMBER,
			       "backing file data in the page cache" },
};

static void __attribute__((__noreturn__)) usage_cache(void)
{
	fputs(USAGE_HEADER
	      " loopctl cache [options] [<device>...]\n"
	      "\n"
	      "Show how much of each loop device and of its backing file is in the page\n"
	      "cache (the double cache that direct I/O avoids): the given devices, or\n"
	      "all bound ones.\n"
	      "\n"
	      USAGE_OPTIONS
	      " -b, --bytes               print sizes in bytes\n"
	      " -J, --json                use JSON output format\n"
	      "     --raw                 use raw output format\n"
	      " -n, --noheadings          do not print headings\n"
	      " -O, --output <list>       the columns to show (+<list> adds to the\n"
	      "                             default ones)\n"
	      " -h, --help                " USAGE_HELP, stdout);
	print_columns_help(cache_cols, NR_CACHE_COLS);
	exit(LOOPCTL_EXIT_OK);
}

/* Options into @o, whose columns are all of them; bad usage exits. */
static void parse_cache(int argc, char **argv, struct output *o)
{
	static const struct option longopts[] = {
		{ "bytes",      no_argument,       NULL, 'b' },
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, OPT_RAW },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'O' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "bJnO:h", longopts, NULL)) != -1) {
		if (output_option(o, c, optarg, "cache"))
			continue;
		switch (c) {
		case 'b':
			o->bytes = true;
			break;
		case 'h':
			usage_cache();
		default:
			errtryhelp("cache");
		}
	}
}

/* The line of the device of @lc, whose page cache is @cc. */
static void cache_line(struct libscols_table *tb, const struct output *o,
		       struct loopdev_ctx *lc, const struct loopdev_cache *cc)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	size_t k;

	if (!ln)
		err(LOOPCTL_EXIT_FAILURE, "cannot create a table line");
	for (k = 0; k < o->ncols; k++) {
		switch (o->cols[k]) {
		case CCOL_NAME:
			set_cell(ln, k, "%s", loopdev_get_path(lc));
			break;
		case CCOL_DIO:
			set_served(o, ln, k,
				   loopdev_dio_served(lc, NULL));
			break;
		case CCOL_SIZE:
			set_size(o, ln, k, cc->dev_size);
			break;
		case CCOL_CACHED:
			set_size(o, ln, k, cc->dev_cached);
			break;
		case CCOL_BACK_FILE:
			set_name(o, ln, k, loopdev_get_state(lc)->back_file);
			break;
		case CCOL_BACK_SIZE:
			if (cc->back_known)
				set_size(o, ln, k, cc->back_size);
			break;
		case CCOL_BACK_CACHED:
			if (cc->back_known)
				set_size(o, ln, k, cc->back_cached);
			break;
		}
	}
}

/* One device of the list: its line, or why it has none. */
static void cache_device(struct libscols_table *tb, const struct output *o,
			 struct loopdev_ctx *lc)
{
	struct loopdev_cache cc;
	struct request req;
	int rc;

	rc = check_access(loopdev_get_path(lc), R_OK,
			  "reading a loop device's cache");
	if (rc) {
		set_exit(rc);
		return;
	}
	rc = loopdev_cache(lc, &cc);
	if (rc) {
		set_exit(report(loopdev_get_path(lc), rc, "cache"));
		return;
	}
	request_apply(lc, &req);	/* for the DIO column */
	cache_line(tb, o, lc, &cc);
}

int cmd_cache(int argc, char **argv)
{
	struct output o = { .infos = cache_cols, .ninfos = NR_CACHE_COLS };
	struct libscols_table *tb;
	struct loopdev_iter it;
	struct loopdev_ctx lc;
	size_t k;

	for (k = 0; k < NR_CACHE_COLS; k++)
		o.cols[o.ncols++] = (int)k;
	parse_cache(argc, argv, &o);
	tb = new_table(&o, "loopcache", "cache");
	start_devices(&it, argc - optind, argv + optind);
	while (next_device(&it, &lc)) {
		cache_device(tb, &o, &lc);
		loopdev_deinit(&lc);
	}
	print_table(tb, &o);
	loopdev_iter_deinit(&it);
	return exit_status;
}
