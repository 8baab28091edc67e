/* Model providers for the credential proxy (see providers.h). */
#include "proxy/providers.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "lib/jv.h"

static bool
upstream(const struct config *cfg, const char *name, size_t n,
         struct provider *out)
{
	static const struct {
		const char *name;
		enum provider_auth auth;
	} known[] = {
	    {"anthropic", PROVIDER_AUTH_X_API_KEY},
	    {"openai", PROVIDER_AUTH_BEARER},
	    {"zen", PROVIDER_AUTH_BEARER},
	    {"compat", PROVIDER_AUTH_BEARER},
	};
	const char *urls[] = {cfg->anthropic_base_url, cfg->openai_base_url,
	                      cfg->zen_base_url, cfg->compat_base_url};

	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++)
		if (strlen(known[i].name) == n &&
		    memcmp(known[i].name, name, n) == 0) {
			out->name = known[i].name;
			out->auth = known[i].auth;
			out->base_url = urls[i];
			return true;
		}
	return false;
}

/* True when a path segment is ".", "..", or hides one with %2e. */
static bool
dotted(const char *rest)
{
	for (const char *p = rest; *p;) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char seg[16];
		size_t k = 0;

		for (size_t i = 0; i < n && k + 1 < sizeof(seg); i++) {
			if (p[i] == '%' && i + 2 < n && p[i + 1] == '2' &&
			    (p[i + 2] == 'e' || p[i + 2] == 'E')) {
				seg[k++] = '.';
				i += 2;
			} else {
				seg[k++] = p[i];
			}
		}
		seg[k] = '\0';
		if (n <= 9 && (strcmp(seg, ".") == 0 || strcmp(seg, "..") == 0))
			return true;
		p = end ? end + 1 : p + n;
	}
	return false;
}

int
provider_path(const struct config *cfg, const char *path,
              struct proxy_path *out, char *msg, size_t len)
{
	const char *a, *u, *r;

	memset(out, 0, sizeof(*out));
	if (path[0] != '/' || (u = strchr(path + 1, '/')) == NULL) {
		snprintf(msg, len,
		         "bad proxy path (want /<agent>/<upstream>/…)");
		return -1;
	}
	a = path + 1;
	if ((size_t)(u - a) < sizeof(out->agent))
		memcpy(out->agent, a, (size_t)(u - a));
	if (agent_find(out->agent) == NULL) {
		snprintf(msg, len, "unknown agent in the proxy path");
		return -1;
	}
	u++;
	r = strchr(u, '/');
	if (!upstream(cfg, u, r ? (size_t)(r - u) : strlen(u), &out->up)) {
		snprintf(msg, len, "unknown upstream in the proxy path");
		return -1;
	}
	if (out->up.base_url[0] == '\0') {
		snprintf(msg, len,
		         "the %s upstream is not configured "
		         "(SANDBOXD_OPENAI_COMPAT_BASE_URL)",
		         out->up.name);
		return -1;
	}
	snprintf(out->rest, sizeof(out->rest), "%s", r ? r : "/");
	if (strlen(r ? r : "/") >= sizeof(out->rest) || dotted(out->rest + 1)) {
		snprintf(msg, len, "bad path under the upstream");
		return -1;
	}
	return 0;
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
