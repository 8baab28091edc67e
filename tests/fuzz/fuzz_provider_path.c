/*
 * libFuzzer target: proxy paths and provider response headers, as a
 * hostile sandbox and a hostile provider send them.  The first byte picks
 * the method, the rest is the path (and, whole, a header line).
 * provider_path() must answer 0, 403 or 404; a 0 must name a known agent
 * allowed on its upstream and a rest that is one of the inference
 * endpoints; the message must be a string.  provider_header_passed()
 * must pass only "name:" lines whose name has no space or control byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "proxy/providers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const endpoints[] = {
    "/v1/messages", "/v1/messages/count_tokens", "/chat/completions",
    "/responses", "/models"};

static bool
is_endpoint(const char *rest)
{
	for (size_t i = 0; i < sizeof(endpoints) / sizeof(*endpoints); i++)
		if (strcmp(rest, endpoints[i]) == 0)
			return true;
	return false;
}

static void
check_header(const char *line, size_t n)
{
	const char *colon;

	if (!provider_header_passed(line, n))
		return;
	colon = memchr(line, ':', n);
	if (colon == NULL || colon == line)
		__builtin_trap();
	for (const char *p = line; p < colon; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = {"GET", "POST", "HEAD", "PUT"};
	static struct config cfg;
	struct proxy_path pp;
	char path[PROVIDER_PATH_MAX + 64], msg[384];
	const char *method;
	int st;

	if (size == 0 || size >= sizeof(path))
		return 0;
	if (cfg.anthropic_base_url[0] == '\0') {
		snprintf(cfg.anthropic_base_url, sizeof(cfg.anthropic_base_url),
		         "https://a");
		snprintf(cfg.openai_base_url, sizeof(cfg.openai_base_url),
		         "https://o/v1");
		snprintf(cfg.zen_base_url, sizeof(cfg.zen_base_url),
		         "https://z/v1");
	}
	method = methods[data[0] % 4];
	memcpy(path, data + 1, size - 1);
	path[size - 1] = '\0';
	msg[0] = 'x';
	st = provider_path(&cfg, method, path, &pp, msg, sizeof(msg));
	if (st != 0 && st != 403 && st != 404)
		__builtin_trap();
	if (st != 0 && memchr(msg, '\0', sizeof(msg)) == NULL)
		__builtin_trap();
	if (st == 0) {
		const struct agent_def *d = agent_find(pp.agent);
		if (d == NULL || !agent_uses_upstream(d, pp.up.name) ||
		    !is_endpoint(pp.rest) || pp.up.base_url[0] == '\0')
			__builtin_trap();
	}
	check_header((const char *)data, size);
	return 0;
}
