/*
 * hostcheck.c - where a push or an import may connect: the URL's host
 * is resolved once, in the helper before it is confined, and refused
 * (blocked_host) when any of its addresses is loopback, private,
 * link-local, CGNAT, multicast or reserved, unless the operator allowed
 * private hosts (loopback alone: the tests' servers).  The approved
 * addresses become the confined helper's /etc/hosts (confine.c), so
 * libgit2's own lookup at connect time gets the same ones: a name that
 * would resolve differently a moment later (DNS rebinding) cannot.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "git/git.h"
#include "git/internal.h"

static bool
v4_blocked(const unsigned char *a)
{
	uint32_t x = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
	             (uint32_t)a[2] << 8 | a[3];
	static const struct {
		uint32_t net, mask;
	} nets[] = {
	    {0x00000000, 0xff000000}, /* 0/8 "this network" */
	    {0x0a000000, 0xff000000}, /* 10/8 */
	    {0x64400000, 0xffc00000}, /* 100.64/10 CGNAT */
	    {0x7f000000, 0xff000000}, /* 127/8 loopback */
	    {0xa9fe0000, 0xffff0000}, /* 169.254/16 link-local, metadata */
	    {0xac100000, 0xfff00000}, /* 172.16/12 */
	    {0xc0000000, 0xffffff00}, /* 192.0.0/24 */
	    {0xc0a80000, 0xffff0000}, /* 192.168/16 */
	    {0xc6120000, 0xfffe0000}, /* 198.18/15 benchmarking */
	    {0xe0000000, 0xe0000000}, /* 224/3 multicast, reserved */
	};

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if ((x & nets[i].mask) == nets[i].net)
			return true;
	return false;
}

static bool
v6_blocked(const unsigned char *a)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
	                                         0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
	static const unsigned char zero[16] = {0};

	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return v4_blocked(a + 12);
	if (memcmp(a, zero, 15) == 0) /* :: and ::1 */
		return true;
	return (a[0] & 0xfe) == 0xfc ||                /* fc00::/7 ULA */
	       (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) /* fe80::/10 */
	       || a[0] == 0xff;                        /* multicast */
}

/* host (no brackets, no port) of an http(s) URL, into out. */
static void
url_host(const char *url, char *out, size_t len)
{
	char auth[300];
	char *rb;

	gitws_url_authority(url, auth, sizeof(auth));
	if (auth[0] == '[') {
		rb = strchr(auth, ']');
		snprintf(out, len, "%.*s", rb ? (int)(rb - auth - 1) : 0,
		         auth + 1);
		return;
	}
	auth[strcspn(auth, ":")] = '\0';
	snprintf(out, len, "%s", auth);
}

/* "addr host" lines for /etc/hosts, of the approved addresses. */
static void
hosts_add(char *hosts, size_t len, const char *addr, const char *host)
{
	size_t n = strlen(hosts);

	if (n < len)
		snprintf(hosts + n, len - n, "%s %s\n", addr, host);
}

/* A name that can stand in /etc/hosts: no blanks, controls or '#'. */
static bool
plain_name(const char *host)
{
	for (const unsigned char *p = (const unsigned char *)host; *p; p++)
		if (*p <= ' ' || *p == '#' || *p >= 0x7f)
			return false;
	return true;
}

int
gitws_host_resolve(const char *flag, const char *url, bool allow_private,
                   bool allow_loopback, char *hosts, size_t hosts_len,
                   struct jv **out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	char host[300], addr[INET6_ADDRSTRLEN], msg[512];
	int rc;

	if (hosts_len)
		hosts[0] = '\0';
	url_host(url, host, sizeof(host));
	if (host[0] == '\0' || !plain_name(host)) {
		*out = gitws_failure(flag, "clone_failed",
		                     host[0] ? "the URL's host is not a name"
		                             : "the URL has no host",
		                     NULL);
		return 0;
	}
	if ((rc = getaddrinfo(host, NULL, &hints, &res)) != 0) {
		snprintf(msg, sizeof(msg), "cannot resolve %s: %s", host,
		         gai_strerror(rc));
		*out = gitws_failure(flag, "unreachable", msg, NULL);
		return 0;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		bool bad = false;

		addr[0] = '\0';
		if (ai->ai_family == AF_INET) {
			struct sockaddr_in *s = (void *)ai->ai_addr;

			bad = v4_blocked((unsigned char *)&s->sin_addr) &&
			      !(allow_loopback &&
			        ((unsigned char *)&s->sin_addr)[0] == 127);
			inet_ntop(AF_INET, &s->sin_addr, addr, sizeof(addr));
		} else if (ai->ai_family == AF_INET6) {
			struct sockaddr_in6 *s = (void *)ai->ai_addr;

			bad = v6_blocked(s->sin6_addr.s6_addr) &&
			      !(allow_loopback &&
			        IN6_IS_ADDR_LOOPBACK(&s->sin6_addr));
			inet_ntop(AF_INET6, &s->sin6_addr, addr, sizeof(addr));
		}
		if (bad && !allow_private) {
			snprintf(msg, sizeof(msg),
			         "%s resolves to %s, a loopback, private or "
			         "reserved address; set "
			         "SANDBOXD_GIT_ALLOW_PRIVATE_HOSTS=true to "
			         "allow hosts on your own network",
			         host, addr);
			freeaddrinfo(res);
			*out = gitws_failure(flag, "blocked_host", msg, NULL);
			return 0;
		}
		if (addr[0] && hosts_len)
			hosts_add(hosts, hosts_len, addr, host);
	}
	freeaddrinfo(res);
	return 1;
}

int
gitws_host_check(const char *flag, const char *url, bool allow_private,
                 bool allow_loopback, struct jv **out)
{
	return gitws_host_resolve(flag, url, allow_private, allow_loopback,
	                          NULL, 0, out);
}
