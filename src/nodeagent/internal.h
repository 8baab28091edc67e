/* Shared by the node agent's own files only. */
#ifndef NODEAGENT_INTERNAL_H
#define NODEAGENT_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "docker/docker.h"
#include "lib/err.h"
#include "lib/jv.h"
#include "nodelink/nodelink.h"

#define AGENT_STREAM_THREADS 128   /* stream workers at once */
#define AGENT_PROXY_CONNS    64    /* proxy relays at once, all sandboxes */
#define AGENT_PROXY_ADDR     16    /* … from one sandbox address */
#define AGENT_CMD_MAX        64    /* words of an exec's command */
#define AGENT_ENV_MAX        256   /* entries of an exec's environment */
#define AGENT_ARG_MAX        4096  /* bytes of one of them */
#define AGENT_LOG_LINES_MAX  2000  /* sb_logs_tail's lines */
#define AGENT_DIAL_MS        5000  /* preview and supervisor connects */
#define AGENT_DRAIN_MS       30000 /* a refused tar_in's rest is read */
#define AGENT_TAR_MAX        (64ll << 30) /* tar_in's bytes_max ceiling */
#define AGENT_RELAY_IDLE_S   600 /* a proxy relay with no byte either way */
#define AGENT_RENEW_S        (30 * 86400) /* renewed when less is left */
#define AGENT_STOP_WAIT_MS   5000         /* workers waited for at stop */

/* The sandbox network as the control plane describes it (enroll). */
struct agent_net {
	char name[128];
	char subnet[64];
	char gateway[64];
	char bridge[32];
	char instance[32];
	unsigned proxy_port;
};

struct agent {
	const struct config *cfg;
	struct docker *d;
	struct nodelink *nl;     /* under mu once serving: agent_nl() */
	struct nodelink *nl_old; /* the one before a renewal */
	struct nl_server *srv;
	char dir[PATH_MAX]; /* <data>/state/node */
	char control[128];  /* the control plane's nodelink address */
	char name[64];      /* this node's (the certificate's CN) */
	struct agent_net net;
	/* The cluster's addresses the sandboxes may never reach. */
	pthread_mutex_t mu;  /* guards cluster */
	struct jv *cluster;  /* array of strings */
	char swarm_id[64];   /* the engine's facts (agent_engine_refresh), */
	char engine_api[16]; /* under mu */
	char runtime[64];
	/* proxyrelay.c: relays open, in all and per sandbox address */
	unsigned relays;
	struct agent_relay_addr {
		uint32_t ip;
		unsigned n;
	} relay_addrs[AGENT_PROXY_CONNS];
	atomic_bool stop;
	atomic_int workers; /* stream threads and proxy relays */
	/* proxyrelay.c */
	int relay_fd;
	pthread_t relay_thread;
	bool relay_on;
};

/* agent.c */
/* The credentials now (a renewal replaces them). */
struct nodelink *agent_nl(struct agent *a);
extern const struct nl_op agent_ops[];
extern const size_t agent_nops;
/* A sandbox id as the ops take it: [0-9A-Za-z]{1,64}. */
bool agent_id_ok(const char *id);
/* <data>/workspaces/<id> (id checked by the caller). */
void agent_ws_path(const struct agent *a, const char *id, char *out,
                   size_t len);
/* The workspace of sandbox id, in out: 400 for an id that is not one,
 * 404 when this node has no workspace (a directory) of it; -1 with e. */
int agent_ws_find(const struct agent *a, const char *id, char *out, size_t len,
                  struct err *e);
/* Starts fn(arg) detached, counted in a->workers; -1 past the cap. */
int agent_spawn(struct agent *a, void *(*fn)(void *), void *arg);
void agent_worker_done(struct agent *a);
/*
 * A stream op's worker: a socketpair, one end in *job_fd (set before
 * fn(job) starts, agent_spawn) and the other in *fd, the nodelink
 * server's.  -1 with e (429 past the worker cap) and nothing left open;
 * job is the caller's to free then.
 */
int agent_stream_start(struct agent *a, void *(*fn)(void *), void *job,
                       int *job_fd, int *fd, struct err *e);

/* ops.c: containers, exec, images, facts */
/* The engine's facts asked again (the main loop, every SBNET_CHECK_S). */
void agent_engine_refresh(struct agent *a);
int agent_op_facts(void *arg, const struct nl_peer *p, const struct jv *req,
                   struct jv **ans, struct err *e);
int agent_op_sb_inspect(void *arg, const struct nl_peer *p,
                        const struct jv *req, struct jv **ans, struct err *e);
int agent_op_sb_pause(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
int agent_op_sb_postart(void *arg, const struct nl_peer *p,
                        const struct jv *req, struct jv **ans, struct err *e);
int agent_op_sb_logs_tail(void *arg, const struct nl_peer *p,
                          const struct jv *req, struct jv **ans, struct err *e);
int agent_op_exec_create(void *arg, const struct nl_peer *p,
                         const struct jv *req, struct jv **ans, struct err *e);
int agent_op_exec_resize(void *arg, const struct nl_peer *p,
                         const struct jv *req, struct jv **ans, struct err *e);
int agent_op_exec_inspect(void *arg, const struct nl_peer *p,
                          const struct jv *req, struct jv **ans, struct err *e);
int agent_op_image_has(void *arg, const struct nl_peer *p, const struct jv *req,
                       struct jv **ans, struct err *e);
/* The container of a sandbox's service name ("sbx-<id>") on this engine,
 * running first: its id, or -1 with 404. */
int agent_container(struct agent *a, const char *name, char id[72],
                    struct err *e);

/* wsops.c: a sandbox's files (wsfs beneath its workspace) */
int agent_op_ws_stat(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, struct err *e);
int agent_op_ws_read(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, struct err *e);
int agent_op_ws_write(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
int agent_op_ws_list(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, struct err *e);
int agent_op_ws_delete(void *arg, const struct nl_peer *p, const struct jv *req,
                       struct jv **ans, struct err *e);
int agent_op_ws_mkdir(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
int agent_op_ws_usage(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
int agent_op_ws_trash(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
/* {sandbox, dir?, from, to}: wsfs_move beneath dir of the workspace. */
int agent_op_ws_rename(void *arg, const struct nl_peer *p, const struct jv *req,
                       struct jv **ans, struct err *e);

/* streams.c */
int agent_op_exec_start(void *arg, const struct nl_peer *p,
                        const struct jv *req, struct jv **ans, int *fd,
                        struct err *e);
int agent_op_sup(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, int *fd, struct err *e);
int agent_op_preview(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, int *fd, struct err *e);
int agent_op_events(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, int *fd, struct err *e);
/* tarops.c */
int agent_op_tar_out(void *arg, const struct nl_peer *p, const struct jv *req,
                     struct jv **ans, int *fd, struct err *e);
int agent_op_tar_in(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, int *fd, struct err *e);
/* A restore here: {sandbox, bytes_max}, a tar of the app's tree into
 * workspace/app.new (synced); then the unary {sandbox, drop?}:
 * app.new exchanged with workspace/app, the old tree removed (drop:
 * app.new only removed). */
int agent_op_app_in(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, int *fd, struct err *e);
int agent_op_app_swap(void *arg, const struct nl_peer *p, const struct jv *req,
                      struct jv **ans, struct err *e);
int agent_op_image_load(void *arg, const struct nl_peer *p,
                        const struct jv *req, struct jv **ans, int *fd,
                        struct err *e);
/* gitops.c: status, diff, commit through a git helper of this node */
int agent_op_git(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, int *fd, struct err *e);
/* Writes the trailer line {"ok",…}\n to fd, then half-closes it and
 * reads (and drops) what the client still sends, AGENT_DRAIN_MS at
 * most. */
void agent_trailer(int fd, const struct err *e, int64_t bytes);

/* nodenet.c */
/* Reads and checks a network object (enroll's, or network.json). */
int agent_net_parse(const struct jv *o, struct agent_net *out, struct err *e);
/* Makes <net>-cfg (config-only) when missing and installs the egress
 * table with the cluster set; -1 with e. */
int agent_net_ensure(struct agent *a, struct err *e);
/* The cluster's addresses changed (the facts request's "cluster"). */
void agent_net_cluster(struct agent *a, const struct jv *addrs);

/* proxyrelay.c */
int agent_relay_start(struct agent *a, struct err *e);
void agent_relay_stop(struct agent *a);

#endif
