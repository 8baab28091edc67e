/*
 * procs.c - the process table.
 *
 * One entry per web/worker record of run.conf, created when the record
 * first appears and freed once its process has exited after the record
 * vanished.  An entry outlives its processes: it keeps the log pipe, the
 * crash count and the restart counter across runs.  Each process is the
 * leader of its own process group; every signal goes to the group.
 *
 * Restarts follow struct procs_run, pure functions of the clock: a run that
 * ends by itself goes to backoff (1, 2, 4 ... s, capped at 60 s) and is
 * started again when due; PROCS_CRASH_RUNS short runs in a row mean
 * crashloop, which only `restart` or `reload` leave.  Stopping (restart,
 * reload, shutdown) is asynchronous: SIGTERM to the group, SIGKILL after
 * PROCS_STOP_MS, and what comes next (start again, start the new record,
 * drop the entry, nothing) is recorded in `pending` and done when the
 * leader is reaped.  When a leader exits, whatever is left of its group
 * gets SIGTERM too, so a restarted server finds its port free.
 *
 * The web process's state moves from starting to running when its health
 * check first passes; the health module does the checking, this module
 * decides when checks run (only while the web process is up).
 *
 * Invariants: names are unique in the table (a reload that brings back a
 * vanishing record turns the removal into a replacement); an entry with
 * pending != PROCS_NONE has a live process or is acted on at once; nothing
 * is started while halting.
 *
 * The app's environment (appenv.c) is added to the web and worker
 * processes' envp when they are started, never to the supervisor's own
 * environ, so the agent of a task and the build and git steps, which
 * inherit environ, do not get it.  A new set restarts every app process.
 *
 * Rejected: restarting unchanged processes on reload (reload is how the
 * control plane applies an edit to one process; the others keep running);
 * a stop that waits for the process (blocks the loop).
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
#include "procs.h"

#define PROCS_DEFAULT_PATH                                                     \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define PROCS_DEFAULT_LANG "C.UTF-8"
#define PROCS_SHELL        "/bin/sh"

/* --- the restart policy -------------------------------------------------- */

long long
procs_backoff_ms(unsigned n, long long base_ms)
{
	long long cap = PROCS_BACKOFF_CAP * base_ms / PROCS_BACKOFF_MS;
	long long d = base_ms;

	while (n > 1 && d < cap) {
		d *= 2;
		n--;
	}
	return d < cap ? d : cap;
}

void
procs_run_started(struct procs_run *r, long long now, bool web)
{
	r->state = PROCS_STARTING;
	r->started_at = now;
	r->due_at = web ? -1 : now + PROCS_WORKER_UP_MS;
}

void
procs_run_exited(struct procs_run *r, long long now, long long base_ms)
{
	if (now - r->started_at >= PROCS_SHORT_RUN_MS)
		r->short_runs = 0;
	else
		r->short_runs++;
	if (r->short_runs >= PROCS_CRASH_RUNS) {
		r->state = PROCS_CRASHLOOP;
		r->due_at = -1;
		return;
	}
	r->state = PROCS_BACKOFF;
	r->due_at =
	    now + procs_backoff_ms(r->short_runs ? r->short_runs : 1, base_ms);
}

const char *
procs_state_name(enum procs_state state)
{
	static const char *const names[] = {
	    [PROCS_STARTING] = "starting", [PROCS_RUNNING] = "running",
	    [PROCS_BACKOFF] = "backoff",   [PROCS_CRASHLOOP] = "crashloop",
	    [PROCS_STOPPED] = "stopped",
	};

	return names[state];
}

/* --- the table ----------------------------------------------------------- */

/* "k" "v" in a new string: "HOME=" "/home/sandbox" */
static char *
procs_join(const char *k, const char *v)
{
	size_t kl = strlen(k), vl = strlen(v);
	char *s = malloc(kl + vl + 1);

	if (s != NULL) {
		memcpy(s, k, kl);
		memcpy(s + kl, v, vl + 1);
	}
	return s;
}

int
procs_init(struct procs *p, const char *home, long long backoff_ms)
{
	const char *path_env = getenv("PATH"), *lang = getenv("LANG");
	char path[4096];
	size_t i;

	memset(p, 0, sizeof(*p));
	p->logs_dir = -1;
	p->backoff_ms = backoff_ms;
	health_init(&p->health);
	p->app_dir = procs_join(home, "/workspace/app");
	p->env[PROCS_ENV_HOME] = procs_join("HOME=", home);
	p->env[PROCS_ENV_PATH] =
	    procs_join("PATH=", path_env ? path_env : PROCS_DEFAULT_PATH);
	p->env[PROCS_ENV_LANG] =
	    procs_join("LANG=", lang ? lang : PROCS_DEFAULT_LANG);
	p->env[PROCS_ENV_HOST] = procs_join("HOST=", "0.0.0.0");
	for (i = 0; i < PROCS_ENV_FIXED; i++)
		if (p->env[i] == NULL)
			return -1;
	if (p->app_dir == NULL)
		return -1;
	/* Without it processes still run; their output is dropped. */
	snprintf(path, sizeof(path), "%s/.sandboxd/logs", home);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		log_msg("cannot create %s: %s", path, strerror(errno));
	p->logs_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->logs_dir == -1)
		log_msg("cannot open %s: %s", path, strerror(errno));
	return 0;
}

static void
procs_entry_free(struct procs_entry *e)
{
	logs_close(&e->log);
	conf_rec_free(&e->rec);
	conf_rec_free(&e->next);
	free(e);
}

void
procs_release(struct procs *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		procs_entry_free(p->e[i]);
	p->n = 0;
	health_set(&p->health, HEALTH_NONE, "");
	conf_rec_free(&p->build);
	appenv_free(&p->app_env);
	if (p->logs_dir != -1)
		close(p->logs_dir);
	for (i = 0; i < PROCS_ENV_FIXED; i++)
		free(p->env[i]);
	free(p->app_dir);
}

/* Frees the entries marked gone, keeping the order of the rest. */
static void
procs_sweep(struct procs *p)
{
	size_t i, j = 0;

	for (i = 0; i < p->n; i++) {
		if (p->e[i]->gone)
			procs_entry_free(p->e[i]);
		else
			p->e[j++] = p->e[i];
	}
	p->n = j;
}

static struct procs_entry *
procs_find(const struct procs *p, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!p->e[i]->gone && strlen(p->e[i]->rec.name) == len &&
		    memcmp(p->e[i]->rec.name, name, len) == 0)
			return p->e[i];
	return NULL;
}

static struct procs_entry *
procs_web(const struct procs *p)
{
	struct procs_entry *e = procs_find(p, "web", 3);

	return e != NULL && e->pending != PROCS_REMOVE ? e : NULL;
}

/* --- starting ------------------------------------------------------------ */

char **
procs_environ(bool (*keep)(const char *kv, const void *ctx), const void *ctx,
              size_t extra, size_t *n)
{
	size_t all = 0, i;
	char **env;

	while (environ[all] != NULL)
		all++;
	env = calloc(all + extra + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	*n = 0;
	for (i = 0; i < all; i++)
		if (keep(environ[i], ctx))
			env[(*n)++] = environ[i];
	return env;
}

/* Whether kv is not one of the variables we set, nor one of the app's
 * environment ctx (NULL: none). */
static bool
procs_env_theirs(const char *kv, const void *ctx)
{
	static const char *const ours[] = {
	    "PORT=", "HOST=", "HOME=", "PATH=", "LANG="};
	size_t i;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
		if (strncmp(kv, ours[i], strlen(ours[i])) == 0)
			return false;
	return ctx == NULL || !appenv_has(ctx, kv);
}

/* The supervisor's environment is the container's, with the app's
 * settings. */
char **
procs_env(const struct procs *p, const struct conf_rec *r, char *port,
          size_t portlen)
{
	const struct appenv *app = r->kind == CONF_BUILD ? NULL : &p->app_env;
	size_t i, k;
	char **env =
	    procs_environ(procs_env_theirs, app,
	                  PROCS_ENV_FIXED + 1 + (app ? app->n : 0), &k);

	if (env == NULL)
		return NULL;
	for (i = 0; app != NULL && i < app->n; i++)
		env[k++] = app->list[i];
	for (i = 0; i < PROCS_ENV_FIXED; i++)
		env[k++] = p->env[i];
	if (r->kind == CONF_WEB) {
		snprintf(port, portlen, "PORT=%u", r->port);
		env[k++] = port;
	}
	env[k] = NULL;
	return env;
}

static pid_t
procs_fork(struct procs *p, struct procs_entry *e)
{
	char *argv[] = {PROCS_SHELL, "-c", e->rec.cmd, NULL};
	struct proc_spec s = {.argv = argv,
	                      .dir = p->app_dir,
	                      .out = e->log.pipe[1],
	                      .err = e->log.pipe[1]};
	char port[16], why[128];
	char **env = procs_env(p, &e->rec, port, sizeof(port));
	pid_t pid;

	if (env == NULL) {
		log_msg("%s: cannot start: out of memory", e->rec.name);
		errno = ENOMEM;
		return -1;
	}
	s.envp = env;
	pid = proc_spawn(&s, why, sizeof(why));
	if (pid == -1) {
		log_msg("%s: cannot start: %s: %s", e->rec.name, why,
		        strerror(errno));
		logs_note(&e->log, "cannot start: %s: %s", why,
		          strerror(errno));
	}
	free(env);
	return pid;
}

static void procs_exited(struct procs *p, struct procs_entry *e, int code,
                         long long now);

static void
procs_start(struct procs *p, struct procs_entry *e, long long now)
{
	pid_t pid;

	if (p->halting)
		return;
	if (e->started)
		e->restarts++;
	e->started = true;
	e->pending = PROCS_NONE;
	e->kill_at = -1;
	procs_run_started(&e->run, now, e->rec.kind == CONF_WEB);
	if (e->rec.kind == CONF_WEB)
		health_start(&p->health, now);
	pid = procs_fork(p, e);
	if (pid == -1) {
		procs_exited(p, e, errno == ENOENT ? 127 : 126, now);
		return;
	}
	e->pid = pid;
	log_msg("%s: started (pid %d)", e->rec.name, (int)pid);
	logs_note(&e->log, "started (pid %d)", (int)pid);
}

/* Starts again now, as a fresh streak (restart, reload). */
static void
procs_start_fresh(struct procs *p, struct procs_entry *e, long long now)
{
	e->run.short_runs = 0;
	procs_start(p, e, now);
}

/* --- stopping and exits -------------------------------------------------- */

static void
procs_health_down(struct procs *p, const struct procs_entry *e)
{
	char why[96];

	snprintf(why, sizeof(why), "web process in %s (exit code %d)",
	         procs_state_name(e->run.state), e->exit_code);
	health_set(&p->health, HEALTH_ERROR, why);
}

/* Does what was pending for an entry whose process is gone. */
static void
procs_settle(struct procs *p, struct procs_entry *e, long long now)
{
	enum procs_pending what = e->pending;

	e->pending = PROCS_NONE;
	e->kill_at = -1;
	switch (what) {
	case PROCS_NONE:
		break;
	case PROCS_REPLACE:
		/* A new record is a new process: its counters start over. */
		conf_rec_free(&e->rec);
		e->rec = e->next;
		memset(&e->next, 0, sizeof(e->next));
		e->started = false;
		e->restarts = 0;
		e->exit_code = -1;
		procs_start_fresh(p, e, now);
		break;
	case PROCS_RESTART:
		procs_start_fresh(p, e, now);
		break;
	case PROCS_REMOVE:
		if (e->rec.kind == CONF_WEB)
			health_set(&p->health, HEALTH_NONE, "no web process");
		e->gone = true;
		break;
	case PROCS_HALT:
		e->run.state = PROCS_STOPPED;
		e->run.due_at = -1;
		break;
	}
}

/* The process of e ended with code; by itself unless something was
 * pending. */
static void
procs_exited(struct procs *p, struct procs_entry *e, int code, long long now)
{
	e->pid = 0;
	e->exit_code = code;
	if (e->pending != PROCS_NONE) {
		procs_settle(p, e, now);
		return;
	}
	if (p->halting) {
		e->run.state = PROCS_STOPPED;
		return;
	}
	procs_run_exited(&e->run, now, p->backoff_ms);
	if (e->run.state == PROCS_CRASHLOOP) {
		log_msg("%s: crash loop, not restarting", e->rec.name);
		logs_note(&e->log,
		          "crash loop: %u short runs in a row, not "
		          "restarting until restart or reload",
		          e->run.short_runs);
	} else {
		logs_note(&e->log, "restarting in %lld ms",
		          e->run.due_at - now);
	}
	if (e->rec.kind == CONF_WEB)
		procs_health_down(p, e);
}

bool
procs_on_exit(struct procs *p, pid_t pid, int status, long long now)
{
	struct procs_entry *e = NULL;
	char what[96];
	size_t i;

	for (i = 0; i < p->n && e == NULL; i++)
		if (p->e[i]->pid == pid)
			e = p->e[i];
	if (e == NULL)
		return false;
	/* Leftovers of the group would hold its ports and files. */
	killpg(pid, SIGTERM);
	proc_describe(status, what, sizeof(what));
	log_msg("%s: pid %d %s", e->rec.name, (int)pid, what);
	logs_note(&e->log, "pid %d %s", (int)pid, what);
	procs_exited(p, e, proc_exit_code(status), now);
	procs_sweep(p);
	return true;
}

/* Stops e's process (if any), then does what. */
static void
procs_stop(struct procs *p, struct procs_entry *e, enum procs_pending what,
           long long now)
{
	bool stopping = e->pending != PROCS_NONE;

	e->pending = what;
	if (e->pid == 0) {
		procs_settle(p, e, now);
		return;
	}
	if (!stopping) {
		killpg(e->pid, SIGTERM);
		e->kill_at = now + PROCS_STOP_MS;
	}
}

void
procs_halt(struct procs *p, long long now)
{
	size_t i;

	p->halting = true;
	for (i = 0; i < p->n; i++)
		procs_stop(p, p->e[i], PROCS_HALT, now);
	procs_sweep(p);
}

void
procs_kill(struct procs *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (p->e[i]->pid != 0)
			killpg(p->e[i]->pid, SIGKILL);
}

int
procs_restart(struct procs *p, const char *name, size_t len, long long now)
{
	struct procs_entry *e = procs_find(p, name, len);

	if (e == NULL || e->pending == PROCS_REMOVE || e->pending == PROCS_HALT)
		return -1;
	if (e->pending == PROCS_NONE)
		procs_stop(p, e, PROCS_RESTART, now);
	return 0;
}

bool
procs_restart_after_task(struct procs *p, long long now)
{
	struct procs_entry *e;
	bool web = false;
	size_t i;

	for (i = 0; i < p->n; i++) {
		e = p->e[i];
		if (e->gone || !e->rec.restart_after_task ||
		    procs_restart(p, e->rec.name, strlen(e->rec.name), now) ==
		        -1)
			continue;
		log_msg("%s: restarting after the task", e->rec.name);
		logs_note(&e->log, "restarting after an agent task");
		web = web || e->rec.kind == CONF_WEB;
	}
	procs_sweep(p);
	return web;
}

bool
procs_set_app_env(struct procs *p, struct appenv *e, long long now)
{
	struct procs_entry *x;
	size_t i;

	if (appenv_equal(&p->app_env, e)) {
		appenv_free(e);
		return false;
	}
	appenv_free(&p->app_env);
	p->app_env = *e;
	memset(e, 0, sizeof(*e));
	for (i = 0; i < p->n; i++) {
		x = p->e[i];
		/* One stopping already starts with the new set. */
		if (x->gone || x->pending != PROCS_NONE)
			continue;
		logs_note(&x->log, "restarting: the app's environment changed");
		procs_stop(p, x, PROCS_RESTART, now);
	}
	procs_sweep(p);
	return true;
}

bool
procs_web_restarting(const struct procs *p)
{
	const struct procs_entry *e = procs_web(p);

	return e != NULL &&
	       (e->pending == PROCS_RESTART || e->pending == PROCS_REPLACE);
}

/* --- reload -------------------------------------------------------------- */

static struct conf_rec *
procs_conf_find(struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->recs[i].kind != CONF_BUILD &&
		    strcmp(c->recs[i].name, name) == 0)
			return &c->recs[i];
	return NULL;
}

/* Brings an existing entry in line with its new record r (NULL: gone). */
static void
procs_update(struct procs *p, struct procs_entry *e, struct conf_rec *r,
             long long now)
{
	if (r == NULL) {
		procs_stop(p, e, PROCS_REMOVE, now);
		return;
	}
	if (e->pending == PROCS_NONE && conf_rec_equal(&e->rec, r)) {
		if (e->run.state == PROCS_CRASHLOOP)
			procs_start_fresh(p, e, now);
		return;
	}
	conf_rec_free(&e->next);
	e->next = *r;
	memset(r, 0, sizeof(*r));
	procs_stop(p, e, PROCS_REPLACE, now);
}

static struct procs_entry *
procs_entry_new(struct procs *p, struct conf_rec *r)
{
	struct procs_entry *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	if (logs_open(&e->log, p->logs_dir, r->name) == -1) {
		free(e);
		return NULL;
	}
	e->rec = *r;
	memset(r, 0, sizeof(*r));
	e->exit_code = -1;
	e->kill_at = -1;
	e->run.due_at = -1;
	return e;
}

/* Makes the entries for records not in the table yet, all or none. */
static int
procs_make_new(struct procs *p, struct conf *c, struct procs_entry **fresh,
               size_t *nfresh, char *err, size_t errlen)
{
	struct conf_rec *r;
	size_t i;

	*nfresh = 0;
	for (i = 0; i < c->n; i++) {
		r = &c->recs[i];
		if (r->kind == CONF_BUILD ||
		    procs_find(p, r->name, strlen(r->name)) != NULL)
			continue;
		if (p->n + *nfresh == PROCS_MAX) {
			snprintf(
			    err, errlen,
			    "too many processes still stopping; try again");
			goto fail;
		}
		fresh[*nfresh] = procs_entry_new(p, r);
		if (fresh[*nfresh] == NULL) {
			snprintf(err, errlen, "cannot set up %s: %s", r->name,
			         strerror(errno));
			goto fail;
		}
		(*nfresh)++;
	}
	return 0;
fail:
	while (*nfresh > 0)
		procs_entry_free(fresh[--*nfresh]);
	return -1;
}

/* Takes the build record out of c (NULL: none), for agent tasks. */
static void
procs_keep_build(struct procs *p, struct conf *c)
{
	size_t i;

	conf_rec_free(&p->build);
	memset(&p->build, 0, sizeof(p->build));
	for (i = 0; c != NULL && i < c->n; i++) {
		if (c->recs[i].kind == CONF_BUILD) {
			p->build = c->recs[i];
			memset(&c->recs[i], 0, sizeof(c->recs[i]));
		}
	}
}

int
procs_apply(struct procs *p, struct conf *c, long long now, char *err,
            size_t errlen)
{
	struct procs_entry *fresh[CONF_MAX_RECORDS];
	struct conf none = {.n = 0};
	struct conf *want = c != NULL ? c : &none;
	struct procs_entry *e;
	size_t nfresh, i;

	if (p->halting) {
		snprintf(err, errlen, "shutting down");
		return -1;
	}
	if (procs_make_new(p, want, fresh, &nfresh, err, errlen) == -1)
		return -1;
	for (i = 0; i < p->n; i++) {
		e = p->e[i];
		if (!e->gone)
			procs_update(p, e, procs_conf_find(want, e->rec.name),
			             now);
	}
	for (i = 0; i < nfresh; i++) {
		p->e[p->n++] = fresh[i];
		procs_start(p, fresh[i], now);
	}
	procs_sweep(p);
	procs_keep_build(p, c);
	p->configured = c != NULL;
	if (procs_web(p) == NULL)
		health_set(&p->health, HEALTH_NONE,
		           p->configured ? "no web process" : "no run.conf");
	return 0;
}

void
procs_unconfigured(struct procs *p, const char *why)
{
	if (!p->configured)
		health_set(&p->health, HEALTH_NONE, why);
}

/* --- the loop's work ----------------------------------------------------- */

size_t
procs_pollfds(const struct procs *p, struct pollfd *pfd, size_t max)
{
	size_t n = 0, i;

	for (i = 0; i < p->n && n < max; i++)
		pfd[n++] = (struct pollfd){.fd = p->e[i]->log.pipe[0],
		                           .events = POLLIN};
	if (n < max && health_pollfd(&p->health, &pfd[n]))
		n++;
	return n;
}

static void
procs_web_up(struct procs *p)
{
	struct procs_entry *e = procs_web(p);

	if (e == NULL || e->run.state != PROCS_STARTING)
		return;
	e->run.state = PROCS_RUNNING;
	log_msg("web: ready (%s)", p->health.detail);
	logs_note(&e->log, "ready (%s)", p->health.detail);
}

void
procs_on_poll(struct procs *p, const struct pollfd *pfd, size_t n,
              long long now)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == p->health.fd) {
			if (health_on_poll(&p->health, pfd[i].revents, now))
				procs_web_up(p);
			continue;
		}
		for (j = 0; j < p->n; j++)
			if (p->e[j]->log.pipe[0] == pfd[i].fd)
				logs_drain(&p->e[j]->log);
	}
}

static void
procs_tick_one(struct procs *p, struct procs_entry *e, long long now)
{
	if (e->pid != 0 && e->kill_at != -1 && now >= e->kill_at) {
		log_msg("%s: still running %d ms after SIGTERM: SIGKILL",
		        e->rec.name, PROCS_STOP_MS);
		killpg(e->pid, SIGKILL);
		e->kill_at = -1;
	}
	if (e->pid != 0 && e->run.state == PROCS_STARTING &&
	    e->run.due_at != -1 && now >= e->run.due_at) {
		e->run.state = PROCS_RUNNING;
		e->run.due_at = -1;
	}
	if (e->pid == 0 && e->run.state == PROCS_BACKOFF &&
	    now >= e->run.due_at)
		procs_start(p, e, now);
}

void
procs_tick(struct procs *p, long long now)
{
	struct procs_entry *web;
	size_t i;

	for (i = 0; i < p->n; i++)
		procs_tick_one(p, p->e[i], now);
	procs_sweep(p);
	web = procs_web(p);
	if (web != NULL && web->pid != 0 && web->pending == PROCS_NONE &&
	    health_tick(&p->health, now, web->rec.port, web->rec.path))
		procs_web_up(p);
}

long long
procs_earliest(long long a, long long b)
{
	if (a == -1)
		return b;
	if (b == -1)
		return a;
	return a < b ? a : b;
}

long long
procs_next(const struct procs *p)
{
	const struct procs_entry *e, *web = procs_web(p);
	long long next = -1;
	size_t i;

	for (i = 0; i < p->n; i++) {
		e = p->e[i];
		if (e->pid != 0)
			next = procs_earliest(next, e->kill_at);
		if ((e->pid != 0 && e->run.state == PROCS_STARTING) ||
		    (e->pid == 0 && e->run.state == PROCS_BACKOFF))
			next = procs_earliest(next, e->run.due_at);
	}
	if (web != NULL && web->pid != 0 && web->pending == PROCS_NONE)
		next = procs_earliest(next, health_next(&p->health));
	return next;
}

/* --- status -------------------------------------------------------------- */

/* The state a client sees: a process stopping to start again is
 * "starting", one stopping for good "stopped". */
static const char *
procs_public_state(const struct procs_entry *e)
{
	switch (e->pending) {
	case PROCS_RESTART:
	case PROCS_REPLACE:
		return "starting";
	case PROCS_REMOVE:
	case PROCS_HALT:
		return "stopped";
	case PROCS_NONE:
		break;
	}
	return procs_state_name(e->run.state);
}

static void
procs_status_one(const struct procs_entry *e, struct jw *w)
{
	jw_raw(w, "{");
	jw_key(w, "name", false);
	jw_str(w, e->rec.name, strlen(e->rec.name));
	jw_key(w, "kind", true);
	jw_raw(w, e->rec.kind == CONF_WEB ? "\"web\"" : "\"worker\"");
	jw_key(w, "state", true);
	jw_str(w, procs_public_state(e), strlen(procs_public_state(e)));
	jw_key(w, "pid", true);
	jw_int(w, e->pid);
	jw_key(w, "restarts", true);
	jw_int(w, e->restarts);
	jw_key(w, "exit_code", true);
	if (e->exit_code == -1)
		jw_raw(w, "null");
	else
		jw_int(w, e->exit_code);
	if (e->rec.kind == CONF_WEB) {
		jw_key(w, "port", true);
		jw_int(w, e->rec.port);
	}
	jw_raw(w, "}");
}

void
procs_status(const struct procs *p, struct jw *w)
{
	const char *health = health_state_name(p->health.state);
	size_t i;

	jw_key(w, "configured", true);
	jw_bool(w, p->configured);
	jw_key(w, "health", true);
	jw_str(w, health, strlen(health));
	jw_key(w, "health_detail", true);
	jw_str(w, p->health.detail, strlen(p->health.detail));
	jw_key(w, "processes", true);
	jw_raw(w, "[");
	for (i = 0; i < p->n; i++) {
		if (i > 0)
			jw_raw(w, ",");
		procs_status_one(p->e[i], w);
	}
	jw_raw(w, "]");
}
