/*
 * The event-stream parser (sse.h).  Bytes gather in a line buffer up to
 * the next LF; a complete line is a field ("name: value", one space
 * after the colon dropped) or, when empty, the end of an event.  The
 * event's id and type are short (the daemon's ids are integers, its
 * types single words): longer ones are cut, never overflow.
 */
#include "client/sse.h"

#include <stdio.h>
#include <string.h>

void
sse_init(struct sse *s, sse_fn fn, void *arg)
{
	memset(s, 0, sizeof(*s));
	buf_init(&s->line, CLI_SSE_LINE_BYTES);
	buf_init(&s->data, CLI_SSE_DATA_BYTES);
	s->fn = fn;
	s->arg = arg;
}

void
sse_release(struct sse *s)
{
	buf_release(&s->line);
	buf_release(&s->data);
}

static int
dispatch(struct sse *s)
{
	struct sse_event ev;
	int rc = 0;

	if (s->data.len > 0) {
		ev.id = s->id;
		ev.type = s->type[0] ? s->type : "message";
		ev.data = s->data.data;
		ev.data_len = s->data.len;
		rc = s->fn(&ev, s->arg);
	}
	buf_reset(&s->data);
	s->type[0] = '\0';
	/* The id persists across events (the last event id), as specified. */
	return rc;
}

static int
field(struct sse *s, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len);
	size_t nlen = colon ? (size_t)(colon - line) : len;
	const char *v = colon ? colon + 1 : line + len;
	size_t vlen = (size_t)(line + len - v);

	if (nlen == 0)
		return 0; /* a comment */
	if (vlen > 0 && *v == ' ')
		v++, vlen--;
	if (nlen == 4 && memcmp(line, "data", 4) == 0) {
		if (s->data.len > 0 && buf_append(&s->data, "\n", 1) < 0)
			return -1;
		if (buf_append(&s->data, v, vlen) < 0)
			return -1;
	} else if (nlen == 5 && memcmp(line, "event", 5) == 0) {
		snprintf(s->type, sizeof(s->type), "%.*s", (int)vlen, v);
	} else if (nlen == 2 && memcmp(line, "id", 2) == 0) {
		if (memchr(v, '\0', vlen) == NULL)
			snprintf(s->id, sizeof(s->id), "%.*s", (int)vlen, v);
	}
	return 0;
}

static int
line_done(struct sse *s)
{
	size_t len = s->line.len;
	const char *l = s->line.data ? s->line.data : "";
	int rc;

	if (len > 0 && l[len - 1] == '\r')
		len--;
	rc = len == 0 ? dispatch(s) : field(s, l, len);
	buf_reset(&s->line);
	return rc;
}

int
sse_feed(struct sse *s, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		int rc;

		if (buf_append(&s->line, p, take) < 0)
			return -1;
		if (nl == NULL)
			return 0;
		p += take + 1;
		n -= take + 1;
		rc = line_done(s);
		if (rc != 0)
			return rc;
	}
	return 0;
}
