/*
 * libFuzzer target: a build's log made into events (api/loglines.c).
 * The log is the output of the app's build, so its bytes are anything.
 * Fed whole, and fed in two pieces cut where the first byte says, the
 * events must be the same; every event is `event: log` / `id: N` /
 * `data: X` and an empty line, with N rising and at most the input's
 * size, and X one line (no CR, LF, ESC or other control byte but TAB) of
 * at most RELEASELOG_LINE_MAX bytes and the cut's mark.  Nothing may
 * crash or read out of bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
feed(const uint8_t *data, size_t size, size_t cut, struct buf *out)
{
	static struct api_loglines l;

	memset(&l, 0, sizeof(l));
	buf_init(out, 64u << 20);
	if (api_loglines_feed(&l, (const char *)data, cut, out) < 0 ||
	    api_loglines_feed(&l, (const char *)data + cut, size - cut, out) <
	        0 ||
	    api_loglines_flush(&l, out) < 0 || l.off != (int64_t)size)
		abort();
}

/* Checks each event of out; aborts on a malformed one. */
static void
check_events(const struct buf *out, size_t size)
{
	const char *p = out->data ? out->data : "", *end = p + out->len;
	long long last = 0;

	while (p < end) {
		const char *data, *nl;
		long long id;
		char *after;

		if (strncmp(p, "event: log\nid: ", 15) != 0)
			abort();
		id = strtoll(p + 15, &after, 10);
		if (id <= last || id > (long long)size ||
		    strncmp(after, "\ndata: ", 7) != 0)
			abort();
		last = id;
		data = after + 7;
		nl = memchr(data, '\n', (size_t)(end - data));
		if (nl == NULL || nl + 1 >= end || nl[1] != '\n' ||
		    (size_t)(nl - data) > RELEASELOG_LINE_MAX + 6)
			abort();
		for (const char *c = data; c < nl; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t') ||
			    *c == 0x7f)
				abort();
		p = nl + 2;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf whole, split;
	size_t cut = size ? data[0] % (size + 1) : 0;

	feed(data, size, 0, &whole);
	feed(data, size, cut, &split);
	if (whole.len != split.len ||
	    (whole.len && memcmp(whole.data, split.data, whole.len) != 0))
		abort();
	check_events(&whole, size);
	buf_release(&whole);
	buf_release(&split);
	return 0;
}
