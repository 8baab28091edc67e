/*
 * The cluster's handle: the control plane's CA and credentials, its
 * nodelink server (enroll, proxy), the manager's own labels, the
 * journal's resume at start, the threads it runs, and the nodes as
 * GET /v1/nodes shows them.
 *
 * The manager's own node has no agent and no row: it is this host, its
 * figures read here (meminfo, statvfs of the data directory), its
 * sandboxes those with node "".  Every other node is a row of the store
 * (store/nodes.c) kept by the enrollment (join.c) and the heartbeats
 * (nodes.c), joined here with what Swarm says of it (orch_nodes).
 *
 * Threads: the heartbeat thread, and detached join and drain threads
 * counted in cl->threads; cluster_stop sets cl->stop (their naps and
 * loops end) and waits for the count to reach 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cluster/internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/meminfo.h"
#include "nodelink/nodelink.h"
#include "orch/orch.h"

static const struct nl_op server_ops[] = {
    {.name = "enroll", .roles = 1u << NL_ROLE_NONE, .unary = cluster_op_enroll},
    {.name = "proxy", .roles = 1u << NL_ROLE_NODE, .stream = cluster_op_proxy},
    {.name = "renew", .roles = 1u << NL_ROLE_NODE, .unary = cluster_op_renew},
};

/* SANDBOXD_CLUSTER_ADDR, else this engine's swarm address with the
 * cluster port. */
static int
pick_addr(struct cluster *cl, struct err *e)
{
	const struct config *cfg = cl->c->cfg;
	struct cluster_swarm_info si;
	char msg[DOCKER_MSG_LEN], *colon;

	if (cfg->cluster_addr[0]) {
		snprintf(cl->addr, sizeof(cl->addr), "%s", cfg->cluster_addr);
		return 0;
	}
	if (cluster_swarm_info(cl, &si, msg) != DOCKER_OK)
		return ERR_DOCKER(e, "%s", msg);
	if ((colon = strrchr(si.manager_addr, ':')) != NULL)
		*colon = '\0';
	if (si.manager_addr[0] == '\0')
		return ERR_BAD(e,
		               "set SANDBOXD_CLUSTER_ADDR (host:port the node "
		               "agents reach this control plane at)");
	snprintf(cl->addr, sizeof(cl->addr), "%s:%lld", si.manager_addr,
	         (long long)cfg->cluster_port);
	return 0;
}

static int manager_check(struct cluster *cl, struct cluster_swarm_info *si,
                         struct err *e);

int
cluster_new(struct cluster **out, struct core *c, struct err *e)
{
	struct cluster_swarm_info si;
	struct cluster *cl = calloc(1, sizeof(*cl));

	*out = NULL;
	if (cl == NULL)
		return ERR_INTERNAL(e, "out of memory");
	cl->c = c;
	pthread_mutex_init(&cl->mu, NULL);
	pthread_cond_init(&cl->cv, NULL);
	snprintf(cl->dir, sizeof(cl->dir), "%s/" CLUSTER_NODEDIR,
	         c->cfg->data_dir);
	if (c->cfg->node_name[0])
		snprintf(cl->self, sizeof(cl->self), "%s", c->cfg->node_name);
	else if (gethostname(cl->self, sizeof(cl->self) - 1) < 0)
		snprintf(cl->self, sizeof(cl->self), "manager");
	if (manager_check(cl, &si, e) < 0 || pick_addr(cl, e) < 0 ||
	    nl_ca_init(cl->dir, cl->self, cl->addr, e) < 0 ||
	    nl_open(&cl->nl, cl->dir, e) < 0) {
		cluster_free(cl);
		return -1;
	}
	*out = cl;
	return 0;
}

void
cluster_free(struct cluster *cl)
{
	if (cl == NULL)
		return;
	cluster_stop(cl);
	nl_free(cl->nl);
	pthread_cond_destroy(&cl->cv);
	pthread_mutex_destroy(&cl->mu);
	free(cl);
}

struct nodelink *
cluster_nodelink(struct cluster *cl)
{
	return cl ? cl->nl : NULL;
}

const char *
cluster_self(const struct cluster *cl)
{
	return cl->self;
}

/* This engine a swarm manager, else a message that says how. */
static int
manager_check(struct cluster *cl, struct cluster_swarm_info *si, struct err *e)
{
	char msg[DOCKER_MSG_LEN];

	if (cluster_swarm_info(cl, si, msg) != DOCKER_OK)
		return ERR_DOCKER(e, "%s", msg);
	if (!si->manager)
		return err_set(
		    e, 409, "not_swarm",
		    "SANDBOXD_ORCHESTRATOR=swarm needs this Docker "
		    "engine to be a swarm manager: run `docker swarm "
		    "init --advertise-addr <this host's address> "
		    "--task-history-limit 2` (docs/deploy.md, More "
		    "than one server)");
	return 0;
}

/* The manager's node labelled sandboxd.node (sbnet labels it
 * sandboxd.agent once its network is ready). */
static int
label_manager(struct cluster *cl, struct err *e)
{
	struct cluster_swarm_info si;
	char msg[DOCKER_MSG_LEN];

	if (manager_check(cl, &si, e) < 0)
		return -1;
	if (cluster_swarm_label(cl, si.node_id, "sandboxd.node", cl->self,
	                        msg) != DOCKER_OK)
		return ERR_DOCKER(e, "labelling the manager's node: %s", msg);
	return 0;
}

/* Listens on the host of SANDBOXD_CLUSTER_ADDR at SANDBOXD_CLUSTER_PORT. */
static int
server_start(struct cluster *cl, struct err *e)
{
	char listen[160], host[128], *colon;

	snprintf(host, sizeof(host), "%s", cl->addr);
	if ((colon = strrchr(host, ':')) != NULL)
		*colon = '\0';
	snprintf(listen, sizeof(listen), "%s:%lld", host,
	         (long long)cl->c->cfg->cluster_port);
	return nl_server_start(&cl->srv, cl->nl, listen, server_ops,
	                       sizeof(server_ops) / sizeof(server_ops[0]), cl,
	                       e);
}

int
cluster_start(struct cluster *cl, struct err *e)
{
	int n = 0;

	atomic_store(&cl->stop, false);
	if (label_manager(cl, e) < 0)
		return -1;
	if (cluster_moves_resume(cl->c->store, &cluster_move_steps, cl, &n) < 0)
		return ERR_INTERNAL(e, "the moves' journal cannot be read");
	if (n)
		log_info("moves' journal: %d interrupted move(s) resumed", n);
	if (server_start(cl, e) < 0)
		return -1;
	if (cluster_heartbeat_start(cl) < 0) {
		nl_server_stop(cl->srv);
		cl->srv = NULL;
		return ERR_INTERNAL(e, "cannot start the heartbeat thread");
	}
	log_info("cluster: node %s, agents reach %s", cl->self, cl->addr);
	return 0;
}

void
cluster_stop(struct cluster *cl)
{
	if (cl == NULL)
		return;
	atomic_store(&cl->stop, true);
	nl_server_stop(cl->srv);
	cl->srv = NULL;
	cluster_heartbeat_stop(cl);
	pthread_mutex_lock(&cl->mu);
	pthread_cond_broadcast(&cl->cv);
	while (cl->threads > 0)
		pthread_cond_wait(&cl->cv, &cl->mu);
	pthread_mutex_unlock(&cl->mu);
}

int
cluster_node_memory(struct cluster *cl, const char *node, int64_t *available,
                    int64_t *total)
{
	long long total_kb, avail_kb;
	struct node_row n;

	*available = *total = -1;
	if (cl == NULL || node == NULL || node[0] == '\0') {
		if (meminfo_host_kb(&total_kb, &avail_kb) < 0)
			return -1;
		*available = avail_kb * 1024;
		*total = total_kb * 1024;
		return 0;
	}
	if (store_node_get(cl->c->store, node, &n) != 0 || n.last_seen == 0)
		return -1;
	*available = n.mem_available;
	*total = n.mem_bytes;
	return 0;
}
