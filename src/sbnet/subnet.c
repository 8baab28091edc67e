/*
 * The sandbox network's subnet and names (sbnet.h, internal.h): a /20
 * that collides with no route of the host and no Docker network, its
 * first address as the gateway, and the bridge's name from the
 * network's (the same hash as the egress table's).  Shared by the
 * single-host network (sbnet.c) and swarm mode's (sbswarm.c).
 */
#include "sbnet/sbnet.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbnet/internal.h"

#define SBNET_MAX_TAKEN 256

int
sbnet_cidr_parse(const char *s, struct sbnet_cidr *out)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	struct in_addr a;
	int bits = 32;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	snprintf(addr, sizeof(addr), "%.*s", (int)(slash - s), s);
	if (inet_pton(AF_INET, addr, &a) != 1 ||
	    sscanf(slash + 1, "%d", &bits) != 1 || bits < 0 || bits > 32)
		return -1;
	out->mask = bits ? ~0u << (32 - bits) : 0;
	out->net = ntohl(a.s_addr) & out->mask;
	return 0;
}

static bool
overlaps(struct sbnet_cidr a, struct sbnet_cidr b)
{
	uint32_t m = a.mask & b.mask;

	return (a.net & m) == (b.net & m);
}

/*
 * Candidates: /20s of 10.213.0.0/16, then of 172.29.0.0/16, then /24s of
 * 192.168.213.0 upwards: ranges that Docker's own address pools and the
 * usual home and cloud networks leave alone.
 */
int
sbnet_pick_subnet(const struct sbnet_cidr *taken, size_t n, char *out,
                  size_t len)
{
	static const struct {
		uint32_t base;
		int bits, count, step_bits;
	} pools[] = {
	    {0x0ad50000u, 20, 16, 20}, /* 10.213.0.0/16 */
	    {0xac1d0000u, 20, 16, 20}, /* 172.29.0.0/16 */
	    {0xc0a8d500u, 24, 32, 24}, /* 192.168.213.0 … 192.168.244.0 */
	};

	for (size_t p = 0; p < sizeof(pools) / sizeof(pools[0]); p++) {
		for (int i = 0; i < pools[p].count; i++) {
			struct sbnet_cidr c = {
			    pools[p].base +
			        ((uint32_t)i << (32 - pools[p].step_bits)),
			    ~0u << (32 - pools[p].bits)};
			bool free_ = true;
			for (size_t k = 0; k < n && free_; k++)
				free_ = !overlaps(c, taken[k]);
			if (!free_)
				continue;
			snprintf(out, len, "%u.%u.%u.%u/%d", c.net >> 24,
			         (c.net >> 16) & 0xff, (c.net >> 8) & 0xff,
			         c.net & 0xff, pools[p].bits);
			return 0;
		}
	}
	return -1;
}

struct taken {
	struct sbnet_cidr c[SBNET_MAX_TAKEN];
	size_t n;
};

static void
take(struct taken *t, struct sbnet_cidr c)
{
	if (t->n < SBNET_MAX_TAKEN)
		t->c[t->n++] = c;
}

static void
take_docker(const char *cidr, void *arg)
{
	struct sbnet_cidr c;

	if (sbnet_cidr_parse(cidr, &c) == 0)
		take(arg, c);
}

/*
 * The host's routes (all but the default) and its own addresses, except
 * those of our own bridge: a network recreated after dockerd lost its
 * state gets its old subnet back while the old link still has it.
 */
static void
take_host(struct taken *t, const char *own)
{
	FILE *f = fopen("/proc/net/route", "re");
	struct ifaddrs *ifs = NULL;
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		unsigned dst, gw, flags, refs, use, metric, mask;
		char ifn[32];
		if (sscanf(line, "%31s %x %x %x %u %u %u %x", ifn, &dst, &gw,
		           &flags, &refs, &use, &metric, &mask) == 8 &&
		    mask != 0 && strcmp(ifn, own) != 0)
			take(t, (struct sbnet_cidr){ntohl(dst) & ntohl(mask),
			                            ntohl(mask)});
	}
	if (f)
		fclose(f);
	if (getifaddrs(&ifs) < 0)
		return;
	for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, own) != 0)
			take(t, (struct sbnet_cidr){
			            ntohl(((struct sockaddr_in *)i->ifa_addr)
			                      ->sin_addr.s_addr),
			            ~0u});
	freeifaddrs(ifs);
}

int
sbnet_choose_subnet(struct sbnet *net, char *out, size_t len, char *err,
                    size_t elen)
{
	struct taken *t = calloc(1, sizeof(*t));
	char msg[DOCKER_MSG_LEN], br[16];
	int rc = -1;

	if (t == NULL)
		return -1;
	if (net->cfg->subnet[0]) {
		snprintf(out, len, "%s", net->cfg->subnet);
		free(t);
		return 0;
	}
	sbnet_bridge_name(net->name, br);
	take_host(t, br);
	if (docker_network_subnets(net->docker, take_docker, t, msg) !=
	    DOCKER_OK)
		snprintf(err, elen, "%s", msg);
	else if ((rc = sbnet_pick_subnet(t->c, t->n, out, len)) < 0)
		snprintf(err, elen,
		         "no free subnet for the sandbox network (every "
		         "candidate overlaps a route or a Docker network); "
		         "set SANDBOXD_SUBNET");
	free(t);
	return rc;
}

/* The subnet's first address: what Docker gives the bridge by default. */
void
sbnet_first_address(const char *subnet, char *out, size_t len)
{
	struct sbnet_cidr c;

	out[0] = '\0';
	if (sbnet_cidr_parse(subnet, &c) == 0 && c.mask != ~0u) {
		uint32_t a = c.net + 1;
		snprintf(out, len, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff,
		         (a >> 8) & 0xff, a & 0xff);
	}
}

void
sbnet_bridge_name(const char *network, char out[16])
{
	char table[EGRESS_TABLE_LEN];

	/* The same hash as the table's name: sandboxd_<8 hex>. */
	egress_table_name(network, table);
	snprintf(out, 16, "sbx-%s", table + strlen("sandboxd_"));
}
