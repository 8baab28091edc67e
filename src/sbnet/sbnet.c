/*
 * The sandbox network: the Docker network every sandbox joins, the
 * egress rules on its bridge, and the address where the credential proxy
 * listens (the network's gateway).
 *
 * sandboxd makes this network itself (SANDBOXD_NETWORK, default
 * "sandboxd") so that its gateway is always known: Docker's default
 * bridge reports no gateway on a freshly installed engine, and nothing
 * that sandboxes need may depend on the engine's history.  The network is
 * a bridge with inter-container traffic off, a bridge interface named
 * sbx-<8 hex> (so the rules can match it by name, across dockerd
 * restarts that recreate the link), a subnet picked to collide with no
 * route of the host and no other Docker network (or SANDBOXD_SUBNET), and
 * the first address as gateway.  It is labelled with this daemon's
 * instance id and reused across restarts.  A network of that name that
 * sandboxd did not make is the operator's: it is used as it is, and the
 * rules then apply to everything on its bridge.
 *
 * A network labelled by another instance is not shared while that
 * instance has sandboxes on it (their rules would fight); when it has
 * none, this daemon takes it over.
 *
 * One thread checks every SBNET_CHECK_S seconds (every SBNET_RETRY_S
 * while something is missing) that the network exists and the rules are
 * installed, and puts back whatever went: dockerd started with a fresh
 * state, `nft flush ruleset`, a network removed by hand.  Until the
 * network is ready, creates and starts answer 503 network_unavailable,
 * so no sandbox ever runs without its rules.  The module's lock guards
 * only the state copy: Docker and nftables calls happen outside it.
 */
#include "sbnet/sbnet.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "sbnet/internal.h"

/* The IPv4 address of a host interface ("" when it has none). */
static void
iface_address(const char *ifname, char *out, size_t len)
{
	struct ifaddrs *ifs = NULL;

	out[0] = '\0';
	if (getifaddrs(&ifs) < 0)
		return;
	for (struct ifaddrs *i = ifs; i && !out[0]; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, ifname) == 0)
			inet_ntop(
			    AF_INET,
			    &((struct sockaddr_in *)i->ifa_addr)->sin_addr, out,
			    (socklen_t)len);
	freeifaddrs(ifs);
}

/* ---- the network -----------------------------------------------------------
 */

static int
create_network(struct sbnet *net, char *err, size_t elen)
{
	char subnet[64], gw[64], br[16], msg[DOCKER_MSG_LEN];
	struct docker_network_spec spec = {0};

	if (sbnet_choose_subnet(net, subnet, sizeof(subnet), err, elen) < 0)
		return -1;
	sbnet_first_address(subnet, gw, sizeof(gw));
	sbnet_bridge_name(net->name, br);
	spec.name = net->name;
	spec.subnet = subnet;
	spec.gateway = gw;
	spec.bridge = br;
	spec.instance = net->instance;
	if (docker_network_create(net->docker, &spec, msg) != DOCKER_OK) {
		snprintf(err, elen, "cannot create the docker network %s: %s",
		         net->name, msg);
		return -1;
	}
	log_info("network: created %s (%s, gateway %s, bridge %s)", net->name,
	         subnet, gw, br);
	return 0;
}

/* Another instance's network with none of its sandboxes on it is ours. */
static int
take_over(struct sbnet *net, const struct docker_network *n, char *err,
          size_t elen)
{
	char msg[DOCKER_MSG_LEN];

	if (n->containers > 0) {
		snprintf(err, elen,
		         "docker network %s belongs to another sandboxd "
		         "(instance %s) whose sandboxes use it; give this "
		         "daemon its own SANDBOXD_NETWORK",
		         net->name, n->instance);
		return -1;
	}
	if (docker_network_remove(net->docker, net->name, msg) != DOCKER_OK) {
		snprintf(err, elen, "cannot take over docker network %s: %s",
		         net->name, msg);
		return -1;
	}
	log_info("network: %s was left by instance %s; taking it over",
	         net->name, n->instance);
	return create_network(net, err, elen);
}

static int
find_network(struct sbnet *net, struct sbnet_found *f, char *err, size_t elen)
{
	const char *name = net->name;
	char msg[DOCKER_MSG_LEN];
	int rc;

	if (net->mode != SBNET_LOCAL)
		return sbnet_swarm_find(net, f, err, elen);
	memset(f, 0, sizeof(*f));
	rc = docker_network_inspect(net->docker, name, &f->n, msg);
	if (rc == DOCKER_NOT_FOUND) {
		if (create_network(net, err, elen) < 0)
			return -1;
		rc = docker_network_inspect(net->docker, name, &f->n, msg);
	} else if (rc == DOCKER_OK && f->n.managed &&
	           strcmp(f->n.instance, net->instance) != 0) {
		if (take_over(net, &f->n, err, elen) < 0)
			return -1;
		rc = docker_network_inspect(net->docker, name, &f->n, msg);
	}
	if (rc != DOCKER_OK) {
		snprintf(err, elen, "docker network %s: %s", name, msg);
		return -1;
	}
	if (strcmp(f->n.driver, "bridge") != 0) {
		snprintf(err, elen,
		         "docker network %s uses the %s driver; sandboxes need "
		         "a bridge network",
		         name, f->n.driver);
		return -1;
	}
	f->managed = f->n.managed;
	if (f->n.bridge[0])
		snprintf(f->bridge, sizeof(f->bridge), "%s", f->n.bridge);
	else
		snprintf(f->bridge, sizeof(f->bridge), "br-%.12s", f->n.id);
	/* It goes into the rules' text: an interface name, nothing else. */
	if (strlen(f->bridge) >= IFNAMSIZ ||
	    strspn(f->bridge, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
	                      "WXYZ0123456789_.-") != strlen(f->bridge)) {
		snprintf(err, elen, "docker network %s: odd bridge name", name);
		return -1;
	}
	/* An operator's network may name no gateway (the default bridge on
	 * a fresh engine does not): the bridge's own address is it. */
	snprintf(f->gateway, sizeof(f->gateway), "%s", f->n.gateway);
	if (f->gateway[0] == '\0')
		iface_address(f->bridge, f->gateway, sizeof(f->gateway));
	if (f->gateway[0] == '\0')
		sbnet_first_address(f->n.subnet, f->gateway,
		                    sizeof(f->gateway));
	if (f->gateway[0] == '\0') {
		snprintf(err, elen, "docker network %s has no IPv4 subnet",
		         name);
		return -1;
	}
	return 0;
}

/* ---- the rules -------------------------------------------------------------
 */

void
sbnet_resolvers(char dns[EGRESS_MAX_DNS][64], const char *out[EGRESS_MAX_DNS])
{
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[256], addr[64];
	size_t n = 0;
	unsigned char bin[16];

	while (f && n + 1 < EGRESS_MAX_DNS && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " nameserver %63s", addr) != 1)
			continue;
		if ((inet_pton(AF_INET, addr, bin) == 1 && bin[0] != 127) ||
		    (inet_pton(AF_INET6, addr, bin) == 1 &&
		     strcmp(addr, "::1") != 0)) {
			snprintf(dns[n], 64, "%s", addr);
			out[n] = dns[n];
			n++;
		}
	}
	out[n] = NULL;
	if (f)
		fclose(f);
}

static int
install_rules(struct sbnet *net, const struct sbnet_found *f, const char *table,
              char *err, size_t elen)
{
	const struct config *cfg = net->cfg;
	char dns[EGRESS_MAX_DNS][64], cl[EGRESS_MAX_CLUSTER][64];
	const char *clp[EGRESS_MAX_CLUSTER + 1];
	struct egress_policy p = {0};
	size_t n;

	/* Swarm modes: the cluster sets exist (maybe empty) from the start,
	 * so sbnet_set_cluster only ever changes their elements. */
	if (net->mode != SBNET_LOCAL) {
		pthread_mutex_lock(&net->mu);
		n = net->ncluster;
		memcpy(cl, net->cluster, n * sizeof(cl[0]));
		pthread_mutex_unlock(&net->mu);
		for (size_t i = 0; i < n; i++)
			clp[i] = cl[i];
		clp[n] = NULL;
		p.cluster = clp;
	}
	p.mode = (enum egress_mode)cfg->egress_mode;
	p.table = table;
	p.bridge = f->bridge;
	p.proxy_addr = cfg->proxy_addr[0] ? cfg->proxy_addr : f->gateway;
	p.proxy_port = cfg->proxy_port;
	p.allow = cfg->egress_allow;
	p.nallow = cfg->egress_nallow;
	sbnet_resolvers(dns, p.dns);
	return egress_apply(&p, err, elen);
}

/* ---- the thread ------------------------------------------------------------
 */

/*
 * The proxy's part of the state is the proxy's own, but for one case: it
 * listens on a gateway the network no longer has (dockerd lost its state
 * and the old subnet was taken meanwhile), so sandboxes cannot reach it.
 */
static void
publish(struct sbnet *net, const struct sbnet_state *st, bool own_addr)
{
	struct sbnet_state old;
	char at[80];

	pthread_mutex_lock(&net->mu);
	old = net->st;
	net->st = *st;
	net->st.proxy_listening = old.proxy_listening;
	memcpy(net->st.proxy_url, old.proxy_url, sizeof(old.proxy_url));
	memcpy(net->st.proxy_error, old.proxy_error, sizeof(old.proxy_error));
	snprintf(at, sizeof(at), "//%s:", st->gateway);
	if (own_addr && st->gateway[0] && old.proxy_listening &&
	    strstr(old.proxy_url, at) == NULL) {
		net->st.proxy_listening = false;
		snprintf(net->st.proxy_error, sizeof(net->st.proxy_error),
		         "the network's gateway is now %s but the proxy "
		         "listens at %s; restart sandboxd",
		         st->gateway, old.proxy_url);
		log_error("proxy: %s", net->st.proxy_error);
	}
	pthread_cond_broadcast(&net->cv);
	pthread_mutex_unlock(&net->mu);
}

static void
log_change(const struct sbnet_state *old, const struct sbnet_state *st)
{
	if (st->error[0] && strcmp(st->error, old->error) != 0)
		log_warn("network: %s; sandboxes cannot start until it is "
		         "fixed (retrying)",
		         st->error);
	else if (st->ready && !old->ready)
		log_info("network: sandboxes on %s (%s, gateway %s, bridge %s)",
		         st->name, st->subnet, st->gateway, st->bridge);
	if (st->rules_error[0] &&
	    strcmp(st->rules_error, old->rules_error) != 0)
		log_warn("egress: cannot install the rules: %s",
		         st->rules_error);
	else if (st->rules && !old->rules)
		log_info("egress: %s rules on %s (nft table inet %s)",
		         egress_mode_name(st->mode), st->bridge, st->table);
}

/* One round: the network, then the rules.  Returns whether all is well. */
static bool
check(struct sbnet *net)
{
	struct sbnet_state st = {0}, old;
	struct sbnet_found f;

	sbnet_state(net, &old);
	snprintf(st.name, sizeof(st.name), "%s", net->name);
	st.mode = (enum egress_mode)net->cfg->egress_mode;
	egress_table_name(net->name, st.table);
	if (strcmp(net->name, "none") == 0) {
		st.ready = true; /* no network: nothing to filter */
		snprintf(st.rules_error, sizeof(st.rules_error),
		         "SANDBOXD_NETWORK=none: sandboxes have no network");
		publish(net, &st, net->cfg->proxy_addr[0] == '\0');
		return true;
	}
	if (!docker_is_up(net->docker) && !old.ready) {
		char msg[DOCKER_MSG_LEN];
		if (docker_ping(net->docker, msg) != DOCKER_OK) {
			snprintf(st.error, sizeof(st.error), "%s", msg);
			publish(net, &st, net->cfg->proxy_addr[0] == '\0');
			log_change(&old, &st);
			return false;
		}
	}
	if (find_network(net, &f, st.error, sizeof(st.error)) < 0) {
		publish(net, &st, net->cfg->proxy_addr[0] == '\0');
		log_change(&old, &st);
		return false;
	}
	snprintf(st.id, sizeof(st.id), "%s", f.n.id);
	snprintf(st.subnet, sizeof(st.subnet), "%s", f.n.subnet);
	snprintf(st.gateway, sizeof(st.gateway), "%s", f.gateway);
	snprintf(st.bridge, sizeof(st.bridge), "%s", f.bridge);
	st.managed = f.managed;
	if (st.mode == EGRESS_OPEN) {
		if (!net->warned_open)
			log_warn("egress: SANDBOXD_EGRESS=open: sandboxes can "
			         "reach your local network, this host's "
			         "services and cloud metadata endpoints");
		net->warned_open = true;
		if (egress_installed(st.table))
			egress_remove(st.table, st.rules_error,
			              sizeof(st.rules_error));
		st.ready = true;
	} else if (old.rules && strcmp(old.id, st.id) == 0 &&
	           strcmp(old.bridge, st.bridge) == 0 &&
	           egress_installed(st.table)) {
		st.rules = st.ready = true;
	} else {
		if (old.rules)
			log_warn("egress: the rules on %s went missing or the "
			         "network changed; installing them again",
			         st.bridge);
		st.rules = install_rules(net, &f, st.table, st.rules_error,
		                         sizeof(st.rules_error)) == 0;
		/* Without its rules no sandbox may run. */
		st.ready = st.rules;
		if (!st.rules)
			snprintf(st.error, sizeof(st.error),
			         "the egress rules are not installed: %s",
			         st.rules_error);
	}
	publish(net, &st, net->cfg->proxy_addr[0] == '\0');
	log_change(&old, &st);
	if (st.ready && net->mode == SBNET_SWARM_MANAGER)
		sbnet_swarm_ready(net);
	return st.ready;
}

static void *
sbnet_main(void *arg)
{
	struct sbnet *net = arg;
	bool ok = true;

	while (!atomic_load(&net->stop)) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += ok ? SBNET_CHECK_S : SBNET_RETRY_S;
		pthread_mutex_lock(&net->mu);
		while (!atomic_load(&net->stop) &&
		       pthread_cond_timedwait(&net->cv, &net->mu, &until) == 0)
			;
		pthread_mutex_unlock(&net->mu);
		if (!atomic_load(&net->stop))
			ok = check(net);
	}
	return NULL;
}

struct sbnet *
sbnet_new(const struct config *cfg, struct docker *d, const char *instance)
{
	struct sbnet *net = calloc(1, sizeof(*net));

	if (net == NULL)
		return NULL;
	net->cfg = cfg;
	net->docker = d;
	snprintf(net->instance, sizeof(net->instance), "%s", instance);
	snprintf(net->name, sizeof(net->name), "%s", cfg->network);
	net->mode = strcmp(cfg->orchestrator, "swarm") == 0 &&
	                    strcmp(cfg->network, "none") != 0
	                ? SBNET_SWARM_MANAGER
	                : SBNET_LOCAL;
	pthread_mutex_init(&net->mu, NULL);
	pthread_cond_init(&net->cv, NULL);
	atomic_store(&net->stop, false);
	return net;
}

int
sbnet_start(struct sbnet *net)
{
	check(net);
	if (pthread_create(&net->thread, NULL, sbnet_main, net) != 0)
		return -1;
	net->started = true;
	return 0;
}

void
sbnet_stop(struct sbnet *net)
{
	if (net == NULL)
		return;
	atomic_store(&net->stop, true);
	pthread_mutex_lock(&net->mu);
	pthread_cond_broadcast(&net->cv);
	pthread_mutex_unlock(&net->mu);
	if (net->started)
		pthread_join(net->thread, NULL);
	net->started = false;
}

void
sbnet_free(struct sbnet *net)
{
	if (net == NULL)
		return;
	sbnet_stop(net);
	pthread_mutex_destroy(&net->mu);
	pthread_cond_destroy(&net->cv);
	free(net);
}

/* A node agent's network (sbnet.h; its checks are sbswarm.c's). */
struct sbnet *
sbnet_new_node(const struct config *cfg, struct docker *d, const char *instance,
               const char *name, const char *subnet, const char *gateway,
               const char *bridge)
{
	struct sbnet *net = sbnet_new(cfg, d, instance);

	if (net == NULL)
		return NULL;
	net->mode = SBNET_SWARM_NODE;
	snprintf(net->name, sizeof(net->name), "%s", name);
	snprintf(net->node_subnet, sizeof(net->node_subnet), "%s", subnet);
	snprintf(net->node_gateway, sizeof(net->node_gateway), "%s", gateway);
	snprintf(net->node_bridge, sizeof(net->node_bridge), "%s", bridge);
	return net;
}

/* ---- readers ----------------------------------------------------------- */

void
sbnet_state(struct sbnet *net, struct sbnet_state *out)
{
	memset(out, 0, sizeof(*out));
	if (net == NULL)
		return;
	pthread_mutex_lock(&net->mu);
	*out = net->st;
	pthread_mutex_unlock(&net->mu);
}

int
sbnet_check_ready(struct sbnet *net, struct err *e)
{
	struct sbnet_state st;

	sbnet_state(net, &st);
	if (st.ready)
		return 0;
	return err_set(e, 503, "network_unavailable",
	               "the sandbox network is not ready: %s",
	               st.error[0] ? st.error : "still being set up");
}

void
sbnet_network_id(struct sbnet *net, char *out, size_t len)
{
	struct sbnet_state st;

	sbnet_state(net, &st);
	snprintf(out, len, "%s", st.ready ? st.id : "");
}

int
sbnet_wait_gateway(struct sbnet *net, char *out, size_t len,
                   const atomic_bool *stop)
{
	pthread_mutex_lock(&net->mu);
	while (!atomic_load(stop) && !net->st.gateway[0] &&
	       strcmp(net->name, "none") != 0) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&net->cv, &net->mu, &until);
	}
	snprintf(out, len, "%s", net->st.gateway);
	pthread_mutex_unlock(&net->mu);
	return atomic_load(stop) ? -1 : 0;
}

void
sbnet_proxy_state(struct sbnet *net, bool listening, const char *url,
                  const char *why)
{
	pthread_mutex_lock(&net->mu);
	net->st.proxy_listening = listening;
	snprintf(net->st.proxy_url, sizeof(net->st.proxy_url), "%s", url);
	snprintf(net->st.proxy_error, sizeof(net->st.proxy_error), "%s", why);
	pthread_mutex_unlock(&net->mu);
}

int
sbnet_proxy_down(struct sbnet *net, char *why, size_t len)
{
	struct sbnet_state st;

	sbnet_state(net, &st);
	if (st.proxy_listening)
		return 0;
	snprintf(why, len, "the credential proxy is not listening: %s",
	         st.proxy_error[0] ? st.proxy_error : "still starting");
	return -1;
}

void
sbnet_container_started(struct sbnet *net, const char *ip)
{
	struct sbnet_state st;

	sbnet_state(net, &st);
	if (st.rules && ip[0])
		egress_reset(st.table, ip);
}

int64_t
sbnet_blocked(struct sbnet *net, const char *ip)
{
	struct sbnet_state st;

	sbnet_state(net, &st);
	if (!st.rules || (ip && ip[0] == '\0'))
		return st.mode == EGRESS_OPEN ? 0 : -1;
	return egress_blocked(st.table, ip);
}

/* ---- removal ------------------------------------------------------------- */

int
sbnet_remove(const struct config *cfg, struct docker *d, char *msg, size_t len)
{
	char table[EGRESS_TABLE_LEN], dmsg[DOCKER_MSG_LEN];
	struct docker_network n;
	int rc;

	egress_table_name(cfg->network, table);
	if (egress_remove(table, msg, len) < 0)
		return -1;
	if (strcmp(cfg->orchestrator, "swarm") == 0)
		return sbnet_swarm_remove(cfg, d, msg, len);
	rc = docker_network_inspect(d, cfg->network, &n, dmsg);
	if (rc == DOCKER_NOT_FOUND || (rc == DOCKER_OK && !n.managed))
		return 0; /* not ours to remove */
	if (rc == DOCKER_OK)
		rc = docker_network_remove(d, cfg->network, dmsg);
	if (rc != DOCKER_OK && rc != DOCKER_NOT_FOUND) {
		snprintf(msg, len, "docker network %s: %s", cfg->network, dmsg);
		return -1;
	}
	return 0;
}

int
sbnet_show(const struct config *cfg, FILE *out)
{
	char table[EGRESS_TABLE_LEN], br[16], dns[EGRESS_MAX_DNS][64];
	struct egress_policy p = {0};
	struct buf b;
	int rc;

	egress_table_name(cfg->network, table);
	sbnet_bridge_name(cfg->network, br);
	p.mode = (enum egress_mode)cfg->egress_mode;
	p.table = table;
	p.bridge = br;
	p.proxy_addr = cfg->proxy_addr[0] ? cfg->proxy_addr : "<gateway>";
	p.proxy_port = cfg->proxy_port;
	p.allow = cfg->egress_allow;
	p.nallow = cfg->egress_nallow;
	sbnet_resolvers(dns, p.dns);
	buf_init(&b, 1u << 16);
	rc = egress_ruleset(&p, false, &b);
	if (rc == 0)
		fwrite(b.data, 1, b.len, out);
	buf_release(&b);
	return rc;
}

int
sbnet_set_cluster(struct sbnet *net, const char *const *addrs, char *err,
                  size_t elen)
{
	char table[EGRESS_TABLE_LEN];
	bool same;
	size_t n = 0;

	while (n < EGRESS_MAX_CLUSTER && addrs[n])
		n++;
	pthread_mutex_lock(&net->mu);
	same = n == net->ncluster;
	for (size_t i = 0; same && i < n; i++)
		same = strcmp(net->cluster[i], addrs[i]) == 0;
	for (size_t i = 0; !same && i < n; i++)
		snprintf(net->cluster[i], sizeof(net->cluster[i]), "%s",
		         addrs[i]);
	if (!same)
		net->ncluster = n;
	pthread_mutex_unlock(&net->mu);
	egress_table_name(net->name, table);
	if (same || net->mode == SBNET_LOCAL || !egress_installed(table))
		return 0;
	return egress_cluster_set(table, addrs, err, elen);
}
