/*
 * Unit tests of configuration: defaults, the .env file, precedence, and
 * that every bad value is an error naming its variable, in words that
 * stay the same for each kind of row of config.c's table.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
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
    "SANDBOXD_SLEEP_POLICY",
    "SANDBOXD_FREEZE_AFTER_SECONDS",
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
    "SANDBOXD_PROXY_PORT",
    "SANDBOXD_TASK_TIMEOUT_SECONDS",
    "SANDBOXD_GIT_TIMEOUT_SECONDS",
    "SANDBOXD_GIT_IMPORT_MAX_MB",
    "SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS",
    "SANDBOXD_OAUTH_REFRESH_INTERVAL_SECONDS",
    "SANDBOXD_IDLE_REAP_INTERVAL_SECONDS",
    "SANDBOXD_PRESSURE_INTERVAL_SECONDS",
    "SANDBOXD_MEM_HEADROOM_PCT",
    "SANDBOXD_MEM_REFUSE_WAKES_PCT",
    "SANDBOXD_WAKE_READY_SECONDS",
    "SANDBOXD_EDGE_ADDR",
    "SANDBOXD_EDGE_PORT",
    "SANDBOXD_OPENCODE_FREE_MODEL",
    "SANDBOXD_OPENCODE_MODEL",
    "SANDBOXD_CLAUDE_MODEL",
    "SANDBOXD_ANTHROPIC_BASE_URL",
    "SANDBOXD_OPENAI_BASE_URL",
    "SANDBOXD_OPENAI_COMPAT_BASE_URL",
    "SANDBOXD_CLAUDE_TOKEN_URL",
    "SANDBOXD_CLAUDE_SCOPES",
    "SANDBOXD_SECRETS_KEY",
    "SANDBOXD_SECRETS_KEY_PREVIOUS",
    "SANDBOXD_NPM_REGISTRY",
    "SANDBOXD_PIP_INDEX_URL",
    "SANDBOXD_ORCHESTRATOR",
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
	CHECK_STR(c.sleep_policy, "freeze");
	CHECK(c.freeze_after_s == 300);
	CHECK_STR(c.runtime, "runc");
	CHECK(!c.auth_disabled);
	CHECK(c.ntokens == 0);
	CHECK_STR(c.docker_socket, "/var/run/docker.sock");
	CHECK_STR(c.network, "sandboxd");
	CHECK_STR(c.subnet, "");
	CHECK(c.egress_mode == EGRESS_PUBLIC);
	CHECK(c.egress_nallow == 0);
	CHECK_STR(c.orchestrator, "docker");
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

/* As expect_error, keeping the environment set before it. */
static void
expect_error_with(const char *var, const char *value)
{
	struct config c;
	char err[256] = "";
	const char *rt = getenv("SANDBOXD_RUNTIME");
	char keep[64];

	snprintf(keep, sizeof(keep), "%s", rt ? rt : "");
	clean_env();
	if (keep[0])
		setenv("SANDBOXD_RUNTIME", keep, 1);
	setenv(var, value, 1);
	CHECK(config_load(&c, err, sizeof(err)) == -1);
	CHECK(strstr(err, var) != NULL && strstr(err, keep) != NULL);
}

static void
bad_values_name_the_variable(void)
{
	expect_error("SANDBOXD_SLEEP_POLICY", "nap");
	expect_error("SANDBOXD_ORCHESTRATOR", "k8s");
	expect_error("SANDBOXD_ORCHESTRATOR", "Swarm");
	expect_error("SANDBOXD_ORCHESTRATOR", "kubernetes");
	/* swarm with a runtime it cannot apply */
	setenv("SANDBOXD_RUNTIME", "runsc", 1);
	expect_error_with("SANDBOXD_ORCHESTRATOR", "swarm");
	unsetenv("SANDBOXD_RUNTIME");
	expect_error("SANDBOXD_SLEEP_POLICY", "Freeze");
	expect_error("SANDBOXD_FREEZE_AFTER_SECONDS", "0");
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

static void
every_kind_has_its_default(void)
{
	struct config c;
	char err[256];

	clean_env();
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.proxy_port == 9097);
	CHECK(!c.preview_tls);
	CHECK_STR(c.preview_entrypoint, "web");
	CHECK(c.task_timeout_s == 600);
	CHECK(c.git_timeout_s == 300);
	CHECK(c.git_import_max_mb == 2048);
	CHECK(!c.git_allow_private);
	CHECK(c.oauth_refresh_s == 300);
	CHECK(c.idle_interval_s == 30);
	CHECK(c.pressure_interval_s == 10);
	CHECK(c.mem_headroom_pct == 15);
	CHECK(c.mem_refuse_pct == 10);
	CHECK(c.wake_ready_s == 30);
	CHECK(c.memory_mb == 2048);
	CHECK(c.pids_limit == 1024);
	CHECK(c.nofile_limit == 8192);
	CHECK_STR(c.edge_addr, "0.0.0.0");
	CHECK_STR(c.image, "sandboxd-base:" SANDBOXD_VERSION);
	CHECK_STR(c.opencode_free_model, "opencode/big-pickle");
	CHECK_STR(c.opencode_model, "");
	CHECK_STR(c.claude_model, "");
	CHECK_STR(c.anthropic_base_url, "https://api.anthropic.com");
	CHECK_STR(c.compat_base_url, "");
	CHECK_STR(c.claude_token_url,
	          "https://platform.claude.com/v1/oauth/token");
	CHECK_STR(c.claude_scopes, "user:inference");
	CHECK(c.secrets_key == NULL && c.secrets_key_previous == NULL);
	config_release(&c);
}

/* The whole message config_load gives with var=value. */
static void
expect_message(const char *var, const char *value, const char *msg)
{
	struct config c;
	char err[512] = "";

	clean_env();
	setenv(var, value, 1);
	CHECK(config_load(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, msg);
	unsetenv(var);
}

static void
messages_are_exact(void)
{
	expect_message("SANDBOXD_MEMORY_MB", "abc",
	               "SANDBOXD_MEMORY_MB: \"abc\" is not a whole number");
	expect_message("SANDBOXD_MEMORY_MB", "10",
	               "SANDBOXD_MEMORY_MB: 10 is out of range (16..1048576)");
	expect_message("HTTP_PORT", "0",
	               "HTTP_PORT: 0 is out of range (1..65535)");
	expect_message("PREVIEW_TLS", "maybe",
	               "PREVIEW_TLS: \"maybe\" is not true, false, 1 or 0");
	expect_message("SANDBOXD_IMAGE", "has space",
	               "SANDBOXD_IMAGE: \"has space\" contains ' '");
	expect_message("SANDBOXD_OPENAI_BASE_URL", "ftp://x",
	               "SANDBOXD_OPENAI_BASE_URL: \"ftp://x\" is not an "
	               "http:// or https:// URL");
	expect_message("SANDBOXD_DEFAULT_AGENT", "codex",
	               "SANDBOXD_DEFAULT_AGENT: \"codex\" is not opencode or "
	               "claude-code");
	expect_message("SANDBOXD_NETWORK", "host",
	               "SANDBOXD_NETWORK: \"host\" would give sandboxes the "
	               "host's own network; name a bridge network (default "
	               "sandboxd)");
	expect_message("SANDBOXD_SECRETS_KEY_PREVIOUS", "abc",
	               "SANDBOXD_SECRETS_KEY_PREVIOUS: set without "
	               "SANDBOXD_SECRETS_KEY (it only names the old key of a "
	               "rotation between two SANDBOXD_SECRETS_KEY values)");
}

static void
bounds_empties_and_order(void)
{
	struct config c;
	char err[256] = "";

	clean_env();
	setenv("SANDBOXD_MEM_HEADROOM_PCT", "0", 1);
	setenv("SANDBOXD_MEM_REFUSE_WAKES_PCT", "100", 1);
	setenv("SANDBOXD_OPENAI_BASE_URL", "", 1);  /* set empty: none */
	setenv("SANDBOXD_CLAUDE_TOKEN_URL", "", 1); /* set empty: default */
	setenv("SANDBOXD_ANTHROPIC_BASE_URL", "https://a.test//", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.mem_headroom_pct == 0 && c.mem_refuse_pct == 100);
	CHECK_STR(c.openai_base_url, "");
	CHECK_STR(c.claude_token_url,
	          "https://platform.claude.com/v1/oauth/token");
	CHECK_STR(c.anthropic_base_url, "https://a.test");
	config_release(&c);
	/* Of two bad values the first in the table's order is named. */
	clean_env();
	setenv("SANDBOXD_MEMORY_MB", "abc", 1);
	setenv("HTTP_PORT", "0", 1);
	CHECK(config_load(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, "HTTP_PORT: 0 is out of range (1..65535)");
	clean_env();
}

/* The edge listens on HTTP_PORT unless SANDBOXD_EDGE_PORT says where. */
static void
edge_port_follows_http_port(void)
{
	struct config c;
	char err[256];

	clean_env();
	setenv("HTTP_PORT", "8080", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.http_port == 8080);
	CHECK(c.edge_port == 8080);
	config_release(&c);
	setenv("SANDBOXD_EDGE_PORT", "8480", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.http_port == 8080);
	CHECK(c.edge_port == 8480);
	config_release(&c);
	expect_error("SANDBOXD_EDGE_PORT", "65536");
	expect_error("SANDBOXD_EDGE_PORT", "http");
	clean_env();
}

/*
 * .env.example, which install.sh copies to .env, holds the defaults: the
 * configuration loaded from it is the one loaded from an empty file,
 * field by field (config_load zeroes the struct first, so padding is
 * equal too).  scripts/lint checks it names every setting.
 */
static void
env_example_holds_the_defaults(void)
{
	struct config a, b;
	char err[256], path[PATH_MAX];
	const char *slash = strrchr(__FILE__, '/');
	int n = slash ? (int)(slash - __FILE__) : 0;

	snprintf(path, sizeof(path), "%.*s%s../../.env.example", n, __FILE__,
	         n ? "/" : "");
	clean_env();
	CHECK(config_load(&a, err, sizeof(err)) == 0);
	setenv("SANDBOXD_ENV_FILE", path, 1);
	if (config_load(&b, err, sizeof(err)) != 0) {
		fprintf(stderr, "  %s: %s\n", path, err);
		unit_failed = 1;
		config_release(&a);
		return;
	}
	CHECK(b.env_file_loaded);
	memcpy(b.env_file, a.env_file, sizeof(a.env_file));
	b.env_file_loaded = a.env_file_loaded;
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	config_release(&a);
	config_release(&b);
	clean_env();
}

static void
package_mirrors(void)
{
	const char *env[8];
	struct config c;
	char err[256];

	clean_env();
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.npm_mirror.url[0] == '\0' && c.pip_mirror.url[0] == '\0');
	CHECK(config_mirror_env(&c, env, 8) == 0);
	config_release(&c);

	setenv("SANDBOXD_EGRESS_ALLOW", "10.9.0.0/16", 1);
	setenv("SANDBOXD_NPM_REGISTRY", "http://10.1.2.3:4873/", 1);
	setenv("SANDBOXD_PIP_INDEX_URL", "http://[fd00::5]:8080/simple", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK_STR(c.npm_mirror.host, "10.1.2.3");
	CHECK(c.npm_mirror.port == 4873 && !c.npm_mirror.https);
	CHECK(c.egress_nallow == 3);
	CHECK_STR(c.egress_allow[1].cidr, "10.1.2.3/32");
	CHECK(c.egress_allow[1].port_lo == 4873 &&
	      c.egress_allow[1].port_hi == 4873);
	CHECK_STR(c.egress_allow[2].cidr, "fd00::5/128");
	CHECK(c.egress_allow[2].v6 && c.egress_allow[2].port_lo == 8080);
	CHECK(config_mirror_env(&c, env, 8) == 6);
	CHECK_STR(env[0], "npm_config_registry=http://10.1.2.3:4873/");
	CHECK_STR(env[1], "NPM_CONFIG_REGISTRY=http://10.1.2.3:4873/");
	CHECK_STR(env[2], "PIP_INDEX_URL=http://[fd00::5]:8080/simple");
	CHECK_STR(env[3], "UV_DEFAULT_INDEX=http://[fd00::5]:8080/simple");
	CHECK_STR(env[4], "PIP_TRUSTED_HOST=fd00::5");
	CHECK_STR(env[5], "UV_INSECURE_HOST=fd00::5");
	CHECK(config_mirror_env(&c, env, 2) == 2);
	config_release(&c);

	/* https: the default port, no trusted host; one address opened
	 * once for both. */
	clean_env();
	setenv("SANDBOXD_NPM_REGISTRY", "https://127.0.0.1/npm/", 1);
	setenv("SANDBOXD_PIP_INDEX_URL", "https://127.0.0.1/pypi/simple", 1);
	CHECK(config_load(&c, err, sizeof(err)) == 0);
	CHECK(c.pip_mirror.https && c.pip_mirror.port == 443);
	CHECK(c.egress_nallow == 1);
	CHECK_STR(c.egress_allow[0].cidr, "127.0.0.1/32");
	CHECK(config_mirror_env(&c, env, 8) == 4);
	config_release(&c);

	expect_error("SANDBOXD_NPM_REGISTRY", "ftp://10.0.0.1/");
	expect_error("SANDBOXD_NPM_REGISTRY", "10.0.0.1:4873");
	expect_error("SANDBOXD_NPM_REGISTRY", "http://");
	expect_error("SANDBOXD_NPM_REGISTRY", "http://10.0.0.1:0/");
	expect_error("SANDBOXD_NPM_REGISTRY", "http://10.0.0.1:99999/");
	expect_error("SANDBOXD_NPM_REGISTRY", "http://10.0.0.1:x/");
	expect_error("SANDBOXD_NPM_REGISTRY", "http://u:p@10.0.0.1/");
	expect_error("SANDBOXD_PIP_INDEX_URL", "http://a b/");
	expect_error("SANDBOXD_PIP_INDEX_URL", "http://[fd00::1/");
	clean_env();
}

static const struct unit_test tests[] = {
    {".env.example holds the defaults", env_example_holds_the_defaults},
    {"the edge's port follows HTTP_PORT", edge_port_follows_http_port},
    {"defaults are the documented ones", defaults_are_documented_ones},
    {"bad values name the variable", bad_values_name_the_variable},
    {"auth disabled only by true or 1", auth_disabled_fails_closed},
    {"env file is read and the environment wins",
     env_file_is_read_and_env_wins},
    {"tokens parse in order", tokens_parse_in_order},
    {"the sandbox network and egress settings", egress_settings},
    {"the package mirrors", package_mirrors},
    {"every kind has its default", every_kind_has_its_default},
    {"messages are exact", messages_are_exact},
    {"bounds, empty values and order", bounds_empties_and_order},
};

int
main(void)
{
	return UNIT_RUN("config", tests);
}
