/*
 * runtime: the control plane's side of the in-sandbox supervisor
 * (docs/supervisor.md).  It turns the app's sandbox.yaml into run.conf,
 * tells the supervisor to reload, sends it the app's environment (the
 * config entries marked expose_env), and asks it for status, each by one
 * request (sandbox/supclient.h).  Answers from the supervisor are
 * untrusted (the sandbox user could replace the socket): they are
 * size-capped, parsed with a depth limit and copied field by field into
 * what we report.
 *
 * Thread-safety: every function may be called from any thread.  After
 * a container starts, a thread of its own waits for the sandbox's
 * supervisor and configures it (runtime_schedule).
 */
#ifndef SANDBOX_RUNTIME_H
#define SANDBOX_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "sandbox/core.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"

/* Sandboxes being configured at once (a thread each); one scheduled
 * beyond it is not configured (logged). */
#define RUNTIME_QUEUE_MAX 256
/* Every request's deadline runs from before connect() to the answer's
 * end: RUNTIME_TIMEOUT_MS by default, RUNTIME_STATUS_MS for a status
 * (an API request waits on it), RUNTIME_PING_MS for each ping while
 * waiting for a boot, RUNTIME_SHARED_MS on a thread every sandbox
 * shares (the task follower). */
#define RUNTIME_TIMEOUT_MS 2000
#define RUNTIME_STATUS_MS  1000
#define RUNTIME_PING_MS    500
#define RUNTIME_SHARED_MS  250
/* For the socket after a start: a first boot copies the preset's template
 * first (the nextjs one, 328 MB, took over 15 s on a busy 2-core host). */
#define RUNTIME_BOOT_WAIT_MS 120000
/* The app's environment as sent: "NAME=value\0"…, the supervisor's
 * CTL_BODY_MAX.  Its execve() must still fit the container's own. */
#define RUNTIME_ENV_BYTES (512u << 10)

/*
 * Sends one request line to the supervisor of workspace ws, reads the
 * one-line JSON answer, all within timeout_ms from before connect() on
 * (supclient_request with the daemon's quiet table).  -1 with e (502
 * sandbox_unavailable) when it is not listening, does not answer in
 * time (then it is not asked again for SUPCLIENT_QUIET_MS) or answers
 * something that is not a JSON object.
 */
int runtime_request(struct core *c, const char *ws, const char *line,
                    int timeout_ms, struct jv **answer, struct err *e);

/*
 * Reads the app's sandbox.yaml (or the default when there is none),
 * records its validity on the sandbox row, and writes run.conf when it
 * changed.  With reload, tells a running supervisor to re-read it and
 * sends it the app's environment (runtime_send_env).  Before the first
 * boot (no .sandboxd/seeded) it does nothing.
 */
int runtime_configure(struct core *c, const char *id, bool reload);

/*
 * Sends the sandbox's supervisor the app's config entries marked
 * expose_env (`env`); it keeps them in memory for the web and worker
 * processes and restarts those when the set changed.  Values never touch
 * the workspace, and every buffer of ours that held one is wiped.  Keys
 * the supervisor refuses (runtime_env_reserved, from rows older than the
 * rule) are left out, with a warning.  0; -1 (logged) when a value does
 * not open, the entries pass RUNTIME_ENV_BYTES (nothing is sent: the
 * processes keep what they have), or the supervisor does not answer or
 * refuses.  Sends for one sandbox are serialized, each reading the store
 * afresh, so the last one sent carries the latest config.
 */
int runtime_send_env(struct core *c, const char *id);

/*
 * The app's environment as runtime_send_env gives it, for a process the
 * supervisor does not run (a release's production container):
 * "NAME=value\0"… into p (cap bytes, the caller's vault memory), the
 * reserved names left out with a warning naming who.  *len the bytes
 * used.  0; -1 (logged) when a value does not open or they pass cap.
 */
int runtime_app_env(struct core *c, const char *app_id, const char *who,
                    char *p, size_t cap, size_t *len);

/* Whether a config key may not become an environment variable: the
 * supervisor sets it (PATH HOME LANG HOST PORT) or it would change how
 * the sandbox's programs run (LD_*, SANDBOXD_*). */
bool runtime_env_reserved(const char *name);

/* Queues a configure-and-reload for once the supervisor is up.  It
 * thaws nothing: a frozen sandbox's supervisor would not answer, so the
 * caller thaws first (core_sandbox_reload). */
void runtime_schedule(struct core *c, const char *id);

/*
 * The supervisor's status as we report it: {"health":…, "processes":[…]}
 * with only known fields and values (supanswer_status), within
 * RUNTIME_STATUS_MS.  NULL when it does not answer: e empty when it is
 * not listening (booting, or stopped), else why (a deadline, garbage).
 */
struct jv *runtime_status(struct core *c, const char *id, struct err *e);

/* Waits up to wait_ms for the supervisor to answer a ping. */
bool runtime_wait(struct core *c, const char *id, int64_t wait_ms);

struct manifest;
/* The app's manifest (sandbox.yaml or the default); -1 when invalid. */
int runtime_manifest(struct core *c, const char *id, struct manifest *m);
/* Whether the sandbox's supervisor says its install step runs now
 * (false when it does not answer). */
bool runtime_install_running(struct core *c, const char *id);
/*
 * Tells the routing table what the sandbox's manifest runs (a web
 * process or workers only), as a configure does: for sandboxes that run
 * on from before the daemon started.  Reads the workspace: not under the
 * sandbox's lock.
 */
void runtime_note_manifest(struct core *c, const char *id);
/*
 * Waits while the sandbox's install step runs (docs/supervisor.md,
 * "Install"), polling its status: true once none runs (or the
 * supervisor does not say), false after wait_ms, when the daemon stops,
 * or when go_on(arg) says to stop waiting.  An agent task starts only
 * after it: the agent would work on a tree being installed into.
 */
bool runtime_wait_install(struct core *c, const char *id, int64_t wait_ms,
                          bool (*go_on)(void *), void *arg);
/*
 * After a task: a running sandbox is configured again (runtime_schedule),
 * so a lockfile the agent changed gives run.conf a new install key and
 * the supervisor installs before it starts the processes again.
 */
void runtime_after_task(struct core *c, const char *id);

/*
 * The runtime's handle (c->rt: the supervisor client's quiet table, the
 * sandboxes being configured, the env sends' locks): made by serve()
 * after core_init, freed before core_release.  runtime_start does
 * nothing; runtime_stop sets c->stopping and waits for the configure
 * threads to end (serve()).
 */
int runtime_init(struct core *c);
void runtime_free(struct core *c);
int runtime_start(struct core *c);
void runtime_stop(struct core *c);

#endif
