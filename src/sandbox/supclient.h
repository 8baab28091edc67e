/*
 * supclient: one request to a sandbox's supervisor and its answer
 * (protocol in docs/supervisor.md).  The socket is in the workspace,
 * which the sandbox owns, so whatever listens there may be the sandbox's
 * own program: the orchestrator connects to it (orch_sup_connect: on
 * this host without following links and without blocking), one
 * deadline runs from before the connect to the answer's end, and the
 * answer is capped and parsed by supanswer.
 *
 * A handle keeps the supervisors that missed a deadline (the quiet
 * table); runtime.c owns the daemon's one.  Thread-safety: every
 * function may be called from any thread.
 */
#ifndef SANDBOX_SUPCLIENT_H
#define SANDBOX_SUPCLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "lib/jv.h"

struct orch;

#define SUPCLIENT_ANSWER_MAX (64u << 10)
/* A supervisor that missed a deadline is not asked again for this long
 * (requests fail at once), then by one request at a time; the table
 * tracks this many such sandboxes. */
#define SUPCLIENT_QUIET_MS    5000
#define SUPCLIENT_QUIET_SLOTS 64

struct supclient;

struct supclient *supclient_new(void);
void supclient_free(struct supclient *sc);

/*
 * Sends len bytes of req (a line, and for env its body) to the
 * supervisor of sandbox id on node ("" this host), by o, and reads the one-line
 * JSON answer, all within timeout_ms from before connect() on.  -1 with e (502
 * sandbox_unavailable) when it is not listening, does not answer in
 * time (then it is not asked again for SUPCLIENT_QUIET_MS) or answers
 * something that is not a JSON object; *broken (NULL: not wanted) is
 * false only when nothing listens.  sc NULL: no quiet table.
 */
int supclient_request(struct supclient *sc, struct orch *o, const char *id,
                      const char *node, const char *req, size_t len,
                      int timeout_ms, struct jv **answer, bool *broken,
                      struct err *e);

/* A sandbox's container started: its supervisor is new, asked again. */
void supclient_forget(struct supclient *sc, const char *id);

#endif
