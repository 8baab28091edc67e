/*
 * Unit tests of the command-line client's pure parts: the option
 * parser's table (args.c), the event-stream parser (sse.c) fed in every
 * chunking, the human tables (table.c), the exit statuses, and how a
 * task's events are rendered (follow.c, fed a whole stream with every
 * event type, stdout captured), and the publish commands' parts: sizes,
 * ages, a RELEASE argument, a build log followed to its end.  The sources are
 * included directly: the client's objects are not part of the library the unit
 * tests link.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/client/args.c"
#include "../../src/client/calls.c"
#include "../../src/client/client.c"
#include "../../src/client/cmd_publish.c"
#include "../../src/client/follow.c"
#include "../../src/client/sse.c"
#include "../../src/client/table.c"
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

/* --- exit statuses, paths ----------------------------------------------------
 */

static void
exit_statuses_follow_the_table(void)
{
	static const struct {
		long status;
		int rc;
	} http[] = {{400, 1}, {401, 4}, {403, 4}, {404, 5}, {405, 1}, {409, 6},
	            {413, 7}, {500, 1}, {502, 1}, {503, 8}, {504, 1}, {507, 8}};
	static const struct {
		const char *task;
		int rc;
	} tasks[] = {
	    {"{\"status\":\"succeeded\"}", CLI_OK},
	    {"{\"status\":\"failed\",\"failure_reason\":\"agent_error\"}",
	     CLI_TASK_FAILED},
	    {"{\"status\":\"failed\",\"failure_reason\":\"agent_timeout\"}",
	     CLI_TASK_TIMEOUT},
	    {"{\"status\":\"cancelled\",\"failure_reason\":\"cancelled\"}",
	     CLI_TASK_CANCELLED},
	    {"{\"status\":\"failed\",\"failure_reason\":\"oom_killed\"}",
	     CLI_TASK_FAILED},
	    {"{}", CLI_TASK_FAILED},
	};
	char err[64], p[128];

	for (size_t i = 0; i < sizeof(http) / sizeof(http[0]); i++)
		CHECK(cli_status_exit(http[i].status) == http[i].rc);
	for (size_t i = 0; i < sizeof(tasks) / sizeof(tasks[0]); i++) {
		struct jv *t = jv_parse(tasks[i].task, strlen(tasks[i].task), 4,
		                        err, sizeof(err));
		CHECK(cli_task_exit(t) == tasks[i].rc);
		jv_free(t);
	}
	CHECK(cli_pathf(p, sizeof(p), "/v1/apps/%s/files?path=%s", "../x",
	                "a b/c&d") == 0);
	CHECK_STR(p, "/v1/apps/..%2Fx/files?path=a%20b%2Fc%26d");
	CHECK(cli_pathf(p, 12, "/v1/apps/%s", "01ARZ3NDEK") < 0);
}

/* --- rendering a task's events ----------------------------------------------
 */

static const char task_stream[] =
    "id: 0\nevent: status\ndata: {\"phase\":\"starting\"}\n\n"
    "id: 1\nevent: status\ndata: {\"phase\":\"model\",\"model\":\"m-1\"}\n\n"
    "id: 2\nevent: status\ndata: {\"phase\":\"agent_running\"}\n\n"
    "id: 3\nevent: message\ndata: {\"role\":\"agent\",\"text\":\"Hi "
    "\\u001b[31mthere\"}\n\n"
    "id: 4\nevent: tool\ndata: "
    "{\"name\":\"edit\",\"status\":\"running\",\"path\":\"a.js\"}\n\n"
    "id: 5\nevent: tool\ndata: "
    "{\"name\":\"edit\",\"status\":\"completed\",\"path\":\"a.js\"}\n\n"
    "id: 6\nevent: tool\ndata: "
    "{\"name\":\"bash\",\"status\":\"error\",\"path\":\"rm x\"}\n\n"
    "id: 7\nevent: message\ndata: "
    "{\"role\":\"agent_error\",\"text\":\"boom\"}\n\n"
    "id: 8\nevent: status\ndata: {\"phase\":\"build_check\",\"build\":\"npm "
    "run build\"}\n\n"
    "id: 9\nevent: build\ndata: "
    "{\"build_ok\":false,\"build_status\":\"failed\",\"build_error_message\":"
    "\"err: x\"}\n\n"
    ": keep-alive\n\n"
    "id: 10\nevent: done\ndata: "
    "{\"status\":\"failed\",\"failure_reason\":\"agent_error\",\"error_"
    "message\":\"boom\",\"files_changed\":[\"a.js\"],\"duration_ms\":1500,"
    "\"tokens\":{\"input\":10,\"output\":5,\"total\":15,\"cost\":0.5}}\n\n";

static const char task_text[] =
    "• starting\n"
    "• model: m-1\n"
    "• agent running\n"
    "Hi [31mthere\n"
    "  ✓ edit a.js\n"
    "  ✗ bash rm x\n"
    "agent error: boom\n"
    "• build check: npm run build\n"
    "✗ build failed\n"
    "err: x\n"
    "✗ task failed (agent_error) in 1.5s\n"
    "  boom\n"
    "  files changed: a.js\n"
    "  tokens: 15 (input 10, output 5), cost $0.5000\n";

/* Feeds the stream to a follow of c; what it printed into out. */
static void
render(struct cli *c, char *out, size_t len, long *last_id, bool *done)
{
	struct follow f = {.c = c, .last_id = -1, .at_line_start = true};
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n;

	fflush(stdout);
	dup2(fileno(tmp), STDOUT_FILENO);
	sse_init(&f.sse, on_event, &f);
	/* In two pieces, cut inside an event. */
	on_bytes(task_stream, 100, &f);
	on_bytes(task_stream + 100, strlen(task_stream) - 100, &f);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	*last_id = f.last_id;
	*done = f.done;
	CHECK(cli_task_exit(f.result) == CLI_TASK_FAILED);
	jv_free(f.result);
	sse_release(&f.sse);
}

static void
follow_renders_every_event_type(void)
{
	struct cli c = {0};
	char out[4096];
	long last = 0;
	bool done = false;

	render(&c, out, sizeof(out), &last, &done);
	CHECK_STR(out, task_text);
	CHECK(last == 10);
	CHECK(done);
}

static void
follow_json_prints_each_events_data_on_a_line(void)
{
	struct cli c = {.json = true};
	char out[4096];
	long last = 0;
	bool done = false;
	int lines = 0;

	render(&c, out, sizeof(out), &last, &done);
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	CHECK(lines == 11);
	CHECK(strncmp(out, "{\"phase\":\"starting\"}\n", 21) == 0);
	CHECK(strstr(out, "\n{\"status\":\"failed\",") != NULL);
}

static void
follow_colours_only_when_fancy(void)
{
	struct cli c = {.fancy = true};
	char out[4096];
	long last = 0;
	bool done = false;

	render(&c, out, sizeof(out), &last, &done);
	CHECK(strstr(out, "\033[36m• starting\033[0m") != NULL);
	CHECK(strstr(out, "\033[31m✗\033[0m") != NULL);
	/* The agent's own escape is still gone. */
	CHECK(strstr(out, "Hi [31mthere") != NULL);
}

/* --- the publish commands ---------------------------------------------- */

static void
publish_sizes_ages_and_release_numbers(void)
{
	char t[32];

	CHECK_STR(cli_size_text(0, t, sizeof(t)), "0 B");
	CHECK_STR(cli_size_text(1023, t, sizeof(t)), "1023 B");
	CHECK_STR(cli_size_text(1536, t, sizeof(t)), "1.5 KiB");
	CHECK_STR(cli_size_text(300LL << 20, t, sizeof(t)), "300 MiB");
	CHECK_STR(cli_size_text(-1, t, sizeof(t)), "-");
	CHECK_STR(cli_age_text(59, t, sizeof(t)), "59s");
	CHECK_STR(cli_age_text(61, t, sizeof(t)), "1m");
	CHECK_STR(cli_age_text(7300, t, sizeof(t)), "2h");
	CHECK_STR(cli_age_text(3 * 86400 + 5, t, sizeof(t)), "3d");
	CHECK_STR(cli_age_text(-5, t, sizeof(t)), "0s");
	CHECK(cli_release_number("3") == 3);
	CHECK(cli_release_number("#12") == 12);
	CHECK(cli_release_number("0") == -1);
	CHECK(cli_release_number("3a") == -1);
	CHECK(cli_release_number("01JF0000000000000000000000") == -1);
	CHECK(cli_release_number("1234567890") == -1);
	CHECK(cli_release_number("") == -1);
}

static const char build_stream[] =
    "event: log\nid: 12\ndata: > vite build\n\n"
    ": keep-alive\n\n"
    "event: log\nid: 40\ndata: dist/index.html \x1b[2J 0.4 kB\n\n"
    "event: end\ndata: {\"id\":\"R1\",\"number\":2,\"status\":"
    "\"failed\",\"error\":\"npm run build exited 1\"}\n\n"
    "event: log\nid: 50\ndata: after the end\n\n";

static void
publish_follow_prints_lines_and_stops_at_end(void)
{
	struct cli c = {0};
	struct pub_follow f = {.c = &c};
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO), null;
	char out[512];
	size_t n;

	fflush(stdout);
	dup2(fileno(tmp), STDOUT_FILENO);
	sse_init(&f.sse, pub_on_event, &f);
	/* Cut inside the second event: lines come as they are whole. */
	CHECK(pub_on_bytes(build_stream, 60, &f) == 60);
	CHECK(f.lines == 1);
	pub_on_bytes(build_stream + 60, strlen(build_stream) - 60, &f);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	/* The escape byte is '?'; nothing after the end is read. */
	CHECK_STR(out, "> vite build\ndist/index.html ?[2J 0.4 kB\n");
	CHECK_STR(f.last, "40");
	CHECK(f.lines == 2);
	CHECK_STR(jv_str(jv_get(f.result, "status")), "failed");
	/* The failure's one line goes to stderr: not into the test's output. */
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	dup2(null, STDERR_FILENO);
	close(null);
	CHECK(pub_outcome(&c, "R1", "http://x", f.result) == CLI_EFAIL);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	jv_free(f.result);
	sse_release(&f.sse);
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
    {"exit statuses of answers and tasks; escaped paths",
     exit_statuses_follow_the_table},
    {"follow: every event type rendered", follow_renders_every_event_type},
    {"follow --json: each event's data on a line",
     follow_json_prints_each_events_data_on_a_line},
    {"follow: colour only on a terminal", follow_colours_only_when_fancy},
    {"publish: sizes, ages and release numbers",
     publish_sizes_ages_and_release_numbers},
    {"publish --follow: lines as they come, the end's outcome",
     publish_follow_prints_lines_and_stops_at_end},
};

int
main(void)
{
	return UNIT_RUN("cli", tests);
}
