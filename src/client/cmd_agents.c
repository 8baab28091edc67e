/*
 * The agent and settings commands, and `login`.  Keys and tokens are
 * read from stdin or typed at a prompt with echo off (client.c), never
 * taken from argv: argv lands in shell history and in every user's ps.
 * `settings set` takes a dotted key and builds the PATCH body from it
 * (agents.default_models.opencode=M ->
 * {"agents":{"default_models":{"opencode":M}}}), so settings the API
 * gains need no new client code; a value that is all digits is sent
 * as a number, "null" as null.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/calls.h"
#include "client/commands.h"
#include "lib/limits.h"

static const char *
scope(const struct cli_args *a)
{
	return cli_args_has(a, "instance") ? "?scope=instance" : "";
}

int
cmd_agents(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "AGENT", .field = "id"},
	    {.head = "STATUS", .field = "status"},
	    {.head = "METHOD", .field = "method"},
	    {.head = "SOURCE", .field = "source"},
	    {.head = "MODEL", .field = "default_model", .alt = "free_model"},
	};
	char path[128];
	struct cli_resp r;
	int rc;

	snprintf(path, sizeof(path), "/v1/agents%s", scope(a));
	rc = cli_get_list(c, path, "agents", cols, 5, 0, &r);
	cli_resp_release(&r);
	return rc;
}

static void
print_json(const struct jv *v)
{
	struct buf b;

	buf_init(&b, 0);
	if (jv_dump(v, &b) == 0)
		printf("%s\n", b.data);
	buf_release(&b);
}

/* The models of one agent or of all, a table of one row a model. */
int
cmd_agents_models(struct cli *c, const struct cli_args *a)
{
	static const struct cli_col cols[] = {
	    {.head = "AGENT", .field = "agent"},
	    {.head = "MODEL", .field = "id"},
	    {.head = "PROVIDER", .field = "provider"},
	    {.head = "USABLE", .field = "usable", .kind = CLI_COL_YESNO},
	    {.head = "FREE", .field = "free", .kind = CLI_COL_YESNO},
	    {.head = "DEFAULT", .field = "default", .kind = CLI_COL_YESNO},
	};
	const char *only = a->npos > 0 ? a->pos[0] : NULL;
	struct jv *rows = jv_arr(), *agents;
	struct cli_resp r;
	bool found = false;
	int rc = cli_call(c, "GET", "/v1/agents", NULL, &r);

	agents = rc == 0 ? jv_get(r.json, "agents") : NULL;
	for (size_t i = 0; i < jv_len(agents); i++) {
		const struct jv *ag = jv_at(agents, i);
		const struct jv *ms = jv_get(ag, "models");
		const char *name = jv_str(jv_get(ag, "id"));
		if (name == NULL || (only && strcmp(only, name) != 0))
			continue;
		found = true;
		for (size_t k = 0; k < jv_len(ms); k++) {
			struct jv *m = jv_copy(jv_at(ms, k));
			jv_set_str(m, "agent", name);
			jv_push(rows, m);
		}
	}
	if (rc == 0 && only && !found)
		rc = cli_fail(CLI_ENOTFOUND, "not_found", "no such agent: %s",
		              only);
	else if (rc == 0 && c->json)
		print_json(rows);
	else if (rc == 0)
		cli_print_list(c, rows, cols, 6, 1);
	jv_free(rows);
	cli_resp_release(&r);
	return rc;
}

static int
agent_path(char *out, size_t len, const char *agent, const char *verb,
           const struct cli_args *a)
{
	char p[256];

	if (cli_pathf(p, sizeof(p), "/v1/agents/%s/", agent) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "the agent is too long");
	snprintf(out, len, "%s%s%s", p, verb, scope(a));
	return 0;
}

int
cmd_agent_key(struct cli *c, const struct cli_args *a)
{
	char key[CLI_MAX_SECRET_BYTES + 1], path[512];
	struct jv *body;
	struct cli_resp r;
	int rc = agent_path(path, sizeof(path), a->pos[0], "api-key", a);

	if (rc)
		return rc;
	if (cli_read_secret("API key (not shown): ", key, sizeof(key)) < 0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "no key on stdin (or it is over %d bytes)",
		                CLI_MAX_SECRET_BYTES);
	body = jv_obj();
	jv_set_str(body, "api_key", key);
	explicit_bzero(key, sizeof(key));
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(c, &r, "%s: connected with an API key\n", a->pos[0]);
	cli_resp_release(&r);
	return rc;
}

int
cmd_agent_login(struct cli *c, const struct cli_args *a)
{
	char path[512], code[CLI_MAX_SECRET_BYTES + 1], tmp[64];
	struct jv *body;
	struct cli_resp r;
	const char *url;
	int rc = agent_path(path, sizeof(path), a->pos[0], "oauth/start", a);

	if (rc)
		return rc;
	rc = cli_call(c, "POST", path, NULL, &r);
	if (rc != 0) {
		cli_resp_release(&r);
		return rc;
	}
	url = jv_str(jv_get(r.json, "authorize_url"));
	/* The URL goes to stderr on a terminal so stdout stays for --json. */
	if (c->json)
		cli_print_raw(&r);
	fprintf(c->json ? stderr : stdout,
	        "Open this URL, approve, and paste the code the page shows:\n"
	        "%s\n",
	        url ? url : "(no URL in the answer)");
	fflush(stdout);
	cli_resp_release(&r);
	if (cli_read_line("Code: ", code, sizeof(code)) < 0)
		return cli_fail(CLI_EUSAGE, "usage", "no code was given");
	rc = agent_path(path, sizeof(path), a->pos[0], "oauth/finish", a);
	body = jv_obj();
	jv_set_str(body, "code", code);
	explicit_bzero(code, sizeof(code));
	rc = cli_call(c, "POST", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(c, &r, "%s: signed in (expires %s)\n", a->pos[0],
		         cli_field(r.json, "expires_at", tmp, sizeof(tmp)));
	cli_resp_release(&r);
	return rc;
}

int
cmd_agent_disconnect(struct cli *c, const struct cli_args *a)
{
	char path[512];
	struct cli_resp r;
	int rc = agent_path(path, sizeof(path), a->pos[0], "disconnect", a);

	if (rc)
		return rc;
	rc = cli_call(c, "POST", path, NULL, &r);
	if (rc == 0 && !c->json && !c->quiet)
		printf("%s: disconnected\n", a->pos[0]);
	cli_resp_release(&r);
	return rc;
}

/* The value at a dotted key of o, or NULL. */
static const struct jv *
dotted(const struct jv *o, const char *key)
{
	char part[128];

	while (o && *key) {
		const char *dot = strchr(key, '.');
		size_t n = dot ? (size_t)(dot - key) : strlen(key);

		snprintf(part, sizeof(part), "%.*s", (int)n, key);
		o = jv_type(o) == JV_OBJECT ? jv_get(o, part) : NULL;
		key += n + (dot ? 1 : 0);
	}
	return o;
}

int
cmd_settings_get(struct cli *c, const struct cli_args *a)
{
	struct cli_resp r;
	int rc = cli_call(c, "GET", "/v1/settings", NULL, &r);

	if (rc == 0 && a->npos == 1) {
		const struct jv *v = dotted(r.json, a->pos[0]);
		struct buf b;

		if (v == NULL) {
			rc = cli_fail(CLI_ENOTFOUND, "not_found",
			              "no setting %s", a->pos[0]);
		} else if (jv_type(v) == JV_STRING && !c->json) {
			printf("%s\n", jv_str(v));
		} else {
			buf_init(&b, 0);
			jv_dump(v, &b);
			printf("%s\n", b.data ? b.data : "null");
			buf_release(&b);
		}
	} else if (rc == 0 && c->json) {
		cli_print_raw(&r);
	} else if (rc == 0) {
		/* Flattened: one dotted key a line. */
		const struct jv *ag = jv_get(r.json, "agents");
		void *it = NULL;
		const char *k;
		struct jv *v;
		char tmp[4096];

		printf("tenant %s%s, version %s\n",
		       cli_field(r.json, "tenant", tmp, sizeof(tmp)),
		       jv_is_true(jv_get(r.json, "operator")) ? " (operator)"
		                                              : "",
		       jv_str(jv_get(r.json, "version")) ?: "?");
		while (jv_each(ag, &it, &k, &v))
			printf("agents.%s  %s\n", k,
			       cli_field(ag, k, tmp, sizeof(tmp)));
		it = NULL;
		while (jv_each(r.json, &it, &k, &v))
			if (jv_type(v) == JV_OBJECT && strcmp(k, "agents") != 0)
				printf("%s  %s\n", k,
				       cli_field(r.json, k, tmp, sizeof(tmp)));
		printf("editable  %s\n",
		       cli_field(r.json, "editable", tmp, sizeof(tmp)));
	}
	cli_resp_release(&r);
	return rc;
}

/* {"a":{"b":{"c":value}}} from "a.b.c". */
static struct jv *
nest(const char *key, struct jv *value)
{
	const char *dot = strrchr(key, '.');
	char head[256];
	struct jv *o = jv_obj();

	jv_set(o, dot ? dot + 1 : key, value);
	if (dot == NULL)
		return o;
	snprintf(head, sizeof(head), "%.*s", (int)(dot - key), key);
	return nest(head, o);
}

int
cmd_settings_set(struct cli *c, const struct cli_args *a)
{
	const char *v = a->pos[1];
	struct jv *value, *body;
	char path[64];
	struct cli_resp r;
	bool digits = v[0] != '\0';
	int rc;

	for (const char *p = v; *p; p++)
		digits = digits && isdigit((unsigned char)*p);
	if (strcmp(v, "null") == 0)
		value = NULL;
	else if (digits && strlen(v) < 16)
		value = jv_new_int(strtoll(v, NULL, 10));
	else
		value = jv_new_str(v);
	if (value == NULL) {
		/* jv_set leaves a NULL out: null is built by parsing. */
		char err[64];
		value = jv_parse("null", 4, 2, err, sizeof(err));
	}
	body = nest(a->pos[0], value);
	snprintf(path, sizeof(path), "/v1/settings%s", scope(a));
	rc = cli_call(c, "PATCH", path, body, &r);
	jv_free(body);
	if (rc == 0)
		cli_done(c, &r, "%s = %s\n", a->pos[0], v);
	cli_resp_release(&r);
	return rc;
}

int
cmd_login(struct cli *c, const struct cli_args *a)
{
	char api[1024], token[CLI_MAX_SECRET_BYTES + 1],
	    where[WORKSPACE_PATH_MAX];
	struct cli_resp r;
	int rc;

	(void)a;
	snprintf(api, sizeof(api), "%s", c->api);
	if (cli_read_secret("API token (not shown): ", token, sizeof(token)) <
	    0)
		return cli_fail(CLI_EUSAGE, "usage",
		                "no token on stdin (or it is over %d bytes)",
		                CLI_MAX_SECRET_BYTES);
	/* Checked before it is stored. */
	snprintf(c->token, sizeof(c->token), "%s", token);
	c->token_set = true;
	rc = cli_call(c, "GET", "/v1/settings", NULL, &r);
	if (rc == 0) {
		if (cli_config_save(api, token, where, sizeof(where)) < 0)
			rc = cli_fail(CLI_EFAIL, "config", "%s", where);
		else if (!c->quiet && !c->json)
			printf("logged in to %s as %s; saved in %s\n", api,
			       jv_str(jv_get(r.json, "tenant")) ?: "?", where);
	}
	explicit_bzero(token, sizeof(token));
	cli_resp_release(&r);
	return rc;
}
