/*
 * swarm: the Docker Engine API's Swarm calls (swarm.c, swarmnode.c), on
 * the manager's engine, as docker.h's calls are: synchronous, any
 * thread, DOCKER_OK / DOCKER_NOT_FOUND / DOCKER_DOWN / DOCKER_ERROR /
 * DOCKER_CONFLICT, msg saying what.
 *
 * A sandbox is a one-replica service ("sbx-<id>") with RestartPolicy
 * "none" and an dnsrr endpoint (no VIP: this kernel may have no IPVS).
 * The pure parts (a spec to the service's JSON, a task or node from the
 * engine's JSON) are exposed so the unit tests and the fuzz target reach
 * them without an engine.
 */
#ifndef DOCKER_SWARM_H
#define DOCKER_SWARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "docker/docker.h"
#include "lib/jv.h"

#define SWARM_MAX_CONSTRAINTS 8
#define SWARM_MAX_TASKS       64 /* tasks read per service (history 2-5) */
#define SWARM_UPDATE_TRIES    8  /* read-modify-write retries on a race */

/*
 * A service made of a container spec: c's image, hostname, user, env,
 * labels (on the service and its container), binds ("src:dst[:ro]" as
 * bind mounts), tmpfs ("/tmp:size=512m,mode=1777" as tmpfs mounts),
 * memory (the limit), pids, nofile, read_only, entrypoint/cmd, workdir,
 * init and network (the task's network) are used; runtime and restart
 * are not (a service has neither: see docs/design.md).
 */
struct swarm_service {
	struct docker_spec c;
	const char *constraints[SWARM_MAX_CONSTRAINTS]; /* NULL-ended */
	int64_t reserve_bytes; /* Reservations.MemoryBytes; 0 none */
	int replicas;          /* 0 or 1 */
	int stop_grace_s;      /* 0: the engine's default (10 s) */
	uint64_t force_update; /* TaskTemplate.ForceUpdate */
};

/* The service as inspected. */
struct swarm_service_state {
	char id[72];
	uint64_t version; /* Version.Index, for ?version= */
	int replicas;
	uint64_t force_update;
};

/* A task (GET /tasks). */
struct swarm_task {
	char id[72];
	char service_id[72];
	char node_id[64];
	char container_id[72];
	char state[16]; /* new pending assigned … running complete failed … */
	char desired[16]; /* running shutdown remove */
	char err[160];    /* Status.Err: "no suitable node (…)" */
	char message[96]; /* Status.Message */
	int exit_code;    /* Status.ContainerStatus.ExitCode */
	int64_t slot;
	uint64_t version;   /* Version.Index: the newest task is the largest */
	int64_t created_ms; /* CreatedAt, unix ms (0 unknown) */
	int64_t updated_ms; /* Status.Timestamp, unix ms */
};

/* What a task's state means for a sandbox. */
enum swarm_phase {
	SWARM_NONE,     /* no task */
	SWARM_PENDING,  /* not placed or not running yet */
	SWARM_NO_NODE,  /* pending with Status.Err: no node can take it */
	SWARM_RUNNING,  /* running */
	SWARM_FAILED,   /* ended by itself (failed, rejected, complete) */
	SWARM_SHUTDOWN, /* ended because we asked (shutdown, removed) */
};

/* A node (GET /nodes). */
struct swarm_node {
	char id[64];
	char hostname[128];
	char name[64];         /* its sandboxd.node label, "" none */
	char state[16];        /* ready down unknown disconnected */
	char availability[16]; /* active pause drain */
	char role[16];         /* manager worker */
	char addr[64];         /* Status.Addr */
	bool agent;            /* label sandboxd.agent=1 */
	bool drain;            /* label sandboxd.drain=1 */
	bool disk_full;        /* label sandboxd.disk=full */
	bool leader;
	int64_t mem_bytes; /* Description.Resources.MemoryBytes */
	uint64_t version;
};

/* GET /info and (as a manager) GET /swarm. */
struct swarm_info {
	char state[16]; /* inactive pending active error locked */
	char node_id[64];
	char node_addr[64];
	char cluster_id[64];
	bool manager;           /* ControlAvailable */
	char worker_token[128]; /* "" unless manager */
	char manager_token[128];
};

int swarm_info(struct docker *d, struct swarm_info *out,
               char msg[DOCKER_MSG_LEN]);

/* Services.  name is the service's name or id. */
struct jv *swarm_service_json(const struct swarm_service *s); /* pure */
int swarm_service_create(struct docker *d, const struct swarm_service *s,
                         char id[72], char msg[DOCKER_MSG_LEN]);
/* spec (may be NULL) gets the service's Spec (the caller frees it). */
int swarm_service_inspect(struct docker *d, const char *name,
                          struct swarm_service_state *st, struct jv **spec,
                          char msg[DOCKER_MSG_LEN]);
/*
 * Read-modify-write of the whole spec: edit changes spec in place (0, or
 * -1 with msg to give up), then the update goes with the version read;
 * a lost race ("update out of sequence") starts again, up to
 * SWARM_UPDATE_TRIES times.
 */
typedef int (*swarm_edit_fn)(struct jv *spec, void *arg,
                             char msg[DOCKER_MSG_LEN]);
int swarm_service_update(struct docker *d, const char *name, swarm_edit_fn edit,
                         void *arg, char msg[DOCKER_MSG_LEN]);
/* Edits (pure, for swarm_service_update's edit): */
int swarm_spec_set_replicas(struct jv *spec, int replicas, bool force);
/* Replaces constraints that start with prefix (e.g.
 * "node.labels.sandboxd.node==") by c (NULL: only removes them). */
int swarm_spec_set_constraint(struct jv *spec, const char *prefix,
                              const char *c);
/* Sets the Source of the bind mount whose Target is target. */
int swarm_spec_set_bind(struct jv *spec, const char *target,
                        const char *source);
int swarm_service_remove(struct docker *d, const char *name,
                         char msg[DOCKER_MSG_LEN]);
/* Every service with label=value: its name, id and labels (borrowed). */
int swarm_service_list(struct docker *d, const char *label, const char *value,
                       void (*fn)(const char *name, const char *id,
                                  const struct jv *labels, void *),
                       void *arg, char msg[DOCKER_MSG_LEN]);

/* Every service with label=value: its replicas and running tasks
 * (GET /services?status=true; API 1.41). */
int swarm_service_counts(struct docker *d, const char *label, const char *value,
                         void (*fn)(const char *name, int replicas, int running,
                                    void *),
                         void *arg, char msg[DOCKER_MSG_LEN]);

/* Tasks of a service (name or id), at most max, newest first. */
int swarm_tasks(struct docker *d, const char *service, struct swarm_task *out,
                size_t max, size_t *n, char msg[DOCKER_MSG_LEN]);
/* Pure: one task object; -1 when it is not one. */
int swarm_task_parse(const struct jv *t, struct swarm_task *out);
/* Pure: an array of tasks, sorted newest (highest version) first. */
size_t swarm_tasks_parse(const struct jv *arr, struct swarm_task *out,
                         size_t max);
/* The task that speaks for the service now: the newest one whose desired
 * state is running, else the newest; NULL when none. */
const struct swarm_task *swarm_task_current(const struct swarm_task *t,
                                            size_t n);
enum swarm_phase swarm_task_phase(const struct swarm_task *t);

/* Every running sandbox task (ContainerSpec label sandboxd.sandbox):
 * its node and its memory reservation. */
int swarm_task_reservations(struct docker *d,
                            void (*fn)(const char *node_id, int64_t reserve,
                                       void *),
                            void *arg, char msg[DOCKER_MSG_LEN]);

/* Nodes. */
int swarm_node_parse(const struct jv *n, struct swarm_node *out); /* pure */
int swarm_nodes(struct docker *d, void (*fn)(const struct swarm_node *, void *),
                void *arg, char msg[DOCKER_MSG_LEN]);
int swarm_node_inspect(struct docker *d, const char *id, struct swarm_node *out,
                       char msg[DOCKER_MSG_LEN]);
/*
 * Sets (value not NULL) or removes a label and, when availability is
 * not NULL, the availability ("active", "pause", "drain").
 */
int swarm_node_update(struct docker *d, const char *id, const char *label,
                      const char *value, const char *availability,
                      char msg[DOCKER_MSG_LEN]);

/* A container's memory limit and memory+swap (swarm sets no swap). */
int docker_container_update(struct docker *d, const char *id, int64_t memory,
                            int64_t memory_swap, char msg[DOCKER_MSG_LEN]);
/* The container's State.Pid (0 when not running). */
int docker_container_pid(struct docker *d, const char *id, int *pid,
                         char msg[DOCKER_MSG_LEN]);

/*
 * Images over a stream: `docker save` of id written to fd (*bytes
 * written), and `docker load` of the tar read from fd until EOF.
 */
int docker_image_save(struct docker *d, const char *id, int fd, int64_t *bytes,
                      char msg[DOCKER_MSG_LEN]);
int docker_image_load(struct docker *d, int fd, int64_t *bytes,
                      char msg[DOCKER_MSG_LEN]);

/*
 * swarmjoin.c: this engine joins the swarm whose manager is at remote
 * ("host:port") with a worker token, advertising advertise (an address of
 * this host; it also listens there on 2377); leaving is forced.
 */
int docker_swarm_join(struct docker *d, const char *advertise,
                      const char *remote, const char *token,
                      char msg[DOCKER_MSG_LEN]);
int docker_swarm_leave(struct docker *d, char msg[DOCKER_MSG_LEN]);
/* The API version in use ("1.41") and the engine's default runtime. */
int docker_engine_facts(struct docker *d, char api[16], char runtime[64],
                        char msg[DOCKER_MSG_LEN]);

#endif
