/*
 * main.c - sandboxd-init, PID 1 of every sandbox (docs/supervisor.md).
 *
 *   sandboxd-init            run the sandbox
 *   sandboxd-init --version | --help
 *
 * At boot it makes sure the workspace layout exists, seeds the app from
 * its preset's template if due (seed.c), then applies .sandboxd/run.conf
 * (conf.c, procs.c) and only then opens the control socket (ctl.c): the
 * control plane takes a live socket to mean that the first boot is done,
 * and sends the app's environment (appenv.c) over it, which is only ever
 * held in memory.  It
 * reaps every zombie of the namespace (as PID 1, or as a child subreaper when
 * run elsewhere, e.g. in tests), reloads run.conf on SIGHUP, and on
 * SIGTERM/SIGINT stops everything: SIGTERM to every process group and
 * every other process, SIGKILL to what is left after INIT_GRACE_MS, exit 0.
 *
 * One thread, one poll() loop.  Signals are blocked and read from a
 * signalfd (sig.c); the control socket and its clients, every process's
 * log pipe and the health check's socket are polled fds; everything timed
 * (backoff restarts, SIGKILL escalation, health checks, client deadlines,
 * the shutdown grace) is a deadline the modules report, and poll() sleeps
 * until the earliest.  Children are reaped on every turn, not per SIGCHLD
 * (SIGCHLDs coalesce), and each exit is attributed by pid: the seeding
 * copy, one of our process group leaders, or an orphan.
 *
 * The first thing it does is set no_new_privs: nothing it starts may
 * gain privileges by exec (setuid, file capabilities).  Docker does it
 * for us (no-new-privileges), but a swarm service cannot ask for it
 * before Engine 25, so the supervisor does it itself in every mode; it
 * is inherited by every process of the sandbox and cannot be undone.
 *
 * Rejected: epoll and timerfd (a few dozen fds and deadlines: poll() with
 * a computed timeout is simpler and as fast); threads (every module would
 * need locks); running a command given on the command line (the sandbox's
 * processes come from run.conf only, so there is one way to start them).
 */
#include <errno.h>
#include <fcntl.h>
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

#include "conf.h"
#include "ctl.h"
#include "install.h"
#include "log.h"
#include "proc.h"
#include "procs.h"
#include "seed.h"
#include "sig.h"
#include "tasks.h"

#ifndef SANDBOXD_VERSION
#define SANDBOXD_VERSION "0.1.0"
#endif

#define INIT_HOME          "/home/sandbox"
#define INIT_DIR_MODE      0755
#define INIT_POLLFDS       (1 + 1 + CTL_CLIENTS + PROCS_MAX + 1 + 1 + 1)
#define INIT_CGROUP        "/sys/fs/cgroup"
#define INIT_ORPHAN_LOG_MS 1000

enum init_phase {
	INIT_RUNNING,
	INIT_STOPPING, /* SIGTERM sent, waiting up to INIT_GRACE_MS */
	INIT_KILLING,  /* SIGKILL sent, waiting up to INIT_KILL_WAIT_MS */
};

struct init {
	int sigfd;
	char home[PATH_MAX];
	char conf_path[PATH_MAX];
	char sock_path[PATH_MAX];
	pid_t seed_pid; /* the seeding copy while it runs */
	struct ctl ctl;
	struct procs procs;
	struct install install; /* run.conf's install step */
	struct tasks tasks;
	enum init_phase phase;
	long long deadline;        /* end of the phase */
	long long orphan_log_at;   /* next reaped orphan worth a log line */
	unsigned orphans_unlogged; /* reaped since the last line */
};

static long long
init_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- run.conf --------------------------------------------------------------
 */

/*
 * Reads and parses run.conf.  Returns 1 with *c filled, 0 when there is no
 * run.conf, -1 with err set.  Only a regular file is read, without
 * following a symlink or blocking on a FIFO the sandbox user put there.
 */
static int
init_read_conf(const char *path, struct conf *c, char *err, size_t errlen)
{
	struct stat st;
	ssize_t n = 0, r = 0;
	char *buf;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -1 && errno == ENOENT)
		return 0;
	if (fd == -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "run.conf: cannot read: %s",
		         fd == -1 ? strerror(errno) : "not a regular file");
		goto out;
	}
	buf = malloc(CONF_FILE_MAX + 1);
	if (buf == NULL) {
		snprintf(err, errlen, "run.conf: out of memory");
		goto out;
	}
	while (n <= CONF_FILE_MAX &&
	       (r = read(fd, buf + n, CONF_FILE_MAX + 1 - (size_t)n)) != 0) {
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1)
			break;
		n += r;
	}
	if (r == -1)
		snprintf(err, errlen, "run.conf: cannot read: %s",
		         strerror(errno));
	else
		rc = conf_parse(buf, (size_t)n, c, err, errlen) == 0 ? 1 : -1;
	free(buf);
out:
	if (fd != -1)
		close(fd);
	return rc;
}

/* Applies run.conf (or its absence).  Returns 0, or -1 with err set and
 * the running processes left as they are. */
static int
init_load(struct init *in, char *err, size_t errlen)
{
	struct conf c = {.n = 0};
	size_t n;
	int r;

	r = init_read_conf(in->conf_path, &c, err, errlen);
	if (r == -1)
		return -1;
	n = c.n; /* the install step may take them */
	r = install_apply(&in->install, &in->procs, r == 1 ? &c : NULL,
	                  init_now_ms(), err, errlen);
	if (r == 0 && in->procs.configured)
		log_msg("run.conf applied (%zu records)", n);
	conf_free(&c);
	return r;
}

/* --- control requests ---------------------------------------------------- */

static void
init_error(struct jw *w, const char *msg)
{
	jw_raw(w, "{\"ok\":false,\"error\":");
	jw_str(w, msg, strlen(msg));
	jw_raw(w, "}");
}

static void
init_ping(struct init *in, const struct ctl_req *req, struct jw *w)
{
	(void)in;
	(void)req;
	jw_raw(w, "{\"ok\":true,\"version\":\"" SANDBOXD_VERSION "\"}");
}

static void
init_status(struct init *in, const struct ctl_req *req, struct jw *w)
{
	(void)req;
	jw_raw(w, "{\"ok\":true");
	procs_status(&in->procs, w);
	install_status(&in->install, w);
	tasks_status(&in->tasks, w);
	/* How many, never which values. */
	jw_key(w, "env_count", true);
	jw_int(w, (long long)in->procs.app_env.n);
	jw_raw(w, "}");
}

static void
init_restart(struct init *in, const struct ctl_req *req, struct jw *w)
{
	char msg[96];
	int n;

	if (in->phase != INIT_RUNNING) {
		init_error(w, "shutting down");
		return;
	}
	if (procs_restart(&in->procs, req->arg, req->arg_len, init_now_ms()) ==
	    0) {
		log_msg("restart %.*s: requested", (int)req->arg_len, req->arg);
		jw_raw(w, "{\"ok\":true}");
		return;
	}
	/* After a failed install no process runs: a restart retries it. */
	if (install_retry(&in->install, &in->procs, init_now_ms())) {
		jw_raw(w, "{\"ok\":true,\"install\":true}");
		return;
	}
	/* The name is echoed, cut to a sane length; jw escapes it. */
	n = snprintf(msg, sizeof(msg), "no such process: %.*s",
	             req->arg_len > 64 ? 64 : (int)req->arg_len, req->arg);
	jw_raw(w, "{\"ok\":false,\"error\":");
	jw_str(w, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	jw_raw(w, "}");
}

static void
init_reload(struct init *in, const struct ctl_req *req, struct jw *w)
{
	char err[256];

	(void)req;
	if (in->phase != INIT_RUNNING) {
		init_error(w, "shutting down");
		return;
	}
	if (init_load(in, err, sizeof(err)) == -1) {
		log_msg("reload refused: %s", err);
		init_error(w, err);
		return;
	}
	jw_raw(w, "{\"ok\":true}");
}

static void
init_task_start(struct init *in, const struct ctl_req *req, struct jw *w)
{
	/* The agent would work on a tree being installed into. */
	if (in->install.state == INSTALL_RUNNING) {
		init_error(w, "installing dependencies: try again when the "
		              "install is done");
		return;
	}
	tasks_start(&in->tasks, req->arg, req->arg_len, req->arg2,
	            req->arg2_len, init_now_ms(), w);
}

static void
init_task_cancel(struct init *in, const struct ctl_req *req, struct jw *w)
{
	tasks_cancel(&in->tasks, req->arg, req->arg_len, init_now_ms(), w);
}

static void
init_task_revert(struct init *in, const struct ctl_req *req, struct jw *w)
{
	tasks_revert(&in->tasks, req->arg, req->arg_len, init_now_ms(), w);
}

/* The app's environment (appenv.c): kept in memory, never on disk. */
static void
init_env(struct init *in, const struct ctl_req *req, struct jw *w)
{
	struct appenv e;
	char err[256];
	bool changed;

	if (in->phase != INIT_RUNNING) {
		init_error(w, "shutting down");
		return;
	}
	if (appenv_parse(req->body, req->body_len, &e, err, sizeof(err)) ==
	    -1) {
		log_msg("env refused: %s", err);
		init_error(w, err);
		return;
	}
	changed = procs_set_app_env(&in->procs, &e, init_now_ms());
	if (changed)
		log_msg("the app's environment changed (%zu variables): "
		        "processes restart",
		        in->procs.app_env.n);
	jw_raw(w, changed ? "{\"ok\":true,\"changed\":true}"
	                  : "{\"ok\":true,\"changed\":false}");
}

typedef void init_request_fn(struct init *, const struct ctl_req *,
                             struct jw *);

static init_request_fn *const init_requests[] = {
    [CTL_PING] = init_ping,
    [CTL_STATUS] = init_status,
    [CTL_RESTART] = init_restart,
    [CTL_RELOAD] = init_reload,
    [CTL_TASK_START] = init_task_start,
    [CTL_TASK_CANCEL] = init_task_cancel,
    [CTL_TASK_REVERT] = init_task_revert,
    [CTL_ENV] = init_env,
};

static void
init_answer(void *ctx, const struct ctl_req *req, struct jw *w)
{
	init_requests[req->op](ctx, req, w);
}

/* After seeding: applies run.conf, then opens the control socket (the
 * control plane takes the socket as the sign that the first boot is
 * done). */
static void
init_ready(struct init *in)
{
	char err[256];

	if (init_load(in, err, sizeof(err)) == -1) {
		log_msg("%s; nothing started", err);
		procs_unconfigured(&in->procs, err);
	}
	if (ctl_open(&in->ctl, in->sock_path, init_answer, in) == -1)
		log_msg("no control socket at %s: %s", in->sock_path,
		        strerror(errno));
}

/* --- children and signals ------------------------------------------------ */

static void
init_on_exit(struct init *in, pid_t pid, int status, long long now)
{
	char what[96];

	if (pid == in->seed_pid) {
		in->seed_pid = 0;
		seed_finish(in->home, status);
		if (in->phase == INIT_RUNNING)
			init_ready(in);
		return;
	}
	if (install_on_exit(&in->install, &in->procs, pid, status, now) ||
	    procs_on_exit(&in->procs, pid, status, now) ||
	    tasks_on_exit(&in->tasks, pid, status, now))
		return;
	/* At most one line a second: an app can make orphans by the
	 * thousand, and our stderr is the container's log. */
	if (now < in->orphan_log_at) {
		in->orphans_unlogged++;
		return;
	}
	proc_describe(status, what, sizeof(what));
	log_msg("reaped orphan pid %d (%s); %u more since the last report",
	        (int)pid, what, in->orphans_unlogged);
	in->orphans_unlogged = 0;
	in->orphan_log_at = now + INIT_ORPHAN_LOG_MS;
}

/* Reaps every exited child.  Returns false when no children are left. */
static bool
init_reap(struct init *in, long long now)
{
	pid_t pid;
	int status, r;

	while ((r = proc_reap(&pid, &status)) == 1)
		init_on_exit(in, pid, status, now);
	return r == 0;
}

static void
init_stop(struct init *in, long long now)
{
	in->phase = INIT_STOPPING;
	in->deadline = now + INIT_GRACE_MS;
	procs_halt(&in->procs, now);
	tasks_halt(&in->tasks);
	proc_signal_all(SIGTERM);
}

static void
init_kill(struct init *in, long long now)
{
	log_msg("grace period over: sending SIGKILL");
	in->phase = INIT_KILLING;
	in->deadline = now + INIT_KILL_WAIT_MS;
	procs_kill(&in->procs);
	tasks_kill(&in->tasks);
	proc_signal_all(SIGKILL);
}

static void
init_on_signal(struct init *in, int sig, long long now)
{
	char err[256];

	switch (sig) {
	case SIGHUP:
		if (in->phase != INIT_RUNNING || in->seed_pid != 0)
			break;
		if (init_load(in, err, sizeof(err)) == -1)
			log_msg("SIGHUP: reload refused: %s", err);
		break;
	case SIGTERM:
	case SIGINT:
		if (in->phase == INIT_RUNNING) {
			log_msg("%s: stopping", sig_name(sig));
			init_stop(in, now);
		} else if (in->phase == INIT_STOPPING) {
			log_msg("%s while stopping: killing", sig_name(sig));
			init_kill(in, now);
		}
		break;
	default:
		break; /* SIGCHLD: reaped every turn */
	}
}

/* Returns false on a broken signalfd. */
static bool
init_signals(struct init *in, long long now)
{
	int sig;

	while ((sig = sig_next(in->sigfd)) > 0)
		init_on_signal(in, sig, now);
	if (sig == -1) {
		log_msg("reading signals: %s", strerror(errno));
		return false;
	}
	return true;
}

/* --- the loop ------------------------------------------------------------ */

/* Milliseconds poll() may sleep: until the earliest deadline, or -1. */
static int
init_timeout(const struct init *in, long long now)
{
	long long next =
	    procs_earliest(ctl_next(&in->ctl), procs_next(&in->procs));

	next = procs_earliest(next, tasks_next(&in->tasks));
	next = procs_earliest(next, install_next(&in->install));

	if (in->phase != INIT_RUNNING)
		next = procs_earliest(next, in->deadline);
	if (next == -1)
		return -1;
	if (next <= now)
		return 0;
	return next - now > INT_MAX ? INT_MAX : (int)(next - now);
}

/* Returns false when the supervisor should exit. */
static bool
init_after_poll(struct init *in, long long now)
{
	bool children = init_reap(in, now);

	ctl_tick(&in->ctl, now);
	procs_tick(&in->procs, now);
	install_tick(&in->install, &in->procs, now);
	tasks_tick(&in->tasks, now);
	if (in->phase == INIT_RUNNING)
		return true;
	if (!children)
		return false;
	if (now < in->deadline)
		return true;
	if (in->phase == INIT_KILLING) {
		log_msg("processes survived SIGKILL; exiting anyway");
		return false;
	}
	init_kill(in, now);
	return true;
}

/* One turn of the loop.  Returns false when the supervisor should exit. */
static bool
init_turn(struct init *in)
{
	struct pollfd pfd[INIT_POLLFDS];
	size_t n = 1, nprocs, ninst, ntasks, nctl;
	long long now = init_now_ms();
	int timeout = init_timeout(in, now);

	pfd[0] = (struct pollfd){.fd = in->sigfd, .events = POLLIN};
	nprocs = procs_pollfds(&in->procs, pfd + n, INIT_POLLFDS - n);
	n += nprocs;
	ninst = install_pollfds(&in->install, pfd + n, INIT_POLLFDS - n);
	n += ninst;
	ntasks = tasks_pollfds(&in->tasks, pfd + n, INIT_POLLFDS - n);
	n += ntasks;
	nctl = ctl_pollfds(&in->ctl, pfd + n, INIT_POLLFDS - n);
	n += nctl;
	if (poll(pfd, n, timeout) == -1 && errno != EINTR) {
		log_msg("poll: %s", strerror(errno));
		return false;
	}
	now = init_now_ms();
	/* Log pipes, the health check and a task's pipe first: a request
	 * handled below may close and reuse their fd numbers. */
	procs_on_poll(&in->procs, pfd + 1, nprocs, now);
	install_on_poll(&in->install, pfd + 1 + nprocs, ninst);
	tasks_on_poll(&in->tasks, pfd + 1 + nprocs + ninst, ntasks);
	ctl_on_poll(&in->ctl, pfd + 1 + nprocs + ninst + ntasks, nctl, now);
	if (!init_signals(in, now))
		return false;
	return init_after_poll(in, now);
}

/* --- setup -----------------------------------------------------------------
 */

/* Closed 0-2 would be reused by our own fds and then clobbered by dup2()
 * in children. */
static void
init_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) != -1 && fd <= STDERR_FILENO)
		;
	if (fd > STDERR_FILENO)
		close(fd);
}

static int
init_mkdir(const char *home, const char *sub)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", home, sub);
	if (mkdir(path, INIT_DIR_MODE) == -1 && errno != EEXIST) {
		log_msg("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* $HOME, its workspace/app and .sandboxd. */
static void
init_prepare_home(struct init *in)
{
	const char *home = getenv("HOME");

	if (home == NULL || home[0] != '/' || strlen(home) > PATH_MAX - 64) {
		log_msg("HOME is not a usable absolute path; using %s",
		        INIT_HOME);
		home = INIT_HOME;
	}
	snprintf(in->home, sizeof(in->home), "%s", home);
	snprintf(in->conf_path, sizeof(in->conf_path), "%s/.sandboxd/run.conf",
	         home);
	snprintf(in->sock_path, sizeof(in->sock_path), "%s/.sandboxd/sock",
	         home);
	init_mkdir(home, "workspace");
	init_mkdir(home, "workspace/app");
	init_mkdir(home, ".sandboxd");
}

static long long
init_backoff_ms(void)
{
	const char *s = getenv("SANDBOXD_INIT_BACKOFF_MS");
	char *end;
	long v;

	if (s == NULL || s[0] == '\0')
		return PROCS_BACKOFF_MS;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 10 || v > PROCS_BACKOFF_MS) {
		log_msg("ignoring SANDBOXD_INIT_BACKOFF_MS=%.32s (want 10-%d)",
		        s, PROCS_BACKOFF_MS);
		return PROCS_BACKOFF_MS;
	}
	return v;
}

/* Where the cgroup's memory.events is (a test's fake one, or the
 * container's). */
static const char *
init_cgroup(void)
{
	const char *s = getenv("SANDBOXD_INIT_CGROUP");

	return s != NULL && s[0] == '/' ? s : INIT_CGROUP;
}

static int
init_setup(struct init *in)
{
	sigset_t set;

	init_std_fds();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1 && getpid() != 1)
		log_msg("cannot become a subreaper: %s", strerror(errno));
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	in->sigfd = sig_open(&set);
	if (in->sigfd == -1) {
		log_msg("cannot set up signals: %s", strerror(errno));
		return -1;
	}
	init_prepare_home(in);
	if (procs_init(&in->procs, in->home, init_backoff_ms()) == -1 ||
	    tasks_init(&in->tasks, in->home, init_cgroup(), &in->procs) == -1) {
		log_msg("out of memory");
		return -1;
	}
	install_init(&in->install, in->home);
	/* Before the socket opens: the control plane must not see a task
	 * of the last boot as running. */
	tasks_sweep(&in->tasks);
	/* A socket left from the last boot would look like a live one. */
	unlink(in->sock_path);
	return 0;
}

static int
init_args(int argc, char *argv[])
{
	if (argc < 2)
		return 0;
	if (strcmp(argv[1], "--version") == 0) {
		printf("sandboxd-init %s\n", SANDBOXD_VERSION);
		return 1;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		printf("usage: sandboxd-init\n"
		       "PID 1 of a sandbox: runs $HOME/.sandboxd/run.conf, "
		       "serves $HOME/.sandboxd/sock.\n"
		       "See docs/supervisor.md.\n");
		return 1;
	}
	log_msg("usage: sandboxd-init [--help | --version] (no arguments "
	        "otherwise; processes come from run.conf)");
	return -1;
}

int
main(int argc, char *argv[])
{
	struct init in = {.sigfd = -1, .phase = INIT_RUNNING};
	const char *templates = getenv("SANDBOXD_INIT_TEMPLATES");
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		fprintf(stderr, "sandboxd-init: no_new_privs: %s\n",
		        strerror(errno));
		return 1;
	}
	rc = init_args(argc, argv);
	if (rc != 0)
		return rc < 0 ? 2 : 0;
	in.ctl.fd = -1;
	if (init_setup(&in) == -1)
		return 1;
	log_msg("pid %d: supervising %s", (int)getpid(), in.home);
	in.seed_pid = seed_start(in.home, getenv("SANDBOXD_PRESET"),
	                         templates ? templates : SEED_TEMPLATES);
	if (in.seed_pid == 0)
		init_ready(&in);
	while (init_turn(&in))
		;
	ctl_close(&in.ctl);
	tasks_release(&in.tasks);
	install_release(&in.install);
	procs_release(&in.procs);
	log_msg("exiting");
	return 0;
}
