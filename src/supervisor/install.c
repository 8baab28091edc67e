/*
 * install.c - the install step (install.h, docs/supervisor.md "Install").
 *
 * The key file is the only state that outlives the supervisor: written
 * (temp file + rename) after an install that exited 0, read at every
 * apply.  The dependency cache of the control plane writes the same file
 * when it links a finished install's tree in, which is how a second app
 * with the same key installs nothing.  The file is the sandbox user's to
 * change; a wrong key there only skips or repeats an install of the
 * sandbox's own.
 *
 * While the install runs or after it failed, the processes are not
 * running (the table is applied empty) and the records wait in `held`;
 * health says why ("installing dependencies", "the install failed …"),
 * re-asserted every tick because a process stopping meanwhile sets its
 * own.  An install record with a new key while one runs kills the running
 * one's group (SIGKILL: its exit is then reaped as an orphan) and starts
 * anew.
 *
 * Rejected: starting the processes during the install (a dev server
 * started before its dependencies crash-loops, and `npm ci` deletes
 * node_modules under a running one); waiting for the old processes to
 * exit before the install starts (they are already being stopped, and an
 * install does not use their ports).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "install.h"
#include "log.h"
#include "proc.h"

#define INSTALL_SHELL "/bin/sh"

static long long
install_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
install_init(struct install *i, const char *home)
{
	memset(i, 0, sizeof(*i));
	i->exit_code = -1;
	i->started_at_ms = -1;
	i->ended_at_ms = -1;
	i->kill_at = -1;
	snprintf(i->key_path, sizeof(i->key_path), "%s/.sandboxd/install.key",
	         home);
}

void
install_release(struct install *i)
{
	conf_rec_free(&i->rec);
	conf_free(&i->held);
	if (i->log_open)
		logs_close(&i->log);
	i->log_open = false;
}

bool
install_key_matches(const char *path, const char *key)
{
	char buf[CONF_KEY_LEN + 2];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd == -1)
		return false;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)sizeof(buf)) {
		close(fd);
		return false;
	}
	do
		n = read(fd, buf, sizeof(buf));
	while (n == -1 && errno == EINTR);
	close(fd);
	if (n == CONF_KEY_LEN + 1 && buf[CONF_KEY_LEN] == '\n')
		n--;
	return n == CONF_KEY_LEN && strlen(key) == CONF_KEY_LEN &&
	       memcmp(buf, key, CONF_KEY_LEN) == 0;
}

/* Writes the key file: temp file + rename, so it is whole or absent. */
static int
install_key_write(const struct install *i)
{
	char tmp[PATH_MAX + 8], line[CONF_KEY_LEN + 2];
	int fd, rc = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", i->key_path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	          0644);
	if (fd == -1)
		return -1;
	snprintf(line, sizeof(line), "%s\n", i->rec.key);
	if (write(fd, line, CONF_KEY_LEN + 1) == CONF_KEY_LEN + 1 &&
	    fsync(fd) == 0)
		rc = 0;
	if (close(fd) == -1 || rc == -1 || rename(tmp, i->key_path) == -1) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The health shown while no process runs because of the install. */
static void
install_health(const struct install *i, struct procs *p)
{
	char detail[160];

	if (i->state == INSTALL_RUNNING) {
		if (p->health.state != HEALTH_STARTING ||
		    strcmp(p->health.detail, "installing dependencies") != 0)
			health_set(&p->health, HEALTH_STARTING,
			           "installing dependencies");
		return;
	}
	if (i->state != INSTALL_FAILED)
		return;
	if (i->timed_out)
		snprintf(detail, sizeof(detail),
		         "the install timed out after %u s: see "
		         ".sandboxd/logs/install.log",
		         i->rec.timeout_s);
	else
		snprintf(detail, sizeof(detail),
		         "the install failed (exit %d): see "
		         ".sandboxd/logs/install.log",
		         i->exit_code);
	if (p->health.state != HEALTH_ERROR ||
	    strcmp(p->health.detail, detail) != 0)
		health_set(&p->health, HEALTH_ERROR, detail);
}

/* Kills a running install's group; its exit is reaped as an orphan. */
static void
install_abandon(struct install *i)
{
	if (i->pid != 0) {
		log_msg("install: pid %d abandoned (a new run.conf)",
		        (int)i->pid);
		killpg(i->pid, SIGKILL);
	}
	i->pid = 0;
	i->kill_at = -1;
}

static void install_finish(struct install *i, struct procs *p, int code,
                           long long now);

static void
install_run(struct install *i, struct procs *p, long long now)
{
	char *argv[] = {INSTALL_SHELL, "-c", i->rec.cmd, NULL};
	struct proc_spec s = {.argv = argv, .dir = p->app_dir};
	char port[16], why[128];
	char **env;

	if (!i->log_open && logs_open(&i->log, p->logs_dir, "install") == 0)
		i->log_open = true;
	if (i->log_open)
		s.out = s.err = i->log.pipe[1];
	else
		s.out = s.err = -1;
	i->state = INSTALL_RUNNING;
	i->timed_out = false;
	i->exit_code = -1;
	i->started_at_ms = install_wall_ms();
	i->ended_at_ms = -1;
	i->deadline = now + (long long)i->rec.timeout_s * 1000;
	i->kill_at = -1;
	install_health(i, p);
	log_msg("install: running (key %.12s…)", i->rec.key);
	if (i->log_open)
		logs_note(&i->log, "install (key %s): %s", i->rec.key,
		          i->rec.cmd);
	env = procs_env(p, &i->rec, port, sizeof(port));
	if (env == NULL) {
		install_finish(i, p, 126, now);
		return;
	}
	s.envp = env;
	i->pid = proc_spawn(&s, why, sizeof(why));
	free(env);
	if (i->pid == -1) {
		i->pid = 0;
		log_msg("install: cannot start: %s: %s", why, strerror(errno));
		if (i->log_open)
			logs_note(&i->log, "cannot start: %s: %s", why,
			          strerror(errno));
		install_finish(i, p, errno == ENOENT ? 127 : 126, now);
	}
}

/* The install ended with code: the processes start, or wait. */
static void
install_finish(struct install *i, struct procs *p, int code, long long now)
{
	char err[256];

	i->pid = 0;
	i->kill_at = -1;
	i->exit_code = code;
	i->ended_at_ms = install_wall_ms();
	if (code != 0 || i->timed_out) {
		i->state = INSTALL_FAILED;
		log_msg("install: failed (exit %d%s); processes not started",
		        code, i->timed_out ? ", timed out" : "");
		install_health(i, p);
		return;
	}
	i->state = INSTALL_DONE;
	if (install_key_write(i) == -1)
		log_msg("install: cannot write %s: %s", i->key_path,
		        strerror(errno));
	log_msg("install: done in %lld ms", i->ended_at_ms - i->started_at_ms);
	if (i->log_open)
		logs_note(&i->log, "done in %lld ms",
		          i->ended_at_ms - i->started_at_ms);
	if (procs_apply(p, &i->held, now, err, sizeof(err)) == -1)
		log_msg("install: the processes are not started: %s", err);
	conf_free(&i->held);
}

/* Moves c's install record into rec (zeroed when there is none). */
static void
install_take(struct conf *c, struct conf_rec *rec)
{
	size_t k;

	memset(rec, 0, sizeof(*rec));
	for (k = 0; c != NULL && k < c->n; k++) {
		if (c->recs[k].kind != CONF_INSTALL)
			continue;
		*rec = c->recs[k];
		memmove(&c->recs[k], &c->recs[k + 1],
		        (c->n - k - 1) * sizeof(c->recs[0]));
		c->n--;
		return;
	}
}

/* No install to run: the records go to the table now. */
static int
install_pass(struct install *i, struct procs *p, struct conf *c,
             struct conf_rec *rec, long long now, char *err, size_t errlen)
{
	bool same = rec->cmd != NULL && i->rec.cmd != NULL &&
	            conf_rec_equal(rec, &i->rec) && i->state == INSTALL_DONE;

	if (procs_apply(p, c, now, err, errlen) == -1) {
		conf_rec_free(rec);
		return -1;
	}
	install_abandon(i);
	conf_free(&i->held);
	conf_rec_free(&i->rec);
	i->rec = *rec;
	if (same)
		return 0; /* keeps what the last run said */
	i->state = rec->cmd != NULL ? INSTALL_DONE : INSTALL_NONE;
	i->exit_code = -1;
	i->started_at_ms = -1;
	i->ended_at_ms = -1;
	i->timed_out = false;
	return 0;
}

int
install_apply(struct install *i, struct procs *p, struct conf *c, long long now,
              char *err, size_t errlen)
{
	struct conf none = {.n = 0};
	struct conf_rec rec;
	bool same;

	install_take(c, &rec);
	if (rec.cmd == NULL || install_key_matches(i->key_path, rec.key))
		return install_pass(i, p, c, &rec, now, err, errlen);
	/* The processes stop; the records wait for the install. */
	if (procs_apply(p, &none, now, err, errlen) == -1) {
		conf_rec_free(&rec);
		return -1;
	}
	conf_free(&i->held);
	i->held = *c;
	c->n = 0;
	same = i->rec.cmd != NULL && conf_rec_equal(&rec, &i->rec);
	if (same && i->state == INSTALL_RUNNING) {
		conf_rec_free(&rec);
		install_health(i, p);
		return 0; /* the same install goes on */
	}
	install_abandon(i);
	conf_rec_free(&i->rec);
	i->rec = rec;
	install_run(i, p, now);
	return 0;
}

bool
install_retry(struct install *i, struct procs *p, long long now)
{
	if (i->state != INSTALL_FAILED || i->rec.cmd == NULL)
		return false;
	log_msg("install: trying again");
	install_run(i, p, now);
	return true;
}

bool
install_on_exit(struct install *i, struct procs *p, pid_t pid, int status,
                long long now)
{
	char what[96];

	if (i->pid == 0 || pid != i->pid)
		return false;
	killpg(pid, SIGTERM); /* what it left behind */
	proc_describe(status, what, sizeof(what));
	log_msg("install: pid %d %s", (int)pid, what);
	if (i->log_open) {
		logs_drain(&i->log);
		logs_note(&i->log, "pid %d %s", (int)pid, what);
	}
	install_finish(i, p, proc_exit_code(status), now);
	return true;
}

void
install_tick(struct install *i, struct procs *p, long long now)
{
	if (i->pid != 0 && !i->timed_out && now >= i->deadline) {
		log_msg("install: timed out after %u s: SIGTERM",
		        i->rec.timeout_s);
		if (i->log_open)
			logs_note(&i->log, "timed out after %u s",
			          i->rec.timeout_s);
		i->timed_out = true;
		killpg(i->pid, SIGTERM);
		i->kill_at = now + PROCS_STOP_MS;
	}
	if (i->pid != 0 && i->kill_at != -1 && now >= i->kill_at) {
		killpg(i->pid, SIGKILL);
		i->kill_at = -1;
	}
	if (!p->halting)
		install_health(i, p);
}

long long
install_next(const struct install *i)
{
	if (i->pid == 0)
		return -1;
	if (i->timed_out)
		return i->kill_at;
	return i->deadline;
}

size_t
install_pollfds(const struct install *i, struct pollfd *pfd, size_t max)
{
	if (!i->log_open || max == 0)
		return 0;
	pfd[0] = (struct pollfd){.fd = i->log.pipe[0], .events = POLLIN};
	return 1;
}

void
install_on_poll(struct install *i, const struct pollfd *pfd, size_t n)
{
	if (n > 0 && pfd[0].revents != 0 && i->log_open)
		logs_drain(&i->log);
}

static void
install_ms(struct jw *w, const char *key, long long v)
{
	jw_key(w, key, true);
	if (v < 0)
		jw_raw(w, "null");
	else
		jw_int(w, v);
}

void
install_status(const struct install *i, struct jw *w)
{
	static const char *const names[] = {
	    [INSTALL_NONE] = "none",
	    [INSTALL_RUNNING] = "running",
	    [INSTALL_DONE] = "done",
	    [INSTALL_FAILED] = "failed",
	};

	jw_key(w, "install", true);
	jw_raw(w, "{");
	jw_key(w, "state", false);
	jw_str(w, names[i->state], strlen(names[i->state]));
	jw_key(w, "key", true);
	if (i->rec.cmd != NULL)
		jw_str(w, i->rec.key, strlen(i->rec.key));
	else
		jw_raw(w, "null");
	install_ms(w, "exit_code", i->exit_code);
	install_ms(w, "started_at_ms", i->started_at_ms);
	install_ms(w, "ended_at_ms", i->ended_at_ms);
	jw_raw(w, "}");
}
