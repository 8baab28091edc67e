/* Shared by cluster/'s own files only (and its unit tests). */
#ifndef CLUSTER_INTERNAL_H
#define CLUSTER_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cluster/cluster.h"
#include "docker/docker.h"
#include "store/store.h"

struct nl_server;

/* A drain in memory: what GET /v1/nodes shows of it. */
struct cluster_job {
	char node[64];
	char to[64];    /* asked for, or "" (picked per sandbox) */
	char state[16]; /* running done failed */
	int total, moved, failed, skipped;
	char current[ULID_LEN + 1]; /* the sandbox being moved, or "" */
	char error[256];
	int64_t started_at, finished_at;
};

/* What the heartbeats keep of a node between two beats. */
struct cluster_live {
	char name[64];
	int misses;
	char error[256]; /* why its join did not finish, or "" */
};

struct cluster {
	struct core *c;
	struct nodelink *nl;
	struct nl_server *srv;
	char dir[PATH_MAX]; /* <data>/state/nodeca */
	char self[64];      /* the manager's node name */
	char addr[128];     /* what agents dial: SANDBOXD_CLUSTER_ADDR */
	pthread_mutex_t mu; /* live[], jobs[], threads */
	pthread_cond_t cv;  /* threads went to 0 */
	struct cluster_live live[CLUSTER_NODES_MAX];
	struct cluster_job jobs[CLUSTER_NODES_MAX];
	int threads; /* detached join and drain threads running */
	pthread_t hb;
	bool hb_started;
	atomic_bool stop;
};

/* The slot of node's heartbeat figures (made when missing; NULL when
 * the table is full).  Under cl->mu. */
struct cluster_live *cluster_live_get(struct cluster *cl, const char *node);
/* The drain job of node (NULL: none), under cl->mu. */
struct cluster_job *cluster_job_get(struct cluster *cl, const char *node,
                                    bool make);
/* GET /v1/nodes's item of node name (404 node_not_found). */
int cluster_node_json(struct cluster *cl, const char *name, struct jv **out,
                      struct err *e);
/* A detached thread counted in cl->threads (cluster_stop waits for it).
 * -1 when it cannot start (fn not called). */
int cluster_thread(struct cluster *cl, void *(*fn)(void *), void *arg);
void cluster_thread_done(struct cluster *cl);
/* The sandbox's service pinned to node (orch_move); DOCKER_OK too when
 * it has no service (its next start makes one there). */
int cluster_repin(struct cluster *cl, const char *sandbox_id, const char *node,
                  char msg[DOCKER_MSG_LEN]);
/* Sleeps ms, or less when the cluster stops: false once it stops. */
bool cluster_nap(struct cluster *cl, int64_t ms);

/* join.c: the enroll op of the server (nodelink's unary signature). */
struct nl_peer;
int cluster_op_enroll(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
/* join.c: the renew op (a node's certificate, by its current one). */
int cluster_op_renew(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, struct err *e);
/* nodes.c */
int cluster_op_proxy(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, int *fd, struct err *e);
int cluster_heartbeat_start(struct cluster *cl);
void cluster_heartbeat_stop(struct cluster *cl);
/* The sandboxes of node marked stopped with reason node_down. */
void cluster_node_went_down(struct cluster *cl, const char *node);
/* The cluster's addresses (the control plane's, every node's) as a
 * JSON array of strings: the egress cluster sets' elements. */
struct jv *cluster_addr_list(struct cluster *cl);
/* An agent's facts (nl_call "facts", the cluster's addresses sent
 * along), 0 or -1 with e. */
int cluster_facts(struct cluster *cl, const struct node_row *n,
                  struct jv **facts, struct err *e);

/*
 * swarmops.c: what the cluster asks of Swarm, over docker/swarm.h.
 * Node labels: value NULL removes the label.  availability: "active",
 * "pause", "drain".  The msg is the engine's.
 */
int cluster_swarm_label(struct cluster *cl, const char *swarm_id,
                        const char *key, const char *value,
                        char msg[DOCKER_MSG_LEN]);
int cluster_swarm_availability(struct cluster *cl, const char *swarm_id,
                               const char *availability,
                               char msg[DOCKER_MSG_LEN]);
/* This engine's swarm node id, whether it is a manager, the worker join
 * token and the manager's swarm address (host:2377). */
struct cluster_swarm_info {
	char node_id[64];
	bool manager;
	char worker_token[256];
	char manager_addr[128];
};
int cluster_swarm_info(struct cluster *cl, struct cluster_swarm_info *out,
                       char msg[DOCKER_MSG_LEN]);
/* Swarm's state of node id (ready down unknown): "" when not listed. */
int cluster_swarm_state(struct cluster *cl, const char *swarm_id,
                        char state[16], char msg[DOCKER_MSG_LEN]);
/* `docker save` of image into fd (not closed). */
int cluster_image_save(struct cluster *cl, const char *image, int fd,
                       char msg[DOCKER_MSG_LEN]);

/* moves.c: the journal's resume, with the steps given (unit-tested on a
 * real store with steps of its own). */
struct cluster_move_ops {
	/* The sandbox's service and row to m->dst. */
	int (*repin)(void *arg, const struct move_row *m, struct err *e);
	/* The source's copy (on m->src) to that node's trash. */
	int (*trash_source)(void *arg, const struct move_row *m, struct err *e);
};
/* Every open move brought to done or failed; *n how many. */
int cluster_moves_resume(struct store *s, const struct cluster_move_ops *ops,
                         void *arg, int *n);
/* The production steps (drain.c). */
extern const struct cluster_move_ops cluster_move_steps;

#endif
