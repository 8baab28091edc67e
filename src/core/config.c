/*
 * Configuration.  Values come from the process environment first and from
 * the .env file second (SANDBOXD_ENV_FILE, default ./.env; a missing
 * default file is fine, a missing named file is an error).  The file is a
 * list of KEY=VALUE lines; '#' starts a comment line, an optional
 * "export " prefix and one pair of matching quotes around the value are
 * accepted.  Each variable has exactly one parser below, and every parser
 * refuses what it does not understand: a typo must stop the daemon, not
 * quietly fall back to a default.
 */
#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agents.h"
#include "lib/buf.h"

#define ENV_MAX_ENTRIES 256

struct envfile {
	struct buf text;
	char *key[ENV_MAX_ENTRIES];
	char *val[ENV_MAX_ENTRIES];
	size_t n;
};

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
envfile_parse_line(struct envfile *f, char *line, int lineno, char *err,
                   size_t errlen)
{
	char *eq, *key, *val;
	size_t vlen;

	line = trim(line);
	if (*line == '\0' || *line == '#')
		return 0;
	if (strncmp(line, "export ", 7) == 0)
		line = trim(line + 7);
	eq = strchr(line, '=');
	if (eq == NULL) {
		snprintf(err, errlen, "line %d: expected KEY=VALUE", lineno);
		return -1;
	}
	*eq = '\0';
	key = trim(line);
	val = trim(eq + 1);
	vlen = strlen(val);
	if (vlen >= 2 && (val[0] == '"' || val[0] == '\'') &&
	    val[vlen - 1] == val[0]) {
		val[vlen - 1] = '\0';
		val++;
	}
	if (f->n == ENV_MAX_ENTRIES) {
		snprintf(err, errlen, "more than %d entries", ENV_MAX_ENTRIES);
		return -1;
	}
	f->key[f->n] = key;
	f->val[f->n] = val;
	f->n++;
	return 0;
}

static int
envfile_load(struct envfile *f, const char *path, char *err, size_t errlen)
{
	char chunk[4096], *line, *next;
	int fd, lineno = 1;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (buf_append(&f->text, chunk, (size_t)n) < 0) {
			close(fd);
			snprintf(err, errlen, "%s: larger than %u bytes", path,
			         CONFIG_ENV_FILE_BYTES);
			return -1;
		}
	}
	close(fd);
	if (f->text.data == NULL)
		return 0;
	for (line = f->text.data; line; line = next, lineno++) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (envfile_parse_line(f, line, lineno, err, errlen) < 0)
			return -1;
	}
	return 0;
}

static const char *
lookup(const struct envfile *f, const char *name)
{
	const char *v = getenv(name);

	if (v)
		return v;
	for (size_t i = f->n; i > 0; i--)
		if (strcmp(f->key[i - 1], name) == 0)
			return f->val[i - 1];
	return NULL;
}

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		return -1;                                                     \
	} while (0)

static int
parse_int(const struct envfile *f, const char *name, int64_t def, int64_t min,
          int64_t max, int64_t *out, char *err, size_t errlen)
{
	const char *v = lookup(f, name);
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
	const char *v = lookup(f, name);

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
	const char *v = lookup(f, name);

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

static int
parse_addr(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	const char *name = "SANDBOXD_API_ADDR";
	const char *v = lookup(f, name), *colon;
	char *end;
	long port;
	size_t hlen;

	if (v == NULL || *v == '\0')
		v = "127.0.0.1:9090";
	colon = strrchr(v, ':');
	if (colon == NULL || colon == v || strlen(v) >= sizeof(c->api_addr))
		FAIL("%s: \"%s\" is not HOST:PORT", name, v);
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || port < 1 || port > 65535 || end == colon + 1)
		FAIL("%s: \"%s\" has no valid port (1..65535)", name, v);
	hlen = (size_t)(colon - v);
	if (v[0] == '[' && colon[-1] == ']') {
		v++;
		hlen -= 2;
	}
	if (hlen == 0 || hlen >= sizeof(c->api_host))
		FAIL("%s: \"%s\" has no host", name, v);
	memcpy(c->api_host, v, hlen);
	c->api_host[hlen] = '\0';
	for (const char *p = c->api_host; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".:-", *p))
			FAIL("%s: bad host \"%s\"", name, c->api_host);
	c->api_port = (uint16_t)port;
	snprintf(c->api_addr, sizeof(c->api_addr), "%s",
	         lookup(f, name) ? lookup(f, name) : "127.0.0.1:9090");
	return 0;
}

static int
add_token(struct config *c, char *entry, char *err, size_t errlen)
{
	const char *name = "SANDBOXD_API_TOKENS";
	char *eq = strchr(entry, '='), *key, *secret;

	if (eq == NULL)
		FAIL("%s: entry without '=' (expected name=token)", name);
	*eq = '\0';
	key = trim(entry);
	secret = trim(eq + 1);
	if (*key == '\0' || strlen(key) >= sizeof(c->tokens[0].name))
		FAIL("%s: empty or overlong token name", name);
	for (const char *p = key; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			FAIL("%s: token name \"%s\" contains '%c'", name, key,
			     *p);
	if (strlen(secret) < 8)
		FAIL("%s: the token named \"%s\" is shorter than 8 characters",
		     name, key);
	if (c->ntokens == CONFIG_MAX_TOKENS)
		FAIL("%s: more than %d tokens", name, CONFIG_MAX_TOKENS);
	snprintf(c->tokens[c->ntokens].name, sizeof(c->tokens[0].name), "%s",
	         key);
	c->tokens[c->ntokens].secret = strdup(secret);
	if (c->tokens[c->ntokens].secret == NULL)
		FAIL("%s: out of memory", name);
	c->ntokens++;
	return 0;
}

static int
parse_tokens(const struct envfile *f, struct config *c, char *err,
             size_t errlen)
{
	const char *v = lookup(f, "SANDBOXD_API_TOKENS");
	char *copy, *entry, *next;
	int rc = 0;

	if (v == NULL)
		return 0;
	copy = strdup(v);
	if (copy == NULL)
		FAIL("SANDBOXD_API_TOKENS: out of memory");
	for (entry = copy; entry && rc == 0; entry = next) {
		next = strchr(entry, ',');
		if (next)
			*next++ = '\0';
		if (*trim(entry) != '\0')
			rc = add_token(c, entry, err, errlen);
	}
	explicit_bzero(copy, strlen(v));
	free(copy);
	return rc;
}

static int
parse_auth_disabled(const struct envfile *f, struct config *c)
{
	const char *v = lookup(f, "SANDBOXD_API_AUTH_DISABLED");

	/* Exactly "true" or "1" turns auth off; anything else keeps it on. */
	c->auth_disabled = v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
	c->auth_disabled_invalid = v && *v && !c->auth_disabled &&
	                           strcmp(v, "false") != 0 &&
	                           strcmp(v, "0") != 0;
	return 0;
}

static int
parse_data_dir(const struct envfile *f, struct config *c, char *err,
               size_t errlen)
{
	const char *v = lookup(f, "SANDBOXD_DATA_DIR");
	struct stat st;

	if (v && *v) {
		if (v[0] != '/')
			FAIL(
			    "SANDBOXD_DATA_DIR: \"%s\" is not an absolute path",
			    v);
	} else if (stat("/var/lib/sandboxd", &st) < 0 &&
	           stat("/var/lib/sandboxed", &st) == 0) {
		/* Installs made by older releases keep their path. */
		v = "/var/lib/sandboxed";
		c->data_dir_legacy = true;
	} else {
		v = "/var/lib/sandboxd";
	}
	if (strlen(v) >= sizeof(c->data_dir) - 64)
		FAIL("SANDBOXD_DATA_DIR: path too long");
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", v);
	while (strlen(c->data_dir) > 1 &&
	       c->data_dir[strlen(c->data_dir) - 1] == '/')
		c->data_dir[strlen(c->data_dir) - 1] = '\0';
	return 0;
}

static int
parse_docker_host(struct config *c, char *err, size_t errlen)
{
	const char *v = getenv("DOCKER_HOST");

	if (v == NULL || *v == '\0')
		v = "unix:///var/run/docker.sock";
	if (strncmp(v, "unix://", 7) != 0)
		FAIL("DOCKER_HOST: only unix:// sockets are supported, got "
		     "\"%s\"",
		     v);
	if (strlen(v + 7) >= sizeof(c->docker_socket) || v[7] != '/')
		FAIL("DOCKER_HOST: \"%s\" is not an absolute socket path", v);
	snprintf(c->docker_socket, sizeof(c->docker_socket), "%s", v + 7);
	return 0;
}

static int
parse_agent(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	char known[128];

	if (parse_word(f, "SANDBOXD_DEFAULT_AGENT", agents[AGENT_OPENCODE].name,
	               "-", c->default_agent, sizeof(c->default_agent), err,
	               errlen) < 0)
		return -1;
	agent_names(" or ", known, sizeof(known));
	if (agent_find(c->default_agent) == NULL)
		FAIL("SANDBOXD_DEFAULT_AGENT: \"%s\" is not %s",
		     c->default_agent, known);
	if (parse_word(f, "SANDBOXD_OPENCODE_FREE_MODEL",
	               agents[AGENT_OPENCODE].free_model,
	               "-_./:", c->opencode_free_model,
	               sizeof(c->opencode_free_model), err, errlen) < 0 ||
	    parse_word(f, "SANDBOXD_OPENCODE_MODEL", "",
	               "-_./:", c->opencode_model, sizeof(c->opencode_model),
	               err, errlen) < 0 ||
	    parse_word(f, "SANDBOXD_CLAUDE_MODEL", "", "-_./:", c->claude_model,
	               sizeof(c->claude_model), err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_TASK_TIMEOUT_SECONDS", 600, 1, 86400,
	              &c->task_timeout_s, err, errlen) < 0)
		return -1;
	return 0;
}

/* A CA bundle for git servers: "" (the system's), or a readable file. */
static int
parse_git_ca(const struct envfile *f, struct config *c, char *err,
             size_t errlen)
{
	const char *v = lookup(f, "SANDBOXD_GIT_CA_FILE");
	struct stat st;

	if (v == NULL || *v == '\0')
		return 0;
	if (v[0] != '/' || strlen(v) >= sizeof(c->git_ca_file))
		FAIL("SANDBOXD_GIT_CA_FILE: \"%s\" is not an absolute path", v);
	if (stat(v, &st) < 0 || !S_ISREG(st.st_mode) || access(v, R_OK) < 0)
		FAIL("SANDBOXD_GIT_CA_FILE: %s is not a readable file", v);
	snprintf(c->git_ca_file, sizeof(c->git_ca_file), "%s", v);
	return 0;
}

/* Pushes and imports (the git helper). */
static int
parse_git(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	if (parse_git_ca(f, c, err, errlen) < 0)
		return -1;
	return parse_int(f, "SANDBOXD_GIT_TIMEOUT_SECONDS", 300, 5, 3600,
	                 &c->git_timeout_s, err, errlen) < 0 ||
	               parse_int(f, "SANDBOXD_GIT_IMPORT_MAX_MB", 2048, 1,
	                         1048576, &c->git_import_max_mb, err,
	                         errlen) < 0 ||
	               parse_bool(f, "SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS", false,
	                          &c->git_allow_private, err, errlen) < 0
	           ? -1
	           : 0;
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
	const char *v = lookup(f, name);

	return check_url(name, v ? v : def, out, outlen, err, errlen);
}

static int
parse_proxy(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	int64_t port;

	if (parse_word(f, "SANDBOXD_PROXY_ADDR", "", ".:", c->proxy_addr,
	               sizeof(c->proxy_addr), err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_PROXY_PORT", 9097, 1, 65535, &port, err,
	              errlen) < 0 ||
	    parse_url(f, "SANDBOXD_ANTHROPIC_BASE_URL",
	              "https://api.anthropic.com", c->anthropic_base_url,
	              sizeof(c->anthropic_base_url), err, errlen) < 0 ||
	    parse_url(f, "SANDBOXD_OPENAI_BASE_URL",
	              "https://api.openai.com/v1", c->openai_base_url,
	              sizeof(c->openai_base_url), err, errlen) < 0 ||
	    parse_url(f, "SANDBOXD_ZEN_BASE_URL", "https://opencode.ai/zen/v1",
	              c->zen_base_url, sizeof(c->zen_base_url), err,
	              errlen) < 0 ||
	    parse_url(f, "SANDBOXD_OPENAI_COMPAT_BASE_URL", "",
	              c->compat_base_url, sizeof(c->compat_base_url), err,
	              errlen) < 0)
		return -1;
	c->proxy_port = (uint16_t)port;
	return 0;
}

/* A URL that must be set: empty means the default. */
static int
parse_url_set(const struct envfile *f, const char *name, const char *def,
              char *out, size_t outlen, char *err, size_t errlen)
{
	const char *v = lookup(f, name);

	return check_url(name, v && *v ? v : def, out, outlen, err, errlen);
}

/*
 * The Claude subscription sign-in.  The defaults are what the real
 * `claude setup-token` uses; tests point the URLs at a fake.
 */
static int
parse_oauth(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	return parse_word(f, "SANDBOXD_CLAUDE_CLIENT_ID",
	                  "9d1c250a-e61b-44d9-88ed-5944d1962f5e", "-_.",
	                  c->claude_client_id, sizeof(c->claude_client_id), err,
	                  errlen) < 0 ||
	               parse_url_set(f, "SANDBOXD_CLAUDE_AUTHORIZE_URL",
	                             "https://claude.com/cai/oauth/authorize",
	                             c->claude_authorize_url,
	                             sizeof(c->claude_authorize_url), err,
	                             errlen) < 0 ||
	               parse_url_set(
	                   f, "SANDBOXD_CLAUDE_TOKEN_URL",
	                   "https://platform.claude.com/v1/oauth/token",
	                   c->claude_token_url, sizeof(c->claude_token_url),
	                   err, errlen) < 0 ||
	               parse_url_set(
	                   f, "SANDBOXD_CLAUDE_REDIRECT_URI",
	                   "https://platform.claude.com/oauth/code/callback",
	                   c->claude_redirect_uri,
	                   sizeof(c->claude_redirect_uri), err, errlen) < 0 ||
	               parse_word(f, "SANDBOXD_CLAUDE_SCOPES", "user:inference",
	                          ":._- ", c->claude_scopes,
	                          sizeof(c->claude_scopes), err, errlen) < 0 ||
	               parse_int(f, "SANDBOXD_OAUTH_REFRESH_INTERVAL_SECONDS",
	                         300, 1, 3600, &c->oauth_refresh_s, err,
	                         errlen) < 0
	           ? -1
	           : 0;
}

/* Secret text, kept as given: the vault checks it at start-up. */
static int
parse_secret(const struct envfile *f, const char *name, char **out, char *err,
             size_t errlen)
{
	const char *v = lookup(f, name);

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

/* SANDBOXD_SUBNET: an IPv4 block of /8 to /29, kept normalised. */
static int
parse_subnet(struct config *c, char *err, size_t errlen)
{
	struct egress_allow net;
	const char *slash = strchr(c->subnet, '/');
	char why[160];
	size_t n;

	if (c->subnet[0] == '\0')
		return 0;
	if (slash == NULL || strchr(c->subnet, ':') ||
	    egress_allow_parse(c->subnet, &net, 1, &n, why, sizeof(why)) < 0 ||
	    atoi(slash + 1) < 8 || atoi(slash + 1) > 29)
		FAIL("SANDBOXD_SUBNET: \"%s\" is not an IPv4 subnet of /8 to "
		     "/29, such as 10.213.0.0/20",
		     c->subnet);
	snprintf(c->subnet, sizeof(c->subnet), "%s", net.cidr);
	return 0;
}

/* The sandbox network and what sandboxes on it may reach. */
static int
parse_network(const struct envfile *f, struct config *c, char *err,
              size_t errlen)
{
	const char *mode = lookup(f, "SANDBOXD_EGRESS");
	const char *allow = lookup(f, "SANDBOXD_EGRESS_ALLOW");
	char why[160];

	if (parse_word(f, "SANDBOXD_NETWORK", "sandboxd", "-_.", c->network,
	               sizeof(c->network), err, errlen) < 0 ||
	    parse_word(f, "SANDBOXD_SUBNET", "", "./", c->subnet,
	               sizeof(c->subnet), err, errlen) < 0 ||
	    parse_subnet(c, err, errlen) < 0)
		return -1;
	if (strcmp(c->network, "host") == 0)
		FAIL("SANDBOXD_NETWORK: \"host\" would give sandboxes the "
		     "host's own network; name a bridge network (default "
		     "sandboxd)");
	c->egress_mode = egress_mode_parse(mode && *mode ? mode : "public");
	if (c->egress_mode < 0)
		FAIL("SANDBOXD_EGRESS: \"%.32s\" is not public, none or open",
		     mode);
	if (allow &&
	    egress_allow_parse(allow, c->egress_allow, EGRESS_MAX_ALLOW,
	                       &c->egress_nallow, why, sizeof(why)) < 0)
		FAIL("SANDBOXD_EGRESS_ALLOW: %s", why);
	return 0;
}

static int
parse_all(const struct envfile *f, struct config *c, char *err, size_t errlen)
{
	int64_t port;

	if (parse_data_dir(f, c, err, errlen) < 0 ||
	    parse_addr(f, c, err, errlen) < 0 ||
	    parse_int(f, "HTTP_PORT", 80, 1, 65535, &port, err, errlen) < 0 ||
	    parse_word(f, "PREVIEW_DOMAIN", "localhost", ".-",
	               c->preview_domain, sizeof(c->preview_domain), err,
	               errlen) < 0 ||
	    parse_word(f, "PREVIEW_ENTRYPOINT", "web", "-_",
	               c->preview_entrypoint, sizeof(c->preview_entrypoint),
	               err, errlen) < 0 ||
	    parse_bool(f, "PREVIEW_TLS", false, &c->preview_tls, err, errlen) <
	        0 ||
	    parse_auth_disabled(f, c) < 0 ||
	    parse_tokens(f, c, err, errlen) < 0 ||
	    parse_agent(f, c, err, errlen) < 0 ||
	    parse_git(f, c, err, errlen) < 0 ||
	    parse_proxy(f, c, err, errlen) < 0 ||
	    parse_oauth(f, c, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_IDLE_THRESHOLD_SECONDS", 2100, 10, 31536000,
	              &c->idle_threshold_s, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_IDLE_REAP_INTERVAL_SECONDS", 30, 1, 3600,
	              &c->idle_interval_s, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_PRESSURE_INTERVAL_SECONDS", 10, 1, 3600,
	              &c->pressure_interval_s, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_MEM_HEADROOM_PCT", 15, 0, 100,
	              &c->mem_headroom_pct, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_MEM_REFUSE_WAKES_PCT", 10, 0, 100,
	              &c->mem_refuse_pct, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_WAKE_READY_SECONDS", 30, 1, 3600,
	              &c->wake_ready_s, err, errlen) < 0 ||
	    parse_word(f, "SANDBOXD_EDGE_ADDR", "0.0.0.0", ".:", c->edge_addr,
	               sizeof(c->edge_addr), err, errlen) < 0 ||
	    parse_word(f, "SANDBOXD_RUNTIME", "runc", "-_.", c->runtime,
	               sizeof(c->runtime), err, errlen) < 0 ||
	    parse_word(f, "SANDBOXD_IMAGE", "sandboxd-base:" SANDBOXD_VERSION,
	               "-_.:/@", c->image, sizeof(c->image), err, errlen) < 0 ||
	    parse_network(f, c, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_MEMORY_MB", 2048, 16, 1 << 20, &c->memory_mb,
	              err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_PIDS_LIMIT", 1024, 16, 1 << 22,
	              &c->pids_limit, err, errlen) < 0 ||
	    parse_int(f, "SANDBOXD_NOFILE_LIMIT", 8192, 64, 1 << 20,
	              &c->nofile_limit, err, errlen) < 0 ||
	    parse_docker_host(c, err, errlen) < 0 ||
	    parse_secret(f, "SANDBOXD_SECRETS_KEY", &c->secrets_key, err,
	                 errlen) < 0 ||
	    parse_secret(f, "SANDBOXD_SECRETS_KEY_PREVIOUS",
	                 &c->secrets_key_previous, err, errlen) < 0)
		return -1;
	if (c->secrets_key_previous && c->secrets_key == NULL)
		FAIL("SANDBOXD_SECRETS_KEY_PREVIOUS: set without "
		     "SANDBOXD_SECRETS_KEY (it only names the old key of a "
		     "rotation between two SANDBOXD_SECRETS_KEY values)");
	c->http_port = (uint16_t)port;
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
