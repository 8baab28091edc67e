/* The proxy's meter: usage fields of each protocol, fed in any pieces. */
#include <stdio.h>

#include "proxy/meter.h"
#include "unit.h"

/* Feeds text in pieces of step bytes (0: all at once). */
static void
feed(struct meter *m, const char *text, size_t step)
{
	size_t n = strlen(text);

	if (step == 0)
		step = n;
	for (size_t i = 0; i < n; i += step)
		meter_feed(m, text + i, n - i < step ? n - i : step);
}

static const char anthropic_json[] =
    "{\"id\":\"msg_1\",\"type\":\"message\",\"model\":\"claude-sonnet-4-5\","
    "\"content\":[{\"type\":\"text\",\"text\":\"hi \\\"usage\\\": {}\"},"
    "{\"type\":\"tool_use\",\"input\":{\"usage\":{\"input_tokens\":999}}}],"
    "\"usage\":{\"input_tokens\":1200,\"cache_creation_input_tokens\":30,"
    "\"cache_read_input_tokens\":400,\"output_tokens\":77}}";

static void
anthropic_plain(void)
{
	struct meter m;
	struct meter_usage u;
	size_t steps[] = {0, 1, 3, 7};

	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		meter_init(&m, false);
		feed(&m, anthropic_json, steps[i]);
		CHECK(meter_result(&m, &u));
		CHECK(u.input == 1200);
		CHECK(u.output == 77);
		CHECK(u.cache_write == 30);
		CHECK(u.cache_read == 400);
		CHECK_STR(m.model, "claude-sonnet-4-5");
	}
}

static const char anthropic_sse[] =
    "event: message_start\r\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\","
    "\"model\":\"claude-haiku-4-5\",\"content\":[],\"usage\":"
    "{\"input_tokens\":500,\"cache_creation_input_tokens\":0,"
    "\"cache_read_input_tokens\":20,\"output_tokens\":1}}}\r\n\r\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
    "{\"type\":\"text_delta\",\"text\":\"Hello there, world!\"}}\n\n";
static const char anthropic_sse_end[] =
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"end_turn\"},\"usage\":{\"output_tokens\":42}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

static void
anthropic_stream(void)
{
	struct meter m;
	struct meter_usage u;
	size_t steps[] = {0, 1, 5};

	for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		meter_init(&m, true);
		feed(&m, anthropic_sse, steps[i]);
		feed(&m, anthropic_sse_end, steps[i]);
		CHECK(meter_result(&m, &u));
		CHECK(u.input == 500);
		CHECK(u.cache_read == 20);
		CHECK(u.output == 42);
		CHECK_STR(m.model, "claude-haiku-4-5");
	}
}

static void
cut_stream(void)
{
	struct meter m;
	struct meter_usage u;

	/* Cut after one text delta of 19 bytes: output estimated, 5. */
	meter_init(&m, true);
	feed(&m, anthropic_sse, 4);
	CHECK(meter_result(&m, &u));
	CHECK(u.input == 500);
	CHECK(u.output == 5);
	/* Cut in the middle of the final usage line: that line is lost. */
	meter_init(&m, true);
	feed(&m, anthropic_sse, 0);
	feed(&m, "data: {\"type\":\"message_delta\",\"usage\":{\"output_t", 0);
	CHECK(meter_result(&m, &u));
	CHECK(u.output == 5);
	/* Nothing at all. */
	meter_init(&m, true);
	feed(&m, "event: ping\n", 0);
	CHECK(!meter_result(&m, &u));
}

static void
openai(void)
{
	struct meter m;
	struct meter_usage u;

	meter_init(&m, true);
	feed(&m,
	     "data: {\"id\":\"c\",\"model\":\"gpt-5\",\"choices\":[{\"delta\":"
	     "{\"content\":\"abcdefgh\"}}]}\n\n"
	     "data: {\"id\":\"c\",\"model\":\"gpt-5\",\"choices\":[],\"usage\":"
	     "{\"prompt_tokens\":300,\"completion_tokens\":12,\"total_tokens\":"
	     "312,\"prompt_tokens_details\":{\"cached_tokens\":100}}}\n\n"
	     "data: [DONE]\n\n",
	     2);
	CHECK(meter_result(&m, &u));
	CHECK(u.input == 200);
	CHECK(u.cache_read == 100);
	CHECK(u.output == 12);
	CHECK_STR(m.model, "gpt-5");
	/* Not streamed. */
	meter_init(&m, false);
	feed(
	    &m,
	    "{\"model\":\"x\",\"choices\":[{\"message\":{\"content\":\"hi\"}}],"
	    "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":3}}",
	    0);
	CHECK(meter_result(&m, &u));
	CHECK(u.input == 10 && u.output == 3 && u.cache_read == 0);
	/* Responses: response.completed's response.usage. */
	meter_init(&m, true);
	feed(
	    &m,
	    "event: response.completed\ndata: {\"type\":\"response.completed\","
	    "\"response\":{\"model\":\"gpt-5-mini\",\"usage\":{\"input_"
	    "tokens\":"
	    "50,\"input_tokens_details\":{\"cached_tokens\":10},"
	    "\"output_tokens\":9}}}\n\n",
	    0);
	CHECK(meter_result(&m, &u));
	CHECK(u.input == 40 && u.cache_read == 10 && u.output == 9);
	CHECK_STR(m.model, "gpt-5-mini");
}

static void
hostile(void)
{
	struct meter m;
	struct meter_usage u;
	char big[METER_CAPTURE_MAX + 200];

	/* A usage object too big to keep is ignored, not overflowed. */
	meter_init(&m, false);
	feed(&m, "{\"usage\":{\"input_tokens\":5,\"pad\":\"", 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	feed(&m, big, 0);
	feed(&m, "\"}}", 0);
	CHECK(!m.seen);
	/* Negative and huge counts are clamped; deep nesting is fine. */
	meter_init(&m, false);
	for (int i = 0; i < 500; i++)
		feed(&m, "[", 0);
	for (int i = 0; i < 500; i++)
		feed(&m, "]", 0);
	meter_init(&m, false);
	feed(&m,
	     "{\"usage\":{\"input_tokens\":-5,\"output_tokens\":"
	     "99999999999999999}}",
	     0);
	CHECK(meter_result(&m, &u));
	CHECK(u.input == 0);
	CHECK(u.output == METER_TOKENS_MAX);
	/* Unbalanced closers and stray bytes do not underflow. */
	meter_init(&m, true);
	feed(&m, "data: }}}]]\"\\\ndata: {\"usage\":{\"output_tokens\":3}}\n",
	     0);
	CHECK(meter_result(&m, &u));
	CHECK(u.output == 3);
	CHECK(meter_is_stream("Content-Type: text/event-stream; charset=utf-8",
	                      46));
	CHECK(!meter_is_stream("Content-Type: application/json", 30));
}

static const struct unit_test tests[] = {
    {"anthropic, not streamed", anthropic_plain},
    {"anthropic, streamed", anthropic_stream},
    {"a stream cut off midway", cut_stream},
    {"openai-compatible and responses", openai},
    {"hostile answers", hostile},
};

int
main(void)
{
	return UNIT_RUN("meter", tests);
}
