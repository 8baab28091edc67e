/*
 * libFuzzer target: the command line's reader of the daemon's event
 * streams (client/sse.c), which `task run --follow` and `logs -f` feed
 * with what comes off the socket.  The first byte sets the size of the
 * pieces; the rest is the stream.  Fed whole and in pieces, the same
 * events come out; each has a NUL-terminated id and type, data within
 * CLI_SSE_DATA_BYTES, and nothing may crash, leak or read out of
 * bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/sse.h"
#include "lib/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
collect(const struct sse_event *ev, void *arg)
{
	struct buf *b = arg;

	if (ev->id == NULL || ev->type == NULL || ev->data == NULL ||
	    ev->data_len > CLI_SSE_DATA_BYTES || strlen(ev->id) >= 64 ||
	    strlen(ev->type) >= 64)
		__builtin_trap();
	buf_appendf(b, "%s|%s|%zu|", ev->id, ev->type, ev->data_len);
	buf_append(b, ev->data, ev->data_len);
	buf_append(b, "\n", 1);
	/* an event named "stop" ends the stream, as a handler may */
	return strcmp(ev->type, "stop") == 0 ? 1 : 0;
}

static int
run(const uint8_t *p, size_t n, size_t step, struct buf *out)
{
	struct sse s;
	int rc = 0;

	sse_init(&s, collect, out);
	for (size_t off = 0; off < n && rc == 0; off += step)
		rc = sse_feed(&s, (const char *)p + off,
		              step < n - off ? step : n - off);
	sse_release(&s);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf a, b;
	int ra, rb;

	if (size == 0)
		return 0;
	buf_init(&a, 64u << 20);
	buf_init(&b, 64u << 20);
	ra = run(data + 1, size - 1, size, &a);
	rb = run(data + 1, size - 1, 1 + data[0] % 32, &b);
	if (ra != rb || a.len != b.len ||
	    (a.len && memcmp(a.data, b.data, a.len) != 0))
		__builtin_trap();
	buf_release(&a);
	buf_release(&b);
	return 0;
}
