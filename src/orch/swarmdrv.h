/*
 * The swarm driver's inside, shared by its files: orch_swarm.c (the
 * services: create with the placement probe, start, stop, inspect…)
 * and orch_swarmnode.c (what only a node can do: its agent's calls,
 * exec, the supervisor's socket, previews, events).
 */
#ifndef ORCH_SWARMDRV_H
#define ORCH_SWARMDRV_H

#include <pthread.h>

#include "docker/swarm.h"
#include "lib/jv.h"
#include "orch/internal.h"

#define SWD_NAMES       64    /* node id -> name entries cached */
#define SWD_POLL_MS     50    /* /tasks is read this often while waiting */
#define SWD_WAIT_MS     60000 /* a placement or a start waits this long */
#define SWD_PROBE_MEM   (16 << 20)
#define SWD_NODE_PREFIX "node.labels.sandboxd.node=="

struct swd {
	char self_id[64];              /* the manager's swarm node id */
	char self_name[ORCH_NODE_LEN]; /* its sandboxd.node label */
	pthread_mutex_t mu;            /* names, tunnel */
	struct {
		char id[64];
		char name[ORCH_NODE_LEN];
	} names[SWD_NAMES];
	size_t nnames;
	struct nl_tunnel *tunnel; /* made on the first remote preview */
};

/* Where a service's current task is. */
struct swd_where {
	bool has_task;
	struct swarm_task task;
	char node[ORCH_NODE_LEN]; /* "" the manager; set only with a task */
};

static inline struct swd *
swd_of(struct orch *o)
{
	return o->priv;
}

/* orch_swarmwhere.c: the node's name ("" for the manager's own) of a
 * swarm node id. */
int swd_node_name(struct orch *o, const char *node_id, char name[ORCH_NODE_LEN],
                  char msg[DOCKER_MSG_LEN]);
/* The service's current task and its node; DOCKER_NOT_FOUND when the
 * service is not there. */
int swd_where(struct orch *o, const char *name, struct swd_where *w,
              char msg[DOCKER_MSG_LEN]);

/* The node's workspace bind "<its data_dir>/workspaces/<id>:/home/sandbox"
 * (node "": this host's). */
int swd_bind_for(struct orch *o, const char *node, const char *sandbox_id,
                 char *out, size_t len, char msg[DOCKER_MSG_LEN]);
int swd_list(struct orch *o, const char *label, const char *value,
             void (*fn)(const char *, const struct jv *, void *), void *arg,
             char msg[DOCKER_MSG_LEN]);
/* Re-pins the service to node: the constraint and the bind's source. */
int swd_move(struct orch *o, const char *name, const char *node,
             char msg[DOCKER_MSG_LEN]);

/* A service's name as agents name the sandbox ("sbx-<id>"), and back. */
void swd_agent_name(struct orch *o, const char *name, char out[80]);
void swd_service_name(struct orch *o, const char *agent_name, char out[80]);

/* orch_swarmnode.c: a unary call to node's agent, mapped to our codes. */
int swd_call(struct orch *o, const char *node, struct jv *req, struct jv **ans,
             char msg[DOCKER_MSG_LEN]);
/* The agent's sb_inspect of the service's container on node. */
int swd_remote_inspect(struct orch *o, const char *node, const char *name,
                       struct docker_state *st, char msg[DOCKER_MSG_LEN]);
int swd_remote_postart(struct orch *o, const char *node, const char *name,
                       int64_t memory, char msg[DOCKER_MSG_LEN]);
int swd_remote_pause(struct orch *o, const char *node, const char *name,
                     bool pause, char msg[DOCKER_MSG_LEN]);
int swd_remote_logs(struct orch *o, const char *node, const char *name,
                    int lines, char *out, size_t len, char msg[DOCKER_MSG_LEN]);

int swd_exec_create(struct orch *o, const struct docker_exec_spec *s,
                    char id[160], char msg[DOCKER_MSG_LEN]);
int swd_exec_start(struct orch *o, const char *id, bool tty, int *fd,
                   char msg[DOCKER_MSG_LEN]);
int swd_exec_resize(struct orch *o, const char *id, int cols, int rows,
                    char msg[DOCKER_MSG_LEN]);
int swd_exec_inspect(struct orch *o, const char *id, bool *running,
                     int *exit_code, char msg[DOCKER_MSG_LEN]);
int swd_sup_connect(struct orch *o, const char *sandbox_id, const char *node,
                    int64_t deadline, int *fd, struct err *e);
int swd_target(struct orch *o, const char *sandbox_id, const char *node,
               const char *ip, int port, struct orch_target *out);
int swd_events(struct orch *o, const char *label, const char *value,
               int64_t since, void (*fn)(const struct orch_event *, void *),
               void *arg, const atomic_bool *stop);
void swd_tunnel_stop(struct orch *o);
/* orch_swarmev.c: every node, with its reservations and address. */
int swd_nodes(struct orch *o, void (*fn)(const struct orch_node *, void *),
              void *arg, char msg[DOCKER_MSG_LEN]);

#endif
