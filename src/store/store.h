/*
 * store: the daemon's state in SQLite, the single source of truth.  The
 * only module that includes sqlite3.h.  One connection in WAL mode behind
 * a mutex: every function is one short transaction and may be called from
 * any thread.  Functions return 0, STORE_NOT_FOUND, STORE_CONFLICT or -1
 * (a database error, already logged).
 */
#ifndef STORE_STORE_H
#define STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/limits.h"
#include "lib/ulid.h"

#define STORE_NOT_FOUND 1
#define STORE_CONFLICT  2

struct store;

struct app {
	char id[ULID_LEN + 1];
	char owner[64];
	char name[API_MAX_NAME_BYTES + 1];
	char description[API_MAX_DESC_BYTES + 1];
	char tags_json[API_MAX_TAGS * (API_MAX_TAG_BYTES * 6 + 3) + 3];
	char runtime_preset[32];               /* "" when none */
	char current_sandbox_id[ULID_LEN + 1]; /* "" when none; read only */
	int64_t created_at;
	int64_t updated_at;
};

struct sandbox {
	char id[ULID_LEN + 1];
	char app_id[ULID_LEN + 1];
	char owner[64];         /* the app's owner; read only */
	char status[16];        /* creating running stopped error */
	char status_reason[32]; /* "" or stopped exited oom_killed … */
	char error_message[384];
	char container_id[72];
	char container_ip[64]; /* bridge address while running, else "" */
	char image[256];
	int exit_code;
	bool has_exit_code;
	bool oom_killed;
	int ports[API_MAX_PORTS];
	int nports;
	char idle_policy[16];
	char preset[32]; /* runtime preset the workspace was seeded as */
	char manifest_source[16]; /* "sandbox.yaml", "default" or "" */
	char manifest_error[384]; /* "" when the manifest is valid */
	int64_t created_at;
	int64_t updated_at;
	int64_t last_active_at;
	int64_t stopped_at; /* 0 when not stopped */
};

int store_open(struct store **out, const char *path);
void store_close(struct store *s);

int store_meta_get(struct store *s, const char *key, char *val, size_t len);
int store_meta_set(struct store *s, const char *key, const char *val);

int store_app_insert(struct store *s, const struct app *a);
/* owner NULL matches any owner. */
int store_app_get(struct store *s, const char *owner, const char *id,
                  struct app *out);
int store_app_update(struct store *s, const struct app *a);
int store_app_delete(struct store *s, const char *id);
/* Newest first; fn returns non-zero to stop early. */
int store_app_list(struct store *s, const char *owner,
                   int (*fn)(const struct app *, void *), void *arg);

/* STORE_CONFLICT when the app already has a sandbox. */
int store_sandbox_insert(struct store *s, const struct sandbox *sb);
int store_sandbox_get(struct store *s, const char *id, struct sandbox *out);
int store_sandbox_by_app(struct store *s, const char *app_id,
                         struct sandbox *out);
/* Writes every mutable column of sb and bumps updated_at. */
int store_sandbox_update(struct store *s, struct sandbox *sb);
int store_sandbox_delete(struct store *s, const char *id);
int store_sandbox_list(struct store *s,
                       int (*fn)(const struct sandbox *, void *), void *arg);
/*
 * The container died behind our back: running -> stopped with a reason.
 * A no-op (returns STORE_NOT_FOUND) unless the row is running.
 */
int store_sandbox_mark_exited(struct store *s, const char *id, int exit_code,
                              bool oom_killed);
/* Moves last_active_at forward to at (never back). */
int store_sandbox_touch(struct store *s, const char *id, int64_t at);
int store_sandbox_set_policy(struct store *s, const char *id,
                             const char *policy);
/* Records what the last read of the app's manifest found. */
int store_sandbox_set_manifest(struct store *s, const char *id,
                               const char *source, const char *error);
/* Records an OOM kill inside the sandbox (the container may live on). */
int store_sandbox_mark_oom(struct store *s, const char *id);

/*
 * A task row.  prompt and result (the TaskResult JSON, NULL while
 * running) are heap strings: release with store_task_release().
 * Times are unix milliseconds.
 */
struct task {
	char id[ULID_LEN + 1];
	char sandbox_id[ULID_LEN + 1];
	char agent[16];
	char model[TASK_MAX_MODEL_BYTES + 1];
	int64_t timeout_s;
	char status[16]; /* running succeeded failed cancelled */
	char failure_reason[32];
	char checkpoint_id[72];
	char *prompt;
	char *result;
	int64_t created_at;
	int64_t finished_at;
};

void store_task_release(struct task *t);
/* STORE_CONFLICT when the sandbox already has a running task. */
int store_task_insert(struct store *s, const struct task *t);
/* sandbox_id NULL matches any sandbox. */
int store_task_get(struct store *s, const char *sandbox_id, const char *id,
                   struct task *out);
/*
 * Newest first, at most max rows; fn must not keep t's strings and
 * returns non-zero to stop (then the result is 1).
 */
int store_task_list(struct store *s, const char *sandbox_id, int max,
                    int (*fn)(const struct task *, void *), void *arg);
/* Every running task, oldest first. */
int store_task_list_running(struct store *s,
                            int (*fn)(const struct task *, void *), void *arg);
/* running -> a final status; STORE_NOT_FOUND unless it was running. */
int store_task_finish(struct store *s, const char *id, const char *status,
                      const char *failure_reason, const char *checkpoint_id,
                      const char *result, int64_t finished_at);
int store_task_delete_sandbox(struct store *s, const char *sandbox_id);

int store_apikey_count(struct store *s, int64_t *n);
/* Replaces (or adds) the key with this name, atomically. */
int store_apikey_replace(struct store *s, const char *name,
                         const char *key_hash, const char *prefix);
/* Finds the key by hash; writes its name to name (64 bytes). */
int store_apikey_lookup(struct store *s, const char *key_hash, char *name,
                        size_t len);

#endif
