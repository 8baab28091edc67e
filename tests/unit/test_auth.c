/* The API's Host guard for an API without authentication; operators. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth.h"
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

/* Operators: "default" and SANDBOXD_OPERATORS; everyone with auth off. */
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
		CHECK(auth_operator(a, "alice"));
		/* The Host guard: loopback names and the console's host. */
		CHECK(auth_host_allowed(a, "127.0.0.1:9090"));
		CHECK(auth_host_allowed(a, "console.localhost:8080"));
		CHECK(!auth_host_allowed(a, "console.evil.example"));
		CHECK(!auth_host_allowed(a, "evil.example"));
		CHECK(!auth_host_allowed(a, NULL));
	}
	auth_free(a);
}

static const struct unit_test tests[] = {
    {"loopback Host values", loopback_hosts},
    {"comma-separated names", names_listed},
    {"operator tokens", operators},
};

int
main(void)
{
	return UNIT_RUN("auth", tests);
}
