/*
 * orch's inside: the handle both drivers share and the table of a
 * driver's calls, one per function of orch.h.  orch.c checks nothing a
 * driver checks and forwards each call to o->ops; a driver keeps what
 * only it needs behind o->priv.
 */
#ifndef ORCH_INTERNAL_H
#define ORCH_INTERNAL_H

#include "orch/orch.h"

#define ORCH_INSTANCE_LEN 32

struct orch_ops {
	const char *name;             /* "docker" | "swarm" */
	void (*free)(struct orch *o); /* o->priv; may be NULL */
	int (*ping)(struct orch *o, char msg[DOCKER_MSG_LEN]);
	bool (*is_up)(struct orch *o);
	int (*create)(struct orch *o, const struct orch_spec *spec,
	              orch_prepare_fn prepare, void *arg, char id[72],
	              char node[ORCH_NODE_LEN], char msg[DOCKER_MSG_LEN]);
	int (*start)(struct orch *o, const char *name,
	             char msg[DOCKER_MSG_LEN]);
	int (*stop)(struct orch *o, const char *name, int grace_s,
	            char msg[DOCKER_MSG_LEN]);
	int (*remove)(struct orch *o, const char *name,
	              char msg[DOCKER_MSG_LEN]);
	int (*inspect)(struct orch *o, const char *name, struct orch_state *st,
	               char msg[DOCKER_MSG_LEN]);
	int (*pause)(struct orch *o, const char *name, bool pause,
	             char msg[DOCKER_MSG_LEN]);
	int (*logs_tail)(struct orch *o, const char *name, int lines, char *out,
	                 size_t len, char msg[DOCKER_MSG_LEN]);
	int (*list)(struct orch *o, const char *label, const char *value,
	            void (*fn)(const char *name, const struct jv *labels,
	                       void *),
	            void *arg, char msg[DOCKER_MSG_LEN]);
	int (*events)(struct orch *o, const char *label, const char *value,
	              int64_t since,
	              void (*fn)(const struct orch_event *, void *), void *arg,
	              const atomic_bool *stop);
	int (*exec_create)(struct orch *o, const struct docker_exec_spec *s,
	                   char id[160], char msg[DOCKER_MSG_LEN]);
	int (*exec_start)(struct orch *o, const char *id, bool tty, int *fd,
	                  char msg[DOCKER_MSG_LEN]);
	int (*exec_resize)(struct orch *o, const char *id, int cols, int rows,
	                   char msg[DOCKER_MSG_LEN]);
	int (*exec_inspect)(struct orch *o, const char *id, bool *running,
	                    int *exit_code, char msg[DOCKER_MSG_LEN]);
	int (*sup_connect)(struct orch *o, const char *sandbox_id,
	                   const char *node, int64_t deadline, int *fd,
	                   struct err *e);
	int (*target)(struct orch *o, const char *sandbox_id, const char *node,
	              const char *ip, int port, struct orch_target *out);
	int (*move)(struct orch *o, const char *name, const char *node,
	            char msg[DOCKER_MSG_LEN]);
	int (*nodes)(struct orch *o,
	             void (*fn)(const struct orch_node *, void *), void *arg,
	             char msg[DOCKER_MSG_LEN]);
};

/* What every driver has; made by orch_new, freed by orch_free. */
struct orch {
	const struct config *cfg;
	struct docker *docker; /* the local engine (swarm: the manager's) */
	struct store *store;
	char instance[ORCH_INSTANCE_LEN]; /* labels our containers/services */
	struct nodelink *nl;              /* swarm: set by orch_set_nodelink */
	const struct orch_ops *ops;
	void *priv; /* the driver's own state */
};

/*
 * The docker driver's calls (orch_docker.c): the swarm driver may use
 * them for what runs on the manager's own engine.
 */
extern const struct orch_ops orch_docker_ops;

/*
 * Sets o->ops (and o->priv) to the swarm driver (orch_swarm.c); -1 with
 * e when it cannot (say, the engine is not a swarm manager).  orch.c
 * has a weak stand-in that fails with "swarm driver not built", until
 * orch_swarm.c is linked in.
 */
int orch_swarm_ops_init(struct orch *o, struct err *e);

#endif
