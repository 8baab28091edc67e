/*
 * runtime: the control plane's side of the in-sandbox supervisor
 * (docs/supervisor.md).  It turns the app's sandbox.yaml into run.conf,
 * tells the supervisor to reload, and asks it for status.  Answers from
 * the supervisor are untrusted (the sandbox user could replace the
 * socket): they are size-capped, parsed with a depth limit and copied
 * field by field into what we report.
 *
 * Thread-safety: every function may be called from any thread.  The
 * worker thread configures sandboxes after their container starts.
 */
#ifndef CORE_RUNTIME_H
#define CORE_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jv.h"

#define RUNTIME_ANSWER_MAX   (64u << 10)
#define RUNTIME_TIMEOUT_MS   2000
#define RUNTIME_BOOT_WAIT_MS 15000 /* for the socket after a start */

/* Sends one request line, reads the one-line JSON answer. */
int runtime_request(const char *ws, const char *line, int timeout_ms,
                    struct jv **answer, struct err *e);

/*
 * Reads the app's sandbox.yaml (or the default when there is none),
 * records its validity on the sandbox row, and writes run.conf when it
 * changed.  With reload, tells a running supervisor to re-read it.
 * Before the first boot (no .sandboxd/seeded) it does nothing.
 */
int runtime_configure(struct core *c, const char *id, bool reload);

/* Queues a configure-and-reload for once the supervisor is up. */
void runtime_schedule(struct core *c, const char *id);

/*
 * The supervisor's status as we report it: {"health":…, "processes":[…]}
 * with only known fields and values.  NULL when it does not answer.
 */
struct jv *runtime_status(struct core *c, const char *id);

/* Waits up to wait_ms for the supervisor to answer a ping. */
bool runtime_wait(struct core *c, const char *id, int64_t wait_ms);

struct manifest;
/* The app's manifest (sandbox.yaml or the default); -1 when invalid. */
int runtime_manifest(struct core *c, const char *id, struct manifest *m);

int runtime_start(struct core *c);
void runtime_stop(struct core *c);

#endif
