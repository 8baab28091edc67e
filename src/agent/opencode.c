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
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
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

/* The final message: the latest text of each part, in first-seen order. */
char *
agent_opencode_final(const struct agent_parser *p)
{
	const struct agent_parts *t = &p->parts;
	struct buf b;

	buf_init(&b, AGENT_FINAL_MAX);
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].text_len == 0)
			continue;
		if (b.len > 0)
			agent_buf_add(&b, "\n\n", 2);
		agent_buf_add(&b, t->v[i].text, t->v[i].text_len);
	}
	if (b.len == 0)
		buf_release(&b);
	return b.data;
}

/* ---- the recipe ------------------------------------------------------- */

int
agent_opencode_argv(const char *model, bool cont, const char *system_prompt,
                    const char *prompt, const char *const *files,
                    struct buf *out)
{
	int rc = 0;

	rc |= agent_arg(out, "opencode") | agent_arg(out, "run");
	/* --file is an array option: it takes every word up to the next
	 * option, so each comes before the other options, never last. */
	for (size_t i = 0; files && files[i]; i++)
		rc |= agent_arg(out, "--file") | agent_arg(out, files[i]);
	rc |= agent_arg(out, "--format") | agent_arg(out, "json") |
	      agent_arg(out, "--dangerously-skip-permissions");
	if (model && *model)
		rc |= agent_arg(out, "--model") | agent_arg(out, model);
	if (cont) {
		rc |= agent_arg(out, "--continue") | agent_arg(out, prompt);
	} else {
		/* OpenCode takes no system prompt flag: it leads. */
		static const char rule[] = "\n\n---\n\n# Your task\n\n";
		rc |= buf_append(out, system_prompt, strlen(system_prompt)) |
		      buf_append(out, rule, sizeof(rule) - 1) |
		      agent_arg(out, prompt);
	}
	return rc ? -1 : 0;
}

/* Which proxy upstream and SDK a "provider/id" model takes. */
static void
opencode_route(const char *model, const char **upstream, const char **npm,
               const char **suffix, const char **id)
{
	const char *slash = strchr(model, '/');
	size_t n = slash ? (size_t)(slash - model) : 0;

	*upstream = "zen";
	*npm = "@ai-sdk/openai-compatible";
	*suffix = "";
	*id = slash ? slash + 1 : model;
	if (n == 6 && memcmp(model, "openai", 6) == 0) {
		*upstream = "openai";
	} else if (n == 9 && memcmp(model, "anthropic", 9) == 0) {
		*upstream = "anthropic";
		*npm = "@ai-sdk/anthropic";
		*suffix = "/v1"; /* the SDK appends /messages */
	} else if (n == 6 && memcmp(model, "compat", 6) == 0) {
		*upstream = "compat";
	}
}

/* {"input":["text","image"],"output":["text"]} */
static struct jv *
modalities(void)
{
	struct jv *o = jv_obj(), *in = jv_arr(), *out = jv_arr();

	jv_push(in, jv_new_str("text"));
	jv_push(in, jv_new_str("image"));
	jv_push(out, jv_new_str("text"));
	jv_set(o, "input", in);
	jv_set(o, "output", out);
	return o;
}

/*
 * The task's model "provider/id" becomes a provider of its own config
 * that points at the proxy (OPENCODE_CONFIG_CONTENT).
 */
int
agent_opencode_env(const char *proxy_url, const char *token, const char *model,
                   struct buf *env, char *model_arg, size_t len)
{
	const char *upstream, *npm, *suffix, *id;
	struct jv *cfg, *prov, *opts, *models, *m;
	char url[600];
	struct buf json;
	int rc;

	opencode_route(model && *model ? model : AGENT_OPENCODE_DEFAULT_MODEL,
	               &upstream, &npm, &suffix, &id);
	snprintf(url, sizeof(url), "%s/%s/%s%s", proxy_url, AGENT_OPENCODE_NAME,
	         upstream, suffix);
	snprintf(model_arg, len, "sandboxd/%s", id);
	opts = jv_obj();
	jv_set_str(opts, "baseURL", url);
	jv_set_str(opts, "apiKey", token);
	m = jv_obj();
	jv_set_str(m, "name", id);
	/* Without these OpenCode drops an attached image before the model
	 * sees it; a model that takes no images answers with its error. */
	jv_set_bool(m, "attachment", true);
	jv_set(m, "modalities", modalities());
	models = jv_obj();
	jv_set(models, id, m);
	prov = jv_obj();
	jv_set_str(prov, "npm", npm);
	jv_set_str(prov, "name", "sandboxd");
	jv_set(prov, "options", opts);
	jv_set(prov, "models", models);
	cfg = jv_obj();
	jv_set_str(cfg, "$schema", "https://opencode.ai/config.json");
	jv_set(cfg, "provider", jv_obj());
	jv_set(jv_get(cfg, "provider"), "sandboxd", prov);
	jv_set_str(cfg, "share", "disabled");
	jv_set_bool(cfg, "autoupdate", false);
	buf_init(&json, 64u << 10);
	rc = jv_dump(cfg, &json);
	jv_free(cfg);
	/* The config in the environment wins over any opencode.json the
	 * app directory holds (one there could point the agent elsewhere). */
	if (rc < 0 ||
	    agent_env_add(env, "OPENCODE_CONFIG_CONTENT", json.data) < 0 ||
	    agent_env_add(env, "OPENCODE_DISABLE_MODELS_FETCH", "1") < 0 ||
	    agent_env_add(env, "OPENCODE_DISABLE_LSP_DOWNLOAD", "1") < 0 ||
	    agent_env_add(env, "OPENCODE_DISABLE_SHARE", "1") < 0)
		rc = -1;
	buf_release(&json);
	return rc;
}
