/*
 * Custom domains inside publish/ (domain.c, verify.c, traefik.c): the
 * pure checks the unit tests drive, the DNS and HTTP verification and
 * the Traefik file.  The public side (add, remove, verify, the pass,
 * the edge's token answer) is in publish.h.
 */
#ifndef PUBLISH_DOMAIN_H
#define PUBLISH_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "store/store.h"

#define DOMAIN_MAX_PER_APP    20   /* custom domains one app may have */
#define DOMAIN_PENDING_MAX    1024 /* pending domains the edge answers for */
#define DOMAIN_ADDRS_MAX      8    /* addresses a name's answer keeps */
#define DOMAIN_CNAME_DEPTH    8    /* CNAMEs followed before giving up */
#define DOMAIN_DNS_TIMEOUT_S  2    /* one DNS query's wait, per try */
#define DOMAIN_DNS_TRIES      2    /* tries of one query */
#define DOMAIN_HTTP_TIMEOUT_S 5    /* the HTTP check, whole */
#define DOMAIN_HTTP_BODY_MAX  256  /* the HTTP check's answer, bytes read */
#define DOMAIN_TOKEN_HEX      32   /* a token's length (hex) */

/* The names a custom domain may not take: the instance's own. */
struct domain_names {
	const char *preview_domain; /* PREVIEW_DOMAIN */
	const char *publish_domain; /* the effective PUBLISH_DOMAIN */
};

/*
 * in as a custom domain's host into out (lower case, no trailing dot):
 * 0, or -1 with 400 invalid_request saying why (not a DNS name, an IP
 * literal, localhost, the console's or a preview's host, a name under
 * PUBLISH_DOMAIN).  Pure.
 */
int domain_host_check(const struct domain_names *n, const char *in,
                      char out[DOMAIN_HOST_MAX + 1], struct err *e);

/* What a name resolves to (verify.c). */
enum domain_dns_status {
	DOMAIN_DNS_OK,       /* addresses found */
	DOMAIN_DNS_NXDOMAIN, /* the name does not exist */
	DOMAIN_DNS_NODATA,   /* it exists, without A or AAAA records */
	DOMAIN_DNS_FAIL,     /* no answer: timeout, SERVFAIL, refused */
};
struct domain_dns {
	enum domain_dns_status status;
	char addrs[DOMAIN_ADDRS_MAX][46]; /* the A and AAAA answers, text */
	int naddrs;
	char cname[DOMAIN_HOST_MAX + 1]; /* the chain's last name, or "" */
	char err[128];                   /* FAIL: what the resolver said */
};
/*
 * Resolves host's A and AAAA records through the resolver of cfg
 * (SANDBOXD_DNS_RESOLVER, else the system's), following CNAMEs up to
 * DOMAIN_CNAME_DEPTH, each query bounded by DOMAIN_DNS_TIMEOUT_S.
 * Blocks: API threads and the periodic pass only.
 */
void domain_resolve(const struct config *cfg, const char *host,
                    struct domain_dns *out);

/*
 * The records of one DNS answer (msg, len bytes, hostile): the
 * addresses of type (1 A, 28 AAAA) of the names of the chain from name
 * added to out (at most DOMAIN_ADDRS_MAX, no repeats), and the chain's
 * last name left in name (a CNAME's target, when the answer has no
 * address for it).  Returns the addresses found.  Pure.
 */
int domain_dns_parse(const unsigned char *msg, int len, int type, char *name,
                     size_t namelen, struct domain_dns *out);

/* This server's addresses: SANDBOXD_PUBLIC_ADDRS, else the interfaces'
 * (loopback and link-local left out; public IPv4 first, then public
 * IPv6, private IPv4, the rest).  Returns how many (<= max). */
int domain_public_addrs(const struct config *cfg, char (*out)[46], int max);

/*
 * The HTTP check: GET http://<addr>:<port>/.well-known/sandboxd-domain/
 * <token> with "Host: <host>"; true when the answer is 200 with the
 * token's answer as its body.  Loopback, link-local and unspecified
 * addresses are never asked.  why says what came back otherwise.
 */
bool domain_http_check(const struct config *cfg, const char *host,
                       const char *addr, const char *token, char *why,
                       size_t whylen);

/*
 * The verdict on d (pure): true when every address is one of ours
 * (naddrs_ours of them in ours), or the chain ends at app_host.  Else
 * reason says what is missing, with the records to create.
 */
bool domain_dns_verdict(const char *host, const struct domain_dns *d,
                        const char (*ours)[46], int nours, const char *app_host,
                        char *reason, size_t len);

/* How Traefik's routers of the verified hosts read. */
struct domain_traefik {
	const char *entrypoint; /* "websecure" (TLS), else PREVIEW_ENTRYPOINT */
	const char *resolver;   /* the HTTP-01 resolver; NULL: no tls block */
	const char *edge_url;   /* the edge, "http://127.0.0.1:8480" */
};
/*
 * The Traefik dynamic configuration of the verified hosts (traefik.c):
 * a router per host (rule Host(`host`), t's entrypoint and resolver),
 * all to the service "sandboxd-domains-edge" at t->edge_url.  Pure.  -1
 * when it does not fit b's cap.
 */
int domain_traefik_render(struct buf *b, const char *const *hosts, int n,
                          const struct domain_traefik *t);
/*
 * Writes <dir>/sandboxd-domains.yml from hosts atomically (a temporary
 * file, fsync, rename): Traefik's file provider never reads half of it.
 * dir "" writes nothing.  0, or -1 (logged).
 */
int domain_traefik_write(const struct config *cfg, const char *const *hosts,
                         int n);

#endif
