/*
 * proc.c - starting, signalling and reaping processes.
 *
 * Every process runs in a process group of its own so that a signal meant
 * for it reaches its whole pipeline (sh -c 'a | b') and never the
 * supervisor.  Failures between fork and exec come back to the parent over
 * a CLOEXEC pipe: EOF means the exec succeeded, a struct proc_err says
 * which step failed and its errno.  The child does only async-signal-safe
 * calls; everything it needs (argv, envp) is built before the fork.
 *
 * "Everyone" is found differently by role.  As PID 1 the namespace is
 * ours, so kill(-1) reaches exactly our processes.  Run elsewhere (a test
 * on the host), kill(-1) would hit the whole machine, so only our direct
 * children are signalled; as a child subreaper we inherit orphaned
 * descendants, and a later sweep reaches them.
 *
 * Rejected: posix_spawn() (no way to report a failed chdir distinctly, and
 * its process-group and signal attributes cover only part of the reset);
 * vfork() (the saving is irrelevant at our process counts).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sig.h"

enum proc_step {
	PROC_STEP_CHDIR,
	PROC_STEP_STDIO,
	PROC_STEP_EXEC,
};

struct proc_err {
	int step;
	int err;
};

static void __attribute__((noreturn))
proc_child_fail(int errfd, enum proc_step step)
{
	struct proc_err e = {.step = step, .err = errno};
	ssize_t n = write(errfd, &e, sizeof(e));

	(void)n;
	_exit(127);
}

static void __attribute__((noreturn))
proc_child(const struct proc_spec *s, int errfd)
{
	int null;

	setpgid(0, 0);
	sig_child_reset();
	if (s->dir != NULL && chdir(s->dir) == -1)
		proc_child_fail(errfd, PROC_STEP_CHDIR);
	null = open("/dev/null", O_RDONLY);
	if (null == -1 || dup2(null, STDIN_FILENO) == -1)
		proc_child_fail(errfd, PROC_STEP_STDIO);
	if ((s->out != -1 && dup2(s->out, STDOUT_FILENO) == -1) ||
	    (s->err != -1 && dup2(s->err, STDERR_FILENO) == -1))
		proc_child_fail(errfd, PROC_STEP_STDIO);
	if (null > STDERR_FILENO)
		close(null);
	execve(s->file != NULL ? s->file : s->argv[0], s->argv, s->envp);
	proc_child_fail(errfd, PROC_STEP_EXEC);
}

static void
proc_explain(const struct proc_spec *s, const struct proc_err *e, char *why,
             size_t whylen)
{
	switch (e->step) {
	case PROC_STEP_CHDIR:
		snprintf(why, whylen, "chdir %s", s->dir);
		break;
	case PROC_STEP_STDIO:
		snprintf(why, whylen, "setting up stdin/stdout");
		break;
	default:
		snprintf(why, whylen, "exec %s",
		         s->file != NULL ? s->file : s->argv[0]);
		break;
	}
}

pid_t
proc_spawn(const struct proc_spec *s, char *why, size_t whylen)
{
	struct proc_err e;
	int fds[2], saved;
	pid_t pid;
	ssize_t n;

	snprintf(why, whylen, "fork");
	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	pid = fork();
	if (pid == 0)
		proc_child(s, fds[1]);
	saved = errno;
	close(fds[1]);
	if (pid == -1) {
		close(fds[0]);
		errno = saved;
		return -1;
	}
	/* Also from this side: signals sent right after we return must not
	 * find the child still in our group.  EACCES once it has exec'd. */
	setpgid(pid, pid);
	do
		n = read(fds[0], &e, sizeof(e));
	while (n == -1 && errno == EINTR);
	close(fds[0]);
	if (n != (ssize_t)sizeof(e))
		return pid;
	waitpid(pid, NULL, 0);
	proc_explain(s, &e, why, whylen);
	errno = e.err;
	return -1;
}

int
proc_reap(pid_t *pid, int *status)
{
	pid_t p;

	do
		p = waitpid(-1, status, WNOHANG);
	while (p == -1 && errno == EINTR);
	if (p > 0) {
		*pid = p;
		return 1;
	}
	return p == 0 ? 0 : -1;
}

/* Elsewhere: our direct children, as the kernel lists them. */
static void
proc_signal_children(int sig)
{
	char path[64];
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	         (int)getpid());
	f = fopen(path, "re");
	if (f == NULL)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		kill((pid_t)pid, sig);
	fclose(f);
}

void
proc_signal_all(int sig)
{
	if (getpid() == 1)
		kill(-1, sig);
	else
		proc_signal_children(sig);
}

int
proc_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

void
proc_describe(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with code %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by signal %d (%s)%s",
		         WTERMSIG(status), sig_name(WTERMSIG(status)),
		         WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, size, "stopped or continued (status %#x)",
		         (unsigned)status);
}
