/*
 * Unit tests of the command-line client's pure parts: the option
 * parser's table (args.c), the event-stream parser (sse.c) fed in every
 * chunking, and the human tables (table.c).  The sources are included
 * directly: the client's objects are not part of the library the unit
 * tests link.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/args.c"
#include "../../src/cli/sse.c"
#include "../../src/cli/table.c"
#include "unit.h"

static const struct cli_opt globals[] = {
    {.name = "json"},
    {.name = "quiet", .short_name = 'q'},
    {.name = "api", .value = true},
    {0},
};
static const struct cli_opt opts[] = {
    {.name = "port", .short_name = 'p', .value = true},
    {.name = "follow", .short_name = 'f'},
    {0},
};

static int
parse(const char *line, struct cli_args *a, char *err)
{
	static char buf[512];
	static char *argv[32];
	char *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok_r(buf, " ", &save); w;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return cli_args_parse(opts, globals, argc, argv, a, err, 128);
}

static void
args_words_and_options_in_any_order(void)
{
	struct cli_args a;
	char err[128] = "";
	const char *ports[4];

	CHECK(parse("APP --port 3000 -p 8080 --json -q X", &a, err) == 0);
	CHECK(a.npos == 2);
	CHECK_STR(a.pos[0], "APP");
	CHECK_STR(a.pos[1], "X");
	CHECK(cli_args_all(&a, "port", ports, 4) == 2);
	CHECK_STR(ports[0], "3000");
	CHECK_STR(ports[1], "8080");
	CHECK_STR(cli_args_get(&a, "port"), "8080"); /* the last wins */
	CHECK(cli_args_has(&a, "json") && cli_args_has(&a, "quiet"));
	CHECK(!cli_args_has(&a, "follow"));
	CHECK(parse("--api=http://h:1 SB", &a, err) == 0);
	CHECK_STR(cli_args_get(&a, "api"), "http://h:1");
	CHECK(parse("-- --json -", &a, err) == 0);
	CHECK(a.npos == 2 && strcmp(a.pos[0], "--json") == 0 &&
	      strcmp(a.pos[1], "-") == 0);
	CHECK(!cli_args_has(&a, "json"));
}

static void
args_refuses_what_it_does_not_know(void)
{
	static const struct {
		const char *line, *msg;
	} bad[] = {
	    {"--bogus", "unknown option --bogus"},
	    {"--bogus=1", "unknown option --bogus"},
	    {"-x", "unknown option -x"},
	    {"-qf", "unknown option -qf"},
	    {"--port", "--port needs a value"},
	    {"--json=yes", "--json takes no value"},
	    {"--follow=1", "--follow takes no value"},
	};
	struct cli_args a;
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK(parse(bad[i].line, &a, err) < 0);
		CHECK_STR(err, bad[i].msg);
	}
	CHECK(parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", &a, err) < 0);
	CHECK_STR(err, "too many arguments");
}

/* --- sse ------------------------------------------------------------------ */

struct seen {
	char log[4096];
	int n;
	int stop_at;
};

static int
record(const struct sse_event *ev, void *arg)
{
	struct seen *s = arg;
	size_t l = strlen(s->log);

	snprintf(s->log + l, sizeof(s->log) - l, "[%s|%s|%.*s]", ev->id,
	         ev->type, (int)ev->data_len, ev->data);
	s->n++;
	return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static const char stream[] =
    ": keep-alive\n"
    "id: 0\nevent: status\ndata: {\"phase\":\"starting\"}\n\n"
    "id: 1\r\nevent: message\r\ndata:{\"text\":\"a\"}\r\n\r\n"
    "id: 2\nevent: tool\ndata: line1\ndata: line2\n\n"
    "event: nodata\n\n"
    "data: plain\n\n"
    "id: 3\nevent: done\ndata: {}\n\n";
static const char expect[] = "[0|status|{\"phase\":\"starting\"}]"
                             "[1|message|{\"text\":\"a\"}]"
                             "[2|tool|line1\nline2]"
                             "[2|message|plain]"
                             "[3|done|{}]";

static void
sse_any_chunking_gives_the_same_events(void)
{
	size_t len = strlen(stream);

	for (size_t chunk = 1; chunk <= len; chunk++) {
		struct seen s = {0};
		struct sse p;

		sse_init(&p, record, &s);
		for (size_t off = 0; off < len; off += chunk) {
			size_t n = len - off < chunk ? len - off : chunk;
			CHECK(sse_feed(&p, stream + off, n) == 0);
		}
		if (strcmp(s.log, expect) != 0) {
			fprintf(stderr, "  chunk %zu: %s\n", chunk, s.log);
			CHECK(0);
			sse_release(&p);
			break;
		}
		sse_release(&p);
	}
}

static void
sse_stops_when_told_and_caps_lines(void)
{
	struct seen s = {.stop_at = 2};
	struct sse p;
	char *big;

	sse_init(&p, record, &s);
	CHECK(sse_feed(&p, stream, strlen(stream)) == 7);
	CHECK(s.n == 2);
	sse_release(&p);

	/* A line without end past the cap fails instead of growing. */
	big = malloc(CLI_SSE_LINE_BYTES + 2);
	memset(big, 'x', CLI_SSE_LINE_BYTES + 1);
	sse_init(&p, record, &s);
	CHECK(sse_feed(&p, "data: ", 6) == 0);
	CHECK(sse_feed(&p, big, CLI_SSE_LINE_BYTES + 1) == -1);
	sse_release(&p);
	free(big);
}

static void
sse_keeps_the_last_id_and_cuts_long_ones(void)
{
	struct seen s = {0};
	struct sse p;
	char line[200];

	sse_init(&p, record, &s);
	memset(line, '9', sizeof(line));
	memcpy(line, "id: ", 4);
	line[sizeof(line) - 1] = '\n';
	CHECK(sse_feed(&p, line, sizeof(line)) == 0);
	CHECK(sse_feed(&p, "data: x\n\n", 9) == 0);
	CHECK(strlen(p.id) == sizeof(p.id) - 1);
	sse_release(&p);
}

/* --- tables ----------------------------------------------------------------
 */

static void
table_pads_columns_and_cuts_the_last(void)
{
	static const char *const head[] = {"ID", "NAME", "PROMPT", NULL};
	static const char *const r1[] = {"01A", "żółw", "short"};
	static const char *const r2[] = {"01BBB", NULL,
	                                 "a long prompt that goes on"};
	struct table t;
	struct buf out;

	CHECK(table_init(&t, head) == 0);
	CHECK(table_add(&t, r1) == 0);
	CHECK(table_add(&t, r2) == 0);
	buf_init(&out, 0);
	CHECK(table_render(&t, &out, 0, false) == 0);
	CHECK_STR(out.data, "ID     NAME  PROMPT\n"
	                    "01A    żółw  short\n"
	                    "01BBB  -     a long prompt that goes on\n");
	buf_reset(&out);
	CHECK(table_render(&t, &out, 20, false) == 0);
	CHECK_STR(out.data, "ID     NAME  PROMPT\n"
	                    "01A    żółw  short\n"
	                    "01BBB  -     a long…\n");
	buf_reset(&out);
	CHECK(table_render(&t, &out, 0, true) == 0);
	CHECK(strncmp(out.data, "\033[1mID", 6) == 0);
	buf_release(&out);
	table_release(&t);
}

static void
table_cells_cannot_drive_the_terminal(void)
{
	static const char *const head[] = {"NAME", NULL};
	static const char *const r1[] = {"evil\033]0;title\007\r\nname"};
	struct table t;
	struct buf out;

	table_init(&t, head);
	table_add(&t, r1);
	buf_init(&out, 0);
	table_render(&t, &out, 0, false);
	CHECK_STR(out.data, "NAME\nevil?]0;title???name\n");
	CHECK(table_text_width("żółw") == 4);
	buf_release(&out);
	table_release(&t);
}

static const struct unit_test tests[] = {
    {"args: words and options in any order",
     args_words_and_options_in_any_order},
    {"args: unknown options, missing and unwanted values",
     args_refuses_what_it_does_not_know},
    {"sse: every chunking gives the same events",
     sse_any_chunking_gives_the_same_events},
    {"sse: a callback stops the stream; lines are capped",
     sse_stops_when_told_and_caps_lines},
    {"sse: a long id is cut, never overflows",
     sse_keeps_the_last_id_and_cuts_long_ones},
    {"table: columns padded by characters, the last cut",
     table_pads_columns_and_cuts_the_last},
    {"table: control characters are shown as ?",
     table_cells_cannot_drive_the_terminal},
};

int
main(void)
{
	return UNIT_RUN("cli", tests);
}
