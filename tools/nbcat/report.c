// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nbcat report: per-file and total counters, the columns, the table and
 * its JSON form, human or exact numbers.
 */
#include "nbcat.h"

static const char *const mode_names[] = {
	[MODE_NOWAIT]      = "nowait",
	[MODE_UNSUPPORTED] = "unsupported",
	[MODE_STREAM]      = "stream",
	[MODE_BLOCKING]    = "blocking",
	[MODE_POOL]        = "pool",
	[MODE_URING]       = "uring",
	[MODE_UNKNOWN]     = "unknown",
	[MODE_ERROR]       = "error",
};

/* numbers: right aligned, JSON numbers */
#define NUM(name, help) \
	{ name, 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, help }

const struct col_info report_columns[NR_COLS] = {
	[COL_FILE] = { "FILE", 0.3, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING,
		"input file" },
	[COL_TYPE] = { "TYPE", 5, 0, SCOLS_JSON_STRING,
		"row type: file or total" },
	[COL_MODE] = { "MODE", 8, 0, SCOLS_JSON_STRING,
		"nowait, unsupported, unknown, stream, blocking, pool, uring or error" },
	[COL_SIZE] = NUM("SIZE", "file size when opened"),
	[COL_BYTES] = NUM("BYTES", "bytes written to standard output"),
	[COL_CHUNKS] = NUM("CHUNKS", "chunks read"),
	[COL_HIT_CHUNKS] = NUM("HIT_CHUNKS", "chunks wholly in the page cache"),
	[COL_PARTIAL_CHUNKS] =
		NUM("PARTIAL_CHUNKS", "chunks with some, not all, pages cached"),
	[COL_MISS_CHUNKS] = NUM("MISS_CHUNKS", "chunks with no page cached"),
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
		NUM("NOWAIT_P50", "median latency of RWF_NOWAIT reads that returned data"),
	[COL_NOWAIT_P99] = NUM("NOWAIT_P99", "99th percentile of the same"),
	[COL_NOWAIT_MAX] = NUM("NOWAIT_MAX", "slowest of the same"),
	[COL_EAGAIN_P50] =
		NUM("EAGAIN_P50", "median latency of RWF_NOWAIT reads that found nothing"),
	[COL_EAGAIN_P99] = NUM("EAGAIN_P99", "99th percentile of the same"),
	[COL_EAGAIN_MAX] = NUM("EAGAIN_MAX", "slowest of the same"),
	[COL_FALLBACK_P50] =
		NUM("FALLBACK_P50", "median latency of blocking reads"),
	[COL_FALLBACK_P99] =
		NUM("FALLBACK_P99", "99th percentile of the same"),
	[COL_FALLBACK_MAX] = NUM("FALLBACK_MAX", "slowest of the same"),
	[COL_TIME] = NUM("TIME", "wall-clock time spent"),
	[COL_BPS] = NUM("BPS", "throughput: bytes written per second"),
	[COL_MISSING] = NUM("MISSING", "bytes not written by --cached-only"),
	[COL_READAHEAD_ON_MISS] = { "READAHEAD_ON_MISS", 5, 0,
		SCOLS_JSON_BOOLEAN,
		"our RWF_NOWAIT misses started readahead (kernel 6.12+)" },
	[COL_RESIDENCY] = { "RESIDENCY", 9, 0, SCOLS_JSON_STRING,
		"--cached-only: cachestat, mincore, probe or none" },
};

/*
 * Durations: JSON keys with their unit (nanoseconds), and the names the
 * columns had before they lost it, still accepted by --output.
 */
static const struct {
	int col;
	const char *json;	/* the JSON key, upper case */
	const char *old;	/* the former column name */
} unit_names[] = {
	{ COL_NOWAIT_P50,   "NOWAIT_P50_NS",   "NOWAIT_P50_NS" },
	{ COL_NOWAIT_P99,   "NOWAIT_P99_NS",   "NOWAIT_P99_NS" },
	{ COL_NOWAIT_MAX,   "NOWAIT_MAX_NS",   "NOWAIT_MAX_NS" },
	{ COL_EAGAIN_P50,   "EAGAIN_P50_NS",   "EAGAIN_P50_NS" },
	{ COL_EAGAIN_P99,   "EAGAIN_P99_NS",   "EAGAIN_P99_NS" },
	{ COL_EAGAIN_MAX,   "EAGAIN_MAX_NS",   "EAGAIN_MAX_NS" },
	{ COL_FALLBACK_P50, "FALLBACK_P50_NS", "FALLBACK_P50_NS" },
	{ COL_FALLBACK_P99, "FALLBACK_P99_NS", "FALLBACK_P99_NS" },
	{ COL_FALLBACK_MAX, "FALLBACK_MAX_NS", "FALLBACK_MAX_NS" },
	{ COL_TIME,	    "TIME_NS",	       "SECONDS" },
};

static const int default_columns[] = {
	COL_FILE, COL_MODE, COL_BYTES, COL_HIT_CHUNKS, COL_PARTIAL_CHUNKS,
	COL_MISS_CHUNKS, COL_HIT_RATIO, COL_NOWAIT_P50, COL_EAGAIN_P50,
	COL_FALLBACK_P50, COL_BPS,
};

static char *fmt_u64(uint64_t v)
{
	return xstrdup_printf("%" PRIu64, v);
}

/*
 * Report numbers, one vocabulary (nbcat(1) Report): exact in JSON and
 * with --bytes (bytes, nanoseconds, bytes per second, ratios from 0 to
 * 1), else as people read them: 64M, 8.4us, 2.2G/s, 99.5%. Column names
 * carry no unit, since the table's unit varies; a JSON key does when
 * its number's unit is not bytes (see json_keys[]).
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

/* rounded down: a ratio below 1 never shows as 100% (or 1.000000) */
static char *fmt_ratio(const struct nbcat *nb, uint64_t part, uint64_t whole)
{
	char buf[HUMAN_LEN];

	if (!whole)
		return NULL;
	return strdup(exact(nb) ? ratio_to_exact(buf, part, whole) :
				  ratio_to_human(buf, part, whole));
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

/* The counters: chunks as they are, bytes as sizes. */
static char *counter_data(const struct nbcat *nb, const struct stats *st,
			  int col)
{
	switch (col) {
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
	}
	return NULL;
}

/* The latency columns: a class of reads, a percentile (100: slowest). */
static const struct {
	int col;
	int lat;	/* LAT_* */
	double pct;
} lat_columns[] = {
	{ COL_NOWAIT_P50,   LAT_NOWAIT,   50 },
	{ COL_NOWAIT_P99,   LAT_NOWAIT,   99 },
	{ COL_NOWAIT_MAX,   LAT_NOWAIT,   100 },
	{ COL_EAGAIN_P50,   LAT_EAGAIN,   50 },
	{ COL_EAGAIN_P99,   LAT_EAGAIN,   99 },
	{ COL_EAGAIN_MAX,   LAT_EAGAIN,   100 },
	{ COL_FALLBACK_P50, LAT_FALLBACK, 50 },
	{ COL_FALLBACK_P99, LAT_FALLBACK, 99 },
	{ COL_FALLBACK_MAX, LAT_FALLBACK, 100 },
};

/* Bytes written per second of wall time. */
static char *fmt_bps(const struct nbcat *nb, const struct stats *st)
{
	char buf[HUMAN_LEN];
	uint64_t bps;

	if (!st->ns)
		return NULL;
	bps = (uint64_t)((double)st->bytes * 1e9 / (double)st->ns);
	if (exact(nb))
		return fmt_u64(bps);
	return xstrdup_printf("%s/s", size_to_human(buf, bps));
}

/* The cell of column @col for @st, a file or the @total; NULL: empty. */
static char *column_data(const struct nbcat *nb, const struct stats *st,
			 bool total, int col)
{
	uint64_t cached = st->hit_bytes + st->partial_bytes;
	uint64_t classified_chunks = st->hit_chunks + st->partial_chunks +
				     st->miss_chunks;
	size_t i;

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
	case COL_HIT_RATIO:
		return fmt_ratio(nb, cached, cached + st->miss_bytes);
	case COL_CHUNK_HIT_RATIO:
		return fmt_ratio(nb, st->hit_chunks, classified_chunks);
	case COL_TIME:
		return fmt_ns(nb, st->ns);
	case COL_BPS:
		return fmt_bps(nb, st);
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
	for (i = 0; i < ARRAY_SIZE(lat_columns); i++)
		if (lat_columns[i].col == col)
			return fmt_lat(nb, &st->lat[lat_columns[i].lat],
				       lat_columns[i].pct);
	return counter_data(nb, st, col);
}

void report_add(struct nbcat *nb, const struct stats *st, bool total)
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

void report_init(struct nbcat *nb)
{
	static struct col_info json_columns[NR_COLS];
	const struct col_info *infos = report_columns;
	size_t i;

	if (nb->quiet)
		return;
	if (nb->json) {
		/* the same columns, durations keyed with their unit */
		memcpy(json_columns, report_columns, sizeof(json_columns));
		for (i = 0; i < ARRAY_SIZE(unit_names); i++)
			json_columns[unit_names[i].col].name =
				unit_names[i].json;
		infos = json_columns;
	}
	scols_init_debug(0);
	nb->tb = col_new_table(infos, nb->columns, nb->ncolumns, nb->json,
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
void report_print(struct nbcat *nb)
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

void stats_merge(struct stats *t, const struct stats *s)
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

void stats_reset(struct stats *st, const char *path)
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

/*
 * @list with the former names of unit_names[] replaced by the current
 * ones (the items are copied as they are otherwise). Free the result.
 */
static char *columns_unalias(const char *list)
{
	char *out = xstrdup_printf("%s", list), *res, *p, *item;
	size_t i, n = 0;
	FILE *f;

	f = open_memstream(&res, &n);
	if (!f)
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	p = out;
	if (*p == '+')
		fputc(*p++, f);
	for (item = p; item; item = p) {
		p = strchr(item, ',');
		if (p)
			*p++ = '\0';
		for (i = 0; i < ARRAY_SIZE(unit_names); i++)
			if (!strcasecmp(item, unit_names[i].old))
				break;
		fputs(i < ARRAY_SIZE(unit_names) ?
		      report_columns[unit_names[i].col].name : item, f);
		if (p)
			fputc(',', f);
	}
	if (fclose(f))
		err(NBCAT_EXIT_FAILURE, "cannot allocate memory");
	free(out);
	return res;
}

static void parse_columns(struct nbcat *nb, const char *arg)
{
	char *list = columns_unalias(arg);
	const char *bad = NULL;
	int badlen = 0;

	/* room for TYPE, which set_columns() may add */
	switch (col_parse_list(list, report_columns, NR_COLS, nb->columns,
			       &nb->ncolumns, ARRAY_SIZE(nb->columns) - 1,
			       &bad, &badlen)) {
	case 0:
		free(list);
		return;
	case -EINVAL:
		errx(NBCAT_EXIT_FAILURE, "unknown column: '%.*s'", badlen,
		     bad);
	case -E2BIG:
		errx(NBCAT_EXIT_FAILURE, "too many columns: '%s'", arg);
	default:
		errx(NBCAT_EXIT_FAILURE, "no columns: '%s'", arg);
	}
}

/* @x is one of @v[0..@n) */
static bool has_column(const int *v, size_t n, int x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* The report's columns: the defaults, or every one for JSON, or -o. */
void set_columns(struct nbcat *nb, const char *list)
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
	/* JSON rows always say what they are: select(.type == "total") */
	if (nb->json && !has_column(nb->columns, nb->ncolumns, COL_TYPE))
		nb->columns[nb->ncolumns++] = COL_TYPE;
}
