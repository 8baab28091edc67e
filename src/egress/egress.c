/*
 * The sandbox egress policy as an nftables table (see egress.h).
 *
 * Two base chains, both at priority filter - 10 so they run before
 * Docker's own (iptables-nft "ip filter" at 0, or the legacy tables):
 *
 *   forward: a sandbox's packets to anywhere but the host.  Replies of
 *            established flows pass; the allow-list and the host's DNS
 *            resolvers pass; other sandboxes on the bridge are refused;
 *            then "public" refuses the private and special ranges and
 *            "none" refuses everything.
 *   input:   a sandbox's packets to any address of the host itself.  Only
 *            replies, the credential proxy's port and allow-listed
 *            destinations pass.
 *
 * An accept (here: return) in our chain does not accept the packet for
 * the host: later chains (Docker's, the operator's firewall) still see
 * it, so we only ever narrow what passes, never widen it.  A refusal
 * records the source address in a dynamic set with a counter, which is
 * how a sandbox's refusals are counted without a rule per sandbox.
 *
 * Why nftables and not iptables rules in DOCKER-USER: Docker flushes and
 * rewrites its own chains on every restart, and the iptables binaries
 * differ between hosts (legacy vs nft); a table of our own in the nft
 * ruleset is left alone by dockerd, is replaced atomically, and works
 * beside either iptables backend.
 */
#include "egress/egress.h"

#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/jv.h"
#include "lib/log.h"

/* Destinations "public" refuses: nothing here is on the internet. */
static const char *const blocked4[] = {
    "0.0.0.0/8",       /* this network */
    "10.0.0.0/8",      /* RFC 1918 */
    "100.64.0.0/10",   /* carrier-grade NAT (and Alibaba's metadata) */
    "127.0.0.0/8",     /* loopback */
    "169.254.0.0/16",  /* link-local: cloud metadata */
    "172.16.0.0/12",   /* RFC 1918 */
    "192.0.0.0/24",    /* IETF protocol assignments (Oracle metadata) */
    "192.0.2.0/24",    /* documentation */
    "192.88.99.0/24",  /* 6to4 relay */
    "192.168.0.0/16",  /* RFC 1918 */
    "198.18.0.0/15",   /* benchmarking */
    "198.51.100.0/24", /* documentation */
    "203.0.113.0/24",  /* documentation */
    "224.0.0.0/4",     /* multicast */
    "240.0.0.0/4",     /* reserved, broadcast */
    "168.63.129.16",   /* Azure's host endpoint */
    NULL,
};

static const char *const blocked6[] = {
    "::/127",         /* unspecified, loopback */
    "::ffff:0:0/96",  /* IPv4-mapped */
    "64:ff9b:1::/48", /* local-use NAT64 */
    "100::/64",       /* discard */
    "2001:db8::/32",  /* documentation */
    "fc00::/7",       /* unique local (AWS metadata: fd00:ec2::254) */
    "fe80::/10",      /* link-local */
    "ff00::/8",       /* multicast */
    NULL,
};

int
egress_mode_parse(const char *s)
{
	if (strcmp(s, "public") == 0)
		return EGRESS_PUBLIC;
	if (strcmp(s, "none") == 0)
		return EGRESS_NONE;
	if (strcmp(s, "open") == 0)
		return EGRESS_OPEN;
	return -1;
}

const char *
egress_mode_name(enum egress_mode m)
{
	return m == EGRESS_NONE ? "none" : m == EGRESS_OPEN ? "open" : "public";
}

/* ---- the allow-list ---------------------------------------------------- */

static int
parse_port(const char *s, uint16_t *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static int
parse_ports(char *s, struct egress_allow *a)
{
	char *dash = strchr(s, '-');

	if (dash)
		*dash = '\0';
	if (parse_port(s, &a->port_lo) < 0)
		return -1;
	a->port_hi = a->port_lo;
	if (dash && parse_port(dash + 1, &a->port_hi) < 0)
		return -1;
	return a->port_hi < a->port_lo ? -1 : 0;
}

/* "addr[/n]" into a normalised CIDR (host bits cleared). */
static int
parse_cidr(char *s, struct egress_allow *a)
{
	unsigned char bin[16];
	char *slash = strchr(s, '/'), *end;
	long bits;
	int fam, max;

	if (slash)
		*slash = '\0';
	fam = strchr(s, ':') ? AF_INET6 : AF_INET;
	max = fam == AF_INET6 ? 128 : 32;
	if (inet_pton(fam, s, bin) != 1)
		return -1;
	bits = max;
	if (slash) {
		bits = strtol(slash + 1, &end, 10);
		if (slash[1] == '\0' || *end || bits < 0 || bits > max)
			return -1;
	}
	for (int i = 0; i < max / 8; i++) {
		int keep = (int)bits - i * 8;
		bin[i] &= keep >= 8   ? 0xff
		          : keep <= 0 ? 0
		                      : (unsigned char)(0xff << (8 - keep));
	}
	a->v6 = fam == AF_INET6;
	if (inet_ntop(fam, bin, a->cidr, sizeof(a->cidr)) == NULL)
		return -1;
	snprintf(a->cidr + strlen(a->cidr), sizeof(a->cidr) - strlen(a->cidr),
	         "/%ld", bits);
	return 0;
}

static int
parse_entry(char *s, struct egress_allow *a)
{
	char *port = NULL;

	memset(a, 0, sizeof(*a));
	if (*s == '[') { /* [v6]:port */
		char *close = strchr(s, ']');
		if (close == NULL || (close[1] && close[1] != ':'))
			return -1;
		*close = '\0';
		port = close[1] ? close + 2 : NULL;
		s++;
	} else if (strchr(s, ':') == strrchr(s, ':') && strchr(s, ':')) {
		port = strchr(s, ':'); /* v4:port */
		*port++ = '\0';
	}
	if (parse_cidr(s, a) < 0)
		return -1;
	return port ? parse_ports(port, a) : 0;
}

int
egress_allow_parse(const char *text, struct egress_allow *out, size_t max,
                   size_t *n, char *err, size_t errlen)
{
	char copy[4096], *save = NULL, *tok;

	*n = 0;
	if (strlen(text) >= sizeof(copy)) {
		snprintf(err, errlen, "longer than %zu characters",
		         sizeof(copy) - 1);
		return -1;
	}
	snprintf(copy, sizeof(copy), "%s", text);
	for (tok = strtok_r(copy, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		char entry[128];
		snprintf(entry, sizeof(entry), "%s", tok);
		if (*n == max) {
			snprintf(err, errlen, "more than %zu entries", max);
			return -1;
		}
		if (parse_entry(tok, &out[*n]) < 0) {
			snprintf(
			    err, errlen,
			    "\"%.64s\" is not ADDRESS[/BITS][:PORT[-PORT]] "
			    "(IPv6 with a port: [ADDRESS]:PORT)",
			    entry);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

void
egress_table_name(const char *network, char out[EGRESS_TABLE_LEN])
{
	snprintf(out, EGRESS_TABLE_LEN, "sandboxd_%08x", hash_fnv1a(network));
}

/* ---- the ruleset --------------------------------------------------------- */

static void put(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
put(struct buf *b, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0)
		buf_append(b, line,
		           (size_t)n < sizeof(line) ? (size_t)n
		                                    : sizeof(line) - 1);
}

static void
put_set(struct buf *b, const char *name, const char *type,
        const char *const *items)
{
	put(b, "\tset %s {\n\t\ttype %s; flags interval;\n\t\telements = { ",
	    name, type);
	for (size_t i = 0; items[i]; i++)
		put(b, "%s%s", i ? ", " : "", items[i]);
	put(b, " }\n\t}\n");
}

static void
put_allow(struct buf *b, const struct egress_policy *p)
{
	for (size_t i = 0; i < p->nallow; i++) {
		const struct egress_allow *a = &p->allow[i];
		put(b, "\t\t%s daddr %s", a->v6 ? "ip6" : "ip", a->cidr);
		if (a->port_lo == a->port_hi && a->port_lo)
			put(b, " meta l4proto { tcp, udp } th dport %u",
			    a->port_lo);
		else if (a->port_lo)
			put(b, " meta l4proto { tcp, udp } th dport %u-%u",
			    a->port_lo, a->port_hi);
		put(b, " return\n");
	}
}

/*
 * The cluster's addresses of one family as set elements ("a, b"), each
 * checked and normalised (they are never pasted into the script as
 * given); -1 for a bad one or too many.
 */
static int
put_cluster_elems(struct buf *b, const char *const *addrs, bool v6, size_t *n)
{
	*n = 0;
	for (size_t i = 0; addrs[i]; i++) {
		struct egress_allow a;
		char copy[64];
		if (i >= EGRESS_MAX_CLUSTER || strlen(addrs[i]) >= sizeof(copy))
			return -1;
		snprintf(copy, sizeof(copy), "%s", addrs[i]);
		if (parse_cidr(copy, &a) < 0)
			return -1;
		if (a.v6 == v6)
			put(b, "%s%s", (*n)++ ? ", " : "", a.cidr);
	}
	return 0;
}

static int
put_cluster_sets(struct buf *b, const char *const *addrs)
{
	static const char *const type[2] = {"ipv4_addr", "ipv6_addr"};
	size_t n;

	for (int v6 = 0; v6 < 2; v6++) {
		put(b,
		    "\tset cluster%d {\n\t\ttype %s; flags interval; "
		    "auto-merge;\n",
		    v6 ? 6 : 4, type[v6]);
		size_t mark = b->len;
		put(b, "\t\telements = { ");
		if (put_cluster_elems(b, addrs, v6, &n) < 0)
			return -1;
		if (n == 0) {
			b->len = mark;
			b->data[mark] = '\0';
		} else {
			put(b, " }\n");
		}
		put(b, "\t}\n");
	}
	return 0;
}

static void
put_cluster_refuse(struct buf *b, const struct egress_policy *p)
{
	if (p->cluster)
		put(b, "\t\tip daddr @cluster4 goto refuse\n\t\tip6 daddr "
		       "@cluster6 goto refuse\n");
}

/* Before a re-apply: the cluster sets exist (made empty when the
 * table is older than them) and are emptied. */
static void
put_cluster_flush(struct buf *b, const char *t)
{
	put(b,
	    "table inet %s {\n\tset cluster4 { type ipv4_addr; flags "
	    "interval; auto-merge; }\n\tset cluster6 { type ipv6_addr; "
	    "flags interval; auto-merge; }\n}\nflush set inet %s "
	    "cluster4\nflush set inet %s cluster6\n",
	    t, t, t);
}

int
egress_ruleset(const struct egress_policy *p, bool fresh, struct buf *b)
{
	const char *t = p->table, *br = p->bridge;
	bool open = p->mode == EGRESS_OPEN;

	if (fresh || (open && p->cluster == NULL)) {
		put(b, "table inet %s { }\ndelete table inet %s\n", t, t);
		if (open && p->cluster == NULL)
			return b->len ? 0 : -1;
	} else {
		/* Everything but the refusal counters is made anew. */
		put(b,
		    "table inet %s {\n\tset blocked4 { type ipv4_addr; flags "
		    "interval; }\n\tset blocked6 { type ipv6_addr; flags "
		    "interval; }\n\tset refused { type ipv4_addr; size 65535; "
		    "flags dynamic; counter; }\n}\nflush table inet %s\nflush "
		    "set inet %s blocked4\nflush set inet %s blocked6\n",
		    t, t, t, t);
		if (p->cluster)
			put_cluster_flush(b, t);
	}
	put(b, "table inet %s {\n", t);
	put_set(b, "blocked4", "ipv4_addr", blocked4);
	put_set(b, "blocked6", "ipv6_addr", blocked6);
	put(b, "\tset refused {\n\t\ttype ipv4_addr; size 65535; "
	       "flags dynamic; counter;\n\t}\n");
	if (p->cluster && put_cluster_sets(b, p->cluster) < 0)
		return -1;
	put(b,
	    "\tchain forward {\n\t\ttype filter hook forward priority "
	    "filter - 10; policy accept;\n\t\tiifname \"%s\" jump "
	    "from_sandbox\n\t}\n",
	    br);
	put(b,
	    "\tchain input {\n\t\ttype filter hook input priority "
	    "filter - 10; policy accept;\n\t\tiifname \"%s\" jump "
	    "to_host\n\t}\n",
	    br);
	put(b, "\tchain from_sandbox {\n\t\tct state established,related "
	       "return\n");
	put_cluster_refuse(b, p);
	if (open) {
		put(b, "\t}\n\tchain to_host {\n\t\tct state "
		       "established,related return\n");
		put_cluster_refuse(b, p);
		goto refuse;
	}
	put_allow(b, p);
	for (size_t i = 0;
	     p->mode == EGRESS_PUBLIC && i < EGRESS_MAX_DNS && p->dns[i]; i++)
		put(b,
		    "\t\t%s daddr %s meta l4proto { tcp, udp } th dport 53 "
		    "return\n",
		    strchr(p->dns[i], ':') ? "ip6" : "ip", p->dns[i]);
	put(b, "\t\toifname \"%s\" goto refuse\n", br);
	if (p->mode == EGRESS_PUBLIC)
		put(b, "\t\tip daddr @blocked4 goto refuse\n\t\tip6 daddr "
		       "@blocked6 goto refuse\n");
	else
		put(b, "\t\tgoto refuse\n");
	put(b,
	    "\t}\n\tchain to_host {\n\t\tct state established,related "
	    "return\n\t\tip daddr %s tcp dport %u return\n",
	    p->proxy_addr, p->proxy_port);
	put_cluster_refuse(b, p);
	put_allow(b, p);
	put(b, "\t\tgoto refuse\n");
refuse:
	put(b, "\t}\n\tchain refuse {\n\t\tmeta nfproto ipv4 update @refused "
	       "{ ip saddr counter }\n\t\tmeta l4proto tcp reject with tcp "
	       "reset\n\t\treject with icmpx type admin-prohibited\n\t}\n}\n");
	return 0;
}

/* ---- running nft --------------------------------------------------------- */

/* Runs a script; *out (if wanted) gets a copy of the output. */
static int
run(const char *script, bool json, char **out, char *err, size_t errlen)
{
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int rc;

	if (nft == NULL) {
		snprintf(err, errlen, "nftables: cannot make a context");
		return -1;
	}
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	if (json)
		nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON);
	rc = nft_run_cmd_from_buffer(nft, script);
	if (rc != 0) {
		const char *e = nft_ctx_get_error_buffer(nft);
		snprintf(err, errlen, "nftables: %.*s",
		         (int)strcspn(e ? e : "", "\n"), e ? e : "failed");
	} else if (out) {
		*out = strdup(nft_ctx_get_output_buffer(nft));
		rc = *out ? 0 : -1;
	}
	nft_ctx_free(nft);
	return rc ? -1 : 0;
}

static int
apply(const struct egress_policy *p, bool fresh, char *err, size_t errlen)
{
	struct buf b;
	int rc;

	buf_init(&b, 1u << 16);
	if (egress_ruleset(p, fresh, &b) < 0) {
		buf_release(&b);
		snprintf(err, errlen, "the ruleset does not fit");
		return -1;
	}
	rc = run(b.data, false, NULL, err, errlen);
	buf_release(&b);
	return rc;
}

/*
 * The refusal counters survive a re-apply (a daemon restart, a changed
 * allow-list); a table that cannot be updated in place (made by another
 * version, with other set types) is replaced whole.
 */
int
egress_apply(const struct egress_policy *p, char *err, size_t errlen)
{
	if (apply(p, false, err, errlen) == 0)
		return 0;
	log_warn("egress: %s; replacing the table whole", err);
	return apply(p, true, err, errlen);
}

int
egress_remove(const char *table, char *err, size_t errlen)
{
	char script[160];

	snprintf(script, sizeof(script),
	         "table inet %s { }\ndelete table inet %s\n", table, table);
	return run(script, false, NULL, err, errlen);
}

bool
egress_installed(const char *table)
{
	char script[96], err[64];

	snprintf(script, sizeof(script), "list chain inet %s refuse\n", table);
	return run(script, false, NULL, err, sizeof(err)) == 0;
}

int64_t
egress_blocked(const char *table, const char *ip)
{
	char script[128], err[128], *out = NULL;
	struct jv *v, *items, *elems;
	int64_t n = 0;

	snprintf(script, sizeof(script), "list set inet %s refused\n", table);
	if (run(script, true, &out, err, sizeof(err)) < 0)
		return -1;
	v = jv_parse(out, strlen(out), 16, err, sizeof(err));
	free(out);
	items = jv_get(v, "nftables");
	for (size_t i = 0; i < jv_len(items); i++) {
		elems = jv_get(jv_get(jv_at(items, i), "set"), "elem");
		for (size_t k = 0; k < jv_len(elems); k++) {
			struct jv *e = jv_get(jv_at(elems, k), "elem");
			const char *val = jv_str(jv_get(e, "val"));
			if (val && (ip == NULL || strcmp(val, ip) == 0))
				n += jv_int(
				    jv_get(jv_get(e, "counter"), "packets"));
		}
	}
	if (v == NULL)
		return -1;
	jv_free(v);
	return n;
}

void
egress_reset(const char *table, const char *ip)
{
	char script[160], err[128];
	struct in_addr a;

	if (inet_pton(AF_INET, ip, &a) != 1)
		return;
	snprintf(script, sizeof(script),
	         "delete element inet %s refused { %s }\n", table, ip);
	run(script, false, NULL, err, sizeof(err)); /* absent: fine */
}

int
egress_cluster_set(const char *table, const char *const *addrs, char *err,
                   size_t errlen)
{
	struct buf b;
	size_t n;
	int rc = -1;

	buf_init(&b, 1u << 16);
	put(&b, "flush set inet %s cluster4\nflush set inet %s cluster6\n",
	    table, table);
	for (int v6 = 0; v6 < 2; v6++) {
		size_t mark = b.len;
		put(&b, "add element inet %s cluster%d { ", table, v6 ? 6 : 4);
		if (put_cluster_elems(&b, addrs, v6, &n) < 0) {
			snprintf(err, errlen,
			         "a cluster address is not an "
			         "address");
			goto out;
		}
		if (n == 0) {
			b.len = mark;
			b.data[mark] = '\0';
		} else {
			put(&b, " }\n");
		}
	}
	rc = run(b.data, false, NULL, err, errlen);
out:
	buf_release(&b);
	return rc;
}
