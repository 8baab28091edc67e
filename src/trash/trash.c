/*
 * The trash of deleted apps (see trash.h for what it keeps).
 *
 * Every move is journaled in the entry's state, so a kill at any point
 * leaves either the app or the trash entry whole, and trash_recover()
 * finishes or undoes the move at the next start:
 *
 *   delete   1. entry "deleting" + app marked trashed (one transaction):
 *               the app is out of the list from here on;
 *            2. container removed, route and proxy token dropped, tasks
 *               stopped being followed (a running one ends cancelled);
 *            3. workspace renamed into <data>/trash/kept/<entry id>;
 *            4. sandbox row dropped + entry "trashed" (one transaction).
 *            Recovery runs 2-4 again (each is idempotent).  A failure of
 *            2 or 3 at run time (engine down, rename refused) rolls 1
 *            back: the sandbox row is still there, its container made
 *            again by the next start.
 *   restore  1. entry "trashed" -> "restoring" (conditional: one mover);
 *            2. workspace renamed back to <data>/workspaces/<sandbox id>;
 *            3. sandbox row again (same id: workspace path, tasks and
 *               event logs are keyed by it) + app live + entry gone (one
 *               transaction).  When 3 fails (a full disk), 2 is undone
 *               and the entry is "trashed" again: nothing was copied, so
 *               nothing needed room.  Recovery undoes 2 and resets 1.
 *            4. the container is made and started (core_sandbox_start).
 *   purge    1. "trashed" -> "purging"; 2. task rows and logs; 3. the
 *            workspace (renamed out of kept/, then removed); 4. config,
 *            secrets, app row and entry (one transaction).  Recovery
 *            runs 2-4 again.
 *
 * The dependency store's files hard-linked from a kept workspace keep a
 * link count above 1, so `sandboxd gc` leaves them alone until the purge.
 * A published app's releases stay in <data>/releases/<app id> and its
 * publication's rows stay: the delete stops serving it
 * (publish_app_trashed), the restore serves it again
 * (publish_app_restored), the purge removes them (publish_app_gone).
 * Rejected: copying the workspace (needs as much room again, and is not
 * atomic), keeping the sandbox row with a new state (every reader of
 * sandbox rows, reapers and reconcile first, would have to skip it).
 */
#include "trash/trash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cred/credentials.h"
#include "orch/orch.h"
#include "preview/pvauth.h"
#include "publish/publish.h"
#include "sandbox/routes.h"
#include "snapshot/snapshot.h"
#include "task/task.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "lib/log.h"
#include "timeline/timeline.h"

/* A move of the trash on the app's timeline, naming the entry. */
static void
trash_note(struct core *c, const struct trash_entry *t, const char *type,
           const char *msg)
{
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];
	struct jv *o = jv_obj();

	jv_set_str(o, "trash_id", t->id);
	timeline_note(c->tl,
	              &(struct tl_event){
	                  .app_id = t->app_id,
	                  .type = type,
	                  .sandbox_id = t->sandbox_id[0] ? t->sandbox_id : NULL,
	                  .payload_json = tl_payload(o, pl, sizeof(pl))},
	              "%s", msg);
}

/* Steps 2 and 3 of a delete; 0, or -1 with e set (nothing undone). */
static int
take_sandbox(struct core *c, const char *trash_id, const char *sbid,
             bool recovering, struct err *e)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct sandbox sb;
	int rc;

	core_container_name(c, sbid, name, sizeof(name));
	if (store_sandbox_get(c->store, sbid, &sb) == 0 && sb.frozen)
		orch_pause(c->orch, name, false, msg);
	rc = orch_remove(c->orch, name, msg);
	if (rc != DOCKER_OK && rc != DOCKER_NOT_FOUND && !recovering) {
		if (rc == DOCKER_DOWN)
			return ERR_DOCKER(e, "%s", msg);
		return err_set(e, 502, "docker_error", "%s", msg);
	}
	/* Recovering with the engine down: reconcile removes the container
	 * (no row names it) once the engine is back. */
	routes_drop(c->routes, sbid);
	cred_drop_proxy_token(c->store, sbid);
	task_trash_sandbox(c, sbid);
	if (workspace_keep(c->cfg->data_dir, sbid, trash_id) < 0) {
		/* The row stays: its route again (the next start makes the
		 * container again). */
		core_route_refresh(c, sbid);
		return ERR_INTERNAL(e, "cannot move the workspace to the "
		                       "trash");
	}
	return 0;
}

static int
finish_delete(struct core *c, const struct trash_entry *t, bool recovering,
              struct err *e)
{
	int rc = 0;

	if (t->sandbox_id[0]) {
		core_sandbox_lock(c, t->sandbox_id);
		rc = take_sandbox(c, t->id, t->sandbox_id, recovering, e);
	}
	if (rc == 0 && store_trash_deleted(c->store, t->id, t->sandbox_id) != 0)
		rc = ERR_INTERNAL(e, "database error");
	if (t->sandbox_id[0])
		core_sandbox_unlock(c, t->sandbox_id);
	return rc;
}

static int finish_purge(struct core *c, const struct trash_entry *t,
                        struct err *e);
static void purge_sandboxes_of(struct core *c, const char *app_id);

struct of_app {
	struct core *c;
	const char *app_id;
};

static int
purge_one_of(const struct trash_entry *t, void *arg)
{
	struct of_app *o = arg;
	struct err e = {0};

	if (!t->sandbox_only || strcmp(t->app_id, o->app_id) != 0 ||
	    store_trash_claim(o->c->store, t->id, TRASH_PURGING, "") != 0)
		return 0;
	if (finish_purge(o->c, t, &e) < 0)
		log_warn("trash %s: %s", t->id, e.msg);
	return 0;
}

/* The kept sandboxes of an app that goes for good go with it. */
static void
purge_sandboxes_of(struct core *c, const char *app_id)
{
	struct of_app o = {c, app_id};

	store_trash_list(c->store, NULL, purge_one_of, &o);
}

int
trash_sandbox(struct core *c, const char *sandbox_id,
              char trash_id[ULID_LEN + 1], struct err *e)
{
	struct trash_entry t;
	int64_t now = clock_now();
	int rc;

	trash_id[0] = '\0';
	if (c->cfg->trash_retention_s == 0)
		return core_sandbox_delete(c, sandbox_id, e);
	ulid_new(trash_id);
	rc = store_trash_begin_sandbox(c->store, trash_id, sandbox_id, now,
	                               now + c->cfg->trash_retention_s);
	if (rc == STORE_NOT_FOUND || rc == STORE_CONFLICT)
		return ERR_NOTFOUND(e, "no such sandbox");
	if (rc != 0 || store_trash_get(c->store, NULL, trash_id, &t) != 0)
		return ERR_INTERNAL(e, "database error");
	if (finish_delete(c, &t, false, e) < 0) {
		if (store_trash_undo_begin(c->store, t.id, t.app_id) != 0)
			log_error("trash %s: cannot undo the delete of sandbox "
			          "%s; the next start finishes it",
			          t.id, sandbox_id);
		trash_id[0] = '\0';
		return -1;
	}
	log_info("sandbox %s: moved to the trash as %s", sandbox_id, t.id);
	trash_note(c, &t, "sandbox.deleted",
	           "The sandbox was deleted (kept in the trash).");
	return 0;
}

int
trash_app(struct core *c, const struct app *app, char trash_id[ULID_LEN + 1],
          struct err *e)
{
	struct trash_entry t;
	int64_t now = clock_now();
	int rc;

	trash_id[0] = '\0';
	if (c->cfg->trash_retention_s == 0) {
		purge_sandboxes_of(c, app->id);
		return core_app_delete(c, app, e);
	}
	ulid_new(trash_id);
	rc = store_trash_begin(c->store, trash_id, app->id, now,
	                       now + c->cfg->trash_retention_s);
	if (rc == STORE_NOT_FOUND || rc == STORE_CONFLICT)
		return ERR_NOTFOUND(e, "no such app");
	if (rc != 0 || store_trash_get(c->store, NULL, trash_id, &t) != 0)
		return ERR_INTERNAL(e, "database error");
	if (finish_delete(c, &t, false, e) < 0) {
		/* The sandbox row is still there: the app is whole again. */
		if (store_trash_undo_begin(c->store, t.id, app->id) != 0)
			log_error("trash %s: cannot undo the delete of app %s; "
			          "the next start finishes it",
			          t.id, app->id);
		trash_id[0] = '\0';
		return -1;
	}
	publish_app_trashed(c, app->id); /* its host names stop serving */
	log_info("app %s: moved to the trash as %s (purged after %llds)",
	         app->id, t.id, (long long)c->cfg->trash_retention_s);
	trash_note(c, &t, "app.trashed", "The app was moved to the trash.");
	return 0;
}

/* Undoes restore step 2 and resets step 1. */
static void
restore_undo(struct core *c, const struct trash_entry *t)
{
	if (t->sandbox_id[0] &&
	    workspace_keep(c->cfg->data_dir, t->sandbox_id, t->id) < 0)
		log_error("trash %s: the workspace is back in workspaces/%s, "
		          "not in the trash",
		          t->id, t->sandbox_id);
	if (store_trash_set_state(c->store, t->id, TRASH_TRASHED, "") != 0)
		log_error("trash %s: cannot mark it trashed again; the next "
		          "start does",
		          t->id);
}

static int
claim(struct core *c, const char *owner, const char *id, enum trash_state to,
      const char *name, struct trash_entry *t, struct err *e)
{
	int rc = store_trash_get(c->store, owner, id, t);

	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such trash entry");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (t->state != TRASH_TRASHED)
		return err_set(e, 409, "trash_busy",
		               "the entry is being %s; try again",
		               t->state == TRASH_DELETING    ? "deleted"
		               : t->state == TRASH_RESTORING ? "restored"
		                                             : "purged");
	rc = store_trash_claim(c->store, id, to, name ? name : "");
	if (rc == STORE_NOT_FOUND)
		return err_set(e, 409, "trash_busy",
		               "another call is moving the entry; try again");
	if (rc != 0)
		return err_set(e, 507, "insufficient_storage",
		               "cannot write to the database (is the disk "
		               "full?); the app stays in the trash");
	t->state = to;
	snprintf(t->restore_name, sizeof(t->restore_name), "%s",
	         name ? name : "");
	return 0;
}

static int
check_name(struct core *c, const struct trash_entry *t, const char *name,
           struct err *e)
{
	int rc = store_app_name_taken(c->store, t->owner, name ? name : t->name,
	                              t->app_id);

	if (rc < 0)
		return ERR_INTERNAL(e, "database error");
	if (rc == 0)
		return 0;
	if (name)
		return err_set(e, 409, "trash_name_taken",
		               "an app named \"%s\" exists; restore with "
		               "another name",
		               name);
	return err_set(e, 409, "trash_name_taken",
	               "an app named \"%s\" was made after this one was "
	               "deleted; restore it under another name (POST "
	               "/v1/trash/%s/restore {\"name\":\"...\"}), or rename "
	               "or delete the other app first",
	               t->name, t->id);
}

/* What a restore checks before it claims the entry. */
static int
restore_check(struct core *c, const char *owner, const char *id,
              const char *name, struct app *app, struct err *e)
{
	struct trash_entry t;

	/* No such entry: claim() says so. */
	if (store_trash_get(c->store, owner, id, &t) != 0)
		return 0;
	if (t.sandbox_only && store_app_get(c->store, NULL, t.app_id, app) != 0)
		return ERR_CONFLICT(e,
		                    "the sandbox's app is in the trash itself; "
		                    "restore the app first");
	if (t.sandbox_only && name)
		return ERR_BAD(e,
		               "name is for an app; this entry is a sandbox");
	if (!t.sandbox_only && check_name(c, &t, name, e) < 0)
		return -1;
	return 0;
}

/*
 * Restore steps 2 and 3, under the sandbox's lock when the entry has a
 * sandbox; a failure undoes step 2 and resets step 1.  app gets the
 * live app.
 */
static int
restore_locked(struct core *c, const struct trash_entry *t, struct app *app,
               struct err *e)
{
	bool has_sb = t->sandbox_id[0] != '\0';
	int rc = 0;

	if (has_sb) {
		core_sandbox_lock(c, t->sandbox_id);
		rc = workspace_unkeep(c->cfg->data_dir, t->id, t->sandbox_id);
		if (rc < 0) {
			restore_undo(c, t);
			rc = ERR_INTERNAL(e, "cannot move the workspace back");
			goto out;
		}
		if (rc == 1) /* it had none (a create that failed early) */
			workspace_create(c->cfg->data_dir, t->sandbox_id);
	}
	rc = store_trash_restored(c->store, t->id, clock_now());
	if (rc != 0)
		restore_undo(c, t);
	if (rc == STORE_CONFLICT) {
		rc = ERR_CONFLICT(e, "the app has a sandbox now; delete "
		                     "it (DELETE /v1/sandboxes/{id}), "
		                     "then restore this one");
		goto out;
	}
	if (rc != 0) {
		rc = err_set(e, 507, "insufficient_storage",
		             "cannot write to the database (is the disk "
		             "full?); the app stays in the trash, whole");
		goto out;
	}
	/*
	 * The edge's view of the app before its route: a private app must
	 * not be seen public for a moment (a trashed app is not among those
	 * the view loads at start).
	 */
	rc = store_app_get(c->store, NULL, t->app_id, app);
	if (rc == 0)
		pvauth_put(c, app->id, app->preview_visibility,
		           app->preview_epoch);
	else
		rc = ERR_INTERNAL(e, "database error");
	if (has_sb)
		core_route_refresh(c, t->sandbox_id);
	log_info("app %s: restored from the trash (%s)", t->app_id, t->id);
	if (t->sandbox_only)
		trash_note(c, t, "sandbox.created",
		           "The sandbox was restored from the trash.");
	else
		trash_note(c, t, "app.untrashed",
		           "The app was restored from the trash.");
out:
	if (has_sb)
		core_sandbox_unlock(c, t->sandbox_id);
	return rc;
}

int
trash_restore(struct core *c, const char *owner, const char *id,
              const char *name, struct app *app, struct sandbox *sb,
              bool *has_sb, struct err *start_err, struct err *e)
{
	struct trash_entry t;

	*has_sb = false;
	if (restore_check(c, owner, id, name, app, e) < 0 ||
	    claim(c, owner, id, TRASH_RESTORING, name, &t, e) < 0 ||
	    restore_locked(c, &t, app, e) < 0)
		return -1;
	if (t.sandbox_id[0]) {
		*has_sb = true;
		if (core_sandbox_start(c, t.sandbox_id, sb, start_err) < 0)
			store_sandbox_get(c->store, t.sandbox_id, sb);
	}
	/* Served again, outside the sandbox's lock: a server release's
	 * container may take its health timeout to answer. */
	if (!t.sandbox_only)
		publish_app_restored(c, t.app_id);
	return 0;
}

static int
finish_purge(struct core *c, const struct trash_entry *t, struct err *e)
{
	if (!t->sandbox_only)
		purge_sandboxes_of(c, t->app_id);
	/* The rows again: before task_init (recovery) the hook does not. */
	if (t->sandbox_id[0]) {
		task_forget_sandbox(c, t->sandbox_id);
		store_task_delete_sandbox(c->store, t->sandbox_id);
	}
	if (workspace_kept_remove(c->cfg->data_dir, t->id) < 0)
		return ERR_INTERNAL(e, "cannot remove the workspace");
	if (store_trash_purged(c->store, t->id, t->app_id, t->sandbox_only) !=
	    0)
		return ERR_INTERNAL(e, "database error");
	if (!t->sandbox_only) {
		pvauth_drop(c, t->app_id); /* its preview links end with it */
		snapshot_app_gone(c, t->app_id); /* and its snapshots */
		publish_app_gone(c, t->app_id);  /* and its releases */
	}
	log_info("%s of app %s: purged from the trash (%s)",
	         t->sandbox_only ? "a sandbox" : "the app", t->app_id, t->id);
	return 0;
}

int
trash_purge(struct core *c, const char *owner, const char *id, struct err *e)
{
	struct trash_entry t;

	if (claim(c, owner, id, TRASH_PURGING, NULL, &t, e) < 0)
		return -1;
	return finish_purge(c, &t, e);
}

static int
recover_one(const struct trash_entry *t, void *arg)
{
	struct core *c = arg;
	struct err e = {0};

	switch (t->state) {
	case TRASH_DELETING:
		log_warn("trash %s: a delete of app %s was interrupted; "
		         "finishing it",
		         t->id, t->app_id);
		if (finish_delete(c, t, true, &e) < 0)
			log_error("trash %s: %s", t->id, e.msg);
		break;
	case TRASH_RESTORING:
		log_warn("trash %s: a restore of app %s was interrupted; the "
		         "app stays in the trash",
		         t->id, t->app_id);
		restore_undo(c, t);
		break;
	case TRASH_PURGING:
		log_warn("trash %s: a purge was interrupted; finishing it",
		         t->id);
		if (finish_purge(c, t, &e) < 0)
			log_error("trash %s: %s", t->id, e.msg);
		break;
	case TRASH_TRASHED:
		break;
	}
	return 0;
}

void
trash_recover(struct core *c)
{
	if (store_trash_list(c->store, NULL, recover_one, c) < 0)
		log_error("trash: cannot read the trash");
}

static int
pass_one(const struct trash_entry *t, void *arg)
{
	struct core *c = arg;
	char path[WORKSPACE_PATH_MAX + 100];
	struct err e = {0};
	int64_t b, rb = 0;

	if (c->stopping)
		return 1;
	if (t->purge_at <= clock_now()) {
		log_info("trash %s: kept %llds; purging app %s", t->id,
		         (long long)(t->purge_at - t->deleted_at), t->app_id);
		if (trash_purge(c, NULL, t->id, &e) < 0 && e.status != 409)
			log_warn("trash %s: %s", t->id, e.msg);
		return 0;
	}
	workspace_kept_path(c->cfg->data_dir, t->id, path, sizeof(path));
	b = access(path, F_OK) == 0 ? ws_usage_walk(path, NULL) : 0;
	b = b > 0 ? b : 0;
	/* A published app's releases stay where they are: counted here. */
	snprintf(path, sizeof(path), "%s/" PUBLISH_DIR "/%s", c->cfg->data_dir,
	         t->app_id);
	if (!t->sandbox_only && access(path, F_OK) == 0)
		rb = ws_usage_walk(path, NULL);
	store_trash_set_bytes(c->store, t->id, b + (rb > 0 ? rb : 0));
	return 0;
}

void
trash_pass(struct core *c)
{
	store_trash_due(c->store, clock_now(), pass_one, c);
}
