/*
 * The drain of a node: every sandbox on it moved to another node, one at
 * a time, each move journaled (moves.c), then the node set to Swarm's
 * availability "drain" and the status "drained".
 *
 *   1. the node "draining", labelled sandboxd.drain=1 (the services'
 *      constraints exclude it) and Swarm's availability "pause" (no new
 *      task there; the running ones untouched: "drain" would kill them
 *      all at once, with no move);
 *   2. per sandbox, stopped if it ran (reason "moving"), then under its
 *      lock: the workspace copied to the target (wsnode_copy, the source
 *      kept until the re-pin), the service re-pinned (orch_move) and the
 *      row moved (store_sandbox_set_node), the source's copy to its
 *      node's trash; started again if it ran.  The preview host names
 *      the sandbox, not its node, so it does not change.
 *   3. when every move is done: availability "drain", status "drained".
 *
 * The target is the one asked for, else the ready node (the manager
 * included) with the most memory available at its last heartbeat.  The
 * lock held through the copy makes a wake of that sandbox wait for the
 * move (the edge's warming page covers it) and keeps every API writer
 * out; its stripe is shared with a few other sandboxes, which wait too.
 *
 * Rejected: Swarm's placement for the target (there is no dry run, and a
 * probe service per move costs a task start); moves two at a time (the
 * copies share the CP's relay and one disk; one at a time is simpler to
 * reason about and the bench measures it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/meminfo.h"
#include "nodelink/nodelink.h"
#include "orch/orch.h"
#include "wsnode/wsnode.h"
#include "ws/workspace.h"

#define DRAIN_STOP_TRIES 3 /* a sandbox woken while it was being stopped */

/* The re-pin: the service, then the row, then the edge's route; the
 * sandbox's lock held by the caller. */
static int
repin_locked(struct cluster *cl, const struct move_row *m, struct err *e)
{
	struct core *c = cl->c;
	char msg[DOCKER_MSG_LEN];

	if (cluster_repin(cl, m->sandbox_id, m->dst, msg) != DOCKER_OK)
		return err_set(e, 502, "docker_error", "re-pin: %s", msg);
	if (store_sandbox_set_node(c->store, m->sandbox_id, m->dst) != 0)
		return ERR_INTERNAL(e, "database error");
	core_route_refresh(c, m->sandbox_id);
	return 0;
}

/* The journal's re-pin ("copied" -> "repinned"), at start. */
static int
step_repin(void *arg, const struct move_row *m, struct err *e)
{
	struct cluster *cl = arg;
	int rc;

	core_sandbox_lock(cl->c, m->sandbox_id);
	rc = repin_locked(cl, m, e);
	core_sandbox_unlock(cl->c, m->sandbox_id);
	return rc;
}

/* The source's copy: local, through the workspaces' trash; remote, the
 * agent's ws_trash. */
static int
step_trash(void *arg, const struct move_row *m, struct err *e)
{
	struct cluster *cl = arg;
	struct core *c = cl->c;
	struct jv *req, *ans = NULL;
	char addr[128];
	int rc;

	if (m->src[0] == '\0') {
		if (workspace_remove(c->cfg->data_dir, m->sandbox_id) < 0)
			return ERR_INTERNAL(e, "cannot remove the old copy");
		return 0;
	}
	if (wsnode_addr(c->wn, m->src, addr, e) < 0)
		return -1;
	req = jv_obj();
	jv_set_str(req, "op", "ws_trash");
	jv_set_str(req, "sandbox", m->sandbox_id);
	rc = nl_call(cl->nl, addr, NL_ROLE_NODE, req, &ans, NL_CALL_MS, e);
	jv_free(req);
	jv_free(ans);
	return rc;
}

const struct cluster_move_ops cluster_move_steps = {
    .repin = step_repin,
    .trash_source = step_trash,
};

/* The target with the most memory available, not src; "" the manager. */
struct pick {
	const char *src;
	char best[64];
	int64_t best_avail;
};

static void
pick_one(const struct node_row *n, void *arg)
{
	struct pick *p = arg;

	if (strcmp(n->status, "ready") != 0 || strcmp(n->name, p->src) == 0)
		return;
	if (n->mem_available > p->best_avail) {
		p->best_avail = n->mem_available;
		snprintf(p->best, sizeof(p->best), "%s", n->name);
	}
}

static int
pick_target(struct cluster *cl, const char *src, char out[64], struct err *e)
{
	struct pick p = {.src = src, .best_avail = -1};
	long long total_kb, avail_kb;

	if (src[0] != '\0' && meminfo_host_kb(&total_kb, &avail_kb) == 0) {
		p.best_avail = avail_kb * 1024;
		p.best[0] = '\0';
	}
	if (store_node_list(cl->c->store, pick_one, &p) != 0)
		return ERR_INTERNAL(e, "database error");
	if (p.best_avail < 0)
		return err_set(e, 409, "node_busy",
		               "no other node is ready to take the sandboxes");
	snprintf(out, 64, "%s", p.best);
	return 0;
}

/* Stopped, and still stopped once its lock is held (a wake may race). */
static int
stop_and_lock(struct core *c, const char *id, bool *was_running, struct err *e)
{
	struct sandbox sb;

	*was_running = false;
	for (int i = 0; i < DRAIN_STOP_TRIES; i++) {
		if (store_sandbox_get(c->store, id, &sb) != 0)
			return ERR_NOTFOUND(e, "the sandbox is gone");
		if (sb.status == SANDBOX_CREATING)
			return ERR_CONFLICT(e, "the sandbox is being created");
		if (sb.status == SANDBOX_RUNNING) {
			*was_running = true;
			if (core_sandbox_stop_why(c, id, "moving", &sb, e) < 0)
				return -1;
		}
		core_sandbox_lock(c, id);
		if (store_sandbox_get(c->store, id, &sb) == 0 &&
		    sb.status != SANDBOX_RUNNING &&
		    sb.status != SANDBOX_CREATING)
			return 0;
		core_sandbox_unlock(c, id);
	}
	return err_set(e, 409, "node_busy",
	               "the sandbox kept being woken while it was stopped "
	               "for its move");
}

/* Steps 2 of the drain for one sandbox; -1 with e (it stays on src). */
static int
move_one(struct cluster *cl, const char *id, const char *src, const char *dst,
         struct err *e)
{
	struct core *c = cl->c;
	struct move_row m = {.started_at = clock_now()};
	struct sandbox sb;
	struct err serr = {0};
	bool ran;

	snprintf(m.sandbox_id, sizeof(m.sandbox_id), "%s", id);
	snprintf(m.src, sizeof(m.src), "%s", src);
	snprintf(m.dst, sizeof(m.dst), "%s", dst);
	snprintf(m.state, sizeof(m.state), "sleeping");
	if (store_move_add(c->store, &m) != 0)
		return ERR_INTERNAL(e, "database error");
	if (stop_and_lock(c, id, &ran, e) < 0) {
		store_move_set(c->store, m.id, "failed", 0, e->msg);
		return -1;
	}
	store_move_set(c->store, m.id, "copying", 0, "");
	if (wsnode_copy(c->wn, id, src, dst, true, &m.bytes, e) < 0 ||
	    store_move_set(c->store, m.id, "copied", m.bytes, "") != 0 ||
	    repin_locked(cl, &m, e) < 0) {
		if (e->status == 0)
			ERR_INTERNAL(e, "database error");
		core_sandbox_unlock(c, id);
		store_move_set(c->store, m.id, "failed", m.bytes, e->msg);
		goto restart;
	}
	store_move_set(c->store, m.id, "repinned", m.bytes, "");
	core_sandbox_unlock(c, id);
	if (step_trash(cl, &m, &serr) < 0)
		log_warn("sandbox %s: its old copy on %s stays: %s", id,
		         src[0] ? src : "the manager", serr.msg);
	store_move_set(c->store, m.id, "done", m.bytes, "");
	log_info("sandbox %s: moved from %s to %s (%lld bytes)", id,
	         src[0] ? src : "the manager", dst[0] ? dst : "the manager",
	         (long long)m.bytes);
restart:
	if (ran && core_sandbox_start(c, id, &sb, &serr) < 0)
		log_warn("sandbox %s: not started again after its move: %s", id,
		         serr.msg);
	return e->status ? -1 : 0;
}

struct drain_arg {
	struct cluster *cl;
	char node[64];
	char swarm_id[64];
	char to[64];
	bool has_to; /* to was asked for ("" is then the manager) */
};

struct ids {
	char (*id)[ULID_LEN + 1];
	size_t n, cap;
};

static void
collect_id(const struct sandbox *sb, void *arg)
{
	struct ids *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *p = realloc(l->id, cap * sizeof(*l->id));

		if (p == NULL)
			return;
		l->id = p;
		l->cap = cap;
	}
	snprintf(l->id[l->n++], ULID_LEN + 1, "%s", sb->id);
}

/* The job's figures, under the lock. */
static void
job_note(struct cluster *cl, const char *node, const char *current, int moved,
         int failed, const char *error)
{
	struct cluster_job *j;

	pthread_mutex_lock(&cl->mu);
	if ((j = cluster_job_get(cl, node, false)) != NULL) {
		snprintf(j->current, sizeof(j->current), "%s", current);
		j->moved += moved;
		j->failed += failed;
		if (error && error[0])
			snprintf(j->error, sizeof(j->error), "%s", error);
	}
	pthread_mutex_unlock(&cl->mu);
}

static void
job_end(struct cluster *cl, const struct drain_arg *a, bool ok)
{
	char msg[DOCKER_MSG_LEN];
	struct cluster_job *j;

	if (ok) {
		if (cluster_swarm_availability(cl, a->swarm_id, "drain", msg) !=
		    DOCKER_OK)
			log_warn("node %s: availability drain: %s", a->node,
			         msg);
		store_node_set_status(cl->c->store, a->node, "drained");
		log_info("node %s: drained", a->node);
	}
	pthread_mutex_lock(&cl->mu);
	if ((j = cluster_job_get(cl, a->node, false)) != NULL) {
		snprintf(j->state, sizeof(j->state), "%s",
		         ok ? "done" : "failed");
		j->current[0] = '\0';
		j->finished_at = clock_now();
	}
	pthread_mutex_unlock(&cl->mu);
}

static void *
drain_thread(void *p)
{
	struct drain_arg *a = p;
	struct cluster *cl = a->cl;
	struct ids l = {0};
	bool ok = true;

	if (store_sandboxes_on_node(cl->c->store, a->node, collect_id, &l) !=
	    0) {
		job_note(cl, a->node, "", 0, 0, "database error");
		l.n = 0;
		ok = false;
	}
	pthread_mutex_lock(&cl->mu);
	cluster_job_get(cl, a->node, false)->total = (int)l.n;
	pthread_mutex_unlock(&cl->mu);
	/* A sandbox that does not move is reported; the others go on. */
	for (size_t i = 0; i < l.n && !atomic_load(&cl->stop); i++) {
		struct err e = {0};
		char dst[64];

		job_note(cl, a->node, l.id[i], 0, 0, NULL);
		if (a->has_to)
			snprintf(dst, sizeof(dst), "%s", a->to);
		else if (pick_target(cl, a->node, dst, &e) < 0) {
			job_note(cl, a->node, "", 0, 1, e.msg);
			ok = false;
			break;
		}
		if (move_one(cl, l.id[i], a->node, dst, &e) < 0) {
			log_warn("node %s: sandbox %s not moved: %s", a->node,
			         l.id[i], e.msg);
			job_note(cl, a->node, "", 0, 1, e.msg);
			ok = false;
		} else {
			job_note(cl, a->node, "", 1, 0, NULL);
		}
	}
	job_end(cl, a, ok && !atomic_load(&cl->stop));
	free(l.id);
	free(a);
	cluster_thread_done(cl);
	return NULL;
}

static int
check_target(struct cluster *cl, const char *node, const char *to,
             struct err *e)
{
	struct node_row t;

	if (to == NULL || to[0] == '\0' || strcmp(to, cl->self) == 0)
		return 0;
	if (strcmp(to, node) == 0)
		return ERR_BAD(e, "\"to\" is the node being drained");
	if (store_node_get(cl->c->store, to, &t) != 0)
		return err_set(e, 404, "node_not_found", "no node \"%s\"", to);
	if (strcmp(t.status, "ready") != 0)
		return err_set(e, 409, "node_busy", "node %s is %s, not ready",
		               to, t.status);
	return 0;
}

/* Step 1: the job made, the node marked, labelled and paused. */
static int
drain_begin(struct cluster *cl, const struct node_row *n, const char *to,
            struct err *e)
{
	struct cluster_job *j;
	char msg[DOCKER_MSG_LEN];

	pthread_mutex_lock(&cl->mu);
	j = cluster_job_get(cl, n->name, true);
	if (j == NULL || strcmp(j->state, "running") == 0) {
		pthread_mutex_unlock(&cl->mu);
		return err_set(e, 409, "node_busy",
		               j ? "node %s is being drained already"
		                 : "too many drains at once (node %s)",
		               n->name);
	}
	memset(j, 0, sizeof(*j));
	snprintf(j->node, sizeof(j->node), "%s", n->name);
	snprintf(j->to, sizeof(j->to), "%s", to ? to : "");
	snprintf(j->state, sizeof(j->state), "running");
	j->started_at = clock_now();
	pthread_mutex_unlock(&cl->mu);
	if (store_node_set_status(cl->c->store, n->name, "draining") != 0)
		return ERR_INTERNAL(e, "database error");
	if (cluster_swarm_label(cl, n->swarm_id, "sandboxd.drain", "1", msg) !=
	        DOCKER_OK ||
	    cluster_swarm_availability(cl, n->swarm_id, "pause", msg) !=
	        DOCKER_OK)
		log_warn("node %s: label or pause: %s", n->name, msg);
	return 0;
}

int
cluster_drain(struct cluster *cl, const char *name, const char *to,
              struct jv **out, struct err *e)
{
	struct drain_arg *a;
	struct node_row n;
	int rc = store_node_get(cl->c->store, name, &n);

	if (strcmp(name, cl->self) == 0)
		return ERR_CONFLICT(e,
		                    "%s is the manager, where the control "
		                    "plane runs: it cannot be drained",
		                    name);
	if (rc == STORE_NOT_FOUND)
		return err_set(e, 404, "node_not_found", "no node \"%s\"",
		               name);
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (strcmp(n.status, "down") == 0 || strcmp(n.status, "joining") == 0)
		return err_set(e, 409, "node_busy",
		               "node %s is %s: its agent cannot send its "
		               "workspaces (restore-elsewhere moves the "
		               "sandboxes of a node that is down)",
		               name, n.status);
	if (check_target(cl, name, to, e) < 0)
		return -1;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return ERR_INTERNAL(e, "out of memory");
	a->cl = cl;
	snprintf(a->node, sizeof(a->node), "%s", name);
	snprintf(a->swarm_id, sizeof(a->swarm_id), "%s", n.swarm_id);
	a->has_to = to != NULL && to[0] != '\0';
	snprintf(a->to, sizeof(a->to), "%s",
	         a->has_to && strcmp(to, cl->self) != 0 ? to : "");
	if (drain_begin(cl, &n, to, e) < 0) {
		free(a);
		return -1;
	}
	if (cluster_thread(cl, drain_thread, a) < 0) {
		job_end(cl, a, false);
		free(a);
		return ERR_INTERNAL(e, "cannot start the drain's thread");
	}
	return cluster_node_json(cl, name, out, e);
}
