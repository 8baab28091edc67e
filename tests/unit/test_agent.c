/*
 * Unit tests of the agents' stream parsers: recorded sessions of each CLI
 * (tests/unit/fixtures/agent/) come out as the exact canonical events,
 * final message, error and tokens; bad lines are skipped; every limit
 * holds; and the fake agents the integration tests use
 * (tests/fake-agent/) speak a stream these parsers understand.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/buf.h"
#include "lib/jv.h"
#include "lib/utf8.h"
#include "unit.h"

#define FIXTURES "tests/unit/fixtures/agent/"

/* Events as text, one "type data" line each, for exact comparison. */
struct run {
	struct agent_parser *p;
	struct buf events;
	size_t nevents;
	bool invalid_utf8;
	struct agent_outcome out;
};

static void
collect(void *ctx, const char *type, struct jv *data)
{
	struct run *r = ctx;
	size_t start = r->events.len;

	r->nevents++;
	buf_appendf(&r->events, "%s ", type);
	jv_dump(data, &r->events);
	buf_append(&r->events, "\n", 1);
	if (!utf8_valid(r->events.data + start, r->events.len - start))
		r->invalid_utf8 = true;
	jv_free(data);
}

static void
run_begin(struct run *r, enum agent_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->p = agent_parser_new(kind);
	buf_init(&r->events, 0);
}

static void
feed(struct run *r, const char *line)
{
	agent_parse_line(r->p, line, strlen(line), collect, r);
}

/* Feeds text split at '\n', as the control plane reads a file. */
static void
feed_text(struct run *r, const char *text, size_t len)
{
	const char *end = text + len, *nl;

	while (text < end) {
		nl = memchr(text, '\n', (size_t)(end - text));
		if (nl == NULL)
			nl = end;
		agent_parse_line(r->p, text, (size_t)(nl - text), collect, r);
		text = nl + 1;
	}
}

static int
read_file(const char *path, struct buf *b)
{
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		buf_append(b, chunk, (size_t)n);
	close(fd);
	return n < 0 ? -1 : 0;
}

static void
feed_fixture(struct run *r, const char *name)
{
	char path[256];
	struct buf b;

	snprintf(path, sizeof(path), FIXTURES "%s", name);
	buf_init(&b, 0);
	if (read_file(path, &b) < 0) {
		fprintf(stderr, "  cannot read %s (run from the repo root)\n",
		        path);
		unit_failed = 1;
	}
	feed_text(r, b.data ? b.data : "", b.len);
	buf_release(&b);
}

static void
run_finish(struct run *r, int exit_code)
{
	agent_parser_finish(r->p, exit_code, &r->out);
	CHECK(!r->invalid_utf8);
}

static void
run_end(struct run *r)
{
	agent_outcome_release(&r->out);
	agent_parser_free(r->p);
	buf_release(&r->events);
}

static const char *
events(const struct run *r)
{
	return r->events.data ? r->events.data : "";
}

static bool
near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

static void
kinds_have_names(void)
{
	CHECK(agent_kind_parse("opencode") == AGENT_OPENCODE);
	CHECK(agent_kind_parse("claude-code") == AGENT_CLAUDE);
	CHECK(agent_kind_parse("claude") == -1);
	CHECK(agent_kind_parse("codex") == -1);
	CHECK(agent_kind_parse("") == -1);
	CHECK(agent_kind_parse(NULL) == -1);
	CHECK_STR(agent_kind_name(AGENT_OPENCODE), "opencode");
	CHECK_STR(agent_kind_name(AGENT_CLAUDE), "claude-code");
}

static void
opencode_session(void)
{
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	feed_fixture(&r, "opencode_session.jsonl");
	run_finish(&r, 0);
	CHECK_STR(
	    events(&r),
	    "message {\"role\":\"agent\",\"text\":\"I'll look at the app "
	    "first, then add a todo list.\"}\n"
	    "tool {\"name\":\"glob\",\"status\":\"completed\",\"path\":\"src/"
	    "**/*.tsx\"}\n"
	    "tool {\"name\":\"read\",\"status\":\"completed\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "tool {\"name\":\"edit\",\"status\":\"completed\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "tool {\"name\":\"write\",\"status\":\"completed\",\"path\":\"/"
	    "home/sandbox/workspace/app/src/TodoList.tsx\"}\n"
	    "tool {\"name\":\"bash\",\"status\":\"completed\",\"path\":\"pnpm "
	    "build\"}\n"
	    "message {\"role\":\"agent\",\"text\":\"Added a todo list: "
	    "`src/TodoList.tsx` keeps items in localStorage, and `App.tsx` "
	    "renders it. The build passes.\"}\n");
	CHECK_STR(r.out.final_message,
	          "I'll look at the app first, then add a todo list.\n\n"
	          "Added a todo list: `src/TodoList.tsx` keeps items in "
	          "localStorage, and `App.tsx` renders it. The build passes.");
	CHECK(r.out.error == NULL);
	CHECK(r.out.any_output);
	CHECK(r.out.tokens.input == 9800 + 11250 + 1420);
	CHECK(r.out.tokens.output == 120 + 610 + 95);
	CHECK(r.out.tokens.reasoning == 64);
	CHECK(r.out.tokens.cache_read == 9700 + 10900);
	CHECK(r.out.tokens.cache_write == 1200);
	CHECK(near(r.out.tokens.cost, 0.0031 + 0.0042 + 0.0018));
	run_end(&r);
}

static void
opencode_api_error(void)
{
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	feed_fixture(&r, "opencode_error.jsonl");
	run_finish(&r, 1);
	CHECK_STR(events(&r), "message {\"role\":\"agent_error\",\"text\":"
	                      "\"Rate limit exceeded\"}\n");
	/* The API error says more than the exit code, so it wins. */
	CHECK_STR(r.out.error, "agent error: Rate limit exceeded");
	CHECK(r.out.final_message == NULL);
	CHECK(!r.out.any_output);
	run_end(&r);
}

static void
opencode_error_falls_back(void)
{
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	feed(&r, "{\"type\":\"error\",\"error\":{\"name\":\"UnknownError\","
	         "\"data\":{}}}");
	feed(&r, "{\"type\":\"error\",\"error\":{}}");
	feed(&r, "{\"type\":\"error\"}");
	run_finish(&r, 0);
	CHECK_STR(
	    events(&r),
	    "message {\"role\":\"agent_error\",\"text\":\"UnknownError\"}\n"
	    "message {\"role\":\"agent_error\",\"text\":\"agent error (no "
	    "message)\"}\n"
	    "message {\"role\":\"agent_error\",\"text\":\"agent error (no "
	    "message)\"}\n");
	/* The first one is remembered. */
	CHECK_STR(r.out.error, "agent error: UnknownError");
	run_end(&r);
}

static void
opencode_final_keeps_latest_text_per_part(void)
{
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"prt_a\",\"type\":"
	         "\"text\",\"text\":\"one\"}}");
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"prt_b\",\"type\":"
	         "\"text\",\"text\":\"two\"}}");
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"prt_a\",\"type\":"
	         "\"text\",\"text\":\"one, revised\"}}");
	/* Recognised by the part's type alone, too. */
	feed(&r, "{\"type\":\"message.part.updated\",\"part\":{\"id\":"
	         "\"prt_c\",\"type\":\"text\",\"text\":\"three\"}}");
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"prt_d\",\"type\":"
	         "\"text\",\"text\":\"\"}}");
	run_finish(&r, 0);
	CHECK(r.nevents == 4);
	CHECK_STR(r.out.final_message, "one, revised\n\ntwo\n\nthree");
	CHECK(r.out.error == NULL);
	run_end(&r);
}

static void
opencode_tools_dedupe_per_status(void)
{
	static const char *const lines[] = {
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_t\",\"type\":"
	    "\"tool\",\"tool\":\"bash\",\"state\":{\"status\":\"pending\","
	    "\"input\":{}}}}",
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_t\",\"type\":"
	    "\"tool\",\"tool\":\"bash\",\"state\":{\"status\":\"running\","
	    "\"input\":{\"command\":\"ls\"}}}}",
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_t\",\"type\":"
	    "\"tool\",\"tool\":\"bash\",\"state\":{\"status\":\"running\","
	    "\"input\":{\"command\":\"ls\"}}}}",
	    "{\"type\":\"message.part.updated\",\"part\":{\"id\":\"prt_t\","
	    "\"type\":\"tool\",\"tool\":\"bash\",\"state\":{\"status\":"
	    "\"completed\",\"input\":{\"command\":\"ls\"}}}}",
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_t\",\"type\":"
	    "\"tool\",\"tool\":\"bash\",\"state\":{\"status\":\"completed\","
	    "\"input\":{\"command\":\"ls\"}}}}",
	    /* Unknown statuses and nameless tools say nothing. */
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_u\",\"type\":"
	    "\"tool\",\"tool\":\"bash\",\"state\":{\"status\":\"queued\"}}}",
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_v\",\"type\":"
	    "\"tool\",\"state\":{\"status\":\"completed\"}}}",
	    /* Another part, same status: its own event. */
	    "{\"type\":\"tool_use\",\"part\":{\"id\":\"prt_w\",\"type\":"
	    "\"tool\",\"tool\":\"read\",\"state\":{\"status\":\"error\","
	    "\"input\":{\"filePath\":\"\",\"file_path\":\"a.txt\","
	    "\"command\":\"cat a.txt\"}}}}",
	};
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		feed(&r, lines[i]);
	run_finish(&r, 0);
	CHECK_STR(events(&r),
	          "tool {\"name\":\"bash\",\"status\":\"pending\"}\n"
	          "tool {\"name\":\"bash\",\"status\":\"running\",\"path\":"
	          "\"ls\"}\n"
	          "tool {\"name\":\"bash\",\"status\":\"completed\",\"path\":"
	          "\"ls\"}\n"
	          "tool {\"name\":\"read\",\"status\":\"error\",\"path\":"
	          "\"a.txt\"}\n");
	/* Tools alone are output: the run succeeded without a word. */
	CHECK(r.out.any_output);
	CHECK(r.out.error == NULL);
	CHECK(r.out.final_message == NULL);
	run_end(&r);
}

static void
opencode_tokens_are_sane(void)
{
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	feed(&r,
	     "{\"type\":\"step_finish\",\"part\":{\"type\":\"step-finish\","
	     "\"cost\":0.5,\"tokens\":{\"input\":10,\"output\":2.0,"
	     "\"reasoning\":-5,\"cache\":{\"read\":\"7\",\"write\":1e300}}}}");
	feed(&r, "{\"type\":\"step_finish\",\"part\":{\"type\":\"step-finish\","
	         "\"cost\":-1,\"tokens\":{\"input\":9223372036854775807}}}");
	feed(&r, "{\"type\":\"step_finish\",\"part\":{\"type\":\"step-finish\","
	         "\"cost\":1e308,\"tokens\":{\"input\":9223372036854775807}}}");
	feed(&r, "{\"type\":\"step_finish\",\"part\":{\"type\":\"step-finish\","
	         "\"cost\":\"0.1\",\"tokens\":[1,2]}}");
	run_finish(&r, 0);
	CHECK(r.nevents == 0);
	CHECK(r.out.tokens.input == INT64_MAX); /* saturated, not wrapped */
	CHECK(r.out.tokens.output == 2);
	CHECK(r.out.tokens.reasoning == 0);
	CHECK(r.out.tokens.cache_read == 0);
	CHECK(r.out.tokens.cache_write == 0);
	CHECK(near(r.out.tokens.cost, 0.5));
	CHECK_STR(r.out.error, "agent produced no output");
	run_end(&r);
}

static void
claude_session(void)
{
	struct run r;

	run_begin(&r, AGENT_CLAUDE);
	feed_fixture(&r, "claude_session.jsonl");
	run_finish(&r, 0);
	CHECK_STR(
	    events(&r),
	    "status {\"phase\":\"model\",\"model\":\"claude-sonnet-4-5-"
	    "20250929\"}\n"
	    "message {\"role\":\"agent\",\"text\":\"I'll look at the app "
	    "first, then add a todo list.\"}\n"
	    "tool {\"name\":\"Glob\",\"status\":\"running\",\"path\":\"src/**/"
	    "*.tsx\"}\n"
	    "tool {\"name\":\"Glob\",\"status\":\"completed\",\"path\":\"src/"
	    "**/*.tsx\"}\n"
	    "tool {\"name\":\"Read\",\"status\":\"running\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "tool {\"name\":\"Read\",\"status\":\"completed\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "tool {\"name\":\"Write\",\"status\":\"running\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/TodoList.tsx\"}\n"
	    "tool {\"name\":\"Write\",\"status\":\"completed\",\"path\":\"/"
	    "home/sandbox/workspace/app/src/TodoList.tsx\"}\n"
	    "tool {\"name\":\"Edit\",\"status\":\"running\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "tool {\"name\":\"Edit\",\"status\":\"completed\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "message {\"role\":\"agent\",\"text\":\"Let me check that it "
	    "builds.\"}\n"
	    "tool {\"name\":\"Bash\",\"status\":\"running\",\"path\":\"pnpm "
	    "build\"}\n"
	    "tool {\"name\":\"Bash\",\"status\":\"error\",\"path\":\"pnpm "
	    "build\"}\n"
	    "tool {\"name\":\"Edit\",\"status\":\"running\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "tool {\"name\":\"Edit\",\"status\":\"completed\",\"path\":\"/home/"
	    "sandbox/workspace/app/src/App.tsx\"}\n"
	    "message {\"role\":\"agent\",\"text\":\"Added a todo list: "
	    "`src/TodoList.tsx` keeps items in localStorage and `App.tsx` "
	    "renders it. The build passes.\"}\n");
	CHECK_STR(r.out.final_message,
	          "Added a todo list: `src/TodoList.tsx` keeps items in "
	          "localStorage and `App.tsx` renders it. The build passes.");
	CHECK(r.out.error == NULL);
	CHECK(r.out.any_output);
	/* From the result line only: assistant lines repeat their usage. */
	CHECK(r.out.tokens.input == 39);
	CHECK(r.out.tokens.output == 912);
	CHECK(r.out.tokens.reasoning == 0);
	CHECK(r.out.tokens.cache_read == 116600);
	CHECK(r.out.tokens.cache_write == 5530);
	CHECK(near(r.out.tokens.cost, 0.0871234));
	run_end(&r);
}

static void
claude_not_logged_in(void)
{
	struct run r;

	run_begin(&r, AGENT_CLAUDE);
	feed_fixture(&r, "claude_not_logged_in.jsonl");
	feed(&r, "Not logged in \xff Please run /login"); /* not UTF-8 */
	feed(&r, "Loading configuration..."); /* plain text, not an error */
	run_finish(&r, 1);
	CHECK_STR(events(&r),
	          "message {\"role\":\"agent_error\",\"text\":\"Invalid API "
	          "key · Please run /login\"}\n"
	          "message {\"role\":\"agent_error\",\"text\":\"Not logged in "
	          "\xef\xbf\xbd Please run /login\"}\n");
	CHECK_STR(r.out.error, "agent error: Invalid API key · Please run "
	                       "/login");
	CHECK(!r.out.any_output);
	run_end(&r);

	/* opencode says nothing useful in plain text. */
	run_begin(&r, AGENT_OPENCODE);
	feed(&r, "Invalid API key");
	run_finish(&r, 0);
	CHECK(r.nevents == 0);
	CHECK_STR(r.out.error, "agent produced no output");
	run_end(&r);
}

static void
claude_auth_error(void)
{
	struct run r;

	run_begin(&r, AGENT_CLAUDE);
	feed_fixture(&r, "claude_auth_error.jsonl");
	run_finish(&r, 1);
	/* Reported once: by the turn, not again by the result line. */
	CHECK_STR(
	    events(&r),
	    "status {\"phase\":\"model\",\"model\":\"claude-sonnet-4-5-"
	    "20250929\"}\n"
	    "message {\"role\":\"agent_error\",\"text\":\"Invalid API key "
	    "· Fix external API key\"}\n");
	CHECK_STR(r.out.error,
	          "agent error: Invalid API key · Fix external API key");
	CHECK(!r.out.any_output);
	run_end(&r);
}

static void
claude_max_turns(void)
{
	struct run r;

	run_begin(&r, AGENT_CLAUDE);
	feed_fixture(&r, "claude_max_turns.jsonl");
	run_finish(&r, 0);
	CHECK_STR(
	    events(&r),
	    "status {\"phase\":\"model\",\"model\":\"claude-sonnet-4-5-"
	    "20250929\"}\n"
	    "message {\"role\":\"agent\",\"text\":\"I'll start by reading "
	    "the project layout.\"}\n"
	    "tool {\"name\":\"Bash\",\"status\":\"running\",\"path\":\"ls "
	    "-la\"}\n"
	    "tool {\"name\":\"Bash\",\"status\":\"completed\",\"path\":\"ls "
	    "-la\"}\n"
	    "message {\"role\":\"agent_error\",\"text\":\"error_max_turns\""
	    "}\n");
	CHECK_STR(r.out.error, "agent error: error_max_turns");
	/* No result text: the final message is what the agent said. */
	CHECK_STR(r.out.final_message,
	          "I'll start by reading the project layout.");
	CHECK(r.out.tokens.input == 6 && r.out.tokens.output == 24);
	CHECK(r.out.tokens.cache_read == 25800);
	CHECK(r.out.tokens.cache_write == 4200);
	CHECK(near(r.out.tokens.cost, 0.0213));
	run_end(&r);
}

static void
claude_odd_lines(void)
{
	struct run r;

	run_begin(&r, AGENT_CLAUDE);
	/* A result for a tool_use never seen: no name, no event. */
	feed(&r, "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"
	         "\"tool_result\",\"tool_use_id\":\"toolu_x\"}]}}");
	/* A user prompt echoed as a string. */
	feed(&r, "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}");
	/* Init without a model, other system lines. */
	feed(&r, "{\"type\":\"system\",\"subtype\":\"init\"}");
	feed(&r, "{\"type\":\"system\",\"subtype\":\"compact_boundary\","
	         "\"model\":\"x\"}");
	/* Content as a plain string. */
	feed(&r,
	     "{\"type\":\"assistant\",\"message\":{\"content\":\"plain\"}}");
	/* A tool_use twice (the same id): one event. */
	feed(&r, "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	         "\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Grep\",\"input\":"
	         "{\"pattern\":\"TODO\",\"path\":\"src\"}}]}}");
	feed(&r, "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	         "\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Grep\",\"input\":"
	         "{\"pattern\":\"TODO\",\"path\":\"src\"}}]}}");
	/* An error turn without text: the error object's message. */
	feed(&r, "{\"type\":\"assistant\",\"message\":{\"content\":[]},"
	         "\"error\":{\"type\":\"overloaded_error\",\"message\":"
	         "\"Overloaded\"}}");
	feed(&r, "{\"type\":\"assistant\",\"message\":{\"content\":[]},"
	         "\"error\":null}");
	feed(&r, "{\"type\":\"error\",\"error\":\"later\"}");
	run_finish(&r, 0);
	CHECK_STR(events(&r),
	          "message {\"role\":\"agent\",\"text\":\"plain\"}\n"
	          "tool {\"name\":\"Grep\",\"status\":\"running\",\"path\":"
	          "\"src\"}\n"
	          "message {\"role\":\"agent_error\",\"text\":\"Overloaded\"}\n"
	          "message {\"role\":\"agent_error\",\"text\":\"later\"}\n");
	CHECK_STR(r.out.error, "agent error: Overloaded");
	CHECK_STR(r.out.final_message, "plain");
	run_end(&r);
}

static void
outcome_rules(void)
{
	struct run r;

	/* Killed: the exit code says so. */
	run_begin(&r, AGENT_OPENCODE);
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"p\",\"text\":\"hi\"}}");
	run_finish(&r, 137);
	CHECK_STR(r.out.error, "agent exited with code 137");
	CHECK_STR(r.out.final_message, "hi");
	/* Finishing twice gives the same outcome. */
	agent_outcome_release(&r.out);
	run_finish(&r, 137);
	CHECK_STR(r.out.error, "agent exited with code 137");
	run_end(&r);

	/* Steps but no words and no tools. */
	run_begin(&r, AGENT_OPENCODE);
	feed(&r,
	     "{\"type\":\"step_start\",\"part\":{\"type\":\"step-start\"}}");
	feed(&r, "{\"type\":\"step_finish\",\"part\":{\"type\":"
	         "\"step-finish\",\"tokens\":{\"input\":5}}}");
	run_finish(&r, 0);
	CHECK_STR(r.out.error, "agent produced no output");
	CHECK(r.out.tokens.input == 5);
	run_end(&r);

	/* Nothing at all. */
	run_begin(&r, AGENT_CLAUDE);
	run_finish(&r, 0);
	CHECK_STR(r.out.error, "agent produced no output");
	CHECK(r.out.final_message == NULL);
	CHECK(!r.out.any_output);
	run_end(&r);
}

static void
bad_lines_are_skipped(void)
{
	static const char *const lines[] = {
	    "",
	    "   ",
	    "\r",
	    "garbage",
	    "{",
	    "{\"type\":\"text\",\"part\":{\"id\":\"p\",\"text\":\"cut",
	    "{\"type\":\"text\"} trailing",
	    "[1,2,3]",
	    "42",
	    "\"text\"",
	    "null",
	    "{\"type\":7,\"part\":\"no\"}",
	    "{\"type\":\"text\",\"part\":{\"text\":5}}",
	    "{\"type\":\"text\",\"part\":[\"text\"]}",
	    "{\"type\":\"text\",\"text\":\"not in a part\"}",
	    "{\"type\":\"tool_use\",\"part\":{\"tool\":[],\"state\":3}}",
	    "{\"type\":\"error\",\"error\":{\"data\":{\"message\":7},\"name\":"
	    "[]}}",
	};
	struct run r;

	for (int kind = AGENT_OPENCODE; kind <= AGENT_CLAUDE; kind++) {
		run_begin(&r, (enum agent_kind)kind);
		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
			feed(&r, lines[i]);
		/* Bytes past a NUL are part of the line, not its end. */
		agent_parse_line(r.p, "{\"a\":1}\0{", 9, collect, &r);
		run_finish(&r, 0);
		/* Only the error line, whose fields are all unusable. */
		CHECK_STR(events(&r),
		          "message {\"role\":\"agent_error\","
		          "\"text\":\"agent error (no message)\"}\n");
		run_end(&r);
	}
}

static void
carriage_return_is_ignored(void)
{
	const char *text =
	    "{\"type\":\"text\",\"part\":{\"id\":\"p\",\"text\":\"a\"}}\r\n"
	    "{\"type\":\"text\",\"part\":{\"id\":\"q\",\"text\":\"b\"}}\r\n";
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	feed_text(&r, text, strlen(text));
	run_finish(&r, 0);
	CHECK_STR(events(&r), "message {\"role\":\"agent\",\"text\":\"a\"}\n"
	                      "message {\"role\":\"agent\",\"text\":\"b\"}\n");
	CHECK_STR(r.out.final_message, "a\n\nb");
	run_end(&r);
}

static void
non_utf8_comes_out_valid(void)
{
	struct run r;

	run_begin(&r, AGENT_OPENCODE);
	/* A stray byte, a truncated sequence, a surrogate, an overlong. */
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"p\",\"text\":"
	         "\"a\xff"
	         "b\xc3\"}}");
	feed(&r, "{\"type\":\"text\",\"part\":{\"id\":\"q\",\"text\":"
	         "\"\xed\xa0\x80|\xc0\xaf\"}}");
	feed(&r, "{\"type\":\"tool_use\",\"part\":{\"id\":\"t\",\"tool\":"
	         "\"ba\xfesh\",\"state\":{\"status\":\"running\",\"input\":{"
	         "\"command\":\"echo \xe2\x82\"}}}}");
	run_finish(&r, 0);
	CHECK_STR(events(&r),
	          "message {\"role\":\"agent\",\"text\":\"a\xef\xbf\xbd"
	          "b\xef\xbf\xbd\"}\n"
	          "message {\"role\":\"agent\",\"text\":\"\xef\xbf\xbd\xef\xbf"
	          "\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\"}\n"
	          "tool {\"name\":\"ba\xef\xbf\xbdsh\",\"status\":\"running\","
	          "\"path\":\"echo \xef\xbf\xbd\xef\xbf\xbd\"}\n");
	CHECK(r.out.final_message &&
	      utf8_valid(r.out.final_message, strlen(r.out.final_message)));
	run_end(&r);
}

/* A text line whose text is n copies of unit. */
static void
text_line(struct buf *b, const char *id, const char *unit, size_t n)
{
	buf_reset(b);
	buf_appendf(b, "{\"type\":\"text\",\"part\":{\"id\":\"%s\",\"text\":\"",
	            id);
	for (size_t i = 0; i < n; i++)
		buf_append(b, unit, strlen(unit));
	buf_append(b, "\"}}", 3);
}

static void
long_lines_and_texts_are_bounded(void)
{
	struct run r;
	struct buf line;
	struct jv *v;
	const char *text, *ev;
	char err[64];
	size_t last;

	buf_init(&line, 0);
	run_begin(&r, AGENT_OPENCODE);
	/* Over AGENT_LINE_MAX: skipped whole. */
	text_line(&line, "big", "x", AGENT_LINE_MAX);
	CHECK(line.len > AGENT_LINE_MAX);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	CHECK(r.nevents == 0);
	/* Exactly AGENT_LINE_MAX with its '\r': taken. */
	text_line(&line, "e", "\xc3\xa9", (AGENT_LINE_MAX - 64) / 2);
	while (line.len < AGENT_LINE_MAX)
		buf_append(&line, " ", 1);
	buf_append(&line, "\r", 1);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	CHECK(line.len == AGENT_LINE_MAX + 1 && r.nevents == 1);
	/* Its text is cut to AGENT_TEXT_MAX on a character boundary. */
	ev = strchr(events(&r), '{');
	v = ev ? jv_parse(ev, strlen(ev) - 1, 8, err, sizeof(err)) : NULL;
	text = jv_str(jv_get(v, "text"));
	CHECK(text && jv_str_len(jv_get(v, "text")) == AGENT_TEXT_MAX);
	jv_free(v);
	/* Many long parts: the final message stays under AGENT_FINAL_MAX. */
	for (int i = 0; i < 10; i++) {
		char id[16];

		snprintf(id, sizeof(id), "p%d", i);
		text_line(&line, id, "\xe2\x82\xac", 60000 / 3);
		agent_parse_line(r.p, line.data, line.len, collect, &r);
	}
	run_finish(&r, 0);
	CHECK(r.nevents == 11);
	CHECK(r.out.final_message != NULL);
	last = strlen(r.out.final_message);
	CHECK(last <= AGENT_FINAL_MAX && last > AGENT_FINAL_MAX - 8);
	CHECK(utf8_valid(r.out.final_message, last));
	run_end(&r);
	buf_release(&line);
}

static void
deep_nesting_is_skipped(void)
{
	struct run r;
	struct buf line;

	buf_init(&line, 0);
	buf_appendf(&line, "{\"type\":\"text\",\"part\":{\"id\":\"p\","
	                   "\"text\":\"deep\",\"x\":");
	for (int i = 0; i < AGENT_JSON_DEPTH; i++)
		buf_append(&line, "[", 1);
	for (int i = 0; i < AGENT_JSON_DEPTH; i++)
		buf_append(&line, "]", 1);
	buf_append(&line, "}}", 2);
	run_begin(&r, AGENT_OPENCODE);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	CHECK(r.nevents == 0);
	/* Nesting up to the limit is fine. */
	buf_reset(&line);
	buf_appendf(&line, "{\"type\":\"text\",\"part\":{\"id\":\"p\","
	                   "\"text\":\"ok\",\"x\":");
	for (int i = 0; i < AGENT_JSON_DEPTH - 2; i++)
		buf_append(&line, "[", 1);
	for (int i = 0; i < AGENT_JSON_DEPTH - 2; i++)
		buf_append(&line, "]", 1);
	buf_append(&line, "}}", 2);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	CHECK(r.nevents == 1);
	run_finish(&r, 0);
	run_end(&r);
	buf_release(&line);
}

static void
paths_and_names_are_cut(void)
{
	struct run r;
	struct buf line;
	struct jv *v;
	char err[64];
	const char *ev;

	buf_init(&line, 0);
	buf_appendf(&line, "{\"type\":\"tool_use\",\"part\":{\"id\":\"t\","
	                   "\"tool\":\"");
	for (int i = 0; i < 300; i++)
		buf_append(&line, "n", 1);
	buf_appendf(&line, "\",\"state\":{\"status\":\"running\",\"input\":{"
	                   "\"command\":\"x");
	for (int i = 0; i < 100; i++)
		buf_append(&line, "\xe2\x82\xac", 3); /* 3 bytes: 1 + 3k */
	buf_append(&line, "\"}}}}", 5);
	run_begin(&r, AGENT_OPENCODE);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	run_finish(&r, 0);
	CHECK(r.nevents == 1);
	ev = strchr(events(&r), '{');
	v = ev ? jv_parse(ev, strlen(ev) - 1, 8, err, sizeof(err)) : NULL;
	CHECK(jv_str_len(jv_get(v, "name")) == AGENT_NAME_MAX);
	/* 1 + 3 * 66 = 199: the next euro sign would pass 200. */
	CHECK(jv_str_len(jv_get(v, "path")) == 199);
	jv_free(v);
	run_end(&r);
	buf_release(&line);
}

static void
ids_past_the_cap_are_not_tracked(void)
{
	struct run r;
	struct buf line;
	int n = AGENT_PARTS_MAX + 100;

	buf_init(&line, 0);
	run_begin(&r, AGENT_OPENCODE);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < n; i++) {
			buf_reset(&line);
			buf_appendf(&line,
			            "{\"type\":\"tool_use\",\"part\":{\"id\":"
			            "\"prt_%d\",\"tool\":\"read\",\"state\":{"
			            "\"status\":\"completed\"}}}",
			            i);
			agent_parse_line(r.p, line.data, line.len, collect, &r);
		}
	/* The first AGENT_PARTS_MAX ids are deduped; the rest repeat. */
	CHECK(r.nevents == (size_t)AGENT_PARTS_MAX + 2 * 100);
	/* Their text still goes out, but not into the final message. */
	text_line(&line, "prt_new", "late", 1);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	text_line(&line, "prt_1", "early", 1);
	agent_parse_line(r.p, line.data, line.len, collect, &r);
	run_finish(&r, 0);
	CHECK(r.nevents == (size_t)AGENT_PARTS_MAX + 2 * 100 + 2);
	CHECK_STR(r.out.final_message, "early");
	run_end(&r);
	buf_release(&line);
}

/*
 * The fake agents: run tests/fake-agent/fake_agent.py in a fresh
 * directory exactly as the sandbox runs the real CLI, and parse what it
 * prints.
 */
struct fake {
	char dir[64];
	struct run r;
	int status;
	struct buf err; /* its stderr */
};

/* The fake's absolute path: tests run from the repo root. */
static int
fake_script(char *path, size_t size)
{
	char cwd[2048];

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	snprintf(path, size, "%s/tests/fake-agent/fake_agent.py", cwd);
	return 0;
}

static void
fake_run(struct fake *f, enum agent_kind kind, const char *prompt,
         const char *setup_file)
{
	char script[4096], errpath[128];
	char *argv_oc[] = {"python3",
	                   script,
	                   "opencode",
	                   "run",
	                   "--format",
	                   "json",
	                   "--dangerously-skip-permissions",
	                   (char *)prompt,
	                   NULL};
	char *argv_cl[] = {"python3",         script,
	                   "claude",          "-p",
	                   "--output-format", "stream-json",
	                   "--verbose",       "--dangerously-skip-permissions",
	                   (char *)prompt,    NULL};
	char chunk[4096];
	struct buf out;
	ssize_t n;
	int pfd[2];
	pid_t pid;

	memset(f, 0, sizeof(*f));
	buf_init(&f->err, 0);
	buf_init(&out, 0);
	run_begin(&f->r, kind);
	snprintf(f->dir, sizeof(f->dir), "/tmp/sandboxd-fake-XXXXXX");
	if (mkdtemp(f->dir) == NULL ||
	    fake_script(script, sizeof(script)) < 0 ||
	    pipe2(pfd, O_CLOEXEC) < 0) {
		unit_failed = 1;
		return;
	}
	snprintf(errpath, sizeof(errpath), "%s.stderr", f->dir);
	if (setup_file) {
		char path[128];
		int fd;

		if (strchr(setup_file, '/')) { /* one level: "src/App.tsx" */
			snprintf(path, sizeof(path), "%s/%.*s", f->dir,
			         (int)(strchr(setup_file, '/') - setup_file),
			         setup_file);
			mkdir(path, 0755);
		}
		snprintf(path, sizeof(path), "%s/%s", f->dir, setup_file);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		CHECK(fd >= 0 && write(fd, "<h1>Hi</h1>\n", 12) == 12);
		close(fd);
	}
	pid = fork();
	if (pid == 0) {
		int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		/* Nothing of the run outside its directory: no session is
		 * kept where HOME cannot hold one. */
		if (chdir(f->dir) < 0 || efd < 0 ||
		    setenv("HOME", "/dev/null", 1) < 0)
			_exit(126);
		dup2(pfd[1], 1);
		dup2(efd, 2);
		execvp("python3", kind == AGENT_OPENCODE ? argv_oc : argv_cl);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], chunk, sizeof(chunk))) > 0)
		buf_append(&out, chunk, (size_t)n);
	close(pfd[0]);
	waitpid(pid, &f->status, 0);
	feed_text(&f->r, out.data ? out.data : "", out.len);
	run_finish(&f->r, WIFEXITED(f->status) ? WEXITSTATUS(f->status) : 128);
	read_file(errpath, &f->err);
	unlink(errpath);
	buf_release(&out);
}

static bool
fake_file_is(struct fake *f, const char *name, const char *content)
{
	char path[128];
	struct buf b;
	bool same;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	buf_init(&b, 0);
	same =
	    read_file(path, &b) == 0 && b.data && strcmp(b.data, content) == 0;
	buf_release(&b);
	return same;
}

static void
fake_end(struct fake *f, const char *const *files)
{
	char path[128];

	/* Files, then the directories they were in. */
	for (size_t i = 0; files && files[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", f->dir, files[i]);
		remove(path);
	}
	rmdir(f->dir);
	CHECK(access(f->dir, F_OK) != 0); /* nothing else was left behind */
	run_end(&f->r);
	buf_release(&f->err);
}

static void
fake_opencode_writes(void)
{
	static const char *const files[] = {"a.txt", NULL};
	struct fake f;

	fake_run(&f, AGENT_OPENCODE,
	         "You are a coding agent.\n\n---\n\n# Your task\n\n"
	         "[[fake:write=a.txt]] hello",
	         NULL);
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0);
	CHECK(fake_file_is(&f, "a.txt", "written by the fake agent\n"));
	CHECK(strstr(events(&f.r),
	             "tool {\"name\":\"write\",\"status\":"
	             "\"completed\",\"path\":\"a.txt\"}\n") != NULL);
	CHECK(f.r.out.error == NULL);
	CHECK(f.r.out.final_message != NULL);
	CHECK(f.r.out.tokens.input == 1200 && f.r.out.tokens.output == 340);
	CHECK(f.r.out.tokens.cache_read == 100);
	CHECK(near(f.r.out.tokens.cost, 0.0123));
	CHECK(f.err.data && strstr(f.err.data, "{\"fake_argv\":[") != NULL);
	CHECK(f.err.data &&
	      strstr(f.err.data, "{\"fake_env_names\":[") != NULL);
	fake_end(&f, files);
}

static void
fake_opencode_default_adds_a_todo_list(void)
{
	static const char *const files[] = {"src/App.tsx", "src", NULL};
	struct fake f;
	struct buf app;
	char path[128];

	fake_run(&f, AGENT_OPENCODE, "add a todo list", "src/App.tsx");
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0);
	CHECK(strstr(events(&f.r),
	             "tool {\"name\":\"read\",\"status\":\"completed\","
	             "\"path\":\"src/App.tsx\"}\n"
	             "tool {\"name\":\"write\",\"status\":\"completed\","
	             "\"path\":\"src/App.tsx\"}\n") != NULL);
	CHECK(f.r.out.final_message &&
	      strstr(f.r.out.final_message, "Todo list") != NULL);
	CHECK(f.r.out.error == NULL);
	CHECK(f.r.out.tokens.input == 1200 && f.r.out.tokens.output == 340);
	CHECK(f.r.out.tokens.reasoning == 0);
	CHECK(f.r.out.tokens.cache_read == 100);
	CHECK(f.r.out.tokens.cache_write == 0);
	CHECK(near(f.r.out.tokens.cost, 0.0123));
	buf_init(&app, 0);
	snprintf(path, sizeof(path), "%s/src/App.tsx", f.dir);
	CHECK(read_file(path, &app) == 0 && app.data &&
	      strstr(app.data, "<h1>Todo list</h1>") &&
	      strstr(app.data, "localStorage") && strstr(app.data, "Delete"));
	buf_release(&app);
	fake_end(&f, files);
}

static void
fake_claude_default_edits_the_page(void)
{
	static const char *const files[] = {"index.html", NULL};
	struct fake f;

	fake_run(&f, AGENT_CLAUDE, "add a todo list", "index.html");
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0);
	CHECK(strncmp(events(&f.r), "status {\"phase\":\"model\",", 24) == 0);
	CHECK(strstr(events(&f.r),
	             "tool {\"name\":\"Read\",\"status\":\"running\",\"path\":"
	             "\"index.html\"}\n"
	             "tool {\"name\":\"Read\",\"status\":\"completed\","
	             "\"path\":\"index.html\"}\n"
	             "tool {\"name\":\"Write\",\"status\":\"running\",\"path\":"
	             "\"index.html\"}\n"
	             "tool {\"name\":\"Write\",\"status\":\"completed\","
	             "\"path\":\"index.html\"}\n") != NULL);
	CHECK(f.r.out.error == NULL);
	CHECK(f.r.out.final_message != NULL);
	CHECK(f.r.out.tokens.input == 1200 && f.r.out.tokens.output == 340);
	CHECK(near(f.r.out.tokens.cost, 0.0123));
	CHECK(!fake_file_is(&f, "index.html", "<h1>Hi</h1>\n"));
	fake_end(&f, files);
}

static void
fake_streams_lines_and_errors(void)
{
	char want[64];
	struct fake f;

	fake_run(&f, AGENT_OPENCODE, "[[fake:lines=50]]", NULL);
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0);
	for (int k = 1; k <= 50; k++) {
		snprintf(want, sizeof(want), "\"text\":\"line %d t=", k);
		CHECK(strstr(events(&f.r), want) != NULL);
	}
	CHECK(f.r.out.error == NULL);
	fake_end(&f, NULL);

	fake_run(&f, AGENT_CLAUDE, "[[fake:error]]", NULL);
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 1);
	CHECK_STR(f.r.out.error, "agent error: fake provider error");
	fake_end(&f, NULL);

	fake_run(&f, AGENT_OPENCODE, "[[fake:error]]", NULL);
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 1);
	CHECK_STR(f.r.out.error, "agent error: fake provider error");
	fake_end(&f, NULL);

	fake_run(&f, AGENT_CLAUDE, "[[fake:silent]]", NULL);
	CHECK_STR(f.r.out.error, "agent produced no output");
	fake_end(&f, NULL);

	fake_run(&f, AGENT_OPENCODE, "[[fake:garbage]] [[fake:exit=3]]", NULL);
	CHECK(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 3);
	CHECK_STR(f.r.out.error, "agent exited with code 3");
	CHECK(f.r.out.any_output);
	fake_end(&f, (const char *const[]){"index.html", NULL});
}

/* Exit status of the fake run with argv (after the script's path). */
static int
fake_exit_status(char *const *args, size_t nargs)
{
	char script[4096];
	char *argv[16] = {"python3", script};
	pid_t pid;
	int st = 0, null;

	if (nargs > 13 || fake_script(script, sizeof(script)) < 0)
		return -1;
	memcpy(argv + 2, args, nargs * sizeof(*args));
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execvp("python3", argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
fake_refuses_other_command_lines(void)
{
	char *oc_text[] = {"opencode", "run", "--format", "text", "hi"};
	char *oc_no_run[] = {"opencode", "--format", "json", "hi"};
	char *cl_no_p[] = {"claude", "--output-format", "stream-json",
	                   "--verbose", "hi"};
	char *cl_bad_flag[] = {"claude",      "-p",        "--output-format",
	                       "stream-json", "--verbose", "--yolo",
	                       "hi"};
	char *unknown[] = {"codex", "exec", "hi"};

	CHECK(fake_exit_status(oc_text, 5) == 2);
	CHECK(fake_exit_status(oc_no_run, 4) == 2);
	CHECK(fake_exit_status(cl_no_p, 5) == 2);
	CHECK(fake_exit_status(cl_bad_flag, 7) == 2);
	CHECK(fake_exit_status(unknown, 3) == 2);
}

static const struct unit_test tests[] = {
    {"kinds have names", kinds_have_names},
    {"an opencode session", opencode_session},
    {"an opencode API error", opencode_api_error},
    {"opencode error messages fall back", opencode_error_falls_back},
    {"opencode's final message keeps each part's latest text",
     opencode_final_keeps_latest_text_per_part},
    {"opencode tools are deduped per part and status",
     opencode_tools_dedupe_per_status},
    {"tokens ignore nonsense and saturate", opencode_tokens_are_sane},
    {"a claude session", claude_session},
    {"claude not logged in", claude_not_logged_in},
    {"a claude authentication error", claude_auth_error},
    {"claude error_max_turns", claude_max_turns},
    {"claude's odd lines", claude_odd_lines},
    {"the outcome's rules", outcome_rules},
    {"bad lines are skipped", bad_lines_are_skipped},
    {"a CR before the LF is ignored", carriage_return_is_ignored},
    {"bytes that are not UTF-8 come out valid", non_utf8_comes_out_valid},
    {"long lines and texts are bounded", long_lines_and_texts_are_bounded},
    {"deep nesting is skipped", deep_nesting_is_skipped},
    {"paths and names are cut on a boundary", paths_and_names_are_cut},
    {"ids past the cap are not tracked", ids_past_the_cap_are_not_tracked},
    {"fake opencode writes a file", fake_opencode_writes},
    {"fake opencode adds a todo list to a React app",
     fake_opencode_default_adds_a_todo_list},
    {"fake claude edits the page", fake_claude_default_edits_the_page},
    {"fake agents stream lines, errors, silence, garbage",
     fake_streams_lines_and_errors},
    {"fake agents refuse other command lines",
     fake_refuses_other_command_lines},
};

int
main(void)
{
	return UNIT_RUN("agent", tests);
}
