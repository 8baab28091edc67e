/*
 * proc.c - starting, signalling and reaping processes.
 *
 * A command runs in a process group of its own so that a signal meant for
 * it reaches its whole pipeline (sh -c 'a | b') and never the supervisor.
 * Exec failures come back to the parent over a CLOEXEC pipe: EOF means the
 * exec succeeded, an int is its errno.  posix_spawn() was rejected because
 * it cannot hand the child the terminal (tcsetpgrp) before the exec.
 *
 * "Everyone else" is found differently by role.  As PID 1 the namespace is
 * ours, so /proc lists exactly our processes and kill(-1) reaches them all.
 * Run elsewhere (a test on the host), kill(-1) would hit the whole machine,
 * so only our direct children are signalled; as a child subreaper we
 * inherit orphaned descendants, and a later sweep reaches them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sig.h"

/* The command should read the terminal, if any, not the supervisor. */
static void
proc_take_terminal(void)
{
	struct sigaction ign = {.sa_handler = SIG_IGN};
	struct sigaction old;

	if (!isatty(STDIN_FILENO))
		return;
	/* A background group calling tcsetpgrp() gets SIGTTOU otherwise. */
	sigaction(SIGTTOU, &ign, &old);
	tcsetpgrp(STDIN_FILENO, getpid());
	sigaction(SIGTTOU, &old, NULL);
}

static void __attribute__((noreturn))
proc_child_exec(char *const argv[], int errfd)
{
	int err;
	ssize_t n;

	setpgid(0, 0);
	proc_take_terminal();
	sig_child_reset();
	execvp(argv[0], argv);
	err = errno;
	n = write(errfd, &err, sizeof(err));
	(void)n;
	_exit(127);
}

pid_t
proc_spawn(char *const argv[])
{
	int fds[2], err = 0, saved;
	pid_t pid;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	pid = fork();
	if (pid == 0)
		proc_child_exec(argv, fds[1]);
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
		n = read(fds[0], &err, sizeof(err));
	while (n == -1 && errno == EINTR);
	close(fds[0]);
	if (n != (ssize_t)sizeof(err))
		return pid;
	waitpid(pid, NULL, 0);
	errno = err;
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

static void
proc_signal_one(pid_t pid, pid_t skip, int sig)
{
	if (skip > 0 && getpgid(pid) == skip)
		return;
	kill(pid, sig);
}

/* As PID 1: every process in /proc but ourselves. */
static void
proc_signal_namespace(pid_t skip, int sig)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	char *end;
	long pid;

	if (dir == NULL) {
		kill(-1, sig);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 1)
			continue;
		proc_signal_one((pid_t)pid, skip, sig);
	}
	closedir(dir);
}

/* Elsewhere: our direct children, as the kernel lists them. */
static void
proc_signal_children(pid_t skip, int sig)
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
		proc_signal_one((pid_t)pid, skip, sig);
	fclose(f);
}

void
proc_signal_others(pid_t skip, int sig)
{
	if (getpid() == 1)
		proc_signal_namespace(skip, sig);
	else
		proc_signal_children(skip, sig);
}

void
proc_signal_all(pid_t pgid, int sig)
{
	if (getpid() == 1) {
		kill(-1, sig);
		return;
	}
	if (pgid > 0)
		killpg(pgid, sig);
	proc_signal_children(0, sig);
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
