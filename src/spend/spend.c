/*
 * Spend (see spend.h): where each model answer's cost is added up,
 * whether a budget is reached, and what the calls under way may still
 * cost.  Prices are prices.c's.
 *
 * Budgets: an app's own, else the instance default for apps; a
 * tenant's own, else the instance default for tenants; and for an app's
 * own model calls (made while none of its tasks runs, when the app
 * opted in) the budget of those, scope "app_calls".  Each holds a token
 * limit (all four kinds added up), a dollar limit, or both.
 *
 * Reservations: before a call goes upstream it holds an estimate of
 * what it may cost (its input from the request's size, its output up to
 * its max_tokens, at its model's price), and a call is refused when
 * what was spent, what the calls under way hold and its own estimate
 * would pass a budget.  The answer settles it: its real count is
 * recorded and its hold dropped in one step under one lock, so at no
 * moment is a call counted twice or not at all, and N calls started
 * together cannot pass a budget that only one of them fits in.  Holds
 * are in memory, in a list of the calls under way (at most the proxy's
 * connections); a restart ends the calls and their holds with them.
 * Rejected: a hold in the store (a write per call, and a crash would
 * leave it behind) and a counter per budget (the list is short and the
 * sum is exact however budgets change meanwhile).
 *
 * The lock is held over the few store reads of a check (two to six
 * rows) and the write of a settlement; the proxy takes it once before
 * and once after each model call.
 */
#include "spend/spend.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct spend_hold *holds; /* the calls under way, under mu */

static int64_t
tokens_of(const struct store_spend *s)
{
	return s->input + s->output + s->cache_write + s->cache_read;
}

/* The budget of scope/id, else the instance default; false: none. */
static bool
budget_of(struct store *st, const char *scope, const char *id,
          struct store_budget *b)
{
	if (store_budget_get(st, scope, id, b) == 0)
		return true;
	if (strcmp(scope, SPEND_APP_CALLS) == 0)
		return false; /* no default: an app opts in with its own */
	return store_budget_get(st, "instance", scope, b) == 0;
}

/* What the calls under way hold against scope/id (under mu). */
static void
held_for(const char *scope, const char *id, int64_t *tokens, int64_t *micro)
{
	*tokens = *micro = 0;
	for (const struct spend_hold *h = holds; h; h = h->next) {
		bool mine = strcmp(scope, "tenant") == 0
		                ? strcmp(h->tenant, id) == 0
		                : strcmp(h->app, id) == 0;
		if (strcmp(scope, SPEND_APP_CALLS) == 0)
			mine = mine && h->own;
		if (mine) {
			*tokens += h->tokens;
			*micro += h->micro;
		}
	}
}

/* What one budget says of a count, the holds and a call's estimate. */
struct verdict {
	const char *what; /* "app shop", "tenant a" */
	int64_t spent_tokens, spent_micro, held_tokens, held_micro;
	int64_t call_tokens, call_micro;
};

/* Over: reached already, or the holds and the call would pass it. */
static bool
over(const struct verdict *v, const struct store_budget *b)
{
	int64_t t = v->spent_tokens + v->held_tokens;
	int64_t m = v->spent_micro + v->held_micro;

	return (b->max_micro >= 0 &&
	        (m >= b->max_micro || m + v->call_micro > b->max_micro)) ||
	       (b->max_tokens >= 0 &&
	        (t >= b->max_tokens || t + v->call_tokens > b->max_tokens));
}

/* Why: the dollar limit first, as it is the one people set. */
static void
reason(const struct verdict *v, const struct store_budget *b, char *why,
       size_t len)
{
	bool usd =
	    b->max_micro >= 0 &&
	    v->spent_micro + v->held_micro + v->call_micro > b->max_micro;
	int n;

	if (usd || b->max_tokens < 0)
		n = snprintf(why, len,
		             "budget reached: %s spent $%.2f of $%.2f", v->what,
		             (double)v->spent_micro / 1e6,
		             (double)b->max_micro / 1e6);
	else
		n = snprintf(why, len,
		             "budget reached: %s spent %lld of %lld tokens",
		             v->what, (long long)v->spent_tokens,
		             (long long)b->max_tokens);
	if (n < 0 || (size_t)n >= len ||
	    (v->call_tokens == 0 && v->held_tokens == 0))
		return;
	if (usd || b->max_tokens < 0)
		snprintf(why + n, len - (size_t)n,
		         "; calls under way hold $%.2f and this one may cost "
		         "up to $%.2f",
		         (double)v->held_micro / 1e6,
		         (double)v->call_micro / 1e6);
	else
		snprintf(why + n, len - (size_t)n,
		         "; calls under way hold %lld and this one may use up "
		         "to %lld",
		         (long long)v->held_tokens, (long long)v->call_tokens);
}

/* The name of scope/id in a reason: the app's name for an app. */
static void
name_of(struct store *st, const char *scope, const char *id, char *out,
        size_t len)
{
	struct app a;
	bool own = strcmp(scope, SPEND_APP_CALLS) == 0;

	if (strcmp(scope, "tenant") == 0)
		snprintf(out, len, "tenant %s", id);
	else if (store_app_get(st, NULL, id, &a) == 0)
		snprintf(out, len, "app %s%s", a.name,
		         own ? " (its own calls)" : "");
	else
		snprintf(out, len, "app %s%s", id,
		         own ? " (its own calls)" : "");
}

/*
 * Whether a call c (its app and tenant; own: an app's own call) that may
 * use c->tokens costing c->micro passes every budget that applies, with
 * what the calls under way hold when with_holds (under mu).  1 with the reason
 * in why, 0 passes (also on database trouble: counting must not stop the work).
 */
static int
check_locked(struct store *st, const struct spend_hold *c, bool with_holds,
             char *why, size_t len)
{
	const char *scopes[3] = {SPEND_APP_CALLS, "app", "tenant"};
	char what[160];

	for (int i = c->own ? 0 : 1; i < 3; i++) {
		const char *id = i == 2 ? c->tenant : c->app;
		struct verdict v = {.what = what,
		                    .call_tokens = c->tokens,
		                    .call_micro = c->micro};
		struct store_budget b;
		struct store_spend s;

		if (id[0] == '\0' || !budget_of(st, scopes[i], id, &b) ||
		    store_spend_get(st, scopes[i], id, &s) != 0)
			continue;
		v.spent_tokens = tokens_of(&s);
		v.spent_micro = s.cost_micro;
		if (with_holds)
			held_for(scopes[i], id, &v.held_tokens, &v.held_micro);
		if (!over(&v, &b))
			continue;
		/* The name only now: the check itself reads two rows. */
		name_of(st, scopes[i], id, what, sizeof(what));
		reason(&v, &b, why, len);
		return 1;
	}
	return 0;
}

int
spend_check(struct store *st, const char *app_id, const char *tenant, char *why,
            size_t len)
{
	struct spend_hold c = {0};
	int rc;

	snprintf(c.app, sizeof(c.app), "%s", app_id);
	snprintf(c.tenant, sizeof(c.tenant), "%s", tenant);
	pthread_mutex_lock(&mu);
	rc = check_locked(st, &c, false, why, len);
	pthread_mutex_unlock(&mu);
	return rc;
}

bool
spend_budget_applies(struct store *st, const char *app_id, const char *tenant,
                     bool own)
{
	struct store_budget b;

	return (own && budget_of(st, SPEND_APP_CALLS, app_id, &b)) ||
	       (app_id[0] && budget_of(st, "app", app_id, &b)) ||
	       budget_of(st, "tenant", tenant, &b);
}

int
spend_reserve(struct store *st, struct spend_hold *h, const char *provider,
              const char *model, int64_t in_tokens, int64_t out_tokens,
              char *why, size_t len)
{
	struct spend_price p;
	struct store_spend d = {.input = in_tokens, .output = out_tokens};
	char key[SPEND_MODEL_MAX];
	int rc;

	spend_price_for(st, provider, model, &p, key, sizeof(key));
	h->tokens = in_tokens + out_tokens;
	h->micro = spend_cost_micro(&p, &d);
	pthread_mutex_lock(&mu);
	rc = check_locked(st, h, true, why, len);
	if (rc == 0) {
		h->prev = NULL;
		h->next = holds;
		if (holds)
			holds->prev = h;
		holds = h;
		h->held = true;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

/* Drops h from the list (under mu). */
static void
unhold(struct spend_hold *h)
{
	if (!h->held)
		return;
	if (h->prev)
		h->prev->next = h->next;
	else
		holds = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->next = h->prev = NULL;
	h->held = false;
}

void
spend_release(struct spend_hold *h)
{
	pthread_mutex_lock(&mu);
	unhold(h);
	pthread_mutex_unlock(&mu);
}

int
spend_settle(struct store *st, struct spend_hold *h, const char *task_id,
             const char *provider, const char *model, struct store_spend *d,
             char *why, size_t len)
{
	struct spend_price p;
	char key[SPEND_MODEL_MAX];
	const char *scope = task_id[0] ? "task" : h->own ? SPEND_APP_CALLS : "";
	const char *id = task_id[0] ? task_id : h->app;
	struct spend_hold after = {0};
	int rc;

	spend_price_for(st, provider, model, &p, key, sizeof(key));
	d->cost_micro = spend_cost_micro(&p, d);
	d->requests = 1;
	pthread_mutex_lock(&mu);
	rc = store_spend_add(st, scope, id, h->app, h->tenant, d);
	unhold(h);
	if (rc < 0) {
		log_error("spend: cannot record %lld tokens of %s for app %s",
		          (long long)tokens_of(d), model, h->app);
		rc = -1;
	} else {
		memcpy(after.app, h->app, sizeof(after.app));
		memcpy(after.tenant, h->tenant, sizeof(after.tenant));
		after.own = h->own;
		rc = check_locked(st, &after, false, why, len);
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

int
spend_record(struct store *st, const char *task_id, const char *app_id,
             const char *tenant, const char *provider, const char *model,
             struct store_spend *d, char *why, size_t len)
{
	struct spend_hold h = {.own = task_id[0] == '\0'};

	snprintf(h.app, sizeof(h.app), "%s", app_id);
	snprintf(h.tenant, sizeof(h.tenant), "%s", tenant);
	return spend_settle(st, &h, task_id, provider, model, d, why, len);
}

/* ---- JSON ---------------------------------------------------------------- */

struct jv *
spend_json(const struct store_spend *s)
{
	struct jv *o = jv_obj();

	jv_set_int(o, "input_tokens", s->input);
	jv_set_int(o, "output_tokens", s->output);
	jv_set_int(o, "cache_write_tokens", s->cache_write);
	jv_set_int(o, "cache_read_tokens", s->cache_read);
	jv_set_int(o, "tokens", tokens_of(s));
	jv_set_real(o, "usd", (double)s->cost_micro / 1e6);
	jv_set_int(o, "requests", s->requests);
	return o;
}

struct jv *
spend_budget_json(const struct store_budget *b, bool set)
{
	struct jv *o;

	if (!set)
		return jv_new_null();
	o = jv_obj();
	jv_set(o, "tokens",
	       b->max_tokens >= 0 ? jv_new_int(b->max_tokens) : jv_new_null());
	if (b->max_micro >= 0)
		jv_set_real(o, "usd", (double)b->max_micro / 1e6);
	else
		jv_set(o, "usd", jv_new_null());
	return o;
}

int
spend_budget_parse(const struct jv *v, struct store_budget *out, char *why,
                   size_t len)
{
	void *it = NULL;
	const char *k;
	struct jv *f;

	out->max_tokens = out->max_micro = -1;
	if (jv_type(v) == JV_NULL)
		return 0;
	if (jv_type(v) != JV_OBJECT) {
		snprintf(why, len, "a budget is an object or null");
		return -1;
	}
	while (jv_each(v, &it, &k, &f)) {
		if (strcmp(k, "tokens") == 0) {
			if (jv_type(f) == JV_NULL)
				continue;
			if (jv_type(f) != JV_INT || jv_int(f) < 1 ||
			    jv_int(f) > SPEND_TOKENS_MAX) {
				snprintf(why, len,
				         "budget.tokens: an integer from 1 to "
				         "%lld, or null",
				         (long long)SPEND_TOKENS_MAX);
				return -1;
			}
			out->max_tokens = jv_int(f);
		} else if (strcmp(k, "usd") == 0) {
			double d = jv_num(f);
			if (jv_type(f) == JV_NULL)
				continue;
			if ((jv_type(f) != JV_INT && jv_type(f) != JV_REAL) ||
			    !(d > 0) || d > SPEND_USD_MAX) {
				snprintf(why, len,
				         "budget.usd: a number above 0 up to "
				         "%.0f, or null",
				         SPEND_USD_MAX);
				return -1;
			}
			out->max_micro = (int64_t)(d * 1e6 + 0.5);
		} else {
			snprintf(why, len,
			         "unknown budget field \"%.40s\" (tokens, usd)",
			         k);
			return -1;
		}
	}
	return 0;
}
