/*
 * The sandbox network in swarm mode (SANDBOXD_ORCHESTRATOR=swarm).
 *
 * A service's task can join only a swarm-scoped network, and an overlay
 * has no network policy (and this kernel may lack what it needs); so
 * each node keeps today's bridge, described by a per-node config-only
 * network "<net>-cfg" (subnet, gateway, the bridge's name, icc off, the
 * sandboxd.* labels), and the manager makes the swarm-scoped "<net>"
 * from it (--config-from), which must carry no labels, options or IPAM
 * of its own.  Every node has the same subnet, gateway and bridge name:
 * bridges are not connected across nodes, so equal addresses never meet,
 * and the credential proxy's address and the egress rules are the same
 * everywhere.
 *
 * The bridge exists on a node only while a task there uses the network:
 * readiness never asks for it (the gateway is the config-only network's
 * IPAM gateway, the rules match the bridge by name).  Ownership is read
 * from the config-only network's labels.  The network's id, as the
 * sandboxes' containers report it, is the swarm network's.
 *
 * Once the manager's network and rules are in place, its node is
 * labelled sandboxd.agent=1: Swarm may place sandboxes there.
 */
#include "sbnet/sbnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker/swarm.h"
#include "lib/log.h"
#include "sbnet/internal.h"

static void
cfg_name(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s-cfg", name);
}

static int
create_cfg(struct sbnet *net, const char *cname, char *err, size_t elen)
{
	char subnet[64], gw[64], br[16], msg[DOCKER_MSG_LEN];
	struct docker_network_spec spec = {.config_only = true};

	if (net->mode == SBNET_SWARM_NODE) {
		snprintf(subnet, sizeof(subnet), "%s", net->node_subnet);
		snprintf(gw, sizeof(gw), "%s", net->node_gateway);
		snprintf(br, sizeof(br), "%s", net->node_bridge);
	} else {
		if (sbnet_choose_subnet(net, subnet, sizeof(subnet), err,
		                        elen) < 0)
			return -1;
		sbnet_first_address(subnet, gw, sizeof(gw));
		sbnet_bridge_name(net->name, br);
	}
	spec.name = cname;
	spec.subnet = subnet;
	spec.gateway = gw;
	spec.bridge = br;
	spec.instance = net->instance;
	if (docker_network_create(net->docker, &spec, msg) != DOCKER_OK) {
		snprintf(err, elen, "cannot create the docker network %s: %s",
		         cname, msg);
		return -1;
	}
	log_info("network: created %s (config-only: %s, gateway %s, bridge "
	         "%s)",
	         cname, subnet, gw, br);
	return 0;
}

/* Another instance's pair, unused (the engine refuses to remove a swarm
 * network a service uses): removed, to be made again. */
static int
take_over(struct sbnet *net, const char *cname, const char *other, char *err,
          size_t elen)
{
	char msg[DOCKER_MSG_LEN];
	int rc = DOCKER_OK;

	if (net->mode == SBNET_SWARM_MANAGER)
		rc = docker_network_remove(net->docker, net->name, msg);
	if (rc == DOCKER_OK || rc == DOCKER_NOT_FOUND)
		rc = docker_network_remove(net->docker, cname, msg);
	if (rc != DOCKER_OK) {
		snprintf(err, elen,
		         "docker network %s belongs to another sandboxd "
		         "(instance %s) and cannot be taken over: %s",
		         cname, other, msg);
		return -1;
	}
	log_info("network: %s was left by instance %s; taking it over", cname,
	         other);
	return create_cfg(net, cname, err, elen);
}

/* <net>-cfg: there, made or taken over; n gets it. */
static int
find_cfg(struct sbnet *net, const char *cname, struct docker_network *n,
         char *err, size_t elen)
{
	char msg[DOCKER_MSG_LEN];
	int rc = docker_network_inspect(net->docker, cname, n, msg);

	if (rc == DOCKER_NOT_FOUND) {
		if (create_cfg(net, cname, err, elen) < 0)
			return -1;
		rc = docker_network_inspect(net->docker, cname, n, msg);
	} else if (rc == DOCKER_OK && n->managed &&
	           strcmp(n->instance, net->instance) != 0) {
		char other[32];
		snprintf(other, sizeof(other), "%s", n->instance);
		if (take_over(net, cname, other, err, elen) < 0)
			return -1;
		rc = docker_network_inspect(net->docker, cname, n, msg);
	}
	if (rc != DOCKER_OK) {
		snprintf(err, elen, "docker network %s: %s", cname, msg);
		return -1;
	}
	if (!n->config_only || !n->managed) {
		snprintf(err, elen,
		         "docker network %s is not a config-only network "
		         "sandboxd made; remove it or pick another "
		         "SANDBOXD_NETWORK",
		         cname);
		return -1;
	}
	return 0;
}

/* The manager's <net>: swarm-scoped, made from <net>-cfg; id gets it. */
static int
find_swarm(struct sbnet *net, const char *cname, char id[72], char *err,
           size_t elen)
{
	struct docker_network_spec spec = {.config_from = cname};
	char msg[DOCKER_MSG_LEN];
	struct docker_network n;
	int rc = docker_network_inspect(net->docker, net->name, &n, msg);

	if (rc == DOCKER_OK && strcmp(n.scope, "swarm") == 0 && !n.attachable &&
	    strcmp(n.config_from, cname) == 0 &&
	    docker_network_remove(net->docker, net->name, msg) == DOCKER_OK) {
		/* An earlier start's swarm network, made before it was
		 * attachable (a publish's containers could not join it):
		 * unused, so made again.  In use, it stays as it is. */
		log_info("network: %s made again, attachable", net->name);
		rc = DOCKER_NOT_FOUND;
	}
	if (rc == DOCKER_OK && strcmp(n.scope, "swarm") != 0 && n.managed &&
	    n.containers == 0) {
		/* A sandboxd's single-host network (this daemon's before it
		 * ran in swarm mode, or another's): unused, so it goes for
		 * the swarm one, as sbnet.c takes over an unused one. */
		rc = docker_network_remove(net->docker, net->name, msg);
		if (rc == DOCKER_OK) {
			log_info("network: %s was the single-host network; "
			         "making it a swarm network",
			         net->name);
			rc = DOCKER_NOT_FOUND;
		}
	}
	if (rc == DOCKER_NOT_FOUND) {
		spec.name = net->name;
		rc = docker_network_create(net->docker, &spec, msg);
		if (rc == DOCKER_OK) {
			log_info("network: created %s (swarm, from %s)",
			         net->name, cname);
			rc = docker_network_inspect(net->docker, net->name, &n,
			                            msg);
		}
	}
	if (rc != DOCKER_OK) {
		snprintf(err, elen, "docker network %s: %s", net->name, msg);
		return -1;
	}
	if (strcmp(n.scope, "swarm") != 0 || strcmp(n.config_from, cname)) {
		snprintf(err, elen,
		         "docker network %s exists and is not a swarm network "
		         "made from %s; remove it or pick another "
		         "SANDBOXD_NETWORK",
		         net->name, cname);
		return -1;
	}
	snprintf(id, 72, "%s", n.id);
	return 0;
}

int
sbnet_swarm_find(struct sbnet *net, struct sbnet_found *f, char *err,
                 size_t elen)
{
	char cname[160], id[72] = "";

	memset(f, 0, sizeof(*f));
	cfg_name(net->name, cname, sizeof(cname));
	if (find_cfg(net, cname, &f->n, err, elen) < 0)
		return -1;
	if (net->mode == SBNET_SWARM_MANAGER &&
	    find_swarm(net, cname, id, err, elen) < 0)
		return -1;
	if (id[0])
		snprintf(f->n.id, sizeof(f->n.id), "%s", id);
	f->managed = true;
	snprintf(f->bridge, sizeof(f->bridge), "%s", f->n.bridge);
	snprintf(f->gateway, sizeof(f->gateway), "%s", f->n.gateway);
	if (f->bridge[0] == '\0' || f->gateway[0] == '\0') {
		snprintf(err, elen,
		         "docker network %s names no bridge or no gateway",
		         cname);
		return -1;
	}
	return 0;
}

void
sbnet_swarm_ready(struct sbnet *net)
{
	char msg[DOCKER_MSG_LEN];
	struct swarm_info si;

	if (net->labelled)
		return;
	if (swarm_info(net->docker, &si, msg) != DOCKER_OK ||
	    si.node_id[0] == '\0' ||
	    swarm_node_update(net->docker, si.node_id, "sandboxd.agent", "1",
	                      NULL, msg) != DOCKER_OK) {
		log_warn("network: cannot label this swarm node "
		         "sandboxd.agent=1: %s",
		         msg);
		return;
	}
	net->labelled = true;
	log_info("swarm: this node takes sandboxes (sandboxd.agent=1)");
}

int
sbnet_swarm_remove(const struct config *cfg, struct docker *d, char *msg,
                   size_t len)
{
	char cname[160], dmsg[DOCKER_MSG_LEN];
	struct docker_network n;
	int rc;

	cfg_name(cfg->network, cname, sizeof(cname));
	rc = docker_network_inspect(d, cname, &n, dmsg);
	if (rc == DOCKER_NOT_FOUND || (rc == DOCKER_OK && !n.managed))
		return 0; /* not ours to remove */
	if (rc == DOCKER_OK &&
	    docker_network_inspect(d, cfg->network, &n, dmsg) == DOCKER_OK &&
	    strcmp(n.config_from, cname) == 0)
		rc = docker_network_remove(d, cfg->network, dmsg);
	if (rc == DOCKER_OK || rc == DOCKER_NOT_FOUND)
		rc = docker_network_remove(d, cname, dmsg);
	if (rc != DOCKER_OK && rc != DOCKER_NOT_FOUND) {
		snprintf(msg, len, "docker network %s: %s", cname, dmsg);
		return -1;
	}
	return 0;
}
