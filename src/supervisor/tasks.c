/*
 * tasks.c - the agent task pipeline and the task requests.
 *
 * A task is a short list of steps run from the main loop (taskstep.c):
 * checkpoint (a git commit of the app as it is), the agent itself, files
 * (what changed since the checkpoint), build (run.conf's build command,
 * when there is one) and health (restart the processes that ask for it and
 * wait for the web process's verdict).  Each step appends its records to
 * the task's steps file as it goes (taskdir.c), so the file is the task's
 * whole story at any moment: the control plane reads it from the host,
 * and a control plane that restarts mid-task loses nothing.
 *
 * This module moves a task from step to step: tasks_go() begins a step and
 * goes on at once while steps end without a child; a reaped child ends
 * its step and the next one begins.  Steps that are not due (build
 * without a build record; build and health after a cancel) are skipped by
 * tasks_after().  Timeouts and cancels stop a child as procs stops a
 * process: SIGTERM to its group, SIGKILL PROCS_STOP_MS later; when a
 * step's leader exits, what is left of its group is SIGKILLed, so an
 * agent's background jobs do not outlive its task.
 *
 * Requests are checked in the order the protocol promises: shutdown, the
 * arguments, another task or revert in progress, then the directory and
 * its files.  A start that passes creates the steps file with O_EXCL, so
 * a task runs at most once even if the control plane retries.
 *
 * Invariants: at most one run (task or revert) exists; it has at most one
 * child, its pid is 0 when none runs; a run in the health step has no
 * child; the run is freed right after its end record (or at shutdown,
 * without one: the next boot writes it, see taskdir_sweep).
 *
 * Rejected: running the pipeline as one shell script (a cancel, timeout or
 * restart could not tell which step it hit, and the records would be the
 * script's to get right); a queue of tasks (the control plane owns
 * scheduling; one at a time here keeps the workspace consistent).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"
#include "taskdir.h"
#include "tasks.h"
#include "taskstep.h"

#define TASKS_READS 16 /* pipe reads per loop turn */
/* Reads after the child exited: its output is in the pipe buffer (64 KiB),
 * and a stray writer elsewhere must not keep us here. */
#define TASKS_DRAIN_READS 64

int
tasks_init(struct tasks *t, const char *home, const char *cgroup,
           struct procs *procs)
{
	size_t n = strlen(home) + sizeof("/.sandboxd/tasks");

	memset(t, 0, sizeof(*t));
	t->procs = procs;
	t->dir = malloc(n);
	t->cgroup = strdup(cgroup);
	if (t->dir == NULL || t->cgroup == NULL)
		return -1;
	snprintf(t->dir, n, "%s/.sandboxd/tasks", home);
	if (mkdir(t->dir, 0755) == -1 && errno != EEXIST)
		log_msg("cannot create %s: %s", t->dir, strerror(errno));
	return 0;
}

/* Drops the run (its end record, if any, written). */
static void
tasks_finish(struct tasks *t)
{
	struct tasks_run *r = t->run;

	if (r == NULL)
		return;
	taskstep_close(&r->dir);
	taskstep_close(&r->steps);
	taskstep_close(&r->gitlog);
	taskstep_close(&r->out);
	taskstep_close(&r->files);
	free(r->argbuf);
	free(r->envbuf);
	free(r);
	t->run = NULL;
}

void
tasks_release(struct tasks *t)
{
	tasks_finish(t);
	free(t->dir);
	free(t->cgroup);
}

void
tasks_sweep(const struct tasks *t)
{
	taskdir_sweep(t->dir);
}

/* --- the pipeline -------------------------------------------------------- */

/* The step after r's current one. */
static enum tasks_step
tasks_after(const struct tasks *t, const struct tasks_run *r)
{
	switch (r->step) {
	case TASKS_CHECKPOINT:
		return TASKS_AGENT;
	case TASKS_AGENT:
		return TASKS_FILES;
	case TASKS_FILES:
		/* No build or health check after a failed agent: nothing
		 * green follows a failure. */
		if (r->cancelled || r->agent_failed)
			return TASKS_END;
		return t->procs->build.cmd != NULL ? TASKS_BUILD : TASKS_HEALTH;
	case TASKS_BUILD:
		return r->cancelled ? TASKS_END : TASKS_HEALTH;
	default:
		return TASKS_END;
	}
}

/* Begins step, and the ones after it while each is over at once. */
static void
tasks_go(struct tasks *t, struct tasks_run *r, enum tasks_step step,
         long long now)
{
	for (;;) {
		r->step = step;
		r->deadline = -1;
		if (step == TASKS_END) {
			taskdir_record(r->steps, "end\t%lld\tended",
			               taskdir_unix_ms());
			log_msg("task %s: ended", r->id);
			tasks_finish(t);
			return;
		}
		if (taskstep_begin(t, r, now) == 0)
			return;
		step = tasks_after(t, r);
	}
}

/* --- requests ------------------------------------------------------------ */

static void
tasks_error(struct jw *w, const char *msg)
{
	jw_raw(w, "{\"ok\":false,\"error\":");
	jw_str(w, msg, strlen(msg));
	jw_raw(w, "}");
}

static void
tasks_busy(const struct tasks *t, struct jw *w)
{
	jw_raw(w, "{\"ok\":false,\"error\":\"task_in_progress\",\"task\":");
	jw_str(w, t->run->id, strlen(t->run->id));
	jw_raw(w, "}");
}

static struct tasks_run *
tasks_run_new(const char *id, int dir)
{
	struct tasks_run *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	memcpy(r->id, id, TASK_ID_LEN);
	r->dir = dir;
	r->steps = r->gitlog = r->out = r->files = -1;
	r->deadline = r->kill_at = -1;
	return r;
}

/* The first checks of a start and a revert, in the protocol's order:
 * shutdown, then the id.  Returns 0, or -1 with the error answered. */
static int
tasks_check(const struct tasks *t, const char *id, size_t id_len, struct jw *w)
{
	if (t->halting) {
		tasks_error(w, "shutting down");
		return -1;
	}
	if (!task_id_ok(id, id_len)) {
		tasks_error(w, "invalid task id");
		return -1;
	}
	return 0;
}

/* Opens the task's directory, answering the error when it cannot. */
static int
tasks_open_dir(const struct tasks *t, const char *id, struct jw *w,
               const char *missing)
{
	int dir = taskdir_open(t->dir, id);
	char msg[160];

	if (dir != -1)
		return dir;
	if (errno == ENOENT)
		snprintf(msg, sizeof(msg), "%s", missing);
	else if (errno == ELOOP)
		snprintf(msg, sizeof(msg), "the task directory is a symlink");
	else
		snprintf(msg, sizeof(msg), "cannot open the task directory: %s",
		         strerror(errno));
	tasks_error(w, msg);
	return -1;
}

/* Makes the run of task id (checked) in its directory t's run.  Returns
 * it, or NULL with the error answered (missing, when there is no such
 * directory). */
static struct tasks_run *
tasks_run_open(struct tasks *t, const char *id, const char *missing,
               struct jw *w)
{
	char idz[TASK_ID_LEN + 1];
	struct tasks_run *r;
	int dir;

	memcpy(idz, id, TASK_ID_LEN);
	idz[TASK_ID_LEN] = '\0';
	dir = tasks_open_dir(t, idz, w, missing);
	if (dir == -1)
		return NULL;
	r = tasks_run_new(idz, dir);
	if (r == NULL) {
		close(dir);
		tasks_error(w, "out of memory");
		return NULL;
	}
	t->run = r;
	return r;
}

/* Reads the task's file name, at most max bytes, like taskdir_read();
 * when it cannot, err says why and errno is kept. */
static char *
tasks_read(int dir, const char *name, size_t max, size_t *len, char *err,
           size_t errlen)
{
	char *buf = taskdir_read(dir, name, max, len);
	int e = errno;

	if (buf != NULL)
		return buf;
	if (e == EFBIG)
		snprintf(err, errlen, "%s: larger than %zu bytes", name, max);
	else
		snprintf(err, errlen, "%s: %s", name, taskdir_why(e));
	errno = e;
	return NULL;
}

/* Reads and parses argv and env into r.  Returns 0, or -1 with err set. */
static int
tasks_load(struct tasks_run *r, char *err, size_t errlen)
{
	size_t len;

	r->argbuf =
	    tasks_read(r->dir, "argv", TASK_ARGV_BYTES, &len, err, errlen);
	if (r->argbuf == NULL ||
	    task_argv_parse(r->argbuf, len, r->argv, err, errlen) == -1)
		return -1;
	r->envbuf =
	    tasks_read(r->dir, "env", TASK_ENV_BYTES, &len, err, errlen);
	if (r->envbuf == NULL)
		return errno == ENOENT ? 0 : -1; /* no env file: none */
	return task_env_parse(r->envbuf, len, r->env, err, errlen) == -1 ? -1
	                                                                 : 0;
}

/* The checks of task start that need the directory; then the run begins.
 * Returns 0, or -1 with the error answered. */
static int
tasks_begin(struct tasks *t, struct tasks_run *r, long long now, struct jw *w)
{
	char err[256];
	struct stat st;

	if (fstatat(r->dir, "steps", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		tasks_error(w, "task already ran");
		return -1;
	}
	if (tasks_load(r, err, sizeof(err)) == -1) {
		tasks_error(w, err);
		return -1;
	}
	r->steps = taskdir_create(r->dir, "steps", O_EXCL);
	if (r->steps == -1) {
		if (errno == EEXIST)
			snprintf(err, sizeof(err), "task already ran");
		else
			snprintf(err, sizeof(err), "cannot create steps: %s",
			         taskdir_why(errno));
		tasks_error(w, err);
		return -1;
	}
	r->gitlog = taskdir_create(r->dir, "checkpoint.log", O_RDWR);
	if (r->gitlog == -1)
		log_msg("task %s: cannot open checkpoint.log (%s); git's "
		        "errors go here",
		        r->id, taskdir_why(errno));
	taskdir_record(r->steps, "start\t%lld", taskdir_unix_ms());
	log_msg("task %s: started (timeout %u s)", r->id, r->timeout_s);
	jw_raw(w, "{\"ok\":true}");
	tasks_go(t, r, TASKS_CHECKPOINT, now);
	return 0;
}

void
tasks_start(struct tasks *t, const char *id, size_t id_len, const char *timeout,
            size_t timeout_len, long long now, struct jw *w)
{
	struct tasks_run *r;
	unsigned secs;

	if (tasks_check(t, id, id_len, w) == -1)
		return;
	secs = task_timeout_parse(timeout, timeout_len);
	if (secs == 0) {
		tasks_error(w, "timeout must be 1-86400 seconds");
		return;
	}
	if (t->run != NULL) {
		if (t->run->step != TASKS_REVERT &&
		    memcmp(t->run->id, id, TASK_ID_LEN) == 0)
			jw_raw(w, "{\"ok\":true}");
		else
			tasks_busy(t, w);
		return;
	}
	r = tasks_run_open(t, id, "no such task directory", w);
	if (r == NULL)
		return;
	r->timeout_s = secs;
	if (tasks_begin(t, r, now, w) == -1)
		tasks_finish(t);
}

void
tasks_cancel(struct tasks *t, const char *id, size_t id_len, long long now,
             struct jw *w)
{
	struct tasks_run *r = t->run;
	struct task_steps st;
	char idz[TASK_ID_LEN + 1];
	int dir, rc;

	if (!task_id_ok(id, id_len)) {
		tasks_error(w, "invalid task id");
		return;
	}
	if (r != NULL && r->step != TASKS_REVERT &&
	    memcmp(r->id, id, TASK_ID_LEN) == 0) {
		jw_raw(w, "{\"ok\":true}");
		if (r->cancelled)
			return;
		r->cancelled = true;
		log_msg("task %s: cancelled during %s", r->id,
		        taskstep_names[r->step]);
		/* The checkpoint and the file list are short and worth
		 * having; the agent and the build are stopped; the health
		 * wait is dropped. */
		if (r->step == TASKS_AGENT || r->step == TASKS_BUILD)
			taskstep_stop(r, now);
		else if (r->step == TASKS_HEALTH && !t->halting)
			tasks_go(t, r, TASKS_END, now);
		return;
	}
	memcpy(idz, id, TASK_ID_LEN);
	idz[TASK_ID_LEN] = '\0';
	dir = taskdir_open(t->dir, idz);
	rc = dir == -1 ? -1 : taskdir_steps(dir, &st);
	if (dir != -1)
		close(dir);
	if (rc == 0 && st.end) {
		jw_raw(w, "{\"ok\":true,\"state\":\"ended\"}");
		return;
	}
	tasks_error(w, "no such task");
}

/* The checks of task revert that need the directory; r->sha is the
 * checkpoint to go back to.  Returns 0, or -1 with the error answered. */
static int
tasks_revert_check(struct tasks_run *r, struct jw *w)
{
	struct task_steps st;
	char why[256];

	if (taskdir_steps(r->dir, &st) == -1 || st.sha[0] == '\0') {
		tasks_error(w, "task has no checkpoint to revert to");
		return -1;
	}
	if (unlinkat(r->dir, "revert", 0) == -1 && errno != ENOENT) {
		snprintf(why, sizeof(why), "cannot remove the old revert: %s",
		         strerror(errno));
		tasks_error(w, why);
		return -1;
	}
	memcpy(r->sha, st.sha, sizeof(r->sha));
	return 0;
}

void
tasks_revert(struct tasks *t, const char *id, size_t id_len, long long now,
             struct jw *w)
{
	struct tasks_run *r;

	if (tasks_check(t, id, id_len, w) == -1)
		return;
	if (t->run != NULL && t->run->step == TASKS_REVERT) {
		tasks_error(w, "revert in progress");
		return;
	}
	if (t->run != NULL) {
		tasks_busy(t, w);
		return;
	}
	r = tasks_run_open(t, id, "no such task", w);
	if (r == NULL)
		return;
	if (tasks_revert_check(r, w) == -1) {
		tasks_finish(t);
		return;
	}
	r->step = TASKS_REVERT;
	r->gitlog = taskdir_create(r->dir, "checkpoint.log", O_RDWR);
	jw_raw(w, "{\"ok\":true}");
	log_msg("task %s: reverting to %s", r->id, r->sha);
	if (taskstep_revert_begin(t, r, now) == 1)
		tasks_finish(t);
}

void
tasks_status(const struct tasks *t, struct jw *w)
{
	const char *step;

	jw_key(w, "task", true);
	if (t->run == NULL) {
		jw_raw(w, "null");
		return;
	}
	step = taskstep_names[t->run->step];
	jw_raw(w, "{");
	jw_key(w, "id", false);
	jw_str(w, t->run->id, strlen(t->run->id));
	jw_key(w, "step", true);
	jw_str(w, step, strlen(step));
	jw_raw(w, "}");
}

/* --- the loop's work ----------------------------------------------------- */

bool
tasks_on_exit(struct tasks *t, pid_t pid, int status, long long now)
{
	struct tasks_run *r = t->run;
	char what[96];

	if (r == NULL || r->pid == 0 || r->pid != pid)
		return false;
	r->pid = 0;
	/* Whatever the step left behind in its group goes with it. */
	killpg(pid, SIGKILL);
	/* The child is gone: what it printed is in the pipe already. */
	taskstep_read(r, TASKS_DRAIN_READS);
	taskstep_close(&r->out);
	proc_describe(status, what, sizeof(what));
	log_msg("task %s: %s: pid %d %s", r->id, taskstep_names[r->step],
	        (int)pid, what);
	if (r->step == TASKS_REVERT) {
		taskstep_revert_end(t, r, status);
		tasks_finish(t);
		return true;
	}
	if (t->halting) {
		tasks_finish(t);
		return true;
	}
	taskstep_end(t, r, status, now);
	tasks_go(t, r, tasks_after(t, r), now);
	return true;
}

void
tasks_halt(struct tasks *t)
{
	t->halting = true;
	if (t->run == NULL)
		return;
	if (t->run->pid != 0)
		killpg(t->run->pid, SIGTERM);
	else
		tasks_finish(t); /* waiting for health: nothing to stop */
}

void
tasks_kill(struct tasks *t)
{
	if (t->run != NULL && t->run->pid != 0) {
		killpg(t->run->pid, SIGKILL);
		t->run->killed = true;
	}
}

size_t
tasks_pollfds(const struct tasks *t, struct pollfd *pfd, size_t max)
{
	if (max == 0 || t->run == NULL || t->run->out == -1)
		return 0;
	pfd[0] = (struct pollfd){.fd = t->run->out, .events = POLLIN};
	return 1;
}

void
tasks_on_poll(struct tasks *t, const struct pollfd *pfd, size_t n)
{
	if (n == 1 && pfd[0].revents != 0 && t->run != NULL &&
	    t->run->out == pfd[0].fd)
		taskstep_read(t->run, TASKS_READS);
}

void
tasks_tick(struct tasks *t, long long now)
{
	struct tasks_run *r = t->run;

	if (r == NULL)
		return;
	if (r->pid != 0 && r->kill_at != -1 && now >= r->kill_at) {
		log_msg("task %s: %s still running %d ms after SIGTERM: "
		        "SIGKILL",
		        r->id, taskstep_names[r->step], PROCS_STOP_MS);
		killpg(r->pid, SIGKILL);
		r->killed = true;
		r->kill_at = -1;
	}
	if (r->pid != 0 && !r->timed_out && r->deadline != -1 &&
	    now >= r->deadline) {
		log_msg("task %s: %s timed out", r->id,
		        taskstep_names[r->step]);
		r->timed_out = true;
		taskstep_stop(r, now);
	}
	if (r->step == TASKS_HEALTH && !t->halting &&
	    taskstep_health_due(t, r, now))
		tasks_go(t, r, TASKS_END, now);
}

long long
tasks_next(const struct tasks *t)
{
	const struct tasks_run *r = t->run;
	long long next = -1;

	if (r == NULL)
		return -1;
	if (r->pid != 0) {
		next = procs_earliest(next, r->kill_at);
		if (!r->timed_out)
			next = procs_earliest(next, r->deadline);
	}
	if (r->step == TASKS_HEALTH)
		next = procs_earliest(next, r->deadline);
	return next;
}
