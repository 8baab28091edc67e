/*
 * Proxy tokens and the credentials behind them (see credentials.h); the
 * Claude subscription login is in oauth.c.
 */
#include "core/credentials.h"

#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "vault/vault.h"

#define PROXY_TOKEN_KIND "sandbox_proxy"

int
cred_new_proxy_token(struct core *c, const char *sandbox_id)
{
	char token[VAULT_TOKEN_LEN + 1], hash[VAULT_HASH_HEX + 1];
	int rc;

	vault_token_new(token);
	vault_hash_hex(token, strlen(token), hash);
	rc = store_secret_put(c->store, PROXY_TOKEN_KIND, "", sandbox_id, token,
	                      strlen(token));
	if (rc == 0)
		rc = store_sandbox_set_proxy_token(c->store, sandbox_id, hash);
	vault_wipe(token, sizeof(token));
	if (rc != 0)
		log_error("sandbox %s: cannot store its proxy token",
		          sandbox_id);
	return rc == 0 ? 0 : -1;
}

int
cred_proxy_token(struct core *c, const char *sandbox_id, char *out, size_t len)
{
	struct vault_secret s = {0};
	int rc =
	    store_secret_get(c->store, PROXY_TOKEN_KIND, "", sandbox_id, &s);

	if (rc != 0 || s.len + 1 > len) {
		vault_secret_free(&s);
		return -1;
	}
	memcpy(out, s.data, s.len + 1);
	vault_secret_free(&s);
	return 0;
}

void
cred_drop_proxy_token(struct core *c, const char *sandbox_id)
{
	store_secret_delete(c->store, PROXY_TOKEN_KIND, "", sandbox_id);
}

int
cred_sandbox_for_token(struct core *c, const char *token, struct sandbox *sb)
{
	char hash[VAULT_HASH_HEX + 1];

	if (token == NULL || strlen(token) != VAULT_TOKEN_LEN)
		return -1;
	vault_hash_hex(token, strlen(token), hash);
	if (store_sandbox_by_proxy_token(c->store, hash, sb) != 0)
		return -1;
	return strcmp(sb->status, "running") == 0 ? 0 : -1;
}

void
cred_wipe(struct cred *cr)
{
	vault_wipe(cr->value, sizeof(cr->value));
}

/* --- what the proxy injects ---------------------------------------------- */

/* The subscription login, for an agent without an API key. */
static int
oauth_for(struct core *c, const char *agent, const struct provider *up,
          const char *beta, struct cred *out, char *msg, size_t len)
{
	struct cred_oauth o;
	int rc = strcmp(agent, CRED_OAUTH_AGENT) == 0 ? cred_oauth_get(c, &o)
	                                              : STORE_NOT_FOUND;

	if (rc == STORE_NOT_FOUND) {
		/* OpenCode's free models need no key; nothing else is free. */
		if (strcmp(agent, "opencode") == 0 &&
		    strcmp(up->name, "zen") == 0)
			return 0;
		snprintf(msg, len,
		         "%s is not connected: add its API key "
		         "(POST /v1/agents/%s/api-key)%s",
		         agent, agent,
		         strcmp(agent, CRED_OAUTH_AGENT) == 0
		             ? " or sign in with a Claude subscription (POST "
		               "/v1/agents/claude-code/oauth/start)"
		             : "");
		return -1;
	}
	if (rc != 0) {
		snprintf(msg, len, "%s's credential cannot be read", agent);
		return -1;
	}
	rc = -1;
	if (strcmp(up->name, "anthropic") != 0)
		snprintf(msg, len,
		         "%s's Claude subscription login is only for the "
		         "anthropic upstream",
		         agent);
	else if (o.needs_login && o.expires_at <= clock_now_ms())
		snprintf(msg, len,
		         "%s's Claude subscription login has expired and the "
		         "provider refused to renew it: sign in again (POST "
		         "/v1/agents/%s/oauth/start)",
		         agent, agent);
	else if (cred_beta_merge(beta, out->beta, sizeof(out->beta)) < 0)
		snprintf(msg, len, "the anthropic-beta header is too long");
	else
		rc = 0;
	if (rc == 0) {
		snprintf(out->header, sizeof(out->header), "Authorization");
		snprintf(out->value, sizeof(out->value), "Bearer %s",
		         o.access_token);
		out->extra[0] = out->beta;
		out->nextra = 1;
		out->sets_beta = true;
	}
	cred_oauth_wipe(&o);
	return rc;
}

int
cred_for(struct core *c, const char *agent, const struct provider *up,
         const char *beta, struct cred *out, char *msg, size_t len)
{
	struct vault_secret key = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	out->base_url = up->base_url;
	rc = store_agent_key(c->store, agent, &key);
	if (rc == STORE_NOT_FOUND)
		return oauth_for(c, agent, up, beta, out, msg, len);
	if (rc != 0 || key.len + 1 > sizeof(out->value)) {
		vault_secret_free(&key);
		snprintf(msg, len, "%s's credential cannot be read", agent);
		return -1;
	}
	if (up->auth == PROVIDER_AUTH_X_API_KEY) {
		snprintf(out->header, sizeof(out->header), "x-api-key");
		memcpy(out->value, key.data, key.len + 1);
	} else {
		snprintf(out->header, sizeof(out->header), "Authorization");
		snprintf(out->value, sizeof(out->value), "Bearer %s", key.data);
	}
	vault_secret_free(&key);
	return 0;
}
