/*
 * /v1/tokens: the API tokens, for operators only.  A token's name is its
 * tenant.  Tokens of SANDBOXD_API_TOKENS are listed but are the
 * environment's to change (409 here); stored ones are made (shown once,
 * kept as a SHA-256 hash) and deleted here.  auth_check() looks stored
 * tokens up in the store on every request, so a new token works and a
 * deleted one fails from the next request on, on every thread, with no
 * cache to go stale.
 *
 * Changes are serialized by one lock, so two deletes cannot each leave
 * the other as "the last operator token" and together remove both: at
 * least one operator token always remains, so the instance-wide
 * settings stay reachable.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "api/auth.h"
#include "lib/clock.h"

static pthread_mutex_t tokens_mu = PTHREAD_MUTEX_INITIALIZER;

static bool
refused(struct req *r, struct resp *w)
{
	if (r->operator)
		return false;
	api_fail(w, 403, "operator_only",
	         "API tokens are managed by operators only (the first-start "
	         "token \"default\" or one named in SANDBOXD_OPERATORS)");
	return true;
}

static struct jv *
token_json(struct auth *a, const char *name, const char *source,
           int64_t created, int64_t used)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "name", name);
	jv_set_str(o, "source", source);
	jv_set_bool(o, "operator", auth_name_operator(a, name));
	if (created)
		api_set_time(o, "created_at", created);
	else
		jv_set(o, "created_at", jv_new_null());
	if (used)
		api_set_time(o, "last_used_at", used);
	else
		jv_set(o, "last_used_at", jv_new_null());
	return o;
}

struct listing {
	struct auth *a;
	struct jv *arr;
	const char *skip; /* count_operators: the name being deleted */
	size_t operators; /* operator tokens seen (but skip) */
	bool found;       /* skip was among them */
};

static int
list_one(const struct apikey *k, void *arg)
{
	struct listing *l = arg;

	jv_push(l->arr, token_json(l->a, k->name, "stored", k->created_at,
	                           k->last_used_at));
	return 0;
}

void
tokens_list(struct req *r, struct resp *w)
{
	struct listing l = {.a = api_auth(r), .arr = jv_arr()};
	struct jv *o;

	if (refused(r, w)) {
		jv_free(l.arr);
		return;
	}
	for (size_t i = 0; i < auth_env_count(l.a); i++)
		jv_push(l.arr,
		        token_json(l.a, auth_env_name(l.a, i), "env", 0, 0));
	if (store_apikey_list(r->core->store, list_one, &l) < 0) {
		jv_free(l.arr);
		api_fail(w, 500, "internal", "cannot read the tokens");
		return;
	}
	o = jv_obj();
	jv_set(o, "tokens", l.arr);
	api_reply_json(w, 200, o);
}

void
tokens_create(struct req *r, struct resp *w)
{
	char token[VAULT_TOKEN_LEN + 1], name[64];
	struct auth *a = api_auth(r);
	struct jv *body, *n, *o;
	int rc;

	if (refused(r, w) || api_body_object(r, w, false, &body) < 0)
		return;
	n = jv_get(body, "name");
	if (n == NULL || jv_type(n) != JV_STRING ||
	    !auth_name_ok(jv_str(n), jv_str_len(n))) {
		jv_free(body);
		api_fail(w, 400, "invalid_request",
		         "name must be 1 to 63 characters of A-Z, a-z, 0-9, "
		         "'.', '_' and '-'");
		return;
	}
	snprintf(name, sizeof(name), "%s", jv_str(n));
	jv_free(body);
	if (auth_env_has(a, name)) {
		api_fail(w, 409, "conflict",
		         "the token named %s comes from SANDBOXD_API_TOKENS: "
		         "change it there",
		         name);
		return;
	}
	pthread_mutex_lock(&tokens_mu);
	rc = auth_token_make(r->core->store, name, token);
	pthread_mutex_unlock(&tokens_mu);
	if (rc < 0) {
		api_fail(w, 500, "internal", "cannot store the token");
		return;
	}
	o = jv_obj();
	jv_set_str(o, "name", name);
	jv_set_str(o, "token", token);
	jv_set_bool(o, "operator", auth_name_operator(a, name));
	api_set_time(o, "created_at", clock_now());
	vault_wipe(token, sizeof(token));
	api_reply_json(w, 201, o);
}

static int
count_one(const struct apikey *k, void *arg)
{
	struct listing *l = arg;

	if (strcmp(k->name, l->skip) == 0)
		l->found = true;
	else if (auth_name_operator(l->a, k->name))
		l->operators++;
	return 0;
}

/* Under tokens_mu: 204, or why the token stays. */
static void
delete_locked(struct req *r, struct resp *w, struct auth *a, const char *name)
{
	struct listing l = {.a = a, .skip = name};

	if (store_apikey_list(r->core->store, count_one, &l) < 0) {
		api_fail(w, 500, "internal", "cannot read the tokens");
		return;
	}
	for (size_t i = 0; i < auth_env_count(a); i++)
		if (auth_name_operator(a, auth_env_name(a, i)))
			l.operators++;
	if (!l.found && auth_env_has(a, name))
		api_fail(w, 409, "conflict",
		         "the token named %s comes from SANDBOXD_API_TOKENS: "
		         "remove it there",
		         name);
	else if (!l.found)
		api_fail(w, 404, "not_found", "no token named %s", name);
	else if (auth_name_operator(a, name) && l.operators == 0)
		api_fail(w, 409, "conflict",
		         "%s is the last operator token: make another one "
		         "first (POST /v1/tokens with an operator's name)",
		         name);
	else if (store_apikey_delete(r->core->store, name) != 0)
		api_fail(w, 500, "internal", "cannot delete the token");
	else
		api_reply_empty(w, 204);
}

void
tokens_delete(struct req *r, struct resp *w)
{
	if (refused(r, w))
		return;
	if (!auth_name_ok(r->name, strlen(r->name))) {
		api_fail(w, 400, "invalid_request",
		         "a token name is 1 to 63 characters of A-Z, a-z, 0-9, "
		         "'.', '_' and '-'");
		return;
	}
	pthread_mutex_lock(&tokens_mu);
	delete_locked(r, w, api_auth(r), r->name);
	pthread_mutex_unlock(&tokens_mu);
}

/* The routes of this file, in the router's order (routes.c). */
const struct route tokens_routes[] = {
    {.method = "GET", .pattern = "/v1/tokens", .fn = tokens_list},
    {.method = "POST", .pattern = "/v1/tokens", .fn = tokens_create},
    {.method = "DELETE", .pattern = "/v1/tokens/{name}", .fn = tokens_delete},
    {0},
};
