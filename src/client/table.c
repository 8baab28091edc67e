/*
 * Human tables (table.h).  A table is a flat array of owned strings,
 * sanitised on the way in; widths are computed at render time.
 */
#include "client/table.h"

#include <stdlib.h>
#include <string.h>

size_t
table_text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

/* A copy with control characters (C0, DEL) turned into '?'. */
static char *
clean_copy(const char *s)
{
	char *c = strdup(s ? s : "-");

	for (char *p = c; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

static int
push_row(struct table *t, const char *const *cells)
{
	size_t need = (t->nrows + 1) * t->ncols;

	if (t->nrows >= CLI_TABLE_ROWS)
		return -1;
	if (need > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : t->ncols * 16;
		char **p;

		while (ncap < need)
			ncap *= 2;
		p = realloc(t->cells, ncap * sizeof(*p));
		if (p == NULL)
			return -1;
		t->cells = p;
		t->cap = ncap;
	}
	for (size_t i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] = clean_copy(cells[i]);
		if (t->cells[t->nrows * t->ncols + i] == NULL) {
			while (i-- > 0)
				free(t->cells[t->nrows * t->ncols + i]);
			return -1;
		}
	}
	t->nrows++;
	return 0;
}

int
table_init(struct table *t, const char *const *head)
{
	memset(t, 0, sizeof(*t));
	while (t->ncols < CLI_TABLE_COLS && head[t->ncols])
		t->ncols++;
	return push_row(t, head);
}

int
table_add(struct table *t, const char *const *cells)
{
	return push_row(t, cells);
}

void
table_release(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

/* Appends at most max characters of s, "…" in place of the last when cut. */
static int
put_cut(struct buf *out, const char *s, size_t max)
{
	size_t n = 0;
	const char *p = s;

	if (table_text_width(s) <= max)
		return buf_append(out, s, strlen(s));
	if (max == 0)
		return 0;
	for (; *p; p++) {
		if (((unsigned char)*p & 0xC0) != 0x80 && ++n == max)
			break;
	}
	if (buf_append(out, s, (size_t)(p - s)) < 0)
		return -1;
	return buf_append(out, "…", strlen("…"));
}

int
table_render(const struct table *t, struct buf *out, size_t width, bool bold)
{
	size_t w[CLI_TABLE_COLS] = {0}, lead = 0;

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t n = table_text_width(t->cells[r * t->ncols + c]);
			if (n > w[c])
				w[c] = n;
		}
	for (size_t c = 0; c + 1 < t->ncols; c++)
		lead += w[c] + 2;
	for (size_t r = 0; r < t->nrows; r++) {
		if (r == 0 && bold && buf_append(out, "\033[1m", 4) < 0)
			return -1;
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t pad = w[c] - table_text_width(s);

			if (c + 1 == t->ncols) {
				size_t room = width == 0     ? (size_t)-1
				              : width > lead ? width - lead
				                             : 1;
				if (put_cut(out, s, room) < 0)
					return -1;
			} else if (buf_appendf(out, "%s%*s  ", s, (int)pad,
			                       "") < 0) {
				return -1;
			}
		}
		if (r == 0 && bold && buf_append(out, "\033[0m", 4) < 0)
			return -1;
		if (buf_append(out, "\n", 1) < 0)
			return -1;
	}
	return 0;
}
