/*
 * Snapshots, restore and fork (snapshot/snapshot.h): our routes under
 * /v1/apps/{id}/ and the reference's /v1/snapshots, which answer the
 * same objects.  A snapshot belongs to its app's tenant; another
 * tenant's id is a 404, as for the app itself.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "snapshot/snapshot.h"

static struct jv *
str_or_null(const char *s)
{
	return s[0] ? jv_new_str(s) : jv_new_null();
}

static struct jv *
snapshot_json(const struct snapshot *sn)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "id", sn->id);
	jv_set_str(o, "name", sn->name);
	jv_set_str(o, "app_id", sn->app_id);
	jv_set_str(o, "source_app_id", sn->source_app_id);
	jv_set(o, "source_sandbox_id", str_or_null(sn->source_sandbox_id));
	jv_set_str(o, "status", sn->status);
	jv_set_str(o, "reason", sn->reason);
	jv_set_int(o, "size_bytes", sn->size_bytes);
	jv_set_int(o, "own_bytes", sn->own_bytes);
	jv_set_int(o, "files", sn->files);
	jv_set_str(o, "method", sn->method);
	jv_set_int(o, "pause_ms", sn->pause_ms);
	jv_set(o, "task_id", str_or_null(sn->task_id));
	jv_set(o, "commit", str_or_null(sn->head));
	jv_set_str(o, "created_by", sn->created_by);
	api_set_time(o, "created_at", sn->created_at);
	jv_set_str(o, "base_image", sn->base_image);
	return o;
}

/* Who asks: the token's name, or "console" for a console session. */
static const char *
actor(const struct req *r)
{
	return r->via == API_VIA_SESSION ? "console" : r->owner;
}

/* body[key], a string of 1..max bytes without NUL, into out; absent:
 * "" (0); -1 answered. */
static int
opt_string(struct req *r, struct resp *w, const struct jv *body,
           const char *key, size_t max, char *out, size_t len)
{
	const char *v;

	(void)r;
	out[0] = '\0';
	if (api_opt_str(w, body, key, max, &v) < 0)
		return -1;
	if (v)
		snprintf(out, len, "%s", v);
	return 0;
}

/* body[key], a snapshot's id; absent: "" (0) unless required. */
static int
opt_id(struct resp *w, const struct jv *body, const char *key, bool required,
       char out[ULID_LEN + 1])
{
	const struct jv *v = body ? jv_get(body, key) : NULL;

	out[0] = '\0';
	if ((v == NULL || jv_type(v) == JV_NULL) && !required)
		return 0;
	if (v == NULL || jv_type(v) != JV_STRING ||
	    !ulid_parse(jv_str(v), out)) {
		api_fail(w, 400, "invalid_request", "%s must be an id (ULID)",
		         key);
		return -1;
	}
	return 0;
}

static void
reply_taken(struct req *r, struct resp *w, const struct app *a,
            const char *name)
{
	struct snapshot sn;
	struct err e = {0};

	if (snapshot_take(r->core, a, name, "manual", actor(r), &sn, &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_json(w, 201, snapshot_json(&sn));
}

void
snapshots_create(struct req *r, struct resp *w)
{
	char name[SNAPSHOT_NAME_MAX + 1];
	struct jv *body = NULL;
	struct app a;
	int rc;

	if (api_load_app(r, w, &a) < 0 ||
	    api_body_object(r, w, true, &body) < 0)
		return;
	rc = opt_string(r, w, body, "name", SNAPSHOT_NAME_MAX, name,
	                sizeof(name));
	jv_free(body);
	if (rc == 0)
		reply_taken(r, w, &a, name);
}

/* POST /v1/snapshots {source_sandbox_id, name}: the reference's. */
void
snapshots_create_ref(struct req *r, struct resp *w)
{
	char name[SNAPSHOT_NAME_MAX + 1], sbid[ULID_LEN + 1];
	struct jv *body = NULL;
	struct sandbox sb;
	struct app a;
	int rc;

	if (api_body_object(r, w, false, &body) < 0)
		return;
	rc = opt_id(w, body, "source_sandbox_id", true, sbid);
	if (rc == 0)
		rc = opt_string(r, w, body, "name", SNAPSHOT_NAME_MAX, name,
		                sizeof(name));
	jv_free(body);
	if (rc < 0)
		return;
	if (store_sandbox_get(r->core->store, sbid, &sb) != 0 ||
	    strcmp(sb.owner, r->owner) != 0 ||
	    store_app_get(r->core->store, r->owner, sb.app_id, &a) != 0) {
		api_fail(w, 404, "not_found", "no such sandbox");
		return;
	}
	reply_taken(r, w, &a, name);
}

static int
push_snapshot(const struct snapshot *sn, void *arg)
{
	jv_push(arg, snapshot_json(sn));
	return 0;
}

static void
reply_list(struct req *r, struct resp *w, const char *app_id)
{
	struct jv *arr = jv_arr(), *o;

	if (store_snapshot_list(r->core->store, r->owner, app_id, push_snapshot,
	                        arr) < 0) {
		jv_free(arr);
		api_fail(w, 500, "internal", "cannot read the snapshots");
		return;
	}
	o = jv_obj();
	jv_set(o, "snapshots", arr);
	api_reply_json(w, 200, o);
}

void
snapshots_list_app(struct req *r, struct resp *w)
{
	struct app a;

	if (api_load_app(r, w, &a) == 0)
		reply_list(r, w, a.id);
}

void
snapshots_list(struct req *r, struct resp *w)
{
	reply_list(r, w, NULL);
}

void
snapshots_get(struct req *r, struct resp *w)
{
	struct snapshot sn;
	int rc = store_snapshot_get(r->core->store, r->owner, r->ids[0], &sn);

	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such snapshot");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot read the snapshot");
	else
		api_reply_json(w, 200, snapshot_json(&sn));
}

void
snapshots_delete(struct req *r, struct resp *w)
{
	struct err e = {0};

	if (snapshot_delete(r->core, r->owner, r->ids[0], &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_empty(w, 204);
}

void
apps_restore(struct req *r, struct resp *w)
{
	char id[ULID_LEN + 1];
	struct jv *body = NULL, *o;
	struct snapshot undo;
	struct sandbox sb;
	struct err e = {0};
	struct app a;
	int rc;

	if (api_load_app(r, w, &a) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	rc = opt_id(w, body, "snapshot_id", true, id);
	jv_free(body);
	if (rc < 0)
		return;
	if (snapshot_restore(r->core, &a, id, actor(r), &sb, &undo, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	o = jv_obj();
	jv_set(o, "sandbox", api_sandbox_json(r->core, &sb));
	jv_set_str(o, "restored_from", id);
	jv_set_str(o, "undo_snapshot_id", undo.id);
	api_reply_json(w, 201, o);
}

static int
fork_body(struct req *r, struct resp *w, struct snapshot_fork *f,
          char id[ULID_LEN + 1], char *name, size_t len)
{
	struct jv *body = NULL;
	int rc;

	if (api_body_object(r, w, true, &body) < 0)
		return -1;
	rc = opt_id(w, body, "snapshot_id", false, id);
	if (rc == 0)
		rc = opt_string(r, w, body, "name", API_MAX_NAME_BYTES, name,
		                len);
	f->snapshot_id = id[0] ? id : NULL;
	f->name = name[0] ? name : NULL;
	f->copy_config = body && jv_is_true(jv_get(body, "copy_config"));
	f->copy_budget = body && jv_is_true(jv_get(body, "copy_budget"));
	f->actor = actor(r);
	jv_free(body);
	return rc;
}

void
apps_fork(struct req *r, struct resp *w)
{
	char id[ULID_LEN + 1], name[API_MAX_NAME_BYTES + 1], snap[ULID_LEN + 1];
	struct snapshot_fork f;
	struct app a, na;
	struct sandbox sb;
	struct err e = {0};
	struct jv *o;

	if (api_load_app(r, w, &a) < 0 ||
	    fork_body(r, w, &f, id, name, sizeof(name)) < 0)
		return;
	if (snapshot_fork(r->core, &a, &f, &na, &sb, snap, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	store_app_get(r->core->store, NULL, na.id, &na);
	o = jv_obj();
	jv_set(o, "app", api_app_json(r->core, &na));
	jv_set(o, "sandbox", api_sandbox_json(r->core, &sb));
	jv_set_str(o, "snapshot_id", snap);
	api_reply_json(w, 201, o);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route snapshots_routes[] = {
    {.method = "POST",
     .pattern = "/v1/apps/{id}/snapshots",
     .fn = snapshots_create},
    {.method = "GET",
     .pattern = "/v1/apps/{id}/snapshots",
     .fn = snapshots_list_app},
    {.method = "POST", .pattern = "/v1/apps/{id}/restore", .fn = apps_restore},
    {.method = "POST", .pattern = "/v1/apps/{id}/fork", .fn = apps_fork},
    {.method = "POST", .pattern = "/v1/snapshots", .fn = snapshots_create_ref},
    {.method = "GET", .pattern = "/v1/snapshots", .fn = snapshots_list},
    {.method = "GET", .pattern = "/v1/snapshots/{id}", .fn = snapshots_get},
    {.method = "DELETE",
     .pattern = "/v1/snapshots/{id}",
     .fn = snapshots_delete},
    {0},
};
