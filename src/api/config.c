/*
 * /v1/apps/{id}/config: the app's configuration, key by key.
 *
 * Keys are environment-variable names ([A-Za-z_][A-Za-z0-9_]{0,127}),
 * since a key marked expose_env becomes one in the app's processes.  A
 * sensitive value is write-only: it is sealed by the store and no answer
 * carries it again (value_set says whether one is stored).  The app
 * belongs to a tenant; another tenant's app is a 404 like a missing one.
 *
 * The key is read from the last segment of the path, not from r->name:
 * the router copies {name} segments into 80 bytes and keys may be 128.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "sandbox/runtime.h"

/* The key in the path, checked; 400 otherwise. */
static int
path_key(struct req *r, struct resp *w, char key[APP_CONFIG_KEY_MAX + 1])
{
	const char *k = strrchr(r->path, '/') + 1;
	size_t n = strlen(k);
	bool ok = n >= 1 && n <= APP_CONFIG_KEY_MAX &&
	          strchr("0123456789", k[0]) == NULL;

	for (size_t i = 0; ok && i < n; i++)
		ok = (k[i] >= 'A' && k[i] <= 'Z') ||
		     (k[i] >= 'a' && k[i] <= 'z') ||
		     (k[i] >= '0' && k[i] <= '9') || k[i] == '_';
	if (!ok) {
		api_fail(w, 400, "invalid_request",
		         "config key must match [A-Za-z_][A-Za-z0-9_]{0,127} "
		         "(it may become an environment variable's name)");
		return -1;
	}
	memcpy(key, k, n + 1);
	return 0;
}

/* The tenant's app named in the path, or a 404. */
static int
load_app(struct req *r, struct resp *w)
{
	struct app a;

	return api_load_app(r, w, &a);
}

static struct jv *
config_json(const struct app_config *c)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "key", c->key);
	jv_set_bool(o, "sensitive", c->sensitive);
	jv_set_bool(o, "expose_env", c->expose_env);
	if (!c->sensitive)
		jv_set_str(o, "value", c->value ? c->value : "");
	jv_set_bool(o, "value_set", c->value_set);
	api_set_time(o, "created_at", c->created_at);
	api_set_time(o, "updated_at", c->updated_at);
	return o;
}

static int
list_one(const struct app_config *c, void *arg)
{
	jv_push(arg, config_json(c));
	return 0;
}

void
config_list(struct req *r, struct resp *w)
{
	struct jv *arr, *o;

	if (load_app(r, w) < 0)
		return;
	arr = jv_arr();
	if (store_app_config_list(r->core->store, r->ids[0], list_one, arr) !=
	    0) {
		jv_free(arr);
		api_fail(w, 500, "internal", "cannot read the config");
		return;
	}
	o = jv_obj();
	jv_set(o, "config", arr);
	api_reply_json(w, 200, o);
}

/* Answers the key's row with status, or a 404 / 500. */
static void
reply_row(struct req *r, struct resp *w, const char *key, int status)
{
	struct app_config c;
	int rc = store_app_config_get(r->core->store, r->ids[0], key, &c);

	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such config key");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot read the config");
	else
		api_reply_json(w, status, config_json(&c));
	store_app_config_release(&c);
}

void
config_get(struct req *r, struct resp *w)
{
	char key[APP_CONFIG_KEY_MAX + 1];

	if (path_key(r, w, key) == 0 && load_app(r, w) == 0)
		reply_row(r, w, key, 200);
}

/* An optional boolean: def when absent or null. */
static int
opt_bool(const struct jv *body, const char *name, bool def, bool *out,
         struct err *e)
{
	struct jv *v = jv_get(body, name);

	*out = def;
	if (v == NULL || jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_BOOL)
		return ERR_BAD(e, "%s must be true or false", name);
	*out = jv_is_true(v);
	return 0;
}

struct put {
	const char *value;
	bool sensitive;
	bool expose_env;
};

/* Checks the body; flags left out keep the key's current ones. */
static int
put_fields(const struct jv *body, const struct app_config *cur, const char *key,
           struct put *p, struct err *e)
{
	struct jv *v = jv_get(body, "value");

	if (v == NULL || jv_type(v) == JV_NULL)
		return ERR_BAD(e, "value is required");
	if (jv_type(v) != JV_STRING)
		return ERR_BAD(e, "value must be a string, not %s",
		               jv_type_name(jv_type(v)));
	if (jv_str_len(v) > APP_CONFIG_VALUE_MAX)
		return ERR_BAD(e, "value is longer than %u bytes",
		               APP_CONFIG_VALUE_MAX);
	if (strlen(jv_str(v)) != jv_str_len(v))
		return ERR_BAD(e, "value must not contain NUL");
	p->value = jv_str(v);
	if (opt_bool(body, "sensitive", cur->sensitive, &p->sensitive, e) < 0 ||
	    opt_bool(body, "expose_env", cur->expose_env, &p->expose_env, e) <
	        0)
		return -1;
	if (p->expose_env && runtime_env_reserved(key))
		return ERR_BAD(e,
		               "expose_env is refused for PATH, HOME, LANG, "
		               "HOST, PORT, LD_* and SANDBOXD_*: the sandbox "
		               "sets them itself or they would change how "
		               "its processes run");
	return 0;
}

static int
put_store(struct req *r, const char *key, const struct put *p, bool *created,
          struct err *e)
{
	int rc = store_app_config_put(r->core->store, r->ids[0], key, p->value,
	                              p->sensitive, p->expose_env, created);

	if (rc == STORE_TOO_MANY)
		return ERR_CONFLICT(e,
		                    "the app has %d config keys, the most "
		                    "it may have",
		                    APP_CONFIG_MAX_KEYS);
	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such app");
	if (rc != 0)
		return ERR_INTERNAL(e, "cannot store the config");
	return 0;
}

/* The key's name on the timeline, never its value (nor whether it is
 * sensitive: the name is all a reader of the timeline needs). */
static void
note_config(struct req *r, const char *key, const char *how)
{
	struct jv *o = jv_obj(), *names = jv_arr();

	jv_push(names, jv_new_str(key));
	jv_set(o, "names", names);
	jv_set_str(o, "change", how);
	api_note(r, r->ids[0], "app.config_changed", NULL, o,
	         "The app's config %s was %s.", key, how);
}

void
config_put(struct req *r, struct resp *w)
{
	char key[APP_CONFIG_KEY_MAX + 1];
	struct app_config cur;
	struct put p = {0};
	struct err e = {0};
	struct jv *body;
	bool created = false;

	if (path_key(r, w, key) < 0 || load_app(r, w) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	if (store_app_config_get(r->core->store, r->ids[0], key, &cur) < 0)
		ERR_INTERNAL(&e, "cannot read the config");
	if (e.status == 0 && put_fields(body, &cur, key, &p, &e) == 0)
		put_store(r, key, &p, &created, &e);
	store_app_config_release(&cur);
	if (p.sensitive && p.value) {
		/* The JSON library's copy, and the raw body. */
		vault_wipe((char *)p.value, strlen(p.value));
		vault_wipe(r->body.data, r->body.len);
	}
	jv_free(body);
	if (e.status) {
		api_reply_err(w, &e);
		return;
	}
	/* The app's processes get the new environment (a no-op when the
	 * exposed entries did not change). */
	core_app_config_changed(r->core, r->ids[0]);
	note_config(r, key, created ? "added" : "changed");
	reply_row(r, w, key, created ? 201 : 200);
}

void
config_delete(struct req *r, struct resp *w)
{
	char key[APP_CONFIG_KEY_MAX + 1];
	int rc;

	if (path_key(r, w, key) < 0 || load_app(r, w) < 0)
		return;
	rc = store_app_config_delete(r->core->store, r->ids[0], key);
	if (rc == STORE_NOT_FOUND)
		api_fail(w, 404, "not_found", "no such config key");
	else if (rc != 0)
		api_fail(w, 500, "internal", "cannot delete the config");
	else {
		core_app_config_changed(r->core, r->ids[0]);
		note_config(r, key, "removed");
		api_reply_empty(w, 204);
	}
}

/* The routes of this file, in the router's order (routes.c). */
const struct route config_routes[] = {
    {.method = "GET", .pattern = "/v1/apps/{id}/config", .fn = config_list},
    /*
     * {name} is the config key here.  r->name keeps 79 bytes of it and
     * keys may have 128, so the handlers above read the key from the
     * path's last segment themselves.
     */
    {.method = "GET",
     .pattern = "/v1/apps/{id}/config/{name}",
     .fn = config_get},
    {.method = "PUT",
     .pattern = "/v1/apps/{id}/config/{name}",
     .fn = config_put},
    {.method = "DELETE",
     .pattern = "/v1/apps/{id}/config/{name}",
     .fn = config_delete},
    {0},
};
