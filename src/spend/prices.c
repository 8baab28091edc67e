/*
 * Model prices (see spend.h): what a million tokens of each kind cost,
 * for the model an answer names.
 *
 * Prices are US dollars per million tokens, four of them per model
 * (input, output, cache writes, cache reads).  The built-in table names
 * each model exactly, aliases and dated snapshots alike: a family
 * prefix priced "claude-opus-4" (the $15 model) as "claude-opus" (the $5
 * one) and "gpt-5-pro" as "gpt-5", so a prefix is never enough.  A model
 * the table does not name is priced at the highest price of its
 * provider (each of the four kinds the most any of the provider's
 * models costs; the highest of all for an upstream whose models we do
 * not know), so an unknown model never costs less than it may.
 *
 * The operator's table (PATCH /v1/spend "prices", the store's meta row
 * spend_prices) is looked up first: its keys are exact names, or end in
 * '*' to price every name they begin (the longest wins), and its "*"
 * entry prices every model neither table names.  Costs are integers,
 * millionths of a dollar: tokens x dollars-per-million is exactly that
 * unit.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "spend/spend.h"

#define PRICES_META "spend_prices"

static const struct builtin {
	const char *provider; /* the upstream that serves it */
	const char *name;
	struct spend_price p;
} builtin[] = {
    /* Anthropic (cache writes at the 5-minute rate). */
    {"anthropic", "claude-opus-4-1", {15, 75, 18.75, 1.5}},
    {"anthropic", "claude-opus-4-1-20250805", {15, 75, 18.75, 1.5}},
    {"anthropic", "claude-opus-4-0", {15, 75, 18.75, 1.5}},
    {"anthropic", "claude-opus-4", {15, 75, 18.75, 1.5}},
    {"anthropic", "claude-opus-4-20250514", {15, 75, 18.75, 1.5}},
    {"anthropic", "claude-3-opus-20240229", {15, 75, 18.75, 1.5}},
    {"anthropic", "claude-opus-4-5", {5, 25, 6.25, 0.5}},
    {"anthropic", "claude-opus-4-5-20251101", {5, 25, 6.25, 0.5}},
    {"anthropic", "claude-sonnet-4-5", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-sonnet-4-5-20250929", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-sonnet-4-0", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-sonnet-4", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-sonnet-4-20250514", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-3-7-sonnet-latest", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-3-7-sonnet-20250219", {3, 15, 3.75, 0.3}},
    {"anthropic", "claude-haiku-4-5", {1, 5, 1.25, 0.1}},
    {"anthropic", "claude-haiku-4-5-20251001", {1, 5, 1.25, 0.1}},
    {"anthropic", "claude-3-5-haiku-latest", {0.8, 4, 1, 0.08}},
    {"anthropic", "claude-3-5-haiku-20241022", {0.8, 4, 1, 0.08}},
    {"anthropic", "claude-3-haiku-20240307", {0.25, 1.25, 0.3, 0.03}},
    /* OpenAI. */
    {"openai", "gpt-5-pro", {15, 120, 0, 0}},
    {"openai", "gpt-5-pro-2025-10-06", {15, 120, 0, 0}},
    {"openai", "gpt-5", {1.25, 10, 0, 0.125}},
    {"openai", "gpt-5-2025-08-07", {1.25, 10, 0, 0.125}},
    {"openai", "gpt-5-chat-latest", {1.25, 10, 0, 0.125}},
    {"openai", "gpt-5-codex", {1.25, 10, 0, 0.125}},
    {"openai", "gpt-5-mini", {0.25, 2, 0, 0.025}},
    {"openai", "gpt-5-mini-2025-08-07", {0.25, 2, 0, 0.025}},
    {"openai", "gpt-5-nano", {0.05, 0.4, 0, 0.005}},
    {"openai", "gpt-5-nano-2025-08-07", {0.05, 0.4, 0, 0.005}},
    {"openai", "gpt-4.1", {2, 8, 0, 0.5}},
    {"openai", "gpt-4.1-2025-04-14", {2, 8, 0, 0.5}},
    {"openai", "gpt-4.1-mini", {0.4, 1.6, 0, 0.1}},
    {"openai", "gpt-4.1-mini-2025-04-14", {0.4, 1.6, 0, 0.1}},
    {"openai", "gpt-4.1-nano", {0.1, 0.4, 0, 0.025}},
    {"openai", "gpt-4o", {2.5, 10, 0, 1.25}},
    {"openai", "gpt-4o-2024-08-06", {2.5, 10, 0, 1.25}},
    {"openai", "gpt-4o-2024-11-20", {2.5, 10, 0, 1.25}},
    {"openai", "gpt-4o-2024-05-13", {5, 15, 0, 0}},
    {"openai", "gpt-4o-mini", {0.15, 0.6, 0, 0.075}},
    {"openai", "gpt-4o-mini-2024-07-18", {0.15, 0.6, 0, 0.075}},
    {"openai", "o3", {2, 8, 0, 0.5}},
    {"openai", "o4-mini", {1.1, 4.4, 0, 0.275}},
    /* OpenCode Zen's free model. */
    {"zen", "big-pickle", {0, 0, 0, 0}},
};

#define NBUILTIN (sizeof(builtin) / sizeof(*builtin))

const char *
spend_model_at(size_t i, const char **provider)
{
	if (i >= NBUILTIN)
		return NULL;
	*provider = builtin[i].provider;
	return builtin[i].name;
}

/* The operator's key k matches name: exactly, or as a "prefix*". */
static size_t
key_matches(const char *k, const char *name)
{
	size_t n = strlen(k);

	if (n > 1 && k[n - 1] == '*')
		return strncmp(name, k, n - 1) == 0 ? n - 1 : 0;
	return strcmp(name, k) == 0 ? n + 1 : 0; /* exact beats any prefix */
}

/* The operator's entry for name (not "*"), the best match; NULL none. */
static const struct jv *
table_match(const struct jv *t, const char *name, const char **key)
{
	const struct jv *best = NULL;
	size_t best_n = 0;
	void *it = NULL;
	const char *k;
	struct jv *v;

	while (jv_each(t, &it, &k, &v)) {
		size_t n = strcmp(k, "*") ? key_matches(k, name) : 0;
		if (n > best_n && jv_type(v) == JV_OBJECT) {
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
	for (size_t i = 0; i < NBUILTIN; i++)
		if (strcmp(name, builtin[i].name) == 0)
			return &builtin[i];
	return NULL;
}

static double
most(double a, double b)
{
	return a > b ? a : b;
}

/* The highest of each price among provider's models ("" or one we do
 * not know: among all). */
static void
provider_highest(const char *provider, struct spend_price *out)
{
	bool known = false;

	for (size_t i = 0; i < NBUILTIN; i++)
		known |= strcmp(builtin[i].provider, provider) == 0;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < NBUILTIN; i++) {
		const struct spend_price *p = &builtin[i].p;
		if (known && strcmp(builtin[i].provider, provider) != 0)
			continue;
		out->input = most(out->input, p->input);
		out->output = most(out->output, p->output);
		out->cache_write = most(out->cache_write, p->cache_write);
		out->cache_read = most(out->cache_read, p->cache_read);
	}
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
spend_price_for(struct store *st, const char *provider, const char *model,
                struct spend_price *out, char *key, size_t len)
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
			goto out;
		}
	for (int i = 0; i < 2 && names[i]; i++)
		if ((b = builtin_match(names[i])) != NULL) {
			*out = b->p;
			snprintf(key, len, "%s", b->name);
			goto out;
		}
	if ((v = jv_get(t, "*")) != NULL && jv_type(v) == JV_OBJECT) {
		price_from_json(v, out);
		snprintf(key, len, "*");
	} else {
		provider_highest(provider, out);
		snprintf(key, len, "* (the highest of %s)",
		         provider[0] ? provider : "all");
	}
out:
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

/* ---- the table through the API ------------------------------------------ */

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

	for (size_t i = 0; i < NBUILTIN; i++)
		if (jv_get(t, builtin[i].name) == NULL)
			jv_set(o, builtin[i].name, price_json(&builtin[i].p));
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

/* One entry of a table from the API: 0, or -1 with why. */
static int
price_entry_ok(const char *k, const struct jv *p, char *why, size_t len)
{
	void *it = NULL;
	const char *k2;
	struct jv *f;

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
	while (jv_each(p, &it, &k2, &f))
		if (strcmp(k2, "input") && strcmp(k2, "output") &&
		    strcmp(k2, "cache_write") && strcmp(k2, "cache_read")) {
			snprintf(why, len,
			         "prices.%.60s: unknown field \"%.40s\"", k,
			         k2);
			return -1;
		}
	return 0;
}

int
spend_prices_set(struct store *st, const struct jv *v, char *why, size_t len)
{
	struct buf text;
	void *it = NULL;
	const char *k;
	struct jv *p;
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
		if (price_entry_ok(k, p, why, len) < 0)
			return -1;
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
