/*
 * calls: the helpers the commands (cmd_*.c) share to call the API and
 * show its answer: a list as a table or ids, an object, a delete that
 * asks first, the "done" line.  Apart from the command table
 * (commands.c) so that the table names the commands and the commands
 * call down into these, never back up.
 */
#include "client/calls.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client/table.h"

int
cli_show_answer(struct cli *c, struct cli_resp *r, const char *done)
{
	const struct jv *id = r->json ? jv_get(r->json, "id") : NULL;

	if (c->json)
		cli_print_raw(r);
	else if (c->quiet) {
		if (jv_str(id))
			printf("%s\n", jv_str(id));
	} else if (done && jv_str(id))
		printf("%s %s\n", done, jv_str(id));
	else if (done)
		printf("%s\n", done);
	else if (r->json)
		cli_print_object(c, r->json);
	else
		cli_print_raw(r);
	return CLI_OK;
}

static const char *
list_cell(const struct jv *o, const struct cli_col *col, char *tmp, size_t len)
{
	char line[CLI_LINE_MAX];
	const char *v;

	switch (col->kind) {
	case CLI_COL_TIME:
		return cli_short_time(jv_str(jv_get(o, col->field)), tmp, len);
	case CLI_COL_YESNO:
		return jv_is_true(jv_get(o, col->field)) ? "yes" : "no";
	case CLI_COL_LINE:
		snprintf(line, sizeof(line), "%s",
		         cli_field(o, col->field, tmp, len));
		snprintf(tmp, len, "%s", line);
		for (char *p = tmp; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return tmp;
	case CLI_COL_TEXT:
	default:
		v = jv_str(jv_get(o, col->field));
		if (v == NULL && col->alt)
			return cli_field(o, col->alt, tmp, len);
		return cli_field(o, col->field, tmp, len);
	}
}

void
cli_print_list(struct cli *c, const struct jv *items,
               const struct cli_col *cols, size_t ncols, size_t quiet)
{
	const char *head[CLI_TABLE_COLS + 1] = {0};
	char cell[CLI_TABLE_COLS][4096];
	struct table t;

	if (ncols > CLI_TABLE_COLS)
		ncols = CLI_TABLE_COLS;
	for (size_t k = 0; k < ncols; k++)
		head[k] = cols[k].head;
	table_init(&t, head);
	for (size_t i = 0; i < jv_len(items); i++) {
		const struct jv *o = jv_at(items, i);
		const char *row[CLI_TABLE_COLS];

		for (size_t k = 0; k < ncols; k++)
			row[k] =
			    list_cell(o, &cols[k], cell[k], sizeof(cell[k]));
		if (c->quiet)
			printf("%s\n", row[quiet < ncols ? quiet : 0]);
		else
			table_add(&t, row);
	}
	if (!c->quiet)
		cli_print_table(c, &t);
	table_release(&t);
}

int
cli_get_list(struct cli *c, const char *path, const char *key,
             const struct cli_col *cols, size_t ncols, size_t quiet,
             struct cli_resp *r)
{
	int rc = cli_call(c, "GET", path, NULL, r);

	if (rc != 0)
		return rc;
	if (c->json)
		cli_print_raw(r);
	else
		cli_print_list(c, jv_get(r->json, key), cols, ncols, quiet);
	return CLI_OK;
}

int
cli_get_show(struct cli *c, const char *path)
{
	struct cli_resp r;
	int rc = cli_call(c, "GET", path, NULL, &r);

	if (rc == 0)
		cli_show_answer(c, &r, NULL);
	cli_resp_release(&r);
	return rc;
}

int
cli_delete(struct cli *c, const struct cli_args *a, const char *path,
           const char *what, const char *warning)
{
	char q[1024];
	struct cli_resp r;
	int rc;

	if (warning && !cli_args_has(a, "yes")) {
		fprintf(stderr, "warning: %s\n", warning);
		snprintf(q, sizeof(q), "Delete %s %s?", what, a->pos[0]);
		if (!cli_confirm(q))
			return cli_fail(CLI_EUSAGE, "not_confirmed",
			                "not deleted (pass --yes to delete "
			                "without asking)");
	}
	rc = cli_call(c, "DELETE", path, NULL, &r);
	if (rc == 0 && !c->json && !c->quiet)
		printf("deleted %s %s\n", what, a->pos[0]);
	cli_resp_release(&r);
	return rc;
}

void
cli_done(struct cli *c, const struct cli_resp *r, const char *fmt, ...)
{
	va_list ap;

	if (c->json) {
		cli_print_raw(r);
		return;
	}
	if (c->quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}
