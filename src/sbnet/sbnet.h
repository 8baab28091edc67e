/*
 * sbnet: the sandboxes' Docker network and its egress rules, kept in
 * place for as long as the daemon runs (see sbnet.c).
 */
#ifndef SBNET_SBNET_H
#define SBNET_SBNET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "docker/docker.h"
#include "egress/egress.h"
#include "lib/err.h"

#define SBNET_CHECK_S 5 /* how often the network and rules are checked */
#define SBNET_RETRY_S 1 /* … while they are not in place */
#define SBNET_ERR_LEN 256

/* What GET /v1/status shows; a copy, taken under the module's lock. */
struct sbnet_state {
	char name[128];
	char id[72];
	char subnet[64];
	char gateway[64];
	char bridge[32];
	bool managed; /* sandboxd created it */
	bool ready;   /* sandboxes may be created and started */
	char error[SBNET_ERR_LEN];
	enum egress_mode mode;
	char table[EGRESS_TABLE_LEN];
	bool rules; /* the egress table is installed (open: never) */
	char rules_error[SBNET_ERR_LEN];
	bool proxy_listening;
	char proxy_url[96];
	char proxy_error[SBNET_ERR_LEN];
};

/*
 * The module's handle: sbnet_new (NULL: out of memory) holds cfg and d,
 * which outlive it, and the daemon's instance id (the network's label).
 * sbnet_start makes the network ready once (creating it when missing,
 * installing the rules), then starts the thread that keeps it so; it
 * fails only when the thread cannot start (a network that cannot be had
 * yet is retried).  sbnet_stop joins the thread (NULL is fine);
 * sbnet_free stops and frees.  sbnet_state and the readers built on it
 * take NULL as a network never set up (nothing ready).
 */
struct sbnet;
struct sbnet *sbnet_new(const struct config *cfg, struct docker *d,
                        const char *instance);
int sbnet_start(struct sbnet *net);
void sbnet_stop(struct sbnet *net);
void sbnet_free(struct sbnet *net);

/*
 * Swarm mode (SANDBOXD_ORCHESTRATOR=swarm, sbswarm.c): the control
 * plane's sbnet_new keeps "<network>-cfg" (config-only: subnet,
 * gateway, bridge name, icc off, the sandboxd labels) and the
 * swarm-scoped "<network>" made from it, and labels its swarm node
 * sandboxd.agent=1 once they and the rules are in place.
 *
 * A node agent's handle instead keeps only the node's "<name>-cfg",
 * with the control plane's subnet, gateway and bridge name (the enroll
 * answer's network object: the same on every node), and the same
 * egress table on that bridge; sbnet_start/stop/free and the readers
 * work on it as on the control plane's.  The bridge itself exists only
 * while a task on the node uses the network; nothing here waits for it.
 */
struct sbnet *sbnet_new_node(const struct config *cfg, struct docker *d,
                             const char *instance, const char *name,
                             const char *subnet, const char *gateway,
                             const char *bridge);

void sbnet_state(struct sbnet *net, struct sbnet_state *out);

/*
 * The host's resolvers (/etc/resolv.conf, loopback ones left out), which
 * the egress rules let sandboxes reach: Docker's DNS asks them from the
 * sandbox's side.  out is NULL-ended, its strings in dns.
 */
void sbnet_resolvers(char dns[EGRESS_MAX_DNS][64],
                     const char *out[EGRESS_MAX_DNS]);

/* 0 when sandboxes may run; else -1 and a 503 network_unavailable. */
int sbnet_check_ready(struct sbnet *net, struct err *e);
/*
 * Swarm modes: the cluster's addresses (the control plane's and every
 * node's, NULL-ended, at most EGRESS_MAX_CLUSTER) that no sandbox may
 * reach whatever the egress policy: kept for every apply of the rules
 * and put in the installed table now.  A no-op with one server and when
 * they did not change.  0, or -1 with err.
 */
int sbnet_set_cluster(struct sbnet *net, const char *const *addrs, char *err,
                      size_t elen);
/* The network's engine id ("" until ready, or with SANDBOXD_NETWORK=none). */
void sbnet_network_id(struct sbnet *net, char *out, size_t len);
/*
 * Waits until the gateway (where the credential proxy listens) is known
 * or *stop; "" when the network gives sandboxes no address of the host.
 */
int sbnet_wait_gateway(struct sbnet *net, char *out, size_t len,
                       const atomic_bool *stop);

/* The credential proxy reports its state here (why: "" when it listens). */
void sbnet_proxy_state(struct sbnet *net, bool listening, const char *url,
                       const char *why);
/* 0 when the proxy listens; else -1 and out says why. */
int sbnet_proxy_down(struct sbnet *net, char *why, size_t len);

/* A sandbox's container got address ip: its refusal count starts anew. */
void sbnet_container_started(struct sbnet *net, const char *ip);
/* Refusals counted for a sandbox address (NULL: every address); -1
 * unknown. */
int64_t sbnet_blocked(struct sbnet *net, const char *ip);

/*
 * Picks a free /20 for a new network: the first candidate that overlaps
 * none of taken[] (network, mask pairs in host byte order).  0 or -1.
 */
struct sbnet_cidr {
	uint32_t net, mask;
};
int sbnet_cidr_parse(const char *s, struct sbnet_cidr *out);
int sbnet_pick_subnet(const struct sbnet_cidr *taken, size_t n, char *out,
                      size_t len);

/* `sandboxd network remove`: the rules, then the network if it is ours. */
int sbnet_remove(const struct config *cfg, struct docker *d, char *msg,
                 size_t len);

/*
 * `sandboxd network show`: the nft script for the configured policy (the
 * bridge as sandboxd would name it; "<gateway>" for an unknown proxy
 * address).
 */
int sbnet_show(const struct config *cfg, FILE *out);

#endif
