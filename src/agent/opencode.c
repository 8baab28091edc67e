/*
 * opencode's stream (`opencode run --format json`): one object per line,
 * {"type":…,"timestamp":…,"sessionID":…,"part":{"id","sessionID",
 * "messageID","type",…}}.  The line types we act on:
 *   text         part.text                       → message agent
 *   tool_use     part.tool, part.state{status,input}  → tool
 *   step_finish  part.tokens{input,output,reasoning,cache{read,write}},
 *                part.cost                       → summed
 *   error        error{name,data{message}}        → message agent_error
 * step_start and anything else are skipped.  A line is recognised by its
 * own type or by its part's ("text", "tool", "step-finish"), since the
 * part shapes are what the server stores and the line types have been
 * renamed before.
 *
 * A part may report more than once (a text growing, a tool going from
 * pending to completed): the final message keeps each part's latest
 * text, and a tool status already sent for a part is not sent again.
 */
#include <string.h>

#include "agent/internal.h"

static void
opencode_error(struct agent_parser *p, const struct jv *line,
               const struct jv *part)
{
	static const char none[] = "agent error (no message)";
	struct jv *error = jv_get(line, "error");
	const char *msg;
	size_t len;

	(void)part;
	msg = agent_str(jv_get(error, "data"), "message", &len);
	if (msg == NULL)
		msg = agent_str(error, "name", &len);
	if (msg == NULL && (msg = jv_str(error)) != NULL)
		len = jv_str_len(error);
	if (msg == NULL || len == 0) {
		msg = none;
		len = sizeof(none) - 1;
	}
	agent_emit_message(p, true, msg, len);
	agent_api_error(p, msg, len);
}

static void
opencode_text(struct agent_parser *p, const struct jv *line,
              const struct jv *part)
{
	struct agent_part *t;
	const char *text, *id;
	size_t len, id_len;

	(void)line;
	text = agent_str(part, "text", &len);
	if (text == NULL)
		return;
	p->any_output = true;
	agent_emit_message(p, false, text, len);
	id = agent_str(part, "id", &id_len);
	t = agent_parts_get(&p->parts, id, id_len, true);
	if (t)
		agent_parts_set_text(&p->parts, t, text, len);
}

static void
opencode_tool(struct agent_parser *p, const struct jv *line,
              const struct jv *part)
{
	struct jv *state = jv_get(part, "state");
	const char *name, *id, *path;
	size_t name_len, id_len, path_len;
	int st;

	(void)line;
	name = agent_str(part, "tool", &name_len);
	st = agent_tool_status_parse(jv_str(jv_get(state, "status")));
	if (name == NULL || st < 0)
		return;
	path = agent_tool_path(jv_get(state, "input"), &path_len);
	id = agent_str(part, "id", &id_len);
	agent_emit_tool(
	    p, id ? agent_parts_get(&p->parts, id, id_len, true) : NULL, name,
	    name_len, (enum agent_tool_status)st, path, path_len);
}

static void
opencode_step_finish(struct agent_parser *p, const struct jv *line,
                     const struct jv *part)
{
	struct jv *tokens = jv_get(part, "tokens");
	struct jv *cache = jv_get(tokens, "cache");

	(void)line;
	agent_add_count(&p->tokens.input, jv_get(tokens, "input"));
	agent_add_count(&p->tokens.output, jv_get(tokens, "output"));
	agent_add_count(&p->tokens.reasoning, jv_get(tokens, "reasoning"));
	agent_add_count(&p->tokens.cache_read, jv_get(cache, "read"));
	agent_add_count(&p->tokens.cache_write, jv_get(cache, "write"));
	agent_add_cost(&p->tokens.cost, jv_get(part, "cost"));
}

static const struct opencode_kind {
	const char *type;      /* the line's type */
	const char *part_type; /* or its part's; NULL: none */
	void (*fn)(struct agent_parser *p, const struct jv *line,
	           const struct jv *part);
} opencode_kinds[] = {
    {.type = "error", .fn = opencode_error},
    {.type = "text", .part_type = "text", .fn = opencode_text},
    {.type = "tool_use", .part_type = "tool", .fn = opencode_tool},
    {.type = "step_finish",
     .part_type = "step-finish",
     .fn = opencode_step_finish},
};

void
agent_opencode_line(struct agent_parser *p, const struct jv *line)
{
	const struct jv *part = jv_get(line, "part");
	const char *type = jv_str(jv_get(line, "type"));
	const char *ptype = jv_str(jv_get(part, "type"));
	const struct opencode_kind *k;

	for (size_t i = 0; i < sizeof(opencode_kinds) / sizeof(*k); i++) {
		k = &opencode_kinds[i];
		if ((type && strcmp(type, k->type) == 0) ||
		    (ptype && k->part_type &&
		     strcmp(ptype, k->part_type) == 0)) {
			k->fn(p, line, part);
			return;
		}
	}
}
