/*
 * Restore of an app to one of its snapshots (snapshot.h).
 *
 *   1. refused while a task runs (its changes would be lost or mixed);
 *   2. a "before_restore" snapshot of the app now: the restore's undo
 *      is a restore to it;
 *   3. the sandbox stopped (its processes hold the old files open);
 *   4. under the sandbox's lock, journaled in the snapshot's row (step
 *      = the sandbox's id): the snapshot copied into workspace/app.new,
 *      synced, then exchanged with workspace/app in one rename
 *      (renameat2 RENAME_EXCHANGE), and the old files, now app.new,
 *      removed;
 *   5. the sandbox started again on the new files.
 * Before the exchange workspace/app is the old tree, after it the new
 * one; app.new is the other or half of a copy.  So a crash anywhere
 * leaves the app on old or new files, never a mix, and recovery only
 * removes app.new (snapshot_recover).  A full disk fails step 4's copy:
 * app.new is removed, the app untouched, the sandbox started again and
 * the undo snapshot deleted (it would only hold the disk).
 *
 * A sandbox on another node: step 4's copy, sync and exchange happen
 * there (wsnode_put_app: the snapshot's tree streamed to its agent into
 * workspace/app.new, then put in place once the whole tree is there),
 * journaled the same way here.  A crash leaves the app there whole and
 * maybe an app.new, which the node's next restore removes first
 * (recovery here only clears the step).  Its full disk answers 507 as
 * ours does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snapshot/internal.h"
#include "snapshot/snapshot.h"
#include "task/task.h"
#include "ws/usage.h"
#include "wsnode/wsnode.h"
#include "lib/fileio.h"
#include "lib/log.h"

static int
load(struct core *c, const struct app *app, const char *id, struct snapshot *sn,
     struct err *e)
{
	int rc = store_snapshot_get(c->store, app->owner, id, sn);

	if (rc == STORE_NOT_FOUND || (rc == 0 && strcmp(sn->app_id, app->id)))
		return ERR_NOTFOUND(e, "no such snapshot of this app");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (strcmp(sn->status, "ready") != 0 || sn->step[0])
		return err_set(e, 409, "snapshot_busy",
		               "the snapshot is being %s; try again",
		               sn->step[0] ? "restored" : "taken");
	return 0;
}

/* Step 4's exchange: app.new for app; ENOENT when app was missing. */
static int
exchange(const char *fresh, const char *cur)
{
	if (renameat2(AT_FDCWD, fresh, AT_FDCWD, cur, RENAME_EXCHANGE) == 0)
		return 0;
	if (errno == ENOENT && rename(fresh, cur) == 0)
		return 0;
	return -1;
}

/* Step 4's copy on the sandbox's node: the snapshot's tree, with room
 * for a tar header per entry as many as a copy takes. */
static int
swap_remote(struct core *c, const struct snapshot *sn, const struct sandbox *sb,
            struct err *e)
{
	char src[PATH_MAX + 8];
	int64_t max = sn->size_bytes + (int64_t)COPYTREE_MAX_FILES * 8192;

	snprintf(src, sizeof(src), "%s/app", sn->path);
	if (wsnode_put_app(c->wn, sb, src, max, e) == 0)
		return 0;
	if (e->status == 507)
		err_set(e, 507, "insufficient_storage",
		        "the data filesystem of node %.64s is full; the app is "
		        "untouched",
		        sb->node);
	return -1;
}

/* Step 4, under the sandbox's lock. */
static int
swap_locked(struct core *c, const struct snapshot *sn, const struct sandbox *sb,
            struct err *e)
{
	char src[PATH_MAX + 8], fresh[PATH_MAX], cur[PATH_MAX], dir[PATH_MAX];
	const char *sbid = sb->id;
	struct copytree_stats st;
	int rc = 0;

	snprintf(src, sizeof(src), "%s/app", sn->path);
	snap_app_dir(c, sbid, "app.new", fresh, sizeof(fresh));
	snap_app_dir(c, sbid, "app", cur, sizeof(cur));
	snap_app_dir(c, sbid, "", dir, sizeof(dir));
	if (store_snapshot_set_step(c->store, sn->id, sbid) != 0)
		return err_set(e, 507, "insufficient_storage",
		               "cannot write to the database (is the disk "
		               "full?); the app is untouched");
	if (wsnode_remote(sb)) {
		rc = swap_remote(c, sn, sb, e);
		store_snapshot_set_step(c->store, sn->id, "");
		return rc;
	}
	copytree_remove(fresh);
	if (snap_copy(c, src, fresh, &st) < 0 || snap_sync(dir) < 0) {
		rc = snap_copy_err(errno, "the app is untouched", e);
		copytree_remove(fresh);
	} else if (exchange(fresh, cur) < 0 || fileio_sync_dir(dir) < 0) {
		rc = ERR_INTERNAL(e, "cannot put the files in place (%s)",
		                  strerror(errno));
	}
	copytree_remove(fresh);
	store_snapshot_set_step(c->store, sn->id, "");
	ws_usage_forget(sbid);
	return rc;
}

int
snapshot_restore(struct core *c, const struct app *app, const char *snap_id,
                 const char *actor, struct sandbox *sb, struct snapshot *undo,
                 struct err *e)
{
	char name[SNAPSHOT_NAME_MAX + 1];
	struct snapshot sn;
	struct err start_err = {0};
	struct jv *pl;
	int rc;

	if (load(c, app, snap_id, &sn, e) < 0)
		return -1;
	rc = store_sandbox_by_app(c->store, app->id, sb);
	if (rc == STORE_NOT_FOUND)
		return ERR_CONFLICT(e, "the app has no sandbox; create one "
		                       "(POST /v1/sandboxes), then restore");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (task_running_on(c, sb->id))
		return err_set(e, 409, "task_in_progress",
		               "a task is running on the app; wait for it or "
		               "cancel it, then restore");
	snprintf(name, sizeof(name), "before restore to %.100s", sn.name);
	if (snapshot_take(c, app, name, "before_restore", actor, undo, e) < 0)
		return -1;
	if (sb->status == SANDBOX_RUNNING &&
	    core_sandbox_stop_why(c, sb->id, "restore", sb, e) < 0)
		return -1;
	core_sandbox_lock(c, sb->id);
	rc = swap_locked(c, &sn, sb, e);
	core_sandbox_unlock(c, sb->id);
	if (core_sandbox_start(c, sb->id, sb, &start_err) < 0) {
		log_warn("sandbox %s: not started after the restore: %s",
		         sb->id, start_err.msg);
		store_sandbox_get(c->store, sb->id, sb);
	}
	if (rc < 0) {
		/* Nothing changed: the undo would only hold the disk. */
		struct err ignored = {0};
		snapshot_delete(c, NULL, undo->id, &ignored);
		return -1;
	}
	pl = jv_obj();
	jv_set_str(pl, "name", sn.name);
	jv_set_str(pl, "undo_snapshot_id", undo->id);
	snap_note(c, app->id, "snapshot.restored", sn.id, sb->id, pl,
	          "The app was restored to snapshot \"%.80s\"; restoring to "
	          "the snapshot taken before undoes it.",
	          sn.name);
	log_info("app %s: restored to snapshot %s (undo: %s)", app->id, sn.id,
	         undo->id);
	return 0;
}
