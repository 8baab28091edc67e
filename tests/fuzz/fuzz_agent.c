/*
 * libFuzzer target: the agents' stream parsers.  The input is split into
 * lines and fed to an opencode and a claude parser, which are then
 * finished with an exit code taken from the input.  Nothing may crash,
 * leak or read out of bounds, and every event must keep its limits:
 * texts within AGENT_TEXT_MAX, tool paths within AGENT_PATH_MAX, all of
 * it valid UTF-8 with no NUL.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/agent.h"
#include "lib/buf.h"
#include "lib/jv.h"
#include "lib/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_str(const struct jv *v, size_t max)
{
	const char *s = jv_str(v);

	if (v == NULL)
		return;
	if (s == NULL || jv_str_len(v) > max || !utf8_valid(s, jv_str_len(v)) ||
	    memchr(s, '\0', jv_str_len(v)) != NULL)
		__builtin_trap();
}

static void
check_event(void *ctx, const char *type, struct jv *data)
{
	struct buf out;

	(void)ctx;
	if (jv_type(data) != JV_OBJECT)
		__builtin_trap();
	if (strcmp(type, "message") == 0) {
		check_str(jv_get(data, "role"), 16);
		check_str(jv_get(data, "text"), AGENT_TEXT_MAX);
	} else if (strcmp(type, "tool") == 0) {
		check_str(jv_get(data, "name"), AGENT_NAME_MAX);
		check_str(jv_get(data, "status"), 16);
		check_str(jv_get(data, "path"), AGENT_PATH_MAX);
	} else if (strcmp(type, "status") == 0) {
		check_str(jv_get(data, "model"), AGENT_NAME_MAX);
	} else {
		__builtin_trap();
	}
	buf_init(&out, 1u << 20);
	if (jv_dump(data, &out) < 0)
		__builtin_trap();
	buf_release(&out);
	jv_free(data);
}

static void
check_outcome(const struct agent_outcome *o)
{
	if (o->final_message &&
	    (strlen(o->final_message) > AGENT_FINAL_MAX ||
	     !utf8_valid(o->final_message, strlen(o->final_message))))
		__builtin_trap();
	if (o->error && !utf8_valid(o->error, strlen(o->error)))
		__builtin_trap();
	if (o->tokens.input < 0 || o->tokens.output < 0 ||
	    o->tokens.reasoning < 0 || o->tokens.cache_read < 0 ||
	    o->tokens.cache_write < 0 || !(o->tokens.cost >= 0))
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size, *nl;
	struct agent_parser *p[2];
	struct agent_outcome out;
	int exit_code = size ? data[0] % 3 : 0;

	p[0] = agent_parser_new(AGENT_OPENCODE);
	p[1] = agent_parser_new(AGENT_CLAUDE);
	if (p[0] == NULL || p[1] == NULL)
		__builtin_trap();
	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (nl == NULL)
			nl = end;
		for (int i = 0; i < 2; i++)
			agent_parse_line(p[i], s, (size_t)(nl - s), check_event,
			                 NULL);
		s = nl + 1;
	}
	for (int i = 0; i < 2; i++) {
		agent_parser_finish(p[i], exit_code, &out);
		check_outcome(&out);
		agent_outcome_release(&out);
		agent_parser_free(p[i]);
	}
	return 0;
}
