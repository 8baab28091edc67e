/*
 * Bearer tokens.  Configured tokens (SANDBOXD_API_TOKENS) are kept only as
 * SHA-256 hashes, and every request compares its hash against all of them
 * with a constant-time compare, so neither which token matched nor how
 * much of it matched shows in the timing.  Tokens made by the daemon live
 * in the store, also as hashes, and looked up there on every request (no
 * cache), so one made or deleted through /v1/tokens counts from the next
 * request on.  Auth can only be turned off by the exact
 * values "true" or "1"; anything unexpected keeps it on (fail closed).
 * Off means: the API listens on loopback only (server.c refuses to start
 * on another address), a request straight from a loopback client needs
 * no token, and anything through the edge or another proxy (the
 * console's host) is authenticated as usual, so the setup code is made
 * and tokens are checked all the same.  Only loopback Host names and the
 * console's are served (auth_host_allowed): an open API on 127.0.0.1 is
 * otherwise one DNS-rebinding page away from any browser on the host.
 *
 * Operators are the tenants that may change what is instance-wide (the
 * default agent credentials and models): the first-start token's name,
 * "default", and the names in SANDBOXD_OPERATORS.  With auth off the
 * loopback caller is "default", so an operator (server.c).
 */
#include "api/auth.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/session.h"
#include "config/hosts.h"
#include "lib/log.h"
#include "vault/vault.h"

struct auth_token {
	char name[64];
	char hash[VAULT_HASH_HEX + 1];
};

struct auth {
	bool disabled;
	bool tls;                     /* PREVIEW_TLS */
	char domain[256];             /* PREVIEW_DOMAIN */
	char data_dir[4096];          /* the setup code's file is here */
	struct session_limiter limit; /* console sign-in */
	char operators[1024];         /* SANDBOXD_OPERATORS */
	struct store *store;
	struct auth_token tokens[CONFIG_MAX_TOKENS];
	size_t ntokens;
};

int
auth_token_make(struct store *store, const char *name,
                char out[VAULT_TOKEN_LEN + 1])
{
	char hash[VAULT_HASH_HEX + 1], prefix[32];
	int rc;

	vault_token_new(out);
	vault_hash_hex(out, strlen(out), hash);
	snprintf(prefix, sizeof(prefix), "%.12s...", out);
	rc = store_apikey_replace(store, name, hash, prefix);
	if (rc != 0)
		vault_wipe(out, VAULT_TOKEN_LEN + 1);
	return rc == 0 ? 0 : -1;
}

int
auth_token_issue(struct store *store, const char *name)
{
	char token[VAULT_TOKEN_LEN + 1];

	if (auth_token_make(store, name, token) < 0)
		return -1;
	printf("API token (shown once): %s\n", token);
	fflush(stdout);
	vault_wipe(token, sizeof(token));
	return 0;
}

bool
auth_name_ok(const char *name, size_t len)
{
	if (len == 0 || len > 63 || strlen(name) != len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return false;
	return true;
}

size_t
auth_env_count(const struct auth *a)
{
	return a->ntokens;
}

const char *
auth_env_name(const struct auth *a, size_t i)
{
	return i < a->ntokens ? a->tokens[i].name : NULL;
}

bool
auth_env_has(const struct auth *a, const char *name)
{
	for (size_t i = 0; i < a->ntokens; i++)
		if (strcmp(a->tokens[i].name, name) == 0)
			return true;
	return false;
}

static int
first_token(struct store *store)
{
	int64_t n;

	if (store_apikey_count(store, &n) < 0)
		return -1;
	if (n > 0) {
		printf("API token: made at first start and stored hashed; "
		       "`sandboxd token` makes a new one\n");
		fflush(stdout);
		return 0;
	}
	if (auth_token_issue(store, AUTH_FIRST_TOKEN_NAME) < 0)
		return -1;
	log_info("generated the first API token (name \"default\"); only its "
	         "hash is stored");
	return 0;
}

int
auth_init(struct auth **out, struct config *cfg, struct store *store)
{
	struct auth *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return -1;
	a->store = store;
	a->disabled = cfg->auth_disabled;
	a->tls = cfg->preview_tls;
	snprintf(a->domain, sizeof(a->domain), "%s", cfg->preview_domain);
	snprintf(a->data_dir, sizeof(a->data_dir), "%s", cfg->data_dir);
	session_limiter_init(&a->limit);
	snprintf(a->operators, sizeof(a->operators), "%s", cfg->operators);
	for (size_t i = 0; i < cfg->ntokens; i++) {
		struct auth_token *t = &a->tokens[a->ntokens++];
		snprintf(t->name, sizeof(t->name), "%s", cfg->tokens[i].name);
		vault_hash_hex(cfg->tokens[i].secret,
		               strlen(cfg->tokens[i].secret), t->hash);
	}
	config_release(cfg); /* the plain tokens are not needed any more */
	if (a->disabled)
		log_warn(
		    "AUTHENTICATION IS DISABLED (SANDBOXD_API_AUTH_DISABLED)"
		    ": the API listens on loopback only (%s), and every "
		    "process on this host that reaches it controls Docker "
		    "here; through the edge (the console's host) /v1 "
		    "still needs a token or a console session",
		    cfg->api_addr);
	else if (cfg->auth_disabled_invalid)
		log_warn("SANDBOXD_API_AUTH_DISABLED is neither true/1 nor "
		         "false/0; authentication stays ON");
	if ((!a->disabled && a->ntokens == 0 && first_token(store) < 0) ||
	    (store && session_code_init(store, a->data_dir) < 0)) {
		session_limiter_release(&a->limit);
		free(a);
		return -1;
	}
	*out = a;
	return 0;
}

void
auth_free(struct auth *a)
{
	if (a) {
		session_limiter_release(&a->limit);
		vault_wipe(a, sizeof(*a));
	}
	free(a);
}
bool
auth_check(struct auth *a, const char *header, char *owner, size_t len)
{
	char hash[VAULT_HASH_HEX + 1];
	const char *tok;
	size_t tlen;
	int found = -1;

	if (header == NULL || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	for (tok = header + 7; *tok == ' ' || *tok == '\t'; tok++)
		;
	tlen = strlen(tok);
	while (tlen && isspace((unsigned char)tok[tlen - 1]))
		tlen--;
	if (tlen == 0)
		return false;
	vault_hash_hex(tok, tlen, hash);
	for (size_t i = 0; i < a->ntokens; i++)
		if (vault_equal(hash, a->tokens[i].hash, VAULT_HASH_HEX) &&
		    found < 0)
			found = (int)i;
	if (found >= 0) {
		snprintf(owner, len, "%s", a->tokens[found].name);
		return true;
	}
	return store_apikey_lookup(a->store, hash, owner, len) == 0;
}

bool
auth_name_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; n && *p;) {
		const char *end = strchr(p, ',');
		size_t k = end ? (size_t)(end - p) : strlen(p);
		const char *q = p;

		while (k && (*q == ' ' || *q == '\t'))
			q++, k--;
		while (k && (q[k - 1] == ' ' || q[k - 1] == '\t'))
			k--;
		if (k == n && memcmp(q, name, n) == 0)
			return true;
		p = end ? end + 1 : p + strlen(p);
	}
	return false;
}

bool
auth_name_operator(const struct auth *a, const char *name)
{
	return strcmp(name, AUTH_FIRST_TOKEN_NAME) == 0 ||
	       auth_name_listed(a->operators, name);
}

bool
auth_operator(const struct auth *a, const char *owner)
{
	return auth_name_operator(a, owner);
}

bool
auth_loopback_host(const char *host)
{
	static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};
	const char *port;

	if (host == NULL)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		size_t n = strlen(names[i]);
		if (strncasecmp(host, names[i], n) != 0)
			continue;
		port = host + n;
		if (*port == '\0')
			return true;
		if (*port++ != ':' || *port == '\0' || strlen(port) > 5)
			return false;
		while (*port >= '0' && *port <= '9')
			port++;
		return *port == '\0';
	}
	return false;
}

bool
auth_host_allowed(const struct auth *a, const char *host)
{
	return !a->disabled || auth_loopback_host(host) ||
	       (host && console_host_match(a->domain, host, strlen(host)));
}

bool
auth_disabled(const struct auth *a)
{
	return a->disabled;
}

bool
auth_tls(const struct auth *a)
{
	return a->tls;
}

const char *
auth_data_dir(const struct auth *a)
{
	return a->data_dir;
}

struct session_limiter *
auth_limiter(struct auth *a)
{
	return &a->limit;
}
