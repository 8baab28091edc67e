/*
 * cluster: the control plane's side of more than one server
 * (SANDBOXD_ORCHESTRATOR=swarm).  Nodes as the product sees them: the
 * join command and the enrollment of a node agent, heartbeats and a node
 * that goes down, the drain of a node (its sandboxes moved, journaled)
 * and the restore elsewhere of a sandbox whose node is gone.
 *
 * The handle is made by serve() in swarm mode only (core->cluster stays
 * NULL with the docker driver, and the API then answers 409 not_swarm).
 * cluster_start opens the CA and the control plane's nodelink server
 * (enroll from anyone holding a join token; proxy and the
 * certificates' renew from nodes), labels
 * the manager's own node, resumes the moves' journal and starts the
 * heartbeat thread; cluster_stop ends and joins every thread it made.
 * The API calls may be made from any thread.  Errors are for the API's
 * envelope: 404 node_not_found, 409 node_busy, 409 node_not_down,
 * 409 no_snapshot, 503 node_down.
 */
#ifndef CLUSTER_CLUSTER_H
#define CLUSTER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/jv.h"
#include "sandbox/core.h"

#define CLUSTER_NODES_MAX     64   /* nodes a control plane keeps */
#define CLUSTER_SANDBOXES_MAX 4096 /* sandboxes of one node marked down */
#define CLUSTER_TOKEN_TTL_S   3600 /* a join token's life */
#define CLUSTER_MISSES_DOWN   3    /* unanswered heartbeats: node down */
#define CLUSTER_JOIN_WAIT_S   300  /* a joining node's wait for Swarm */
#define CLUSTER_IMAGE_PUSH_S  1800 /* an image's save/load to a node */
#define CLUSTER_NODEDIR       "state/nodeca" /* under the data directory */

struct cluster;

/*
 * Makes the CA and the control plane's certificate in
 * <data>/state/nodeca when missing, and opens them.  -1 with e.
 */
int cluster_new(struct cluster **out, struct core *c, struct err *e);
/* The server on SANDBOXD_CLUSTER_PORT, the manager's labels, the moves'
 * journal resumed, the heartbeats.  -1 with e (nothing left running). */
int cluster_start(struct cluster *cl, struct err *e);
void cluster_stop(struct cluster *cl);
void cluster_free(struct cluster *cl);
/* The control plane's credentials (for orch_set_nodelink and
 * wsnode_set_nodelink); owned by cl. */
struct nodelink *cluster_nodelink(struct cluster *cl);
/* This manager's node name (SANDBOXD_NODE_NAME or the hostname). */
const char *cluster_self(const struct cluster *cl);

/* POST /v1/nodes/join-command: {"command","token","expires_at"}. */
int cluster_join_command(struct cluster *cl, struct jv **out, struct err *e);
/* GET /v1/nodes: {"nodes":[…]}, the manager first. */
int cluster_nodes(struct cluster *cl, struct jv **out, struct err *e);
/* POST /v1/nodes/{name}/drain: the job started; *out the node's item. */
int cluster_drain(struct cluster *cl, const char *name, const char *to,
                  struct jv **out, struct err *e);
/*
 * POST /v1/sandboxes/{id}/restore-elsewhere: a sandbox whose node is
 * down rebuilt on node to ("" or NULL: the manager) from the app's
 * snapshot snap (NULL: its newest).  The sandbox stays stopped.  *out
 * says what was used and what was lost.
 */
int cluster_restore_elsewhere(struct cluster *cl, const char *owner,
                              const char *sandbox_id, const char *to,
                              const char *snap, struct jv **out, struct err *e);
/*
 * The reaper's view: a node's last reported available memory and total
 * (heartbeats; the manager: this host's), -1 when unknown.
 */
int cluster_node_memory(struct cluster *cl, const char *node,
                        int64_t *available, int64_t *total);

/* Pure parts (rules.c), for the unit tests. */
/* "sandboxd node join --control ADDR --token TOKEN": -1 when too long. */
int cluster_join_command_text(const char *addr, const char *token, char *out,
                              size_t len);
/*
 * A node's status after a heartbeat: status as stored (joining ready
 * draining drained down), misses the unanswered heartbeats in a row,
 * swarm_state Swarm's (ready, down, unknown, "" not known).  A node is
 * down after CLUSTER_MISSES_DOWN misses or when Swarm says down; a down
 * node that answers (and Swarm does not say down) is ready again; the
 * other statuses are kept.
 */
const char *cluster_node_next(const char *status, int misses,
                              const char *swarm_state);
/* What the journal's resume does with a move left in state. */
enum cluster_move_step {
	CLUSTER_MOVE_NOTHING,  /* done or failed: closed */
	CLUSTER_MOVE_ROLLBACK, /* sleeping, copying: stays on the source */
	CLUSTER_MOVE_REPIN,    /* copied: re-pin to the target, finish */
	CLUSTER_MOVE_FINISH,   /* repinned: the source's copy to its trash */
};
enum cluster_move_step cluster_move_resume_step(const char *state);
/* A node's name: 1 to 63 of [A-Za-z0-9._-], starting with a letter or
 * a digit. */
bool cluster_node_name_ok(const char *name);

#endif
