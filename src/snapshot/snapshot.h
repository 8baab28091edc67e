/*
 * snapshot: named copies of an app's files (its workspace/app, the git
 * repository included), restore of an app to one, and fork of an app
 * into a new one.  A snapshot lives in <data>/snapshots/<id>/app, root's
 * (the directory 0700, mounted in no container), each file its own
 * inode or a hard link of a dependency-store entry (root's, read-only),
 * so nothing the sandbox writes later changes it.  The processes and
 * their memory are not in it.
 *
 * Callers: the API's request threads (take, delete, restore, fork) and
 * serve() at start (snapshot_recover, before core_reconcile).  Every
 * function takes the sandbox's lock for the steps on its files.  Errors
 * are for the API's envelope: 404 not_found, 409 conflict (no sandbox),
 * 409 snapshot_limit, 409 task_in_progress, 507 insufficient_storage.
 */
#ifndef SNAPSHOT_SNAPSHOT_H
#define SNAPSHOT_SNAPSHOT_H

#include <stdbool.h>

#include "sandbox/core.h"

#define SNAPSHOT_DIR "snapshots" /* under the data directory */

/*
 * Snapshots app's files now: a running sandbox is paused (the cgroup
 * freezer) for the copy alone, a frozen or stopped one is not touched.
 * reason: "manual", "before_restore" or "fork"; name NULL or "" names it
 * after the time; actor is who asked (a token's name).  out: the row,
 * "ready".  A failure leaves no row and no file behind.
 */
int snapshot_take(struct core *c, const struct app *app, const char *name,
                  const char *reason, const char *actor, struct snapshot *out,
                  struct err *e);
/* Deletes the snapshot (owner's; NULL any): its files, then its row. */
int snapshot_delete(struct core *c, const char *owner, const char *id,
                    struct err *e);

/*
 * Restores app to snapshot snap_id (of app, owner's): refused while a task
 * runs (409 task_in_progress); takes a "before_restore" snapshot first
 * (*undo), stops the sandbox, puts the snapshot's files in place in one
 * rename (RENAME_EXCHANGE) and starts the sandbox again (*sb).
 */
int snapshot_restore(struct core *c, const struct app *app, const char *snap_id,
                     const char *actor, struct sandbox *sb,
                     struct snapshot *undo, struct err *e);

struct snapshot_fork {
	const char *snapshot_id; /* NULL: a "fork" snapshot of now */
	const char *name;        /* NULL: "<source name>-fork" */
	bool copy_config;        /* the app's config, secrets included */
	bool copy_budget;        /* the app's spend budgets */
	const char *actor;
};
/*
 * A new app of app's tenant from a snapshot of app: the same preset,
 * description, tags, git settings and preview visibility, a sandbox of
 * its own made from the snapshot's files.  app's sandbox keeps running.
 * out_app, out_sb and snapshot_id get what was made.
 */
int snapshot_fork(struct core *c, const struct app *app,
                  const struct snapshot_fork *f, struct app *out_app,
                  struct sandbox *out_sb, char snapshot_id[ULID_LEN + 1],
                  struct err *e);

/*
 * Makes sandbox_id's workspace on this host afresh (a copy there goes
 * first) from snapshot snap_id of app_id (NULL: the app's newest ready
 * one; 409 no_snapshot when it has none): its app's files and
 * repository.  *used gets the snapshot.  The caller holds the sandbox's
 * lock and its sandbox is stopped (seed.c).
 */
int snapshot_seed_workspace(struct core *c, const char *app_id,
                            const char *snap_id, const char *sandbox_id,
                            struct snapshot *used, struct err *e);

/*
 * At start: removes the .tmp directories of <data>/snapshots and the rows
 * left "taking",
 * and the half-made copies of restores a crash interrupted (the app is
 * then on its old files or on the snapshot's, whole).
 */
void snapshot_recover(struct core *c);
/* The app is gone for good: its snapshots go too (a CORE_APP_DELETED
 * hook, and the trash's purge). */
void snapshot_app_gone(struct core *c, const char *app_id);

#endif
