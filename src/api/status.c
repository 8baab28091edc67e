/*
 * GET /v1/status: what the daemon's parts are doing, for a person asking
 * why a task or a sandbox does not work.  /healthz stays liveness only.
 */
#include "api/api.h"
#include "sbnet/sbnet.h"

static struct jv *
error_field(struct jv *o, const char *why)
{
	jv_set_str(o, "error", why);
	return o;
}

/* The trash: the tenant's, or the whole instance's for an operator. */
static struct jv *
trash_json(struct req *r)
{
	struct jv *t = jv_obj();
	int64_t n = 0, bytes = 0;

	store_trash_usage(r->core->store, r->operator? NULL : r->owner, &n,
	                  &bytes);
	jv_set_int(t, "entries", n);
	jv_set_int(t, "bytes", bytes);
	jv_set_int(t, "retention_seconds", r->core->cfg->trash_retention_s);
	return t;
}

void
status_get(struct req *r, struct resp *w)
{
	struct jv *o = jv_obj(), *dk = jv_obj(), *net = jv_obj();
	struct jv *eg = jv_obj(), *px = jv_obj();
	struct sbnet_state st;

	sbnet_state(r->core->net, &st);
	jv_set_str(o, "version", SANDBOXD_VERSION);
	jv_set_bool(dk, "up", docker_is_up(r->core->docker));
	jv_set(o, "docker", dk);
	jv_set_str(net, "name", st.name);
	jv_set_str(net, "id", st.id);
	jv_set_str(net, "subnet", st.subnet);
	jv_set_str(net, "gateway", st.gateway);
	jv_set_str(net, "bridge", st.bridge);
	jv_set_bool(net, "managed", st.managed);
	jv_set_bool(net, "ready", st.ready);
	jv_set(o, "network", error_field(net, st.error));
	jv_set_str(eg, "mode", egress_mode_name(st.mode));
	jv_set_str(eg, "table", st.table);
	jv_set_bool(eg, "installed", st.rules);
	jv_set(o, "egress", error_field(eg, st.rules_error));
	jv_set_bool(px, "listening", st.proxy_listening);
	jv_set_str(px, "url", st.proxy_url);
	jv_set(o, "proxy", error_field(px, st.proxy_error));
	/* where the instance keeps its data is an operator's business */
	if (r->operator)
		jv_set_str(o, "data_dir", r->core->cfg->data_dir);
	else
		jv_set(o, "data_dir", jv_new_null());
	jv_set_int(o, "idle_threshold_seconds", core_idle_threshold(r->core));
	jv_set(o, "trash", trash_json(r));
	api_reply_json(w, 200, o);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route status_routes[] = {
    {.method = "GET", .pattern = "/v1/status", .fn = status_get},
    {0},
};
