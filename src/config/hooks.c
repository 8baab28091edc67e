/*
 * The configuration's hooks: the rows of vars[] (config.c) that no kind
 * covers (the data directory, the API address and tokens, the Docker
 * socket, the network and egress, the console's files...) and the checks
 * that run after a row's value is parsed.  Each refuses what it does not
 * understand, as the kinds do.  They live apart from the table so that
 * config.c stays the table and its loop; a file per hook was rejected (a
 * dozen files of twenty lines each).
 */
#include "config/internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agents.h"
#include "lib/log.h"
#include "lib/num.h"

int
config_parse_addr(const struct envfile *f, struct config *c, char *err,
                  size_t errlen)
{
	const char *name = "SANDBOXD_API_ADDR";
	const char *v = envfile_lookup(f, name), *colon;
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
	         envfile_lookup(f, name) ? envfile_lookup(f, name)
	                                 : "127.0.0.1:9090");
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
	key = envfile_trim(entry);
	secret = envfile_trim(eq + 1);
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

int
config_parse_tokens(const struct envfile *f, struct config *c, char *err,
                    size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_API_TOKENS");
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
		if (*envfile_trim(entry) != '\0')
			rc = add_token(c, entry, err, errlen);
	}
	explicit_bzero(copy, strlen(v));
	free(copy);
	return rc;
}

int
config_parse_auth_disabled(const struct envfile *f, struct config *c, char *err,
                           size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_API_AUTH_DISABLED");

	(void)err; /* it refuses nothing: api/ warns about a bad value */
	(void)errlen;
	/* Exactly "true" or "1" turns auth off; anything else keeps it on. */
	c->auth_disabled = v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
	c->auth_disabled_invalid = v && *v && !c->auth_disabled &&
	                           strcmp(v, "false") != 0 &&
	                           strcmp(v, "0") != 0;
	return 0;
}

int
config_parse_data_dir(const struct envfile *f, struct config *c, char *err,
                      size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_DATA_DIR");
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

/* DOCKER_HOST is read from the environment only, never the .env file. */
int
config_parse_docker_host(const struct envfile *f, struct config *c, char *err,
                         size_t errlen)
{
	const char *v = getenv("DOCKER_HOST");

	(void)f;
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

/*
 * The edge listens on HTTP_PORT unless SANDBOXD_EDGE_PORT names another
 * port: behind a proxy that owns HTTP_PORT (Traefik in the compose
 * deployment), preview URLs keep the public port while the edge listens
 * on a port of its own.
 */
int
config_set_edge_port(const struct envfile *f, struct config *c, char *err,
                     size_t errlen)
{
	(void)f;
	(void)err;
	(void)errlen;
	if (c->edge_port == 0)
		c->edge_port = c->http_port;
	return 0;
}

/* SANDBOXD_DEFAULT_AGENT, once read as a word, must name an agent. */
int
config_check_agent(const struct envfile *f, struct config *c, char *err,
                   size_t errlen)
{
	char known[128];

	(void)f;
	agent_names(" or ", known, sizeof(known));
	if (agent_find(c->default_agent) == NULL)
		FAIL("SANDBOXD_DEFAULT_AGENT: \"%s\" is not %s",
		     c->default_agent, known);
	return 0;
}

/* A CA bundle for git servers: "" (the system's), or a readable file. */
int
config_parse_git_ca(const struct envfile *f, struct config *c, char *err,
                    size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_GIT_CA_FILE");
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

/*
 * How an idle sandbox sleeps: "freeze" (paused first, stopped at the
 * idle threshold) or "stop" (stopped at the threshold, nothing before).
 */
int
config_parse_sleep_policy(const struct envfile *f, struct config *c, char *err,
                          size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_SLEEP_POLICY");

	if (v == NULL || *v == '\0')
		v = "freeze";
	if (strcmp(v, "freeze") != 0 && strcmp(v, "stop") != 0)
		FAIL("SANDBOXD_SLEEP_POLICY: \"%s\" is not freeze or stop", v);
	snprintf(c->sleep_policy, sizeof(c->sleep_policy), "%s", v);
	return 0;
}

/*
 * SANDBOXD_ORCHESTRATOR, once read as a word: docker (every sandbox on
 * this host's engine, the default) or swarm (the sandboxes spread over
 * a Docker Swarm's nodes, orch/).
 */
int
config_check_orchestrator(const struct envfile *f, struct config *c, char *err,
                          size_t errlen)
{
	const char *rt = envfile_lookup(f, "SANDBOXD_RUNTIME");

	if (strcmp(c->orchestrator, "docker") != 0 &&
	    strcmp(c->orchestrator, "swarm") != 0)
		FAIL("SANDBOXD_ORCHESTRATOR: \"%s\" is not docker or swarm",
		     c->orchestrator);
	/* A swarm service names no OCI runtime (Swarm has no such field):
	 * a runtime asked for would be silently runc, so it is refused. */
	if (strcmp(c->orchestrator, "swarm") == 0 && rt && *rt &&
	    strcmp(rt, "runc") != 0)
		FAIL("SANDBOXD_ORCHESTRATOR: swarm cannot run sandboxes under "
		     "SANDBOXD_RUNTIME=%s (a swarm service names no runtime); "
		     "set \"default-runtime\" in each node's daemon.json and "
		     "leave SANDBOXD_RUNTIME unset (docs/deploy.md)",
		     rt);
	return 0;
}

/* Previews of apps without a visibility of their own: public or private. */
int
config_parse_preview_visibility(const struct envfile *f, struct config *c,
                                char *err, size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_PREVIEW_VISIBILITY");

	if (v == NULL || *v == '\0')
		v = "public";
	if (strcmp(v, "public") != 0 && strcmp(v, "private") != 0)
		FAIL("SANDBOXD_PREVIEW_VISIBILITY: \"%s\" is not public or "
		     "private",
		     v);
	snprintf(c->preview_visibility, sizeof(c->preview_visibility), "%s", v);
	return 0;
}

/*
 * The console's files: SANDBOXD_CONSOLE_DIR (an absolute path), else
 * the directory "console" beside the executable (build/console for
 * build/sandboxd).  A missing directory is no error: the edge then
 * says the console was not built.
 */
int
config_parse_console_dir(const struct envfile *f, struct config *c, char *err,
                         size_t errlen)
{
	const char *v = envfile_lookup(f, "SANDBOXD_CONSOLE_DIR");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (v && *v) {
		if (v[0] != '/' || strlen(v) >= sizeof(c->console_dir))
			FAIL("SANDBOXD_CONSOLE_DIR: \"%s\" is not an absolute "
			     "path",
			     v);
		snprintf(c->console_dir, sizeof(c->console_dir), "%s", v);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 16);
	if (n <= 0) {
		c->console_dir[0] = '\0';
		return 0;
	}
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		slash[1] = '\0';
	snprintf(c->console_dir, sizeof(c->console_dir), "%sconsole", exe);
	return 0;
}

/* SANDBOXD_SUBNET, once read as a word: an IPv4 block of /8 to /29,
 * kept normalised. */
int
config_check_subnet(const struct envfile *f, struct config *c, char *err,
                    size_t errlen)
{
	struct egress_allow net;
	const char *slash = strchr(c->subnet, '/');
	char why[160];
	size_t n;

	(void)f;
	if (c->subnet[0] == '\0')
		return 0;
	if (slash == NULL || strchr(c->subnet, ':') ||
	    egress_allow_parse(c->subnet, &net, 1, &n, why, sizeof(why)) < 0 ||
	    num_long(slash + 1, -1) < 8 || num_long(slash + 1, -1) > 29)
		FAIL("SANDBOXD_SUBNET: \"%s\" is not an IPv4 subnet of /8 to "
		     "/29, such as 10.213.0.0/20",
		     c->subnet);
	snprintf(c->subnet, sizeof(c->subnet), "%s", net.cidr);
	return 0;
}

/*
 * What sandboxes on the network may reach.  It also refuses
 * SANDBOXD_NETWORK=host: after SANDBOXD_SUBNET is checked, as it always
 * was, so that of two bad values the same one is named.
 */
int
config_parse_egress(const struct envfile *f, struct config *c, char *err,
                    size_t errlen)
{
	const char *mode = envfile_lookup(f, "SANDBOXD_EGRESS");
	const char *allow = envfile_lookup(f, "SANDBOXD_EGRESS_ALLOW");
	char why[160];

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

/* SANDBOXD_LOG_FORMAT, once read as a word: text or json. */
int
config_check_log_format(const struct envfile *f, struct config *c, char *err,
                        size_t errlen)
{
	(void)f;
	if (log_format_parse(c->log_format) < 0)
		FAIL("SANDBOXD_LOG_FORMAT: \"%s\" is not text or json",
		     c->log_format);
	return 0;
}

int
config_check_rotation(const struct envfile *f, struct config *c, char *err,
                      size_t errlen)
{
	(void)f;
	if (c->secrets_key_previous && c->secrets_key == NULL)
		FAIL("SANDBOXD_SECRETS_KEY_PREVIOUS: set without "
		     "SANDBOXD_SECRETS_KEY (it only names the old key of a "
		     "rotation between two SANDBOXD_SECRETS_KEY values)");
	return 0;
}
/* "a.b.c.d" or "a.b.c.d:port" (SANDBOXD_DNS_RESOLVER). */
static bool
resolver_ok(const char *v)
{
	char ip[INET_ADDRSTRLEN];
	const char *colon = strchr(v, ':');
	struct in_addr a;
	size_t n = colon ? (size_t)(colon - v) : strlen(v);
	long port = colon ? num_long(colon + 1, 0) : 53;

	if (n >= sizeof(ip))
		return false;
	memcpy(ip, v, n);
	ip[n] = '\0';
	if (inet_pton(AF_INET, ip, &a) != 1)
		return false;
	return port >= 1 && port <= 65535;
}

/*
 * The custom domains' settings, once read as words: the resolver is an
 * IPv4 address with an optional port, each public address an IPv4 or
 * IPv6 literal, the Traefik directory absolute.
 */
int
config_check_domains(const struct envfile *f, struct config *c, char *err,
                     size_t errlen)
{
	char list[sizeof(c->public_addrs)], *save = NULL;
	unsigned char a[sizeof(struct in6_addr)];

	(void)f;
	if (c->dns_resolver[0] && !resolver_ok(c->dns_resolver))
		FAIL("SANDBOXD_DNS_RESOLVER: \"%s\" is not an IPv4 address "
		     "with an optional :port",
		     c->dns_resolver);
	snprintf(list, sizeof(list), "%s", c->public_addrs);
	for (char *t = strtok_r(list, ", ", &save); t;
	     t = strtok_r(NULL, ", ", &save))
		if (inet_pton(AF_INET, t, a) != 1 &&
		    inet_pton(AF_INET6, t, a) != 1)
			FAIL("SANDBOXD_PUBLIC_ADDRS: \"%s\" is not an IP "
			     "address",
			     t);
	if (c->traefik_dynamic_dir[0] && c->traefik_dynamic_dir[0] != '/')
		FAIL("SANDBOXD_TRAEFIK_DYNAMIC_DIR: \"%s\" is not an absolute "
		     "path",
		     c->traefik_dynamic_dir);
	return 0;
}
