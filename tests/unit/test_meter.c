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
		CHECK(meter_result(&m, 0, &u));
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
		CHECK(meter_result(&m, 0, &u));
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

	/* Cut after one text delta of 19 bytes: no final usage; output
	 * estimated at 3 bytes a token, 7; input as message_start said. */
	meter_init(&m, true);
	feed(&m, anthropic_sse, 4);
	CHECK(!meter_result(&m, 9000, &u));
	CHECK(u.input == 500);
	CHECK(u.output == 7);
	/* Cut in the middle of the final usage line: that line is lost. */
	meter_init(&m, true);
	feed(&m, anthropic_sse, 0);
	feed(&m, "data: {\"type\":\"message_delta\",\"usage\":{\"output_t", 0);
	CHECK(!meter_result(&m, 9000, &u));
	CHECK(u.output == 7);
	/* Nothing but a ping: the input from the request's 9000 bytes, the
	 * output from the 12 bytes that passed. */
	meter_init(&m, true);
	feed(&m, "event: ping\n", 0);
	CHECK(!meter_result(&m, 9000, &u));
	CHECK(u.input == 3000 && u.output == 4);
}

/* An OpenAI-compatible stream asked without include_usage: no usage
 * comes, and what passed is charged all the same. */
static void
no_usage(void)
{
	struct meter m;
	struct meter_usage u;

	meter_init(&m, true);
	feed(&m,
	     "data: {\"id\":\"c\",\"model\":\"gpt-5\",\"choices\":[{\"delta\":"
	     "{\"content\":\"abcdefghij\"}}]}\n\n"
	     "data: {\"id\":\"c\",\"model\":\"gpt-5\",\"choices\":[{\"delta\":"
	     "{\"content\":\"klmno\"}}]}\n\n"
	     "data: [DONE]\n\n",
	     3);
	CHECK(!meter_result(&m, 301, &u));
	CHECK(u.input == 101);
	CHECK(u.output == 5); /* 15 bytes of text */
	CHECK(u.cache_read == 0 && u.cache_write == 0);
	/* An answer in a shape we do not know: all its bytes count. */
	meter_init(&m, false);
	feed(&m, "{\"result\":\"0123456789\"}", 0);
	CHECK(!meter_result(&m, 3, &u));
	CHECK(u.input == 1 && u.output == 8); /* 23 bytes */
	CHECK(meter_tokens_of_bytes(0) == 0 && meter_tokens_of_bytes(1) == 1 &&
	      meter_tokens_of_bytes(3) == 1 && meter_tokens_of_bytes(4) == 2);
}

static void
req(const char *body, struct meter_req *rq)
{
	meter_request(body, strlen(body), rq);
}

/* What a request says of how it can be metered. */
static void
requests(void)
{
	static const char chat[] =
	    "  {\"model\":\"gpt-5\",\"messages\":[{\"role\":\"user\","
	    "\"content\":\"say \\\"stream\\\": true\",\"max_tokens\":7}],"
	    "\"stream\" : true , \"max_completion_tokens\":1234}";
	struct meter_req rq;

	meter_request(chat, strlen(chat), &rq);
	CHECK_STR(rq.model, "gpt-5");
	CHECK(rq.stream && !rq.background && !rq.stream_options);
	CHECK(rq.max_tokens == 1234 && rq.choices == 1);
	CHECK(rq.object && rq.open_at == 2);
	req("{\"n\":4,\"max_tokens\":10}", &rq);
	CHECK(rq.choices == 4 && rq.max_tokens == 10);
	req("{\"n\":100000}", &rq);
	CHECK(rq.choices == METER_CHOICES_MAX);
	req("{\"n\":-3}", &rq);
	CHECK(rq.choices == 1);
	req("{\"stream\":false,\"stream_options\":{\"include_usage\":"
	    "true},\"background\":true,\"max_output_tokens\":2.5}",
	    &rq);
	CHECK(!rq.stream && rq.background && rq.stream_options &&
	      rq.include_usage);
	CHECK(rq.max_tokens == 3);
	req("{\"max_tokens\":1e99,\"stream_options\":{}}", &rq);
	CHECK(rq.max_tokens == METER_TOKENS_MAX && rq.stream_options &&
	      !rq.include_usage);
	req("[1,2]", &rq);
	CHECK(!rq.object && rq.max_tokens == -1 && rq.model[0] == '\0');
	/* A nested max_tokens is not the request's. */
	req("{\"a\":{\"max_tokens\":5}}", &rq);
	CHECK(rq.max_tokens == -1);
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
	CHECK(meter_result(&m, 0, &u));
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
	CHECK(meter_result(&m, 0, &u));
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
	CHECK(meter_result(&m, 0, &u));
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
	CHECK(meter_result(&m, 0, &u));
	CHECK(u.input == 0);
	CHECK(u.output == METER_TOKENS_MAX);
	/* Unbalanced closers and stray bytes do not underflow. */
	meter_init(&m, true);
	feed(&m, "data: }}}]]\"\\\ndata: {\"usage\":{\"output_tokens\":3}}\n",
	     0);
	CHECK(meter_result(&m, 0, &u));
	CHECK(u.output == 3);
	CHECK(meter_is_stream("Content-Type: text/event-stream; charset=utf-8",
	                      46));
	CHECK(!meter_is_stream("Content-Type: application/json", 30));
}

static const struct unit_test tests[] = {
    {"anthropic, not streamed", anthropic_plain},
    {"anthropic, streamed", anthropic_stream},
    {"a stream cut off midway", cut_stream},
    {"no usage reported: charged from the bytes", no_usage},
    {"what a request says", requests},
    {"openai-compatible and responses", openai},
    {"hostile answers", hostile},
};

int
main(void)
{
	return UNIT_RUN("meter", tests);
}
