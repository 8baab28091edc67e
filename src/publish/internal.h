/*
 * What the files of src/publish/ share (not for other modules: they use
 * publish.h).  struct publish is c->pub: the host table (hosts.c), the
 * builds under way (release.c), the publish domain.  The runner's and
 * the domains' declarations go at the end, each under its heading.
 */
#ifndef PUBLISH_INTERNAL_H
#define PUBLISH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "publish/publish.h"
#include "sandbox/manifest.h"

#define PUB_LOG_MAX      (8u << 20)  /* build.log's head kept whole */
#define PUB_LOG_TAIL     (64u << 10) /* and its tail, past the head */
#define PUB_TAIL_ERROR   360         /* log bytes in a release's error */
#define PUB_LABEL_MAX    63
#define PUB_STATIC_FILES 50000 /* files of a static release */
#define PUB_STATIC_DEPTH 32
#define PUB_SEED_WAIT_S  120 /* a first boot's template copy, waited for */

struct pub_app;  /* hosts.c: an app the host table knows */
struct pub_host; /* hosts.c: a host name and its app */
struct pub_job;  /* release.c: a build under way */

struct publish {
	struct core *c;
	char domain[256]; /* SANDBOXD_PUBLISH_DOMAIN, or apps.<preview> */
	atomic_bool stopping;
	/* hosts.c: held for lookups and swaps only, never across I/O */
	pthread_mutex_t hmu;
	struct pub_app *apps;
	size_t napps, capps;
	struct pub_host *hosts;
	size_t nhosts, chosts;
	/* release.c: builds under way; and publication changes, one app's
	 * at a time (publish's swap, rollback, unpublish, label) */
	pthread_mutex_t jmu;
	struct pub_job *jobs;
	pthread_mutex_t pmu;
};

/* --- paths (publish.c) -------------------------------------------------- */

/* <data>/releases/<app id> and …/<release id> */
void pub_app_dir(const struct core *c, const char *app_id, char *out,
                 size_t len);
void pub_release_dir(const struct core *c, const char *app_id,
                     const char *release_id, char *out, size_t len);
/* A release's build container's name. */
void pub_build_name(const struct core *c, const char *release_id, char *out,
                    size_t len);

/* --- the host table (hosts.c) ------------------------------------------ */

/* What an app's hosts answer (the release, or why none). */
struct pub_serve {
	enum publish_kind kind; /* SERVER: the runner knows the address */
	char release_id[ULID_LEN + 1];
	struct site *site; /* STATIC: a reference, taken over by the table */
	bool spa;
	bool private_gate;
	int retry_after_s;
	char message[256];
};
void pub_hosts_free(struct publish *p);
/* Sets what app's hosts answer (s->site's reference is the table's
 * now), and its label's host ("" keeps the one it has).  -1 when out of
 * memory (s->site released). */
int pub_hosts_set(struct publish *p, const char *app_id, const char *label,
                  struct pub_serve *s);
/* What app answers now, for rollback's and unpublish's caller (the
 * site is a new reference, or NULL). */
bool pub_hosts_get(struct publish *p, const char *app_id, struct pub_serve *s);
/* Forgets the app and every host name of it. */
void pub_hosts_drop(struct publish *p, const char *app_id);
/* Lower case, no port, no trailing dot: 0, or -1 for no host. */
int pub_host_norm(const char *host, size_t len, char *out, size_t outlen);

/* --- what a release is built from (source.c) --------------------------- */

/* How an app is built and served: its sandbox.yaml's publish:, else its
 * detected recipe's (docs/publish.md, "How an app is built"). */
struct pub_plan {
	char recipe[32]; /* the recipe, "sandbox.yaml" or the preset */
	char install[MANIFEST_MAX_COMMAND + 1]; /* "" none */
	char install_key[65];
	char build[MANIFEST_MAX_COMMAND + 1]; /* "" none */
	char output[MANIFEST_OUTPUT_LEN + 1]; /* static; "" a server */
	bool spa;
	char command[MANIFEST_MAX_COMMAND + 1]; /* server */
	int port;
	char health[128];
	int timeout_s;
};
/* The plan of the app whose directory is appfd; -1 with e (400 when
 * the app does not say how, or its sandbox.yaml is wrong). */
int pub_plan(struct core *c, int appfd, const char *preset,
             struct pub_plan *out, struct err *e);
/* What pub_plan's 400 says when the app names no way to publish it. */
#define PUB_NO_PLAN                                                            \
	"the app does not say how to publish it: add a publish: section "      \
	"to its sandbox.yaml (docs/publish.md)"
/* The sandbox's row, when it lives on another node (false: local, or no
 * such row). */
bool pub_remote_of(struct core *c, const char *sandbox_id, struct sandbox *sb);
/* Whether its first boot made the app's files (one stat on the node). */
bool pub_remote_seeded(struct core *c, const struct sandbox *sb);

/* Whether the sandbox's first boot has made the app's files. */
bool pub_seeded(struct core *c, const char *sandbox_id);
/* The sandbox's install key, "" when none was installed. */
void pub_installed_key(struct core *c, const char *sandbox_id, char out[65]);
/*
 * Copies the source of r (the app's current files in sandbox_id's
 * workspace, or the snapshot r->source_ref) into <dir>/work/workspace/app,
 * owned by the sandbox's user.  -1 with e (507 for a full disk).
 */
int pub_source_copy(struct core *c, const struct release *r,
                    const char *sandbox_id, const char *dir, struct err *e);

/* --- the build container (build.c) -------------------------------------- */

struct pub_log; /* build.log, bounded (build.c) */
struct pub_log *pub_log_open(const char *dir);
void pub_log_printf(struct pub_log *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pub_log_write(struct pub_log *l, const char *data, size_t len);
/* The last n bytes written, printable, into out. */
void pub_log_tail(struct pub_log *l, char *out, size_t len);
void pub_log_close(struct pub_log *l);

struct pub_build {
	const struct release *r;
	const struct pub_plan *plan;
	const char *dir; /* the release's directory */
	bool install;    /* run the plan's install first */
	const atomic_bool *cancel;
	struct pub_log *log;
	char commit[48]; /* out: HEAD as built */
};
/* Runs the checkout (a commit), the install and the build in a build
 * container of their own; -1 with e (why, for the release's error). */
int pub_build_run(struct core *c, struct pub_build *b, struct err *e);
/* Removes a release's build container, if any. */
void pub_build_remove(struct core *c, const char *release_id);

/* --- releases (release.c) ------------------------------------------------ */

/* Loads an active release into the host table (recover, restore). */
int pub_release_serve(struct core *c, const struct publication *pb,
                      const struct release *r, struct err *e);
/* Fails a release left building by a crash. */
void pub_release_abandon(struct core *c, const struct release *r);
/*
 * Makes r its app's active release: its container running and
 * answering (a server) or its files loaded (static), then, under pmu,
 * r's row "ready" (finish: a build's end), the publication's row, the
 * host table; the previous server release's container stopped.  -1
 * with e, and nothing switched: the previous release serves on.
 */
int pub_activate(struct core *c, struct release *r, bool finish, struct err *e);
/* What an unpublished (or trashed) app's hosts answer. */
void pub_serve_none(struct core *c, const char *app_id, const char *label);
/* Asks the builds of app_id (NULL: every app's) to stop; with join,
 * waits for them to end. */
void pub_jobs_cancel(struct publish *p, const char *app_id, bool join);
/* Joins and frees the builds that ended. */
void pub_jobs_reap(struct publish *p);
/* Starts r's build on a thread of its own (tracked in p->jobs). */
int pub_job_start(struct core *c, const struct app *app,
                  const struct release *r, struct err *e);
/* An event of r on the app's timeline, with r's id, number and kind. */
void pub_note(struct core *c, const struct release *r, const char *type,
              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A failed file operation as an API error (507 for a full disk). */
int pub_dir_err(int err, const char *what, struct err *e);

/* --- runner.c (server releases) ----------------------------------------- */

/* --- domain.c, verify.c, traefik.c (custom domains) ---------------------- */

#endif
