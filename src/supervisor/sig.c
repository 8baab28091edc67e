/*
 * sig.c - blocked signals read from a signalfd.
 *
 * Handlers would have to funnel into the main loop anyway (self-pipe) and
 * make every blocking call EINTR-prone; a signalfd gives the loop an fd to
 * poll and siginfo for free.  Because the signals stay blocked, not merely
 * handled, the kernel queues them even for PID 1, which drops unhandled
 * signals sent from inside its namespace.
 *
 * Blocked masks and ignored dispositions survive exec(), so the handled
 * signals are set to SIG_DFL (however the supervisor was started) and every
 * child calls sig_child_reset() before exec: an empty mask and every
 * disposition back to default, whatever the supervisor inherited, so an app
 * behaves the same under us as in a terminal.
 */
#include <errno.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "sig.h"

int
sig_open(const sigset_t *set)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	struct sigaction ign = {.sa_handler = SIG_IGN};
	int sig;

	if (sigprocmask(SIG_BLOCK, set, NULL) == -1)
		return -1;
	/* An ignored SIGCHLD would reap children behind our back, and any
	 * inherited SIG_IGN would be passed on to the command. */
	for (sig = 1; sig < _NSIG; sig++)
		if (sigismember(set, sig) == 1)
			sigaction(sig, &dfl, NULL);
	if (sigaction(SIGPIPE, &ign, NULL) == -1)
		return -1;
	return signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int
sig_next(int fd)
{
	struct signalfd_siginfo si;
	ssize_t n;

	do
		n = read(fd, &si, sizeof(si));
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return errno == EAGAIN ? 0 : -1;
	if (n != (ssize_t)sizeof(si)) {
		errno = EIO;
		return -1;
	}
	return (int)si.ssi_signo;
}

void
sig_child_reset(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	int sig;

	/* Handlers do not survive exec, but ignored signals would. */
	for (sig = 1; sig < _NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

const char *
sig_name(int sig)
{
	static const char *const names[_NSIG] = {
	    [SIGHUP] = "SIGHUP",   [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
	    [SIGILL] = "SIGILL",   [SIGABRT] = "SIGABRT", [SIGBUS] = "SIGBUS",
	    [SIGFPE] = "SIGFPE",   [SIGKILL] = "SIGKILL", [SIGUSR1] = "SIGUSR1",
	    [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2", [SIGPIPE] = "SIGPIPE",
	    [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM", [SIGCHLD] = "SIGCHLD",
	    [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ", [SIGSYS] = "SIGSYS",
	};

	if (sig > 0 && sig < _NSIG && names[sig] != NULL)
		return names[sig];
	return "SIG?";
}
