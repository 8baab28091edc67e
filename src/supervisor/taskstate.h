/*
 * taskstate.h - struct tasks, the state of the tasks pipeline: tasks.c
 * keeps it, and the steps (taskstep.c) read the borrowed procs, the
 * cgroup and whether the supervisor halts.  On its own so that the
 * steps need not include tasks.h: tasks.c includes taskstep.h, so
 * taskstep.h including tasks.h made the two files a circle.  Rejected:
 * defining struct tasks in taskstep.h (main.c, which holds a struct
 * tasks, would see the steps' private run state) and passing the steps
 * those three fields one by one.
 */
#ifndef SUPERVISOR_TASKSTATE_H
#define SUPERVISOR_TASKSTATE_H

#include <stdbool.h>

struct procs;
struct tasks_run;

struct tasks {
	char *dir;             /* $HOME/.sandboxd/tasks */
	char *cgroup;          /* where memory.events is read */
	struct procs *procs;   /* borrowed: restarts, health, build, env */
	struct tasks_run *run; /* the task or revert in progress, or NULL */
	bool halting;          /* shutting down: nothing more is started */
};

#endif
