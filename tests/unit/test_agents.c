/*
 * The agents table (agent/agents.h) against everything that reads it:
 * what GET /v1/agents lists, the proxy's paths, SANDBOXD_DEFAULT_AGENT,
 * the kinds and the command builder.
 */
#include <stdlib.h>

#include "agent/agents.h"
#include "api/api.h"
#include "task/agentcmd.h"
#include "config/config.h"
#include "proxy/providers.h"
#include "store_fixture.h"
#include "unit.h"

/* GET /v1/agents lists the table's rows, in its order, with its facts. */
static void
listed_as_in_the_table(void)
{
	struct store *s = store_fixture_open_sealed();
	struct config cfg;
	struct core c;
	struct req r;
	struct resp w;
	struct jv *v, *arr;
	char err[128];

	CHECK(s != NULL);
	if (s == NULL)
		return;
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.opencode_free_model, sizeof(cfg.opencode_free_model), "%s",
	         "free/one");
	memset(&c, 0, sizeof(c));
	c.cfg = &cfg;
	c.store = s;
	memset(&r, 0, sizeof(r));
	r.core = &c;
	memset(&w, 0, sizeof(w));
	buf_init(&w.body, 0);
	agents_list(&r, &w);
	CHECK(w.status == 200);
	v = jv_parse(w.body.data, w.body.len, 16, err, sizeof(err));
	arr = jv_get(v, "agents");
	CHECK(jv_len(arr) == agents_count);
	for (size_t i = 0; i < agents_count && i < jv_len(arr); i++) {
		const struct agent_def *d = &agents[i];
		struct jv *o = jv_at(arr, i);

		CHECK_STR(jv_str(jv_get(o, "id")), d->name);
		CHECK_STR(jv_str(jv_get(o, "label")), d->label);
		CHECK(jv_is_true(jv_get(o, "supports_api_key")) == d->api_key);
		CHECK(jv_is_true(jv_get(o, "supports_oauth")) == d->oauth);
		CHECK((jv_get(o, "free_model") != NULL) ==
		      (d->free_model != NULL));
		if (d->free_model)
			CHECK_STR(jv_str(jv_get(o, "free_model")), "free/one");
		CHECK_STR(jv_str(jv_get(o, "status")), "not_connected");
	}
	jv_free(v);
	buf_release(&w.body);
	store_fixture_close(s);
}

/* Every row is whole, findable by name and by kind, and unique. */
static void
rows_are_whole(void)
{
	char names[256];

	CHECK(agents_count >= 2);
	for (size_t i = 0; i < agents_count; i++) {
		const struct agent_def *d = &agents[i];

		CHECK((size_t)d->kind == i);
		CHECK(agent_find(d->name) == d);
		CHECK(agent_of(d->kind) == d);
		CHECK(agent_kind_parse(d->name) == (int)d->kind);
		CHECK_STR(agent_kind_name(d->kind), d->name);
		CHECK(d->label && *d->label);
		CHECK(d->api_key || d->oauth);
		CHECK(d->argv && d->env && d->line && d->final);
		CHECK((d->free_upstream == NULL) == (d->free_model == NULL));
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(agents[k].name, d->name) != 0);
	}
	CHECK(agent_find("codex") == NULL);
	CHECK(agent_find(NULL) == NULL);
	CHECK(agent_of((enum agent_kind)agents_count) == NULL);
	agent_names(", ", names, sizeof(names));
	CHECK_STR(names, "opencode, claude-code");
}

/* The proxy takes exactly the table's names as path agents. */
static void
proxy_paths_take_the_rows(void)
{
	struct config cfg;
	struct proxy_path p;
	char path[128], msg[256];

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.anthropic_base_url, sizeof(cfg.anthropic_base_url),
	         "https://api.anthropic.com");
	snprintf(cfg.openai_base_url, sizeof(cfg.openai_base_url), "https://o");
	snprintf(cfg.zen_base_url, sizeof(cfg.zen_base_url), "https://z");
	snprintf(cfg.compat_base_url, sizeof(cfg.compat_base_url), "https://c");
	for (size_t i = 0; i < agents_count; i++) {
		snprintf(path, sizeof(path), "/%s/anthropic/v1/messages",
		         agents[i].name);
		CHECK(provider_path(&cfg, "POST", path, &p, msg, sizeof(msg)) ==
		      0);
		CHECK_STR(p.agent, agents[i].name);
		/* Every upstream a row names is one the proxy knows (a
		 * known one with a path that is no endpoint is a 403). */
		CHECK(agents[i].upstreams && agents[i].upstreams[0]);
		for (size_t k = 0; agents[i].upstreams[k]; k++) {
			snprintf(path, sizeof(path), "/%s/%s/no-endpoint",
			         agents[i].name, agents[i].upstreams[k]);
			CHECK(provider_path(&cfg, "POST", path, &p, msg,
			                    sizeof(msg)) == 403);
			CHECK(agent_uses_upstream(&agents[i],
			                          agents[i].upstreams[k]));
		}
		CHECK(!agent_uses_upstream(&agents[i], "evil"));
	}
	CHECK(provider_path(&cfg, "POST", "/opencodex/anthropic/v1/messages",
	                    &p, msg, sizeof(msg)) == 404);
	CHECK(provider_path(&cfg, "POST",
	                    "/a-very-long-agent-name-indeed/anthropic/v1", &p,
	                    msg, sizeof(msg)) == 404);
}

/* SANDBOXD_DEFAULT_AGENT takes the table's names and nothing else. */
static void
default_agent_is_a_row(void)
{
	struct config c;
	char err[256];

	setenv("SANDBOXD_ENV_FILE", "/dev/null", 1);
	setenv("SANDBOXD_DATA_DIR", "/tmp/sandboxd-unit", 1);
	for (size_t i = 0; i < agents_count; i++) {
		setenv("SANDBOXD_DEFAULT_AGENT", agents[i].name, 1);
		CHECK(config_load(&c, err, sizeof(err)) == 0);
		CHECK_STR(c.default_agent, agents[i].name);
	}
	setenv("SANDBOXD_DEFAULT_AGENT", "codex", 1);
	CHECK(config_load(&c, err, sizeof(err)) < 0);
	CHECK_STR(err, "SANDBOXD_DEFAULT_AGENT: \"codex\" is not opencode or "
	               "claude-code");
	unsetenv("SANDBOXD_DEFAULT_AGENT");
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR(c.default_agent, agents[AGENT_OPENCODE].name);
	CHECK_STR(c.opencode_free_model, agents[AGENT_OPENCODE].free_model);
}

/* The command builder goes through the rows: each names its own CLI. */
static void
command_builder_uses_the_rows(void)
{
	struct buf b, env;
	char model[256];

	for (size_t i = 0; i < agents_count; i++) {
		buf_init(&b, 0);
		buf_init(&env, 0);
		CHECK(agentcmd_argv(agents[i].kind, "", false, "SYS", "do it",
		                    NULL, &b) == 0);
		CHECK(b.len > 0);
		CHECK(agentcmd_env(agents[i].kind, "http://10.0.0.1:1", "tok",
		                   "", &env, model, sizeof(model)) == 0);
		/* The proxy URL names the agent's own path segment. */
		CHECK(env.data && memmem(env.data, env.len, agents[i].name,
		                         strlen(agents[i].name)) != NULL);
		buf_release(&b);
		buf_release(&env);
	}
	buf_init(&b, 0);
	CHECK(agentcmd_argv((enum agent_kind)agents_count, "", false, "S", "p",
	                    NULL, &b) < 0);
	buf_release(&b);
}

static const struct unit_test tests[] = {
    {"GET /v1/agents lists the table's rows", listed_as_in_the_table},
    {"every row is whole and found by name and kind", rows_are_whole},
    {"proxy paths take exactly the rows' names", proxy_paths_take_the_rows},
    {"SANDBOXD_DEFAULT_AGENT is one of the rows", default_agent_is_a_row},
    {"the command builder goes through the rows",
     command_builder_uses_the_rows},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("agents", tests);
}
