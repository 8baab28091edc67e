/*
 * The sandbox network on this node (decision: the same subnet, gateway
 * and bridge name on every node): the per-node config-only network
 * <net>-cfg that the manager's swarm-scoped <net> takes its
 * configuration from, and the egress table for the bridge, the same as
 * the manager's, plus the cluster sets (the control plane's and every
 * node's addresses, refused to sandboxes whatever the policy).
 *
 * The bridge exists only while a sandbox on this node uses the network:
 * the rules match it by name and need it not to exist.  The egress
 * policy (mode, allow-list) is this node's configuration, which the
 * operator keeps equal to the control plane's (docs/deploy.md).
 * agent_net_ensure runs at start and every SBNET_CHECK_S after, and puts
 * back what went missing.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress.h"
#include "lib/log.h"
#include "nodeagent/internal.h"
#include "sbnet/sbnet.h"

static bool
word_ok(const char *s, size_t max, const char *chars)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n < max && strspn(s, chars) == n;
}

#define NAME_CHARS                                                             \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"

int
agent_net_parse(const struct jv *o, struct agent_net *out, struct err *e)
{
	const char *name = jv_str(jv_get(o, "name"));
	const char *subnet = jv_str(jv_get(o, "subnet"));
	const char *gw = jv_str(jv_get(o, "gateway"));
	const char *bridge = jv_str(jv_get(o, "bridge"));
	const char *inst = jv_str(jv_get(o, "instance"));
	int64_t port = jv_int(jv_get(o, "proxy_port"));
	struct sbnet_cidr c;
	struct in_addr in;

	if (!word_ok(name, sizeof(out->name) - 4, NAME_CHARS) ||
	    !word_ok(bridge, 16, "abcdefghijklmnopqrstuvwxyz0123456789-") ||
	    !word_ok(inst, sizeof(out->instance), NAME_CHARS) ||
	    subnet == NULL || sbnet_cidr_parse(subnet, &c) < 0 || gw == NULL ||
	    inet_pton(AF_INET, gw, &in) != 1 ||
	    (ntohl(in.s_addr) & c.mask) != c.net || port < 1 || port > 65535)
		return err_set(e, 502, "internal",
		               "the control plane's network object is not one");
	snprintf(out->name, sizeof(out->name), "%s", name);
	snprintf(out->subnet, sizeof(out->subnet), "%s", subnet);
	snprintf(out->gateway, sizeof(out->gateway), "%s", gw);
	snprintf(out->bridge, sizeof(out->bridge), "%s", bridge);
	snprintf(out->instance, sizeof(out->instance), "%s", inst);
	out->proxy_port = (unsigned)port;
	return 0;
}

/* The host of "host:port" or "[v6]:port" into out when it is an
 * address (a name is no use to the packet filter). */
static bool
addr_host(const char *hostport, char out[64])
{
	unsigned char bin[16];
	const char *end;
	size_t n;

	if (hostport == NULL)
		return false;
	if (hostport[0] == '[') {
		end = strchr(hostport, ']');
		hostport++;
	} else {
		end = strrchr(hostport, ':');
		if (end && strchr(hostport, ':') != end)
			end = NULL; /* a bare IPv6 address */
	}
	n = end ? (size_t)(end - hostport) : strlen(hostport);
	if (n == 0 || n >= 64)
		return false;
	memcpy(out, hostport, n);
	out[n] = '\0';
	return inet_pton(AF_INET, out, bin) == 1 ||
	       inet_pton(AF_INET6, out, bin) == 1;
}

/* The cluster's addresses: the control plane's, this node's, and those
 * the control plane sent; NULL-ended in ptr, copied into buf. */
static void
cluster_list(struct agent *a, char buf[][64], const char **ptr, size_t max)
{
	size_t n = 0;

	if (addr_host(a->control, buf[n]))
		ptr[n] = buf[n], n++;
	if (a->cfg->node_addr[0] && addr_host(a->cfg->node_addr, buf[n]))
		ptr[n] = buf[n], n++;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < jv_len(a->cluster) && n + 1 < max; i++)
		if (addr_host(jv_str(jv_at(a->cluster, i)), buf[n]))
			ptr[n] = buf[n], n++;
	pthread_mutex_unlock(&a->mu);
	ptr[n] = NULL;
}

static int
apply_rules(struct agent *a, const char *table, struct err *e)
{
	char buf[EGRESS_MAX_CLUSTER + 1][64];
	const char *cluster[EGRESS_MAX_CLUSTER + 2];
	char dns[EGRESS_MAX_DNS][64], why[256];
	const struct config *cfg = a->cfg;
	struct egress_policy p = {0};

	cluster_list(a, buf, cluster, EGRESS_MAX_CLUSTER + 1);
	p.mode = (enum egress_mode)cfg->egress_mode;
	p.table = table;
	p.bridge = a->net.bridge;
	p.proxy_addr = a->net.gateway;
	p.proxy_port = (uint16_t)a->net.proxy_port;
	p.allow = cfg->egress_allow;
	p.nallow = cfg->egress_nallow;
	p.cluster = cluster;
	sbnet_resolvers(dns, p.dns);
	if (egress_apply(&p, why, sizeof(why)) < 0)
		return err_set(e, 500, "internal", "egress: %s", why);
	log_info("node agent: egress rules (%s) installed for %s",
	         egress_mode_name(p.mode), a->net.bridge);
	return 0;
}

static int
ensure_network(struct agent *a, struct err *e)
{
	char name[160], msg[DOCKER_MSG_LEN];
	struct docker_network n;
	int rc;

	snprintf(name, sizeof(name), "%s-cfg", a->net.name);
	rc = docker_network_inspect(a->d, name, &n, msg);
	if (rc == DOCKER_OK) {
		if (strcmp(n.subnet, a->net.subnet) != 0)
			return err_set(e, 409, "conflict",
			               "the network %s has subnet %s, not %s",
			               name, n.subnet, a->net.subnet);
		return 0;
	}
	if (rc != DOCKER_NOT_FOUND)
		return ERR_DOCKER(e, "%s: %s", name, msg);
	struct docker_network_spec s = {
	    .name = name,
	    .subnet = a->net.subnet,
	    .gateway = a->net.gateway,
	    .bridge = a->net.bridge,
	    .instance = a->net.instance,
	    .config_only = true,
	};
	if ((rc = docker_network_create(a->d, &s, msg)) != DOCKER_OK &&
	    rc != DOCKER_CONFLICT)
		return ERR_DOCKER(e, "cannot make %s: %s", name, msg);
	log_info("node agent: network %s made (%s, bridge %s)", name,
	         a->net.subnet, a->net.bridge);
	return 0;
}

int
agent_net_ensure(struct agent *a, struct err *e)
{
	char table[EGRESS_TABLE_LEN];

	if (ensure_network(a, e) < 0)
		return -1;
	egress_table_name(a->net.name, table);
	if (egress_installed(table))
		return 0;
	return apply_rules(a, table, e);
}

void
agent_net_cluster(struct agent *a, const struct jv *addrs)
{
	char buf[EGRESS_MAX_CLUSTER + 1][64];
	const char *cluster[EGRESS_MAX_CLUSTER + 2];
	char table[EGRESS_TABLE_LEN], why[256];
	bool same;

	if (jv_type(addrs) != JV_ARRAY || jv_len(addrs) > EGRESS_MAX_CLUSTER)
		return;
	pthread_mutex_lock(&a->mu);
	same = a->cluster != NULL && jv_len(a->cluster) == jv_len(addrs);
	for (size_t i = 0; same && i < jv_len(addrs); i++) {
		const char *x = jv_str(jv_at(addrs, i));
		const char *y = jv_str(jv_at(a->cluster, i));
		same = x && y && strcmp(x, y) == 0;
	}
	if (!same) {
		jv_free(a->cluster);
		a->cluster = jv_copy((struct jv *)addrs);
	}
	pthread_mutex_unlock(&a->mu);
	if (same)
		return;
	egress_table_name(a->net.name, table);
	cluster_list(a, buf, cluster, EGRESS_MAX_CLUSTER + 1);
	if (egress_cluster_set(table, cluster, why, sizeof(why)) < 0)
		log_warn("node agent: the cluster set: %s", why);
}
