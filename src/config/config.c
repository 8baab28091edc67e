/*
 * Configuration.  Values come from the process environment first and from
 * the .env file second (SANDBOXD_ENV_FILE, default ./.env; a missing
 * default file is fine, a missing named file is an error).  The file is a
 * list of KEY=VALUE lines; '#' starts a comment line, an optional
 * "export " prefix and one pair of matching quotes around the value are
 * accepted.  Each variable is one row of vars[] at the end: its kind
 * (a whole number in a range, a port, a boolean, a word of allowed
 * characters, an http(s) URL, secret text), its default and its field of
 * struct config, parsed by one loop in the table's order; what no kind
 * covers (the data directory, the API address, the tokens, the network
 * and egress, the Docker socket) is a hook row, and a row may add a check
 * that runs after its value is parsed; the hooks are in hooks.c.  Every parser
 * refuses what it does not understand: a typo must stop the daemon, not quietly
 * fall back to a default.
 */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agents.h"
#include "config/internal.h"
#include "lib/buf.h"
#include "lib/log.h"

static int
parse_int(const struct envfile *f, const char *name, int64_t def, int64_t min,
          int64_t max, int64_t *out, char *err, size_t errlen)
{
	const char *v = envfile_lookup(f, name);
	char *end;
	long long n;

	if (v == NULL || *v == '\0') {
		*out = def;
		return 0;
	}
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end != '\0' || !isdigit((unsigned char)*v))
		FAIL("%s: \"%s\" is not a whole number", name, v);
	if (n < min || n > max)
		FAIL("%s: %lld is out of range (%lld..%lld)", name, n,
		     (long long)min, (long long)max);
	*out = n;
	return 0;
}

static int
parse_bool(const struct envfile *f, const char *name, bool def, bool *out,
           char *err, size_t errlen)
{
	const char *v = envfile_lookup(f, name);

	if (v == NULL || *v == '\0')
		*out = def;
	else if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		FAIL("%s: \"%s\" is not true, false, 1 or 0", name, v);
	return 0;
}

/* Copies a value made only of the given extra characters and alnum. */
static int
parse_word(const struct envfile *f, const char *name, const char *def,
           const char *extra, char *out, size_t outlen, char *err,
           size_t errlen)
{
	const char *v = envfile_lookup(f, name);

	if (v == NULL || *v == '\0')
		v = def;
	if (strlen(v) >= outlen)
		FAIL("%s: longer than %zu characters", name, outlen - 1);
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(extra, *p))
			FAIL("%s: \"%s\" contains '%c'", name, v, *p);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* An http(s) base URL without a trailing '/', or "" when allowed. */
static int
check_url(const char *name, const char *v, char *out, size_t outlen, char *err,
          size_t errlen)
{
	size_t n;

	if (*v == '\0') {
		out[0] = '\0';
		return 0;
	}
	if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0)
		FAIL("%s: \"%s\" is not an http:// or https:// URL", name, v);
	n = strlen(v);
	while (n > 8 && v[n - 1] == '/')
		n--;
	if (n >= outlen)
		FAIL("%s: longer than %zu characters", name, outlen - 1);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] <= ' ' || v[i] == 0x7f)
			FAIL("%s: contains a space or a control character",
			     name);
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

static int
parse_url(const struct envfile *f, const char *name, const char *def, char *out,
          size_t outlen, char *err, size_t errlen)
{
	const char *v = envfile_lookup(f, name);

	return check_url(name, v ? v : def, out, outlen, err, errlen);
}

/* A URL that must be set: empty means the default. */
static int
parse_url_def(const struct envfile *f, const char *name, const char *def,
              char *out, size_t outlen, char *err, size_t errlen)
{
	const char *v = envfile_lookup(f, name);

	return check_url(name, v && *v ? v : def, out, outlen, err, errlen);
}

/* Secret text, kept as given: the vault checks it at start-up. */
static int
parse_secret(const struct envfile *f, const char *name, char **out, char *err,
             size_t errlen)
{
	const char *v = envfile_lookup(f, name);

	if (v == NULL || *v == '\0')
		return 0;
	*out = strdup(v);
	if (*out == NULL)
		FAIL("%s: out of memory", name);
	return 0;
}

static void
free_secret(char **s)
{
	if (*s) {
		explicit_bzero(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

enum config_kind {
	CONFIG_INT,     /* int64_t: a whole number in min..max */
	CONFIG_PORT,    /* uint16_t: a whole number in 1..65535 */
	CONFIG_BOOL,    /* bool: true, false, 1 or 0 */
	CONFIG_WORD,    /* char[]: alnum and the extra characters */
	CONFIG_URL,     /* char[]: an http(s) base URL; set to "", none */
	CONFIG_URL_DEF, /* char[]: the same; set to "", the default */
	CONFIG_SECRET,  /* char *: text kept as given, NULL when unset */
	CONFIG_HOOK,    /* the hook parses whatever it reads */
};

struct config_var {
	const char *name; /* NULL for a hook: it names its own variables */
	enum config_kind kind;
	size_t off; /* of the field in struct config */
	size_t len; /* its size, for WORD and the URLs */
	/* The default of WORD and the URLs (idef for the numbers and
	 * BOOL), or where a table holds it (defp: the agents' table). */
	const char *def;
	const char *const *defp;
	int64_t idef, min, max;
	const char *extra; /* WORD: what it may hold besides alnum */
	config_hook *hook; /* HOOK: the parser; else a check after it */
};

/* The field of a row; one whose type does not fit its kind does not
 * compile (_Generic has no branch for it). */
#define FIELD(f, type)                                                         \
	.off = offsetof(struct config, f) +                                    \
	       0 * sizeof(_Generic(((struct config *)0)->f, type : 1)),        \
	.len = sizeof(((struct config *)0)->f)
#define INT(n, f, d, lo, hi)                                                   \
	{                                                                      \
		.name = n, .kind = CONFIG_INT, FIELD(f, int64_t), .idef = d,   \
		.min = lo, .max = hi                                           \
	}
#define PORT(n, f, d)                                                          \
	{                                                                      \
		.name = n, .kind = CONFIG_PORT, FIELD(f, uint16_t), .idef = d  \
	}
#define BOOL(n, f, d)                                                          \
	{                                                                      \
		.name = n, .kind = CONFIG_BOOL, FIELD(f, bool), .idef = d      \
	}
#define WORD(n, f, d, x)                                                       \
	{                                                                      \
		.name = n, .kind = CONFIG_WORD, FIELD(f, char *), .def = d,    \
		.extra = x                                                     \
	}
#define URL(n, f, d)                                                           \
	{                                                                      \
		.name = n, .kind = CONFIG_URL, FIELD(f, char *), .def = d      \
	}
#define URL_DEF(n, f, d)                                                       \
	{                                                                      \
		.name = n, .kind = CONFIG_URL_DEF, FIELD(f, char *), .def = d  \
	}
#define SECRET(n, f)                                                           \
	{                                                                      \
		.name = n, .kind = CONFIG_SECRET, FIELD(f, char *)             \
	}
#define HOOK(fn)                                                               \
	{                                                                      \
		.kind = CONFIG_HOOK, .hook = fn                                \
	}

/* Parsed in this order: of two bad values, the first is named. */
static const struct config_var vars[] = {
    HOOK(config_parse_data_dir),
    HOOK(config_parse_addr),
    PORT("HTTP_PORT", http_port, 80),
    WORD("PREVIEW_DOMAIN", preview_domain, "localhost", ".-"),
    WORD("PREVIEW_ENTRYPOINT", preview_entrypoint, "web", "-_"),
    BOOL("PREVIEW_TLS", preview_tls, false),
    HOOK(config_parse_preview_visibility),
    HOOK(config_parse_auth_disabled),
    HOOK(config_parse_tokens),
    WORD("SANDBOXD_OPERATORS", operators, "", ",-_. "),
    /* Agents and tasks. */
    {.name = "SANDBOXD_DEFAULT_AGENT",
     .kind = CONFIG_WORD,
     FIELD(default_agent, char *),
     .defp = &agents[AGENT_OPENCODE].name,
     .extra = "-",
     .hook = config_check_agent},
    {.name = "SANDBOXD_OPENCODE_FREE_MODEL",
     .kind = CONFIG_WORD,
     FIELD(opencode_free_model, char *),
     .defp = &agents[AGENT_OPENCODE].free_model,
     .extra = "-_./:"},
    WORD("SANDBOXD_OPENCODE_MODEL", opencode_model, "", "-_./:"),
    WORD("SANDBOXD_CLAUDE_MODEL", claude_model, "", "-_./:"),
    INT("SANDBOXD_TASK_TIMEOUT_SECONDS", task_timeout_s, 600, 1, 86400),
    /* Pushes and imports (the git helper). */
    HOOK(config_parse_git_ca),
    INT("SANDBOXD_GIT_TIMEOUT_SECONDS", git_timeout_s, 300, 5, 3600),
    INT("SANDBOXD_GIT_IMPORT_MAX_MB", git_import_max_mb, 2048, 1, 1048576),
    BOOL("SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS", git_allow_private, false),
    /* The credential proxy. */
    WORD("SANDBOXD_PROXY_ADDR", proxy_addr, "", ".:"),
    PORT("SANDBOXD_PROXY_PORT", proxy_port, 9097),
    URL("SANDBOXD_ANTHROPIC_BASE_URL", anthropic_base_url,
        "https://api.anthropic.com"),
    URL("SANDBOXD_OPENAI_BASE_URL", openai_base_url,
        "https://api.openai.com/v1"),
    URL("SANDBOXD_ZEN_BASE_URL", zen_base_url, "https://opencode.ai/zen/v1"),
    URL("SANDBOXD_OPENAI_COMPAT_BASE_URL", compat_base_url, ""),
    BOOL("SANDBOXD_SPEND_COUNTING", spend_counting, true),
    /*
     * The Claude subscription sign-in.  The defaults are what the real
     * `claude setup-token` uses; tests point the URLs at a fake.
     */
    WORD("SANDBOXD_CLAUDE_CLIENT_ID", claude_client_id,
         "9d1c250a-e61b-44d9-88ed-5944d1962f5e", "-_."),
    URL_DEF("SANDBOXD_CLAUDE_AUTHORIZE_URL", claude_authorize_url,
            "https://claude.com/cai/oauth/authorize"),
    URL_DEF("SANDBOXD_CLAUDE_TOKEN_URL", claude_token_url,
            "https://platform.claude.com/v1/oauth/token"),
    URL_DEF("SANDBOXD_CLAUDE_REDIRECT_URI", claude_redirect_uri,
            "https://platform.claude.com/oauth/code/callback"),
    WORD("SANDBOXD_CLAUDE_SCOPES", claude_scopes, "user:inference", ":._- "),
    INT("SANDBOXD_OAUTH_REFRESH_INTERVAL_SECONDS", oauth_refresh_s, 300, 1,
        3600),
    /* The reapers and wakes. */
    INT("SANDBOXD_IDLE_THRESHOLD_SECONDS", idle_threshold_s, 2100, 10,
        31536000),
    HOOK(config_parse_sleep_policy),
    INT("SANDBOXD_FREEZE_AFTER_SECONDS", freeze_after_s, 300, 1, 31536000),
    INT("SANDBOXD_IDLE_REAP_INTERVAL_SECONDS", idle_interval_s, 30, 1, 3600),
    INT("SANDBOXD_PRESSURE_INTERVAL_SECONDS", pressure_interval_s, 10, 1, 3600),
    INT("SANDBOXD_MEM_HEADROOM_PCT", mem_headroom_pct, 15, 0, 100),
    INT("SANDBOXD_MEM_REFUSE_WAKES_PCT", mem_refuse_pct, 10, 0, 100),
    INT("SANDBOXD_MEM_BUDGET_MB", mem_budget_mb, 0, 0, 1 << 30),
    INT("SANDBOXD_WAKE_READY_SECONDS", wake_ready_s, 30, 1, 3600),
    /* The terminal (src/terminal). */
    INT("SANDBOXD_TERMINAL_MAX_PER_SANDBOX", term_per_sandbox, 4, 1, 64),
    INT("SANDBOXD_TERMINAL_MAX_PER_TENANT", term_per_tenant, 10, 1, 256),
    INT("SANDBOXD_TERMINAL_IDLE_SECONDS", term_idle_s, 900, 1, 86400),
    INT("SANDBOXD_TERMINAL_MAX_SECONDS", term_max_s, 28800, 1, 604800),
    INT("SANDBOXD_TERMINAL_REATTACH_SECONDS", term_reattach_s, 60, 1, 3600),
    /* The trash of deleted apps (trash/trash.c). */
    INT("SANDBOXD_TRASH_RETENTION_SECONDS", trash_retention_s, 259200, 0,
        31536000),
    INT("SANDBOXD_TRASH_PASS_INTERVAL_SECONDS", trash_interval_s, 60, 1, 3600),
    /* The apps' activity timeline (timeline/timeline.c). */
    INT("SANDBOXD_EVENTS_RETENTION_DAYS", events_retention_days, 90, 1, 3650),
    INT("SANDBOXD_EVENTS_MAX_PER_APP", events_max_per_app, 10000, 10, 1000000),
    INT("SANDBOXD_EVENTS_PRUNE_INTERVAL_SECONDS", events_prune_s, 3600, 1,
        86400),
    /* Snapshots of an app (snapshot/snapshot.c). */
    INT("SANDBOXD_SNAPSHOTS_MAX_PER_APP", snapshots_max, 50, 1, 10000),
    /* Publishing (publish/). */
    WORD("SANDBOXD_PUBLISH_DOMAIN", publish_domain, "", ".-"),
    INT("SANDBOXD_PUBLISH_KEEP", publish_keep, 5, 1, 100),
    INT("SANDBOXD_PUBLISH_BUILD_TIMEOUT_SECONDS", publish_build_timeout_s, 900,
        10, 86400),
    INT("SANDBOXD_PUBLISH_STATIC_MAX_MB", publish_static_max_mb, 256, 1, 65536),
    WORD("SANDBOXD_EDGE_ADDR", edge_addr, "0.0.0.0", ".:"),
    HOOK(config_parse_console_dir),
    {.name = "SANDBOXD_EDGE_PORT",
     .kind = CONFIG_INT,
     FIELD(edge_port, int64_t),
     .idef = 0,
     .min = 0,
     .max = 65535,
     .hook = config_set_edge_port},
    /* More than one server (orch/, nodelink/, cluster/, nodeagent/). */
    {.name = "SANDBOXD_ORCHESTRATOR",
     .kind = CONFIG_WORD,
     FIELD(orchestrator, char *),
     .def = "docker",
     .extra = "",
     .hook = config_check_orchestrator},
    WORD("SANDBOXD_CLUSTER_ADDR", cluster_addr, "", ".:-"),
    INT("SANDBOXD_CLUSTER_PORT", cluster_port, 7444, 1, 65535),
    INT("SANDBOXD_NODE_PORT", node_port, 7443, 1, 65535),
    WORD("SANDBOXD_NODE_NAME", node_name, "", "-_."),
    WORD("SANDBOXD_NODE_ADDR", node_addr, "", ".:"),
    INT("SANDBOXD_MEMORY_RESERVE_MB", memory_reserve_mb, 0, 0, 1048576),
    WORD("SANDBOXD_IMAGE_REGISTRY", image_registry, "", "-_.:/"),
    INT("SANDBOXD_NODE_HEARTBEAT_MS", node_heartbeat_ms, 5000, 200, 600000),
    /* Containers. */
    WORD("SANDBOXD_RUNTIME", runtime, "runc", "-_."),
    WORD("SANDBOXD_IMAGE", image, "sandboxd-base:" SANDBOXD_VERSION, "-_.:/@"),
    WORD("SANDBOXD_NETWORK", network, "sandboxd", "-_."),
    {.name = "SANDBOXD_SUBNET",
     .kind = CONFIG_WORD,
     FIELD(subnet, char *),
     .def = "",
     .extra = "./",
     .hook = config_check_subnet},
    HOOK(config_parse_egress),
    /* After the egress: the mirrors' addresses join its allow-list. */
    HOOK(config_parse_mirrors),
    INT("SANDBOXD_MEMORY_MB", memory_mb, 2048, 16, 1 << 20),
    INT("SANDBOXD_PIDS_LIMIT", pids_limit, 1024, 16, 1 << 22),
    INT("SANDBOXD_NOFILE_LIMIT", nofile_limit, 8192, 64, 1 << 20),
    INT("SANDBOXD_WORKSPACE_MAX_MB", workspace_max_mb, 20480, 0, 1 << 30),
    INT("SANDBOXD_DISK_USAGE_INTERVAL_SECONDS", disk_usage_interval_s, 300, 5,
        86400),
    BOOL("SANDBOXD_DEDUP", dedup, true),
    /* The dependency cache (depcache/depcache.c). */
    INT("SANDBOXD_DEPCACHE_MAX_AGE_DAYS", depcache_max_age_days, 30, 1, 3650),
    INT("SANDBOXD_DEPCACHE_MAX_MB", depcache_max_mb, 4096, 0, 1 << 30),
    HOOK(config_parse_docker_host),
    /* Custom domains (publish/domain.c, verify.c, traefik.c). */
    WORD("SANDBOXD_DNS_RESOLVER", dns_resolver, "", ".:"),
    WORD("SANDBOXD_PUBLIC_ADDRS", public_addrs, "", ".:, "),
    PORT("SANDBOXD_VERIFY_HTTP_PORT", verify_http_port, 80),
    INT("SANDBOXD_DOMAIN_CHECK_INTERVAL_SECONDS", domain_check_interval_s, 300,
        1, 86400),
    WORD("SANDBOXD_TRAEFIK_HTTP_RESOLVER", traefik_http_resolver, "le-http",
         "-_."),
    {.name = "SANDBOXD_TRAEFIK_DYNAMIC_DIR",
     .kind = CONFIG_WORD,
     FIELD(traefik_dynamic_dir, char *),
     .def = "",
     .extra = "/-_.",
     .hook = config_check_domains},
    {.name = "SANDBOXD_LOG_FORMAT",
     .kind = CONFIG_WORD,
     FIELD(log_format, char *),
     .def = "text",
     .extra = "",
     .hook = config_check_log_format},
    /* Secrets: the vault parses them at start-up. */
    SECRET("SANDBOXD_SECRETS_KEY", secrets_key),
    {.name = "SANDBOXD_SECRETS_KEY_PREVIOUS",
     .kind = CONFIG_SECRET,
     FIELD(secrets_key_previous, char *),
     .hook = config_check_rotation},
};

/* One row's value into its field; a hook row has none. */
static int
parse_var(const struct envfile *f, const struct config_var *v, struct config *c,
          char *err, size_t errlen)
{
	void *field = (char *)c + v->off;
	const char *def = v->defp ? *v->defp : v->def;
	uint16_t *port = field;
	int64_t n;

	switch (v->kind) {
	case CONFIG_INT:
		return parse_int(f, v->name, v->idef, v->min, v->max, field,
		                 err, errlen);
	case CONFIG_PORT:
		if (parse_int(f, v->name, v->idef, 1, 65535, &n, err, errlen) <
		    0)
			return -1;
		*port = (uint16_t)n;
		return 0;
	case CONFIG_BOOL:
		return parse_bool(f, v->name, v->idef != 0, field, err, errlen);
	case CONFIG_WORD:
		return parse_word(f, v->name, def, v->extra, field, v->len, err,
		                  errlen);
	case CONFIG_URL:
		return parse_url(f, v->name, def, field, v->len, err, errlen);
	case CONFIG_URL_DEF:
		return parse_url_def(f, v->name, def, field, v->len, err,
		                     errlen);
	case CONFIG_SECRET:
		return parse_secret(f, v->name, field, err, errlen);
	case CONFIG_HOOK:
		return 0;
	}
	return 0;
}

static int
parse_all(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (parse_var(f, &vars[i], c, err, errlen) < 0 ||
		    (vars[i].hook && vars[i].hook(f, c, err, errlen) < 0))
			return -1;
	return 0;
}

int
config_load(struct config *c, char *err, size_t errlen)
{
	struct envfile f;
	const char *path = getenv("SANDBOXD_ENV_FILE");
	bool named = path && *path;
	char ferr[256];
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&f, 0, sizeof(f));
	buf_init(&f.text, CONFIG_ENV_FILE_BYTES);
	if (!named)
		path = ".env";
	snprintf(c->env_file, sizeof(c->env_file), "%s", path);
	if (named || access(path, F_OK) == 0) {
		if (envfile_load(&f, path, ferr, sizeof(ferr)) < 0) {
			snprintf(err, errlen, "SANDBOXD_ENV_FILE: %s", ferr);
			rc = -1;
			goto out;
		}
		c->env_file_loaded = true;
	}
	rc = parse_all(&f, c, err, errlen);
	/* Every command logs in the configured format from here on. */
	if (rc == 0)
		log_set_format(
		    (enum log_format)log_format_parse(c->log_format));
out:
	if (f.text.data)
		explicit_bzero(f.text.data, f.text.len);
	buf_release(&f.text);
	if (rc < 0)
		config_release(c);
	return rc;
}

void
config_release(struct config *c)
{
	for (size_t i = 0; i < c->ntokens; i++) {
		explicit_bzero(c->tokens[i].secret,
		               strlen(c->tokens[i].secret));
		free(c->tokens[i].secret);
		c->tokens[i].secret = NULL;
	}
	c->ntokens = 0;
	free_secret(&c->secrets_key);
	free_secret(&c->secrets_key_previous);
}
