/* Model providers for the credential proxy (see providers.h). */
#include "proxy/providers.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "agent/agents.h"
#include "lib/jv.h"

/* The two wire protocols, and the endpoints the agents call. */
enum provider_api {
	API_ANTHROPIC, /* Messages */
	API_OPENAI,    /* chat completions and responses */
};

/*
 * What the real CLIs call (tests/fake-provider/README.md records it):
 * Claude Code POST /v1/messages (?beta=true) and may count tokens;
 * OpenCode's SDKs POST /v1/messages (anthropic/… models) or
 * /chat/completions, the OpenAI SDK /responses, and may list models.
 * The OpenAI-style base URLs end in /v1 already.
 */
static const struct endpoint {
	enum provider_api api;
	const char *method;
	const char *path;
} endpoints[] = {
    {API_ANTHROPIC, "POST", "/v1/messages"},
    {API_ANTHROPIC, "POST", "/v1/messages/count_tokens"},
    {API_OPENAI, "POST", "/chat/completions"},
    {API_OPENAI, "POST", "/responses"},
    {API_OPENAI, "GET", "/models"},
};

static bool
upstream(const struct config *cfg, const char *name, size_t n,
         struct provider *out, enum provider_api *api)
{
	static const struct {
		const char *name;
		enum provider_auth auth;
		enum provider_api api;
	} known[] = {
	    {"anthropic", PROVIDER_AUTH_X_API_KEY, API_ANTHROPIC},
	    {"openai", PROVIDER_AUTH_BEARER, API_OPENAI},
	    {"zen", PROVIDER_AUTH_BEARER, API_OPENAI},
	    {"compat", PROVIDER_AUTH_BEARER, API_OPENAI},
	};
	const char *urls[] = {cfg->anthropic_base_url, cfg->openai_base_url,
	                      cfg->zen_base_url, cfg->compat_base_url};
	static const char *const settings[] = {
	    "SANDBOXD_ANTHROPIC_BASE_URL", "SANDBOXD_OPENAI_BASE_URL",
	    "SANDBOXD_ZEN_BASE_URL", "SANDBOXD_OPENAI_COMPAT_BASE_URL"};

	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (strlen(known[i].name) == n &&
		    memcmp(known[i].name, name, n) == 0) {
			out->name = known[i].name;
			out->auth = known[i].auth;
			out->base_url = urls[i];
			out->setting = settings[i];
			*api = known[i].api;
			return true;
		}
	return false;
}

static bool
endpoint_allowed(enum provider_api api, const char *method, const char *rest)
{
	for (size_t i = 0; i < sizeof(endpoints) / sizeof(*endpoints); i++)
		if (endpoints[i].api == api &&
		    strcmp(endpoints[i].method, method) == 0 &&
		    strcmp(endpoints[i].path, rest) == 0)
			return true;
	return false;
}

int
provider_path(const struct config *cfg, const char *method, const char *path,
              struct proxy_path *out, char *msg, size_t len)
{
	const struct agent_def *def;
	enum provider_api api;
	const char *a, *u, *r;

	memset(out, 0, sizeof(*out));
	if (path[0] != '/' || (u = strchr(path + 1, '/')) == NULL) {
		snprintf(msg, len,
		         "bad proxy path (want /<agent>/<upstream>/…)");
		return 404;
	}
	a = path + 1;
	if ((size_t)(u - a) < sizeof(out->agent))
		memcpy(out->agent, a, (size_t)(u - a));
	if ((def = agent_find(out->agent)) == NULL) {
		snprintf(msg, len, "unknown agent in the proxy path");
		return 404;
	}
	u++;
	r = strchr(u, '/');
	if (!upstream(cfg, u, r ? (size_t)(r - u) : strlen(u), &out->up,
	              &api)) {
		snprintf(msg, len, "unknown upstream in the proxy path");
		return 404;
	}
	if (!agent_uses_upstream(def, out->up.name)) {
		snprintf(
		    msg, len,
		    "sandboxd proxy: %s's credential is not sent to the %s "
		    "upstream",
		    out->agent, out->up.name);
		return 403;
	}
	if (out->up.base_url[0] == '\0') {
		snprintf(msg, len,
		         "the %s upstream is not configured "
		         "(SANDBOXD_OPENAI_COMPAT_BASE_URL)",
		         out->up.name);
		return 404;
	}
	if (strlen(r ? r : "/") >= sizeof(out->rest) ||
	    !endpoint_allowed(api, method, r ? r : "/")) {
		snprintf(
		    msg, len,
		    "sandboxd proxy: %s %.200s is not a model endpoint the "
		    "proxy forwards (%s: %s)",
		    method, r ? r : "/", out->up.name,
		    api == API_ANTHROPIC
		        ? "POST /v1/messages, /v1/messages/count_tokens"
		        : "POST /chat/completions, /responses; GET "
		          "/models");
		return 403;
	}
	snprintf(out->rest, sizeof(out->rest), "%s", r);
	return 0;
}

bool
provider_header_passed(const char *line, size_t n)
{
	static const char *const names[] = {
	    "content-type", "content-encoding", "cache-control",
	    "retry-after",  "retry-after-ms",   "x-should-retry",
	    "request-id",   "x-request-id"};
	static const char *const prefixes[] = {"anthropic-ratelimit-",
	                                       "x-ratelimit-"};
	const char *colon = memchr(line, ':', n);
	size_t k;

	if (colon == NULL || colon == line)
		return false;
	k = (size_t)(colon - line);
	/* A name of letters, digits and '-' only: the prefixes below must
	 * not let a provider's odd bytes through to the response. */
	for (size_t i = 0; i < k; i++)
		if (!isalnum((unsigned char)line[i]) && line[i] != '-')
			return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strlen(names[i]) == k &&
		    strncasecmp(line, names[i], k) == 0)
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++) {
		size_t p = strlen(prefixes[i]);
		if (k > p && strncasecmp(line, prefixes[i], p) == 0)
			return true;
	}
	return false;
}

/* Case-insensitive substring search in the first len bytes. */
static bool
mentions(const char *body, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= len; i++) {
		size_t k = 0;
		while (k < w && tolower((unsigned char)body[i + k]) == word[k])
			k++;
		if (k == w)
			return true;
	}
	return false;
}

/* The provider's own message: error.message, message, or the text. */
static void
detail(const char *body, size_t len, char *out, size_t outlen)
{
	struct jv *v = jv_parse(body, len, 16, NULL, 0);
	const char *m = jv_str(jv_get(jv_get(v, "error"), "message"));

	if (m == NULL)
		m = jv_str(jv_get(v, "message"));
	if (m == NULL)
		m = jv_str(jv_get(v, "error"));
	if (m)
		snprintf(out, outlen, "%s", m);
	else
		snprintf(out, outlen, "%.*s", (int)(len > 200 ? 200 : len),
		         body);
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < ' ')
			*p = ' ';
	jv_free(v);
}

bool
provider_permanent_error(const char *upstream_name, long status,
                         const char *body, size_t len, char *msg, size_t msglen)
{
	static const char *const quota_words[] = {
	    "usage limit",  "quota",   "credit",      "billing",
	    "insufficient", "balance", "upgrade your"};
	const char *why = NULL;
	char d[256];

	if (status == 401)
		why = "the key was rejected; connect the agent again";
	else if (status == 402)
		why = "payment required: the account has no usable balance";
	else if (status == 403)
		why = "access denied for this key (plan, model or region)";
	else if (status == 429)
		for (size_t i = 0;
		     i < sizeof(quota_words) / sizeof(*quota_words); i++)
			if (mentions(body, len, quota_words[i]))
				why = "usage limit reached: add credit or "
				      "raise the plan";
	if (why == NULL)
		return false;
	detail(body, len, d, sizeof(d));
	snprintf(msg, msglen, "%s: %s — %s", upstream_name, why, d);
	return true;
}
