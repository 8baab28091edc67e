/*
 * Logging: one line per event on stderr.  Two formats (log_set_format,
 * from SANDBOXD_LOG_FORMAT): text, "time level message", and json, one
 * object per line: {"ts","level","msg"} and, from log_with(), "fields".
 * Safe to call from any thread.  Never pass secrets.
 */
#ifndef LIB_LOG_H
#define LIB_LOG_H

#include <stddef.h>

enum log_format {
	LOG_TEXT,
	LOG_JSON,
};

/* Set once at start, before threads; text until then. */
void log_set_format(enum log_format f);
/* "text" -> LOG_TEXT, "json" -> LOG_JSON, else -1. */
int log_format_parse(const char *s);

void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A line with fields: kv is NULL-terminated name, value pairs (text
 * values).  In the text format they follow the message as name=value.
 */
void log_with(const char *level, const char *const *kv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The JSON line of one event into line (len bytes, ends in '\n', never
 * cut inside an escape); returns its length.  For the tests.
 */
size_t log_json_line(char *line, size_t len, const char *ts, const char *level,
                     const char *msg, const char *const *kv);

#endif
