/*
 * taskstep.c - the steps of a task: checkpoint, agent, files, build,
 * health; and a revert.
 *
 * Every step but health is one child process in the app dir, in a process
 * group of its own (proc_spawn), as the container user; the git steps are
 * sh scripts (taskgit.c) whose errors go to checkpoint.log.  A step's
 * begin() spawns it and returns, or writes the step's record at once when
 * there is nothing to run (no checkpoint to list files against, a spawn
 * that failed); its end() turns the child's exit into the record.
 *
 * The agent's stdout and stderr are the files agent.out and agent.log
 * themselves, not pipes through the supervisor: nothing is lost or
 * reordered however busy the loop is, and the files stay whole if the
 * supervisor dies.  Only two steps are read through a pipe: the
 * checkpoint's commit id (a few bytes) and the files step's NUL-separated
 * path list, turned into lines as it streams (task_names_feed).
 *
 * The agent runs with the supervisor's environment minus what looks like a
 * credential of the container (task_env_withheld), plus the task's env
 * file (where the control plane puts the agent's own key), with HOME,
 * PATH and LANG as the app's processes have them.  Its program is looked
 * up in PATH here, before the fork, so "not found" is reported in words.
 *
 * An agent killed by a SIGKILL we did not send is reported as "oom" only
 * when the cgroup's OOM-kill counter moved during the run: the kernel
 * does not say who sent a signal, and a user's `kill -9` is not an OOM.
 *
 * Rejected: pipes for the agent's output (the loop would have to keep up
 * with an agent that prints megabytes, and a supervisor crash would cut
 * the logs); execvp() in the child (it reads the supervisor's PATH, not
 * the one we give the agent, and its failure would only be an errno).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "proc.h"
#include "procs.h"
#include "taskdir.h"
#include "taskgit.h"
#include "taskstep.h"

#define TASKSTEP_SHELL "/bin/sh"

const char *const taskstep_names[] = {
    [TASKS_CHECKPOINT] = "checkpoint", [TASKS_AGENT] = "agent",
    [TASKS_FILES] = "files",           [TASKS_BUILD] = "build",
    [TASKS_HEALTH] = "health",         [TASKS_END] = "end",
    [TASKS_REVERT] = "revert",
};

/* Git steps need no PORT: any record kind but web. */
static const struct conf_rec taskstep_no_port = {.kind = CONF_BUILD};

void
taskstep_close(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/* --- children ------------------------------------------------------------ */

/* Starts argv as the run's child in the app dir.  Returns 0, or -1 with
 * why set to the reason. */
static int
taskstep_spawn(struct tasks *t, struct tasks_run *r, const struct proc_spec *s0,
               long long now, char *why, size_t whylen)
{
	struct proc_spec s = *s0;
	char step[96];
	pid_t pid;

	s.dir = t->procs->app_dir;
	pid = proc_spawn(&s, step, sizeof(step));
	if (pid == -1) {
		snprintf(why, whylen, "%s: %s", step, strerror(errno));
		return -1;
	}
	r->pid = pid;
	r->begun = now;
	r->stopping = r->killed = r->timed_out = false;
	r->kill_at = -1;
	log_msg("task %s: %s: started (pid %d)", r->id, taskstep_names[r->step],
	        (int)pid);
	return 0;
}

/*
 * Runs a git step's script with arg, stderr to checkpoint.log and stdout
 * to a pipe we read (pipe_out) or to checkpoint.log too.  Returns 0, or
 * -1 with why set.
 */
static int
taskstep_git(struct tasks *t, struct tasks_run *r, enum taskgit_step step,
             const char *arg, bool pipe_out, long long now, char *why,
             size_t whylen)
{
	char *argv[] = {
	    TASKSTEP_SHELL, "-c", (char *)taskgit_script(step), "sh", r->id,
	    (char *)arg,    NULL};
	struct proc_spec s = {.argv = argv, .out = r->gitlog, .err = r->gitlog};
	char port[16], keep[16];
	char **env = procs_env(t->procs, &taskstep_no_port, port, sizeof(port));
	struct stat st;
	int fds[2] = {-1, -1}, rc = -1;

	if (step == TASKGIT_CHECKPOINT) {
		snprintf(keep, sizeof(keep), "%d", TASK_CHECKPOINTS_KEPT);
		argv[5] = keep;
	}
	if (env == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (pipe_out && (pipe2(fds, O_CLOEXEC) == -1 ||
	                 fcntl(fds[0], F_SETFL, O_NONBLOCK) == -1)) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		goto out;
	}
	if (pipe_out)
		s.out = fds[1];
	s.envp = env;
	r->log_mark =
	    r->gitlog != -1 && fstat(r->gitlog, &st) == 0 ? st.st_size : 0;
	rc = taskstep_spawn(t, r, &s, now, why, whylen);
	if (rc == 0) {
		r->deadline = now + TASK_GIT_MS;
		r->out = fds[0];
		r->out_len = 0;
		fds[0] = -1;
	}
out:
	taskstep_close(&fds[0]);
	taskstep_close(&fds[1]);
	free(env);
	return rc;
}

/* SIGTERM to the step's group now, SIGKILL after PROCS_STOP_MS. */
void
taskstep_stop(struct tasks_run *r, long long now)
{
	if (r->pid == 0 || r->stopping)
		return;
	killpg(r->pid, SIGTERM);
	r->stopping = true;
	r->kill_at = now + PROCS_STOP_MS;
}

/* Whether a git step that exited with status succeeded; if not, why goes
 * to out (TASK_TEXT_MAX + 1 bytes), for its record: the last line it
 * wrote to checkpoint.log, or its exit. */
static bool
taskstep_git_ok(const struct tasks_run *r, int status, char *out)
{
	char code[64];

	if (!r->timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (r->timed_out) {
		snprintf(out, TASK_TEXT_MAX + 1, "%s timed out after %d s",
		         taskstep_names[r->step], TASK_GIT_MS / 1000);
	} else if (taskdir_last_line(r->gitlog, r->log_mark, out) <= 0) {
		snprintf(code, sizeof(code), "git failed (exit %d)",
		         proc_exit_code(status));
		task_text(out, code, strlen(code));
	}
	return false;
}

/* A git step failed, or could not start: logs why (as what failed) and
 * writes the step's record, head followed by why as a text field. */
static void
taskstep_git_failed(const struct tasks_run *r, const char *what,
                    const char *head, const char *why)
{
	char text[TASK_TEXT_MAX + 1];

	task_text(text, why, strlen(why));
	log_msg("task %s: %s: %s", r->id, what, text);
	taskdir_record(r->steps, "%s%s", head, text);
}

/* --- checkpoint ---------------------------------------------------------- */

static int
taskstep_checkpoint_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	char why[256];

	taskdir_record(r->steps, "phase\tcheckpoint");
	if (taskstep_git(t, r, TASKGIT_CHECKPOINT, NULL, true, now, why,
	                 sizeof(why)) == 0)
		return 0;
	taskstep_git_failed(r, "no checkpoint", "checkpoint\t\t", why);
	return 1;
}

static void
taskstep_checkpoint_end(struct tasks *t, struct tasks_run *r, int status,
                        long long now)
{
	char err[TASK_TEXT_MAX + 1];

	(void)t;
	(void)now;
	if (taskstep_git_ok(r, status, err)) {
		if (task_sha_parse(r->out_buf, r->out_len, r->sha)) {
			taskdir_record(r->steps, "checkpoint\t%s", r->sha);
			return;
		}
		snprintf(err, sizeof(err), "git printed no commit id");
	}
	r->sha[0] = '\0';
	taskstep_git_failed(r, "no checkpoint", "checkpoint\t\t", err);
}

/* --- agent --------------------------------------------------------------- */

static bool
taskstep_env_fixed(const char *kv)
{
	return task_env_same(kv, "HOME=") || task_env_same(kv, "PATH=") ||
	       task_env_same(kv, "LANG=");
}

static bool
taskstep_env_in(char *const *list, const char *kv)
{
	size_t i;

	for (i = 0; list[i] != NULL; i++)
		if (task_env_same(list[i], kv))
			return true;
	return false;
}

/* Whether the agent gets kv of the supervisor's environment (see the
 * top); ctx is the run. */
static bool
taskstep_env_keep(const char *kv, const void *ctx)
{
	const struct tasks_run *r = ctx;

	return !task_env_withheld(kv) && !taskstep_env_fixed(kv) &&
	       !taskstep_env_in(r->env, kv);
}

/* The agent's environment (see the top); NULL when out of memory. */
static char **
taskstep_agent_env(const struct tasks *t, const struct tasks_run *r)
{
	size_t k, i;
	char **env = procs_environ(taskstep_env_keep, r, TASK_ENV_MAX + 3, &k);

	if (env == NULL)
		return NULL;
	/* A name given twice in the env file: the last one counts. */
	for (i = 0; r->env[i] != NULL; i++)
		if (!taskstep_env_fixed(r->env[i]) &&
		    !taskstep_env_in(r->env + i + 1, r->env[i]))
			env[k++] = r->env[i];
	env[k++] = t->procs->env[PROCS_ENV_HOME];
	env[k++] = t->procs->env[PROCS_ENV_PATH];
	env[k++] = t->procs->env[PROCS_ENV_LANG];
	env[k] = NULL;
	return env;
}

/*
 * The program argv[0] names, as execvp() finds it: itself when it has a
 * '/' (relative to the app dir), else the first executable regular file of
 * that name in the absolute directories of PATH.  Returns 0 or -1.
 */
static int
taskstep_which(const struct tasks *t, const char *name, char *out, size_t len)
{
	const char *path = t->procs->env[PROCS_ENV_PATH] + 5, *end;
	struct stat st;
	int n;

	if (strchr(name, '/') != NULL) {
		n = snprintf(out, len, "%s", name);
		return n >= 0 && (size_t)n < len ? 0 : -1;
	}
	for (; *path != '\0'; path = *end != '\0' ? end + 1 : end) {
		end = strchrnul(path, ':');
		if (path[0] != '/')
			continue;
		n = snprintf(out, len, "%.*s/%s", (int)(end - path), path,
		             name);
		if (n > 0 && (size_t)n < len && stat(out, &st) == 0 &&
		    S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* The cgroup's OOM-kill count (cgroup v2, then v1), -1 when unreadable. */
static long long
taskstep_oom(const struct tasks *t)
{
	static const char *const files[] = {"memory.events",
	                                    "memory/memory.oom_control"};
	char path[4096], buf[4096];
	long long v = -1;
	ssize_t n;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(files) / sizeof(files[0]) && v < 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", t->cgroup, files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd == -1)
			continue;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n > 0)
			v = task_oom_parse(buf, (size_t)n);
	}
	return v;
}

static void
taskstep_agent_failed(struct tasks_run *r, int log, const char *why)
{
	char line[1024];
	int n;

	log_msg("task %s: cannot start the agent: %s", r->id, why);
	n = snprintf(line, sizeof(line),
	             "sandboxd-init: cannot start the agent: %s\n", why);
	if (log != -1 && n > 0 && write(log, line, (size_t)n) < 0)
		log_msg("task %s: writing agent.log: %s", r->id,
		        strerror(errno));
	r->agent_failed = true;
	taskdir_record(r->steps, "agent\t127\tspawn_failed");
}

static int
taskstep_agent_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	struct proc_spec s = {.argv = r->argv};
	char why[512], prog[4096];
	char **env = NULL;
	int out = -1, err, rc = 1;

	if (r->cancelled) {
		taskdir_record(r->steps, "agent\t0\tcancelled");
		return 1;
	}
	taskdir_record(r->steps, "phase\tagent_running");
	err = taskdir_create(r->dir, "agent.log", 0);
	if (err == -1)
		snprintf(why, sizeof(why), "cannot open agent.log: %s",
		         taskdir_why(errno));
	else if ((out = taskdir_create(r->dir, "agent.out", 0)) == -1)
		snprintf(why, sizeof(why), "cannot open agent.out: %s",
		         taskdir_why(errno));
	else if (taskstep_which(t, r->argv[0], prog, sizeof(prog)) == -1)
		snprintf(why, sizeof(why), "%.200s: not found in PATH",
		         r->argv[0]);
	else if ((env = taskstep_agent_env(t, r)) == NULL)
		snprintf(why, sizeof(why), "out of memory");
	else {
		s.file = prog;
		s.envp = env;
		s.out = out;
		s.err = err;
		r->oom_before = taskstep_oom(t);
		rc = taskstep_spawn(t, r, &s, now, why, sizeof(why)) == 0 ? 0
		                                                          : 1;
	}
	if (rc == 0)
		r->deadline = now + (long long)r->timeout_s * 1000;
	else
		taskstep_agent_failed(r, err, why);
	taskstep_close(&out);
	taskstep_close(&err);
	free(env);
	/* The strings were copied by fork(); a big prompt need not stay. */
	free(r->argbuf);
	free(r->envbuf);
	r->argbuf = r->envbuf = NULL;
	r->argv[0] = r->env[0] = NULL;
	return rc;
}

static void
taskstep_agent_end(struct tasks *t, struct tasks_run *r, int status,
                   long long now)
{
	const char *how = "exited";
	long long oom;

	(void)now;
	if (r->cancelled) {
		how = "cancelled";
	} else if (r->timed_out) {
		how = "timeout";
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	           !r->killed) {
		/* A SIGKILL we did not send: the OOM killer's, if the
		 * cgroup counted one meanwhile. */
		oom = taskstep_oom(t);
		if (r->oom_before >= 0 && oom > r->oom_before)
			how = "oom";
	}
	r->agent_failed = strcmp(how, "exited") != 0;
	taskdir_record(r->steps, "agent\t%d\t%s", proc_exit_code(status), how);
}

/* --- files --------------------------------------------------------------- */

static void
taskstep_file_line(void *ctx, const char *line, size_t len)
{
	struct tasks_run *r = ctx;
	ssize_t n;

	while (len > 0) {
		n = write(r->files, line, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_msg("task %s: writing files: %s", r->id,
			        strerror(errno));
			return;
		}
		line += n;
		len -= (size_t)n;
	}
	r->nfiles++;
}

static int
taskstep_files_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	char why[256];

	r->nfiles = 0;
	task_names_init(&r->names);
	r->files = taskdir_create(r->dir, "files", O_TRUNC);
	if (r->files == -1) {
		snprintf(why, sizeof(why), "cannot write files: %s",
		         taskdir_why(errno));
	} else if (r->sha[0] == '\0') {
		taskstep_close(&r->files);
		taskdir_record(r->steps, "files\t0");
		return 1;
	} else if (taskstep_git(t, r, TASKGIT_FILES, r->sha, true, now, why,
	                        sizeof(why)) == 0) {
		return 0;
	}
	taskstep_close(&r->files);
	taskstep_git_failed(r, "listing files failed", "files\t0\t", why);
	return 1;
}

static void
taskstep_files_end(struct tasks *t, struct tasks_run *r, int status,
                   long long now)
{
	char err[TASK_TEXT_MAX + 1];

	(void)t;
	(void)now;
	if (taskstep_git_ok(r, status, err)) {
		taskstep_close(&r->files);
		taskdir_record(r->steps, "files\t%u", r->nfiles);
		return;
	}
	/* A partial list would pass for a complete one. */
	if (ftruncate(r->files, 0) == -1)
		log_msg("task %s: truncating files: %s", r->id,
		        strerror(errno));
	taskstep_close(&r->files);
	taskstep_git_failed(r, "listing files failed", "files\t0\t", err);
}

/* --- build --------------------------------------------------------------- */

static int
taskstep_build_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	const struct conf_rec *b = &t->procs->build;
	char *argv[] = {TASKSTEP_SHELL, "-c", b->cmd, NULL};
	struct proc_spec s = {.argv = argv};
	char port[16], why[256], line[320];
	char **env = procs_env(t->procs, b, port, sizeof(port));
	int log, rc = 1, n;

	taskdir_record(r->steps, "phase\tbuild_check");
	log = taskdir_create(r->dir, "build.log", 0);
	s.out = s.err = log;
	s.envp = env;
	if (log == -1)
		snprintf(why, sizeof(why), "cannot open build.log: %s",
		         taskdir_why(errno));
	else if (env == NULL)
		snprintf(why, sizeof(why), "out of memory");
	else
		rc = taskstep_spawn(t, r, &s, now, why, sizeof(why)) == 0 ? 0
		                                                          : 1;
	if (rc == 0) {
		r->deadline = now + (long long)b->timeout_s * 1000;
	} else {
		log_msg("task %s: cannot start the build: %s", r->id, why);
		n = snprintf(line, sizeof(line),
		             "sandboxd-init: cannot start the build: %s\n",
		             why);
		if (log != -1 && n > 0 && write(log, line, (size_t)n) < 0)
			log_msg("task %s: writing build.log: %s", r->id,
			        strerror(errno));
		taskdir_record(r->steps, "build\tfailed\t127\t0");
	}
	taskstep_close(&log);
	free(env);
	return rc;
}

static void
taskstep_build_end(struct tasks *t, struct tasks_run *r, int status,
                   long long now)
{
	int code = proc_exit_code(status);
	const char *result = r->timed_out ? "timeout"
	                     : code == 0  ? "passed"
	                                  : "failed";

	(void)t;
	if (r->cancelled)
		return; /* stopped by the cancel: not a result */
	taskdir_record(r->steps, "build\t%s\t%d\t%lld", result, code,
	               now - r->begun);
}

/* --- health -------------------------------------------------------------- */

/* Writes the health record when the wait is over.  Returns 1 if so. */
int
taskstep_health_due(struct tasks *t, struct tasks_run *r, long long now)
{
	const struct health *h = &t->procs->health;
	const char *state = health_state_name(h->state), *detail = h->detail;
	bool restarting = procs_web_restarting(t->procs);
	char text[TASK_TEXT_MAX + 1];

	if ((restarting || h->state == HEALTH_STARTING) && now < r->deadline)
		return 0;
	if (restarting) {
		/* Still the old process's verdict: not this one's. */
		state = "starting";
		detail = "web process still restarting";
	}
	task_text(text, detail, strlen(detail));
	taskdir_record(r->steps, "health\t%s\t%s", state, text);
	return 1;
}

static int
taskstep_health_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	taskdir_record(r->steps, "phase\thealth_check");
	r->web_restarted = procs_restart_after_task(t->procs, now);
	if (r->web_restarted)
		r->deadline = now + TASK_HEALTH_RESTART_MS;
	else if (t->procs->health.state == HEALTH_STARTING)
		r->deadline = now + TASK_HEALTH_STARTING_MS;
	else
		r->deadline = now;
	return taskstep_health_due(t, r, now);
}

/* --- the table ----------------------------------------------------------- */

static const struct taskstep_ops {
	/* Starts the step: 0 when it is under way, 1 when it is over
	 * already (its record written). */
	int (*begin)(struct tasks *, struct tasks_run *, long long now);
	/* Its child exited with status: writes the step's record. */
	void (*end)(struct tasks *, struct tasks_run *, int status,
	            long long now);
} taskstep_table[] = {
    [TASKS_CHECKPOINT] = {.begin = taskstep_checkpoint_begin,
                          .end = taskstep_checkpoint_end},
    [TASKS_AGENT] = {.begin = taskstep_agent_begin, .end = taskstep_agent_end},
    [TASKS_FILES] = {.begin = taskstep_files_begin, .end = taskstep_files_end},
    [TASKS_BUILD] = {.begin = taskstep_build_begin, .end = taskstep_build_end},
    [TASKS_HEALTH] = {.begin = taskstep_health_begin},
};

int
taskstep_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	return taskstep_table[r->step].begin(t, r, now);
}

void
taskstep_end(struct tasks *t, struct tasks_run *r, int status, long long now)
{
	taskstep_table[r->step].end(t, r, status, now);
}

/* --- revert -------------------------------------------------------------- */

/* Writes the revert file: "ok", or "error\t<why>". */
static void
taskstep_revert_result(struct tasks_run *r, const char *err)
{
	char text[TASK_TEXT_MAX + 1], line[TASK_TEXT_MAX + 16];
	int n;

	if (err == NULL) {
		taskdir_put(r->dir, "revert", "ok\n", 3);
		log_msg("task %s: reverted to %s", r->id, r->sha);
		return;
	}
	task_text(text, err, strlen(err));
	n = snprintf(line, sizeof(line), "error\t%s\n", text);
	taskdir_put(r->dir, "revert", line, (size_t)n);
	log_msg("task %s: revert failed: %s", r->id, text);
}

void
taskstep_revert_end(struct tasks *t, struct tasks_run *r, int status)
{
	char err[TASK_TEXT_MAX + 1];

	if (t->halting) {
		taskstep_revert_result(r, "interrupted by a shutdown");
		return;
	}
	taskstep_revert_result(r, taskstep_git_ok(r, status, err) ? NULL : err);
}

int
taskstep_revert_begin(struct tasks *t, struct tasks_run *r, long long now)
{
	char why[256];

	if (taskstep_git(t, r, TASKGIT_REVERT, r->sha, false, now, why,
	                 sizeof(why)) == 0)
		return 0;
	taskstep_revert_result(r, why);
	return 1;
}

/* --- output of a step ---------------------------------------------------- */

/* Reads what the step's child printed, at most reads chunks; closes the
 * pipe at its end. */
void
taskstep_read(struct tasks_run *r, unsigned reads)
{
	char buf[LOGS_CHUNK];
	size_t room;
	ssize_t n;
	unsigned i;

	for (i = 0; i < reads && r->out != -1; i++) {
		n = read(r->out, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		if (n <= 0) {
			taskstep_close(&r->out);
			return;
		}
		if (r->step == TASKS_FILES) {
			task_names_feed(&r->names, buf, (size_t)n,
			                taskstep_file_line, r);
			continue;
		}
		room = sizeof(r->out_buf) - r->out_len;
		if ((size_t)n > room)
			n = (ssize_t)room;
		memcpy(r->out_buf + r->out_len, buf, (size_t)n);
		r->out_len += (size_t)n;
	}
}
