/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Table columns, as both tools offer them: a static description of each
 * column, the --output list parsed against it, the libsmartcols table
 * set up from the chosen ones, and the column list of --help. Nothing
 * here prints an error; callers word their own.
 */
#ifndef NBIO_COLUMNS_H
#define NBIO_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct libscols_table;

struct cli_colinfo {
	const char *name;	/* upper case; JSON keys are lower case */
	double whint;		/* libsmartcols width hint */
	int flags;		/* SCOLS_FL_* */
	int json_type;		/* SCOLS_JSON_* */
	const char *help;
};

/*
 * cli_parse_columns - parse an --output list: column names separated by
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
int cli_parse_columns(const char *list, const struct cli_colinfo *infos,
		      size_t ninfos, int *cols, size_t *ncols, size_t max,
		      const char **bad, int *badlen);

/*
 * cli_new_table - a libsmartcols table with the columns @cols of @infos,
 * in JSON, raw or without headings as asked.
 * Returns the table, or NULL with errno set.
 */
struct libscols_table *cli_new_table(const struct cli_colinfo *infos,
				     const int *cols, size_t ncols, bool json,
				     bool raw, bool noheadings);

/* cli_print_columns - the "Available columns" part of --help. */
void cli_print_columns(FILE *out, const char *title,
		       const struct cli_colinfo *infos, size_t ninfos);

#endif /* NBIO_COLUMNS_H */
