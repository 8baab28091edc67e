/*
 * /v1/apps: durable projects.  Apps belong to the tenant of the token that
 * made them; another tenant gets 404, never a hint that the id exists.
 * Field checks live in app_fields(), shared by create and patch, so both
 * refuse the same things with the same words.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "disk/diskuse.h"
#include "sandbox/presets.h"
#include "preview/pvauth.h"
#include "trash/trash.h"
#include "spend/spend.h"
#include "lib/clock.h"
#include "lib/limits.h"

struct jv *
api_app_json(const struct core *c, const struct app *a)
{
	struct jv *o = jv_obj(), *tags;
	struct diskuse_figure du;
	char err[64];

	jv_set_str(o, "id", a->id);
	jv_set_str(o, "name", a->name);
	jv_set_str(o, "description", a->description);
	tags =
	    jv_parse(a->tags_json, strlen(a->tags_json), 4, err, sizeof(err));
	jv_set(o, "tags", tags ? tags : jv_arr());
	if (a->runtime_preset[0])
		jv_set_str(o, "runtime_preset", a->runtime_preset);
	if (a->current_sandbox_id[0])
		jv_set_str(o, "current_sandbox_id", a->current_sandbox_id);
	if (a->git_repo_url[0]) {
		struct jv *g = jv_obj();

		jv_set_str(g, "repo_url", a->git_repo_url);
		if (a->git_branch[0])
			jv_set_str(g, "branch", a->git_branch);
		if (a->git_credential_id[0])
			jv_set_str(g, "credential_id", a->git_credential_id);
		if (a->last_import_at)
			api_set_time(g, "last_import_at", a->last_import_at);
		jv_set(o, "git", g);
	}
	if (diskuse_get(c->du, a->id, &du)) {
		struct jv *d = jv_obj();

		jv_set_int(d, "bytes", du.bytes);
		jv_set_int(d, "own", du.bytes - du.shared);
		jv_set_int(d, "shared", du.shared);
		jv_set_int(d, "releases", du.releases);
		jv_set_int(d, "releases_bytes", du.releases_bytes);
		jv_set_int(d, "total_bytes", du.bytes + du.releases_bytes);
		api_set_time(d, "measured_at", du.measured_at);
		if (du.partial)
			jv_set_bool(d, "partial", true);
		jv_set(o, "disk", d);
	}
	if (a->preview_visibility[0])
		jv_set_str(o, "preview_visibility", a->preview_visibility);
	else
		jv_set(o, "preview_visibility", jv_new_null());
	jv_set_str(o, "preview_visibility_effective",
	           pvauth_effective(c, a->preview_visibility));
	api_set_time(o, "created_at", a->created_at);
	api_set_time(o, "updated_at", a->updated_at);
	return o;
}

static int
check_string(const struct jv *v, const char *field, size_t max, bool nonempty,
             struct err *e)
{
	if (jv_type(v) != JV_STRING)
		return ERR_BAD(e, "%s must be a string, not %s", field,
		               jv_type_name(jv_type(v)));
	if (nonempty && jv_str_len(v) == 0)
		return ERR_BAD(e, "%s must not be empty", field);
	if (jv_str_len(v) > max)
		return ERR_BAD(e, "%s is longer than %zu bytes", field, max);
	if (strlen(jv_str(v)) != jv_str_len(v))
		return ERR_BAD(e, "%s must not contain NUL", field);
	return 0;
}

static int
check_tags(const struct jv *v, struct app *a, struct err *e)
{
	struct buf b;

	if (jv_type(v) != JV_ARRAY)
		return ERR_BAD(e, "tags must be an array of strings, not %s",
		               jv_type_name(jv_type(v)));
	if (jv_len(v) > API_MAX_TAGS)
		return ERR_BAD(e, "tags has more than %d entries",
		               API_MAX_TAGS);
	for (size_t i = 0; i < jv_len(v); i++)
		if (check_string(jv_at(v, i), "each tag", API_MAX_TAG_BYTES,
		                 true, e) < 0)
			return -1;
	buf_init(&b, sizeof(a->tags_json) - 1);
	if (jv_dump(v, &b) < 0) {
		buf_release(&b);
		return ERR_BAD(e, "tags are too long");
	}
	snprintf(a->tags_json, sizeof(a->tags_json), "%s", b.data);
	buf_release(&b);
	return 0;
}

/*
 * git {repo_url, branch?, credential_id?}: where the app's sandboxes are
 * cloned from and pushes go (https, no credentials in the URL), and the
 * import branch, which pushes never write; without one the remote's
 * default branch is cloned and recorded.  The credential must be the
 * tenant's own.  Set at create, or set and cleared by a PATCH.
 */
static int
git_fields(struct store *s, const struct jv *g, struct app *a, struct err *e)
{
	struct jv *url = jv_get(g, "repo_url"), *br = jv_get(g, "branch");
	struct jv *cred = jv_get(g, "credential_id");
	struct git_credential c;
	const char *k;
	struct jv *v;
	void *it = NULL;
	int rc;

	if (jv_type(g) != JV_OBJECT)
		return ERR_BAD(e, "git must be an object {repo_url, branch?, "
		                  "credential_id?}");
	a->git_credential_id[0] = '\0';
	while (jv_each(g, &it, &k, &v))
		if (strcmp(k, "repo_url") && strcmp(k, "branch") &&
		    strcmp(k, "credential_id"))
			return ERR_BAD(e,
			               "unknown field git.%.64s (known: "
			               "repo_url, branch, credential_id)",
			               k);
	if (url == NULL || jv_type(url) != JV_STRING)
		return ERR_BAD(e, "git.repo_url is required (a string)");
	if (api_git_url_check(jv_str(url), jv_str_len(url), e) < 0)
		return -1;
	if (br && (jv_type(br) != JV_STRING ||
	           !api_git_branch_ok(jv_str(br), jv_str_len(br))))
		return ERR_BAD(e, "git.branch must match "
		                  "[A-Za-z0-9][A-Za-z0-9._/-]{0,254}, without "
		                  "\"..\"");
	if (cred) {
		if (jv_type(cred) != JV_STRING || jv_str_len(cred) != ULID_LEN)
			return ERR_BAD(e, "git.credential_id must be a "
			                  "credential id");
		rc = store_gitcred_get(s, a->owner, jv_str(cred), &c);
		if (rc == STORE_NOT_FOUND)
			return ERR_NOTFOUND(e, "no such git credential");
		if (rc != 0)
			return ERR_INTERNAL(e, "cannot read the credential");
		snprintf(a->git_credential_id, sizeof(a->git_credential_id),
		         "%s", c.id);
	}
	snprintf(a->git_repo_url, sizeof(a->git_repo_url), "%s", jv_str(url));
	snprintf(a->git_branch, sizeof(a->git_branch), "%s",
	         br ? jv_str(br) : "");
	return 0;
}

/* Applies the fields present in body to a; create requires name. */
static int
app_fields(const struct jv *body, struct app *a, bool create, struct err *e)
{
	struct jv *name = jv_get(body, "name"),
	          *desc = jv_get(body, "description");
	struct jv *tags = jv_get(body, "tags"), *preset;
	struct jv *vis = jv_get(body, "preview_visibility");

	if (name == NULL && create)
		return ERR_BAD(e, "name is required");
	if (name && check_string(name, "name", API_MAX_NAME_BYTES, true, e) < 0)
		return -1;
	if (desc &&
	    check_string(desc, "description", API_MAX_DESC_BYTES, false, e) < 0)
		return -1;
	if (tags && check_tags(tags, a, e) < 0)
		return -1;
	if (create && (preset = jv_get(body, "runtime_preset")) != NULL) {
		if (check_string(preset, "runtime_preset", 31, false, e) < 0)
			return -1;
		if (jv_str_len(preset) && !preset_find(jv_str(preset)))
			return ERR_BAD(e,
			               "unknown runtime_preset \"%s\" "
			               "(known: %s)",
			               jv_str(preset), preset_names());
		snprintf(a->runtime_preset, sizeof(a->runtime_preset), "%s",
		         jv_str(preset));
	}
	if (vis && jv_type(vis) != JV_NULL &&
	    (jv_type(vis) != JV_STRING || !pvauth_visibility_ok(jv_str(vis)) ||
	     jv_str_len(vis) == 0))
		return ERR_BAD(e, "preview_visibility must be \"public\", "
		                  "\"private\" or null (the instance default)");
	if (vis)
		snprintf(a->preview_visibility, sizeof(a->preview_visibility),
		         "%s", jv_type(vis) == JV_NULL ? "" : jv_str(vis));
	if (name)
		snprintf(a->name, sizeof(a->name), "%s", jv_str(name));
	if (desc)
		snprintf(a->description, sizeof(a->description), "%s",
		         jv_str(desc));
	return 0;
}

void
apps_create(struct req *r, struct resp *w)
{
	struct app a = {0};
	struct err e = {0};
	struct jv *body;

	if (api_body_object(r, w, false, &body) < 0)
		return;
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	snprintf(a.owner, sizeof(a.owner), "%s", r->owner);
	if (app_fields(body, &a, true, &e) < 0 ||
	    (jv_get(body, "git") &&
	     git_fields(r->core->store, jv_get(body, "git"), &a, &e) < 0)) {
		jv_free(body);
		api_reply_err(w, &e);
		return;
	}
	jv_free(body);
	ulid_new(a.id);
	a.created_at = a.updated_at = clock_now();
	if (store_app_insert(r->core->store, &a) != 0) {
		api_fail(w, 500, "internal", "cannot store the app");
		return;
	}
	pvauth_put(r->core, a.id, a.preview_visibility, a.preview_epoch);
	api_note(r, a.id, "app.created", NULL, NULL, "The app was created.");
	api_reply_json(w, 201, api_app_json(r->core, &a));
}

/*
 * The app's snapshots in its disk object (docs/snapshots.md): after the
 * app's JSON, outside the store's lock (a list's callback holds it).
 * total_bytes (the workspace and the releases so far) gets them too.
 */
static void
disk_snapshots(struct core *c, struct jv *o, const char *app_id)
{
	struct jv *d = jv_get(o, "disk");
	int64_t n, b;

	if (d && store_snapshot_usage(c->store, app_id, &n, &b) == 0) {
		jv_set_int(d, "snapshots", n);
		jv_set_int(d, "snapshot_bytes", b);
		jv_set_int(d, "total_bytes",
		           jv_int(jv_get(d, "total_bytes")) + b);
	}
}

struct list_ctx {
	struct jv *arr;
	const struct core *c;
};

static int
list_one(const struct app *a, void *arg)
{
	struct list_ctx *l = arg;

	jv_push(l->arr, api_app_json(l->c, a));
	return 0;
}

void
apps_list(struct req *r, struct resp *w)
{
	struct list_ctx l = {.arr = jv_arr(), .c = r->core};
	struct jv *o;

	if (store_app_list(r->core->store, r->owner, list_one, &l) < 0) {
		jv_free(l.arr);
		api_fail(w, 500, "internal", "cannot read apps");
		return;
	}
	/* The spend after the list: its callback runs under the store's
	 * lock, which a spend read takes too. */
	for (size_t i = 0; i < jv_len(l.arr); i++) {
		struct jv *a = jv_at(l.arr, i);
		const char *id = jv_str(jv_get(a, "id"));
		if (id) {
			jv_set(a, "spend", api_app_spend_json(r->core, id));
			disk_snapshots(r->core, a, id);
		}
	}
	o = jv_obj();
	jv_set(o, "apps", l.arr);
	api_reply_json(w, 200, o);
}

void
apps_get(struct req *r, struct resp *w)
{
	struct app a;
	struct jv *o;

	if (api_load_app(r, w, &a) < 0)
		return;
	o = api_app_json(r->core, &a);
	jv_set(o, "spend", api_app_spend_json(r->core, a.id));
	disk_snapshots(r->core, o, a.id);
	api_reply_json(w, 200, o);
}

/*
 * A PATCH's git: null clears the remote (pushes then answer
 * no_repo_url, new sandboxes are not cloned), an object sets it with
 * the checks of a create.
 */
static int
patch_git(struct store *s, const struct jv *g, struct app *a, struct err *e)
{
	if (jv_type(g) != JV_NULL)
		return git_fields(s, g, a, e);
	a->git_repo_url[0] = a->git_branch[0] = a->git_credential_id[0] = '\0';
	return 0;
}

/* A pair {"from":…, "to":…} for the timeline. */
static struct jv *
from_to(const char *from, const char *to)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "from", from);
	jv_set_str(o, "to", to);
	return o;
}

/* What a patch changed that the timeline shows: the name, the preview's
 * visibility ("" is the instance's default). */
static void
patch_notes(struct req *r, const struct app *a, const char *name,
            const char *vis)
{
	if (strcmp(name, a->name) != 0)
		api_note(r, a->id, "app.renamed", NULL, from_to(name, a->name),
		         "The app was renamed.");
	if (strcmp(vis, a->preview_visibility) != 0)
		api_note(r, a->id, "app.visibility_changed", NULL,
		         from_to(vis[0] ? vis : "default",
		                 a->preview_visibility[0]
		                     ? a->preview_visibility
		                     : "default"),
		         "The preview's visibility was changed.");
}

void
apps_patch(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct jv *body, *g, *budget, *own, *o;
	struct store_budget b, ob;
	char why[160];
	struct app a;
	char vis[sizeof(a.preview_visibility)], name[sizeof(a.name)];

	if (api_body_object(r, w, false, &body) < 0)
		return;
	g = jv_get(body, "git");
	if (api_load_app(r, w, &a) < 0)
		goto fail;
	memcpy(vis, a.preview_visibility, sizeof(vis));
	memcpy(name, a.name, sizeof(name));
	budget = jv_get(body, "budget");
	own = jv_get(body, "own_model_calls");
	if (app_fields(body, &a, false, &e) < 0 ||
	    (g && patch_git(r->core->store, g, &a, &e) < 0) ||
	    (budget && spend_budget_parse(budget, &b, why, sizeof(why)) < 0 &&
	     ERR_BAD(&e, "budget: %s", why) < 0) ||
	    (own && api_own_calls_parse(own, &ob, &e) < 0)) {
	fail:
		jv_free(body);
		if (e.status)
			api_reply_err(w, &e);
		return;
	}
	jv_free(body);
	a.updated_at = clock_now();
	/* Any change of visibility ends the links and cookies given so far. */
	if (strcmp(vis, a.preview_visibility) != 0)
		a.preview_epoch++;
	if (store_app_update(r->core->store, &a) != 0 ||
	    (g && store_app_set_git(r->core->store, &a) != 0) ||
	    (strcmp(vis, a.preview_visibility) != 0 &&
	     store_app_set_preview(r->core->store, &a) != 0) ||
	    (budget &&
	     store_budget_set(r->core->store, "app", a.id, &b) != 0) ||
	    (own && store_budget_set(r->core->store, SPEND_APP_CALLS, a.id,
	                             &ob) != 0)) {
		api_fail(w, 500, "internal", "cannot store the app");
		return;
	}
	if (strcmp(vis, a.preview_visibility) != 0) {
		pvauth_put(r->core, a.id, a.preview_visibility,
		           a.preview_epoch);
		pvauth_forget_codes(r->core, a.id);
	}
	patch_notes(r, &a, name, vis);
	/* what the store keeps of the import (last_import_at) */
	if (g && store_app_get(r->core->store, r->owner, a.id, &a) != 0) {
		api_fail(w, 500, "internal", "cannot read the app");
		return;
	}
	o = api_app_json(r->core, &a);
	jv_set(o, "spend", api_app_spend_json(r->core, a.id));
	disk_snapshots(r->core, o, a.id);
	api_reply_json(w, 200, o);
}

void
apps_delete(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct app a;

	if (api_load_app(r, w, &a) < 0)
		return;
	/* 204 as before the trash; the headers say how to undo it. */
	if (trash_app(r->core, &a, w->trash_id, &e) < 0) {
		api_reply_err(w, &e);
		return;
	}
	api_reply_empty(w, 204);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route apps_routes[] = {
    {.method = "GET", .pattern = "/v1/apps", .fn = apps_list},
    {.method = "POST", .pattern = "/v1/apps", .fn = apps_create},
    {.method = "GET", .pattern = "/v1/apps/{id}", .fn = apps_get},
    {.method = "PATCH", .pattern = "/v1/apps/{id}", .fn = apps_patch},
    {.method = "DELETE", .pattern = "/v1/apps/{id}", .fn = apps_delete},
    {0},
};
