/*
 * Preview host names: "s-<sandbox id>-<port>.preview.<domain>[:port]",
 * any case, from a request's Host header.  A pure function of its
 * bytes and the configured domain, so the fuzz target runs it alone
 * (tests/fuzz/fuzz_edge_head.c).  The id must be a ULID (ulid_parse
 * gives its canonical form), both ports 1-65535 in decimal without a
 * sign; anything else, or another domain, is no preview.  What the
 * edge writes of a Host (X-Forwarded-Host, origins) is built from
 * these parsed parts, never from the client's bytes.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "edge/internal.h"

/* ":<port>" of a Host, at most 5 digits, 1-65535; -1 when not that. */
static long
host_port(const char *p, size_t n)
{
	long v = 0;

	if (n < 2 || n > 6 || p[0] != ':')
		return -1;
	for (size_t i = 1; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v >= 1 && v <= 65535 ? v : -1;
}

bool
edge_host_parse(const char *domain, const char *host, size_t len,
                char id[ULID_LEN + 1], int *port)
{
	const char *end = host + len, *p;
	char raw[ULID_LEN + 1];
	size_t dlen = strlen(domain);
	long v = 0;

	p = memchr(host, ':', len);
	if (p && host_port(p, len - (size_t)(p - host)) < 0)
		return false;
	if (p)
		end = p; /* drop :port */
	if (end - host < (long)(2 + ULID_LEN + 2 + 9 + dlen) ||
	    strncasecmp(host, "s-", 2) != 0)
		return false;
	memcpy(raw, host + 2, ULID_LEN);
	raw[ULID_LEN] = '\0';
	if (!ulid_parse(raw, id) || host[2 + ULID_LEN] != '-')
		return false;
	for (p = host + 3 + ULID_LEN; p < end && isdigit((unsigned char)*p);
	     p++)
		if ((v = v * 10 + (*p - '0')) > 65535)
			return false;
	if (p == host + 3 + ULID_LEN || v < 1 || end - p != 9 + (long)dlen ||
	    strncasecmp(p, ".preview.", 9) != 0 ||
	    strncasecmp(p + 9, domain, dlen) != 0)
		return false;
	*port = (int)v;
	return true;
}

/* c->port: the Host's ":<port>" as a number writes it ("" without). */
void
edge_host_port(struct edge_conn *c, const char *host, size_t len)
{
	const char *p = memchr(host, ':', len);
	long v = p ? host_port(p, len - (size_t)(p - host)) : -1;

	c->port[0] = '\0';
	if (v > 0)
		snprintf(c->port, sizeof(c->port), ":%ld", v);
}
