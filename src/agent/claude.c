/*
 * Claude Code's stream (`claude -p --output-format stream-json
 * --verbose`): one object per line, told apart by "type":
 *   system     subtype "init", model        → status {"phase":"model"}
 *   assistant  message.content[] of text and tool_use blocks
 *              → message agent per text, tool "running" per tool_use;
 *              with a non-null top-level "error" the turn's text is
 *              the API error instead (message agent_error)
 *   user       message.content[] tool_result blocks
 *              → tool completed (or error) for the tool_use it answers
 *   result     result, usage, total_cost_usd, is_error, subtype
 *              → final message, tokens; is_error or a subtype other
 *              than "success" is the API error
 *   error      error (a string or {message}) → the API error
 * When it cannot start (no credentials) claude prints plain text;
 * such a line naming the cause is the API error too.
 *
 * The tool_use ids are remembered (with name and target, in the id
 * table) so a tool_result, which carries only the id, can be reported
 * under the right name.  Token counts come from the result line only:
 * the assistant lines' usage repeats per content block and the result
 * already sums the run.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "agent/internal.h"
#include "lib/utf8.h"

static const char claude_no_message[] = "agent error (no message)";

/* Plain-text lines claude prints instead of a stream when it cannot
 * authenticate. */
static const char *const claude_auth_failures[] = {
    "Not logged in",
    "Invalid API key",
};

static void
claude_fail(struct agent_parser *p, const char *msg, size_t len)
{
	if (msg == NULL || len == 0) {
		msg = claude_no_message;
		len = sizeof(claude_no_message) - 1;
	}
	agent_emit_message(p, true, msg, len);
	agent_api_error(p, msg, len);
}

/* An error value: a string, or an object with a message. */
static const char *
claude_error_text(const struct jv *error, size_t *len)
{
	const char *s = jv_str(error);

	*len = jv_str_len(error);
	if (s && *len)
		return s;
	return agent_str(error, "message", len);
}

static void
claude_system(struct agent_parser *p, const struct jv *line)
{
	const char *model, *subtype = jv_str(jv_get(line, "subtype"));
	struct jv *data;
	size_t len;

	if (subtype == NULL || strcmp(subtype, "init") != 0)
		return;
	model = agent_str(line, "model", &len);
	if (model == NULL || (data = jv_obj()) == NULL)
		return;
	jv_set_str(data, "phase", "model");
	jv_set(data, "model",
	       jv_new_str_lossy(model, utf8_clip(model, len, AGENT_NAME_MAX)));
	p->emit(p->ctx, "status", data);
}

static void
claude_tool_use(struct agent_parser *p, const struct jv *block)
{
	struct agent_part *part;
	const char *id, *name, *path;
	size_t id_len, name_len, path_len;

	name = agent_str(block, "name", &name_len);
	if (name == NULL)
		return;
	path = agent_tool_path(jv_get(block, "input"), &path_len);
	id = agent_str(block, "id", &id_len);
	part = id ? agent_parts_get(&p->parts, id, id_len, true) : NULL;
	if (part && part->name == NULL) {
		part->name = agent_strndup(name, name_len, AGENT_NAME_MAX);
		if (path)
			part->path =
			    agent_strndup(path, path_len, AGENT_PATH_MAX);
	}
	agent_emit_tool(p, part, name, name_len, AGENT_TOOL_RUNNING, path,
	                path_len);
}

static void
claude_text(struct agent_parser *p, const char *s, size_t len)
{
	p->any_output = true;
	agent_emit_message(p, false, s, len);
	if (p->text.len > 0)
		agent_buf_add(&p->text, "\n\n", 2);
	agent_buf_add(&p->text, s, len);
}

static void
claude_assistant(struct agent_parser *p, const struct jv *line)
{
	struct jv *content = jv_get(jv_get(line, "message"), "content");
	struct jv *error = jv_get(line, "error");
	bool failed = error && jv_type(error) != JV_NULL;
	struct buf said;
	const char *s, *type;
	size_t len;

	buf_init(&said, AGENT_TEXT_MAX);
	if ((s = jv_str(content)) != NULL)
		agent_buf_add(&said, s, jv_str_len(content));
	for (size_t i = 0; i < jv_len(content); i++) {
		struct jv *block = jv_at(content, i);

		type = jv_str(jv_get(block, "type"));
		if (type && strcmp(type, "tool_use") == 0) {
			claude_tool_use(p, block);
		} else if (type && strcmp(type, "text") == 0 &&
		           (s = agent_str(block, "text", &len)) != NULL) {
			if (!failed) {
				claude_text(p, s, len);
				continue;
			}
			if (said.len > 0)
				agent_buf_add(&said, "\n\n", 2);
			agent_buf_add(&said, s, len);
		}
	}
	if (failed) {
		s = said.len ? said.data : claude_error_text(error, &len);
		claude_fail(p, s, said.len ? said.len : len);
	} else if (jv_str(content) && said.len > 0) {
		claude_text(p, said.data, said.len);
	}
	buf_release(&said);
}

static void
claude_user(struct agent_parser *p, const struct jv *line)
{
	struct jv *content = jv_get(jv_get(line, "message"), "content");
	struct agent_part *part;
	const char *type, *id;
	size_t id_len;

	for (size_t i = 0; i < jv_len(content); i++) {
		struct jv *block = jv_at(content, i);

		type = jv_str(jv_get(block, "type"));
		if (type == NULL || strcmp(type, "tool_result") != 0)
			continue;
		id = agent_str(block, "tool_use_id", &id_len);
		part = agent_parts_get(&p->parts, id, id_len, false);
		if (part == NULL || part->name == NULL)
			continue;
		agent_emit_tool(p, part, part->name, strlen(part->name),
		                jv_is_true(jv_get(block, "is_error"))
		                    ? AGENT_TOOL_ERROR
		                    : AGENT_TOOL_COMPLETED,
		                part->path,
		                part->path ? strlen(part->path) : 0);
	}
}

static void
claude_result(struct agent_parser *p, const struct jv *line)
{
	struct jv *usage = jv_get(line, "usage");
	const char *result, *subtype;
	size_t len;
	bool failed;

	agent_add_count(&p->tokens.input, jv_get(usage, "input_tokens"));
	agent_add_count(&p->tokens.output, jv_get(usage, "output_tokens"));
	agent_add_count(&p->tokens.cache_read,
	                jv_get(usage, "cache_read_input_tokens"));
	agent_add_count(&p->tokens.cache_write,
	                jv_get(usage, "cache_creation_input_tokens"));
	agent_add_cost(&p->tokens.cost, jv_get(line, "total_cost_usd"));

	result = agent_str(line, "result", &len);
	if (result) {
		free(p->result);
		p->result = agent_strndup(result, len, AGENT_FINAL_MAX);
	}
	subtype = jv_str(jv_get(line, "subtype"));
	failed = jv_is_true(jv_get(line, "is_error")) ||
	         (subtype && strcmp(subtype, "success") != 0);
	if (!failed) {
		if (result)
			p->any_output = true;
		return;
	}
	if (p->api_error)
		return; /* already reported by the turn that failed */
	if (result == NULL && subtype && *subtype) {
		result = subtype;
		len = strlen(subtype);
	}
	claude_fail(p, result, len);
}

static void
claude_error(struct agent_parser *p, const struct jv *line)
{
	const char *msg;
	size_t len;

	msg = claude_error_text(jv_get(line, "error"), &len);
	if (msg == NULL)
		msg = agent_str(line, "message", &len);
	claude_fail(p, msg, msg ? len : 0);
}

static const struct claude_kind {
	const char *type;
	void (*fn)(struct agent_parser *p, const struct jv *line);
} claude_kinds[] = {
    {"system", claude_system}, {"assistant", claude_assistant},
    {"user", claude_user},     {"result", claude_result},
    {"error", claude_error},
};

void
agent_claude_line(struct agent_parser *p, const struct jv *line)
{
	const char *type = jv_str(jv_get(line, "type"));

	for (size_t i = 0;
	     type && i < sizeof(claude_kinds) / sizeof(*claude_kinds); i++)
		if (strcmp(type, claude_kinds[i].type) == 0) {
			claude_kinds[i].fn(p, line);
			return;
		}
}

void
agent_claude_text(struct agent_parser *p, const char *line, size_t len)
{
	struct jv *text;
	size_t i;

	for (i = 0; i < sizeof(claude_auth_failures) / sizeof(char *); i++)
		if (memmem(line, len, claude_auth_failures[i],
		           strlen(claude_auth_failures[i])))
			break;
	if (i == sizeof(claude_auth_failures) / sizeof(char *))
		return;
	/* The line is whatever bytes claude printed: made UTF-8 first. */
	text = jv_new_str_lossy(line, len);
	if (text == NULL)
		return;
	claude_fail(p, jv_str(text), jv_str_len(text));
	jv_free(text);
}

/* The final message: the result line's text, else the turn's text. */
char *
agent_claude_final(const struct agent_parser *p)
{
	if (p->result)
		return strdup(p->result);
	if (p->text.len > 0)
		return strdup(p->text.data);
	return NULL;
}

/* ---- the recipe ------------------------------------------------------- */

int
agent_claude_argv(const char *model, bool cont, const char *system_prompt,
                  const char *prompt, const char *const *files, struct buf *out)
{
	static const char head[] = "\n\nAttached images (read them): ";
	int rc = 0;

	rc |= agent_arg(out, "claude") | agent_arg(out, "-p") |
	      agent_arg(out, "--output-format") |
	      agent_arg(out, "stream-json") | agent_arg(out, "--verbose") |
	      agent_arg(out, "--dangerously-skip-permissions");
	if (model && *model)
		rc |= agent_arg(out, "--model") | agent_arg(out, model);
	if (cont)
		rc |= agent_arg(out, "--continue");
	rc |= agent_arg(out, "--append-system-prompt") |
	      agent_arg(out, system_prompt);
	/* Claude Code reads an image from a path the prompt names. */
	rc |= buf_append(out, prompt, strlen(prompt));
	if (files && files[0])
		rc |= buf_append(out, head, sizeof(head) - 1);
	for (size_t i = 0; files && files[i]; i++)
		rc |= buf_appendf(out, "%s%s", i ? ", " : "", files[i]);
	rc |= buf_append(out, "", 1);
	return rc ? -1 : 0;
}

/* The proxy as its Anthropic base URL, the proxy token as its key. */
int
agent_claude_env(const char *proxy_url, const char *token, const char *model,
                 struct buf *env, char *model_arg, size_t len)
{
	char url[600];

	snprintf(model_arg, len, "%s", model ? model : "");
	snprintf(url, sizeof(url), "%s/%s/anthropic", proxy_url,
	         AGENT_CLAUDE_NAME);
	return agent_env_add(env, "ANTHROPIC_BASE_URL", url) < 0 ||
	               agent_env_add(env, "ANTHROPIC_API_KEY", token) < 0 ||
	               agent_env_add(env,
	                             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
	                             "1") < 0
	           ? -1
	           : 0;
}
