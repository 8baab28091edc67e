/*
 * tasks.h - agent tasks: one prompt run by a coding agent CLI, as a
 * pipeline of child processes (checkpoint, agent, files, build, health)
 * that writes its progress to the task's directory, and reverts to a
 * task's checkpoint (docs/supervisor.md, "Tasks").
 *
 * At most one task or revert is in progress.  Everything is driven by the
 * main loop like procs: tasks_pollfds() / tasks_on_poll() for the pipe of
 * a step whose output is read, tasks_tick() for what is due by the clock,
 * tasks_on_exit() for each reaped child.  Nothing blocks.
 */
#ifndef SUPERVISOR_TASKS_H
#define SUPERVISOR_TASKS_H

#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

#include "jw.h"
#include "procs.h"
#include "taskstate.h"

/* Returns 0, or -1 when out of memory. */
int tasks_init(struct tasks *t, const char *home, const char *cgroup,
               struct procs *procs);

/* Frees everything; call once no task child is left. */
void tasks_release(struct tasks *t);

/* At boot, before the control socket opens: ends the tasks a previous
 * boot left running ("interrupted"). */
void tasks_sweep(const struct tasks *t);

/*
 * The task requests.  Each writes its whole answer (one JSON object) to
 * w.  Arguments are as the control parser hands them out, not yet
 * validated.
 */
void tasks_start(struct tasks *t, const char *id, size_t id_len,
                 const char *timeout, size_t timeout_len, long long now,
                 struct jw *w);
void tasks_cancel(struct tasks *t, const char *id, size_t id_len, long long now,
                  struct jw *w);
void tasks_revert(struct tasks *t, const char *id, size_t id_len, long long now,
                  struct jw *w);

/* The "task" member of the status answer, preceded by a comma. */
void tasks_status(const struct tasks *t, struct jw *w);

/* Accounts for a reaped child.  Returns false when it is not a task's. */
bool tasks_on_exit(struct tasks *t, pid_t pid, int status, long long now);

/* Shutdown: SIGTERM to the running step's process group; no more steps,
 * no end record (the next boot writes it). */
void tasks_halt(struct tasks *t);

/* SIGKILL to the running step's process group. */
void tasks_kill(struct tasks *t);

size_t tasks_pollfds(const struct tasks *t, struct pollfd *pfd, size_t max);
void tasks_on_poll(struct tasks *t, const struct pollfd *pfd, size_t n);
void tasks_tick(struct tasks *t, long long now);

/* The next time tasks_tick() has work (CLOCK_MONOTONIC ms), or -1. */
long long tasks_next(const struct tasks *t);

#endif
