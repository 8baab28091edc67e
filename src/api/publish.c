/*
 * Publishing (publish/publish.h): POST/GET/PATCH/DELETE
 * /v1/apps/{id}/publish, the releases, rollback.  The build log's route
 * is releaselog.c's, the custom domains' domains.c's.  A release, like
 * its app, belongs to the app's tenant: another tenant's is a 404.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "publish/publish.h"

/* The release JSON of docs/api.md; active: whether it serves. */
static struct jv *
release_json(const struct release *r, bool active)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "id", r->id);
	jv_set_str(o, "app_id", r->app_id);
	jv_set_int(o, "number", r->number);
	jv_set_str(o, "status", r->status);
	jv_set_str(o, "kind", r->kind);
	jv_set_str(o, "source", r->source);
	jv_set_str(o, "source_ref", r->source_ref);
	jv_set_str(o, "commit", r->commit);
	jv_set_str(o, "recipe", r->recipe);
	jv_set_int(o, "size_bytes", r->size_bytes);
	jv_set_int(o, "files", r->files);
	jv_set_int(o, "build_ms", r->build_ms);
	jv_set(o, "error", jv_new_str_lossy(r->error, strlen(r->error)));
	jv_set_bool(o, "active", active);
	jv_set_str(o, "created_by", r->created_by);
	api_set_time_or_null(o, "created_at", r->created_at);
	api_set_time_or_null(o, "finished_at", r->finished_at);
	return o;
}

struct jv *
api_release_json(const struct release *r, bool active)
{
	return release_json(r, active);
}

/* Who asks: the token's name, or "console" for a console session. */
static const char *
actor(const struct req *r)
{
	return r->via == API_VIA_SESSION ? "console" : r->owner;
}

static void
url_of(struct core *c, const char *label, char *out, size_t len)
{
	const struct config *cfg = c->cfg;
	char host[320], port[16] = "";

	/* As a preview's URL: the edge's scheme, its port unless default. */
	if (cfg->http_port != (cfg->preview_tls ? 443 : 80))
		snprintf(port, sizeof(port), ":%u", cfg->http_port);
	publish_app_host(c, label, host, sizeof(host));
	snprintf(out, len, "%s://%s%s", cfg->preview_tls ? "https" : "http",
	         host, port);
}

struct state {
	const char *active;
	struct jv *active_json, *building;
};

static int
find_state(const struct release *r, void *arg)
{
	struct state *s = arg;

	if (s->active_json == NULL && strcmp(r->id, s->active) == 0)
		s->active_json = release_json(r, true);
	if (s->building == NULL && strcmp(r->status, "building") == 0)
		s->building = release_json(r, false);
	return 0;
}

static int
push_domain(const struct domain *d, void *arg)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "host", d->host);
	jv_set_str(o, "app_id", d->app_id);
	jv_set_str(o, "status", d->status);
	jv_set_str(o, "method", d->method);
	jv_set_str(o, "reason", d->reason);
	api_set_time_or_null(o, "checked_at", d->checked_at);
	api_set_time_or_null(o, "verified_at", d->verified_at);
	jv_push(arg, o);
	return 0;
}

/* GET …/publish's object: the publication, its releases' state. */
static struct jv *
publication_json(struct core *c, const struct app *a)
{
	struct jv *o = jv_obj(), *domains = jv_arr();
	struct publication p;
	struct state s = {.active = ""};
	char host[320], url[340];
	bool have = store_publication_get(c->store, a->id, &p) == 0;

	if (have)
		s.active = p.release_id;
	store_release_list(c->store, a->id, find_state, &s);
	jv_set_bool(o, "published", have && p.release_id[0]);
	if (have) {
		publish_app_host(c, p.label, host, sizeof(host));
		url_of(c, p.label, url, sizeof(url));
		jv_set_str(o, "label", p.label);
		jv_set_str(o, "host", host);
		jv_set_str(o, "url", url);
		jv_set_str(o, "visibility", p.visibility);
		api_set_time_or_null(o, "published_at", p.published_at);
	} else {
		jv_set(o, "label", jv_new_null());
		jv_set(o, "host", jv_new_null());
		jv_set(o, "url", jv_new_null());
		jv_set_str(o, "visibility", "public");
		jv_set(o, "published_at", jv_new_null());
	}
	jv_set(o, "release", s.active_json ? s.active_json : jv_new_null());
	jv_set(o, "building", s.building ? s.building : jv_new_null());
	store_domain_list(c->store, a->id, push_domain, domains);
	jv_set(o, "domains", domains);
	return o;
}

static void
publish_post(struct req *r, struct resp *w)
{
	struct publish_request q = {.actor = actor(r)};
	struct jv *body = NULL, *o;
	struct release rel;
	struct publication p;
	struct err e = {0};
	char url[340];
	struct app a;

	if (api_load_app(r, w, &a) < 0 ||
	    api_body_object(r, w, true, &body) < 0)
		return;
	if (api_opt_str(w, body, "commit", 40, &q.commit) < 0 ||
	    api_opt_str(w, body, "snapshot", ULID_LEN, &q.snapshot) < 0 ||
	    api_opt_str(w, body, "label", 63, &q.label) < 0) {
		jv_free(body);
		return;
	}
	if (publish_start(r->core, &a, &q, &rel, &e) < 0) {
		jv_free(body);
		api_reply_err(w, &e);
		return;
	}
	jv_free(body);
	o = jv_obj();
	jv_set(o, "release", release_json(&rel, false));
	if (store_publication_get(r->core->store, a.id, &p) == 0) {
		url_of(r->core, p.label, url, sizeof(url));
		jv_set_str(o, "url", url);
	}
	api_reply_json(w, 202, o);
}

static void
publish_get(struct req *r, struct resp *w)
{
	struct app a;

	if (api_load_app(r, w, &a) == 0)
		api_reply_json(w, 200, publication_json(r->core, &a));
}

static void
publish_patch(struct req *r, struct resp *w)
{
	const char *vis = NULL, *label = NULL;
	struct jv *body = NULL;
	struct publication p;
	struct err e = {0};
	struct app a;
	int rc;

	if (api_load_app(r, w, &a) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	rc = api_opt_str(w, body, "visibility", 7, &vis);
	if (rc == 0)
		rc = api_opt_str(w, body, "label", 63, &label);
	if (rc == 0 && publish_configure(r->core, &a, vis, label, &p, &e) < 0) {
		api_reply_err(w, &e);
		rc = -1;
	}
	jv_free(body);
	if (rc == 0)
		api_reply_json(w, 200, publication_json(r->core, &a));
}

static void
publish_delete(struct req *r, struct resp *w)
{
	struct err e = {0};
	struct app a;

	if (api_load_app(r, w, &a) < 0)
		return;
	if (publish_unpublish(r->core, &a, actor(r), &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_json(w, 200, publication_json(r->core, &a));
}

struct listing {
	const char *active;
	struct jv *arr;
};

static int
push_release(const struct release *rel, void *arg)
{
	struct listing *l = arg;

	jv_push(l->arr, release_json(rel, strcmp(rel->id, l->active) == 0));
	return 0;
}

static void
releases_list(struct req *r, struct resp *w)
{
	struct listing l = {.active = ""};
	struct publication p;
	struct jv *o;
	struct app a;

	if (api_load_app(r, w, &a) < 0)
		return;
	if (store_publication_get(r->core->store, a.id, &p) == 0)
		l.active = p.release_id;
	l.arr = jv_arr();
	if (store_release_list(r->core->store, a.id, push_release, &l) < 0) {
		jv_free(l.arr);
		api_fail(w, 500, "internal", "cannot read the releases");
		return;
	}
	o = jv_obj();
	jv_set(o, "releases", l.arr);
	api_reply_json(w, 200, o);
}

static void
releases_get(struct req *r, struct resp *w)
{
	struct publication p;
	struct release rel;
	struct app a;

	if (api_load_app(r, w, &a) < 0)
		return;
	if (store_release_get(r->core->store, a.owner, r->ids[1], &rel) != 0 ||
	    strcmp(rel.app_id, a.id) != 0) {
		api_fail(w, 404, "not_found", "the app has no such release");
		return;
	}
	api_reply_json(
	    w, 200,
	    release_json(&rel,
	                 store_publication_get(r->core->store, a.id, &p) == 0 &&
	                     strcmp(p.release_id, rel.id) == 0));
}

struct by_number {
	int64_t number;
	char id[ULID_LEN + 1];
};

static int
find_number(const struct release *rel, void *arg)
{
	struct by_number *b = arg;

	if (rel->number != b->number)
		return 0;
	snprintf(b->id, sizeof(b->id), "%s", rel->id);
	return 1;
}

/* body.release: an id, or a number (a JSON number or digits). */
static int
release_arg(struct req *r, struct resp *w, const struct app *a,
            const struct jv *body, char id[ULID_LEN + 1])
{
	const struct jv *v = body ? jv_get(body, "release") : NULL;
	struct by_number b = {0};
	const char *s;

	if (v != NULL && jv_type(v) == JV_INT) {
		b.number = jv_int(v);
	} else if (v != NULL && jv_type(v) == JV_STRING) {
		s = jv_str(v);
		if (ulid_parse(s, id))
			return 0;
		if (s[0] == '\0' || s[strspn(s, "0123456789")] ||
		    strlen(s) > 12)
			b.number = -1;
		else
			b.number = strtoll(s, NULL, 10);
	} else {
		b.number = -1;
	}
	if (b.number <= 0) {
		api_fail(w, 400, "invalid_request",
		         "release must be a release's id or number");
		return -1;
	}
	store_release_list(r->core->store, a->id, find_number, &b);
	if (b.id[0] == '\0') {
		api_fail(w, 404, "not_found", "the app has no release %lld",
		         (long long)b.number);
		return -1;
	}
	snprintf(id, ULID_LEN + 1, "%s", b.id);
	return 0;
}

static void
rollback_post(struct req *r, struct resp *w)
{
	char id[ULID_LEN + 1];
	struct jv *body = NULL;
	struct err e = {0};
	struct app a;
	int rc;

	if (api_load_app(r, w, &a) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	rc = release_arg(r, w, &a, body, id);
	jv_free(body);
	if (rc < 0)
		return;
	if (publish_rollback(r->core, &a, id, actor(r), &e) < 0)
		api_reply_err(w, &e);
	else
		api_reply_json(w, 200, publication_json(r->core, &a));
}

/* The routes of this file, in the router's order (routes.c). */
const struct route publish_routes[] = {
    {.method = "POST", .pattern = "/v1/apps/{id}/publish", .fn = publish_post},
    {.method = "GET", .pattern = "/v1/apps/{id}/publish", .fn = publish_get},
    {.method = "PATCH",
     .pattern = "/v1/apps/{id}/publish",
     .fn = publish_patch},
    {.method = "DELETE",
     .pattern = "/v1/apps/{id}/publish",
     .fn = publish_delete},
    {.method = "GET", .pattern = "/v1/apps/{id}/releases", .fn = releases_list},
    {.method = "GET",
     .pattern = "/v1/apps/{id}/releases/{id}",
     .fn = releases_get},
    {.method = "POST",
     .pattern = "/v1/apps/{id}/rollback",
     .fn = rollback_post},
    {0},
};
