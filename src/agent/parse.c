/*
 * The agents' stream parsers, the part every format shares: a line is
 * bounded, parsed as JSON and handed to its format (opencode.c,
 * claude.c), through the agents table; the events are built by the
 * helpers of util.c; the outcome is drawn up at the end.
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
