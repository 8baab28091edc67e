/*
 * Spend (see spend.h): what each model answer costs, where it is added
 * up, and whether a budget is reached.
 *
 * Prices are US dollars per million tokens, four of them per model
 * (input, output, cache writes, cache reads).  The built-in table below
 * covers the models our presets and docs name, by name prefix, and "*"
 * prices every other model like a mid-range one, so an unknown model
 * is never free (its tokens are counted either way).  The operator's
 * table (PATCH /v1/spend "prices", kept in the store's meta row
 * spend_prices) is looked up first.  Costs are integers, millionths of
 * a dollar: tokens x dollars-per-million is exactly that unit.
 *
 * Budgets: an app's own, else the instance default for apps; a
 * tenant's own, else the instance default for tenants.  Each holds a
 * token limit (all four kinds added up), a dollar limit, or both; a
 * budget is reached when a count is at or over its limit.  The check
 * reads two or four rows, so the proxy can afford it before each call.
 */
#include "spend/spend.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"

#define PRICES_META "spend_prices"

static const struct builtin {
	const char *prefix;
	struct spend_price p;
} builtin[] = {
    /* Anthropic (cache writes at the 5-minute rate). */
    {"claude-opus-4-1", {15, 75, 18.75, 1.5}},
    {"claude-opus-4-0", {15, 75, 18.75, 1.5}},
    {"claude-opus-4-2025", {15, 75, 18.75, 1.5}},
    {"claude-opus", {5, 25, 6.25, 0.5}},
    {"claude-sonnet", {3, 15, 3.75, 0.3}},
    {"claude-haiku", {1, 5, 1.25, 0.1}},
    {"claude-3-5-haiku", {0.8, 4, 1, 0.08}},
    /* OpenAI. */
    {"gpt-5-nano", {0.05, 0.4, 0, 0.005}},
    {"gpt-5-mini", {0.25, 2, 0, 0.025}},
    {"gpt-5", {1.25, 10, 0, 0.125}},
    {"gpt-4.1-mini", {0.4, 1.6, 0, 0.1}},
    {"gpt-4.1", {2, 8, 0, 0.5}},
    {"gpt-4o-mini", {0.15, 0.6, 0, 0.075}},
    {"gpt-4o", {2.5, 10, 0, 1.25}},
    /* OpenCode Zen's free models. */
    {"big-pickle", {0, 0, 0, 0}},
    {"*", {3, 15, 3.75, 0.3}},
};

/* The longest key of the operator's table that begins name ("" none). */
static const struct jv *
table_match(const struct jv *t, const char *name, const char **key)
{
	const struct jv *best = NULL;
	size_t best_n = 0;
	void *it = NULL;
	const char *k;
	struct jv *v;

	while (jv_each(t, &it, &k, &v)) {
		size_t n = strlen(k);
		if (strcmp(k, "*") != 0 && n > best_n &&
		    strncmp(name, k, n) == 0 && jv_type(v) == JV_OBJECT) {
			best = v;
			best_n = n;
			*key = k;
		}
	}
	return best;
}

static const struct builtin *
builtin_match(const char *name)
{
	const struct builtin *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; i < sizeof(builtin) / sizeof(*builtin); i++) {
		size_t n = strlen(builtin[i].prefix);
		if (strcmp(builtin[i].prefix, "*") != 0 && n > best_n &&
		    strncmp(name, builtin[i].prefix, n) == 0) {
			best = &builtin[i];
			best_n = n;
		}
	}
	return best;
}

static void
price_from_json(const struct jv *v, struct spend_price *p)
{
	p->input = jv_num(jv_get(v, "input"));
	p->output = jv_num(jv_get(v, "output"));
	p->cache_write = jv_num(jv_get(v, "cache_write"));
	p->cache_read = jv_num(jv_get(v, "cache_read"));
}

static struct jv *
operator_table(struct store *st)
{
	static char text[SPEND_PRICES_MAX_BYTES + 1];
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	struct jv *t = NULL;

	pthread_mutex_lock(&mu);
	if (store_meta_get(st, PRICES_META, text, sizeof(text)) == 0)
		t = jv_parse(text, strlen(text), 4, NULL, 0);
	pthread_mutex_unlock(&mu);
	if (jv_type(t) != JV_OBJECT) {
		jv_free(t);
		return NULL;
	}
	return t;
}

void
spend_price_for(struct store *st, const char *model, struct spend_price *out,
                char *key, size_t len)
{
	const char *slash = strrchr(model, '/');
	const char *names[2] = {model, slash ? slash + 1 : NULL};
	struct jv *t = operator_table(st);
	const struct builtin *b;
	const struct jv *v;
	const char *k = NULL;

	for (int i = 0; i < 2 && names[i]; i++)
		if ((v = table_match(t, names[i], &k)) != NULL) {
			price_from_json(v, out);
			snprintf(key, len, "%s", k);
			jv_free(t);
			return;
		}
	for (int i = 0; i < 2 && names[i]; i++)
		if ((b = builtin_match(names[i])) != NULL) {
			*out = b->p;
			snprintf(key, len, "%s", b->prefix);
			jv_free(t);
			return;
		}
	if ((v = jv_get(t, "*")) != NULL && jv_type(v) == JV_OBJECT) {
		price_from_json(v, out);
	} else {
		*out = builtin[sizeof(builtin) / sizeof(*builtin) - 1].p;
	}
	snprintf(key, len, "*");
	jv_free(t);
}

int64_t
spend_cost_micro(const struct spend_price *p, const struct store_spend *d)
{
	double m = (double)d->input * p->input + (double)d->output * p->output +
	           (double)d->cache_write * p->cache_write +
	           (double)d->cache_read * p->cache_read;

	if (!(m > 0))
		return 0;
	if (m > 9e15)
		return (int64_t)9e15;
	return (int64_t)(m + 0.999999); /* rounded up */
}

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
	return store_budget_get(st, "instance", scope, b) == 0;
}

static bool
reached(const struct store_spend *s, const struct store_budget *b)
{
	return (b->max_micro >= 0 && s->cost_micro >= b->max_micro) ||
	       (b->max_tokens >= 0 && tokens_of(s) >= b->max_tokens);
}

/* Why: the dollar limit first, as it is the one people set. */
static void
reason(const struct store_spend *s, const struct store_budget *b,
       const char *what, char *why, size_t len)
{
	if (b->max_micro >= 0 && s->cost_micro >= b->max_micro)
		snprintf(why, len, "budget reached: %s spent $%.2f of $%.2f",
		         what, (double)s->cost_micro / 1e6,
		         (double)b->max_micro / 1e6);
	else
		snprintf(why, len,
		         "budget reached: %s spent %lld of %lld tokens", what,
		         (long long)tokens_of(s), (long long)b->max_tokens);
}

int
spend_check(struct store *st, const char *app_id, const char *tenant, char *why,
            size_t len)
{
	struct store_budget b;
	struct store_spend s;
	char what[160];
	struct app a;

	if (app_id[0] && budget_of(st, "app", app_id, &b) &&
	    store_spend_get(st, "app", app_id, &s) == 0 && reached(&s, &b)) {
		/* The name only now: the check itself reads two rows. */
		if (store_app_get(st, NULL, app_id, &a) == 0)
			snprintf(what, sizeof(what), "app %s", a.name);
		else
			snprintf(what, sizeof(what), "app %s", app_id);
		reason(&s, &b, what, why, len);
		return 1;
	}
	if (budget_of(st, "tenant", tenant, &b) &&
	    store_spend_get(st, "tenant", tenant, &s) == 0 && reached(&s, &b)) {
		snprintf(what, sizeof(what), "tenant %s", tenant);
		reason(&s, &b, what, why, len);
		return 1;
	}
	return 0;
}

int
spend_record(struct store *st, const char *task_id, const char *app_id,
             const char *tenant, const char *model, struct store_spend *d,
             char *why, size_t len)
{
	struct spend_price p;
	char key[SPEND_MODEL_MAX];

	spend_price_for(st, model, &p, key, sizeof(key));
	d->cost_micro = spend_cost_micro(&p, d);
	d->requests = 1;
	if (store_spend_add(st, task_id, app_id, tenant, d) < 0) {
		log_error("spend: cannot record %lld tokens of %s for app %s",
		          (long long)tokens_of(d), model, app_id);
		return -1;
	}
	return spend_check(st, app_id, tenant, why, len);
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

static struct jv *
price_json(const struct spend_price *p)
{
	struct jv *o = jv_obj();

	jv_set_real(o, "input", p->input);
	jv_set_real(o, "output", p->output);
	jv_set_real(o, "cache_write", p->cache_write);
	jv_set_real(o, "cache_read", p->cache_read);
	return o;
}

struct jv *
spend_prices_json(struct store *st)
{
	struct jv *o = jv_obj(), *t = operator_table(st);
	struct spend_price p;
	void *it = NULL;
	const char *k;
	struct jv *v;

	for (size_t i = 0; i < sizeof(builtin) / sizeof(*builtin); i++)
		if (jv_get(t, builtin[i].prefix) == NULL)
			jv_set(o, builtin[i].prefix, price_json(&builtin[i].p));
	while (jv_each(t, &it, &k, &v)) {
		price_from_json(v, &p);
		jv_set(o, k, price_json(&p));
	}
	jv_free(t);
	return o;
}

static bool
price_field_ok(const struct jv *v, bool need)
{
	double d = jv_num(v);

	if (v == NULL)
		return !need;
	return (jv_type(v) == JV_INT || jv_type(v) == JV_REAL) && d >= 0 &&
	       d <= 100000;
}

int
spend_prices_set(struct store *st, const struct jv *v, char *why, size_t len)
{
	struct buf text;
	void *it = NULL, *it2;
	const char *k, *k2;
	struct jv *p, *f;
	size_t n = 0;
	int rc;

	if (jv_type(v) == JV_NULL)
		return store_meta_set(st, PRICES_META, "{}") < 0 ? -1 : 0;
	if (jv_type(v) != JV_OBJECT) {
		snprintf(why, len, "prices: an object of model -> prices");
		return -1;
	}
	while (jv_each(v, &it, &k, &p)) {
		size_t kl = strlen(k);
		bool ok = kl > 0 && kl <= SPEND_MODEL_MAX;
		for (size_t i = 0; ok && i < kl; i++)
			ok = (unsigned char)k[i] > 0x20 &&
			     (unsigned char)k[i] < 0x7f;
		if (!ok || ++n > SPEND_PRICES_MAX) {
			snprintf(why, len,
			         "prices: at most %d models, each 1-%d "
			         "printable characters",
			         SPEND_PRICES_MAX, SPEND_MODEL_MAX);
			return -1;
		}
		if (jv_type(p) != JV_OBJECT ||
		    !price_field_ok(jv_get(p, "input"), true) ||
		    !price_field_ok(jv_get(p, "output"), true) ||
		    !price_field_ok(jv_get(p, "cache_write"), false) ||
		    !price_field_ok(jv_get(p, "cache_read"), false)) {
			snprintf(why, len,
			         "prices.%.60s: {\"input\",\"output\","
			         "\"cache_write\"?,\"cache_read\"?}, dollars "
			         "per million tokens from 0 to 100000",
			         k);
			return -1;
		}
		it2 = NULL;
		while (jv_each(p, &it2, &k2, &f))
			if (strcmp(k2, "input") && strcmp(k2, "output") &&
			    strcmp(k2, "cache_write") &&
			    strcmp(k2, "cache_read")) {
				snprintf(
				    why, len,
				    "prices.%.60s: unknown field \"%.40s\"", k,
				    k2);
				return -1;
			}
	}
	buf_init(&text, SPEND_PRICES_MAX_BYTES);
	if (jv_dump(v, &text) < 0) {
		buf_release(&text);
		snprintf(why, len, "prices: the table is over %d bytes",
		         SPEND_PRICES_MAX_BYTES);
		return -1;
	}
	rc = store_meta_set(st, PRICES_META, text.data);
	buf_release(&text);
	return rc < 0 ? -1 : 0;
}
