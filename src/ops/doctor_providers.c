/*
 * doctor's provider check (doctor.h, doctor_providers): every model
 * provider the credential proxy is configured to reach is asked for its
 * base URL, from this host, as the proxy would ask: the name must
 * resolve, the address accept the connection and, for https, the TLS
 * handshake (with the certificate checked) succeed.  Any HTTP answer,
 * an error status included, proves all three; the answer itself is not
 * read.  Without this a task only finds out when its agent's first
 * model call fails.
 *
 * Each provider costs at most DOCTOR_PROVIDER_TIMEOUT_S; the check
 * names every one that fails, the first with its fix.  Rejected:
 * resolving and connecting by hand (getaddrinfo, a socket, a TLS
 * session of our own): the HTTP client already does each step as the
 * proxy does, with the proxy's TLS settings, and says which one failed.
 */
#include <stdio.h>
#include <string.h>

#include "net/http.h"
#include "ops/doctor.h"

#define DOCTOR_PROVIDER_CONNECT_MS 5000
#define DOCTOR_PROVIDER_TIMEOUT_S  10

/* What to do when the step that failed is this one. */
static const char *
fix_for(enum http_fail f)
{
	switch (f) {
	case HTTP_FAIL_RESOLVE:
		return "check DNS (/etc/resolv.conf) and the firewall, or set";
	case HTTP_FAIL_TLS:
		return "check the clock and any TLS-intercepting proxy, or set";
	default:
		return "check the firewall and the route to the provider, or "
		       "set";
	}
}

static size_t
discard(const char *p, size_t n, void *arg)
{
	(void)p, (void)arg;
	return n;
}

void
doctor_providers(const struct config *cfg, struct doctor_check *c)
{
	const struct {
		const char *name, *url, *setting;
	} up[] = {
	    {"anthropic", cfg->anthropic_base_url,
	     "SANDBOXD_ANTHROPIC_BASE_URL"},
	    {"openai", cfg->openai_base_url, "SANDBOXD_OPENAI_BASE_URL"},
	    {"zen", cfg->zen_base_url, "SANDBOXD_ZEN_BASE_URL"},
	    {"compat", cfg->compat_base_url, "SANDBOXD_OPENAI_COMPAT_BASE_URL"},
	};
	size_t bad = 0, good = 0, n;
	char host[128];

	c->level = DOCTOR_OK;
	for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
		struct http_call h = {0};
		if (up[i].url == NULL || up[i].url[0] == '\0')
			continue;
		if (http_url_host(up[i].url, host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "%s", up[i].url);
		h.method =
		    "GET"; /* HEAD through CUSTOMREQUEST waits for a body */
		h.url = up[i].url;
		h.https = true;
		h.connect_timeout_ms = DOCTOR_PROVIDER_CONNECT_MS;
		h.timeout_s = DOCTOR_PROVIDER_TIMEOUT_S;
		h.on_body = discard;
		if (http_perform(&h) == 0 || h.status > 0) {
			good++;
			continue;
		}
		n = strlen(c->msg);
		/* The first with curl's words; the others in short. */
		snprintf(c->msg + n, sizeof(c->msg) - n, "%s%s (%s) %s%s%s",
		         bad ? "; " : "", host, up[i].name,
		         http_fail_words(h.fail), bad ? "" : ": ",
		         bad ? "" : h.err);
		if (bad++ == 0)
			snprintf(c->fix, sizeof(c->fix),
			         "%s %s to a provider this host reaches; a "
			         "task using %s fails at its first model "
			         "call (provider_unreachable)",
			         fix_for(h.fail), up[i].setting, up[i].name);
	}
	if (bad) {
		c->level = DOCTOR_FAIL;
		return;
	}
	snprintf(c->msg, sizeof(c->msg),
	         "%zu model provider%s reachable from this host (name, "
	         "connection, TLS)",
	         good, good == 1 ? "" : "s");
}
