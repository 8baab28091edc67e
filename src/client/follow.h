/*
 * follow: a task's event stream rendered live (cmd_task.c uses it for
 * `task follow`, `task run --follow` and `new`).  Resumes with
 * Last-Event-ID when the connection drops; Ctrl-C stops following and
 * leaves the task running.  The exit status says how the task ended.
 */
#ifndef CLIENT_FOLLOW_H
#define CLIENT_FOLLOW_H

#include "client/client.h"
#include "lib/jv.h"

#define CLI_FOLLOW_RETRY_S 120 /* keep trying to resume for this long */

/*
 * Follows task of sb from event since+1 (since < 0: from the start).
 * *result (when not NULL) gets the done event's task object.
 */
int cli_follow(struct cli *c, const char *sb, const char *task, long since,
               struct jv **result);
/* The exit status of a finished task object. */
int cli_task_exit(const struct jv *task);
/* The line of text a phase of a "status" event is shown as. */
const char *cli_phase_label(const char *phase);

#endif
