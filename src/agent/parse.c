/*
 * The agents' stream parsers, the part every format shares: a line is
 * bounded, parsed as JSON and handed to its format (opencode.c,
 * claude.c); events are built here, so their shapes and limits live in
 * one place; the outcome is drawn up at the end.
 *
 * Lines are parsed by our JSON library, which refuses text that is not
 * UTF-8.  A line that fails to parse and is not UTF-8, or holds a NUL,
 * is retried once with those bytes made U+FFFD, so one stray byte in a
 * file an agent printed loses a character, not the whole event.  Strings
 * we hold were parsed, hence valid UTF-8, and are only ever cut on a
 * character boundary (utf8_clip), so every event is valid UTF-8.
 *
 * Rejected: keeping the raw lines (the final message is rebuilt from
 * what each part said last, which is all the outcome needs), and
 * parsing with a streaming tokenizer (a line is at most AGENT_LINE_MAX
 * and parsing it whole keeps each format a few lookups).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agents.h"
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

struct agent_parser *
agent_parser_new(enum agent_kind kind)
{
	struct agent_parser *p;

	if (agent_kind_name(kind) == NULL)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->kind = kind;
	buf_init(&p->text, AGENT_FINAL_MAX);
	return p;
}

void
agent_parser_free(struct agent_parser *p)
{
	if (p == NULL)
		return;
	agent_parts_release(&p->parts);
	buf_release(&p->text);
	free(p->result);
	free(p->api_error);
	free(p);
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

static struct jv *
agent_parse_json(const char *line, size_t len)
{
	char err[128];
	struct jv *v, *fixed;

	v = jv_parse(line, len, AGENT_JSON_DEPTH, err, sizeof(err));
	/* Only bytes that are not UTF-8, or a NUL, can be made valid. */
	if (v || (utf8_valid(line, len) && memchr(line, '\0', len) == NULL))
		return v;
	fixed = jv_new_str_lossy(line, len);
	if (fixed == NULL)
		return NULL;
	v = jv_parse(jv_str(fixed), jv_str_len(fixed), AGENT_JSON_DEPTH, err,
	             sizeof(err));
	jv_free(fixed);
	return v;
}

void
agent_parse_line(struct agent_parser *p, const char *line, size_t len,
                 agent_emit_fn *emit, void *ctx)
{
	const struct agent_def *def = agent_of(p->kind);
	struct jv *v;
	size_t i = 0;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > AGENT_LINE_MAX)
		return;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == len)
		return;
	p->emit = emit;
	p->ctx = ctx;
	if (line[i] != '{') {
		/* Not JSON at all: only some agents say useful things
		 * this way. */
		if (def->text)
			def->text(p, line, len);
		return;
	}
	v = agent_parse_json(line, len);
	if (v == NULL)
		return;
	if (jv_type(v) == JV_OBJECT)
		def->line(p, v);
	jv_free(v);
}

void
agent_parser_finish(struct agent_parser *p, int exit_code,
                    struct agent_outcome *out)
{
	struct buf e;

	memset(out, 0, sizeof(*out));
	out->final_message = agent_of(p->kind)->final(p);
	out->tokens = p->tokens;
	out->any_output = p->any_output;
	buf_init(&e, AGENT_TEXT_MAX + 64);
	if (p->api_error)
		buf_appendf(&e, "agent error: %s", p->api_error);
	else if (exit_code != 0)
		buf_appendf(&e, "agent exited with code %d", exit_code);
	else if (!p->any_output)
		buf_appendf(&e, "agent produced no output");
	out->error = e.data;
}

void
agent_outcome_release(struct agent_outcome *out)
{
	free(out->final_message);
	free(out->error);
	out->final_message = NULL;
	out->error = NULL;
}
