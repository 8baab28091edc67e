/*
 * Tasks: one prompt given to a coding agent inside a sandbox.
 *
 * The supervisor in the sandbox runs the task's pipeline (checkpoint,
 * agent, files, build, health) and writes what happens to files in the
 * workspace (docs/supervisor.md, "Tasks").  The control plane turns those
 * files into the task's events, a pure function of their contents: one
 * thread follows every running task with inotify, appends each new event
 * to <data>/tasks/<task id>.events (already in text/event-stream form)
 * and, once the task ended, stores its result.  After a restart the same
 * files yield the same events, so the log is completed without gaps or
 * repeats however the daemon died.
 *
 * Subscribers (the SSE endpoint) read the log from their own offset
 * (task/evlog.h): no per-subscriber buffer exists, so a slow reader
 * costs nothing but its connection, and any number can follow one task.
 *
 * Thread-safety: every function may be called from any thread.
 */
#ifndef TASK_TASK_H
#define TASK_TASK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/core.h"
#include "lib/err.h"
#include "store/store.h"

#define TASK_HISTORY_MAX    100    /* tasks listed per sandbox */
#define TASK_WINDOW_EXTRA_S 300    /* result overdue after timeout + this */
#define TASK_START_WAIT_MS  60000  /* for the supervisor of a new sandbox */
#define TASK_HEARTBEAT_MS   15000  /* SSE comment on a quiet stream */
#define TASK_EVENTS_MAX     100000 /* events per task; then only done */
/* Event log bytes per task; past them only done is written. */
#define TASK_EVLOG_MAX_BYTES (64ll << 20)
#define TASK_REVERT_WAIT_MS  120000
/* Upstream timeouts in a row after which the provider counts as
 * unreachable (one may be a blip; two are not). */
#define TASK_UPSTREAM_TIMEOUTS_MAX 2

struct task_image;

struct task_request {
	const char *prompt;
	const char *agent; /* NULL: the configured default */
	const char *model; /* NULL: the agent's default */
	int64_t timeout_s; /* 0: the configured default */
	int cont;          /* -1: continue when the sandbox had a task */
	/* Images to attach (task/attach.h), checked by the caller. */
	const struct task_image *images;
	size_t nimages;
};

int task_init(struct core *c);
/* Stops the follower thread and ends every subscription. */
void task_shutdown(struct core *c);
/* Frees what task_init made, once nothing can subscribe any more. */
void task_free(struct core *c);

/*
 * Wakes a stopped sandbox, records the task and starts it; the caller
 * has checked that the sandbox exists and belongs to the tenant.  out
 * is filled (release with store_task_release).
 */
int task_submit(struct core *c, const char *sandbox_id,
                const struct task_request *r, struct task *out, struct err *e);
/*
 * Asks the supervisor to stop the task; *status gets its status now:
 * TASK_CANCELLING, or the final one of a task already over.
 */
int task_cancel(struct core *c, const char *sandbox_id, const char *id,
                enum task_state *status, struct err *e);
/* Restores the app directory to the checkpoint taken before the task. */
int task_revert(struct core *c, const char *sandbox_id, const char *id,
                struct err *e);
/* True while the sandbox runs a task (for the reapers). */
bool task_running_on(struct core *c, const char *sandbox_id);
/* The id of the task the sandbox runs, if any. */
bool task_active_id(struct core *c, const char *sandbox_id,
                    char id[ULID_LEN + 1]);
/*
 * A spend budget is reached (the proxy refused, or an answer crossed
 * it): the supervisor is asked to stop the sandbox's running task, which
 * then fails with failure_reason budget_reached and msg ("budget
 * reached: app X spent …").  Never blocks: the follower does the rest.
 */
void task_budget_reached(struct core *c, const char *sandbox_id,
                         const char *msg);
/*
 * What the credential proxy saw go wrong between it and a provider for
 * one request of the sandbox: no answer (the host did not resolve,
 * refused or could not be reached, failed TLS, timed out) or a
 * permanent refusal (the key rejected, 401/403).
 */
struct task_upstream {
	const char *upstream; /* "anthropic", "openai", "zen", "compat" */
	const char *host;     /* "api.anthropic.com", "127.0.0.1:8080" */
	const char *kind; /* "dns" "connect" "tls" "timeout" "other" "http" */
	long status;      /* the provider's HTTP status; 0 none */
	/* "provider_unreachable" or "provider_refused" when permanent;
	 * NULL when this one failure may pass. */
	const char *reason;
	const char *msg; /* for the user: the host, what failed, the fix */
};
/*
 * Each failure becomes a `provider_error` event of the sandbox's running
 * task as it happens.  A permanent one, or the TASK_UPSTREAM_TIMEOUTS_MAX-th
 * timeout in a row (task_upstream_answered starts the count again),
 * ends the task as a cancel does: its agent is stopped and it fails
 * with the failure's reason (a timeout: provider_unreachable) and msg.
 * Never blocks: a short hold of the tasks' lock, the follower does the
 * rest.
 */
void task_upstream_failed(struct core *c, const char *sandbox_id,
                          const struct task_upstream *u);
/* A provider answered a request of the sandbox (any HTTP status). */
void task_upstream_answered(struct core *c, const char *sandbox_id);
/* The sandbox is being deleted: its tasks and their logs go too. */
void task_forget_sandbox(struct core *c, const char *sandbox_id);
/*
 * The sandbox goes to the trash (trash/trash.c): its tasks are no longer
 * followed and a running one ends "cancelled", reason "app_deleted";
 * the rows and logs stay.  Safe before task_init (recovery).
 */
void task_trash_sandbox(struct core *c, const char *sandbox_id);

/* A task's result as the API shows it (a new object). */
struct jv *task_json(const struct task *t);

#endif
