/*
 * /v1/sandboxes and /v1/apps/{id}/sandbox: the containers apps run in.
 * A sandbox is reached through its app's tenant: another tenant's
 * sandbox is a 404 like any unknown id.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "applog/problem.h"
#include "trash/trash.h"
#include "task/task.h"
#include "sandbox/activity.h"
#include "preview/pvauth.h"
#include "sandbox/runtime.h"
#include "sbnet/sbnet.h"
#include "lib/limits.h"

void
api_preview_url(const struct core *c, const char *id, int port, char *out,
                size_t len)
{
	const struct config *cfg = c->cfg;
	char host_id[ULID_LEN + 1], p[16] = "";
	bool default_port = cfg->http_port == (cfg->preview_tls ? 443 : 80);

	for (int i = 0; i <= ULID_LEN; i++)
		host_id[i] =
		    (char)(id[i] >= 'A' && id[i] <= 'Z' ? id[i] - 'A' + 'a'
		                                        : id[i]);
	if (!default_port)
		snprintf(p, sizeof(p), ":%u", cfg->http_port);
	snprintf(out, len, "%s://s-%s-%d.preview.%s%s",
	         cfg->preview_tls ? "https" : "http", host_id, port,
	         cfg->preview_domain, p);
}

static struct jv *
preview_json(const struct core *c, const struct sandbox *sb,
             const struct jv *rt, const struct err *rt_err)
{
	const char *health = rt ? jv_str(jv_get(rt, "health")) : NULL, *probe;
	struct jv *p = jv_obj();
	char url[512];
	int web = sb->nports ? sb->ports[0] : 3000;
	struct pvauth_view view;

	api_preview_url(c, sb->id, web, url, sizeof(url));
	jv_set_str(p, "url", url);
	jv_set_int(p, "port", web);
	if (pvauth_view(c, sb->id, &view))
		jv_set_str(p, "visibility",
		           view.private_ ? "private" : "public");
	/*
	 * The supervisor's health check when it answers; a running
	 * container whose supervisor is still booting is "starting"; a
	 * broken manifest is an "error" whatever runs, and so is a
	 * supervisor that listens but does not answer in time.
	 */
	if (sb->status != SANDBOX_RUNNING)
		health = "down";
	else if (sb->frozen)
		health = "frozen"; /* not asked: its supervisor is frozen too */
	else if (sb->manifest_error[0])
		health = "error";
	else if (rt == NULL && rt_err->status)
		health = "error";
	else if (health == NULL)
		health = "starting";
	jv_set_str(p, "status", health);
	probe = rt ? jv_str(jv_get(rt, "health_detail")) : NULL;
	/*
	 * Nothing listening yet is how every web process starts, not a
	 * failure: the detail says so in words, and the probe's own error
	 * (an internal address refusing) goes apart, for who wants it.
	 */
	if (strcmp(health, "starting") == 0 && probe &&
	    strcmp(probe, "installing dependencies") == 0) {
		jv_set_str(p, "detail", probe); /* the install step runs */
	} else if (strcmp(health, "starting") == 0) {
		jv_set_str(p, "detail",
		           rt ? "the web process is starting"
		              : "the sandbox is starting");
		if (probe)
			jv_set_str(p, "probe_error", probe);
	} else if (probe) {
		jv_set_str(p, "detail", probe);
	} else if (sb->status == SANDBOX_RUNNING && rt == NULL &&
	           rt_err->status) {
		jv_set_str(p, "detail", rt_err->msg);
	}
	return p;
}

static struct jv *
manifest_json(const struct sandbox *sb)
{
	struct jv *m = jv_obj();

	jv_set_str(m, "source",
	           sb->manifest_source[0] ? sb->manifest_source : "pending");
	jv_set_bool(m, "valid", sb->manifest_error[0] == '\0');
	if (sb->manifest_error[0])
		jv_set_str(m, "error", sb->manifest_error);
	return m;
}

/*
 * What runs: the supervisor's list when it answered (remembered for
 * later); while frozen, the last list seen with every state "paused"
 * (or, never seen since the daemon started, the web process the ports
 * promise).
 */
static struct jv *
processes_json(const struct sandbox *sb, const struct jv *procs)
{
	struct jv *list, *web;

	if (procs) {
		applog_procs_seen(sb->id, procs);
		return jv_copy((struct jv *)procs);
	}
	if (sb->status != SANDBOX_RUNNING || !sb->frozen)
		return jv_arr();
	list = applog_procs_paused(sb->id);
	if (jv_len(list) == 0 && sb->manifest_error[0] == '\0') {
		web = jv_obj();
		jv_set_str(web, "name", "web");
		jv_set_str(web, "kind", "web");
		jv_set_str(web, "state", "paused");
		jv_set_int(web, "port", sb->nports ? sb->ports[0] : 3000);
		jv_push(list, web);
	}
	return list;
}

struct jv *
api_sandbox_json(struct core *c, const struct sandbox *sb)
{
	struct jv *o = jv_obj(), *ports = jv_arr(), *rt = NULL, *procs;
	struct jv *problem, *install;
	char ws[WORKSPACE_PATH_MAX], task[ULID_LEN + 1];
	struct wsnode_ref lws = {.ws = ws, .wn = c->wn, .sb = sb};
	struct err re = {0};
	int64_t blocked;

	if (sb->status == SANDBOX_RUNNING && !sb->frozen)
		rt = runtime_status(c, sb->id, &re);

	jv_set_str(o, "id", sb->id);
	jv_set_str(o, "app_id", sb->app_id);
	jv_set_str(o, "status", sandbox_state_name(sb->status));
	if (sb->status_reason[0])
		jv_set_str(o, "status_reason", sb->status_reason);
	/* More than one server: the node holding it (absent: the manager). */
	if (sb->node[0])
		jv_set_str(o, "node", sb->node);
	if (sb->error_message[0])
		jv_set_str(o, "error_message", sb->error_message);
	if (sb->has_exit_code)
		jv_set_int(o, "exit_code", sb->exit_code);
	jv_set_bool(o, "oom_killed", sb->oom_killed);
	jv_set_bool(o, "frozen", sb->status == SANDBOX_RUNNING && sb->frozen);
	jv_set_str(o, "image", sb->image);
	if (sb->container_id[0])
		jv_set_str(o, "container_id", sb->container_id);
	for (int i = 0; i < sb->nports; i++)
		jv_push(ports, jv_new_int(sb->ports[i]));
	jv_set(o, "ports", ports);
	snprintf(ws, sizeof(ws), "%s/workspaces/%s", c->cfg->data_dir, sb->id);
	jv_set_str(o, "workspace", ws);
	if (sb->preset[0])
		jv_set_str(o, "runtime_preset", sb->preset);
	jv_set(o, "preview", preview_json(c, sb, rt, &re));
	procs = rt ? jv_get(rt, "processes") : NULL;
	jv_set(o, "processes", processes_json(sb, procs));
	install = rt ? jv_get(rt, "install") : NULL;
	jv_set(o, "install",
	       install ? jv_copy((struct jv *)install) : jv_new_null());
	if (sb->status != SANDBOX_RUNNING)
		problem = jv_new_null();
	else if ((problem = applog_install_problem(&lws, sb->id, install)) ==
	         NULL)
		problem = applog_problem(&lws, sb->id, procs);
	jv_set(o, "problem", problem);
	jv_set(o, "manifest", manifest_json(sb));
	jv_free(rt);
	jv_set_str(o, "idle_policy", sb->idle_policy);
	if (sb->status == SANDBOX_RUNNING &&
	    (blocked = sbnet_blocked(c->net, sb->container_ip)) >= 0)
		jv_set_int(o, "egress_blocked", blocked);
	if (task_active_id(c, sb->id, task))
		jv_set_str(o, "active_task_id", task);
	api_set_time(o, "created_at", sb->created_at);
	api_set_time(o, "updated_at", sb->updated_at);
	api_set_time(o, "last_active_at", sb->last_active_at);
	if (sb->stopped_at)
		api_set_time(o, "stopped_at", sb->stopped_at);
	return o;
}

static int
parse_ports(const struct jv *body, int *ports, int *n, struct err *e)
{
	struct jv *v = body ? jv_get(body, "ports") : NULL;

	*n = 0;
	if (v == NULL || jv_type(v) == JV_NULL) {
		ports[(*n)++] = 3000;
		return 0;
	}
	if (jv_type(v) != JV_ARRAY)
		return ERR_BAD(e, "ports must be an array of port numbers");
	if (jv_len(v) == 0 || jv_len(v) > API_MAX_PORTS)
		return ERR_BAD(e, "ports must list 1 to %d ports",
		               API_MAX_PORTS);
	for (size_t i = 0; i < jv_len(v); i++) {
		struct jv *p = jv_at(v, i);
		int64_t port = jv_int(p);
		if (jv_type(p) != JV_INT || port < 1 || port > 65535)
			return ERR_BAD(e,
			               "ports[%zu] must be an integer from "
			               "1 to 65535",
			               i);
		for (int j = 0; j < *n; j++)
			if (ports[j] == port)
				return ERR_BAD(e, "port %lld is listed twice",
				               (long long)port);
		ports[(*n)++] = (int)port;
	}
	return 0;
}

void
sandboxes_create(struct req *r, struct resp *w)
{
	int ports[API_MAX_PORTS], n;
	struct err e = {0};
	struct sandbox sb;
	struct jv *body;
	struct app a;
	int rc;

	if (api_body_object(r, w, true, &body) < 0)
		return;
	rc = parse_ports(body, ports, &n, &e);
	/* no ports named: an imported app's sandbox.yaml may say (core) */
	if (body == NULL || jv_get(body, "ports") == NULL)
		n = 0;
	jv_free(body);
	if (rc < 0) {
		api_reply_err(w, &e);
		return;
	}
	if (api_load_app(r, w, &a) < 0)
		return;
	if (core_sandbox_create(r->core, &a, ports, n, NULL, NULL, &sb, &e) <
	    0) {
		api_reply_err(w, &e);
		return;
	}
	api_reply_json(w, 201, api_sandbox_json(r->core, &sb));
}

/* Loads the app in the path for this tenant, or answers 404 (api.h). */
int
api_load_app(struct req *r, struct resp *w, struct app *a)
{
	int rc = store_app_get(r->core->store, r->owner, r->ids[0], a);

	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such app");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot read the app");
	return rc == 0 ? 0 : -1;
}

int
api_load_app_sandbox(struct req *r, struct resp *w, struct app *a,
                     struct sandbox *sb)
{
	int rc;

	if (api_load_app(r, w, a) < 0)
		return -1;
	rc = store_sandbox_by_app(r->core->store, a->id, sb);
	if (rc == STORE_NOT_FOUND)
		return 0;
	if (rc != 0) {
		api_fail(w, 500, "internal", "cannot read the app");
		return -1;
	}
	return 1;
}

/* Loads the sandbox in the path for this tenant, or answers 404. */
int
api_load_sandbox(struct req *r, struct resp *w, struct sandbox *sb)
{
	int rc = store_sandbox_get(r->core->store, r->ids[0], sb);

	if (rc == 0 && strcmp(sb->owner, r->owner) != 0)
		rc = STORE_NOT_FOUND;
	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such sandbox");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot read the sandbox");
	/*
	 * Changing something in a sandbox is activity for the idle reaper;
	 * reading its status is not (a dashboard that polls must not keep
	 * every sandbox awake forever).
	 */
	if (rc == 0 && strcmp(r->method, "GET") != 0 &&
	    strcmp(r->method, "HEAD") != 0)
		activity_touch(r->core->act, sb->id);
	return rc == 0 ? 0 : -1;
}

/* "sleep" follows the server's SANDBOXD_SLEEP_POLICY. */
static bool
idle_policy_known(const char *p)
{
	static const char *const known[] = {"sleep", "freeze", "stop",
	                                    "always_on"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(p, known[i]) == 0)
			return true;
	return false;
}

static bool
freezes(const struct core *c, const struct sandbox *sb)
{
	const char *policy = core_sleep_policy(c, sb);

	return policy && strcmp(policy, "freeze") == 0;
}

void
sandboxes_patch(struct req *r, struct resp *w)
{
	struct sandbox sb;
	struct jv *body, *v;
	const char *p;

	if (api_body_object(r, w, false, &body) < 0)
		return;
	if (api_load_sandbox(r, w, &sb) < 0) {
		jv_free(body);
		return;
	}
	v = jv_get(body, "idle_policy");
	p = v ? jv_str(v) : NULL;
	if (v && (p == NULL || !idle_policy_known(p))) {
		jv_free(body);
		api_fail(w, 400, "invalid_request",
		         "idle_policy must be \"sleep\", \"freeze\", "
		         "\"stop\" or \"always_on\"");
		return;
	}
	if (p && store_sandbox_set_policy(r->core->store, sb.id, p) != 0) {
		jv_free(body);
		api_fail(w, 500, "internal", "cannot store the sandbox");
		return;
	}
	jv_free(body);
	store_sandbox_get(r->core->store, sb.id, &sb);
	/* A policy that never freezes ("stop", "always_on") thaws it now. */
	if (p && sb.frozen && !freezes(r->core, &sb)) {
		struct err e = {0};
		if (core_sandbox_thaw(r->core, sb.id, &e) < 0) {
			api_reply_err(w, &e);
			return;
		}
		store_sandbox_get(r->core->store, sb.id, &sb);
	}
	api_reply_json(w, 200, api_sandbox_json(r->core, &sb));
}

void
sandboxes_get(struct req *r, struct resp *w)
{
	struct sandbox sb;

	if (api_load_sandbox(r, w, &sb) == 0)
		api_reply_json(w, 200, api_sandbox_json(r->core, &sb));
}

typedef int (*sandbox_op)(struct core *, const char *, struct sandbox *,
                          struct err *);

static void
run_op(struct req *r, struct resp *w, sandbox_op op)
{
	struct err e = {0};
	struct sandbox sb;

	if (api_load_sandbox(r, w, &sb) < 0)
		return;
	if (op(r->core, sb.id, &sb, &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_json(w, 200, api_sandbox_json(r->core, &sb));
}

void
sandboxes_stop(struct req *r, struct resp *w)
{
	run_op(r, w, core_sandbox_stop);
}

void
sandboxes_start(struct req *r, struct resp *w)
{
	run_op(r, w, core_sandbox_start);
}

static int
freeze_op(struct core *c, const char *id, struct sandbox *sb, struct err *e)
{
	/* A frozen agent would run out its task's timeout. */
	if (task_running_on(c, id))
		return err_set(e, 409, "task_in_progress",
		               "a task is running in this sandbox; it is not "
		               "frozen");
	if (core_sandbox_freeze(c, id, -1, e) < 0)
		return -1;
	if (store_sandbox_get(c->store, id, sb) != 0)
		return ERR_INTERNAL(e, "database error");
	return 0;
}

void
sandboxes_freeze(struct req *r, struct resp *w)
{
	run_op(r, w, freeze_op);
}

void
sandboxes_delete(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct sandbox sb;

	if (api_load_sandbox(r, w, &sb) < 0)
		return;
	/* Into the trash, as an app's delete: the headers say how to undo. */
	if (trash_sandbox(r->core, sb.id, w->trash_id, &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_empty(w, 204);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route sandboxes_routes[] = {
    {.method = "POST",
     .pattern = "/v1/apps/{id}/sandbox",
     .fn = sandboxes_create},
    {.method = "GET", .pattern = "/v1/sandboxes/{id}", .fn = sandboxes_get},
    {.method = "DELETE",
     .pattern = "/v1/sandboxes/{id}",
     .fn = sandboxes_delete},
    {.method = "PATCH", .pattern = "/v1/sandboxes/{id}", .fn = sandboxes_patch},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/stop",
     .fn = sandboxes_stop},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/start",
     .fn = sandboxes_start},
    {.method = "POST",
     .pattern = "/v1/sandboxes/{id}/freeze",
     .fn = sandboxes_freeze},
    {0},
};
