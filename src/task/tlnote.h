/*
 * tlnote: a task's events on its app's timeline (timeline/timeline.h):
 * started, succeeded, failed, cancelled (by whom the cancel was asked,
 * though the follower's thread ends the task), reverted.  A leaf of
 * src/task/: it calls none of the pipeline.  Any thread.
 */
#ifndef TASK_TLNOTE_H
#define TASK_TLNOTE_H

#include "sandbox/core.h"
#include "store/store.h"

/* An event of type of task task_id in sandbox_id's app. */
void tlnote(struct core *c, const char *sandbox_id, const char *task_id,
            const char *type, const char *payload, const char *message);
void tlnote_started(struct core *c, const struct task *t);
/* Remembers the thread's actor as who asked to cancel task id. */
void tlnote_cancel_by(const char *id);
/* The end of row as st (reason: the failure's, or NULL). */
void tlnote_end(struct core *c, const struct task *row, enum task_state st,
                const char *reason);

#endif
