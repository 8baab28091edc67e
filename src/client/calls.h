/*
 * calls: what the commands (cmd_*.c) share to call the API and show
 * its answer per mode (--json, -q, or a table or lines).
 */
#ifndef CLIENT_CALLS_H
#define CLIENT_CALLS_H

#include <stddef.h>

#include "client/args.h"
#include "client/client.h"
#include "lib/jv.h"

/* Shared by the commands: the object or list of an answer, per mode. */
int cli_show_answer(struct cli *c, struct cli_resp *r, const char *done);

/* --json: the answer unchanged; else, unless -q, the line fmt makes. */
void cli_done(struct cli *c, const struct cli_resp *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* GET path and show the answer (cli_show_answer, nothing done). */
int cli_get_show(struct cli *c, const char *path);
/*
 * DELETE path, the thing a->pos[0] names (what: "app"), and say so.
 * With a warning (without the "warning: "), unless --yes, the warning is
 * printed and the user asked first; no terminal to ask on refuses.
 */
int cli_delete(struct cli *c, const struct cli_args *a, const char *path,
               const char *what, const char *warning);

/*
 * A list command's columns: each a header and the item's field shown
 * under it.  TEXT: the field as text ("-" when absent), or the alt field
 * when the field is not a string; TIME: an RFC 3339 time, short; LINE:
 * text on one line (newlines as spaces), cut to CLI_LINE_MAX - 1 bytes;
 * YESNO: "yes" when the field is true, else "no".
 */
#define CLI_LINE_MAX 160
enum cli_col_kind { CLI_COL_TEXT, CLI_COL_TIME, CLI_COL_LINE, CLI_COL_YESNO };
struct cli_col {
	const char *head;
	const char *field;
	const char *alt;
	enum cli_col_kind kind;
};
/*
 * The items as rows of ncols columns (at most CLI_TABLE_COLS): on -q the
 * column quiet of each item, one a line; else a table.
 */
void cli_print_list(struct cli *c, const struct jv *items,
                    const struct cli_col *cols, size_t ncols, size_t quiet);
/*
 * GET path; --json prints the answer unchanged, else cli_print_list of
 * its array key.  The answer stays in r for the caller to read further;
 * the caller releases it whatever the outcome.
 */
int cli_get_list(struct cli *c, const char *path, const char *key,
                 const struct cli_col *cols, size_t ncols, size_t quiet,
                 struct cli_resp *r);

#endif
