/*
 * store: the daemon's state in SQLite, the single source of truth.  The
 * only module that includes sqlite3.h.  One connection in WAL mode behind
 * a mutex: every function is one short transaction and may be called from
 * any thread.  Functions return 0, STORE_NOT_FOUND, STORE_CONFLICT or -1
 * (a database error, already logged; a row whose state this daemon does
 * not know is one).
 */
#ifndef STORE_STORE_H
#define STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/limits.h"
#include "lib/ulid.h"
#include "vault/vault.h"

#define STORE_NOT_FOUND 1
#define STORE_CONFLICT  2
#define STORE_TOO_MANY  3 /* a cap on rows per owner would be passed */
#define STORE_TRASHED   4 /* store_app_where: the app is in the trash */

struct store;

#define GIT_URL_MAX        2048 /* bytes of an app's repository URL */
#define GIT_BRANCH_MAX     255  /* bytes of a branch name */
#define GIT_CRED_NAME_MAX  64   /* bytes of a git credential's name */
#define GIT_CRED_HOST_MAX  259  /* a DNS name (253) and ":port" */
#define GIT_CRED_USER_MAX  128  /* bytes of a git credential's username */
#define GIT_CRED_TOKEN_MAX 4096 /* bytes of a git credential's token */

struct app {
	char id[ULID_LEN + 1];
	char owner[64];
	char name[API_MAX_NAME_BYTES + 1];
	char description[API_MAX_DESC_BYTES + 1];
	char tags_json[API_MAX_TAGS * (API_MAX_TAG_BYTES * 6 + 3) + 3];
	char runtime_preset[32];               /* "" when none */
	char current_sandbox_id[ULID_LEN + 1]; /* "" when none; read only */
	/*
	 * Where imports come from and pushes go: https URL, import branch
	 * ("" until the first import when none was named: the remote's
	 * default), credential ("" none).
	 */
	char git_repo_url[GIT_URL_MAX + 1];
	char git_branch[GIT_BRANCH_MAX + 1];
	char git_credential_id[ULID_LEN + 1];
	int64_t last_import_at; /* 0: never imported */
	/* Private previews: "" (the instance default), "public", "private";
	 * the epoch every preview cookie of the app carries. */
	char preview_visibility[8];
	int64_t preview_epoch;
	int64_t created_at;
	int64_t updated_at;
};

/*
 * A sandbox's state (docs/design.md, "Sandbox lifecycle"): creating ->
 * running <-> stopped, creating -> error.  The database and the API
 * spell it as sandbox_state_name() does, the one table of the names.
 */
enum sandbox_state {
	SANDBOX_CREATING,
	SANDBOX_RUNNING,
	SANDBOX_STOPPED,
	SANDBOX_ERROR,
};

/* "creating" …; NULL for a value that is no state. */
const char *sandbox_state_name(enum sandbox_state st);
/* The state named s (an enum sandbox_state), or -1 for any other string. */
int sandbox_state_parse(const char *s);

struct sandbox {
	char id[ULID_LEN + 1];
	char app_id[ULID_LEN + 1];
	char owner[64]; /* the app's owner; read only */
	enum sandbox_state status;
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
	bool frozen;        /* running, its container paused (two-tier sleep) */
	char node[64];      /* swarm: the node holding it; "" this host */
};

int store_open(struct store **out, const char *path);
void store_close(struct store *s);

int store_meta_get(struct store *s, const char *key, char *val, size_t len);
int store_meta_set(struct store *s, const char *key, const char *val);

int store_app_insert(struct store *s, const struct app *a);
/* owner NULL matches any owner. */
int store_app_get(struct store *s, const char *owner, const char *id,
                  struct app *out);
/* Where the app's row is: 0 live, STORE_TRASHED in the trash,
 * STORE_NOT_FOUND gone (deleted or purged), -1 a database error. */
int store_app_where(struct store *s, const char *id);
int store_app_update(struct store *s, const struct app *a);
/*
 * The app's remote (git_repo_url, git_branch, git_credential_id; all ""
 * clears it) and updated_at; last_import_at is kept when the URL stays
 * the same, else reset to 0.
 */
int store_app_set_git(struct store *s, const struct app *a);
/* The app's preview_visibility, preview_epoch and updated_at. */
int store_app_set_preview(struct store *s, const struct app *a);
/* After an import: last_import_at, and git_branch when it was "". */
int store_app_imported(struct store *s, const char *id, const char *branch,
                       int64_t at);
int store_app_delete(struct store *s, const char *id);
/* Newest first; fn returns non-zero to stop early. */
int store_app_list(struct store *s, const char *owner,
                   int (*fn)(const struct app *, void *), void *arg);

/*
 * The trash (trash.c): apps deleted with a retention.  state is the
 * journal of a move (trash/trash.c): "deleting" until the container and
 * the workspace are gone, "restoring" while a restore runs, "purging"
 * while it is removed for good.
 */
enum trash_state {
	TRASH_DELETING,
	TRASH_TRASHED,
	TRASH_RESTORING,
	TRASH_PURGING,
};
const char *trash_state_name(enum trash_state st);

struct trash_entry {
	char id[ULID_LEN + 1];
	char owner[64];
	char app_id[ULID_LEN + 1];
	char name[API_MAX_NAME_BYTES + 1]; /* the app's name */
	enum trash_state state;
	char sandbox_id[ULID_LEN + 1]; /* "" when the app had none */
	int64_t bytes;                 /* -1 until measured */
	char restore_name[API_MAX_NAME_BYTES + 1]; /* "" keeps the name */
	int64_t deleted_at;
	int64_t purge_at;
	bool sandbox_only; /* a deleted sandbox of a live app, not an app */
};

/*
 * Journals the delete ("deleting") and marks the app trashed, in one
 * transaction; copies the sandbox row's settings into the entry.
 * STORE_NOT_FOUND when the app is gone or trashed already.
 */
int store_trash_begin(struct store *s, const char *trash_id, const char *app_id,
                      int64_t now, int64_t purge_at);
/* The same for a sandbox alone (DELETE /v1/sandboxes/{id}): the app
 * stays live.  STORE_NOT_FOUND when the sandbox is gone. */
int store_trash_begin_sandbox(struct store *s, const char *trash_id,
                              const char *sandbox_id, int64_t now,
                              int64_t purge_at);
/* Drops the sandbox row (sandbox_id "" none) and marks it "trashed". */
int store_trash_deleted(struct store *s, const char *trash_id,
                        const char *sandbox_id);
/* Rolls a "deleting" entry back: the app is live again, the entry gone. */
int store_trash_undo_begin(struct store *s, const char *trash_id,
                           const char *app_id);
/* owner NULL matches any owner. */
int store_trash_get(struct store *s, const char *owner, const char *id,
                    struct trash_entry *out);
/*
 * Newest first; owner NULL lists every entry (recovery), else at most
 * TRASH_LIST_MAX.  fn runs outside the store's lock.
 */
int store_trash_list(struct store *s, const char *owner,
                     int (*fn)(const struct trash_entry *, void *), void *arg);
/* "trashed" entries past purge_at or not measured yet (TRASH_LIST_MAX). */
int store_trash_due(struct store *s, int64_t now,
                    int (*fn)(const struct trash_entry *, void *), void *arg);
int store_trash_set_state(struct store *s, const char *id, enum trash_state st,
                          const char *restore_name);
/* "trashed" -> to, or STORE_NOT_FOUND when it is not "trashed" now. */
int store_trash_claim(struct store *s, const char *id, enum trash_state to,
                      const char *restore_name);
int store_trash_set_bytes(struct store *s, const char *id, int64_t bytes);
/* Entries and measured bytes (owner NULL: all). */
int store_trash_usage(struct store *s, const char *owner, int64_t *entries,
                      int64_t *bytes);
/*
 * Ends a restore: the sandbox row again (same id, "stopped", reason
 * "restored"), the app live under restore_name or its name, the entry
 * gone; one transaction.  STORE_CONFLICT when the app has a sandbox.
 */
int store_trash_restored(struct store *s, const char *id, int64_t now);
/*
 * Ends a purge: the app's config and secrets, the app and the entry; of
 * a sandbox's entry only the entry.
 */
int store_trash_purged(struct store *s, const char *id, const char *app_id,
                       bool sandbox_only);
/* 1 when a live app of owner other than except_id has this name. */
/*
 * Snapshots of an app's files (migration 16, snapshot/snapshot.c).  A
 * row is "taking" from before its directory is written until it is
 * complete ("ready"); step journals a restore from it.
 */
#define SNAPSHOT_NAME_MAX 128 /* bytes of a snapshot's name */
#define SNAPSHOT_LIST_MAX 1000
struct snapshot {
	char id[ULID_LEN + 1];
	char owner[64];
	char app_id[ULID_LEN + 1];
	char name[SNAPSHOT_NAME_MAX + 1];
	char source_app_id[ULID_LEN + 1];
	char source_sandbox_id[ULID_LEN + 1];
	char status[8];  /* "taking", "ready", "failed" */
	char reason[16]; /* "manual", "before_restore", "fork" */
	int64_t size_bytes, own_bytes, files;
	char method[8]; /* "reflink" or "copy" */
	int64_t pause_ms;
	char task_id[ULID_LEN + 1];
	char head[48]; /* the app repository's HEAD, hex, or "" */
	char base_image[256];
	char path[256]; /* its directory, under <data>/snapshots */
	char created_by[64];
	int64_t created_at;
	char step[ULID_LEN + 1]; /* a restore in progress: its sandbox, or "" */
};
/* Inserts sn ("taking"): STORE_TOO_MANY when its app has max or more. */
int store_snapshot_insert(struct store *s, const struct snapshot *sn,
                          int64_t max);
/* Writes the figures, method, pause, head and status of sn. */
int store_snapshot_finish(struct store *s, const struct snapshot *sn);
int store_snapshot_set_step(struct store *s, const char *id, const char *step);
/* owner NULL matches any owner. */
int store_snapshot_get(struct store *s, const char *owner, const char *id,
                       struct snapshot *out);
/* Newest first, at most SNAPSHOT_LIST_MAX; owner, app_id NULL: any;
 * fn runs outside the store's lock. */
int store_snapshot_list(struct store *s, const char *owner, const char *app_id,
                        int (*fn)(const struct snapshot *, void *), void *arg);
int store_snapshot_delete(struct store *s, const char *id);
/* How many snapshots the app keeps and their own bytes together. */
int store_snapshot_usage(struct store *s, const char *app_id, int64_t *count,
                         int64_t *own_bytes);

int store_app_name_taken(struct store *s, const char *owner, const char *name,
                         const char *except_id);

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
/*
 * Records that a running sandbox's container is paused (or not), as the
 * engine's events and inspect say; a no-op unless the row is running.
 */
int store_sandbox_set_frozen(struct store *s, const char *id, bool frozen);
/* Moves the row to node ("" this host): a create's placement, a move. */
int store_sandbox_set_node(struct store *s, const char *id, const char *node);
/* Every sandbox row on node (its id), for drain and node down. */
int store_sandboxes_on_node(struct store *s, const char *node,
                            void (*fn)(const struct sandbox *, void *),
                            void *arg);
/* Records an OOM kill inside the sandbox (the container may live on). */
int store_sandbox_mark_oom(struct store *s, const char *id);
/*
 * The hash (e.g. vault_hash_hex of a random token) of the sandbox's
 * credential-proxy token; "" clears it.  STORE_CONFLICT when another
 * sandbox has the same hash.
 */
int store_sandbox_set_proxy_token(struct store *s, const char *id,
                                  const char *hash);
/* The sandbox whose proxy token has this hash; "" never matches. */
int store_sandbox_by_proxy_token(struct store *s, const char *hash,
                                 struct sandbox *out);

/*
 * A task's state.  A task row is running until it ends as succeeded,
 * failed or cancelled.  TASK_CANCELLING is never stored: it is what a
 * cancel answers while the running task is being stopped.  Named by
 * task_state_name(), the one table of the names.
 */
enum task_state {
	TASK_RUNNING,
	TASK_SUCCEEDED,
	TASK_FAILED,
	TASK_CANCELLED,
	TASK_CANCELLING,
};

/* "running" …; NULL for a value that is no state. */
const char *task_state_name(enum task_state st);
/* The state named s (an enum task_state), or -1 for any other string. */
int task_state_parse(const char *s);

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
	enum task_state status; /* never TASK_CANCELLING */
	char failure_reason[32];
	char checkpoint_id[72];
	char *prompt;
	char *result;
	int64_t created_at;
	int64_t finished_at;
	int64_t reverted_at; /* 0: never reverted */
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
/*
 * running -> status (succeeded, failed or cancelled); STORE_NOT_FOUND
 * unless it was running.
 */
int store_task_finish(struct store *s, const char *id, enum task_state status,
                      const char *failure_reason, const char *checkpoint_id,
                      const char *result, int64_t finished_at);
/* Records that the task's changes were reverted at unix time at. */
int store_task_set_reverted(struct store *s, const char *id, int64_t at);
int store_task_delete_sandbox(struct store *s, const char *sandbox_id);

int store_apikey_count(struct store *s, int64_t *n);
/* Replaces (or adds) the key with this name, atomically. */
int store_apikey_replace(struct store *s, const char *name,
                         const char *key_hash, const char *prefix);
/* Finds the key by hash; writes its name to name (64 bytes). */
int store_apikey_lookup(struct store *s, const char *key_hash, char *name,
                        size_t len);
/* A stored key as listed: never its hash. */
struct apikey {
	char name[64];
	int64_t created_at;
	int64_t last_used_at; /* 0: never used */
};
/* Every stored key, ordered by name. */
int store_apikey_list(struct store *s, int (*fn)(const struct apikey *, void *),
                      void *arg);
/* 0, or STORE_NOT_FOUND when no key has this name. */
int store_apikey_delete(struct store *s, const char *name);

/*
 * The console's password and sessions (console.c).  A session is named
 * by the SHA-256 hex of its cookie token.  Expired sessions are never
 * found and are deleted when a new one is added.
 */
struct store_session {
	char csrf[64];
	int64_t created_at, renewed_at, expires_at;
};

/* The encoded password hash; 0, STORE_NOT_FOUND, -1. */
int store_console_password(struct store *s, char *hash, size_t len);
/* Sets the first password: STORE_CONFLICT when one is set already. */
int store_console_password_init(struct store *s, const char *hash);
/*
 * Replaces the password and, in the same transaction, ends every
 * session but keep_hash's (NULL: all).
 */
int store_console_password_change(struct store *s, const char *hash,
                                  const char *keep_hash);
int store_session_add(struct store *s, const char *token_hash,
                      const struct store_session *ss);
/* The live session (expires_at > now); 0, STORE_NOT_FOUND, -1. */
int store_session_get(struct store *s, const char *token_hash, int64_t now,
                      struct store_session *out);
int store_session_renew(struct store *s, const char *token_hash, int64_t now,
                        int64_t expires_at);
/* Ends one session (token_hash) or every one (NULL). */
int store_session_end(struct store *s, const char *token_hash);

/*
 * Secrets (secrets.c).  A secret row is (kind, owner, name) and a value
 * sealed by the vault given to store_set_vault(): the owner is the
 * scope ("" for the instance's agent credentials, the tenant for git
 * tokens, the app id for app config).  The row's identity is the
 * value's associated data, so a value copied into another row does not
 * open.  Values are never logged.  Without a vault every secret call
 * fails (-1).
 */
#define STORE_SECRET_AGENT_API_KEY "agent_api_key"
#define STORE_SECRET_AGENT_OAUTH   "agent_oauth"
#define STORE_SECRET_GIT_TOKEN     "git_token"
#define STORE_SECRET_APP_CONFIG    "app_config"
#define STORE_SECRET_SANDBOX_PROXY "sandbox_proxy" /* name: the sandbox id */
#define STORE_SECRET_KIND_MAX      15              /* bytes of a kind */
#define STORE_SECRET_OWNER_MAX     80              /* bytes, without the NUL */
#define STORE_SECRET_NAME_MAX      160             /* bytes, without the NUL */

/* The keyring that seals and opens secrets; not owned, set at start. */
void store_set_vault(struct store *s, const struct vault *v);
/* A key for one purpose derived from that vault's sealing key
 * (vault_derive): 0, or -1 without a vault. */
int store_derive_key(struct store *s, const char *context,
                     unsigned char out[32]);
/* Seals len bytes of value and inserts or replaces the row. */
int store_secret_put(struct store *s, const char *kind, const char *owner,
                     const char *name, const void *value, size_t len);
/*
 * Opens the row's value into out (release it with vault_secret_free).
 * STORE_NOT_FOUND; -1 on a database error or when the value does not
 * open (logged with the row's name, never the value).
 */
int store_secret_get(struct store *s, const char *kind, const char *owner,
                     const char *name, struct vault_secret *out);
/*
 * Seals value into the row only when it exists: STORE_NOT_FOUND (and
 * nothing written) when it was deleted meanwhile.
 */
int store_secret_update(struct store *s, const char *kind, const char *owner,
                        const char *name, const void *value, size_t len);
/* 0 when the row exists, else STORE_NOT_FOUND (or -1). */
int store_secret_exists(struct store *s, const char *kind, const char *owner,
                        const char *name);
/* 0, or STORE_NOT_FOUND when there was no such row. */
int store_secret_delete(struct store *s, const char *kind, const char *owner,
                        const char *name);
/* How many rows each key id sealed: a new array in *out (free it). */
int store_secret_usage(struct store *s, struct vault_usage **out, size_t *n);
/*
 * Re-seals with the vault's sealing key every row sealed with another,
 * all in ONE transaction, durable on disk when this returns: either every
 * row moves or none does.  *n gets how many moved.  -1 (nothing changed)
 * when a row does not open.
 */
int store_secret_reseal(struct store *s, int64_t *n);
/* Opens (and wipes) every row: how many opened and how many did not. */
int store_secret_check(struct store *s, int64_t *ok, int64_t *bad);

/*
 * Agent credentials: secret rows named by the agent id ("opencode",
 * "claude-code") whose owner is the scope: a tenant's name (its API
 * token's name), or "" for the instance-wide default that only an
 * operator sets.  A tenant's tasks use its own credential, else the
 * instance's (store_agent_source).  For the API, task and proxy code.
 */
/*
 * Connects the agent in owner's scope with a credential of this kind
 * (API key or OAuth login) and removes the scope's other kind, in one
 * transaction: the latest connection wins and a scope never holds both.
 * Other scopes are untouched.
 */
int store_agent_connect(struct store *s, const char *owner, const char *agent,
                        const char *kind, const void *value, size_t len);
/*
 * Whether owner's scope has a credential for the agent: 0 with method
 * "api_key" or "oauth", STORE_NOT_FOUND when not.  (Should a database
 * from before store_agent_connect hold both, "api_key" wins.)
 */
int store_agent_method(struct store *s, const char *owner, const char *agent,
                       char method[16]);
/*
 * Whose credential a tenant's tasks use for the agent: 0 with owner =
 * tenant when the tenant has one, else owner = "" when the instance has
 * one; STORE_NOT_FOUND (owner "") when neither does.
 */
int store_agent_source(struct store *s, const char *tenant, const char *agent,
                       char owner[STORE_SECRET_OWNER_MAX + 1]);
/* A scope's name, as store_agent_oauth_owners lists them. */
struct store_owner {
	char name[STORE_SECRET_OWNER_MAX + 1];
};
/* Every scope holding a subscription login for the agent (free *out). */
int store_agent_oauth_owners(struct store *s, const char *agent,
                             struct store_owner **out, size_t *n);
/*
 * owner's API key for the agent, opened into out; the caller releases
 * it with vault_secret_free() (which wipes it).  STORE_NOT_FOUND when
 * none.
 */
int store_agent_key(struct store *s, const char *owner, const char *agent,
                    struct vault_secret *out);
/*
 * The agent's default model in owner's scope ("" the instance's), no
 * fallback; STORE_NOT_FOUND when unset.
 */
int store_agent_default_model(struct store *s, const char *owner,
                              const char *agent, char *out, size_t len);
/*
 * The settings key of a scope's default model: "agents.default_models.
 * <agent>" for the instance, "tenant/<owner>/agents.default_models.
 * <agent>" for a tenant ('/' is in no token name).  -1: too long.
 */
#define STORE_SETTING_KEY_LEN 192
int store_agent_model_key(const char *owner, const char *agent, char *key,
                          size_t len);

/*
 * Settings (settings.c): non-secret key/value text, e.g.
 * "agents.default_models.opencode" (the instance's) or
 * "tenant/<name>/agents.default_models.opencode" (a tenant's).
 */
#define STORE_SETTING_MAX_BYTES 1024 /* a value, without the NUL */
/* 0, STORE_NOT_FOUND, -1. */
int store_setting_get(struct store *s, const char *key, char *val, size_t len);
/* Sets n settings in one transaction; a NULL or "" value removes one. */
int store_setting_set(struct store *s, const char *const *keys,
                      const char *const *vals, size_t n);

/*
 * App config (appconfig.c): per-app key/value pairs.  A sensitive value
 * is sealed in a secret row (kind app_config, owner the app id, name the
 * key) written in the same transaction; the app_config row then holds no
 * value.  Rows go with their app (store_app_delete).
 */
#define APP_CONFIG_KEY_MAX   128         /* [A-Za-z_][A-Za-z0-9_]* */
#define APP_CONFIG_VALUE_MAX (64u << 10) /* bytes of a value */
#define APP_CONFIG_MAX_KEYS  256         /* keys per app */

struct app_config {
	char app_id[ULID_LEN + 1];
	char key[APP_CONFIG_KEY_MAX + 1];
	bool sensitive;
	bool expose_env; /* given to the app's processes as an env var */
	bool value_set;  /* a non-empty value is stored */
	char *value;     /* malloc'd; NULL when sensitive */
	int64_t created_at;
	int64_t updated_at;
};

void store_app_config_release(struct app_config *c);
/*
 * Inserts or replaces the key's value and flags.  value is text without
 * NUL.  *created says whether the key is new.  STORE_TOO_MANY when the
 * app has APP_CONFIG_MAX_KEYS keys already; STORE_NOT_FOUND when the app
 * is gone.
 */
int store_app_config_put(struct store *s, const char *app_id, const char *key,
                         const char *value, bool sensitive, bool expose_env,
                         bool *created);
/* The row without a sensitive value; release with the function above. */
int store_app_config_get(struct store *s, const char *app_id, const char *key,
                         struct app_config *out);
/* Ordered by key; fn must not keep c's value; non-zero stops. */
int store_app_config_list(struct store *s, const char *app_id,
                          int (*fn)(const struct app_config *c, void *arg),
                          void *arg);
/* 0, or STORE_NOT_FOUND when the app has no such key. */
int store_app_config_delete(struct store *s, const char *app_id,
                            const char *key);
/*
 * The app's environment: fn(name, value, len, arg) for every key with
 * expose_env set, ordered by key, sensitive values opened.  value is
 * NUL-terminated and wiped as soon as fn returns: copy what you keep
 * into memory you wipe.  fn returns non-zero to stop (then 1).  -1 when
 * a sensitive value does not open: nothing is skipped silently.
 */
int store_app_config_env(struct store *s, const char *app_id,
                         int (*fn)(const char *name, const char *value,
                                   size_t len, void *arg),
                         void *arg);

/*
 * Git credentials (gitcreds.c): metadata here, the token in a secret row
 * (kind git_token, owner the tenant, name the credential id), written
 * and removed in the same transaction as the row.
 */
struct git_credential {
	char id[ULID_LEN + 1];
	char owner[64];
	char name[GIT_CRED_NAME_MAX + 1];
	char host[GIT_CRED_HOST_MAX + 1];
	char username[GIT_CRED_USER_MAX + 1]; /* "" when none */
	int64_t created_at;
};

/* STORE_CONFLICT when the owner has a credential of that name. */
int store_gitcred_insert(struct store *s, const struct git_credential *c,
                         const void *token, size_t len);
int store_gitcred_get(struct store *s, const char *owner, const char *id,
                      struct git_credential *out);
/* Ordered by name; fn returns non-zero to stop. */
int store_gitcred_list(struct store *s, const char *owner,
                       int (*fn)(const struct git_credential *, void *),
                       void *arg);
/* 0, or STORE_NOT_FOUND (also for another owner's credential). */
int store_gitcred_delete(struct store *s, const char *owner, const char *id);
/* The token, opened into out (release with vault_secret_free). */
int store_gitcred_token(struct store *s, const char *owner, const char *id,
                        struct vault_secret *out);

/*
 * Spend (spend.c): what the credential proxy counted, by scope ("task",
 * "app", "app_calls", "tenant") and id, and the budgets ("app",
 * "app_calls", "tenant", and
 * "instance" with id "app" or "tenant": the defaults).
 */
struct store_spend {
	int64_t input, output, cache_write, cache_read; /* tokens */
	int64_t cost_micro; /* millionths of a US dollar */
	int64_t requests;   /* answers counted */
	int64_t updated_at; /* ms; 0 when nothing was counted */
};

/* A limit of -1 is none. */
struct store_budget {
	int64_t max_tokens;
	int64_t max_micro;
};

/* Adds d to scope/id's row ("task" and its id, "app_calls" and the
 * app's; none when scope is ""), the app's and the tenant's rows, in one
 * transaction. */
int store_spend_add(struct store *s, const char *scope, const char *id,
                    const char *app_id, const char *tenant,
                    const struct store_spend *d);
/* Zeros (and 0) when nothing was counted. */
int store_spend_get(struct store *s, const char *scope, const char *id,
                    struct store_spend *out);
/* STORE_NOT_FOUND when none is set. */
int store_budget_get(struct store *s, const char *scope, const char *id,
                     struct store_budget *out);
/* b NULL (or both limits -1) removes it. */
int store_budget_set(struct store *s, const char *scope, const char *id,
                     const struct store_budget *b);

/*
 * The activity timeline's rows (events.c, migration 15; the module is
 * src/timeline/).  owner is copied from the app at insert.  Strings are
 * "" when absent; payload is a JSON object's text or "".
 */
#define STORE_EVENT_TYPE_MAX    40
#define STORE_EVENT_MESSAGE_MAX 255
#define STORE_EVENT_ACTOR_MAX   63
#define STORE_EVENT_PAYLOAD_MAX 1024
struct app_event {
	char id[ULID_LEN + 1];
	char app_id[ULID_LEN + 1];
	char owner[64];
	char type[STORE_EVENT_TYPE_MAX + 1];
	char severity[8];
	char message[STORE_EVENT_MESSAGE_MAX + 1];
	char sandbox_id[ULID_LEN + 1];
	char task_id[ULID_LEN + 1];
	char snapshot_id[ULID_LEN + 1];
	char actor[STORE_EVENT_ACTOR_MAX + 1];
	char payload[STORE_EVENT_PAYLOAD_MAX + 1];
	int64_t created_at; /* unix seconds */
};

/* Fills ev->owner from the app row; STORE_NOT_FOUND when the app is
 * gone (its events went with it). */
int store_event_insert(struct store *s, struct app_event *ev);
/*
 * The app's events, at most max: with before (an id, or NULL) newest
 * first below it; with after (an id, or NULL, and before NULL) oldest
 * first above it (a follower's replay).  type_prefix NULL or "" matches
 * every type.  fn returns non-zero to stop.
 */
int store_event_list(struct store *s, const char *app_id, const char *before,
                     const char *after, const char *type_prefix, int max,
                     int (*fn)(const struct app_event *, void *), void *arg);
/*
 * Deletes events created before older_than (unix seconds; 0: none by
 * age) and, of each app, all but its newest max_per_app (0: no cap);
 * *deleted counts them.
 */
int store_event_prune(struct store *s, int64_t older_than, int64_t max_per_app,
                      int64_t *deleted);

/*
 * Publishing (migration 17, publish/): an app's releases, its
 * publication (the active release and the host label) and its custom
 * domains.  No foreign key to app, as for snapshots: publish_app_gone
 * removes them.
 */
#define RELEASE_ERROR_MAX 512
struct release {
	char id[ULID_LEN + 1];
	char owner[64];
	char app_id[ULID_LEN + 1];
	int64_t number;      /* 1, 2, 3… per app */
	char status[12];     /* "building", "ready", "failed" */
	char kind[8];        /* "static", "server", "" (not known yet) */
	char source[12];     /* "files", "commit", "snapshot" */
	char source_ref[64]; /* the commit or snapshot asked for, or "" */
	char commit[48];     /* the repository's HEAD built, hex, or "" */
	char recipe[32];     /* the recipe or preset it was built as */
	char image[256];     /* the image it was built and runs with */
	char command[512];   /* server: how it runs; static: "" */
	int port;            /* server: its port */
	char health[128];    /* server: its health path */
	bool spa;            /* static: unknown paths get /index.html */
	int64_t size_bytes, files, build_ms;
	char error[RELEASE_ERROR_MAX]; /* failed: why, with the log's tail */
	char path[256]; /* its directory, under <data>/releases */
	char created_by[64];
	int64_t created_at, finished_at;
};
/* Inserts r ("building", its number the app's next): STORE_CONFLICT when
 * the app has one "building". */
int store_release_insert(struct store *s, struct release *r);
/* Writes status, kind, command, port, health, spa, figures, error,
 * finished_at. */
int store_release_finish(struct store *s, const struct release *r);
/* owner NULL: any tenant's. */
int store_release_get(struct store *s, const char *owner, const char *id,
                      struct release *out);
/* Newest first. */
int store_release_list(struct store *s, const char *app_id,
                       int (*fn)(const struct release *, void *), void *arg);
int store_release_delete(struct store *s, const char *id);
/* Every release left "building" (at start). */
int store_release_building(struct store *s,
                           int (*fn)(const struct release *, void *),
                           void *arg);

/* Releases by status, and the apps serving one (relstats.c: metrics). */
struct release_stats {
	int64_t building, ready, failed;
	int64_t published; /* publications with an active release */
};
int store_release_stats(struct store *s, struct release_stats *out);

struct publication {
	char app_id[ULID_LEN + 1];
	char owner[64];
	char label[64];                /* <label>.<PUBLISH_DOMAIN>, unique */
	char release_id[ULID_LEN + 1]; /* the active one; "" unpublished */
	char visibility[8];            /* "public" or "private" */
	int64_t published_at, updated_at;
};
int store_publication_get(struct store *s, const char *app_id,
                          struct publication *out);
/* Inserts or replaces; STORE_CONFLICT when the label is another app's. */
int store_publication_put(struct store *s, const struct publication *p);
int store_publication_delete(struct store *s, const char *app_id);
int store_publication_each(struct store *s,
                           int (*fn)(const struct publication *, void *),
                           void *arg);
/* The app whose publication has label, or STORE_NOT_FOUND. */
int store_publication_by_label(struct store *s, const char *label,
                               struct publication *out);

#define DOMAIN_HOST_MAX 253
struct domain {
	char host[DOMAIN_HOST_MAX + 1]; /* lower case, no trailing dot */
	char owner[64];
	char app_id[ULID_LEN + 1];
	char status[12];  /* "pending", "verified" */
	char method[8];   /* how it was verified: "dns", "http", "" */
	char reason[256]; /* pending: what is missing */
	char token[40];   /* the HTTP check's token */
	int64_t created_at, checked_at, verified_at;
};
/* STORE_CONFLICT when host is any app's already. */
int store_domain_insert(struct store *s, const struct domain *d);
/* Writes status, method, reason, checked_at, verified_at. */
int store_domain_update(struct store *s, const struct domain *d);
int store_domain_get(struct store *s, const char *host, struct domain *out);
int store_domain_delete(struct store *s, const char *host);
/* app_id NULL: every app's. */
int store_domain_list(struct store *s, const char *app_id,
                      int (*fn)(const struct domain *, void *), void *arg);

/*
 * nodes.c (migration 18): the cluster's nodes (swarm mode), the join
 * tokens (hashed, single use) and the journal of workspace moves.
 */
struct node_row {
	char name[64];      /* primary key; SANDBOXD_NODE_NAME of the agent */
	char swarm_id[64];  /* Swarm's node id, "" until it joined */
	char addr[128];     /* the agent's nodelink address host:port */
	char cert_fp[72];   /* hex SHA-256 of its certificate */
	char status[16];    /* joining ready draining drained down */
	char data_dir[256]; /* the agent's SANDBOXD_DATA_DIR */
	char engine_api[16];
	int64_t mem_bytes;     /* total memory */
	int64_t mem_available; /* last heartbeat's MemAvailable */
	int64_t disk_free;     /* last heartbeat's free bytes in data_dir */
	int64_t joined_at;
	int64_t last_seen; /* last answered heartbeat; 0 never */
};
int store_node_put(struct store *s, const struct node_row *n); /* upsert */
int store_node_get(struct store *s, const char *name, struct node_row *out);
int store_node_list(struct store *s,
                    void (*fn)(const struct node_row *, void *), void *arg);
int store_node_set_status(struct store *s, const char *name,
                          const char *status);
int store_node_seen(struct store *s, const char *name, int64_t at,
                    int64_t mem_available, int64_t disk_free);
int store_node_delete(struct store *s, const char *name);

/* A join token, by the hex SHA-256 of its secret. */
int store_join_token_add(struct store *s, const char *hash, int64_t expires_at);
/* Uses it once: 0, or STORE_NOT_FOUND when unknown, used or expired. */
int store_join_token_use(struct store *s, const char *hash, int64_t now);

/* The moves' journal (cluster/drain.c). */
struct move_row {
	int64_t id;
	char sandbox_id[ULID_LEN + 1];
	char src[64], dst[64];
	char state[16]; /* sleeping copying copied repinned done failed */
	int64_t bytes;
	char error[256];
	int64_t started_at, finished_at;
};
int store_move_add(struct store *s, struct move_row *m); /* sets m->id */
int store_move_set(struct store *s, int64_t id, const char *state,
                   int64_t bytes, const char *error);
/* Moves not done nor failed, oldest first (resumed at start). */
int store_move_open(struct store *s,
                    void (*fn)(const struct move_row *, void *), void *arg);

#endif
