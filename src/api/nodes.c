/*
 * /v1/nodes and restore-elsewhere: the cluster's nodes, for operators
 * only (as /v1/tokens: they act on the whole instance).  The work is
 * cluster/'s; this file checks who asks and what, and shapes the
 * answers.  With SANDBOXD_ORCHESTRATOR=docker there is one server and no
 * node: every call answers 409 not_swarm.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "cluster/cluster.h"

/* Operators only, and swarm mode only: false when answered. */
static bool
allowed(struct req *r, struct resp *w)
{
	if (!r->operator) {
		api_fail(w, 403, "operator_only",
		         "nodes are managed by operators only (the first-start "
		         "token \"default\" or one named in "
		         "SANDBOXD_OPERATORS)");
		return false;
	}
	if (r->core->cluster == NULL) {
		api_fail(w, 409, "not_swarm",
		         "this instance runs on one server "
		         "(SANDBOXD_ORCHESTRATOR=docker); nodes need "
		         "SANDBOXD_ORCHESTRATOR=swarm (docs/deploy.md, More "
		         "than one server)");
		return false;
	}
	return true;
}

static void
reply(struct resp *w, int status, int rc, struct jv *out, const struct err *e)
{
	if (rc < 0)
		api_reply_err(w, e);
	else
		api_reply_json(w, status, out);
}

static void
nodes_list(struct req *r, struct resp *w)
{
	struct jv *out = NULL;
	struct err e = {0};
	int rc;

	if (!allowed(r, w))
		return;
	rc = cluster_nodes(r->core->cluster, &out, &e);
	reply(w, 200, rc, out, &e);
}

static void
nodes_join_command(struct req *r, struct resp *w)
{
	struct jv *out = NULL;
	struct err e = {0};
	int rc;

	if (!allowed(r, w))
		return;
	rc = cluster_join_command(r->core->cluster, &out, &e);
	reply(w, 200, rc, out, &e);
}

static void
nodes_drain(struct req *r, struct resp *w)
{
	struct jv *body = NULL, *out = NULL;
	const char *to = NULL;
	struct err e = {0};
	int rc;

	if (!allowed(r, w) || api_body_object(r, w, true, &body) < 0)
		return;
	if (api_opt_str(w, body, "to", 63, &to) < 0) {
		jv_free(body);
		return;
	}
	if (!cluster_node_name_ok(r->name)) {
		jv_free(body);
		api_fail(w, 404, "node_not_found", "no node \"%.63s\"",
		         r->name);
		return;
	}
	rc = cluster_drain(r->core->cluster, r->name, to, &out, &e);
	jv_free(body);
	reply(w, 202, rc, out, &e);
}

static void
restore_elsewhere(struct req *r, struct resp *w)
{
	struct jv *body = NULL, *out = NULL;
	const char *to = NULL, *snap = NULL;
	struct err e = {0};
	int rc;

	if (!allowed(r, w) || api_body_object(r, w, true, &body) < 0)
		return;
	if (api_opt_str(w, body, "to", 63, &to) < 0 ||
	    api_opt_str(w, body, "snapshot", ULID_LEN, &snap) < 0) {
		jv_free(body);
		return;
	}
	rc = cluster_restore_elsewhere(r->core->cluster, NULL, r->ids[0], to,
	                               snap, &out, &e);
	jv_free(body);
	reply(w, 200, rc, out, &e);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route nodes_routes[] = {
    {.method = "GET", .pattern = "/v1/nodes", .fn = nodes_list},
    {.method = "POST",
     .pattern = "/v1/nodes/join-command",
     .fn = nodes_join_command},
    {.method = "POST", .pattern = "/v1/nodes/{name}/drain", .fn = nodes_drain},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/restore-elsewhere",
     .fn = restore_elsewhere},
    {0},
};
