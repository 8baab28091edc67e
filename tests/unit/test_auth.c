/* The API's Host guard for an API without authentication. */
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

static const struct unit_test tests[] = {
    {"loopback Host values", loopback_hosts},
};

int
main(void)
{
	return UNIT_RUN("auth", tests);
}
