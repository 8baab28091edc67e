/*
 * Logging to stderr.  Each line is formatted into a stack buffer and
 * written with one write(2), so lines from concurrent threads never
 * interleave.  Long messages are truncated rather than split.
 *
 * The json format escapes as RFC 8259 asks: '"' and '\\', the control
 * characters as \n, \t … or \u00XX, and every byte that does not begin
 * well-formed UTF-8 as \ufffd, since a message may quote what a sandbox
 * sent.  A value is cut at a character, never inside an escape, and the
 * object is always closed.
 */
#include "lib/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/utf8.h"

#define LOG_LINE_BYTES 2048

static atomic_int format = LOG_TEXT;

void
log_set_format(enum log_format f)
{
	atomic_store(&format, (int)f);
}

int
log_format_parse(const char *s)
{
	if (strcmp(s, "text") == 0)
		return LOG_TEXT;
	if (strcmp(s, "json") == 0)
		return LOG_JSON;
	return -1;
}

/* Appends s escaped, leaving room for the tail bytes the line still
 * needs; returns the new length. */
static size_t
json_str(char *line, size_t n, size_t room, const char *s)
{
	size_t len = strlen(s);

	line[n++] = '"';
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t cl = utf8_char_len(s + i, len - i);
		char esc[8];
		size_t el;

		if (cl == 0) {
			el = (size_t)snprintf(esc, sizeof(esc), "\\ufffd");
			cl = 1;
		} else if (c == '"' || c == '\\') {
			el = (size_t)snprintf(esc, sizeof(esc), "\\%c", c);
		} else if (c == '\n') {
			el = (size_t)snprintf(esc, sizeof(esc), "\\n");
		} else if (c == '\t') {
			el = (size_t)snprintf(esc, sizeof(esc), "\\t");
		} else if (c == '\r') {
			el = (size_t)snprintf(esc, sizeof(esc), "\\r");
		} else if (c < 0x20 || c == 0x7f) {
			el = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", c);
		} else {
			memcpy(esc, s + i, cl);
			el = cl;
		}
		if (n + el + 1 > room)
			break;
		memcpy(line + n, esc, el);
		n += el;
		i += cl;
	}
	line[n++] = '"';
	return n;
}

/* Appends a literal when it fits in room. */
static size_t
lit(char *line, size_t n, size_t room, const char *s)
{
	size_t l = strlen(s);

	if (n + l > room)
		return n;
	memcpy(line + n, s, l);
	return n + l;
}

size_t
log_json_line(char *line, size_t len, const char *ts, const char *level,
              const char *msg, const char *const *kv)
{
	/* The tail "}}\n" always fits: room stops short of it. */
	size_t room, n = 0;

	if (len < 128)
		return 0;
	room = len - 4;

	n = lit(line, n, room, "{\"ts\":");
	n = json_str(line, n, room - 40, ts);
	n = lit(line, n, room, ",\"level\":");
	n = json_str(line, n, room - 30, level);
	n = lit(line, n, room, ",\"msg\":");
	n = json_str(line, n, room - 20, msg);
	if (kv && kv[0]) {
		size_t before = n;
		n = lit(line, n, room, ",\"fields\":{");
		for (size_t i = 0; kv[i] && kv[i + 1] && n > before; i += 2) {
			if (i)
				n = lit(line, n, room, ",");
			n = json_str(line, n, room - 8, kv[i]);
			n = lit(line, n, room, ":");
			n = json_str(line, n, room - 4, kv[i + 1]);
		}
		if (n > before)
			line[n++] = '}';
	}
	line[n++] = '}';
	line[n++] = '\n';
	line[n] = '\0';
	return n;
}

static void
log_line(const char *level, const char *const *kv, const char *fmt, va_list ap)
{
	char line[LOG_LINE_BYTES], msg[LOG_LINE_BYTES - 256], ts[32];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (atomic_load(&format) == LOG_JSON) {
		size_t l =
		    log_json_line(line, sizeof(line), ts, level, msg, kv);
		(void)!write(STDERR_FILENO, line, l);
		return;
	}
	n = snprintf(line, sizeof(line), "%s %s %s", ts, level, msg);
	for (size_t i = 0; kv && kv[i] && kv[i + 1] && n < (int)sizeof(line);
	     i += 2)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%s",
		              kv[i], kv[i + 1]);
	if (n >= (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

void
log_with(const char *level, const char *const *kv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line(level, kv, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("info", NULL, fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("warn", NULL, fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_line("error", NULL, fmt, ap);
	va_end(ap);
}
