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

struct proc_spec {
	char *const *argv; /* argv[0]: an absolute path unless file is set */
	const char *file;  /* the program to run; NULL: argv[0] */
	char *const *envp;
	const char *dir; /* working directory; NULL: the supervisor's */
	int out;         /* stdout; -1: the supervisor's */
	int err;         /* stderr; -1: the supervisor's */
};

/*
 * Starts s->argv as a new process group led by the child, stdin from
 * /dev/null, a clean signal mask and default dispositions.  Returns the
 * pid; -1 with errno set and why ("fork", "chdir /x", "exec /bin/sh") when
 * fork(), the chdir or the exec failed (the child's errno comes back over
 * a CLOEXEC pipe; the child has been reaped).
 */
pid_t proc_spawn(const struct proc_spec *s, char *why, size_t whylen);

/*
 * Collects one exited child without blocking.  Returns 1 and sets *pid and
 * *status when one was reaped, 0 when children remain but none has
 * exited, -1 when there are no children left.
 */
int proc_reap(pid_t *pid, int *status);

/*
 * Sends sig to every process the supervisor is responsible for: as PID 1
 * every other process of the PID namespace (kill(-1)); elsewhere its
 * direct children, which orphaned descendants become in turn.
 */
void proc_signal_all(int sig);

/* The shell convention: the exit code, or 128 + the killing signal. */
int proc_exit_code(int status);

/* Describes a wait status ("exited with code 3", "killed by SIGKILL"). */
void proc_describe(int status, char *buf, size_t size);

#endif
