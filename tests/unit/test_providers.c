/* Proxy paths and the provider errors that end a task at once. */
#include "proxy/providers.h"
#include "unit.h"

static struct config cfg;

static void
setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.anthropic_base_url, sizeof(cfg.anthropic_base_url),
	         "https://api.anthropic.com");
	snprintf(cfg.openai_base_url, sizeof(cfg.openai_base_url),
	         "https://api.openai.com/v1");
	snprintf(cfg.zen_base_url, sizeof(cfg.zen_base_url),
	         "https://opencode.ai/zen/v1");
}

static void
paths(void)
{
	struct proxy_path p;
	char msg[256];

	setup();
	CHECK(provider_path(&cfg, "/claude-code/anthropic/v1/messages", &p, msg,
	                    sizeof(msg)) == 0);
	CHECK_STR(p.agent, "claude-code");
	CHECK_STR(p.up.name, "anthropic");
	CHECK_STR(p.up.base_url, "https://api.anthropic.com");
	CHECK(p.up.auth == PROVIDER_AUTH_X_API_KEY);
	CHECK_STR(p.rest, "/v1/messages");
	CHECK(provider_path(&cfg, "/opencode/zen/chat/completions", &p, msg,
	                    sizeof(msg)) == 0);
	CHECK(p.up.auth == PROVIDER_AUTH_BEARER);
	CHECK_STR(p.rest, "/chat/completions");
	CHECK(provider_path(&cfg, "/opencode/zen", &p, msg, sizeof(msg)) == 0);
	CHECK_STR(p.rest, "/");
	/* Refused: short, unknown agent/upstream, unconfigured, dot tricks. */
	CHECK(provider_path(&cfg, "/opencode", &p, msg, sizeof(msg)) < 0);
	CHECK(provider_path(&cfg, "/codex/openai/x", &p, msg, sizeof(msg)) < 0);
	CHECK(provider_path(&cfg, "/opencode/evil/x", &p, msg, sizeof(msg)) <
	      0);
	CHECK(provider_path(&cfg, "/opencode/compat/x", &p, msg, sizeof(msg)) <
	      0);
	CHECK(strstr(msg, "SANDBOXD_OPENAI_COMPAT_BASE_URL") != NULL);
	CHECK(provider_path(&cfg, "/opencode/zen/../x", &p, msg, sizeof(msg)) <
	      0);
	CHECK(provider_path(&cfg, "/opencode/zen/a/%2e%2E/x", &p, msg,
	                    sizeof(msg)) < 0);
	CHECK(provider_path(&cfg, "/opencode/zen/a/.", &p, msg, sizeof(msg)) <
	      0);
	CHECK(provider_path(&cfg, "/opencode/zen/a/..b/x", &p, msg,
	                    sizeof(msg)) == 0);
}

static void
permanent_errors(void)
{
	char msg[512];
	const char *ant = "{\"type\":\"error\",\"error\":{\"type\":"
	                  "\"authentication_error\",\"message\":\"invalid "
	                  "x-api-key\"}}";
	const char *quota = "{\"error\":{\"message\":\"You exceeded your "
	                    "current quota\",\"type\":\"insufficient_quota\"}}";
	const char *busy = "{\"error\":{\"message\":\"Rate limit, slow "
	                   "down\"}}";

	CHECK(provider_permanent_error("anthropic", 401, ant, strlen(ant), msg,
	                               sizeof(msg)));
	CHECK(strstr(msg, "anthropic: the key was rejected") == msg);
	CHECK(strstr(msg, "invalid x-api-key") != NULL);
	CHECK(provider_permanent_error("openai", 429, quota, strlen(quota), msg,
	                               sizeof(msg)));
	CHECK(strstr(msg, "usage limit") != NULL);
	CHECK(strstr(msg, "exceeded your current quota") != NULL);
	CHECK(provider_permanent_error("zen", 402, "no money", 8, msg,
	                               sizeof(msg)));
	CHECK(strstr(msg, "no money") != NULL);
	/* Transient: plain rate limits, overload, server errors. */
	CHECK(!provider_permanent_error("openai", 429, busy, strlen(busy), msg,
	                                sizeof(msg)));
	CHECK(!provider_permanent_error("anthropic", 529, "{}", 2, msg,
	                                sizeof(msg)));
	CHECK(!provider_permanent_error("anthropic", 500, "", 0, msg,
	                                sizeof(msg)));
	CHECK(!provider_permanent_error("anthropic", 400, "{}", 2, msg,
	                                sizeof(msg)));
}

static const struct unit_test tests[] = {
    {"proxy paths", paths},
    {"permanent provider errors", permanent_errors},
};

int
main(void)
{
	return UNIT_RUN("providers", tests);
}
