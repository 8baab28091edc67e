/*
 * The package mirrors (SANDBOXD_NPM_REGISTRY, SANDBOXD_PIP_INDEX_URL):
 * URLs handed to every sandbox container (npm_config_registry,
 * PIP_INDEX_URL and UV_DEFAULT_INDEX, PIP_TRUSTED_HOST and
 * UV_INSECURE_HOST for http), and the mirror's addresses
 * opened in the egress policy, so that `public` (which refuses private
 * ranges, where a corporate mirror usually is) and `none` let the
 * package managers reach it.  The host is resolved once, at start: a
 * mirror that moves needs a restart.  A name that does not resolve then
 * is a warning, not a refused start (DNS may be late at boot); the
 * sandboxes then reach the mirror only if the policy lets them anyway.
 *
 * Rejected: resolving inside the egress rules (nftables has no names),
 * and opening the mirror's whole network (one address and port is what
 * the package managers use).
 */
#include "config/internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/log.h"

/* Splits an http(s) URL: host (brackets removed) and port. */
static int
mirror_url(const char *name, const char *url, struct config_mirror *m,
           char *err, size_t errlen)
{
	const char *p, *h, *end;
	size_t hlen;
	long port;
	char *stop;

	if (strlen(url) >= sizeof(m->url))
		FAIL("%s: longer than %zu bytes", name, sizeof(m->url) - 1);
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '"' ||
		    *p == '\\')
			FAIL("%s: \"%.64s\" must be a URL without spaces, "
			     "quotes "
			     "or control characters",
			     name, url);
	m->https = strncmp(url, "https://", 8) == 0;
	h = url + (m->https ? 8 : 7);
	if (!m->https && strncmp(url, "http://", 7) != 0)
		FAIL("%s: \"%.64s\" is not an http:// or https:// URL", name,
		     url);
	end = h + strcspn(h, "/?#");
	if (memchr(h, '@', (size_t)(end - h)))
		FAIL("%s: a user or password in the URL is not supported",
		     name);
	if (*h == '[') {
		p = memchr(h, ']', (size_t)(end - h));
		if (p == NULL)
			FAIL("%s: \"%.64s\": unclosed [", name, url);
		hlen = (size_t)(p - h - 1);
		h++;
		p++;
	} else {
		p = memchr(h, ':', (size_t)(end - h));
		if (p == NULL)
			p = end;
		hlen = (size_t)(p - h);
	}
	if (hlen == 0 || hlen >= sizeof(m->host))
		FAIL("%s: \"%.64s\" has no host", name, url);
	memcpy(m->host, h, hlen);
	m->host[hlen] = '\0';
	port = m->https ? 443 : 80;
	if (p < end) {
		if (*p != ':' || p + 1 == end)
			FAIL("%s: \"%.64s\": bad port", name, url);
		port = strtol(p + 1, &stop, 10);
		if (stop != end || port < 1 || port > 65535)
			FAIL("%s: \"%.64s\": bad port", name, url);
	}
	m->port = (uint16_t)port;
	snprintf(m->url, sizeof(m->url), "%s", url);
	return 0;
}

/* Adds one address of the mirror, with its port, to the allow-list. */
static void
mirror_allow(struct config *c, const char *name, const struct sockaddr *sa,
             uint16_t port)
{
	struct egress_allow *a;
	char addr[INET6_ADDRSTRLEN];
	bool v6 = sa->sa_family == AF_INET6;

	if (v6)
		inet_ntop(AF_INET6,
		          &((const struct sockaddr_in6 *)sa)->sin6_addr, addr,
		          sizeof(addr));
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
		          addr, sizeof(addr));
	for (size_t i = 0; i < c->egress_nallow; i++) {
		a = &c->egress_allow[i];
		if (strncmp(a->cidr, addr, strlen(addr)) == 0 &&
		    a->cidr[strlen(addr)] == '/' &&
		    strcmp(a->cidr + strlen(addr) + 1, v6 ? "128" : "32") ==
		        0 &&
		    (a->port_lo == 0 ||
		     (a->port_lo <= port && port <= a->port_hi)))
			return; /* already open (the other mirror, or by hand)
			         */
	}
	if (c->egress_nallow == EGRESS_MAX_ALLOW) {
		log_warn("%s: %s is not added to the egress allow-list: it has "
		         "%d entries already",
		         name, addr, EGRESS_MAX_ALLOW);
		return;
	}
	a = &c->egress_allow[c->egress_nallow++];
	memset(a, 0, sizeof(*a));
	snprintf(a->cidr, sizeof(a->cidr), "%s/%d", addr, v6 ? 128 : 32);
	a->v6 = v6;
	a->port_lo = a->port_hi = port;
	log_info("%s: egress allowed to %s port %u", name, a->cidr, port);
}

static void
mirror_resolve(struct config *c, const char *name, struct config_mirror *m)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	char port[8];
	int rc;

	snprintf(port, sizeof(port), "%u", m->port);
	rc = getaddrinfo(m->host, port, &hints, &res);
	if (rc != 0) {
		log_warn("%s: %s does not resolve (%s): the egress policy is "
		         "not opened for it",
		         name, m->host, gai_strerror(rc));
		return;
	}
	for (ai = res; ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
			mirror_allow(c, name, ai->ai_addr, m->port);
	freeaddrinfo(res);
}

/* Every tool that runs in the sandbox (the install, the agent, a
 * terminal) gets them from the container's environment. */
static void
mirror_env(struct config *c)
{
	const struct config_mirror *npm = &c->npm_mirror, *pip = &c->pip_mirror;
	int n = 0;

	if (npm->url[0]) {
		snprintf(c->mirror_env[n++], sizeof(c->mirror_env[0]),
		         "npm_config_registry=%s", npm->url);
		snprintf(c->mirror_env[n++], sizeof(c->mirror_env[0]),
		         "NPM_CONFIG_REGISTRY=%s", npm->url);
	}
	if (pip->url[0]) {
		snprintf(c->mirror_env[n++], sizeof(c->mirror_env[0]),
		         "PIP_INDEX_URL=%s", pip->url);
		snprintf(c->mirror_env[n++], sizeof(c->mirror_env[0]),
		         "UV_DEFAULT_INDEX=%s", pip->url);
	}
	if (pip->url[0] && !pip->https) {
		snprintf(c->mirror_env[n++], sizeof(c->mirror_env[0]),
		         "PIP_TRUSTED_HOST=%s", pip->host);
		snprintf(c->mirror_env[n++], sizeof(c->mirror_env[0]),
		         "UV_INSECURE_HOST=%s", pip->host);
	}
	c->nmirror_env = n;
}

int
config_parse_mirrors(const struct envfile *f, struct config *c, char *err,
                     size_t errlen)
{
	static const char *const names[] = {"SANDBOXD_NPM_REGISTRY",
	                                    "SANDBOXD_PIP_INDEX_URL"};
	struct config_mirror *mirrors[] = {&c->npm_mirror, &c->pip_mirror};

	for (size_t i = 0; i < 2; i++) {
		const char *v = envfile_lookup(f, names[i]);

		memset(mirrors[i], 0, sizeof(*mirrors[i]));
		if (v == NULL || *v == '\0')
			continue;
		if (mirror_url(names[i], v, mirrors[i], err, errlen) < 0)
			return -1;
		mirror_resolve(c, names[i], mirrors[i]);
	}
	mirror_env(c);
	return 0;
}

int
config_mirror_env(const struct config *c, const char **env, int max)
{
	int n;

	for (n = 0; n < c->nmirror_env && n < max; n++)
		env[n] = c->mirror_env[n];
	return n;
}
