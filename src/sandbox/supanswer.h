/*
 * supanswer: the supervisor's answers as the control plane reads them.
 * The socket is in the workspace, so whatever answers may be the sandbox
 * user's own program: an answer is a capped, depth-limited JSON object,
 * and what we report of it is copied field by field, known values only.
 * Pure functions over bytes (the fuzz target feeds them anything).
 *
 * Thread-safety: any thread.
 */
#ifndef SANDBOX_SUPANSWER_H
#define SANDBOX_SUPANSWER_H

#include <stddef.h>

#include "lib/jv.h"

#define SUPANSWER_DEPTH_MAX  8   /* JSON nesting of an answer */
#define SUPANSWER_PROCS_MAX  32  /* processes reported */
#define SUPANSWER_NAME_MAX   32  /* bytes of a process name */
#define SUPANSWER_DETAIL_MAX 300 /* bytes of health_detail */

/* One answer (a line of JSON): a JSON object, or NULL. */
struct jv *supanswer_parse(const char *text, size_t len);
/*
 * The status as we report it, {"health":…, "health_detail"?,
 * "processes":[…], "install":{"state","key","exit_code","started_at_ms",
 * "ended_at_ms"}}, from a parsed answer: unknown fields dropped,
 * unknown values "unknown", strings and lists cut to their caps.
 */
struct jv *supanswer_status(const struct jv *ans);

#endif
