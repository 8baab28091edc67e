/*
 * /v1/settings: instance settings.  GET shows them (never a secret);
 * PATCH edits the few that can change at run time, through a strict
 * allow-list: an unknown field is a 400, not silently ignored, so a typo
 * cannot look like it worked.  Edits merge: fields left out keep their
 * value, and "" or null clears one.  Everything a PATCH changes is
 * written in one transaction, after every field was checked.
 *
 * Editable: agents.default_models.<agent> (the model a task of that
 * agent uses when it names none).  Default models belong to a scope like
 * agent credentials do: a PATCH sets the caller's tenant's, or with
 * ?scope=instance (operators only, api_scope) the instance-wide ones
 * that a tenant's tasks use when the tenant set none.  GET shows the
 * caller's tenant's, the instance's, and which one its tasks use.
 *
 * Editable by operators only: lifecycle.idle_threshold_seconds, the
 * idle reaper's threshold for the whole instance (core.h), stored like
 * the rest and then applied, both under one lock so the value in use is
 * always the last one stored.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "api/api.h"
#include "lib/limits.h"

#define EDITABLE    "agents.default_models"
#define EDITABLE_OP "agents.default_models, lifecycle.idle_threshold_seconds"

static pthread_mutex_t patch_mu = PTHREAD_MUTEX_INITIALIZER;

static struct jv *
json_null(void)
{
	char err[16];

	return jv_parse("null", 4, 1, err, sizeof(err));
}

/*
 * Each agent's default model in owner's scope, or with fallback the
 * instance's where owner set none.
 */
static struct jv *
models_json(struct req *r, const char *owner, bool fallback)
{
	struct jv *models = jv_obj();
	char model[STORE_SETTING_MAX_BYTES + 1];

	for (size_t i = 0; i < agents_count; i++) {
		const struct agent_def *a = &agents[i];
		int rc = store_agent_default_model(
		    r->core->store, owner, a->name, model, sizeof(model));
		if (rc != 0 && fallback)
			rc = store_agent_default_model(
			    r->core->store, "", a->name, model, sizeof(model));
		jv_set(models, a->name,
		       rc == 0 ? jv_new_str(model) : json_null());
	}
	return models;
}

static struct jv *
settings_json(struct req *r)
{
	struct jv *o = jv_obj(), *ag = jv_obj(), *ed, *lc;

	jv_set_str(ag, "default_agent", r->core->cfg->default_agent);
	jv_set(ag, "default_models", models_json(r, r->owner, true));
	jv_set(ag, "tenant_default_models", models_json(r, r->owner, false));
	jv_set(ag, "instance_default_models", models_json(r, "", false));
	jv_set_str(ag, "free_model", r->core->cfg->opencode_free_model);
	jv_set(o, "agents", ag);
	lc = jv_obj();
	jv_set_int(lc, "idle_threshold_seconds", core_idle_threshold(r->core));
	jv_set_str(lc, "default_idle_policy", "sleep");
	jv_set(o, "lifecycle", lc);
	ed = jv_arr();
	jv_push(ed, jv_new_str(EDITABLE));
	if (r->operator)
		jv_push(ed, jv_new_str(CORE_IDLE_SETTING));
	jv_set(o, "editable", ed);
	jv_set_str(o, "tenant", r->owner);
	jv_set_bool(o, "operator", r->operator);
	jv_set_str(o, "version", SANDBOXD_VERSION);
	return o;
}

void
settings_get(struct req *r, struct resp *w)
{
	api_reply_json(w, 200, settings_json(r));
}

/* What a PATCH sets, once every field was checked. */
struct patch {
	const char *owner; /* the scope: a tenant's name, "" the instance */
	bool operator;
	char keys[8][STORE_SETTING_KEY_LEN];
	const char *vals[8];
	size_t n;
	bool idle_set;     /* lifecycle.idle_threshold_seconds given */
	int64_t idle;      /* its value, 0: cleared */
	char idle_val[24]; /* as stored */
};

/* A model id: printable ASCII without spaces, not an option. */
static int
check_model(const struct jv *v, const char *agent, struct err *e)
{
	const char *s = jv_str(v);

	if (jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_STRING)
		return ERR_BAD(e,
		               "agents.default_models.%s must be a string or "
		               "null, not %s",
		               agent, jv_type_name(jv_type(v)));
	if (jv_str_len(v) > TASK_MAX_MODEL_BYTES)
		return ERR_BAD(e,
		               "agents.default_models.%s is longer than %d "
		               "bytes",
		               agent, TASK_MAX_MODEL_BYTES);
	for (size_t i = 0; i < jv_str_len(v); i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return ERR_BAD(e,
			               "agents.default_models.%s must be "
			               "printable ASCII without spaces",
			               agent);
	if (s[0] == '-')
		return ERR_BAD(e,
		               "agents.default_models.%s must not start with "
		               "'-'",
		               agent);
	return 0;
}

static int
patch_models(const struct jv *models, struct patch *p, struct err *e)
{
	const struct agent_def *a;
	char known[128];
	struct jv *v;
	const char *k;
	void *it = NULL;

	if (jv_type(models) != JV_OBJECT)
		return ERR_BAD(e, "agents.default_models must be an object "
		                  "of agent ids to models");
	while (jv_each(models, &it, &k, &v)) {
		if ((a = agent_find(k)) == NULL) {
			agent_names(", ", known, sizeof(known));
			return ERR_BAD(e,
			               "agents.default_models: unknown agent "
			               "(known: %s)",
			               known);
		}
		if (check_model(v, a->name, e) < 0)
			return -1;
		if (p->n == sizeof(p->vals) / sizeof(p->vals[0]))
			return ERR_BAD(e, "agents.default_models has too many "
			                  "entries");
		if (store_agent_model_key(p->owner, a->name, p->keys[p->n],
		                          sizeof(p->keys[0])) < 0)
			return ERR_BAD(e, "the tenant's name is too long");
		p->vals[p->n++] = jv_type(v) == JV_NULL ? NULL : jv_str(v);
	}
	return 0;
}

/* lifecycle {idle_threshold_seconds: N | null}: operators only. */
static int
patch_lifecycle(const struct jv *lc, struct patch *p, struct err *e)
{
	const struct jv *v;
	const char *k;
	struct jv *x;
	void *it = NULL;

	if (!p->operator)
		return err_set(
		    e, 403, "operator_only",
		    "lifecycle settings apply to the whole instance: "
		    "only an operator token may change them");
	if (jv_type(lc) != JV_OBJECT)
		return ERR_BAD(e, "lifecycle must be an object");
	while (jv_each(lc, &it, &k, &x))
		if (strcmp(k, "idle_threshold_seconds") != 0)
			return ERR_BAD(e,
			               "lifecycle.%.64s is not an editable "
			               "setting (editable: " EDITABLE_OP ")",
			               k);
	v = jv_get(lc, "idle_threshold_seconds");
	if (v == NULL)
		return 0;
	if (jv_type(v) != JV_NULL &&
	    (jv_type(v) != JV_INT || jv_int(v) < CORE_IDLE_MIN_S ||
	     jv_int(v) > CORE_IDLE_MAX_S))
		return ERR_BAD(e,
		               "lifecycle.idle_threshold_seconds must be an "
		               "integer from %d to %d, or null (back to "
		               "SANDBOXD_IDLE_THRESHOLD_SECONDS)",
		               CORE_IDLE_MIN_S, CORE_IDLE_MAX_S);
	p->idle_set = true;
	p->idle = jv_type(v) == JV_NULL ? 0 : jv_int(v);
	snprintf(p->idle_val, sizeof(p->idle_val), "%lld", (long long)p->idle);
	snprintf(p->keys[p->n], sizeof(p->keys[0]), "%s", CORE_IDLE_SETTING);
	p->vals[p->n++] = p->idle ? p->idle_val : NULL;
	return 0;
}

static int
patch_parse(const struct jv *body, struct patch *p, struct err *e)
{
	struct jv *ag, *v;
	const char *k;
	void *it = NULL;

	while (jv_each(body, &it, &k, &v))
		if (strcmp(k, "agents") != 0 && strcmp(k, "lifecycle") != 0)
			return ERR_BAD(e,
			               "%.64s is not an editable setting "
			               "(editable: %s)",
			               k, p->operator? EDITABLE_OP : EDITABLE);
	v = jv_get(body, "lifecycle");
	if (v && patch_lifecycle(v, p, e) < 0)
		return -1;
	ag = jv_get(body, "agents");
	if (ag == NULL)
		return 0;
	if (jv_type(ag) != JV_OBJECT)
		return ERR_BAD(e, "agents must be an object");
	it = NULL;
	while (jv_each(ag, &it, &k, &v))
		if (strcmp(k, "default_models") != 0)
			return ERR_BAD(
			    e,
			    "agents.%.64s is not an editable setting "
			    "(editable: " EDITABLE ")",
			    k);
	v = jv_get(ag, "default_models");
	return v ? patch_models(v, p, e) : 0;
}

void
settings_patch(struct req *r, struct resp *w)
{
	struct patch p = {.n = 0, .operator= r->operator};
	struct err e = {0};
	struct jv *body;
	const char *keys[8];

	if (api_scope(r, w, &p.owner) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	if (patch_parse(body, &p, &e) == 0 && p.n == 0)
		ERR_BAD(&e, "no editable fields provided (editable: %s)",
		        p.operator? EDITABLE_OP : EDITABLE);
	for (size_t i = 0; i < p.n; i++)
		keys[i] = p.keys[i];
	pthread_mutex_lock(&patch_mu);
	if (e.status == 0 &&
	    store_setting_set(r->core->store, keys, p.vals, p.n) != 0)
		ERR_INTERNAL(&e, "cannot store the settings");
	else if (e.status == 0 && p.idle_set)
		core_idle_threshold_apply(r->core, p.idle);
	pthread_mutex_unlock(&patch_mu);
	jv_free(body);
	if (e.status) {
		api_reply_err(w, &e);
		return;
	}
	api_reply_json(w, 200, settings_json(r));
}

/* The routes of this file, in the router's order (routes.c). */
const struct route settings_routes[] = {
    {.method = "GET", .pattern = "/v1/settings", .fn = settings_get},
    {.method = "PATCH", .pattern = "/v1/settings", .fn = settings_patch},
    {0},
};
