/*
 * jw.h - a JSON writer into one bounded, growable buffer.
 *
 * Appends never fail individually: past the cap (or out of memory) the
 * writer is marked full and further appends are dropped, so callers write
 * a whole answer and check jw_ok() once at the end.
 */
#ifndef SUPERVISOR_JW_H
#define SUPERVISOR_JW_H

#include <stdbool.h>
#include <stddef.h>

struct jw {
	char *p;    /* NUL-terminated while not full */
	size_t len; /* bytes written */
	size_t cap; /* bytes allocated */
	size_t max; /* hard cap on len */
	bool full;
};

void jw_init(struct jw *w, size_t max);
void jw_release(struct jw *w);

/* Starts over with an empty buffer (keeps the allocation). */
void jw_reset(struct jw *w);

/* Raw text, e.g. "{\"ok\":true". */
void jw_raw(struct jw *w, const char *s);

/* A quoted, escaped JSON string of len bytes of s (any bytes: invalid
 * UTF-8 becomes U+FFFD, control characters are escaped). */
void jw_str(struct jw *w, const char *s, size_t len);

/* "key": then the value written by the next call; a comma before the key
 * when comma is true. */
void jw_key(struct jw *w, const char *key, bool comma);

void jw_int(struct jw *w, long long v);
void jw_bool(struct jw *w, bool v);

/* The length of the valid multi-byte UTF-8 sequence at s (2-4; n bytes
 * available), 0 when it is invalid or s[0] is ASCII. */
size_t jw_utf8_len(const unsigned char *s, size_t n);

/* Whether everything written fit. */
bool jw_ok(const struct jw *w);

#endif
