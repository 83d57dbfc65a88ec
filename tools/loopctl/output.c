// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The tables of status and cache: --output, JSON, raw, and the cells.
 */
#include "loopctl.h"

void add_column(struct output *o, int id)
{
	if (o->ncols == ARRAY_SIZE(o->cols))
		errx(LOOPCTL_EXIT_FAILURE, "--output: too many columns");
	o->cols[o->ncols++] = id;
}

/* --output LIST, or +LIST to add to the defaults. */
void parse_columns(struct output *o, const char *list, const char *cmd)
{
	const char *bad = NULL;
	int badlen = 0;

	switch (col_parse_list(list, o->infos, o->ninfos, o->cols,
			       &o->ncols, ARRAY_SIZE(o->cols), &bad, &badlen)) {
	case 0:
		return;
	case -EINVAL:
		warnx("--output: unknown column '%.*s'", badlen, bad);
		errtryhelp(cmd);
	case -E2BIG:
		errx(LOOPCTL_EXIT_FAILURE, "--output: too many columns");
	default:
		errx(LOOPCTL_EXIT_FAILURE, "--output: no columns given");
	}
}

/* The table options status and cache share; false if @c is not one. */
bool output_option(struct output *o, int c, const char *arg,
		   const char *cmd)
{
	switch (c) {
	case 'J':
		o->json = true;
		return true;
	case OPT_RAW:
		o->raw = true;
		return true;
	case 'n':
		o->noheadings = true;
		return true;
	case 'O':
		parse_columns(o, arg, cmd);
		return true;
	}
	return false;
}

struct libscols_table *new_table(const struct output *o,
				 const char *name, const char *cmd)
{
	struct libscols_table *tb;

	if (o->json && o->raw) {
		warnx("%s: --json and --raw are mutually exclusive", cmd);
		errtryhelp(cmd);
	}
	tb = col_new_table(o->infos, o->cols, o->ncols, o->json, o->raw,
			   o->noheadings);
	if (!tb)
		err(LOOPCTL_EXIT_FAILURE, "cannot create a table");
	if (o->json)
		scols_table_set_name(tb, name);
	return tb;
}

/*
 * Print and free @tb: JSON always (an empty list is an answer), a table
 * only when it has lines.
 */
void print_table(struct libscols_table *tb, const struct output *o)
{
	if (o->json || scols_table_get_nlines(tb))
		scols_print_table(tb);
	scols_unref_table(tb);
}

void set_cell(struct libscols_line *ln, size_t i, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0 || scols_line_refer_data(ln, i, s))
		err(LOOPCTL_EXIT_FAILURE, "cannot fill a table cell");
}

/* A file name: bytes, but JSON strings must be valid UTF-8. */
void set_name(const struct output *o, struct libscols_line *ln,
	      size_t i, const char *name)
{
	char *s = o->json ? utf8_escape_dup(name) : strdup(name);

	if (!s || scols_line_refer_data(ln, i, s))
		err(LOOPCTL_EXIT_FAILURE, "cannot fill a table cell");
}

void set_bool(struct libscols_line *ln, size_t i, bool v)
{
	set_cell(ln, i, "%d", v ? 1 : 0);
}

/*
 * A DIO column (SCOLS_JSON_BOOLEAN_OPTIONAL): on, off or unknown in a
 * table; true, false or null in JSON.
 */
void set_served(const struct output *o, struct libscols_line *ln, size_t i,
		enum loopdev_served v)
{
	if (!o->json)
		set_cell(ln, i, "%s", served_word(v));
	else if (v != LOOPDEV_SERVED_UNKNOWN)
		set_bool(ln, i, v == LOOPDEV_SERVED_ON);
	/* else empty: null */
}

/* "1.5G" like lsblk, or bytes. */
void set_size(const struct output *o, struct libscols_line *ln,
	      size_t i, uint64_t v)
{
	char buf[HUMAN_LEN];

	if (o->bytes || o->json)
		set_cell(ln, i, "%" PRIu64, v);
	else
		set_cell(ln, i, "%s", size_to_human(buf, v));
}

void print_columns_help(const struct col_info *infos, size_t n)
{
	col_print_help(stdout, "Available output columns", infos, n);
}
