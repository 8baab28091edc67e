/*
 * /v1/spend: what the credential proxy counted and the budgets it
 * enforces (spend/spend.h).  GET shows the caller's tenant's spend and
 * budget, the instance defaults and the price table; an operator may
 * ask for another tenant's with ?tenant=.  PATCH (operators only) sets
 * a tenant's budget, the instance defaults for apps and tenants, and
 * the operator's price table, through a strict allow-list, every field
 * checked before anything is written.  An app's own budget is a field
 * of PATCH /v1/apps/{id} (apps.c), set by the app's tenant, and so is
 * the opt-in to model calls of its own ("own_model_calls": their budget,
 * checked here).
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "spend/spend.h"

#define TENANT_LEN 63

/* budget + budget_source for scope/id (own, else the instance's). */
static void
budget_fields(struct core *c, struct jv *o, const char *scope, const char *id)
{
	struct store_budget b;

	if (store_budget_get(c->store, scope, id, &b) == 0) {
		jv_set(o, "budget", spend_budget_json(&b, true));
		jv_set_str(o, "budget_source", scope);
	} else if (store_budget_get(c->store, "instance", scope, &b) == 0) {
		jv_set(o, "budget", spend_budget_json(&b, true));
		jv_set_str(o, "budget_source", "instance");
	} else {
		jv_set(o, "budget", jv_new_null());
		jv_set(o, "budget_source", jv_new_null());
	}
}

/*
 * The app's own model calls (made while none of its tasks runs): null
 * when it has not opted in, else {"budget","spent"}.
 */
static struct jv *
own_calls_json(struct core *c, const char *app_id)
{
	struct store_budget b;
	struct store_spend s;
	struct jv *o;

	if (store_budget_get(c->store, SPEND_APP_CALLS, app_id, &b) != 0)
		return jv_new_null();
	if (store_spend_get(c->store, SPEND_APP_CALLS, app_id, &s) != 0)
		memset(&s, 0, sizeof(s));
	o = jv_obj();
	jv_set(o, "budget", spend_budget_json(&b, true));
	jv_set(o, "spent", spend_json(&s));
	return o;
}

struct jv *
api_app_spend_json(struct core *c, const char *app_id)
{
	struct jv *o = jv_obj();
	struct store_spend s;

	if (store_spend_get(c->store, "app", app_id, &s) != 0)
		memset(&s, 0, sizeof(s));
	jv_set(o, "spent", spend_json(&s));
	budget_fields(c, o, "app", app_id);
	jv_set(o, "own_model_calls", own_calls_json(c, app_id));
	return o;
}

int
api_own_calls_parse(const struct jv *v, struct store_budget *out, struct err *e)
{
	char why[160];

	if (spend_budget_parse(v, out, why, sizeof(why)) < 0)
		return ERR_BAD(e, "own_model_calls: %s", why);
	if (jv_type(v) != JV_NULL && out->max_tokens < 0 && out->max_micro < 0)
		return ERR_BAD(e, "own_model_calls: a budget of the app's own "
		                  "model calls needs \"tokens\" or \"usd\" "
		                  "(null: none, the app makes no calls of its "
		                  "own)");
	return 0;
}

static struct jv *
instance_budget(struct core *c, const char *which)
{
	struct store_budget b;

	return spend_budget_json(
	    &b, store_budget_get(c->store, "instance", which, &b) == 0);
}

/* ?tenant=: another tenant's (operators only); r->owner without. */
static int
tenant_of(struct req *r, struct resp *w, const char **out)
{
	bool bad = false;
	const char *t = api_query(r, w, "tenant", &bad);

	if (bad)
		return -1;
	if (t == NULL || strcmp(t, r->owner) == 0) {
		*out = r->owner;
		return 0;
	}
	if (!r->operator) {
		api_fail(w, 403, "operator_only",
		         "only an operator may see or set another tenant's "
		         "spend");
		return -1;
	}
	if (t[0] == '\0' || strlen(t) > TENANT_LEN) {
		api_fail(w, 400, "invalid_request",
		         "tenant: 1-%d bytes, a token's name", TENANT_LEN);
		return -1;
	}
	*out = t;
	return 0;
}

static struct jv *
spend_view(struct req *r, const char *tenant)
{
	struct jv *o = jv_obj();
	struct store_spend s;

	if (store_spend_get(r->core->store, "tenant", tenant, &s) != 0)
		memset(&s, 0, sizeof(s));
	jv_set_str(o, "tenant", tenant);
	jv_set_bool(o, "counting", r->core->cfg->spend_counting);
	jv_set(o, "spent", spend_json(&s));
	budget_fields(r->core, o, "tenant", tenant);
	jv_set(o, "default_app_budget", instance_budget(r->core, "app"));
	jv_set(o, "default_tenant_budget", instance_budget(r->core, "tenant"));
	jv_set(o, "prices", spend_prices_json(r->core->store));
	return o;
}

void
spend_get(struct req *r, struct resp *w)
{
	const char *tenant;

	if (tenant_of(r, w, &tenant) == 0)
		api_reply_json(w, 200, spend_view(r, tenant));
}

/* One budget field of the PATCH: parsed into b, *set when given. */
static int
budget_field(struct resp *w, const struct jv *body, const char *key,
             struct store_budget *b, bool *set)
{
	const struct jv *v = jv_get(body, key);
	char why[160];

	*set = v != NULL;
	if (v && spend_budget_parse(v, b, why, sizeof(why)) < 0) {
		api_fail(w, 400, "invalid_request", "%s: %s", key, why);
		return -1;
	}
	return 0;
}

void
spend_patch(struct req *r, struct resp *w)
{
	static const char *const fields[] = {"tenant_budget",
	                                     "default_app_budget",
	                                     "default_tenant_budget", "prices"};
	struct store_budget tb, ab, db;
	bool tset, aset, dset, any = false;
	const char *tenant, *k;
	struct jv *body, *v, *prices;
	void *it = NULL;
	char why[256];
	int rc = 0;

	if (tenant_of(r, w, &tenant) < 0 ||
	    api_body_object(r, w, false, &body) < 0)
		return;
	if (!r->operator) {
		jv_free(body);
		api_fail(w, 403, "operator_only",
		         "budgets and prices are set by an operator (an app's "
		         "own budget: PATCH /v1/apps/{id})");
		return;
	}
	while (jv_each(body, &it, &k, &v)) {
		bool known = false;
		for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
			known = known || strcmp(k, fields[i]) == 0;
		if (!known) {
			jv_free(body);
			api_fail(w, 400, "invalid_request",
			         "unknown field \"%.60s\" (editable: "
			         "tenant_budget, default_app_budget, "
			         "default_tenant_budget, prices)",
			         k);
			return;
		}
		any = true;
	}
	if (!any) {
		jv_free(body);
		api_fail(w, 400, "invalid_request", "nothing to edit");
		return;
	}
	prices = jv_get(body, "prices");
	if (budget_field(w, body, "tenant_budget", &tb, &tset) < 0 ||
	    budget_field(w, body, "default_app_budget", &ab, &aset) < 0 ||
	    budget_field(w, body, "default_tenant_budget", &db, &dset) < 0) {
		jv_free(body);
		return;
	}
	/* The prices are checked (and stored) first: the one that can
	 * still be refused. */
	if (prices &&
	    spend_prices_set(r->core->store, prices, why, sizeof(why)) < 0) {
		jv_free(body);
		api_fail(w, 400, "invalid_request", "%s", why);
		return;
	}
	jv_free(body);
	if (tset)
		rc |= store_budget_set(r->core->store, "tenant", tenant, &tb);
	if (aset)
		rc |= store_budget_set(r->core->store, "instance", "app", &ab);
	if (dset)
		rc |=
		    store_budget_set(r->core->store, "instance", "tenant", &db);
	if (rc != 0) {
		api_fail(w, 500, "internal", "cannot store the budgets");
		return;
	}
	api_reply_json(w, 200, spend_view(r, tenant));
}

/* The routes of this file, in the router's order (routes.c). */
const struct route spend_routes[] = {
    {.method = "GET", .pattern = "/v1/spend", .fn = spend_get},
    {.method = "PATCH", .pattern = "/v1/spend", .fn = spend_patch},
    {0},
};
