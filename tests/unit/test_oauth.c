/*
 * The Claude subscription sign-in's pure pieces: PKCE, the authorize
 * URL's exact query, the anthropic-beta merge, reading a token
 * endpoint's answer; and on a real store, that an agent holds one
 * credential at a time and what the proxy injects for a login.
 */
#include <stdio.h>
#include <string.h>

#include "cred/credentials.h"
#include "lib/clock.h"
#include "proxy/wire.h"
#include "store_fixture.h"
#include "unit.h"
#include "vault/vault.h"

static bool
b64url(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

static void
pkce(void)
{
	char v[VAULT_B64URL_32_LEN + 1], c[sizeof(v)], c2[sizeof(v)];
	char s[sizeof(v)];

	/* RFC 7636, appendix B. */
	vault_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", 43, c);
	CHECK_STR(c, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
	vault_pkce(v, c);
	CHECK(strlen(v) == 43 && strlen(c) == 43 && b64url(v) && b64url(c));
	vault_s256(v, strlen(v), c2);
	CHECK_STR(c, c2);
	vault_random_b64url(s);
	CHECK(strlen(s) == 43 && b64url(s) && strcmp(s, v) != 0);
}

static void
defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->claude_client_id, sizeof(cfg->claude_client_id),
	         "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
	snprintf(cfg->claude_authorize_url, sizeof(cfg->claude_authorize_url),
	         "https://claude.com/cai/oauth/authorize");
	snprintf(cfg->claude_redirect_uri, sizeof(cfg->claude_redirect_uri),
	         "https://platform.claude.com/oauth/code/callback");
	snprintf(cfg->claude_scopes, sizeof(cfg->claude_scopes),
	         "user:inference");
}

static void
authorize_url(void)
{
	struct config cfg;
	char url[4096], small[64];

	defaults(&cfg);
	CHECK(cred_oauth_authorize_url(&cfg, "CHAL-_", "ST_-", url,
	                               sizeof(url)) == 0);
	CHECK_STR(url, "https://claude.com/cai/oauth/authorize?code=true"
	               "&client_id=9d1c250a-e61b-44d9-88ed-5944d1962f5e"
	               "&response_type=code"
	               "&redirect_uri=https%3A%2F%2Fplatform.claude.com%2Foauth"
	               "%2Fcode%2Fcallback"
	               "&scope=user%3Ainference&code_challenge=CHAL-_"
	               "&code_challenge_method=S256&state=ST_-");
	/* Several scopes; an authorize URL with a query of its own. */
	snprintf(cfg.claude_scopes, sizeof(cfg.claude_scopes),
	         "user:profile user:inference");
	snprintf(cfg.claude_authorize_url, sizeof(cfg.claude_authorize_url),
	         "http://127.0.0.1:9/authorize?x=1");
	CHECK(cred_oauth_authorize_url(&cfg, "c", "s", url, sizeof(url)) == 0);
	CHECK(strncmp(url, "http://127.0.0.1:9/authorize?x=1&code=true&", 43) ==
	      0);
	CHECK(strstr(url, "&scope=user%3Aprofile%20user%3Ainference&") != NULL);
	CHECK(cred_oauth_authorize_url(&cfg, "c", "s", small, sizeof(small)) <
	      0);
}

static void
beta_merge(void)
{
	char out[CRED_BETA_MAX], tiny[24];

	CHECK(cred_beta_merge(NULL, out, sizeof(out)) == 0);
	CHECK_STR(out, "anthropic-beta: oauth-2025-04-20");
	CHECK(cred_beta_merge("", out, sizeof(out)) == 0);
	CHECK_STR(out, "anthropic-beta: oauth-2025-04-20");
	CHECK(cred_beta_merge("claude-code-20250219,fine-grained-tool-streaming"
	                      "-2025-05-14",
	                      out, sizeof(out)) == 0);
	CHECK_STR(out, "anthropic-beta: claude-code-20250219,fine-grained-"
	               "tool-streaming-2025-05-14,oauth-2025-04-20");
	/* Kept in order, trimmed, empty and repeated flags dropped. */
	CHECK(cred_beta_merge(" a , oauth-2025-04-20,,b,a ,b", out,
	                      sizeof(out)) == 0);
	CHECK_STR(out, "anthropic-beta: a,oauth-2025-04-20,b");
	CHECK(cred_beta_merge("ab,abc,ab", out, sizeof(out)) == 0);
	CHECK_STR(out, "anthropic-beta: ab,abc,oauth-2025-04-20");
	CHECK(cred_beta_merge("a\r\nx-evil: 1", out, sizeof(out)) < 0);
	CHECK(cred_beta_merge(NULL, tiny, sizeof(tiny)) < 0);
	CHECK(cred_beta_merge("a", tiny, 5) < 0);
}

static void
parse_answer(void)
{
	struct cred_oauth old, o;
	char why[128];
	const char *full = "{\"token_type\":\"Bearer\",\"access_token\":"
	                   "\"sk-ant-oat01-AAA\",\"refresh_token\":\"sk-ant-"
	                   "ort01-RRR\",\"expires_in\":28800,\"scope\":"
	                   "\"user:inference\"}";
	const char *slim = "{\"access_token\":\"A2\"}";

	CHECK(cred_oauth_parse(full, strlen(full), 1000, NULL, &o, why,
	                       sizeof(why)) == 0);
	CHECK_STR(o.access_token, "sk-ant-oat01-AAA");
	CHECK_STR(o.refresh_token, "sk-ant-ort01-RRR");
	CHECK(o.expires_at == 1000 + 28800 * 1000LL);
	CHECK_STR(o.scope, "user:inference");
	CHECK(!o.needs_login);
	/* A refresh answer without refresh token and scope keeps the old. */
	old = o;
	old.needs_login = true;
	CHECK(cred_oauth_parse(slim, strlen(slim), 5, &old, &o, why,
	                       sizeof(why)) == 0);
	CHECK_STR(o.access_token, "A2");
	CHECK_STR(o.refresh_token, "sk-ant-ort01-RRR");
	CHECK_STR(o.scope, "user:inference");
	CHECK(o.expires_at == 0 && !o.needs_login);
	/* Refused: no token, a token that cannot go into a header, junk. */
	CHECK(cred_oauth_parse("{\"expires_in\":1}", 16, 0, NULL, &o, why,
	                       sizeof(why)) < 0);
	CHECK(strstr(why, "access_token") != NULL);
	CHECK(cred_oauth_parse("{\"access_token\":\"a b\"}", 22, 0, NULL, &o,
	                       why, sizeof(why)) < 0);
	CHECK(cred_oauth_parse("{\"access_token\":\"a\\r\\nX: y\"}", 28, 0,
	                       NULL, &o, why, sizeof(why)) < 0);
	CHECK(cred_oauth_parse("{\"access_token\":\"a\",\"refresh_token\":7}",
	                       37, 0, NULL, &o, why, sizeof(why)) < 0);
	CHECK(cred_oauth_parse("<html>", 6, 0, NULL, &o, why, sizeof(why)) < 0);
	CHECK(o.access_token[0] == '\0');
	cred_oauth_wipe(&o);
	cred_oauth_wipe(&old);
}

/* --- on a store -------------------------------------------------------- */

static const char login[] =
    "{\"access_token\":\"AT-1\",\"refresh_token\":\"RT-1\","
    "\"expires_at\":4102444800000,\"scope\":\"user:inference\"}";

static void
one_credential(void)
{
	struct store *s = store_fixture_open_sealed();
	char method[16];

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-1", 4) == 0);
	CHECK(store_agent_method(s, "", "claude-code", method) == 0);
	CHECK_STR(method, "api_key");
	/* The login replaces the key, and a key replaces the login. */
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_OAUTH, login,
	                          strlen(login)) == 0);
	CHECK(store_agent_method(s, "", "claude-code", method) == 0);
	CHECK_STR(method, "oauth");
	CHECK(store_secret_exists(s, STORE_SECRET_AGENT_API_KEY, "",
	                          "claude-code") == STORE_NOT_FOUND);
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-2", 4) == 0);
	CHECK(store_secret_exists(s, STORE_SECRET_AGENT_OAUTH, "",
	                          "claude-code") == STORE_NOT_FOUND);
	/* An update never brings a removed row back. */
	CHECK(store_secret_update(s, STORE_SECRET_AGENT_OAUTH, "",
	                          "claude-code", login,
	                          strlen(login)) == STORE_NOT_FOUND);
	CHECK(store_secret_exists(s, STORE_SECRET_AGENT_OAUTH, "",
	                          "claude-code") == STORE_NOT_FOUND);
	/* The other agent was never touched. */
	CHECK(store_agent_method(s, "", "opencode", method) == STORE_NOT_FOUND);
	store_fixture_close(s);
}

static void
proxy_injects(void)
{
	struct store *s = store_fixture_open_sealed();
	struct config cfg;
	struct core c;
	struct provider anthropic = {.name = "anthropic",
	                             .base_url = "http://a",
	                             .auth = PROVIDER_AUTH_X_API_KEY};
	struct provider openai = {.name = "openai",
	                          .base_url = "http://o",
	                          .auth = PROVIDER_AUTH_BEARER};
	struct cred_oauth o;
	struct cred cr;
	char msg[256];

	CHECK(s != NULL);
	if (s == NULL)
		return;
	defaults(&cfg);
	memset(&c, 0, sizeof(c));
	c.cfg = &cfg;
	c.store = s;
	CHECK(cred_for(&c, "t1", "claude-code", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) < 0);
	CHECK(strstr(msg, "oauth/start") != NULL);
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_OAUTH, login,
	                          strlen(login)) == 0);
	CHECK(cred_oauth_get(c.store, "", &o) == 0);
	CHECK_STR(o.access_token, "AT-1");
	CHECK(o.expires_at == 4102444800000LL && !o.needs_login);
	CHECK(cred_for(&c, "t1", "claude-code", &anthropic,
	               "b1,oauth-2025-04-20", &cr, msg, sizeof(msg)) == 0);
	CHECK_STR(cr.header, "Authorization");
	CHECK_STR(cr.value, "Bearer AT-1");
	CHECK(cr.sets_beta && cr.nextra == 1);
	CHECK_STR(cr.extra[0], "anthropic-beta: b1,oauth-2025-04-20");
	cred_wipe(&cr);
	/* Only for the anthropic upstream, and only for Claude Code. */
	CHECK(cred_for(&c, "t1", "claude-code", &openai, NULL, &cr, msg,
	               sizeof(msg)) < 0);
	CHECK(cred_for(&c, "t1", "opencode", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) < 0);
	/* An API key: x-api-key, and the request's anthropic-beta stays. */
	CHECK(store_agent_connect(s, "", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-9", 4) == 0);
	CHECK(cred_for(&c, "t1", "claude-code", &anthropic, "b1", &cr, msg,
	               sizeof(msg)) == 0);
	CHECK_STR(cr.header, "x-api-key");
	CHECK(!cr.sets_beta && cr.nextra == 0);
	cred_wipe(&cr);
	CHECK(cred_oauth_get(c.store, "", &o) == STORE_NOT_FOUND);
	cred_oauth_wipe(&o);
	/*
	 * Tenant t1's own key wins over the instance's for t1's sandboxes;
	 * t2, with none, gets the instance's, never t1's.
	 */
	CHECK(store_agent_connect(s, "t1", "claude-code",
	                          STORE_SECRET_AGENT_API_KEY, "sk-t1", 5) == 0);
	CHECK(cred_for(&c, "t1", "claude-code", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) == 0);
	CHECK_STR(cr.value, "sk-t1");
	cred_wipe(&cr);
	CHECK(cred_for(&c, "t2", "claude-code", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) == 0);
	CHECK_STR(cr.value, "sk-9");
	cred_wipe(&cr);
	/* A tenant's login goes to that tenant's sandboxes only. */
	CHECK(store_agent_connect(s, "t2", "claude-code",
	                          STORE_SECRET_AGENT_OAUTH, login,
	                          strlen(login)) == 0);
	CHECK(cred_for(&c, "t2", "claude-code", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) == 0);
	CHECK_STR(cr.value, "Bearer AT-1");
	cred_wipe(&cr);
	CHECK(cred_for(&c, "t3", "claude-code", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) == 0);
	CHECK_STR(cr.value, "sk-9");
	cred_wipe(&cr);
	/* Without the instance's, a tenant with none is refused. */
	CHECK(store_secret_delete(s, STORE_SECRET_AGENT_API_KEY, "",
	                          "claude-code") == 0);
	CHECK(cred_for(&c, "t3", "claude-code", &anthropic, NULL, &cr, msg,
	               sizeof(msg)) < 0);
	CHECK(strstr(msg, "not connected") != NULL);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"PKCE verifier, challenge and state", pkce},
    {"the authorize URL's exact query", authorize_url},
    {"anthropic-beta merged with the OAuth flag", beta_merge},
    {"a token endpoint's answer", parse_answer},
    {"an agent holds one credential", one_credential},
    {"what the proxy injects for a login", proxy_injects},
};

int
main(void)
{
	if (vault_init() < 0)
		return 1;
	return UNIT_RUN("oauth", tests);
}
