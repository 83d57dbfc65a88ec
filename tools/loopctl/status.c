// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * loopctl status (list): bound devices, direct I/O requested against in
 * effect, and the loop/stat counters.
 */
#include "loopctl.h"

enum {
	COL_NAME,
	COL_BACK_FILE,
	COL_BACK_INO,
	COL_BACK_MAJMIN,
	COL_MAJMIN,
	COL_OFFSET,
	COL_SIZELIMIT,
	COL_SIZE,
	COL_LOG_SEC,
	COL_RO,
	COL_AUTOCLEAR,
	COL_PARTSCAN,
	COL_DIO,
	COL_DIO_REQ,
	COL_DIO_WHY,
	COL_STAT,	/* LOOPDEV_NR_STATS columns from loop/stat */
	NR_STATUS_COLS = COL_STAT + LOOPDEV_NR_STATS,
};

static const struct col_info status_cols[NR_STATUS_COLS] = {
	[COL_NAME]	  = { "NAME", 0.1, 0, SCOLS_JSON_STRING,
			      "loop device name" },
	[COL_BACK_FILE]	  = { "BACK-FILE", 0.3, SCOLS_FL_NOEXTREMES,
			      SCOLS_JSON_STRING, "backing file" },
	[COL_BACK_INO]	  = { "BACK-INO", 4, SCOLS_FL_RIGHT,
			      SCOLS_JSON_NUMBER, "backing file inode number" },
	[COL_BACK_MAJMIN] = { "BACK-MAJ:MIN", 6, 0, SCOLS_JSON_STRING,
			      "backing file device number" },
	[COL_MAJMIN]	  = { "MAJ:MIN", 3, 0, SCOLS_JSON_STRING,
			      "loop device number" },
	[COL_OFFSET]	  = { "OFFSET", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			      "offset from the beginning, in bytes" },
	[COL_SIZELIMIT]	  = { "SIZELIMIT", 5, SCOLS_FL_RIGHT,
			      SCOLS_JSON_NUMBER,
			      "size limit of the file in bytes (0: none)" },
	[COL_SIZE]	  = { "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			      "device size in bytes" },
	[COL_LOG_SEC]	  = { "LOG-SEC", 4, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			      "logical sector size in bytes" },
	[COL_RO]	  = { "RO", 1, SCOLS_FL_RIGHT, SCOLS_JSON_BOOLEAN,
			      "read-only device" },
	[COL_AUTOCLEAR]	  = { "AUTOCLEAR", 1, SCOLS_FL_RIGHT,
			      SCOLS_JSON_BOOLEAN, "autoclear flag set" },
	[COL_PARTSCAN]	  = { "PARTSCAN", 1, SCOLS_FL_RIGHT,
			      SCOLS_JSON_BOOLEAN, "partition scan flag set" },
	[COL_DIO]	  = { "DIO", 3, SCOLS_FL_RIGHT,
			      SCOLS_JSON_BOOLEAN_OPTIONAL,
			      "direct I/O in effect: on, off, unknown (JSON: null)" },
	[COL_DIO_REQ]	  = { "DIO-REQ", 4, 0, SCOLS_JSON_STRING,
			      "direct I/O requested: on, auto, off (empty: unknown)" },
	[COL_DIO_WHY]	  = { "DIO-WHY", 0.3, SCOLS_FL_TRUNC,
			      SCOLS_JSON_STRING, "why direct I/O is off or unknown" },
	/* the loop/stat fields, in the kernel's order */
#define STAT_COL(id, name, help) \
	[COL_STAT + LOOPDEV_STAT_##id] = { name, 5, SCOLS_FL_RIGHT, \
					   SCOLS_JSON_NUMBER, help }
	STAT_COL(DIO_READ_REQS, "DIO-READ-REQS",
		 "read requests completed with direct I/O"),
	STAT_COL(DIO_READ_BYTES, "DIO-READ-BYTES",
		 "bytes read with direct I/O"),
	STAT_COL(DIO_WRITE_REQS, "DIO-WRITE-REQS",
		 "write requests completed with direct I/O"),
	STAT_COL(DIO_WRITE_BYTES, "DIO-WRITE-BYTES",
		 "bytes written with direct I/O"),
	STAT_COL(BUF_READ_REQS, "BUF-READ-REQS",
		 "read requests completed buffered"),
	STAT_COL(BUF_READ_BYTES, "BUF-READ-BYTES",
		 "bytes read buffered"),
	STAT_COL(BUF_WRITE_REQS, "BUF-WRITE-REQS",
		 "write requests completed buffered"),
	STAT_COL(BUF_WRITE_BYTES, "BUF-WRITE-BYTES",
		 "bytes written buffered"),
	STAT_COL(FLUSH_REQS, "FLUSH-REQS",
		 "flush requests completed"),
	STAT_COL(DISCARD_REQS, "DISCARD-REQS",
		 "discard and write-zeroes requests"),
	STAT_COL(DISCARD_BYTES, "DISCARD-BYTES",
		 "bytes discarded or zeroed"),
	STAT_COL(ERRORS, "ERRORS",
		 "requests completed with an error"),
	STAT_COL(SHORT_IO, "SHORT-IO",
		 "short reads or writes of the backing file"),
	STAT_COL(QUEUED, "QUEUED",
		 "requests queued to the workers"),
	STAT_COL(MAX_BACKLOG, "MAX-BACKLOG",
		 "most requests seen waiting for the workers"),
#undef STAT_COL
};

static void __attribute__((__noreturn__)) usage_status(void)
{
	fputs(USAGE_HEADER
	      " loopctl status [options] [<device>...]\n"
	      " loopctl list [options] [<device>...]\n"
	      "\n"
	      "Show bound loop devices: the given ones, or all of them.\n"
	      "\n"
	      USAGE_OPTIONS
	      " -J, --json                use JSON output format\n"
	      "     --raw                 use raw output format\n"
	      " -n, --noheadings          do not print headings\n"
	      " -O, --output <list>       the columns to show (+<list> adds to the\n"
	      "                             default ones)\n"
	      "     --output-all          show all columns\n"
	      " -s, --stats               add the loop I/O statistics columns (kernels\n"
	      "                             with the series' loop/stat file)\n"
	      " -h, --help                " USAGE_HELP, stdout);
	print_columns_help(status_cols, NR_STATUS_COLS);
	exit(LOOPCTL_EXIT_OK);
}

/* Direct I/O as a line tells it, gathered once for its cells. */
struct dio_facts {
	struct request req;		/* what was asked for */
	enum loopdev_served served;	/* what the backing file is served */
	char why[512];			/* DIO-WHY; empty: nothing to say */
};

static void gather_dio(struct loopdev_ctx *lc, struct dio_facts *f)
{
	const struct loopdev_state *s = loopdev_get_state(lc);
	enum loopdev_served_why served_why;
	struct loopdev_dio d;

	request_apply(lc, &f->req);
	f->served = loopdev_dio_served(lc, &served_why);
	f->why[0] = '\0';
	if (f->served == LOOPDEV_SERVED_UNKNOWN)
		snprintf(f->why, sizeof(f->why), "%s",
			 served_reason(served_why, true));
	else if (!s->dio) {
		if (loopdev_dio_for_state(lc, &d) == 0 &&
		    !loopdev_dio_possible(&d))
			short_reasons(&d, f->why, sizeof(f->why));
		else if (f->req.known && f->req.dio == LOOPDEV_DIO_OFF)
			snprintf(f->why, sizeof(f->why), "not requested");
	}
}

/* BACK-INO or BACK-MAJ:MIN: a stat of the backing file, only if asked. */
static void set_backing_id(struct libscols_line *ln, size_t i, int col,
			   struct loopdev_ctx *lc)
{
	dev_t back_dev;
	ino_t back_ino;

	if (loopdev_backing_id(lc, &back_dev, &back_ino))
		return;
	if (col == COL_BACK_INO)
		set_cell(ln, i, "%ju", (uintmax_t)back_ino);
	else
		set_cell(ln, i, "%u:%u", major(back_dev), minor(back_dev));
}

/* Cell @i of @ln, column o->cols[@i], for the device of @lc. */
static void status_cell(struct libscols_line *ln, size_t i,
			const struct output *o, struct loopdev_ctx *lc,
			const struct dio_facts *f)
{
	const struct loopdev_state *s = loopdev_get_state(lc);
	struct stat st;

	switch (o->cols[i]) {
	case COL_NAME:
		set_cell(ln, i, "%s", loopdev_get_path(lc));
		break;
	case COL_BACK_FILE:
		set_name(o, ln, i, s->back_file);
		break;
	case COL_BACK_INO:
	case COL_BACK_MAJMIN:
		set_backing_id(ln, i, o->cols[i], lc);
		break;
	case COL_MAJMIN:
		if (!stat(loopdev_get_path(lc), &st))
			set_cell(ln, i, "%u:%u", major(st.st_rdev),
				 minor(st.st_rdev));
		break;
	case COL_OFFSET:
		set_cell(ln, i, "%" PRIu64, s->offset);
		break;
	case COL_SIZELIMIT:
		set_cell(ln, i, "%" PRIu64, s->sizelimit);
		break;
	case COL_SIZE:
		set_cell(ln, i, "%" PRIu64, s->size);
		break;
	case COL_LOG_SEC:
		set_cell(ln, i, "%u", s->sector_size);
		break;
	case COL_RO:
		set_bool(ln, i, s->ro);
		break;
	case COL_AUTOCLEAR:
		set_bool(ln, i, s->autoclear);
		break;
	case COL_PARTSCAN:
		set_bool(ln, i, s->partscan);
		break;
	case COL_DIO:
		set_served(o, ln, i, f->served);
		break;
	case COL_DIO_REQ:
		if (f->req.known)
			set_cell(ln, i, "%s", dio_word(f->req.dio));
		break;
	case COL_DIO_WHY:
		if (f->why[0])
			set_cell(ln, i, "%s", f->why);
		break;
	default:	/* a loop/stat field; empty without the file */
		if (s->stat.present)
			set_cell(ln, i, "%" PRIu64,
				 s->stat.v[o->cols[i] - COL_STAT]);
		break;
	}
}

static void status_line(struct libscols_table *tb, const struct output *o,
			struct loopdev_ctx *lc)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	struct dio_facts f;
	size_t i;

	if (!ln)
		err(LOOPCTL_EXIT_FAILURE, "cannot create a table line");
	gather_dio(lc, &f);
	for (i = 0; i < o->ncols; i++)
		status_cell(ln, i, o, lc, &f);
}

/* Options into @o, whose columns are the defaults; bad usage exits. */
static void parse_status(int argc, char **argv, struct output *o)
{
	static const struct option longopts[] = {
		{ "json",       no_argument,       NULL, 'J' },
		{ "raw",        no_argument,       NULL, OPT_RAW },
		{ "noheadings", no_argument,       NULL, 'n' },
		{ "output",     required_argument, NULL, 'O' },
		{ "output-all", no_argument,       NULL, OPT_OUTPUT_ALL },
		{ "stats",      no_argument,       NULL, 's' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const int stats[] = {
		COL_STAT + LOOPDEV_STAT_DIO_READ_BYTES,
		COL_STAT + LOOPDEV_STAT_DIO_WRITE_BYTES,
		COL_STAT + LOOPDEV_STAT_BUF_READ_BYTES,
		COL_STAT + LOOPDEV_STAT_BUF_WRITE_BYTES,
		COL_STAT + LOOPDEV_STAT_ERRORS,
	};
	int c;
	size_t k;

	while ((c = getopt_long(argc, argv, "JnO:sh", longopts, NULL)) != -1) {
		if (output_option(o, c, optarg, cmd_name))
			continue;
		switch (c) {
		case 's':
			for (k = 0; k < ARRAY_SIZE(stats); k++)
				add_column(o, stats[k]);
			break;
		case OPT_OUTPUT_ALL:
			for (o->ncols = 0; o->ncols < NR_STATUS_COLS;
			     o->ncols++)
				o->cols[o->ncols] = (int)o->ncols;
			break;
		case 'h':
			usage_status();
		default:
			errtryhelp(cmd_name);
		}
	}
}

/*
 * One device of the list: its line, or why it has none. A device not
 * bound is no error when it was not named.
 */
static void status_device(struct libscols_table *tb, const struct output *o,
			  const struct loopdev_iter *it,
			  struct loopdev_ctx *lc)
{
	const char *path = loopdev_get_path(lc);
	int rc;

	/*
	 * The inode of the backing file, when we may open the device; with
	 * no permission or no node, loopdev_read_state() asks sysfs alone.
	 */
	rc = loopdev_open(lc, O_RDONLY);
	if (rc == -ESTALE) {
		set_exit(report(path, rc, "status"));
		return;
	}
	rc = loopdev_read_state(lc);
	if (rc) {
		set_exit(report(path, rc, "status"));
	} else if (!loopdev_get_state(lc)->bound) {
		if (loopdev_iter_by_name(it)) {
			warnx("%s: not bound to a file", path);
			set_exit(LOOPCTL_EXIT_NOT_LOOP);
		}
	} else {
		status_line(tb, o, lc);
	}
}

int cmd_status(int argc, char **argv)
{
	static const int defaults[] = {
		COL_NAME, COL_BACK_FILE, COL_OFFSET, COL_SIZELIMIT,
		COL_LOG_SEC, COL_RO, COL_AUTOCLEAR, COL_PARTSCAN, COL_DIO,
		COL_DIO_REQ, COL_DIO_WHY,
	};
	struct output o = { .infos = status_cols, .ninfos = NR_STATUS_COLS };
	struct libscols_table *tb;
	struct loopdev_iter it;
	struct loopdev_ctx lc;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(defaults); k++)
		o.cols[o.ncols++] = defaults[k];
	parse_status(argc, argv, &o);
	tb = new_table(&o, "loopdevices", cmd_name);
	start_devices(&it, argc - optind, argv + optind);
	while (next_device(&it, &lc)) {
		status_device(tb, &o, &it, &lc);
		loopdev_deinit(&lc);
	}
	print_table(tb, &o);
	loopdev_iter_deinit(&it);
	return exit_status;
}
