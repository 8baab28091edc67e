/*
 * core: the sandbox lifecycle, tying the store (truth), the Docker driver
 * and the workspaces together.  Operations on one sandbox are serialized
 * by a striped lock; different sandboxes proceed in parallel.  Every
 * function may be called from any thread.  Errors are reported in
 * struct err for the API to turn into an envelope.
 */
#ifndef SANDBOX_CORE_H
#define SANDBOX_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config/config.h"
#include "docker/docker.h"
#include "lib/err.h"
#include "lib/ulid.h"
#include "store/store.h"

#define CORE_LOCK_STRIPES 64
#define CORE_INSTANCE_LEN 16
#define CORE_HOOKS_MAX    4 /* hooks per event */

struct activity;
struct cluster;
struct dedup;
struct depcache;
struct diskuse;
struct orch;
struct preview;
struct publish;
struct pvauth;
struct routes;
struct runtime;
struct sbnet;
struct tasks;
struct timeline;
struct wsnode;
struct core;

/*
 * What the layers above core do when a sandbox or an app changes (tasks
 * forget a deleted sandbox, private previews a deleted app): core calls
 * the hooks registered for the event, so it never calls up into them.
 * Registered by serve() before the API starts and never removed.  The
 * sandbox events pass the sandbox's id and are called with its lock
 * held, so a hook must not take it (nor call core_sandbox_*); the app
 * event passes the app's id and is called with no lock held.
 */
enum core_event {
	CORE_SANDBOX_STARTED,  /* its container started (create or start) */
	CORE_SANDBOX_DELETED,  /* its row is gone */
	CORE_SANDBOX_STOPPING, /* its container is about to be stopped */
	CORE_APP_DELETED,      /* the app's row is gone (core_app_delete) */
	CORE_EVENTS,
};
typedef void (*core_hook_fn)(struct core *c, const char *id);

struct core {
	const struct config *cfg;
	struct store *store;
	struct docker *docker; /* the local engine (publish, ops use it) */
	struct orch *orch;     /* orch/: the sandboxes' containers (serve) */
	struct wsnode *wn;     /* wsnode/: workspaces on any node (serve) */
	char instance[CORE_INSTANCE_LEN + 1]; /* labels our containers */
	pthread_mutex_t locks[CORE_LOCK_STRIPES];
	pthread_t watcher;
	bool watcher_started;
	/* Set once when the daemon stops: every core thread's loop ends. */
	atomic_bool stopping;
	struct activity *act;  /* activity.c: last use and start, in memory */
	struct preview *pv;    /* preview.c: wakes (made by serve) */
	struct routes *routes; /* routes.c: the edge's view of each sandbox */
	struct pvauth *pa;     /* pvauth.c: private previews (serve) */
	struct tasks *tasks;   /* task.c: tasks being followed (serve) */
	struct sbnet *net;     /* sbnet.c: the sandbox network and its rules */
	struct dedup *dedup;   /* dedup.c: dependencies stored once (serve) */
	struct depcache *dc;   /* depcache/: installs kept by key (serve) */
	struct diskuse *du;    /* diskuse.c: each app's disk use (serve) */
	struct runtime *rt;    /* runtime.c: sandboxes to configure (serve) */
	struct timeline *tl;   /* timeline/: the apps' activity (serve) */
	struct terminal *term; /* terminal/: the terminals (serve) */
	struct publish *pub;   /* publish/: releases, the host table (serve) */
	struct cluster *cluster; /* cluster/: nodes (serve; swarm mode only) */
	pthread_mutex_t proxy_mu;
	char proxy_url[96]; /* "http://<addr>:<port>" once it listens */
	core_hook_fn hooks[CORE_EVENTS][CORE_HOOKS_MAX];
	/* core_idle_threshold(): read by the reaper, set by the settings */
	_Atomic int64_t idle_threshold_s;
};

/*
 * The idle reaper's threshold in seconds: the stored setting
 * CORE_IDLE_SETTING (PATCH /v1/settings, CORE_IDLE_MIN_S to
 * CORE_IDLE_MAX_S) when there is one, else SANDBOXD_IDLE_THRESHOLD_SECONDS.
 * core_init reads the setting; core_idle_threshold_apply() sets the value
 * in use once the caller has stored it (0: the setting was cleared), and
 * the reaper's next pass uses it.  Any thread.
 */
#define CORE_IDLE_SETTING "lifecycle.idle_threshold_seconds"
#define CORE_IDLE_MIN_S   60
#define CORE_IDLE_MAX_S   604800 /* a week */
int64_t core_idle_threshold(struct core *c);
void core_idle_threshold_apply(struct core *c, int64_t seconds);

/*
 * Opens nothing: store, docker and orch (the driver that runs the
 * sandboxes' containers, orch/orch.h) are made by the caller, and so
 * is c->wn, set by serve() after this.  Builds none
 * of the layers that use core either (the runtime, private previews:
 * serve() makes them after it) and starts no thread: serve() starts and
 * stops them (docs/design.md, "Threads"), and core_release frees only
 * what core_init made.
 */
/*
 * This daemon's instance id (CORE_INSTANCE_LEN hex digits), made and
 * stored on first start: core_init's, and the orchestrator's before it.
 */
int core_instance(struct store *store, char out[CORE_INSTANCE_LEN + 1]);
int core_init(struct core *c, const struct config *cfg, struct store *store,
              struct docker *docker, struct orch *orch);
void core_release(struct core *c);

/* Adds a hook for ev (before any thread runs); -1 when CORE_HOOKS_MAX
 * are there. */
int core_hook_add(struct core *c, enum core_event ev, core_hook_fn fn);
/* Calls ev's hooks in the order they were added (lifecycle.c). */
void core_hooks_run(struct core *c, enum core_event ev, const char *id);

/*
 * Room to write in a sandbox's workspace: -1 with 507 workspace_full
 * when it holds more than SANDBOXD_WORKSPACE_MAX_MB (measured by a
 * bounded walk, cached for a few seconds; on its node for a sandbox on
 * another node), or 507 insufficient_storage when the data filesystem
 * is full.
 */
int core_workspace_room(struct core *c, const struct sandbox *sb,
                        struct err *e);
/* The data filesystem is full (less than WS_DATA_MIN_FREE_BYTES free). */
bool core_data_full(const struct core *c, int64_t *free_bytes);

/* The container (swarm: service) name of a sandbox: the orch key. */
void core_container_name(const struct core *c, const char *id, char *out,
                         size_t len);

/*
 * Creates app's sandbox.  nports 0: the default, [3000], or for an
 * imported app the web.port of the sandbox.yaml it brought.  With seed
 * (a fork, snapshot/snapshot.c), the workspace's files are put there by
 * seed after the workspace directory is made and before the container
 * starts, instead of the app's import; seed's -1 (with e set) fails the
 * create, the row marked failed.
 */
typedef int (*core_seed_fn)(struct core *c, const char *sandbox_id, void *arg,
                            struct err *e);
int core_sandbox_create(struct core *c, const struct app *app, const int *ports,
                        int nports, core_seed_fn seed, void *arg,
                        struct sandbox *out, struct err *e);
int core_sandbox_start(struct core *c, const char *id, struct sandbox *out,
                       struct err *e);
int core_sandbox_stop(struct core *c, const char *id, struct sandbox *out,
                      struct err *e);
/* Stop with a reason shown in status_reason ("idle", "pressure"). */
int core_sandbox_stop_why(struct core *c, const char *id, const char *why,
                          struct sandbox *out, struct err *e);
int core_sandbox_delete(struct core *c, const char *id, struct err *e);
/*
 * Two-tier sleep.  Freeze pauses a running sandbox's container (the
 * cgroup freezer: its processes keep their memory and get no CPU); the
 * row stays "running" with frozen set.  Thaw undoes it; a no-op (0) when
 * the sandbox is not frozen.  core_sandbox_start thaws a frozen sandbox
 * instead of starting it, and stop and delete thaw before they act.
 *
 * idle_since (the reaper's; -1 for none) is when the sandbox was last
 * active as the caller saw it: activity after it leaves the sandbox
 * awake (1, checked under the sandbox's lock and again once paused), so
 * a request or task racing the freeze never waits on a frozen app.
 * core_sandbox_thaw_wait also waits for a freeze in flight.
 */
int core_sandbox_freeze(struct core *c, const char *id, int64_t idle_since,
                        struct err *e);
int core_sandbox_thaw(struct core *c, const char *id, struct err *e);
int core_sandbox_thaw_wait(struct core *c, const char *id, struct err *e);
/*
 * How an idle sandbox sleeps: "freeze", "stop", or NULL when it never
 * sleeps (idle_policy "always_on").  "sleep" follows SANDBOXD_SLEEP_POLICY.
 */
const char *core_sleep_policy(const struct core *c, const struct sandbox *sb);
/* Deletes the app's sandbox (if any), then the app; runs the
 * CORE_APP_DELETED hooks. */
int core_app_delete(struct core *c, const struct app *app, struct err *e);

/*
 * The sandbox's manifest may have changed: thaws it if frozen (a frozen
 * supervisor would not answer), then queues a configure-and-reload
 * (runtime_schedule).
 */
void core_sandbox_reload(struct core *c, const char *id);
/* After a change of the app's config: the app's sandbox, if running, is
 * thawed and sent the app's environment (runtime_send_env). */
void core_app_config_changed(struct core *c, const char *app_id);

/* The credential proxy's URL as sandboxes reach it ("" until it
 * listens). */
void core_set_proxy_url(struct core *c, const char *addr, unsigned port);
void core_proxy_url(struct core *c, char *out, size_t len);

/*
 * Sets the routing table's entry of id from its row (or drops it when
 * the row is gone), for writes that change the row in SQL (an exit) rather
 * than from a struct sandbox in hand.  Called with id's lock held, so it
 * cannot interleave with a lifecycle write of the same sandbox.  Reads the
 * store: never on the edge's loop.
 */
void core_route_refresh(struct core *c, const char *id);

/* Serializes operations on one sandbox id (striped; never nest two). */
void core_sandbox_lock(struct core *c, const char *id);
void core_sandbox_unlock(struct core *c, const char *id);

/*
 * Converges Docker to the store: orphans removed, interrupted creates
 * marked, dead containers noticed.  Run at start and whenever the engine
 * comes back.
 */
int core_reconcile(struct core *c);
/* Starts/stops the thread that follows Docker events and reconnects. */
int core_watch_start(struct core *c);
void core_watch_stop(struct core *c);

#endif
