/* Shared by the sbnet module's own files only. */
#ifndef SBNET_INTERNAL_H
#define SBNET_INTERNAL_H

#include <pthread.h>

#include "sbnet/sbnet.h"

enum sbnet_mode {
	SBNET_LOCAL,         /* one host: the bridge network itself */
	SBNET_SWARM_MANAGER, /* <net>-cfg (config-only) and <net> (swarm) */
	SBNET_SWARM_NODE,    /* an agent's node: <net>-cfg only */
};

struct sbnet {
	const struct config *cfg;
	struct docker *docker;
	char instance[32]; /* labels the network as this daemon's */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct sbnet_state st; /* under mu */
	atomic_bool stop;
	pthread_t thread;
	bool started;
	bool warned_open;
	enum sbnet_mode mode;
	char name[128]; /* the network's name (SANDBOXD_NETWORK on the CP) */
	/* SBNET_SWARM_NODE: what the control plane's network is. */
	char node_subnet[64];
	char node_gateway[64];
	char node_bridge[32];
	bool labelled; /* the manager's node has sandboxd.agent=1 */
	/* Swarm modes: the cluster's addresses, refused to sandboxes (the
	 * egress table's cluster sets); under mu. */
	char cluster[EGRESS_MAX_CLUSTER][64];
	size_t ncluster;
};

struct sbnet_found {
	struct docker_network n;
	char gateway[64];
	char bridge[32];
	bool managed;
};

int sbnet_choose_subnet(struct sbnet *net, char *out, size_t len, char *err,
                        size_t elen);
void sbnet_first_address(const char *subnet, char *out, size_t len);
void sbnet_bridge_name(const char *network, char out[16]);

/* sbswarm.c: swarm mode's find_network, the manager's readiness label,
 * and `network remove`. */
int sbnet_swarm_find(struct sbnet *net, struct sbnet_found *f, char *err,
                     size_t elen);
void sbnet_swarm_ready(struct sbnet *net);
int sbnet_swarm_remove(const struct config *cfg, struct docker *d, char *msg,
                       size_t len);

#endif
