/*
 * The credential on the wire (see wire.h).  An agent's API key goes in
 * the header its upstream takes (x-api-key for Anthropic, a bearer
 * token for the others); a subscription login goes as a bearer token
 * with the OAuth beta flag merged into the request's anthropic-beta
 * header, which then replaces the request's own.  The opened key or
 * token lives in struct cred for one request.  Whose credential: the
 * sandbox's tenant's own, else the instance's (store_agent_source),
 * never another tenant's.
 */
#include "proxy/wire.h"

#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "cred/credentials.h"
#include "lib/clock.h"
#include "vault/vault.h"

/* --- anthropic-beta ------------------------------------------------------ */

/* Whether the comma-separated list holds the flag s[0..n). */
static bool
listed(const char *list, const char *s, size_t n)
{
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t k = end ? (size_t)(end - p) : strlen(p);

		if (k == n && memcmp(p, s, n) == 0)
			return true;
		p = end ? end + 1 : p + k;
	}
	return false;
}

/* Appends the flag s[0..n) to the line unless it is there; -1: no room. */
static int
add_flag(char *out, size_t len, size_t start, size_t *used, const char *s,
         size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0 || listed(out + start, s, n))
		return 0;
	if (*used + n + 2 > len)
		return -1;
	if (*used > start)
		out[(*used)++] = ',';
	memcpy(out + *used, s, n);
	*used += n;
	out[*used] = '\0';
	return 0;
}

int
cred_beta_merge(const char *incoming, char *out, size_t len)
{
	static const char head[] = "anthropic-beta: ";
	const size_t start = sizeof(head) - 1;
	size_t used = start;

	if (len < sizeof(head))
		return -1;
	memcpy(out, head, sizeof(head));
	for (const char *p = incoming ? incoming : ""; *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
				return -1;
		if (add_flag(out, len, start, &used, p, n) < 0)
			return -1;
		p = end ? end + 1 : p + n;
	}
	return add_flag(out, len, start, &used, CRED_OAUTH_BETA,
	                strlen(CRED_OAUTH_BETA));
}

void
cred_wipe(struct cred *cr)
{
	vault_wipe(cr->value, sizeof(cr->value));
}

/* --- what the proxy injects ---------------------------------------------- */

/* The subscription login, for an agent without an API key. */
static int
oauth_for(struct core *c, const char *owner, const char *agent,
          const struct provider *up, const char *beta, struct cred *out,
          char *msg, size_t len)
{
	const struct agent_def *def = agent_find(agent);
	struct cred_oauth o;
	int rc = def && def->oauth ? cred_oauth_get(c->store, owner, &o)
	                           : STORE_NOT_FOUND;

	if (rc == STORE_NOT_FOUND) {
		/* An agent's free upstream (OpenCode Zen's free models)
		 * needs no key; nothing else is free. */
		if (def && def->free_upstream &&
		    strcmp(up->name, def->free_upstream) == 0)
			return 0;
		snprintf(msg, len,
		         "%s is not connected for this sandbox's tenant and "
		         "has no instance default: add its API key "
		         "(POST /v1/agents/%s/api-key)%s%s%s",
		         agent, agent,
		         def && def->oauth
		             ? " or sign in with a Claude subscription (POST "
		               "/v1/agents/"
		             : "",
		         def && def->oauth ? agent : "",
		         def && def->oauth ? "/oauth/start)" : "");
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
cred_for(struct core *c, const char *tenant, const char *agent,
         const struct provider *up, const char *beta, struct cred *out,
         char *msg, size_t len)
{
	struct vault_secret key = {0};
	char owner[STORE_SECRET_OWNER_MAX + 1];
	int rc;

	memset(out, 0, sizeof(*out));
	out->base_url = up->base_url;
	rc = store_agent_source(c->store, tenant, agent, owner);
	if (rc < 0) {
		snprintf(msg, len, "%s's credential cannot be read", agent);
		return -1;
	}
	rc = store_agent_key(c->store, owner, agent, &key);
	if (rc == STORE_NOT_FOUND)
		return oauth_for(c, owner, agent, up, beta, out, msg, len);
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
