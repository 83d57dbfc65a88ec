/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Table columns, as both tools offer them: a static description of each
 * column, the --output list parsed against it, the libsmartcols table
 * set up from the chosen ones, and the column list of --help. Nothing
 * here prints an error; callers word their own. Every name here starts
 * with col_.
 */
#ifndef NBIO_COLUMNS_H
#define NBIO_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct libscols_table;

struct col_info {
	const char *name;	/* upper case; JSON keys are lower case */
	double whint;		/* libsmartcols width hint */
	int flags;		/* SCOLS_FL_* */
	int json_type;		/* SCOLS_JSON_* */
	const char *help;
};

/*
 * col_parse_list - parse an --output list: column names separated by
 * commas, in any case, replacing @cols; a list that starts with "+" is
 * added to them instead.
 * @cols: in: the defaults; out: column indexes into @infos
 * @ncols: in and out: how many @cols holds
 * @max: room in @cols
 * @bad, @badlen: out, for -EINVAL: the unknown name (not NUL-terminated)
 *
 * Returns 0, -EINVAL for an unknown name, -E2BIG past @max, or -ENODATA
 * when no column is left.
 */
int col_parse_list(const char *list, const struct col_info *infos,
		   size_t ninfos, int *cols, size_t *ncols, size_t max,
		   const char **bad, int *badlen);

/*
 * col_new_table - a libsmartcols table with the columns @cols of @infos,
 * in JSON, raw or without headings as asked.
 * Returns the table, or NULL with errno set.
 */
struct libscols_table *col_new_table(const struct col_info *infos,
				     const int *cols, size_t ncols, bool json,
				     bool raw, bool noheadings);

/* col_print_help - the "Available columns" part of --help. */
void col_print_help(FILE *out, const char *title,
		    const struct col_info *infos, size_t ninfos);

#endif /* NBIO_COLUMNS_H */
