/*
 * /v1/trash: deleted apps kept for SANDBOXD_TRASH_RETENTION_SECONDS
 * (trash/trash.h).  An entry belongs to the tenant of its app; another
 * tenant gets 404, as for the app itself.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "trash/trash.h"
#include "lib/limits.h"

static struct jv *
entry_json(const struct trash_entry *t)
{
	struct jv *o = jv_obj();
	char restore[64];

	jv_set_str(o, "id", t->id);
	jv_set_str(o, "app_id", t->app_id);
	jv_set_str(o, "kind", t->sandbox_only ? "sandbox" : "app");
	jv_set_str(o, "name", t->name);
	jv_set_str(o, "state", trash_state_name(t->state));
	jv_set(o, "sandbox_id",
	       t->sandbox_id[0] ? jv_new_str(t->sandbox_id) : jv_new_null());
	jv_set(o, "bytes",
	       t->bytes >= 0 ? jv_new_int(t->bytes) : jv_new_null());
	api_set_time(o, "deleted_at", t->deleted_at);
	api_set_time(o, "purge_at", t->purge_at);
	snprintf(restore, sizeof(restore), "/v1/trash/%s/restore", t->id);
	jv_set_str(o, "restore", restore);
	return o;
}

static int
push_entry(const struct trash_entry *t, void *arg)
{
	jv_push(arg, entry_json(t));
	return 0;
}

void
trash_list(struct req *r, struct resp *w)
{
	struct jv *o = jv_obj(), *arr = jv_arr();
	int64_t n, bytes;

	if (store_trash_list(r->core->store, r->owner, push_entry, arr) < 0 ||
	    store_trash_usage(r->core->store, r->owner, &n, &bytes) < 0) {
		jv_free(arr);
		jv_free(o);
		api_fail(w, 500, "internal", "cannot read the trash");
		return;
	}
	jv_set(o, "trash", arr);
	jv_set_int(o, "entries", n);
	jv_set_int(o, "bytes", bytes);
	jv_set_int(o, "retention_seconds", r->core->cfg->trash_retention_s);
	api_reply_json(w, 200, o);
}

void
trash_get(struct req *r, struct resp *w)
{
	struct trash_entry t;
	int rc = store_trash_get(r->core->store, r->owner, r->ids[0], &t);

	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such trash entry");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot read the trash");
	else
		api_reply_json(w, 200, entry_json(&t));
}

/* The optional body's "name": NULL when absent; -1 answered. */
static int
restore_name(struct req *r, struct resp *w, char *out, size_t len,
             const char **name)
{
	struct jv *body = NULL, *v;
	int rc = 0;

	*name = NULL;
	if (api_body_object(r, w, true, &body) < 0)
		return -1;
	v = body ? jv_get(body, "name") : NULL;
	if (v && (jv_type(v) != JV_STRING || jv_str_len(v) == 0 ||
	          jv_str_len(v) > API_MAX_NAME_BYTES ||
	          strlen(jv_str(v)) != jv_str_len(v))) {
		api_fail(w, 400, "invalid_request",
		         "name must be a non-empty string of at most %d bytes",
		         API_MAX_NAME_BYTES);
		rc = -1;
	} else if (v) {
		snprintf(out, len, "%s", jv_str(v));
		*name = out;
	}
	jv_free(body);
	return rc;
}

void
trash_restore_post(struct req *r, struct resp *w)
{
	char buf[API_MAX_NAME_BYTES + 1];
	struct err e = {0}, start_err = {0};
	struct app a;
	struct sandbox sb;
	struct jv *o;
	const char *name;
	bool has_sb;

	if (restore_name(r, w, buf, sizeof(buf), &name) < 0)
		return;
	if (trash_restore(r->core, r->owner, r->ids[0], name, &a, &sb, &has_sb,
	                  &start_err, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	o = jv_obj();
	jv_set(o, "app", api_app_json(r->core, &a));
	jv_set(o, "sandbox",
	       has_sb ? api_sandbox_json(r->core, &sb) : jv_new_null());
	if (start_err.status) {
		struct jv *er = jv_obj();
		jv_set_str(er, "code", start_err.code);
		jv_set_str(er, "message", start_err.msg);
		jv_set(o, "start_error", er);
	}
	api_reply_json(w, 200, o);
}

void
trash_delete(struct req *r, struct resp *w)
{
	struct err e = {0};

	if (trash_purge(r->core, r->owner, r->ids[0], &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_empty(w, 204);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route trash_routes[] = {
    {.method = "GET", .pattern = "/v1/trash", .fn = trash_list},
    {.method = "GET", .pattern = "/v1/trash/{id}", .fn = trash_get},
    {.method = "POST",
     .pattern = "/v1/trash/{id}/restore",
     .fn = trash_restore_post},
    {.method = "DELETE", .pattern = "/v1/trash/{id}", .fn = trash_delete},
    {0},
};
