/*
 * Unit tests of configuration: defaults, the .env file, precedence, and
 * that every bad value is an error naming its variable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "unit.h"

static const char *const vars[] = {
    "SANDBOXD_DATA_DIR",
    "SANDBOXD_API_ADDR",
    "HTTP_PORT",
    "PREVIEW_DOMAIN",
    "PREVIEW_ENTRYPOINT",
    "PREVIEW_TLS",
    "SANDBOXD_API_AUTH_DISABLED",
    "SANDBOXD_API_TOKENS",
    "SANDBOXD_DEFAULT_AGENT",
    "SANDBOXD_IDLE_THRESHOLD_SECONDS",
    "SANDBOXD_RUNTIME",
    "SANDBOXD_IMAGE",
    "SANDBOXD_NETWORK",
    "SANDBOXD_SUBNET",
    "SANDBOXD_EGRESS",
    "SANDBOXD_EGRESS_ALLOW",
    "SANDBOXD_MEMORY_MB",
    "SANDBOXD_PIDS_LIMIT",
    "SANDBOXD_NOFILE_LIMIT",
    "SANDBOXD_ENV_FILE",
    "DOCKER_HOST",
};

static char envfile[64];

static void
clean_env(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	/* Never pick up a .env from wherever the tests run. */
	setenv("SANDBOXD_ENV_FILE", "/dev/null", 1);
	setenv("SANDBOXD_DATA_DIR", "/tmp/sandboxd-unit", 1);
}

static void
defaults_are_documented_ones(void)
{
	struct config c;
	char err[256];

	clean_env();
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR(c.api_host, "127.0.0.1");
	CHECK(c.api_port == 9090);
	CHECK(c.http_port == 80);
	CHECK_STR(c.preview_domain, "localhost");
	CHECK_STR(c.default_agent, "opencode");
	CHECK(c.idle_threshold_s == 2100);
	CHECK_STR(c.runtime, "runc");
	CHECK(!c.auth_disabled);
	CHECK(c.ntokens == 0);
	CHECK_STR(c.docker_socket, "/var/run/docker.sock");
	CHECK_STR(c.network, "sandboxd");
	CHECK_STR(c.subnet, "");
	CHECK(c.egress_mode == EGRESS_PUBLIC);
	CHECK(c.egress_nallow == 0);
	config_release(&c);
}

static void
egress_settings(void)
{
	struct config c;
	char err[256];

	clean_env();
	setenv("SANDBOXD_EGRESS", "none", 1);
	setenv("SANDBOXD_SUBNET", "10.50.7.9/24", 1);
	setenv("SANDBOXD_EGRESS_ALLOW", "192.168.1.10:5432, 10.9.0.0/16", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.egress_mode == EGRESS_NONE);
	CHECK_STR(c.subnet, "10.50.7.0/24");
	CHECK(c.egress_nallow == 2);
	CHECK_STR(c.egress_allow[1].cidr, "10.9.0.0/16");
	config_release(&c);
}

static void
expect_error(const char *var, const char *value)
{
	struct config c;
	char err[256] = "";

	clean_env();
	setenv(var, value, 1);
	CHECK(config_load(&c, err, sizeof(err)) == -1);
	if (strstr(err, var) == NULL) {
		fprintf(stderr, "  %s=%s: error does not name it: %s\n", var,
		        value, err);
		unit_failed = 1;
	}
}

static void
bad_values_name_the_variable(void)
{
	expect_error("SANDBOXD_MEMORY_MB", "abc");
	expect_error("SANDBOXD_MEMORY_MB", "12x");
	expect_error("SANDBOXD_MEMORY_MB", "-5");
	expect_error("SANDBOXD_PIDS_LIMIT", "3");
	expect_error("SANDBOXD_API_ADDR", "nonsense");
	expect_error("SANDBOXD_API_ADDR", "127.0.0.1:99999");
	expect_error("HTTP_PORT", "0");
	expect_error("PREVIEW_TLS", "maybe");
	expect_error("SANDBOXD_DEFAULT_AGENT", "codex");
	expect_error("SANDBOXD_API_TOKENS", "no-equals-sign");
	expect_error("SANDBOXD_API_TOKENS", "a=short");
	expect_error("SANDBOXD_DATA_DIR", "relative/path");
	expect_error("SANDBOXD_IMAGE", "has space");
	expect_error("DOCKER_HOST", "tcp://1.2.3.4:2375");
	expect_error("SANDBOXD_ENV_FILE", "/nonexistent/sandboxd.env");
	expect_error("SANDBOXD_NETWORK", "host");
	expect_error("SANDBOXD_SUBNET", "10.0.0.0");
	expect_error("SANDBOXD_SUBNET", "10.0.0.0/30");
	expect_error("SANDBOXD_SUBNET", "fd00::/64");
	expect_error("SANDBOXD_EGRESS", "closed");
	expect_error("SANDBOXD_EGRESS_ALLOW", "10.0.0.1:http");
}

static void
auth_disabled_fails_closed(void)
{
	static const struct {
		const char *value;
		bool disabled;
	} cases[] = {{"true", true}, {"1", true},     {"false", false},
	             {"0", false},   {"yes", false},  {"TRUE", false},
	             {"on", false},  {" true", false}};
	struct config c;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		clean_env();
		setenv("SANDBOXD_API_AUTH_DISABLED", cases[i].value, 1);
		CHECK(config_load(&c, err, sizeof(err)) == 0);
		CHECK(c.auth_disabled == cases[i].disabled);
		config_release(&c);
	}
}

static void
env_file_is_read_and_env_wins(void)
{
	struct config c;
	char err[256];
	FILE *f;
	int fd;

	snprintf(envfile, sizeof(envfile), "/tmp/sandboxd-env-XXXXXX");
	fd = mkstemp(envfile);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\n\nexport PREVIEW_DOMAIN=example.test\n"
	      "SANDBOXD_API_TOKENS=\"ops=token-from-file\"\n"
	      "SANDBOXD_MEMORY_MB='512'\n",
	      f);
	fclose(f);
	clean_env();
	setenv("SANDBOXD_ENV_FILE", envfile, 1);
	setenv("SANDBOXD_MEMORY_MB", "1024", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR(c.preview_domain, "example.test");
	CHECK(c.ntokens == 1);
	CHECK_STR(c.tokens[0].name, "ops");
	CHECK_STR(c.tokens[0].secret, "token-from-file");
	CHECK(c.memory_mb == 1024);
	config_release(&c);
	unlink(envfile);
}

static void
tokens_parse_in_order(void)
{
	struct config c;
	char err[256];

	clean_env();
	setenv("SANDBOXD_API_TOKENS", " a=token-aaaa , b=token-bbbb,", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.ntokens == 2);
	CHECK_STR(c.tokens[0].name, "a");
	CHECK_STR(c.tokens[1].secret, "token-bbbb");
	config_release(&c);
	CHECK(c.ntokens == 0);
}

static const struct unit_test tests[] = {
    {"defaults are the documented ones", defaults_are_documented_ones},
    {"bad values name the variable", bad_values_name_the_variable},
    {"auth disabled only by true or 1", auth_disabled_fails_closed},
    {"env file is read and the environment wins",
     env_file_is_read_and_env_wins},
    {"tokens parse in order", tokens_parse_in_order},
    {"the sandbox network and egress settings", egress_settings},
};

int
main(void)
{
	return UNIT_RUN("config", tests);
}
