// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Table columns shared by nbcat and loopctl (see columns.h): one parser
 * for --output, one table set-up, one column list for --help.
 */
#include <errno.h>
#include <libsmartcols.h>
#include <string.h>
#include <strings.h>

#include "columns.h"

static int column_id(const struct col_info *infos, size_t ninfos,
		     const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ninfos; i++)
		if (strlen(infos[i].name) == len &&
		    !strncasecmp(infos[i].name, name, len))
			return (int)i;
	return -1;
}

int col_parse_list(const char *list, const struct col_info *infos,
		   size_t ninfos, int *cols, size_t *ncols, size_t max,
		   const char **bad, int *badlen)
{
	const char *p = list, *end;
	int id;

	if (*p == '+')
		p++;
	else
		*ncols = 0;
	while (*p) {
		end = strchrnul(p, ',');
		id = column_id(infos, ninfos, p, (size_t)(end - p));
		if (id < 0) {
			*bad = p;
			*badlen = (int)(end - p);
			return -EINVAL;
		}
		if (*ncols == max)
			return -E2BIG;
		cols[(*ncols)++] = id;
		p = *end ? end + 1 : end;
	}
	return *ncols ? 0 : -ENODATA;
}

struct libscols_table *col_new_table(const struct col_info *infos,
				     const int *cols, size_t ncols, bool json,
				     bool raw, bool noheadings)
{
	struct libscols_table *tb = scols_new_table();
	struct libscols_column *cl;
	const struct col_info *ci;
	size_t i;

	if (!tb)
		return NULL;
	scols_table_enable_json(tb, json);
	scols_table_enable_raw(tb, raw);
	scols_table_enable_noheadings(tb, noheadings);
	for (i = 0; i < ncols; i++) {
		ci = &infos[cols[i]];
		cl = scols_table_new_column(tb, ci->name, ci->whint,
					    ci->flags);
		if (!cl) {
			scols_unref_table(tb);
			errno = ENOMEM;
			return NULL;
		}
		scols_column_set_json_type(cl, ci->json_type);
	}
	return tb;
}

void col_print_help(FILE *out, const char *title,
		    const struct col_info *infos, size_t ninfos)
{
	size_t i;

	fprintf(out, "\n%s:\n", title);
	for (i = 0; i < ninfos; i++)
		fprintf(out, " %15s  %s\n", infos[i].name, infos[i].help);
}
