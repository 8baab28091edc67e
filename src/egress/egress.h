/*
 * egress: what a sandbox may reach, enforced with the host's packet
 * filter (nftables).  The only module that includes libnftables.
 *
 * One table per sandbox network ("inet sandboxd_<8 hex>"), owned whole by
 * the daemon that manages that network: egress_apply() replaces it in one
 * transaction, so a reader never sees half a policy.  Every rule matches
 * packets that come in on the network's bridge only; nothing else on the
 * host is touched.  Refused packets are rejected (TCP reset, ICMP
 * administratively prohibited), never dropped, so a blocked connect fails
 * at once, and each refusal counts against the sandbox's address.
 *
 * The functions may be called from any thread: each makes its own
 * libnftables context.  They run in the daemon's network namespace and
 * need CAP_NET_ADMIN there.
 */
#ifndef EGRESS_EGRESS_H
#define EGRESS_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define EGRESS_MAX_ALLOW 64 /* entries in SANDBOXD_EGRESS_ALLOW */
#define EGRESS_MAX_DNS   8  /* resolvers a sandbox may ask */
#define EGRESS_TABLE_LEN 32

enum egress_mode {
	EGRESS_PUBLIC, /* the internet, not private/special ranges or host */
	EGRESS_NONE,   /* the credential proxy only */
	EGRESS_OPEN,   /* no rules: Docker's default */
};

/* One allowed destination: an address block and an optional port range. */
struct egress_allow {
	char cidr[64]; /* normalised "a.b.c.d/n" or "x::/n" */
	bool v6;
	uint16_t port_lo, port_hi; /* 0, 0: every port */
};

struct egress_policy {
	enum egress_mode mode;
	const char *table;      /* egress_table_name() */
	const char *bridge;     /* the network's Linux bridge */
	const char *proxy_addr; /* where the credential proxy listens */
	uint16_t proxy_port;
	const struct egress_allow *allow;
	size_t nallow;
	const char *dns[EGRESS_MAX_DNS]; /* resolvers (port 53), NULL-ended */
	/* NULL (one server): no cluster sets.  Else NULL-ended addresses
	 * (maybe none) of the control plane and every node: refused to the
	 * sandboxes whatever the mode, "open" included, before the
	 * allow-list. */
	const char *const *cluster;
};

/* "public" "none" "open"; -1 for anything else. */
int egress_mode_parse(const char *s);
const char *egress_mode_name(enum egress_mode m);

/*
 * Parses SANDBOXD_EGRESS_ALLOW: entries separated by commas (and
 * spaces), each an IPv4/IPv6 address or CIDR with an optional ":PORT" or
 * ":LO-HI" (IPv6 in brackets when a port follows: "[fd00::1]:5432").
 * Returns 0, or -1 with a message naming the bad entry.
 */
int egress_allow_parse(const char *text, struct egress_allow *out, size_t max,
                       size_t *n, char *err, size_t errlen);

/* The table for a network: "sandboxd_" and 8 hex of the name's hash. */
void egress_table_name(const char *network, char out[EGRESS_TABLE_LEN]);

/*
 * The nft script egress_apply() runs (also for `sandboxd network show`):
 * fresh replaces the table whole; otherwise everything is made anew but
 * the refusal counters.
 */
int egress_ruleset(const struct egress_policy *p, bool fresh, struct buf *out);

/* Replaces the table with p's rules (open: removes it).  0 or -1 + err. */
int egress_apply(const struct egress_policy *p, char *err, size_t errlen);
/* Removes the table; 0 also when there is none. */
int egress_remove(const char *table, char *err, size_t errlen);
bool egress_installed(const char *table);

/*
 * Replaces the elements of the table's cluster sets (made by an apply
 * with a cluster list) with addrs (NULL-ended addresses or CIDRs, at most
 * EGRESS_MAX_CLUSTER), in one transaction.  0 or -1 + err (a bad address
 * changes nothing).
 */
#define EGRESS_MAX_CLUSTER 256
int egress_cluster_set(const char *table, const char *const *addrs, char *err,
                       size_t errlen);

/* Refusals counted for one sandbox address (ip NULL: all of them, for
 * as long as each address has been counted); -1 when unknown. */
int64_t egress_blocked(const char *table, const char *ip);
/* Forgets an address's count (its new container starts from zero). */
void egress_reset(const char *table, const char *ip);

#endif
