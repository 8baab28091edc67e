/*
 * Restore elsewhere: a sandbox whose node is down (its heartbeats
 * unanswered, or Swarm says so) rebuilt on another node from its app's
 * snapshot, the newest unless one is named.  The snapshot lives on the
 * manager (snapshots are taken there, or pulled there for a remote
 * sandbox), so it outlives the node.
 *
 *   1. the sandbox is stopped with reason node_down and its node's row
 *      is "down"; the target is ready (default: the manager);
 *   2. under the sandbox's lock: a fresh workspace here from the
 *      snapshot (snapshot_seed_workspace), copied to the target when it
 *      is not the manager (wsnode_copy; the copy here then goes to the
 *      trash), the service scaled to 0 and re-pinned to the target
 *      (orch_move), the row moved (store_sandbox_set_node) with reason
 *      "restored";
 *   3. the sandbox stays stopped: a start or the next preview request
 *      wakes it there.
 *
 * What is lost is said in the answer and in docs/design.md: every change
 * to the app's files after the snapshot was taken, the commits made
 * after it (the task checkpoints among them: the repository is in the
 * files), whatever the sandbox kept outside its app directory, and its
 * processes.  What is kept: the app, its settings, secrets and budgets,
 * its tasks' events and logs (all on the control plane).  The stale copy
 * on the node that was down is not merged: when the node comes back, it
 * stays there until that node's workspaces are cleaned.
 */
#include <stdio.h>
#include <string.h>

#include "cluster/internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "orch/orch.h"
#include "snapshot/snapshot.h"
#include "wsnode/wsnode.h"

static const char *const lost_text[] = {
    "every change to the app's files made after the snapshot was taken",
    "the git commits made after the snapshot (task checkpoints included)",
    "files the sandbox kept outside its app directory",
    "its processes and their memory",
};
static const char *const kept_text[] = {
    "the app, its settings, secrets and budgets",
    "its tasks' events and logs",
    "its preview host",
};

static struct jv *
texts(const char *const *t, size_t n)
{
	struct jv *a = jv_arr();

	for (size_t i = 0; i < n; i++)
		jv_push(a, jv_new_str(t[i]));
	return a;
}

/* Step 1: the sandbox and its node, the target. */
static int
check(struct cluster *cl, const char *owner, const char *id, const char *to,
      struct sandbox *sb, struct err *e)
{
	struct node_row n;
	int rc = store_sandbox_get(cl->c->store, id, sb);

	if (rc == STORE_NOT_FOUND ||
	    (rc == 0 && owner && strcmp(sb->owner, owner) != 0))
		return ERR_NOTFOUND(e, "no such sandbox");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (sb->node[0] == '\0')
		return err_set(e, 409, "node_not_down",
		               "the sandbox is on the manager, which is up");
	if (store_node_get(cl->c->store, sb->node, &n) == 0 &&
	    strcmp(n.status, "down") != 0)
		return err_set(
		    e, 409, "node_not_down",
		    "the sandbox's node %s is %s, not down: drain it "
		    "to move its sandboxes",
		    sb->node, n.status);
	if (sb->status != SANDBOX_STOPPED)
		return ERR_CONFLICT(e, "the sandbox is %s",
		                    sandbox_state_name(sb->status));
	if (to == NULL || to[0] == '\0' || strcmp(to, cl->self) == 0)
		return 0;
	if (strcmp(to, sb->node) == 0)
		return ERR_BAD(e, "\"to\" is the node that is down");
	if (store_node_get(cl->c->store, to, &n) != 0)
		return err_set(e, 404, "node_not_found", "no node \"%s\"", to);
	if (strcmp(n.status, "ready") != 0)
		return err_set(e, 409, "node_busy", "node %s is %s, not ready",
		               to, n.status);
	return 0;
}

/* Step 2, under the lock: files, service, row. */
static int
rebuild(struct cluster *cl, struct sandbox *sb, const char *dst,
        const char *snap, struct snapshot *used, struct err *e)
{
	struct core *c = cl->c;
	char name[128], msg[DOCKER_MSG_LEN];
	int64_t bytes = 0;

	if (snapshot_seed_workspace(c, sb->app_id, snap, sb->id, used, e) < 0)
		return -1;
	if (dst[0] && wsnode_copy(c->wn, sb->id, "", dst, false, &bytes, e) < 0)
		return -1;
	core_container_name(c, sb->id, name, sizeof(name));
	/* 0 replicas first: a re-pinned service at 1 would start there. */
	if (orch_stop(c->orch, name, 0, msg) != DOCKER_OK)
		log_warn("sandbox %s: scale to 0: %s", sb->id, msg);
	if (cluster_repin(cl, sb->id, dst, msg) != DOCKER_OK)
		return err_set(e, 502, "docker_error", "re-pin: %s", msg);
	if (store_sandbox_set_node(c->store, sb->id, dst) != 0 ||
	    store_sandbox_get(c->store, sb->id, sb) != 0)
		return ERR_INTERNAL(e, "database error");
	snprintf(sb->status_reason, sizeof(sb->status_reason), "restored");
	if (store_sandbox_update(c->store, sb) != 0)
		return ERR_INTERNAL(e, "database error");
	core_route_refresh(c, sb->id);
	return 0;
}

int
cluster_restore_elsewhere(struct cluster *cl, const char *owner,
                          const char *sandbox_id, const char *to,
                          const char *snap, struct jv **out, struct err *e)
{
	struct core *c = cl->c;
	char from[64], dst[64], at[CLOCK_RFC3339_LEN];
	struct snapshot used;
	struct sandbox sb;
	struct jv *s;
	int rc;

	if (check(cl, owner, sandbox_id, to, &sb, e) < 0)
		return -1;
	snprintf(from, sizeof(from), "%s", sb.node);
	snprintf(dst, sizeof(dst), "%s",
	         to && strcmp(to, cl->self) != 0 ? to : "");
	core_sandbox_lock(c, sandbox_id);
	/* Checked again under the lock: a second restore may have won. */
	rc = store_sandbox_get(c->store, sandbox_id, &sb) != 0 ||
	             strcmp(sb.node, from) != 0
	         ? err_set(e, 409, "node_busy",
	                   "the sandbox was moved meanwhile")
	         : rebuild(cl, &sb, dst, snap, &used, e);
	core_sandbox_unlock(c, sandbox_id);
	if (rc < 0)
		return -1;
	log_info(
	    "sandbox %s: restored on %s from snapshot %s (node %s is down)",
	    sandbox_id, dst[0] ? dst : cl->self, used.id, from);
	*out = jv_obj();
	jv_set_str(*out, "sandbox_id", sandbox_id);
	jv_set_str(*out, "from_node", from);
	jv_set_str(*out, "node", dst[0] ? dst : cl->self);
	jv_set_str(*out, "status", "stopped");
	s = jv_obj();
	jv_set_str(s, "id", used.id);
	jv_set_str(s, "name", used.name);
	clock_rfc3339(used.created_at, at);
	jv_set_str(s, "created_at", at);
	jv_set(*out, "snapshot", s);
	jv_set(*out, "lost",
	       texts(lost_text, sizeof(lost_text) / sizeof(lost_text[0])));
	jv_set(*out, "kept",
	       texts(kept_text, sizeof(kept_text) / sizeof(kept_text[0])));
	return 0;
}
