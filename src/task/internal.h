/*
 * Shared by the files of src/task/: the tasks' state hung off struct
 * core, the live list (follow.c) and the starters (start.c).  Nothing
 * outside src/task/ includes it (but the unit tests).
 */
#ifndef TASK_INTERNAL_H
#define TASK_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/core.h"
#include "lib/ulid.h"
#include "store/store.h"

struct evlog_sub;
struct live;
struct task_upstream;

struct tasks {
	pthread_mutex_t mu; /* the lists below and every sub's listing */
	struct live *lives;
	struct evlog_sub *subs;
	int wake_fd;    /* eventfd: wakes the follower */
	int inotify_fd; /* task directories being followed */
	pthread_t thread;
	bool started;
	int starters; /* threads still handing a task to a supervisor */
	pthread_cond_t starters_cv;
	/* follow_committed, set by task_init (NULL: no task is live), so
	 * that the log's subscribers (evlog.c) ask the live list without
	 * calling up into the follower that appends to the log. */
	int (*committed)(struct tasks *ts, const char *id, off_t *out);
};

/* ---- follow.c: the follower thread and the live list ---------------- */

/* The follower thread (arg: the core). */
void *follow_main(void *arg);
/* Wakes the follower. */
void follow_wake(struct tasks *ts);
/*
 * Follows a task just recorded: its log gets event 0 (`starting`) and
 * the follower takes it from there.  -1 when its log cannot be opened.
 */
int follow_add(struct core *c, const struct task *row);
/*
 * Follows again a task a restart found running (before follow_main): 1
 * when it must be handed to the supervisor again (task_init's
 * recover_one starts it: the follower never calls the starters), 0 when
 * not, -1 when it cannot be followed.
 */
int follow_again(struct core *c, const struct task *t);
/* Frees every live task (after the follower stopped). */
void follow_free_all(struct tasks *ts);

/* Each takes ts->mu and wakes the follower where it has work. */
/* The task ends with reason, unless a reason is already recorded. */
void follow_fail(struct core *c, const char *id, const char *reason,
                 const char *msg);
/* The supervisor accepted the task: its files are worth reading. */
void follow_mark_started(struct core *c, const char *id);
/* Still live and not ending (so worth handing to the supervisor). */
bool follow_wanted(struct core *c, const char *id);
/* A cancel was asked for. */
void follow_cancel(struct core *c, const char *id);
/* The credential proxy's error for the sandbox's running task. */
void follow_provider_error(struct core *c, const char *sandbox_id,
                           const char *msg);
/* The sandbox's live task stops its agent and fails with reason and
 * msg once the agent ended (a spend budget reached, a provider that
 * cannot be reached); the first stop asked for wins. */
void follow_stop(struct core *c, const char *sandbox_id, const char *reason,
                 const char *msg);
/* The credential proxy's upstream failure: an event of the sandbox's
 * live task and, when permanent, a stop (task.h, task_upstream_failed). */
void follow_upstream(struct core *c, const char *sandbox_id,
                     const struct task_upstream *u);
/* The provider answered: the timeouts in a row start again at 0. */
void follow_upstream_answered(struct core *c, const char *sandbox_id);
/* The id of the task the sandbox runs, if any. */
bool follow_active_id(struct core *c, const char *sandbox_id,
                      char id[ULID_LEN + 1]);
/* The sandbox is being deleted: its tasks stop being followed. */
void follow_forget_sandbox(struct core *c, const char *sandbox_id);
/* A live task's committed log end (ts->mu held); -1 when not live. */
int follow_committed(struct tasks *ts, const char *id, off_t *out);

/* ---- mirror.c: a remote task's files, copied here ------------------- */

/*
 * For a task whose sandbox is on another node: starts the thread that
 * copies its event files to this host and sets ws to the copy's root
 * (derive and inotify then read it as a workspace); 1.  0 (ws left as
 * it is) for a local sandbox; -1 when the copy cannot be made.
 */
int task_mirror_start(struct core *c, const struct task *row, char *ws,
                      size_t len);
/* The task is no longer followed: its thread ends, the copy goes. */
void task_mirror_stop(const char *task_id);
/* Stops every mirror thread and waits for them (shutdown). */
void task_mirror_wait(void);

/* ---- start.c: handing a task to the supervisor ---------------------- */

/*
 * Starts a counted, detached thread that waits for the sandbox's
 * supervisor, writes the task's argv and env files and sends `task
 * start`; its outcome reaches the live list (follow_mark_started or
 * follow_fail).  -1 when no thread could be started.
 */
int starter_spawn(struct core *c, const struct task *row, bool cont);

#endif
