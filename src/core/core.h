/*
 * core: the sandbox lifecycle, tying the store (truth), the Docker driver
 * and the workspaces together.  Operations on one sandbox are serialized
 * by a striped lock; different sandboxes proceed in parallel.  Every
 * function may be called from any thread.  Errors are reported in
 * struct err for the API to turn into an envelope.
 */
#ifndef CORE_CORE_H
#define CORE_CORE_H

#include <pthread.h>
#include <stdbool.h>

#include "core/config.h"
#include "docker/docker.h"
#include "lib/err.h"
#include "lib/ulid.h"
#include "store/store.h"

#define CORE_LOCK_STRIPES  64
#define CORE_INSTANCE_LEN  16
#define CORE_RUNTIME_QUEUE 256

struct activity;
struct preview;
struct sbnet;
struct tasks;

struct core {
	const struct config *cfg;
	struct store *store;
	struct docker *docker;
	char instance[CORE_INSTANCE_LEN + 1]; /* labels our containers */
	pthread_mutex_t locks[CORE_LOCK_STRIPES];
	pthread_t watcher;
	bool watcher_started;
	volatile bool stopping;
	struct activity *act; /* activity.c: last use and start, in memory */
	struct preview *pv;   /* preview.c: wakes */
	struct tasks *tasks;  /* task.c: tasks being followed */
	struct sbnet *net;    /* sbnet.c: the sandbox network and its rules */
	pthread_mutex_t proxy_mu;
	char proxy_url[96]; /* "http://<addr>:<port>" once it listens */
	pthread_t reaper;
	bool reaper_started;
	struct { /* runtime.c: sandboxes to configure */
		pthread_mutex_t mu;
		pthread_cond_t cv;
		char ids[CORE_RUNTIME_QUEUE][ULID_LEN + 1];
		int n;
		pthread_t thread;
		bool started;
	} rq;
};

/* Opens nothing: store and docker are made by the caller. */
int core_init(struct core *c, const struct config *cfg, struct store *store,
              struct docker *docker);
void core_release(struct core *c);

/* Docker container name of a sandbox. */
void core_container_name(const struct core *c, const char *id, char *out,
                         size_t len);

/*
 * nports 0: the default, [3000], or for an imported app the web.port of
 * the sandbox.yaml it brought.
 */
int core_sandbox_create(struct core *c, const struct app *app, const int *ports,
                        int nports, struct sandbox *out, struct err *e);
int core_sandbox_start(struct core *c, const char *id, struct sandbox *out,
                       struct err *e);
int core_sandbox_stop(struct core *c, const char *id, struct sandbox *out,
                      struct err *e);
/* Stop with a reason shown in status_reason ("idle", "pressure"). */
int core_sandbox_stop_why(struct core *c, const char *id, const char *why,
                          struct sandbox *out, struct err *e);
int core_sandbox_delete(struct core *c, const char *id, struct err *e);
/* Deletes the app's sandbox (if any), then the app. */
int core_app_delete(struct core *c, const struct app *app, struct err *e);

/* The credential proxy's URL as sandboxes reach it ("" until it
 * listens). */
void core_set_proxy_url(struct core *c, const char *addr, unsigned port);
void core_proxy_url(struct core *c, char *out, size_t len);

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
