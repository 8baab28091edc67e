/* Proxy paths and the provider errors that end a task at once. */
#include <stdio.h>

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

#define PATH(m, p) provider_path(&cfg, m, p, &pp, msg, sizeof(msg))

static void
paths(void)
{
	struct proxy_path pp;
	char msg[256];

	setup();
	CHECK(PATH("POST", "/claude-code/anthropic/v1/messages") == 0);
	CHECK_STR(pp.agent, "claude-code");
	CHECK_STR(pp.up.name, "anthropic");
	CHECK_STR(pp.up.base_url, "https://api.anthropic.com");
	CHECK(pp.up.auth == PROVIDER_AUTH_X_API_KEY);
	CHECK_STR(pp.rest, "/v1/messages");
	CHECK(PATH("POST", "/opencode/zen/chat/completions") == 0);
	CHECK(pp.up.auth == PROVIDER_AUTH_BEARER);
	CHECK_STR(pp.rest, "/chat/completions");
	/* Not found: short, unknown agent/upstream, unconfigured. */
	CHECK(PATH("POST", "/opencode") == 404);
	CHECK(PATH("POST", "/codex/openai/chat/completions") == 404);
	CHECK(PATH("POST", "/opencode/evil/chat/completions") == 404);
	CHECK(PATH("POST", "/opencode/compat/chat/completions") == 404);
	CHECK(strstr(msg, "SANDBOXD_OPENAI_COMPAT_BASE_URL") != NULL);
	/* Dot tricks are simply not endpoints. */
	CHECK(PATH("POST", "/opencode/zen/../x") == 403);
	CHECK(PATH("POST", "/opencode/zen/a/%2e%2E/chat/completions") == 403);
	CHECK(PATH("POST", "/opencode/zen/x/../chat/completions") == 403);
	CHECK(PATH("POST", "/opencode/zen//chat/completions") == 403);
}

/* Each agent's credential goes only to its own upstreams. */
static void
agent_upstreams(void)
{
	struct proxy_path pp;
	char msg[256];

	setup();
	/* Claude Code's key is an Anthropic key: nowhere else. */
	CHECK(PATH("POST", "/claude-code/openai/chat/completions") == 403);
	CHECK(strstr(msg, "claude-code") && strstr(msg, "openai"));
	CHECK(PATH("POST", "/claude-code/zen/chat/completions") == 403);
	snprintf(cfg.compat_base_url, sizeof(cfg.compat_base_url),
	         "https://gateway.example/v1");
	CHECK(PATH("POST", "/claude-code/compat/chat/completions") == 403);
	/* OpenCode's models name their provider. */
	CHECK(PATH("POST", "/opencode/openai/chat/completions") == 0);
	CHECK(PATH("POST", "/opencode/compat/chat/completions") == 0);
	CHECK(PATH("POST", "/opencode/anthropic/v1/messages") == 0);
}

/* Only the inference endpoints, with their methods. */
static void
endpoints(void)
{
	static const struct {
		const char *method, *path;
		int want;
	} cases[] = {
	    {"POST", "/claude-code/anthropic/v1/messages", 0},
	    {"POST", "/claude-code/anthropic/v1/messages/count_tokens", 0},
	    {"GET", "/claude-code/anthropic/v1/messages", 403},
	    {"GET", "/claude-code/anthropic/v1/organizations", 403},
	    {"POST", "/claude-code/anthropic/v1/files", 403},
	    {"POST", "/claude-code/anthropic/v1/messages/batches", 403},
	    {"GET", "/claude-code/anthropic/v1/models", 403},
	    {"POST", "/claude-code/anthropic/v1/messages/", 403},
	    {"POST", "/claude-code/anthropic/v1/complete", 403},
	    {"POST", "/claude-code/anthropic", 403},
	    {"POST", "/opencode/openai/chat/completions", 0},
	    {"POST", "/opencode/openai/responses", 0},
	    {"GET", "/opencode/openai/models", 0},
	    {"POST", "/opencode/openai/models", 403},
	    {"GET", "/opencode/openai/chat/completions", 403},
	    {"POST", "/opencode/openai/files", 403},
	    {"GET", "/opencode/openai/organization/users", 403},
	    {"POST", "/opencode/openai/v1/messages", 403},
	    {"POST", "/opencode/zen/responses", 0},
	    {"POST", "/opencode/anthropic/chat/completions", 403},
	};
	struct proxy_path pp;
	char msg[256];

	setup();
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int got = PATH(cases[i].method, cases[i].path);
		if (got != cases[i].want)
			fprintf(stderr, "  %s %s: %d, want %d\n",
			        cases[i].method, cases[i].path, got,
			        cases[i].want);
		CHECK(got == cases[i].want);
	}
	CHECK(PATH("POST", "/claude-code/anthropic/v1/files") == 403);
	CHECK(strstr(msg, "/v1/files") && strstr(msg, "/v1/messages"));
}

static bool
passed(const char *line)
{
	return provider_header_passed(line, strlen(line));
}

static void
response_headers(void)
{
	/* What a CLI needs. */
	CHECK(passed("Content-Type: text/event-stream; charset=utf-8"));
	CHECK(passed("content-type: application/json"));
	CHECK(passed("Retry-After: 1"));
	CHECK(passed("retry-after-ms: 250"));
	CHECK(passed("x-should-retry: true"));
	CHECK(passed("request-id: req_011"));
	CHECK(passed("X-Request-Id: abc"));
	CHECK(passed("anthropic-ratelimit-requests-remaining: 49"));
	CHECK(passed("anthropic-ratelimit-output-tokens-reset: 2026-01-01"));
	CHECK(passed("x-ratelimit-remaining-tokens: 1000"));
	CHECK(passed("Content-Encoding: gzip"));
	/* The account's, the connection's, the framing. */
	CHECK(!passed("set-cookie: __cf_bm=x; path=/"));
	CHECK(!passed("Set-Cookie: a=b"));
	CHECK(!passed("openai-organization: org-123"));
	CHECK(!passed("openai-project: proj_1"));
	CHECK(!passed("anthropic-organization-id: 0123"));
	CHECK(!passed("Content-Length: 5"));
	CHECK(!passed("Transfer-Encoding: chunked"));
	CHECK(!passed("Connection: keep-alive"));
	CHECK(!passed("Server: cloudflare"));
	CHECK(!passed("cf-ray: 8f"));
	CHECK(!passed("HTTP/1.1 200 OK"));
	CHECK(!passed("anthropic-ratelimit-: x"));
	CHECK(!passed("x-ratelimit-a b: x"));
	CHECK(!passed("x-ratelimit-\xed\x8b: x"));
	CHECK(!passed("content-type : text/html"));
	CHECK(!passed(": x"));
	CHECK(!passed("no colon"));
	CHECK(!provider_header_passed("content-type: x", 12));
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
    {"each agent's upstreams", agent_upstreams},
    {"the endpoint allow-list", endpoints},
    {"response headers passed back", response_headers},
    {"permanent provider errors", permanent_errors},
};

int
main(void)
{
	return UNIT_RUN("providers", tests);
}
