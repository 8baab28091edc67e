/*
 * procs.h - the process table: the processes run.conf declares, their
 * states, restarts with backoff, stops, logs and the web health check
 * (docs/supervisor.md, "Process states").
 *
 * Everything is driven by the main loop and never blocks: procs_pollfds()
 * / procs_on_poll() for log pipes and the health check, procs_tick() for
 * everything due by the clock, procs_on_exit() for each reaped child.
 * The restart policy (struct procs_run) is a set of pure functions of
 * time.
 */
#ifndef SUPERVISOR_PROCS_H
#define SUPERVISOR_PROCS_H

#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

#include "appenv.h"
#include "conf.h"
#include "health.h"
#include "jw.h"
#include "logs.h"

enum procs_state {
	PROCS_STARTING,
	PROCS_RUNNING,
	PROCS_BACKOFF,
	PROCS_CRASHLOOP,
	PROCS_STOPPED,
};

/* The restart policy of one process. */
struct procs_run {
	enum procs_state state;
	unsigned short_runs; /* runs in a row shorter than PROCS_SHORT_RUN_MS */
	long long started_at; /* CLOCK_MONOTONIC ms */
	long long due_at;     /* starting -> running (workers), or the restart
	                         in backoff; -1: nothing due */
};

/* The process was spawned: starting; a worker is up after
 * PROCS_WORKER_UP_MS, the web process when its health check passes. */
void procs_run_started(struct procs_run *r, long long now, bool web);

/* The process exited by itself: backoff with the next delay, or crashloop
 * after PROCS_CRASH_RUNS short runs in a row. */
void procs_run_exited(struct procs_run *r, long long now, long long base_ms);

/* The delay before restart number n (1-based) of a streak of short runs:
 * base, 2 base, 4 base ... capped at PROCS_BACKOFF_CAP (scaled like base). */
long long procs_backoff_ms(unsigned n, long long base_ms);

/* What to do once a process being stopped has exited. */
enum procs_pending {
	PROCS_NONE,
	PROCS_RESTART, /* start it again */
	PROCS_REPLACE, /* start it again with the record in next */
	PROCS_REMOVE,  /* drop it from the table */
	PROCS_HALT,    /* leave it stopped (shutdown) */
};

struct procs_entry {
	struct conf_rec rec;
	struct conf_rec next; /* PROCS_REPLACE */
	struct procs_run run;
	enum procs_pending pending;
	pid_t pid;         /* process group leader; 0 when not running */
	long long kill_at; /* SIGKILL due while stopping; -1: none */
	unsigned restarts; /* starts after the first */
	bool started;      /* started at least once */
	int exit_code;     /* of the last run; -1 before the first exit */
	bool gone;         /* removed, to be freed */
	struct logs log;
};

/* The variables set for every process, in procs->env. */
enum procs_env_slot {
	PROCS_ENV_HOME,
	PROCS_ENV_PATH,
	PROCS_ENV_LANG,
	PROCS_ENV_HOST,
	PROCS_ENV_FIXED,
};

struct procs {
	struct procs_entry *e[PROCS_MAX];
	size_t n;
	bool configured; /* a valid run.conf is applied */
	bool halting;    /* shutting down: nothing is started any more */
	char *app_dir;
	char *env[PROCS_ENV_FIXED]; /* "HOME=..." etc., by slot */
	int logs_dir;
	long long backoff_ms; /* PROCS_BACKOFF_MS, or a test's override */
	struct health health;
	struct conf_rec build; /* run.conf's build record; cmd NULL: none */
	struct appenv app_env; /* for web and workers only (env) */
};

/*
 * Opens $home/.sandboxd/logs (created if missing; without it output is
 * dropped, which is logged).  Returns 0, or -1 when out of memory.
 */
int procs_init(struct procs *p, const char *home, long long backoff_ms);

/* Frees the table; call after every process is gone. */
void procs_release(struct procs *p);

/*
 * Makes the table match c (NULL: no run.conf): records that vanished or
 * changed are stopped (the changed ones then started anew), new ones are
 * started, unchanged ones are left alone (restarted if in crashloop).
 * Takes the records it keeps out of c.  Returns 0, or -1 with err set and
 * nothing changed.
 */
int procs_apply(struct procs *p, struct conf *c, long long now, char *err,
                size_t errlen);

/* While no run.conf is applied, why (shown as the health detail). */
void procs_unconfigured(struct procs *p, const char *why);

/* Stops and starts the named process with its crash count reset.
 * Returns 0, or -1 when there is no such process. */
int procs_restart(struct procs *p, const char *name, size_t len, long long now);

/*
 * After an agent task: restarts, like procs_restart(), every process whose
 * record has restart_after_task.  Returns true when the web process is one
 * of them.
 */
bool procs_restart_after_task(struct procs *p, long long now);

/* Whether the web process is being stopped to start again (restart,
 * reload): its health is the old process's until then. */
bool procs_web_restarting(const struct procs *p);

/*
 * The entries of the supervisor's environment that keep(kv, ctx) takes, in
 * a malloc'd NULL-terminated array of borrowed strings with room for extra
 * more before the NULL; *n is how many it holds.  Returns NULL when out of
 * memory.
 */
char **procs_environ(bool (*keep)(const char *kv, const void *ctx),
                     const void *ctx, size_t extra, size_t *n);

/*
 * The environment of a command run for record r (a build record too): the
 * supervisor's; for web and workers then the app's environment (which
 * wins over the supervisor's); then HOME, PATH, LANG, HOST and for the web
 * process PORT set by us; port backs the PORT string.  Returns a malloc'd
 * array of borrowed strings, or NULL.
 */
char **procs_env(const struct procs *p, const struct conf_rec *r, char *port,
                 size_t portlen);

/*
 * Takes *e (left empty) as the app's environment.  When it differs from
 * the one held, every web and worker process is restarted like
 * procs_restart() does, so each runs with the new one.  Returns whether
 * it differed.
 */
bool procs_set_app_env(struct procs *p, struct appenv *e, long long now);

/* Accounts for a reaped child.  Returns false when pid is not one of ours
 * (an orphan). */
bool procs_on_exit(struct procs *p, pid_t pid, int status, long long now);

/* Shutdown: SIGTERM to every process group, no more starts. */
void procs_halt(struct procs *p, long long now);

/* SIGKILL to every process group. */
void procs_kill(struct procs *p);

size_t procs_pollfds(const struct procs *p, struct pollfd *pfd, size_t max);
void procs_on_poll(struct procs *p, const struct pollfd *pfd, size_t n,
                   long long now);
void procs_tick(struct procs *p, long long now);

/* The next time procs_tick() has work (CLOCK_MONOTONIC ms), or -1. */
/* The earlier of two deadlines in ms, where -1 means "none". */
long long procs_earliest(long long a, long long b);
long long procs_next(const struct procs *p);

/* The "configured", "health", "health_detail" and "processes" members of
 * the status answer, each preceded by a comma. */
void procs_status(const struct procs *p, struct jw *w);

const char *procs_state_name(enum procs_state state);

#endif
