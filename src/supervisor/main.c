/*
 * main.c - sandboxd-init, PID 1 of every sandbox.
 *
 *   sandboxd-init [--] [command [args...]]
 *
 * It makes sure the workspace layout exists ($HOME/workspace/app,
 * $HOME/.sandboxd), starts the command, if any, in a process group of its
 * own, forwards signals to that group, reaps every zombie of the namespace,
 * and on SIGTERM/SIGINT stops everything: the signal goes to the command's
 * group, SIGTERM to every other process, SIGKILL to all that are left
 * after INIT_GRACE_MS.  It exits 0 when stopped by a signal, with the
 * command's exit code when the command ended by itself (the rest of the
 * sandbox is stopped the same way first), and idles reaping when given no
 * command.
 *
 * One thread, one loop: signals are blocked and arrive on a signalfd
 * (sig.c), which the loop polls with a timeout only while a stop is under
 * way.  What a signal means is the table init_signals.  Children are
 * reaped on every turn of the loop rather than per SIGCHLD, since SIGCHLDs
 * coalesce.  The loop is kept poll()-shaped so the later supervisor can
 * add its control socket as another fd.
 *
 * Rejected: handling SIGTERM in a signal handler (reentrancy, EINTR
 * everywhere); exiting as soon as the command ends, as tini does (that
 * would SIGKILL its background processes without a grace period).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"
#include "sig.h"

#define INIT_GRACE_MS     5000 /* from SIGTERM to SIGKILL */
#define INIT_KILL_WAIT_MS 1000 /* from SIGKILL to giving up on stragglers */
#define INIT_DIR_MODE     0755

enum init_action {
	INIT_IGNORE = 0,
	INIT_REAP,    /* a child changed state: reaped on every loop turn */
	INIT_FORWARD, /* pass on to the command's process group */
	INIT_STOP,    /* pass on, then stop every process and exit */
};

static const enum init_action init_signals[_NSIG] = {
    [SIGCHLD] = INIT_REAP,    [SIGHUP] = INIT_FORWARD,
    [SIGQUIT] = INIT_FORWARD, [SIGUSR1] = INIT_FORWARD,
    [SIGUSR2] = INIT_FORWARD, [SIGINT] = INIT_STOP,
    [SIGTERM] = INIT_STOP,
};

/* Directories every sandbox has, relative to $HOME. */
static const char *const init_home_dirs[] = {"workspace/app", ".sandboxd"};

enum init_phase {
	INIT_RUNNING,  /* until a stop signal or the command's end */
	INIT_STOPPING, /* SIGTERM sent, waiting up to INIT_GRACE_MS */
	INIT_KILLING,  /* SIGKILL sent, waiting up to INIT_KILL_WAIT_MS */
};

struct init {
	int sigfd;
	pid_t child;   /* the command while it runs, else 0 */
	pid_t group;   /* its process group; 0 without a command */
	int exit_code; /* what the supervisor exits with */
	enum init_phase phase;
	long long deadline; /* CLOCK_MONOTONIC ms ending the phase */
};

static long long
init_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* mkdir -p: an existing directory (or file) at any step is fine. */
static int
init_mkdir_p(char *path, mode_t mode)
{
	char *p;

	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, mode) == -1 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* Failures are reported, not fatal: a sandbox without them still runs. */
static void
init_prepare_home(void)
{
	const char *home = getenv("HOME");
	char path[PATH_MAX];
	size_t i;
	int n;

	if (home == NULL || home[0] != '/') {
		log_msg("HOME is not an absolute path; not preparing it");
		return;
	}
	for (i = 0; i < sizeof(init_home_dirs) / sizeof(init_home_dirs[0]);
	     i++) {
		n = snprintf(path, sizeof(path), "%s/%s", home,
		             init_home_dirs[i]);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			log_msg("cannot create %s/%s: path too long", home,
			        init_home_dirs[i]);
			continue;
		}
		if (init_mkdir_p(path, INIT_DIR_MODE) == -1)
			log_msg("cannot create %s: %s", path, strerror(errno));
	}
}

static void
init_usage(FILE *out)
{
	fputs("usage: sandboxd-init [--] [command [args...]]\n"
	      "Runs as PID 1 of a sandbox: starts the command, forwards "
	      "signals,\nreaps zombies; idles when given no command.\n",
	      out);
}

/* Sets *cmd (NULL: no command).  Returns 0, 1 after --help, -1 on misuse. */
static int
init_parse_args(int argc, char *argv[], char ***cmd)
{
	char **args = argv + 1;

	*cmd = NULL;
	if (argc < 2)
		return 0;
	if (strcmp(args[0], "--") == 0) {
		args++;
	} else if (strcmp(args[0], "-h") == 0 ||
	           strcmp(args[0], "--help") == 0) {
		init_usage(stdout);
		return 1;
	} else if (args[0][0] == '-') {
		/* Reserved for options, so adding one never changes what an
		 * existing command line means. */
		log_msg("unknown option %s (use -- before a command)", args[0]);
		init_usage(stderr);
		return -1;
	}
	if (args[0] != NULL)
		*cmd = args;
	return 0;
}

static int
init_setup(struct init *in)
{
	sigset_t set;
	int sig;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1 && getpid() != 1)
		log_msg("cannot become a subreaper: %s", strerror(errno));
	sigemptyset(&set);
	for (sig = 1; sig < _NSIG; sig++)
		if (init_signals[sig] != INIT_IGNORE)
			sigaddset(&set, sig);
	in->sigfd = sig_open(&set);
	if (in->sigfd == -1) {
		log_msg("cannot set up signals: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int
init_start(struct init *in, char **cmd)
{
	pid_t pid = proc_spawn(cmd);

	if (pid == -1) {
		log_msg("cannot run %s: %s", cmd[0], strerror(errno));
		return errno == ENOENT ? 127 : 126;
	}
	in->child = pid;
	in->group = pid;
	log_msg("started %s (pid %d)", cmd[0], (int)pid);
	return 0;
}

/* sig: the stop signal received, forwarded to the command's group; 0 when
 * the command ended by itself. */
static void
init_stop(struct init *in, int sig)
{
	in->phase = INIT_STOPPING;
	in->deadline = init_now_ms() + INIT_GRACE_MS;
	if (sig != 0 && in->group > 0) {
		killpg(in->group, sig);
		proc_signal_others(in->group, SIGTERM);
	} else {
		proc_signal_others(0, SIGTERM);
	}
}

static void
init_kill(struct init *in)
{
	in->phase = INIT_KILLING;
	in->deadline = init_now_ms() + INIT_KILL_WAIT_MS;
	proc_signal_all(in->group, SIGKILL);
}

static void
init_on_exit(struct init *in, pid_t pid, int status)
{
	char what[96];

	proc_describe(status, what, sizeof(what));
	if (pid != in->child) {
		log_msg("reaped pid %d (%s)", (int)pid, what);
		return;
	}
	log_msg("command (pid %d) %s", (int)pid, what);
	in->child = 0;
	if (in->phase == INIT_RUNNING) {
		in->exit_code = proc_exit_code(status);
		log_msg("stopping the remaining processes");
		init_stop(in, 0);
	}
}

/* Reaps every exited child.  Returns false when no children are left. */
static bool
init_reap(struct init *in)
{
	pid_t pid;
	int status, r;

	while ((r = proc_reap(&pid, &status)) == 1)
		init_on_exit(in, pid, status);
	return r == 0;
}

static void
init_on_signal(struct init *in, int sig)
{
	const char *name = sig_name(sig);

	switch (init_signals[sig]) {
	case INIT_IGNORE:
	case INIT_REAP:
		break;
	case INIT_FORWARD:
		if (in->group > 0) {
			log_msg("%s: forwarding to group %d", name,
			        (int)in->group);
			killpg(in->group, sig);
		}
		break;
	case INIT_STOP:
		if (in->phase == INIT_RUNNING) {
			log_msg("%s: stopping", name);
			init_stop(in, sig);
		} else if (in->phase == INIT_STOPPING) {
			log_msg("%s while stopping: killing", name);
			init_kill(in);
		}
		break;
	}
}

/* Milliseconds poll() may wait: until the phase deadline, or forever. */
static int
init_timeout(const struct init *in)
{
	long long left;

	if (in->phase == INIT_RUNNING)
		return -1;
	left = in->deadline - init_now_ms();
	if (left <= 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* One turn of the loop.  Returns false when the supervisor should exit. */
static bool
init_turn(struct init *in)
{
	struct pollfd pfd = {.fd = in->sigfd, .events = POLLIN};
	int sig, timeout;

	if (!init_reap(in) && in->phase != INIT_RUNNING)
		return false;
	timeout = init_timeout(in);
	if (timeout == 0 && in->phase == INIT_KILLING) {
		log_msg("processes survived SIGKILL; exiting anyway");
		return false;
	}
	if (timeout == 0) {
		log_msg("grace period over: sending SIGKILL");
		init_kill(in);
		return true;
	}
	if (poll(&pfd, 1, timeout) == -1 && errno != EINTR) {
		log_msg("poll: %s", strerror(errno));
		return false;
	}
	while ((sig = sig_next(in->sigfd)) > 0)
		init_on_signal(in, sig);
	if (sig == -1) {
		log_msg("reading signals: %s", strerror(errno));
		return false;
	}
	return true;
}

int
main(int argc, char *argv[])
{
	struct init in = {.sigfd = -1, .phase = INIT_RUNNING};
	char **cmd;
	int rc;

	rc = init_parse_args(argc, argv, &cmd);
	if (rc != 0)
		return rc < 0 ? 2 : 0;
	if (init_setup(&in) == -1)
		return 1;
	init_prepare_home();
	if (cmd == NULL)
		log_msg("pid %d: no command, idling", (int)getpid());
	else if ((rc = init_start(&in, cmd)) != 0)
		return rc;
	while (init_turn(&in))
		;
	log_msg("exiting with code %d", in.exit_code);
	return in.exit_code;
}
