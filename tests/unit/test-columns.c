// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for tools/lib/columns.c: the --output parser both tools
 * use, and the table it sets up.
 */
#include <errno.h>
#include <libsmartcols.h>
#include <string.h>

#include "c.h"
#include "columns.h"
#include "tap.h"

static const struct col_info infos[] = {
	{ "NAME", 0.1, 0, SCOLS_JSON_STRING, "a name" },
	{ "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "a size" },
	{ "SIZE-LIMIT", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "a limit" },
	{ "DIO", 1, 0, SCOLS_JSON_BOOLEAN, "a flag" },
};

/* Parse @list over the defaults NAME,SIZE; "rc:i,j,k" as a string. */
static const char *parse(const char *list, size_t max, char *buf,
			 size_t len)
{
	int cols[8] = { 0, 1 };
	size_t ncols = 2, i, off;
	const char *bad = NULL;
	int badlen = 0, rc;

	rc = col_parse_list(list, infos, ARRAY_SIZE(infos), cols, &ncols,
			    max, &bad, &badlen);
	off = (size_t)snprintf(buf, len, "%d:", rc);
	if (rc == -EINVAL)
		snprintf(buf + off, len - off, "'%.*s'", badlen, bad);
	else
		for (i = 0; i < ncols && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%d",
						i ? "," : "", cols[i]);
	return buf;
}

static void test_parse(void)
{
	static const struct {
		const char *list;
		size_t max;
		const char *want;
	} cases[] = {
		{ "SIZE", 8, "0:1" },
		{ "dio,name", 8, "0:3,0" },		/* any case, in order */
		{ "+DIO", 8, "0:0,1,3" },		/* added to the defaults */
		{ "SIZE,SIZE", 8, "0:1,1" },
		{ "SIZE-LIMIT", 8, "0:2" },		/* not a prefix match */
		{ "SIZE-", 8, "-22:'SIZE-'" },
		{ "NAME,FOO,DIO", 8, "-22:'FOO'" },
		{ "NAME,,DIO", 8, "-22:''" },
		{ "NAME,DIO,SIZE", 2, "-7:0,3" },	/* -E2BIG */
		{ "+DIO", 2, "-7:0,1" },
		{ "", 8, "-61:" },			/* -ENODATA */
		{ "+", 8, "0:0,1" },			/* the defaults stay */
	};
	char buf[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		tap_is_str(parse(cases[i].list, cases[i].max, buf,
				 sizeof(buf)), cases[i].want, cases[i].list);
}

static void test_table(void)
{
	int cols[] = { 3, 0 };
	struct libscols_table *tb;
	struct libscols_column *cl;

	tb = col_new_table(infos, cols, ARRAY_SIZE(cols), true, false, true);
	if (!tap_ok(tb != NULL, "col_new_table makes a table"))
		return;
	tap_ok(scols_table_get_ncols(tb) == 2, "two columns");
	cl = scols_table_get_column(tb, 0);
	tap_is_str(cl ? scols_cell_get_data(scols_column_get_header(cl)) :
		   NULL, "DIO", "first column is DIO");
	tap_ok(cl && scols_column_get_json_type(cl) == SCOLS_JSON_BOOLEAN,
	       "its JSON type comes from the description");
	tap_ok(scols_table_is_json(tb) && !scols_table_is_raw(tb) &&
	       scols_table_is_noheadings(tb), "JSON, not raw, no headings");
	scols_unref_table(tb);
}

int main(void)
{
	test_parse();
	test_table();
	return tap_done();
}
