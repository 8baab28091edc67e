/*
 * orch: the orchestrator driver (SANDBOXD_ORCHESTRATOR).  Everything the
 * sandbox lifecycle asks of the thing that runs its containers goes
 * through here, by the sandbox's container name ("sbx-<id>", which is
 * also its swarm service's name), so that lifecycle, watch, the terminal
 * and the rest do not know which driver runs them.
 *
 *   docker: today's behaviour, each call the docker_* call of the same
 *           name on the local engine (orch_docker.c).
 *   swarm:  each sandbox a one-replica swarm service placed by Swarm's
 *           scheduler and pinned to the node holding its workspace
 *           (orch_swarm.c); what only a node can do (pause, exec, the
 *           supervisor's socket, logs, post-start checks) goes to that
 *           node's agent over nodelink, or to the local engine when the
 *           node is the manager itself.
 *
 * Calls return DOCKER_OK, DOCKER_NOT_FOUND, DOCKER_DOWN, DOCKER_ERROR,
 * DOCKER_CONFLICT (docker/docker.h), plus the codes below; msg says what.
 * Every call may be made from any thread.
 */
#ifndef ORCH_ORCH_H
#define ORCH_ORCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config/config.h"
#include "docker/docker.h"
#include "lib/err.h"
#include "store/store.h"

enum {
	ORCH_NODE_DOWN = -5,   /* the sandbox's node (or its agent) is gone */
	ORCH_NO_CAPACITY = -6, /* no node can take it (Status.Err says why) */
	ORCH_UNSUPPORTED = -7, /* this driver cannot (docker: move) */
};

#define ORCH_NODE_LEN 64 /* a node's name; "" is this host */

struct nodelink; /* nodelink/nodelink.h: the channel to node agents */
struct orch;

/*
 * A sandbox container's spec: docker_spec as lifecycle fills it today
 * (binds[0] is "<data_dir>/workspaces/<id>:/home/sandbox"; the swarm
 * driver rewrites the data_dir prefix to the chosen node's data_dir),
 * plus what a scheduler needs.
 */
struct orch_spec {
	struct docker_spec c;
	const char *sandbox_id;
	const char *image_id;  /* "sha256:…" (swarm: never pulled by tag) */
	int64_t reserve_bytes; /* swarm memory reservation (0: none) */
	const char *node;      /* NULL/"": let the orchestrator place it */
};

/* What a sandbox's container is, wherever it runs. */
struct orch_state {
	struct docker_state d;    /* as docker_inspect fills it */
	char node[ORCH_NODE_LEN]; /* "" on this host */
	char why[160];            /* swarm: the task's Status.Err, or "" */
};

/* How the edge reaches a sandbox's port (orch_target). */
struct orch_target {
	struct sockaddr_storage addr;
	socklen_t len;
	char preamble[96]; /* written before the first request byte; "" local */
	size_t preamble_len;
};

/* An event about a sandbox's container (orch_events). */
struct orch_event {
	char name[80];   /* the container/service name, "sbx-<id>" */
	char action[16]; /* start die oom pause unpause destroy node_down */
	int exit_code;
	char node[ORCH_NODE_LEN];
};

/* A node as the driver sees it (docker: one node, this host, "local"). */
struct orch_node {
	char name[ORCH_NODE_LEN];
	char swarm_id[64];
	char addr[64];         /* its nodelink address host:port ("" manager) */
	char state[16];        /* ready down unknown (Swarm's) */
	char availability[16]; /* active pause drain */
	bool manager;          /* the control plane's own node */
	int64_t mem_bytes;     /* Swarm's Description.Resources.MemoryBytes */
	int64_t reserved_bytes; /* sum of running tasks' reservations */
	int tasks;              /* running sandbox tasks */
};

int orch_new(struct orch **out, const struct config *cfg, struct docker *d,
             struct store *store, const char *instance, struct err *e);
void orch_free(struct orch *o);
/* The swarm driver's channel to agents; set by serve() once made. */
void orch_set_nodelink(struct orch *o, struct nodelink *nl);
const char *orch_name(const struct orch *o); /* "docker" | "swarm" */
bool orch_is_swarm(const struct orch *o);

/* The engine (and, with swarm, that this engine is a swarm manager). */
int orch_ping(struct orch *o, char msg[DOCKER_MSG_LEN]);
bool orch_is_up(struct orch *o);

/*
 * Creates the sandbox's container (docker) or service (swarm).  With
 * swarm and spec->node "", Swarm places it: a placement probe (the real
 * memory reservation, no bind mount) finds the node, then the service is
 * updated to the real spec pinned to that node.  node gets the node's
 * name ("" for this host).  Before the real spec goes in, prepare (may
 * be NULL) is called with the chosen node: it puts the workspace there
 * (wsnode_push), and its -1 fails the create.  id gets the container id
 * (docker) or the service id (swarm).
 */
typedef int (*orch_prepare_fn)(void *arg, const char *node, struct err *e);
int orch_create(struct orch *o, const struct orch_spec *spec,
                orch_prepare_fn prepare, void *arg, char id[72],
                char node[ORCH_NODE_LEN], char msg[DOCKER_MSG_LEN]);
/* Starts it and waits until it runs (swarm: replicas 1 with a forced
 * update, as Swarm makes no new task for a condition-none service
 * otherwise; then the node's post-start checks). */
int orch_start(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN]);
int orch_stop(struct orch *o, const char *name, int grace_s,
              char msg[DOCKER_MSG_LEN]);
int orch_remove(struct orch *o, const char *name, char msg[DOCKER_MSG_LEN]);
int orch_inspect(struct orch *o, const char *name, struct orch_state *st,
                 char msg[DOCKER_MSG_LEN]);
int orch_pause(struct orch *o, const char *name, bool pause,
               char msg[DOCKER_MSG_LEN]);
int orch_logs_tail(struct orch *o, const char *name, int lines, char *out,
                   size_t len, char msg[DOCKER_MSG_LEN]);
/* Every sandbox container/service of label=value (see docker_list). */
int orch_list(struct orch *o, const char *label, const char *value,
              void (*fn)(const char *name, const struct jv *labels, void *),
              void *arg, char msg[DOCKER_MSG_LEN]);
/* Streams events until *stop (see docker_events). */
int orch_events(struct orch *o, const char *label, const char *value,
                int64_t since, void (*fn)(const struct orch_event *, void *),
                void *arg, const atomic_bool *stop);

/*
 * A process in the running sandbox (the terminal): as docker_exec_*,
 * with the exec's id opaque ("<node>/<id>" for a remote one).  *fd is a
 * stream socket either way.
 */
int orch_exec_create(struct orch *o, const struct docker_exec_spec *s,
                     char id[160], char msg[DOCKER_MSG_LEN]);
int orch_exec_start(struct orch *o, const char *id, bool tty, int *fd,
                    char msg[DOCKER_MSG_LEN]);
int orch_exec_resize(struct orch *o, const char *id, int cols, int rows,
                     char msg[DOCKER_MSG_LEN]);
int orch_exec_inspect(struct orch *o, const char *id, bool *running,
                      int *exit_code, char msg[DOCKER_MSG_LEN]);

/*
 * A connected socket to the sandbox's supervisor (<ws>/.sandboxd/sock):
 * local, the O_PATH connect of supclient (ws/wsock.c); remote, the
 * agent's "sup" stream.  -1 with e (502 sandbox_unavailable, 503
 * node_down); a supervisor that did not accept by the deadline is
 * e->status WSOCK_UNRESPONSIVE (ws/wsock.h, code sandbox_unavailable),
 * which supclient's quiet table tells apart and answers as 502.
 */
int orch_sup_connect(struct orch *o, const char *sandbox_id, const char *node,
                     int64_t deadline, int *fd, struct err *e);

/*
 * Where the edge connects for sandbox:port.  Never blocks (the edge's
 * loop calls it): local, the container's IP; remote, the nodelink
 * tunnel's loopback listener with the preamble "SBX <id> <port>\n".
 */
int orch_target(struct orch *o, const char *sandbox_id, const char *node,
                const char *ip, int port, struct orch_target *out);

/* Re-pins the sandbox's service to node (swarm; docker: UNSUPPORTED). */
int orch_move(struct orch *o, const char *name, const char *node,
              char msg[DOCKER_MSG_LEN]);
/* Calls fn for every node. */
int orch_nodes(struct orch *o, void (*fn)(const struct orch_node *, void *),
               void *arg, char msg[DOCKER_MSG_LEN]);

#endif
