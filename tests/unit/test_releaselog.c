/*
 * Unit tests of a build log made into events (api/releaselog.c's
 * api_loglines): every chunking gives the same events, line ends of
 * every kind, ids that are the file offset after the byte that ended
 * each line (a CRLF's LF is skipped by the state, cr), control
 * bytes and escape sequences that cannot reach a terminal, long lines
 * cut on a character's boundary, and a full buffer that leaves nothing
 * half-consumed.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "unit.h"

static const char log_text[] = "> app@1.0.0 build\r\n"
                               "\x1b[32mvite\x1b[39m v5 building\n"
                               "progress 1\rprogress 2\r\n"
                               "\n"
                               "tab\tand bell\a end";

static const char log_events[] =
    "event: log\nid: 18\ndata: > app@1.0.0 build\n\n"
    "event: log\nid: 46\ndata: vite v5 building\n\n"
    "event: log\nid: 57\ndata: progress 1\n\n"
    "event: log\nid: 68\ndata: progress 2\n\n"
    "event: log\nid: 70\ndata: \n\n"
    "event: log\nid: 87\ndata: tab\tand bell? end\n\n";

static void
lines(size_t step, struct buf *out)
{
	struct api_loglines *l = calloc(1, sizeof(*l));
	size_t n = strlen(log_text);

	buf_init(out, 1u << 20);
	for (size_t i = 0; i < n; i += step)
		CHECK(api_loglines_feed(l, log_text + i,
		                        i + step > n ? n - i : step, out) == 0);
	CHECK(api_loglines_flush(l, out) == 0);
	CHECK(l->off == (int64_t)n);
	free(l);
}

static void
every_chunking_gives_the_same_events(void)
{
	for (size_t step = 1; step <= sizeof(log_text); step++) {
		struct buf out;
		lines(step, &out);
		CHECK_STR(out.data, log_events);
		buf_release(&out);
	}
}

static void
long_lines_are_cut_on_a_character(void)
{
	struct api_loglines *l = calloc(1, sizeof(*l));
	size_t n = RELEASELOG_LINE_MAX * 3;
	char *big = malloc(n + 1);
	struct buf out;
	const char *data;

	/* "é" (2 bytes) repeated, then a short line. */
	for (size_t i = 0; i + 1 < n; i += 2) {
		big[i] = (char)0xc3;
		big[i + 1] = (char)0xa9;
	}
	big[n - 1] = '\n';
	buf_init(&out, 1u << 20);
	CHECK(api_loglines_feed(l, "x", 1, &out) == 0);
	CHECK(api_loglines_feed(l, big, n, &out) == 0);
	CHECK(api_loglines_feed(l, "ok\n", 3, &out) == 0);
	data = strstr(out.data, "data: x");
	CHECK(data != NULL);
	/* The line: "x", then as many whole "é" as fit, then the mark. */
	CHECK(data &&
	      strncmp(data + 6 + RELEASELOG_LINE_MAX - 1, " [cut]\n", 7) == 0);
	CHECK(data && (unsigned char)data[6 + RELEASELOG_LINE_MAX - 2] == 0xa9);
	CHECK(strstr(out.data, "data: ok\n\n") != NULL);
	CHECK(strstr(out.data, "id: 12292\n") != NULL); /* 1 + n */
	buf_release(&out);
	free(big);
	free(l);
}

static void
a_full_buffer_consumes_nothing(void)
{
	struct api_loglines *l = calloc(1, sizeof(*l));
	struct buf out;

	buf_init(&out, 48); /* room for one event, not two */
	CHECK(api_loglines_feed(l, "one\n", 4, &out) == 0);
	CHECK(api_loglines_feed(l, "two\n", 4, &out) == -1);
	CHECK(l->off == 4);
	CHECK_STR(out.data, "event: log\nid: 4\ndata: one\n\n");
	buf_reset(&out);
	CHECK(api_loglines_feed(l, "two\n", 4, &out) == 0);
	CHECK_STR(out.data, "event: log\nid: 8\ndata: two\n\n");
	buf_release(&out);
	free(l);
}

static const struct unit_test tests[] = {
    {"every chunking gives the same events",
     every_chunking_gives_the_same_events},
    {"long lines are cut on a character's boundary",
     long_lines_are_cut_on_a_character},
    {"a full buffer consumes nothing", a_full_buffer_consumes_nothing},
};

int
main(void)
{
	return UNIT_RUN("releaselog", tests);
}
