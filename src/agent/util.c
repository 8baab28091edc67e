/*
 * The helpers the formats (opencode.c, claude.c) and their recipes
 * share: bounded copies and lookups, the sums of tokens and costs, the
 * events (so their shapes and limits live in one place), and the argv
 * and environment entries.  The bottom of the module: it calls no other
 * file of it, so the table (agents.c) may name the formats' hooks while
 * the formats, the id table (parts.c) and the dispatcher (parse.c) all
 * call down here.
 *
 * Rejected: keeping these in parse.c and agents.c, which made the
 * dispatcher and the formats, and the table and the recipes, call each
 * other.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/internal.h"
#include "lib/utf8.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const agent_tool_statuses[] = {
    [AGENT_TOOL_PENDING] = "pending",
    [AGENT_TOOL_RUNNING] = "running",
    [AGENT_TOOL_COMPLETED] = "completed",
    [AGENT_TOOL_ERROR] = "error",
};

/* Where a tool's target is, in the order the input keys are tried. */
static const char *const agent_path_keys[] = {
    "filePath", "file_path", "path", "file", "pattern", "command",
};

int
agent_tool_status_parse(const char *s)
{
	for (size_t i = 0; s && i < NELEM(agent_tool_statuses); i++)
		if (strcmp(s, agent_tool_statuses[i]) == 0)
			return (int)i;
	return -1;
}

/* A NUL-terminated copy of s cut to max bytes, or NULL. */
char *
agent_strndup(const char *s, size_t len, size_t max)
{
	char *d;

	len = utf8_clip(s, len, max);
	d = malloc(len + 1);
	if (d == NULL)
		return NULL;
	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

/* Appends as much of s as b's cap leaves room for, on a boundary. */
void
agent_buf_add(struct buf *b, const char *s, size_t len)
{
	buf_append(b, s, utf8_clip(s, len, b->max - b->len));
}

/* obj[key] when it is a non-empty string, else NULL. */
const char *
agent_str(const struct jv *obj, const char *key, size_t *len)
{
	struct jv *v = jv_get(obj, key);
	const char *s = jv_str(v);

	*len = jv_str_len(v);
	return s && *len ? s : NULL;
}

const char *
agent_tool_path(const struct jv *input, size_t *len)
{
	const char *s;

	for (size_t i = 0; i < NELEM(agent_path_keys); i++)
		if ((s = agent_str(input, agent_path_keys[i], len)) != NULL)
			return s;
	*len = 0;
	return NULL;
}

/* Token counts: non-negative integers (or whole reals); the sum
 * saturates rather than overflow. */
void
agent_add_count(int64_t *sum, const struct jv *v)
{
	int64_t n;
	double d;

	if (v == NULL)
		return;
	if (jv_type(v) == JV_INT) {
		n = jv_int(v);
	} else if (jv_type(v) == JV_REAL) {
		d = jv_num(v);
		if (!(d >= 0 && d < 9e18))
			return;
		n = (int64_t)d;
	} else {
		return;
	}
	if (n <= 0)
		return;
	*sum = n > INT64_MAX - *sum ? INT64_MAX : *sum + n;
}

/* Costs in USD: anything outside [0, 1e9] is not a cost. */
void
agent_add_cost(double *sum, const struct jv *v)
{
	double d;

	if (v == NULL || (jv_type(v) != JV_INT && jv_type(v) != JV_REAL))
		return;
	d = jv_num(v);
	if (d >= 0 && d <= 1e9)
		*sum += d;
}

static void
agent_emit(struct agent_parser *p, const char *type, struct jv *data)
{
	if (data)
		p->emit(p->ctx, type, data);
}

void
agent_emit_message(struct agent_parser *p, bool error, const char *s,
                   size_t len)
{
	struct jv *data = jv_obj();

	if (data == NULL)
		return;
	jv_set_str(data, "role", error ? "agent_error" : "agent");
	jv_set(data, "text",
	       jv_new_str_lossy(s, utf8_clip(s, len, AGENT_TEXT_MAX)));
	agent_emit(p, "message", data);
}

/* A tool event, once per (part, status) when the part is tracked. */
void
agent_emit_tool(struct agent_parser *p, struct agent_part *part,
                const char *name, size_t name_len, enum agent_tool_status st,
                const char *path, size_t path_len)
{
	struct jv *data;

	p->any_output = true;
	if (part) {
		if (part->emitted & (1u << st))
			return;
		part->emitted |= 1u << st;
	}
	data = jv_obj();
	if (data == NULL)
		return;
	jv_set(
	    data, "name",
	    jv_new_str_lossy(name, utf8_clip(name, name_len, AGENT_NAME_MAX)));
	jv_set_str(data, "status", agent_tool_statuses[st]);
	if (path)
		jv_set(data, "path",
		       jv_new_str_lossy(
		           path, utf8_clip(path, path_len, AGENT_PATH_MAX)));
	agent_emit(p, "tool", data);
}

/* The first API error is the one the outcome reports. */
void
agent_api_error(struct agent_parser *p, const char *s, size_t len)
{
	if (p->api_error == NULL)
		p->api_error = agent_strndup(s, len, AGENT_TEXT_MAX);
}

int
agent_arg(struct buf *out, const char *s)
{
	return buf_append(out, s, strlen(s) + 1); /* with its NUL */
}

int
agent_env_add(struct buf *env, const char *name, const char *value)
{
	return buf_appendf(env, "%s=%s", name, value) < 0 ||
	               buf_append(env, "", 1) < 0
	           ? -1
	           : 0;
}
