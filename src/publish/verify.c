/*
 * verify: whether a custom domain points at this server (domain.h).
 *
 * DNS: the name's A records through libresolv's res_nquery on a
 * resolver state of the calling thread's own (res_ninit), pointed at
 * SANDBOXD_DNS_RESOLVER when it is set, each query bounded by
 * DOMAIN_DNS_TIMEOUT_S and DOMAIN_DNS_TRIES; a CNAME without the
 * target's addresses in the same answer is followed by a query of its
 * own, at most DOMAIN_CNAME_DEPTH deep.  AAAA records are asked of the
 * chain's last name.  Every answer is hostile: ns_initparse checks its
 * bounds, a name that does not expand is dropped, at most
 * DOMAIN_ADDRS_MAX addresses are kept.
 *
 * HTTP: the check goes to an address the name resolved to (the same
 * resolver as the DNS check, so a test's network answers both) with
 * the custom host in the Host header, through net/http, with a whole
 * timeout and a bounded body.  Addresses that would reach this machine
 * whatever the name says (loopback, unspecified, link-local) are never
 * asked: a domain pointed at 127.0.0.1 would otherwise pass.
 *
 * Everything here blocks: the API's threads and the periodic pass call
 * it, never the edge's loop.  Rejected: getaddrinfo (no CNAME chain,
 * no NXDOMAIN versus no-data, and the system's resolver only).
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/num.h"
#include "net/http.h"
#include "publish/domain.h"

#define DNS_MSG_MAX 4096 /* an answer's bytes read (UDP, EDNS-sized) */

/* The resolver state of cfg, on the caller's stack. */
static int
resolver_open(const struct config *cfg, res_state st)
{
	char ip[INET_ADDRSTRLEN];
	const char *colon;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	size_t n;

	memset(st, 0, sizeof(*st));
	if (res_ninit(st) != 0)
		return -1;
	st->retrans = DOMAIN_DNS_TIMEOUT_S;
	st->retry = DOMAIN_DNS_TRIES;
	st->options &= ~(unsigned long)(RES_DNSRCH | RES_DEFNAMES);
	if (cfg->dns_resolver[0] == '\0')
		return 0;
	colon = strchr(cfg->dns_resolver, ':');
	n = colon ? (size_t)(colon - cfg->dns_resolver)
	          : strlen(cfg->dns_resolver);
	if (n >= sizeof(ip)) {
		res_nclose(st);
		return -1;
	}
	memcpy(ip, cfg->dns_resolver, n);
	ip[n] = '\0';
	if (colon)
		sa.sin_port = htons((uint16_t)num_long(colon + 1, 53));
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
		res_nclose(st);
		return -1;
	}
	st->nsaddr_list[0] = sa;
	st->nscount = 1;
	return 0;
}

static void
add_addr(struct domain_dns *out, int af, const unsigned char *rd)
{
	char txt[46];

	if (out->naddrs >= DOMAIN_ADDRS_MAX ||
	    !inet_ntop(af, rd, txt, sizeof(txt)))
		return;
	for (int i = 0; i < out->naddrs; i++)
		if (strcmp(out->addrs[i], txt) == 0)
			return;
	snprintf(out->addrs[out->naddrs++], sizeof(out->addrs[0]), "%s", txt);
}

int
domain_dns_parse(const unsigned char *msg, int len, int type, char *name,
                 size_t namelen, struct domain_dns *out)
{
	ns_msg h;
	ns_rr rr;
	int found = 0, count;

	if (ns_initparse(msg, len, &h) < 0)
		return 0;
	count = ns_msg_count(h, ns_s_an);
	/* A chain's records may come in any order: one pass per link. */
	for (int pass = 0; pass <= DOMAIN_CNAME_DEPTH; pass++) {
		bool moved = false;
		for (int i = 0; i < count; i++) {
			char target[NS_MAXDNAME];
			if (ns_parserr(&h, ns_s_an, i, &rr) < 0 ||
			    strcasecmp(ns_rr_name(rr), name) != 0)
				continue;
			if ((int)ns_rr_type(rr) == type &&
			    ns_rr_rdlen(rr) == (type == ns_t_a ? 4 : 16)) {
				add_addr(out,
				         type == ns_t_a ? AF_INET : AF_INET6,
				         ns_rr_rdata(rr));
				found++;
			} else if (ns_rr_type(rr) == ns_t_cname &&
			           ns_name_uncompress(ns_msg_base(h),
			                              ns_msg_end(h),
			                              ns_rr_rdata(rr), target,
			                              sizeof(target)) > 0 &&
			           strlen(target) < namelen) {
				snprintf(name, namelen, "%s", target);
				moved = true;
			}
		}
		if (found || !moved)
			break;
	}
	return found;
}

/* One query of name (type): -1 with out's status set when it failed. */
static int
query(res_state st, const char *name, int type, unsigned char *msg,
      struct domain_dns *out)
{
	int n = res_nquery(st, name, ns_c_in, type, msg, DNS_MSG_MAX);

	if (n >= 0)
		return n;
	switch (st->res_h_errno) {
	case HOST_NOT_FOUND:
		out->status = DOMAIN_DNS_NXDOMAIN;
		break;
	case NO_DATA:
		out->status = DOMAIN_DNS_NODATA;
		break;
	default:
		out->status = DOMAIN_DNS_FAIL;
		snprintf(out->err, sizeof(out->err), "%s",
		         st->res_h_errno == TRY_AGAIN
		             ? "no answer (timeout or SERVFAIL)"
		             : "the resolver refused the query");
	}
	return -1;
}

/* The chain of A records from name; name ends as the chain's last. */
static void
resolve_a(res_state st, char *name, size_t namelen, unsigned char *msg,
          struct domain_dns *out)
{
	for (int depth = 0; depth <= DOMAIN_CNAME_DEPTH; depth++) {
		char before[NS_MAXDNAME];
		int n = query(st, name, ns_t_a, msg, out);

		if (n < 0)
			return;
		snprintf(before, sizeof(before), "%s", name);
		if (domain_dns_parse(msg, n, ns_t_a, name, namelen, out) > 0 ||
		    strcasecmp(before, name) == 0)
			return;
	}
}

void
domain_resolve(const struct config *cfg, const char *host,
               struct domain_dns *out)
{
	struct __res_state st;
	unsigned char msg[DNS_MSG_MAX];
	char name[DOMAIN_HOST_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (resolver_open(cfg, &st) < 0) {
		out->status = DOMAIN_DNS_FAIL;
		snprintf(out->err, sizeof(out->err), "no DNS resolver");
		return;
	}
	snprintf(name, sizeof(name), "%s", host);
	resolve_a(&st, name, sizeof(name), msg, out);
	if (out->status == DOMAIN_DNS_OK || out->status == DOMAIN_DNS_NODATA) {
		struct domain_dns six = {0};
		int n = query(&st, name, ns_t_aaaa, msg, &six);
		if (n >= 0 && domain_dns_parse(msg, n, ns_t_aaaa, name,
		                               sizeof(name), out) > 0)
			out->status = DOMAIN_DNS_OK;
	}
	if (out->status == DOMAIN_DNS_OK && out->naddrs == 0)
		out->status = DOMAIN_DNS_NODATA;
	if (strcasecmp(name, host) != 0)
		snprintf(out->cname, sizeof(out->cname), "%s", name);
	res_nclose(&st);
}

/*
 * How good an interface's address is to show in an A record: public
 * IPv4, public IPv6, private IPv4 (NAT, a LAN, Docker's bridges), the
 * rest (unique-local IPv6).
 */
static int
addr_rank(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t h =
		    ntohl(((const struct sockaddr_in *)(const void *)sa)
		              ->sin_addr.s_addr);
		bool private = (h >> 24) == 10 || (h >> 20) == 0xac1 ||
		               (h >> 16) == 0xc0a8 || (h >> 22) == 0x191;
		return private ? 2 : 0;
	}
	return (((const struct sockaddr_in6 *)(const void *)sa)
	            ->sin6_addr.s6_addr[0] &
	        0xe0) == 0x20
	           ? 1
	           : 3;
}

/* The interfaces' addresses of one rank into out[n..max). */
static int
ifaddrs_of_rank(const struct ifaddrs *ifs, int rank, char (*out)[46], int n,
                int max)
{
	for (const struct ifaddrs *i = ifs; i && n < max; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;
		const void *a;
		if (!sa || (i->ifa_flags & IFF_LOOPBACK) ||
		    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
			continue;
		if (sa->sa_family == AF_INET)
			a = &((const struct sockaddr_in *)(const void *)sa)
			         ->sin_addr;
		else
			a = &((const struct sockaddr_in6 *)(const void *)sa)
			         ->sin6_addr;
		if (addr_rank(sa) != rank ||
		    (sa->sa_family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(a)))
			continue;
		if (inet_ntop(sa->sa_family, a, out[n], 46))
			n++;
	}
	return n;
}

int
domain_public_addrs(const struct config *cfg, char (*out)[46], int max)
{
	char list[sizeof(cfg->public_addrs)], *save = NULL;
	struct ifaddrs *ifs;
	int n = 0;

	if (cfg->public_addrs[0]) {
		snprintf(list, sizeof(list), "%s", cfg->public_addrs);
		for (char *t = strtok_r(list, ", ", &save); t && n < max;
		     t = strtok_r(NULL, ", ", &save))
			snprintf(out[n++], 46, "%s", t);
		return n;
	}
	if (getifaddrs(&ifs) < 0)
		return 0;
	for (int rank = 0; rank < 4; rank++)
		n = ifaddrs_of_rank(ifs, rank, out, n, max);
	freeifaddrs(ifs);
	return n;
}

/* Whether addr reaches this machine whatever a name says. */
static bool
addr_local_anyway(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, addr, &a4) == 1) {
		uint32_t h = ntohl(a4.s_addr);
		return (h >> 24) == 127 || h == 0 || (h >> 16) == 0xa9fe;
	}
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       IN6_IS_ADDR_UNSPECIFIED(&a6) ||
		       IN6_IS_ADDR_LINKLOCAL(&a6) || IN6_IS_ADDR_V4MAPPED(&a6);
	return true;
}

struct body {
	char data[DOMAIN_HTTP_BODY_MAX + 1];
	size_t len;
};

static size_t
on_body(const char *p, size_t n, void *arg)
{
	struct body *b = arg;
	size_t room = DOMAIN_HTTP_BODY_MAX - b->len;

	if (n > room)
		return 0; /* more than an answer: not ours */
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return n;
}

bool
domain_http_check(const struct config *cfg, const char *host, const char *addr,
                  const char *token, char *why, size_t whylen)
{
	char url[256], hosthdr[DOMAIN_HOST_MAX + 16];
	const char *headers[] = {hosthdr, NULL};
	struct body b = {.len = 0};
	struct http_call call = {.method = "GET",
	                         .headers = headers,
	                         .connect_timeout_ms = 3000,
	                         .timeout_s = DOMAIN_HTTP_TIMEOUT_S,
	                         .on_body = on_body,
	                         .arg = &b};

	if (addr_local_anyway(addr)) {
		snprintf(why, whylen, "%s is not a public address", addr);
		return false;
	}
	snprintf(url, sizeof(url),
	         strchr(addr, ':') ? "http://[%s]:%u/.well-known/"
	                             "sandboxd-domain/%s"
	                           : "http://%s:%u/.well-known/"
	                             "sandboxd-domain/%s",
	         addr, (unsigned)cfg->verify_http_port, token);
	snprintf(hosthdr, sizeof(hosthdr), "Host: %s", host);
	call.url = url;
	if (http_perform(&call) < 0 && call.status == 0) {
		snprintf(why, whylen, "http://%s/ (%s) did not answer: %s",
		         host, addr, http_fail_words(call.fail));
		return false;
	}
	b.data[b.len] = '\0';
	while (b.len &&
	       (b.data[b.len - 1] == '\n' || b.data[b.len - 1] == '\r'))
		b.data[--b.len] = '\0';
	if (call.status == 200 && strcmp(b.data, token) == 0)
		return true;
	snprintf(why, whylen,
	         "http://%s/.well-known/sandboxd-domain/ (%s) answered %ld, "
	         "not this server's token",
	         host, addr, call.status);
	return false;
}

static bool
is_ours(const char *addr, const char (*ours)[46], int nours)
{
	for (int i = 0; i < nours; i++)
		if (strcmp(addr, ours[i]) == 0)
			return true;
	return false;
}

/* "a, b, c" of n addresses into out. */
static void
join(const char (*addrs)[46], int n, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(out + off, len - off, "%s%s",
		                        i ? ", " : "", addrs[i]);
}

bool
domain_dns_verdict(const char *host, const struct domain_dns *d,
                   const char (*ours)[46], int nours, const char *app_host,
                   char *reason, size_t len)
{
	char theirs[128], mine[128], fix[160];
	int foreign = 0;

	join(ours, nours < 2 ? nours : 2, mine, sizeof(mine));
	if (nours > 0)
		snprintf(fix, sizeof(fix), "create an A record %s \u2192 %s",
		         host, ours[0]);
	else
		snprintf(fix, sizeof(fix),
		         "create a CNAME record %s \u2192 %s (this server's "
		         "addresses are not known: set SANDBOXD_PUBLIC_ADDRS)",
		         host, app_host);
	switch (d->status) {
	case DOMAIN_DNS_NXDOMAIN:
		snprintf(reason, len, "%s does not resolve (NXDOMAIN): %s",
		         host, fix);
		return false;
	case DOMAIN_DNS_NODATA:
		snprintf(reason, len, "%s has no A or AAAA record: %s", host,
		         fix);
		return false;
	case DOMAIN_DNS_FAIL:
		snprintf(reason, len,
		         "%s could not be resolved (%s); it is checked again "
		         "later",
		         host, d->err);
		return false;
	case DOMAIN_DNS_OK:
		break;
	}
	if (app_host[0] && strcasecmp(d->cname, app_host) == 0)
		return true;
	for (int i = 0; i < d->naddrs; i++)
		foreign += !is_ours(d->addrs[i], ours, nours);
	if (foreign == 0 && d->naddrs > 0)
		return true;
	join(d->addrs, d->naddrs, theirs, sizeof(theirs));
	if (nours > 0)
		snprintf(reason, len,
		         "%s resolves to %s, not to this server (%s)", host,
		         theirs, mine);
	else
		snprintf(reason, len,
		         "%s resolves to %s; this server's addresses are not "
		         "known (set SANDBOXD_PUBLIC_ADDRS)",
		         host, theirs);
	return false;
}
