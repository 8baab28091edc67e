/*
 * A snapshot of a sandbox on another node (swarm mode): its workspace
 * fetched to this host first (wsnode_copy from its node, the source
 * kept), the app's files copied from there into the snapshot as for a
 * local one, the fetched copy removed.  The container is paused for the
 * fetch alone, under the sandbox's lock, as a local snapshot's copy is.
 * So snapshots always live on the manager: they are what a sandbox
 * whose node went down is restored from (cluster/nodedown.c).
 *
 * The fetch moves the whole workspace, dependency trees included (the
 * node's agent sends it as a drain does), so a remote snapshot costs
 * the network and a local copy of its size for a moment.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "orch/orch.h"
#include "snapshot/internal.h"
#include "wsnode/wsnode.h"
#include "ws/workspace.h"

/* The fetch, paused and under the lock; the local copy is left. */
static int
fetch(struct core *c, struct snapshot *sn, const struct sandbox *sb,
      struct err *e)
{
	char name[128], msg[DOCKER_MSG_LEN];
	int64_t bytes = 0, t0;
	int paused, rc;

	core_sandbox_lock(c, sb->id);
	paused = snap_pause_for_copy(c, sb->id, e);
	if (paused < 0) {
		core_sandbox_unlock(c, sb->id);
		return -1;
	}
	t0 = clock_mono_ms();
	rc = wsnode_copy(c->wn, sb->id, sb->node, "", true, &bytes, e);
	if (paused) {
		core_container_name(c, sb->id, name, sizeof(name));
		if (orch_pause(c->orch, name, false, msg) != DOCKER_OK)
			log_error("sandbox %s: cannot resume it after a "
			          "snapshot: %s",
			          sb->id, msg);
		sn->pause_ms = clock_mono_ms() - t0;
	}
	core_sandbox_unlock(c, sb->id);
	return rc;
}

int
snap_copy_remote(struct core *c, struct snapshot *sn, const struct sandbox *sb,
                 struct err *e)
{
	char src[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX + 8];
	struct copytree_stats st;
	int rc, err;

	snap_path(c, sn->id, ".tmp", tmp, sizeof(tmp));
	snprintf(dst, sizeof(dst), "%s/app", tmp);
	if (mkdir(tmp, 0700) < 0)
		return snap_copy_err(errno, "no snapshot was taken", e);
	rc = fetch(c, sn, sb, e);
	if (rc == 0) {
		snap_app_dir(c, sb->id, "app", src, sizeof(src));
		rc = snap_copy(c, src, dst, &st);
		err = errno;
		if (rc < 0)
			snap_copy_err(err, "no snapshot was taken", e);
	}
	/* The fetched copy goes: the sandbox's files are on its node. */
	workspace_remove(c->cfg->data_dir, sb->id);
	if (rc < 0)
		return -1;
	sn->files = st.files;
	sn->size_bytes = st.size_bytes;
	sn->own_bytes = st.own_bytes;
	snprintf(sn->method, sizeof(sn->method), "fetch");
	return 0;
}
