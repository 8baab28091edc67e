/* The API's Host guard for an API without authentication; operators. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth.h"
#include "store_fixture.h"
#include "unit.h"

static void
loopback_hosts(void)
{
	CHECK(auth_loopback_host("localhost"));
	CHECK(auth_loopback_host("LocalHost:9090"));
	CHECK(auth_loopback_host("127.0.0.1"));
	CHECK(auth_loopback_host("127.0.0.1:1"));
	CHECK(auth_loopback_host("[::1]"));
	CHECK(auth_loopback_host("[::1]:65535"));
	/* Rebinding names, look-alikes, bad ports. */
	CHECK(!auth_loopback_host(NULL));
	CHECK(!auth_loopback_host(""));
	CHECK(!auth_loopback_host("evil.example"));
	CHECK(!auth_loopback_host("evil.example:9090"));
	CHECK(!auth_loopback_host("localhost.evil.example"));
	CHECK(!auth_loopback_host("localhost."));
	CHECK(!auth_loopback_host("127.0.0.1.nip.io"));
	CHECK(!auth_loopback_host("127.0.0.10"));
	CHECK(!auth_loopback_host("127.0.0.1:"));
	CHECK(!auth_loopback_host("127.0.0.1:90a"));
	CHECK(!auth_loopback_host("127.0.0.1:123456"));
	CHECK(!auth_loopback_host("localhost:80@evil.example"));
	CHECK(!auth_loopback_host("[::1]x"));
	CHECK(!auth_loopback_host("[::ffff:127.0.0.1]"));
	CHECK(!auth_loopback_host("0.0.0.0"));
}

static void
names_listed(void)
{
	CHECK(auth_name_listed("ops", "ops"));
	CHECK(auth_name_listed("a, ops ,b", "ops"));
	CHECK(auth_name_listed("a,b", "b"));
	CHECK(!auth_name_listed("", "ops"));
	CHECK(!auth_name_listed("ops", ""));
	CHECK(!auth_name_listed("a,,b", ""));
	CHECK(!auth_name_listed("opsx,xops", "ops"));
	CHECK(!auth_name_listed("op", "ops"));
}

/* Operators: "default" and SANDBOXD_OPERATORS, with auth off too. */
static void
operators(void)
{
	struct config cfg;
	struct auth *a = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.ntokens = 1;
	snprintf(cfg.tokens[0].name, sizeof(cfg.tokens[0].name), "alice");
	cfg.tokens[0].secret = strdup("alice-token-1");
	snprintf(cfg.operators, sizeof(cfg.operators), "ops, root");
	CHECK(auth_init(&a, &cfg, NULL) == 0);
	if (a == NULL)
		return;
	CHECK(auth_operator(a, "default"));
	CHECK(auth_operator(a, "ops"));
	CHECK(auth_operator(a, "root"));
	CHECK(!auth_operator(a, "alice"));
	CHECK(!auth_operator(a, "defaults"));
	CHECK(!auth_operator(a, ""));
	auth_free(a);
	memset(&cfg, 0, sizeof(cfg));
	cfg.auth_disabled = true;
	snprintf(cfg.preview_domain, sizeof(cfg.preview_domain), "localhost");
	CHECK(auth_init(&a, &cfg, NULL) == 0);
	if (a) {
		/* Off is for loopback callers (server.c): a token through
		 * the edge is still checked, and a tenant's is no operator's.
		 */
		CHECK(!auth_operator(a, "alice"));
		/* The Host guard: loopback names and the console's host. */
		CHECK(auth_host_allowed(a, "127.0.0.1:9090"));
		CHECK(auth_host_allowed(a, "console.localhost:8080"));
		CHECK(!auth_host_allowed(a, "console.evil.example"));
		CHECK(!auth_host_allowed(a, "evil.example"));
		CHECK(!auth_host_allowed(a, NULL));
	}
	auth_free(a);
}

static void
token_names(void)
{
	CHECK(auth_name_ok("ci-bot", 6));
	CHECK(auth_name_ok("a.b_C-9", 7));
	CHECK(auth_name_ok("x", 1));
	CHECK(!auth_name_ok("", 0));
	CHECK(!auth_name_ok("a b", 3));
	CHECK(!auth_name_ok("a/b", 3));
	CHECK(!auth_name_ok("a,b", 3));
	CHECK(!auth_name_ok("a=b", 3));
	CHECK(!auth_name_ok("a\0b", 3));
	CHECK(auth_name_ok(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    63));
	CHECK(!auth_name_ok(
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    64));
}

static int
names_of(const struct apikey *k, void *arg)
{
	strcat(arg, k->name);
	strcat(arg, ",");
	return 0;
}

/* A made token works on the next check; replaced or deleted, it fails. */
static void
stored_tokens_take_effect_at_once(void)
{
	struct store *s = store_fixture_open();
	char t1[VAULT_TOKEN_LEN + 1], t2[VAULT_TOKEN_LEN + 1], hdr[80];
	char owner[64], names[128] = "";
	struct config cfg;
	struct auth *a = NULL;

	CHECK(s != NULL && vault_init() == 0);
	if (s == NULL)
		return;
	memset(&cfg, 0, sizeof(cfg));
	cfg.ntokens = 1;
	snprintf(cfg.tokens[0].name, sizeof(cfg.tokens[0].name), "env1");
	cfg.tokens[0].secret = strdup("env1-token-1");
	snprintf(cfg.operators, sizeof(cfg.operators), "env1");
	CHECK(auth_init(&a, &cfg, s) == 0);
	if (a == NULL)
		goto out;
	CHECK(auth_env_count(a) == 1 && auth_env_has(a, "env1"));
	CHECK_STR(auth_env_name(a, 0), "env1");
	CHECK(auth_env_name(a, 1) == NULL && !auth_env_has(a, "bot"));
	CHECK(auth_name_operator(a, "env1") &&
	      auth_name_operator(a, "default"));
	CHECK(!auth_name_operator(a, "bot"));
	CHECK(auth_token_make(s, "bot", t1) == 0);
	snprintf(hdr, sizeof(hdr), "Bearer %s", t1);
	CHECK(auth_check(a, hdr, owner, sizeof(owner)));
	CHECK_STR(owner, "bot");
	CHECK(auth_token_make(s, "bot", t2) == 0); /* replaces t1 */
	CHECK(!auth_check(a, hdr, owner, sizeof(owner)));
	snprintf(hdr, sizeof(hdr), "Bearer %s", t2);
	CHECK(auth_check(a, hdr, owner, sizeof(owner)));
	CHECK(auth_token_make(s, "another", t1) == 0);
	CHECK(store_apikey_list(s, names_of, names) == 0);
	CHECK_STR(names, "another,bot,");
	CHECK(store_apikey_delete(s, "bot") == 0);
	CHECK(store_apikey_delete(s, "bot") == STORE_NOT_FOUND);
	CHECK(!auth_check(a, hdr, owner, sizeof(owner)));
	CHECK(auth_check(a, "Bearer env1-token-1", owner, sizeof(owner)));
	CHECK_STR(owner, "env1");
out:
	auth_free(a);
	store_fixture_close(s);
}

static const struct unit_test tests[] = {
    {"loopback Host values", loopback_hosts},
    {"comma-separated names", names_listed},
    {"operator tokens", operators},
    {"token names", token_names},
    {"stored tokens take effect at once", stored_tokens_take_effect_at_once},
};

int
main(void)
{
	return UNIT_RUN("auth", tests);
}
