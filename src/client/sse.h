/*
 * sse: the client's parser of a text/event-stream, fed the bytes as they
 * come in chunks of any size.  An event is dispatched at its empty line
 * (LF or CRLF) with its id, type and data (data lines joined by "\n");
 * comment lines (": keep-alive") are skipped; an event without data is
 * dropped, as the specification says.  A line longer than
 * CLI_SSE_LINE_BYTES or data longer than CLI_SSE_DATA_BYTES fails the
 * stream rather than growing without bound.
 */
#ifndef CLIENT_SSE_H
#define CLIENT_SSE_H

#include <stddef.h>

#include "lib/buf.h"

#define CLI_SSE_LINE_BYTES (4u << 20)
#define CLI_SSE_DATA_BYTES (8u << 20)

struct sse_event {
	const char *id;   /* "" when the event had none */
	const char *type; /* "message" when the event had none */
	const char *data;
	size_t data_len;
};

/* Returns 0 to go on, anything else to stop (sse_feed returns it). */
typedef int (*sse_fn)(const struct sse_event *ev, void *arg);

struct sse {
	struct buf line;
	struct buf data;
	char id[64];
	char type[64];
	sse_fn fn;
	void *arg;
};

void sse_init(struct sse *s, sse_fn fn, void *arg);
/* 0; the callback's non-zero answer; -1 for a line or data too long. */
int sse_feed(struct sse *s, const char *p, size_t n);
void sse_release(struct sse *s);

#endif
