/*
 * proc.h - starting, signalling and reaping the sandbox's processes.
 *
 * The supervisor is PID 1 of the sandbox (or a child subreaper when run
 * elsewhere, e.g. in tests), so every process of the sandbox is its
 * descendant and every orphan becomes its child.
 */
#ifndef SUPERVISOR_PROC_H
#define SUPERVISOR_PROC_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Starts argv[0] (looked up in PATH) with argv as a new process group led
 * by the child, and hands it the terminal when stdin is one.  Returns the
 * pid; -1 with errno set when fork() failed or when the exec failed, in
 * which case errno is the exec's error (passed back over a CLOEXEC pipe)
 * and the child has already been reaped.
 */
pid_t proc_spawn(char *const argv[]);

/*
 * Collects one exited child without blocking.  Returns 1 and sets *pid and
 * *status when one was reaped, 0 when children remain but none has
 * exited, -1 when there are no children left.
 */
int proc_reap(pid_t *pid, int *status);

/*
 * Sends sig to every process the supervisor is responsible for except the
 * members of process group skip (0 skips none).  As PID 1 that is every
 * other process of the PID namespace; elsewhere it is the direct children,
 * which orphaned descendants become in turn.
 */
void proc_signal_others(pid_t skip, int sig);

/*
 * Sends sig to every process the supervisor is responsible for: kill(-1)
 * as PID 1, else group pgid (when not 0) and the direct children.
 */
void proc_signal_all(pid_t pgid, int sig);

/* The shell convention: the exit code, or 128 + the killing signal. */
int proc_exit_code(int status);

/* Describes a wait status ("exited with code 3", "killed by SIGKILL"). */
void proc_describe(int status, char *buf, size_t size);

#endif
