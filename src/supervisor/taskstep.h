/*
 * taskstep.h - the steps of a task in progress, and a revert (private to
 * tasks.c, which runs the pipeline; docs/supervisor.md, "Tasks").
 *
 * Each step is begun by taskstep_begin() and, when it has a child, ended by
 * taskstep_end() once the child is reaped; both write the step's records
 * to the steps file.  Main loop only.
 */
#ifndef SUPERVISOR_TASKSTEP_H
#define SUPERVISOR_TASKSTEP_H

#include <stdbool.h>
#include <sys/types.h>

#include "task.h"
#include "taskstate.h"

enum tasks_step {
	TASKS_CHECKPOINT,
	TASKS_AGENT,
	TASKS_FILES,
	TASKS_BUILD,
	TASKS_HEALTH,
	TASKS_END,
	TASKS_REVERT,
};

struct tasks_run {
	enum tasks_step step;
	char id[TASK_ID_LEN + 1];
	int dir;    /* the task's directory */
	int steps;  /* steps, appending; -1 for a revert */
	int gitlog; /* checkpoint.log: the git steps' stderr */
	pid_t pid;  /* the step's child, leader of its group; 0: none */
	int out;    /* our end of the child's stdout pipe; -1: none */
	int files;  /* the files list while it is written; -1 */
	unsigned nfiles;
	bool cancelled;
	bool agent_failed; /* timed out, OOM-killed, could not start */
	bool stopping;     /* SIGTERM sent to the step's group */
	bool killed;       /* SIGKILL sent to the step's group */
	bool timed_out;    /* the step ran out of time */
	bool web_restarted;
	unsigned timeout_s; /* the agent's */
	long long begun;    /* the step's start (CLOCK_MONOTONIC ms) */
	long long deadline; /* the step's timeout, or the health wait; -1 */
	long long kill_at;  /* SIGKILL due; -1 */
	long long oom_before;
	off_t log_mark; /* checkpoint.log's size when the step began */
	char sha[TASK_SHA_MAX + 1];
	char *argbuf,
	    *envbuf; /* the argv and env files, until the agent runs */
	char *argv[TASK_ARGV_MAX + 1];
	char *env[TASK_ENV_MAX + 1];
	size_t out_len;
	char out_buf[TASK_SHA_OUT_MAX];
	struct task_names names;
};

/* "checkpoint", "agent" ... by step, as status shows them. */
extern const char *const taskstep_names[];

/* Begins r->step: 0 when it is under way (a child runs, or health is
 * awaited), 1 when it is over already (its record written). */
int taskstep_begin(struct tasks *t, struct tasks_run *r, long long now);

/* r's child exited with status: writes the step's record. */
void taskstep_end(struct tasks *t, struct tasks_run *r, int status,
                  long long now);

/* In the health step: writes the health record once the web process has
 * a verdict or the wait is over.  Returns 1 if it did. */
int taskstep_health_due(struct tasks *t, struct tasks_run *r, long long now);

/* Starts the revert of r to r->sha: 0 when under way, 1 when it could not
 * start (the revert file says why). */
int taskstep_revert_begin(struct tasks *t, struct tasks_run *r, long long now);

/* The revert's child exited with status: writes the revert file. */
void taskstep_revert_end(struct tasks *t, struct tasks_run *r, int status);

/* SIGTERM to the step's process group now, SIGKILL PROCS_STOP_MS later. */
void taskstep_stop(struct tasks_run *r, long long now);

/* Reads what the step's child printed into the step (at most reads
 * chunks); closes the pipe at its end. */
void taskstep_read(struct tasks_run *r, unsigned reads);

/* Closes *fd unless it is -1, and sets it to -1. */
void taskstep_close(int *fd);

#endif
