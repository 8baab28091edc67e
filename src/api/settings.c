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
 */
#include <stdio.h>
#include <string.h>

#include "agent/agents.h"
#include "api/api.h"
#include "lib/limits.h"

#define EDITABLE "agents.default_models"

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
	struct jv *o = jv_obj(), *ag = jv_obj(), *ed;

	jv_set_str(ag, "default_agent", r->core->cfg->default_agent);
	jv_set(ag, "default_models", models_json(r, r->owner, true));
	jv_set(ag, "tenant_default_models", models_json(r, r->owner, false));
	jv_set(ag, "instance_default_models", models_json(r, "", false));
	jv_set_str(ag, "free_model", r->core->cfg->opencode_free_model);
	jv_set(o, "agents", ag);
	ed = jv_arr();
	jv_push(ed, jv_new_str(EDITABLE));
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
	char keys[8][STORE_SETTING_KEY_LEN];
	const char *vals[8];
	size_t n;
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

static int
patch_parse(const struct jv *body, struct patch *p, struct err *e)
{
	struct jv *ag, *v;
	const char *k;
	void *it = NULL;

	while (jv_each(body, &it, &k, &v))
		if (strcmp(k, "agents") != 0)
			return ERR_BAD(e,
			               "%.64s is not an editable setting "
			               "(editable: " EDITABLE ")",
			               k);
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
	struct patch p = {.n = 0};
	struct err e = {0};
	struct jv *body;
	const char *keys[8];

	if (api_scope(r, w, &p.owner) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	if (patch_parse(body, &p, &e) == 0 && p.n == 0)
		ERR_BAD(&e,
		        "no editable fields provided (editable: " EDITABLE ")");
	for (size_t i = 0; i < p.n; i++)
		keys[i] = p.keys[i];
	if (e.status == 0 &&
	    store_setting_set(r->core->store, keys, p.vals, p.n) != 0)
		ERR_INTERNAL(&e, "cannot store the settings");
	jv_free(body);
	if (e.status) {
		api_reply_err(w, &e);
		return;
	}
	api_reply_json(w, 200, settings_json(r));
}
