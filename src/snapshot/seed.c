/*
 * A sandbox's workspace made again on this host from one of its app's
 * snapshots: the restore elsewhere of a sandbox whose node is gone
 * (cluster/nodedown.c).  The workspace is made fresh (a stale copy here
 * goes through the workspaces' trash first) and the snapshot's app
 * copied in as a fork's is, so what the snapshot holds is what the
 * sandbox gets: its app's files and repository, not its home's other
 * files nor its processes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snapshot/internal.h"
#include "snapshot/snapshot.h"
#include "ws/workspace.h"

struct newest {
	const char *app_id;
	struct snapshot sn;
	bool found;
};

static int
newest_one(const struct snapshot *sn, void *arg)
{
	struct newest *n = arg;

	if (n->found || strcmp(sn->status, "ready") != 0 || sn->step[0] ||
	    strcmp(sn->app_id, n->app_id) != 0)
		return 0;
	n->sn = *sn;
	n->found = true;
	return 1;
}

/* The snapshot asked for (of app_id, ready), or the app's newest. */
static int
pick(struct core *c, const char *app_id, const char *snap_id,
     struct snapshot *out, struct err *e)
{
	struct newest n = {.app_id = app_id};
	int rc;

	if (snap_id && snap_id[0]) {
		rc = store_snapshot_get(c->store, NULL, snap_id, out);
		if (rc == STORE_NOT_FOUND ||
		    (rc == 0 && strcmp(out->app_id, app_id) != 0))
			return ERR_NOTFOUND(e, "no such snapshot of this app");
		if (rc != 0)
			return ERR_INTERNAL(e, "database error");
		if (strcmp(out->status, "ready") != 0)
			return err_set(e, 409, "snapshot_busy",
			               "the snapshot is not ready");
		return 0;
	}
	if (store_snapshot_list(c->store, NULL, app_id, newest_one, &n) != 0)
		return ERR_INTERNAL(e, "database error");
	if (!n.found)
		return err_set(e, 409, "no_snapshot",
		               "the app has no snapshot to restore from: its "
		               "files were only on the node that is down");
	*out = n.sn;
	return 0;
}

int
snapshot_seed_workspace(struct core *c, const char *app_id, const char *snap_id,
                        const char *sandbox_id, struct snapshot *used,
                        struct err *e)
{
	char src[PATH_MAX + 8], dst[PATH_MAX];
	struct copytree_stats st;

	if (pick(c, app_id, snap_id, used, e) < 0)
		return -1;
	if (workspace_remove(c->cfg->data_dir, sandbox_id) < 0 ||
	    workspace_create(c->cfg->data_dir, sandbox_id) < 0)
		return ERR_INTERNAL(e, "cannot make the workspace (%s)",
		                    strerror(errno));
	snprintf(src, sizeof(src), "%s/app", used->path);
	snap_app_dir(c, sandbox_id, "app", dst, sizeof(dst));
	if (rmdir(dst) < 0 && errno != ENOENT)
		return ERR_INTERNAL(e, "cannot prepare the workspace");
	if (snap_copy(c, src, dst, &st) < 0)
		return snap_copy_err(errno, "the workspace was not made", e);
	return 0;
}
