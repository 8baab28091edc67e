/*
 * docker: the container runtime driver, speaking the Docker Engine API
 * over its unix socket, through src/net/http.  Every call
 * is synchronous and may be made from any thread; each uses its own
 * connection.  Calls return DOCKER_OK, DOCKER_NOT_FOUND, DOCKER_DOWN (the
 * engine did not answer: socket missing, refused, timed out) or
 * DOCKER_ERROR (the engine answered with an error; msg says what).
 */
#ifndef DOCKER_DOCKER_H
#define DOCKER_DOCKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/jv.h"

enum {
	DOCKER_OK = 0,
	DOCKER_ERROR = -1,
	DOCKER_DOWN = -2,
	DOCKER_NOT_FOUND = -3,
	DOCKER_CONFLICT = -4,
};

#define DOCKER_MSG_LEN 256
#define DOCKER_MAX_KV  16

struct docker;

struct docker_kv {
	const char *key;
	const char *value;
};

/* What a sandbox container is made of; every field is borrowed. */
struct docker_spec {
	const char *name;
	const char *image;
	const char *hostname;
	const char *user;    /* "1000:1000" */
	const char *runtime; /* NULL or "" for the engine default */
	const char *network; /* NULL or "" for the default bridge */
	const char *binds[4];
	const char *env[DOCKER_MAX_KV];
	/* NULL, or NULL-ended: more "NAME=value" after env[] (an app's own
	 * configuration, which can hold more than DOCKER_MAX_KV) */
	const char *const *env_more;
	struct docker_kv labels[DOCKER_MAX_KV];
	const char *tmpfs[4]; /* "/tmp:size=512m,mode=1777" */
	int64_t memory_bytes;
	int64_t pids_limit;
	int64_t nofile;
	bool read_only;
	/* NULL-ended; entrypoint[0] NULL keeps the image's */
	const char *entrypoint[4];
	const char *cmd[8];  /* NULL-ended; cmd[0] NULL keeps the image's */
	const char *workdir; /* NULL or "" keeps the image's */
	const char *restart; /* "unless-stopped", …; NULL or "" is "no" */
	bool init;           /* the engine's init as PID 1 (signals, zombies) */
};

struct docker_state {
	char id[72];
	bool running;
	bool paused; /* running, and frozen by the cgroup freezer */
	bool oom_killed;
	int exit_code;
	char status[32]; /* created running exited … */
	char ip[64];
	char network_id[72]; /* the first network it is attached to */
	char image_id[80];   /* "sha256:…": the image it was made from */
};

/* A network as the engine describes it (the first IPv4 IPAM entry). */
struct docker_network {
	char id[72];
	char driver[32];
	char subnet[64];       /* "10.213.0.0/20", or "" */
	char gateway[64];      /* "" when IPAM names none */
	char bridge[32];       /* com.docker.network.bridge.name, or "" */
	char instance[32];     /* label sandboxd.instance, or "" */
	bool managed;          /* label sandboxd.network=true */
	bool icc;              /* inter-container traffic allowed */
	int containers;        /* attached (running) containers */
	char scope[16];        /* local swarm */
	bool config_only;      /* a configuration for config-from networks */
	char config_from[128]; /* the config-only network it is made from */
	bool attachable;       /* plain containers may join a swarm one */
};

/* A bridge network sandboxd makes for its sandboxes (borrowed strings). */
struct docker_network_spec {
	const char *name;
	const char *subnet;
	const char *gateway;
	const char *bridge;   /* the Linux bridge's name */
	const char *instance; /* labels the network as this daemon's */
	/* Swarm mode (swarm.h): a per-node config-only network, or the
	 * swarm-scoped network made from one (config_from: its name; then
	 * nothing else but name is sent, as the engine wants). */
	bool config_only;
	const char *config_from;
};

int docker_new(struct docker **out, const char *socket_path);
void docker_free(struct docker *d);

/* Pings the engine and picks the API version; DOCKER_OK when up. */
int docker_ping(struct docker *d, char msg[DOCKER_MSG_LEN]);
bool docker_is_up(struct docker *d);

int docker_create(struct docker *d, const struct docker_spec *spec, char id[72],
                  char msg[DOCKER_MSG_LEN]);
int docker_start(struct docker *d, const char *id, char msg[DOCKER_MSG_LEN]);
int docker_stop(struct docker *d, const char *id, int grace_s,
                char msg[DOCKER_MSG_LEN]);
/* Force-removes the container and its anonymous volumes. */
int docker_remove(struct docker *d, const char *id, char msg[DOCKER_MSG_LEN]);
int docker_inspect(struct docker *d, const char *id, struct docker_state *st,
                   char msg[DOCKER_MSG_LEN]);
/*
 * The end of a container's output (stdout and stderr, demuxed, in the
 * order written): at most len - 1 bytes of its last `lines` lines, bytes
 * that are not printable text as '?'.  The engine's answer is read up to
 * DOCKER_LOGS_MAX bytes.
 */
#define DOCKER_LOGS_MAX (256u << 10)
int docker_logs_tail(struct docker *d, const char *id, int lines, char *out,
                     size_t len, char msg[DOCKER_MSG_LEN]);
int docker_network_inspect(struct docker *d, const char *name,
                           struct docker_network *out,
                           char msg[DOCKER_MSG_LEN]);
/* Creates it with inter-container traffic off. */
int docker_network_create(struct docker *d,
                          const struct docker_network_spec *spec,
                          char msg[DOCKER_MSG_LEN]);
int docker_network_remove(struct docker *d, const char *name,
                          char msg[DOCKER_MSG_LEN]);
/* Calls fn with every IPv4 subnet of every network the engine has. */
int docker_network_subnets(struct docker *d,
                           void (*fn)(const char *cidr, void *arg), void *arg,
                           char msg[DOCKER_MSG_LEN]);
/*
 * Lists containers (running or not) carrying label=value; fn gets each
 * container's id and its labels object (borrowed).
 */
int docker_list(struct docker *d, const char *label, const char *value,
                void (*fn)(const char *id, const struct jv *labels, void *),
                void *arg, char msg[DOCKER_MSG_LEN]);
/*
 * Streams container events (from unix time since on) for containers
 * with label=value until the
 * engine closes the stream or *stop becomes true (checked about once a
 * second).  fn gets each event object.  Returns like the other calls.
 */
int docker_events(struct docker *d, const char *label, const char *value,
                  int64_t since, void (*fn)(const struct jv *ev, void *),
                  void *arg, const atomic_bool *stop);

/* images.c: what doctor, gc and backup ask. */
struct docker_image {
	char id[80];    /* "sha256:…" */
	char tag[256];  /* the first RepoTag, "" when dangling */
	char label[32]; /* its sandboxd.image label ("base"), or "" */
	bool dangling;  /* no tag */
	int64_t size;
	int64_t created;
};

struct docker_container {
	char id[72];
	char image_id[80];
	char state[32];    /* running exited paused … */
	char instance[32]; /* label sandboxd.instance, or "" */
	char sandbox[32];  /* label sandboxd.sandbox, or "" */
	char build[32];    /* label sandboxd.build (a release's build), or "" */
};

/* The id ("sha256:…") of the image name names; DOCKER_NOT_FOUND. */
int docker_image_id(struct docker *d, const char *name, char id[80],
                    char msg[DOCKER_MSG_LEN]);
/* Every top-level image. */
int docker_images(struct docker *d,
                  void (*fn)(const struct docker_image *, void *), void *arg,
                  char msg[DOCKER_MSG_LEN]);
/* Removes an image (never forced: DOCKER_CONFLICT while it is used). */
int docker_image_remove(struct docker *d, const char *id,
                        char msg[DOCKER_MSG_LEN]);
/* Every container, running or not, whoever made it. */
int docker_containers_all(struct docker *d,
                          void (*fn)(const struct docker_container *, void *),
                          void *arg, char msg[DOCKER_MSG_LEN]);
/* Freezes (pause true) or thaws a container's processes. */
int docker_pause(struct docker *d, const char *id, bool pause,
                 char msg[DOCKER_MSG_LEN]);
/* The engine's clock as it reports it (/info SystemTime, RFC 3339). */
int docker_system_time(struct docker *d, char out[64],
                       char msg[DOCKER_MSG_LEN]);

/*
 * exec.c: a process started in a running container (the terminal).  The
 * spec's strings are borrowed; cmd and env end with NULL.
 */
struct docker_exec_spec {
	const char *container;
	const char *const *cmd;
	const char *const *env;
	const char *user;    /* "1000:1000" */
	const char *workdir; /* "" for the image's */
	bool tty;
};

int docker_exec_create(struct docker *d, const struct docker_exec_spec *s,
                       char id[72], char msg[DOCKER_MSG_LEN]);
/*
 * Starts it attached: *fd is then the raw stream on the engine's socket
 * (a connection of its own, the caller's to close).  With a tty it
 * carries the terminal's bytes both ways; without, what comes from it is
 * multiplexed (docker_exec_demux) and writing to it is the process's
 * stdin; shutdown(SHUT_WR) closes that stdin.
 */
int docker_exec_start(struct docker *d, const char *id, bool tty, int *fd,
                      char msg[DOCKER_MSG_LEN]);
int docker_exec_resize(struct docker *d, const char *id, int cols, int rows,
                       char msg[DOCKER_MSG_LEN]);
/* *running, and once it is not *exit_code. */
int docker_exec_inspect(struct docker *d, const char *id, bool *running,
                        int *exit_code, char msg[DOCKER_MSG_LEN]);

/* The multiplexed stream's head: stream 1 stdout, 2 stderr, then a big-
 * endian length. */
#define DOCKER_MUX_HEAD 8

#endif
