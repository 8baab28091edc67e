/*
 * logscan.c - a dev server's output to "what is wrong with the app".
 *
 * One pass over the lines, oldest first.  A line is cleaned (colour
 * codes, carriage returns and control characters go), then tested
 * against two small tables of substrings: the first lines of the errors
 * the common dev servers print (Vite and its esbuild and plugin errors,
 * tsc, Next.js, Node's own, Python's traceback, uvicorn) and the lines
 * they print once healthy again ("hmr update", "ready in", "compiled
 * successfully", "Application startup complete", and the supervisor's own
 * "started" and "ready").  The first error after the last healthy line is
 * the problem; its block (that line and up to LOGSCAN_LINES in all) is
 * kept as it streams, and dropped again at a healthy line.
 *
 * Substrings, not regular expressions: the table reads like the output
 * it matches, costs a few memmem calls a line, and a new dev server is
 * one more row.  A node TypeError or ReferenceError counts only with a
 * stack ("    at ..." on the next line), so an app that logs an error
 * message it handled is not a broken app.
 */
#include "applog/logscan.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/utf8.h"

struct pattern {
	const char *text;
	enum logscan_kind kind;
};

/* The first line of an error block. */
static const struct pattern errors[] = {
    {"[vite] Internal server error", LOGSCAN_COMPILE},
    {"Pre-transform error", LOGSCAN_COMPILE},
    {"[plugin:vite:", LOGSCAN_COMPILE},
    {"Transform failed", LOGSCAN_COMPILE},
    {"[ERROR] ", LOGSCAN_COMPILE}, /* esbuild: "✘ [ERROR] Expected ..." */
    {": ERROR: ", LOGSCAN_COMPILE}, /* esbuild: "a.jsx:5:10: ERROR: ..." */
    {"error TS", LOGSCAN_COMPILE},
    {"Failed to compile", LOGSCAN_COMPILE},
    {"\u2a2f ./", LOGSCAN_COMPILE}, /* Next 14: "⨯ ./app/page.js" */
    {"Module not found", LOGSCAN_COMPILE},
    {"SyntaxError:", LOGSCAN_COMPILE},
    {"Error: Cannot find module", LOGSCAN_RUNTIME},
    {"Traceback (most recent call last)", LOGSCAN_RUNTIME},
    {"Error loading ASGI app", LOGSCAN_RUNTIME},
};

/* Thrown errors that count only when a stack follows. */
static const char *const thrown[] = {"TypeError:", "ReferenceError:",
                                     "RangeError:"};

/* A dev server that prints one of these is serving again. */
static const char *const healthy[] = {
    "hmr update",
    "page reload",
    "ready in ",
    "compiled successfully",
    "Compiled successfully",
    "compiled client and server successfully",
    "\u2713 Compiled", /* Next 14: "✓ Compiled / in 1.2s" */
    "Application startup complete",
    "Found 0 errors",
    "sandboxd-init: started (",
    "sandboxd-init: ready (",
};

static bool
has(const char *line, size_t len, const char *what)
{
	return memmem(line, len, what, strlen(what)) != NULL;
}

size_t
logscan_clean(const char *line, size_t len, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	if (outlen == 0)
		return 0;
	while (i < len) {
		unsigned char c = (unsigned char)line[i];
		if (c == 0x1b) { /* ESC [ params final, ESC ] ... BEL/ST */
			i++;
			if (i < len && line[i] == '[') {
				for (i++; i < len; i++)
					if (line[i] >= 0x40 && line[i] <= 0x7e)
						break;
				i++;
			} else if (i < len && line[i] == ']') {
				for (i++; i < len && line[i] != 0x07 &&
				          line[i] != 0x1b;
				     i++)
					;
				i += (i < len && line[i] == 0x1b) ? 2 : 1;
			} else {
				i++;
			}
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			if (c == '\t' && o + 1 < outlen)
				out[o++] = ' ';
			i++;
			continue;
		}
		if (c >= 0x80) { /* whole characters only; stray bytes go */
			size_t n = utf8_char_len(line + i, len - i);
			if (n == 0) {
				i++;
				continue;
			}
			if (o + n >= outlen)
				break;
			memcpy(out + o, line + i, n);
			o += n;
			i += n;
			continue;
		}
		if (o + 1 >= outlen)
			break;
		out[o++] = (char)c;
		i++;
	}
	out[o] = '\0';
	return o;
}

/* Cuts a character that snprintf() cut in two off the end of s. */
static void
clip_tail(char *s)
{
	size_t n = strlen(s), lead = n;

	while (lead > 0 && ((unsigned char)s[lead - 1] & 0xc0) == 0x80)
		lead--;
	if (lead > 0 && (unsigned char)s[lead - 1] >= 0x80 &&
	    utf8_char_len(s + lead - 1, n - lead + 1) != n - lead + 1)
		s[lead - 1] = '\0';
}

static enum logscan_kind
error_kind(const char *line, size_t len)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (has(line, len, errors[i].text))
			return errors[i].kind;
	return LOGSCAN_NONE;
}

static bool
is_thrown(const char *line, size_t len)
{
	while (len && *line == ' ')
		line++, len--;
	for (size_t i = 0; i < sizeof(thrown) / sizeof(thrown[0]); i++)
		if (len >= strlen(thrown[i]) &&
		    memcmp(line, thrown[i], strlen(thrown[i])) == 0)
			return true;
	return false;
}

static bool
is_stack_line(const char *line, size_t len)
{
	size_t sp = 0;

	while (sp < len && line[sp] == ' ')
		sp++;
	return sp > 0 && len - sp >= 3 && memcmp(line + sp, "at ", 3) == 0;
}

static bool
is_healthy(const char *line, size_t len)
{
	for (size_t i = 0; i < sizeof(healthy) / sizeof(healthy[0]); i++)
		if (has(line, len, healthy[i]))
			return true;
	return false;
}

/* "ValueError: bad", "foo.Bar: x": the last line of a traceback. */
static bool
is_exception_line(const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t n = colon ? (size_t)(colon - line) : len;

	if (len == 0 || line[0] == ' ' || n == 0 || n > 80)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((line[i] >= 'a' && line[i] <= 'z') ||
		      (line[i] >= 'A' && line[i] <= 'Z') ||
		      (line[i] >= '0' && line[i] <= '9') || line[i] == '_' ||
		      line[i] == '.'))
			return false;
	return (n >= 5 && memcmp(line + n - 5, "Error", 5) == 0) ||
	       (n >= 9 && memcmp(line + n - 9, "Exception", 9) == 0);
}

/* The summary of a first line: what follows "[vite] " when it is there
 * (the time before it changes at every print), else the line. */
static void
set_summary(struct logscan *s, const char *line)
{
	const char *v = strstr(line, "[vite] ");

	snprintf(s->summary, sizeof(s->summary), "%s", v ? v + 7 : line);
	clip_tail(s->summary);
	s->sig = hash_fnv1a(s->summary);
}

static void
keep(struct logscan *s, const char *line)
{
	if (s->nlines < LOGSCAN_LINES)
		snprintf(s->lines[s->nlines++], LOGSCAN_LINE_MAX, "%s", line);
}

struct scan {
	struct logscan *out;
	char prev[LOGSCAN_LINE_MAX]; /* a thrown error waiting for its stack */
	bool traceback;
};

static void
scan_line(struct scan *sc, const char *line, size_t len)
{
	struct logscan *s = sc->out;
	enum logscan_kind k;

	if (is_healthy(line, len)) {
		s->kind = LOGSCAN_NONE;
		s->nlines = 0;
		sc->prev[0] = '\0';
		sc->traceback = false;
		return;
	}
	if (s->kind != LOGSCAN_NONE) {
		keep(s, line);
		/* A traceback says what went wrong on its last line. */
		if (sc->traceback && is_exception_line(line, len))
			set_summary(s, line);
		return;
	}
	k = error_kind(line, len);
	if (k == LOGSCAN_NONE && sc->prev[0] && is_stack_line(line, len)) {
		s->kind = LOGSCAN_RUNTIME;
		set_summary(s, sc->prev);
		keep(s, sc->prev);
		keep(s, line);
		return;
	}
	sc->prev[0] = '\0';
	if (k == LOGSCAN_NONE) {
		if (is_thrown(line, len))
			snprintf(sc->prev, sizeof(sc->prev), "%s", line);
		return;
	}
	s->kind = k;
	sc->traceback = has(line, len, "Traceback (most recent call last)");
	set_summary(s, line);
	keep(s, line);
}

void
logscan_text(const char *text, size_t len, struct logscan *out)
{
	struct scan sc = {.out = out};
	char line[LOGSCAN_LINE_MAX];
	size_t i = 0;

	out->kind = LOGSCAN_NONE;
	out->nlines = 0;
	out->summary[0] = '\0';
	out->sig = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t n = logscan_clean(text + i, end - i, line, sizeof(line));
		scan_line(&sc, line, n);
		i = end + 1;
	}
	if (out->kind == LOGSCAN_NONE) {
		out->nlines = 0;
		out->summary[0] = '\0';
	}
}

void
logscan_tail(const char *text, size_t len, size_t n, struct logscan *out)
{
	size_t start = len, count = 0;

	if (n > LOGSCAN_LINES)
		n = LOGSCAN_LINES;
	if (len && text[len - 1] == '\n')
		len--;
	start = len;
	while (start > 0 && n > 0) {
		if (text[start - 1] == '\n' && ++count == n)
			break;
		start--;
	}
	out->nlines = 0;
	for (size_t i = start; i < len && n > 0;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		logscan_clean(text + i, end - i, out->lines[out->nlines],
		              LOGSCAN_LINE_MAX);
		if (++out->nlines == LOGSCAN_LINES)
			break;
		i = end + 1;
	}
}
