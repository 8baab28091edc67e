/*
 * install.h - the install step (docs/supervisor.md, "Install"): run.conf's
 * install record runs before the processes whenever
 * $HOME/.sandboxd/install.key does not hold its key.
 *
 * install_apply() stands between run.conf and procs_apply(): it takes
 * the install record out of the conf and either hands the rest to the
 * process table at once (no record, or the key already installed) or
 * stops the processes, holds the records and runs the install; its exit
 * (install_on_exit) writes the key and applies the held records, or
 * leaves the install failed and the processes not started.  Everything is
 * driven by the main loop and never blocks, like procs.
 */
#ifndef SUPERVISOR_INSTALL_H
#define SUPERVISOR_INSTALL_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/types.h>

#include "conf.h"
#include "jw.h"
#include "logs.h"
#include "procs.h"

enum install_state {
	INSTALL_NONE, /* no install record */
	INSTALL_RUNNING,
	INSTALL_DONE, /* ran and exited 0, or its key was installed already */
	INSTALL_FAILED,
};

struct install {
	enum install_state state;
	struct conf_rec rec; /* the install record applied last; cmd NULL:
	                        none */
	struct conf held;    /* the records to apply once it is done */
	pid_t pid;           /* its process group leader while it runs */
	long long deadline;  /* the timeout (CLOCK_MONOTONIC ms) */
	long long kill_at;   /* SIGKILL due after the timeout's SIGTERM; -1 */
	bool timed_out;
	int exit_code;           /* -1: none */
	long long started_at_ms; /* wall clock; -1: none */
	long long ended_at_ms;   /* wall clock; -1: none */
	struct logs log;         /* install.log */
	bool log_open;
	char key_path[PATH_MAX]; /* $HOME/.sandboxd/install.key */
};

void install_init(struct install *i, const char *home);
void install_release(struct install *i);

/* Whether the file at path holds exactly key (and maybe a newline). */
bool install_key_matches(const char *path, const char *key);

/*
 * Applies c (NULL: no run.conf) through the install step, then
 * procs_apply().  Returns 0, or -1 with err set and nothing changed (the
 * error of procs_apply).  c's records are taken or left to be freed.
 */
int install_apply(struct install *i, struct procs *p, struct conf *c,
                  long long now, char *err, size_t errlen);

/* A failed install runs again (reload, restart); false when none failed. */
bool install_retry(struct install *i, struct procs *p, long long now);

/* Accounts for a reaped child; false when pid is not the install's. */
bool install_on_exit(struct install *i, struct procs *p, pid_t pid, int status,
                     long long now);

void install_tick(struct install *i, struct procs *p, long long now);
long long install_next(const struct install *i);
size_t install_pollfds(const struct install *i, struct pollfd *pfd, size_t max);
void install_on_poll(struct install *i, const struct pollfd *pfd, size_t n);

/* The "install" member of the status answer, preceded by a comma. */
void install_status(const struct install *i, struct jw *w);

#endif
