/*
 * table: the client's human tables.  Cells are copied in; the rendering
 * pads every column to its widest cell (counted in characters, not
 * bytes, so UTF-8 names line up), two spaces between columns, and cuts
 * the last column with "…" when a line would pass the width.  Control
 * characters in a cell (a hostile app name with an escape sequence) are
 * shown as '?', so a table never drives the terminal.
 */
#ifndef CLIENT_TABLE_H
#define CLIENT_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

#define CLI_TABLE_COLS 8
#define CLI_TABLE_ROWS 100000

struct table {
	size_t ncols;
	size_t nrows; /* the header is row 0 */
	size_t cap;
	char **cells; /* nrows * ncols, owned */
};

/* ncols headers (NULL-terminated list of at most CLI_TABLE_COLS). */
int table_init(struct table *t, const char *const *head);
/* One row of t->ncols cells (NULL shows as "-"); -1 when out of room. */
int table_add(struct table *t, const char *const *cells);
/*
 * Appends the table to out.  width 0: no limit.  bold: the header in
 * bold (an escape sequence; only for a terminal with colour).
 */
int table_render(const struct table *t, struct buf *out, size_t width,
                 bool bold);
void table_release(struct table *t);
/* Characters (UTF-8 code points) in s. */
size_t table_text_width(const char *s);

#endif
