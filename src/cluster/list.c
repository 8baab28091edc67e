/*
 * GET /v1/nodes: each node as the store (its row, its last heartbeat),
 * Swarm (state, availability, memory and reservations: orch_nodes) and
 * the sandboxes' rows see it, the manager first.  A drain under way
 * shows as the node's "job".
 *
 * Item: {name, manager, status, addr, swarm: {id, state, availability},
 * memory: {total, reserved, available}, disk_free, sandboxes: {running,
 * total}, last_seen, job|null}; a figure not known is null.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "cluster/internal.h"
#include "lib/clock.h"
#include "lib/meminfo.h"
#include "orch/orch.h"

struct swarm_view {
	struct orch_node n[CLUSTER_NODES_MAX];
	size_t count;
};

static void
swarm_one(const struct orch_node *n, void *arg)
{
	struct swarm_view *v = arg;

	if (v->count < CLUSTER_NODES_MAX)
		v->n[v->count++] = *n;
}

static const struct orch_node *
swarm_find(const struct swarm_view *v, const char *swarm_id, const char *name,
           bool manager)
{
	for (size_t i = 0; i < v->count; i++) {
		const struct orch_node *n = &v->n[i];

		if ((manager && n->manager) ||
		    (swarm_id[0] && strcmp(n->swarm_id, swarm_id) == 0) ||
		    strcmp(n->name, name) == 0)
			return n;
	}
	return NULL;
}

static void
set_int_or_null(struct jv *o, const char *key, int64_t v)
{
	if (v < 0)
		jv_set(o, key, jv_new_null());
	else
		jv_set_int(o, key, v);
}

static void
set_time_or_null(struct jv *o, const char *key, int64_t t)
{
	char buf[CLOCK_RFC3339_LEN];

	if (t <= 0) {
		jv_set(o, key, jv_new_null());
		return;
	}
	clock_rfc3339(t, buf);
	jv_set_str(o, key, buf);
}

struct counts {
	int running, total;
};

static void
count_one(const struct sandbox *sb, void *arg)
{
	struct counts *k = arg;

	k->total++;
	k->running += sb->status == SANDBOX_RUNNING;
}

static struct jv *
job_json(struct cluster *cl, const char *node)
{
	struct cluster_job *j, copy;
	struct jv *o;

	pthread_mutex_lock(&cl->mu);
	j = cluster_job_get(cl, node, false);
	if (j)
		copy = *j;
	pthread_mutex_unlock(&cl->mu);
	if (j == NULL)
		return jv_new_null();
	o = jv_obj();
	jv_set_str(o, "kind", "drain");
	jv_set_str(o, "state", copy.state);
	jv_set_str(o, "to", copy.to);
	jv_set_int(o, "total", copy.total);
	jv_set_int(o, "moved", copy.moved);
	jv_set_int(o, "failed", copy.failed);
	jv_set_str(o, "current", copy.current);
	jv_set_str(o, "error", copy.error);
	set_time_or_null(o, "started_at", copy.started_at);
	set_time_or_null(o, "finished_at", copy.finished_at);
	return o;
}

/* Why its join did not finish, or null. */
static struct jv *
live_error(struct cluster *cl, const char *node)
{
	struct cluster_live *lv;
	char why[256] = "";

	pthread_mutex_lock(&cl->mu);
	for (size_t i = 0; i < CLUSTER_NODES_MAX; i++) {
		lv = &cl->live[i];
		if (strcmp(lv->name, node) == 0)
			snprintf(why, sizeof(why), "%s", lv->error);
	}
	pthread_mutex_unlock(&cl->mu);
	return why[0] ? jv_new_str(why) : jv_new_null();
}

/* One item; row NULL: the manager. */
static struct jv *
node_item(struct cluster *cl, const struct swarm_view *v,
          const struct node_row *row)
{
	const char *name = row ? row->name : cl->self;
	const struct orch_node *sw =
	    swarm_find(v, row ? row->swarm_id : "", name, row == NULL);
	struct jv *o = jv_obj(), *s = jv_obj(), *m = jv_obj(), *k = jv_obj();
	struct counts cnt = {0};
	int64_t avail = -1, total = -1, disk = -1;
	struct statvfs fs;

	jv_set_str(o, "name", name);
	jv_set_bool(o, "manager", row == NULL);
	jv_set_str(o, "status", row ? row->status : "ready");
	jv_set_str(o, "addr", row ? row->addr : cl->addr);
	jv_set_str(s, "id", sw ? sw->swarm_id : (row ? row->swarm_id : ""));
	jv_set_str(s, "state", sw ? sw->state : "unknown");
	jv_set_str(s, "availability", sw ? sw->availability : "unknown");
	jv_set(o, "swarm", s);
	if (row) {
		avail = row->last_seen ? row->mem_available : -1;
		total = row->mem_bytes ? row->mem_bytes : -1;
		disk = row->last_seen ? row->disk_free : -1;
	} else {
		cluster_node_memory(NULL, "", &avail, &total);
		if (statvfs(cl->c->cfg->data_dir, &fs) == 0)
			disk = (int64_t)fs.f_bavail * (int64_t)fs.f_frsize;
	}
	if (total < 0 && sw && sw->mem_bytes > 0)
		total = sw->mem_bytes;
	set_int_or_null(m, "total", total);
	set_int_or_null(m, "reserved", sw ? sw->reserved_bytes : -1);
	set_int_or_null(m, "available", avail);
	jv_set(o, "memory", m);
	set_int_or_null(o, "disk_free", disk);
	store_sandboxes_on_node(cl->c->store, row ? row->name : "", count_one,
	                        &cnt);
	jv_set_int(k, "running", cnt.running);
	jv_set_int(k, "total", cnt.total);
	jv_set(o, "sandboxes", k);
	set_time_or_null(o, "last_seen", row ? row->last_seen : clock_now());
	jv_set(o, "job", job_json(cl, name));
	jv_set(o, "error", live_error(cl, name));
	return o;
}

struct rows {
	struct node_row r[CLUSTER_NODES_MAX];
	size_t n;
};

static void
row_one(const struct node_row *n, void *arg)
{
	struct rows *l = arg;

	if (l->n < CLUSTER_NODES_MAX)
		l->r[l->n++] = *n;
}

/* name NULL: every node as {"nodes":[…]}; else that node's item. */
static int
nodes_json(struct cluster *cl, const char *name, struct jv **out, struct err *e)
{
	struct swarm_view *v = calloc(1, sizeof(*v));
	struct rows *l = calloc(1, sizeof(*l));
	char msg[DOCKER_MSG_LEN];
	struct jv *arr = jv_arr();
	int rc = 0;

	*out = NULL;
	if (v == NULL || l == NULL) {
		rc = ERR_INTERNAL(e, "out of memory");
		goto out;
	}
	/* Swarm's view is best effort: the rows are the truth here. */
	orch_nodes(cl->c->orch, swarm_one, v, msg);
	if (store_node_list(cl->c->store, row_one, l) != 0) {
		rc = ERR_INTERNAL(e, "database error");
		goto out;
	}
	if (name == NULL || strcmp(name, cl->self) == 0)
		jv_push(arr, node_item(cl, v, NULL));
	for (size_t i = 0; i < l->n; i++)
		if (name == NULL || strcmp(name, l->r[i].name) == 0)
			jv_push(arr, node_item(cl, v, &l->r[i]));
	if (name && jv_len(arr) == 0) {
		rc = err_set(e, 404, "node_not_found", "no node \"%s\"", name);
		goto out;
	}
	if (name) {
		*out = jv_copy(jv_at(arr, 0));
	} else {
		*out = jv_obj();
		jv_set(*out, "nodes", arr);
		arr = NULL;
	}
out:
	jv_free(arr);
	free(v);
	free(l);
	return rc;
}

int
cluster_nodes(struct cluster *cl, struct jv **out, struct err *e)
{
	return nodes_json(cl, NULL, out, e);
}

int
cluster_node_json(struct cluster *cl, const char *name, struct jv **out,
                  struct err *e)
{
	return nodes_json(cl, name, out, e);
}
