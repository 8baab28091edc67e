/*
 * logscan.h - what a dev server's own output says about the app: the
 * error it printed last (a compile error or an uncaught runtime error),
 * unless a later line says it recovered.  Pure functions over text, for
 * applog/problem.c and the unit tests.
 */
#ifndef APPLOG_LOGSCAN_H
#define APPLOG_LOGSCAN_H

#include <stddef.h>
#include <stdint.h>

#define LOGSCAN_LINES    40  /* lines of an error kept */
#define LOGSCAN_LINE_MAX 240 /* bytes of one kept line (longer: cut) */
#define LOGSCAN_SUMMARY  200 /* bytes of the summary */

enum logscan_kind {
	LOGSCAN_NONE,
	LOGSCAN_COMPILE, /* the code does not build: Vite, esbuild, tsc, Next */
	LOGSCAN_RUNTIME, /* it built and threw: a stack, a traceback */
};

struct logscan {
	enum logscan_kind kind;
	char summary[LOGSCAN_SUMMARY];
	size_t nlines;
	char lines[LOGSCAN_LINES][LOGSCAN_LINE_MAX];
	uint32_t sig; /* FNV-1a of the summary: "the same error" */
};

/*
 * Scans len bytes of output, oldest first, for the first error printed
 * since the last sign of health (a success line, a restart, the
 * supervisor's "ready").  out->kind is LOGSCAN_NONE when there is none;
 * else out holds the error's lines from its first one (colour codes and
 * control characters removed), at most LOGSCAN_LINES.
 */
void logscan_text(const char *text, size_t len, struct logscan *out);

/* The last n (at most LOGSCAN_LINES) lines of text, cleaned, into out's
 * lines (kind and summary untouched). */
void logscan_tail(const char *text, size_t len, size_t n, struct logscan *out);

/*
 * Copies a line without ANSI escape sequences, carriage returns and other
 * control characters (tabs become spaces) into out (NUL-terminated, cut at
 * outlen - 1 bytes, never inside a UTF-8 sequence).  Returns its length.
 */
size_t logscan_clean(const char *line, size_t len, char *out, size_t outlen);

#endif
