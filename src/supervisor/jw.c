/*
 * jw.c - a bounded JSON writer.
 *
 * The supervisor's answers are small and flat, so a writer that appends
 * text is enough; a tree (like the daemon's jv) would cost a dependency and
 * allocations for nothing.  The buffer grows by doubling up to a hard cap;
 * hitting the cap or running out of memory marks the writer full instead
 * of failing each call, so the answer code stays straight-line.
 *
 * Strings are escaped for strict parsers: '"', '\\' and every byte below
 * 0x20 are escaped, and the output is always valid UTF-8 (each byte of an
 * invalid sequence becomes \ufffd), because names, commands and error
 * messages can carry whatever bytes a user put in a file.  NUL becomes
 * \ufffd too: \u0000 is valid JSON, but the control plane's parser
 * (jansson) refuses it and would drop the whole answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jw.h"

#define JW_FIRST_CAP 256

void
jw_init(struct jw *w, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->max = max;
}

void
jw_release(struct jw *w)
{
	free(w->p);
	jw_init(w, w->max);
}

void
jw_reset(struct jw *w)
{
	w->len = 0;
	w->full = false;
	if (w->p != NULL)
		w->p[0] = '\0';
}

/* Room for n more bytes and a NUL; false (and full) when there is none. */
static bool
jw_reserve(struct jw *w, size_t n)
{
	size_t cap;
	char *p;

	if (w->full)
		return false;
	if (n > w->max - w->len) {
		w->full = true;
		return false;
	}
	if (w->len + n + 1 <= w->cap)
		return true;
	cap = w->cap ? w->cap : JW_FIRST_CAP;
	while (cap < w->len + n + 1)
		cap *= 2;
	if (cap > w->max + 1)
		cap = w->max + 1;
	p = realloc(w->p, cap);
	if (p == NULL) {
		w->full = true;
		return false;
	}
	w->p = p;
	w->cap = cap;
	return true;
}

static void
jw_bytes(struct jw *w, const char *s, size_t n)
{
	if (!jw_reserve(w, n))
		return;
	memcpy(w->p + w->len, s, n);
	w->len += n;
	w->p[w->len] = '\0';
}

void
jw_raw(struct jw *w, const char *s)
{
	jw_bytes(w, s, strlen(s));
}

size_t
jw_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return 0;
	/* The second byte's range rules out overlongs and surrogates. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < need || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < need; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return need;
}

static void
jw_escape_byte(struct jw *w, unsigned char ch)
{
	char esc[8];

	switch (ch) {
	case '"':
		jw_bytes(w, "\\\"", 2);
		return;
	case '\\':
		jw_bytes(w, "\\\\", 2);
		return;
	case '\n':
		jw_bytes(w, "\\n", 2);
		return;
	case '\t':
		jw_bytes(w, "\\t", 2);
		return;
	case '\r':
		jw_bytes(w, "\\r", 2);
		return;
	}
	snprintf(esc, sizeof(esc), "\\u%04x", ch);
	jw_bytes(w, esc, 6);
}

void
jw_str(struct jw *w, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run, n;

	jw_bytes(w, "\"", 1);
	while (i < len) {
		/* Copy plain ASCII in runs. */
		for (run = i; run < len && u[run] >= 0x20 && u[run] < 0x80 &&
		              u[run] != '"' && u[run] != '\\';
		     run++)
			;
		jw_bytes(w, s + i, run - i);
		i = run;
		if (i == len)
			break;
		if (u[i] == 0) {
			jw_bytes(w, "\\ufffd", 6);
			i++;
		} else if (u[i] < 0x80) {
			jw_escape_byte(w, u[i++]);
		} else if ((n = jw_utf8_len(u + i, len - i)) > 0) {
			jw_bytes(w, s + i, n);
			i += n;
		} else {
			jw_bytes(w, "\\ufffd", 6);
			i++;
		}
	}
	jw_bytes(w, "\"", 1);
}

void
jw_key(struct jw *w, const char *key, bool comma)
{
	if (comma)
		jw_bytes(w, ",", 1);
	jw_str(w, key, strlen(key));
	jw_bytes(w, ":", 1);
}

void
jw_int(struct jw *w, long long v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%lld", v);

	jw_bytes(w, num, (size_t)n);
}

void
jw_bool(struct jw *w, bool v)
{
	jw_raw(w, v ? "true" : "false");
}

bool
jw_ok(const struct jw *w)
{
	return !w->full;
}
