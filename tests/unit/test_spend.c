/* Spend: prices, costs, budgets and the counts in a real store. */
#include <stdio.h>

#include "sandbox/core.h"
#include "spend/spend.h"
#include "store_fixture.h"
#include "unit.h"

/* Prices here are whole or exact in binary: compare as integers. */
#define EQ(d, n) ((long long)((d)*1000) == (long long)((n)*1000))

static struct core core;

static void
costs(void)
{
	struct spend_price p = {3, 15, 3.75, 0.3};
	struct store_spend d = {
	    .input = 1000, .output = 50, .cache_write = 10, .cache_read = 20};

	/* 3000 + 750 + 37.5 + 6 = 3793.5 millionths, rounded up. */
	CHECK(spend_cost_micro(&p, &d) == 3794);
	d = (struct store_spend){.input = 1000000};
	CHECK(spend_cost_micro(&p, &d) == 3000000);
	d = (struct store_spend){0};
	CHECK(spend_cost_micro(&p, &d) == 0);
}

static struct jv *
json(const char *s)
{
	return jv_parse(s, strlen(s), 8, NULL, 0);
}

static void
budgets(void)
{
	static const char *const bad[] = {"5",
	                                  "\"x\"",
	                                  "{\"usd\":0}",
	                                  "{\"usd\":-1}",
	                                  "{\"usd\":\"5\"}",
	                                  "{\"tokens\":1.5}",
	                                  "{\"tokens\":0}",
	                                  "{\"tokens\":true}",
	                                  "{\"usd\":1e12}",
	                                  "{\"other\":1}"};
	struct store_budget b;
	char why[160];
	struct jv *v;

	v = json("{\"usd\":5.01,\"tokens\":100}");
	CHECK(spend_budget_parse(v, &b, why, sizeof(why)) == 0);
	CHECK(b.max_micro == 5010000 && b.max_tokens == 100);
	jv_free(v);
	v = json("{\"usd\":null,\"tokens\":7}");
	CHECK(spend_budget_parse(v, &b, why, sizeof(why)) == 0);
	CHECK(b.max_micro == -1 && b.max_tokens == 7);
	jv_free(v);
	v = json("null");
	CHECK(spend_budget_parse(v, &b, why, sizeof(why)) == 0);
	CHECK(b.max_micro == -1 && b.max_tokens == -1);
	jv_free(v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		v = json(bad[i]);
		CHECK(spend_budget_parse(v, &b, why, sizeof(why)) < 0);
		jv_free(v);
	}
}

static void
prices(void)
{
	struct spend_price p;
	char key[64], why[256];
	struct jv *v;

	CHECK((core.store = store_fixture_open()) != NULL);
	if (core.store == NULL)
		return;
	spend_price_for(core.store, "anthropic", "anthropic/claude-sonnet-4-5",
	                &p, key, sizeof(key));
	CHECK_STR(key, "claude-sonnet-4-5");
	CHECK(EQ(p.input, 3) && EQ(p.output, 15));
	/* Exact names only: the $15 opus is not priced as the $5 one, nor
	 * gpt-5-pro as gpt-5. */
	spend_price_for(core.store, "anthropic", "claude-opus-4", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 15) && EQ(p.output, 75));
	spend_price_for(core.store, "anthropic", "claude-opus-4-5", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 5) && EQ(p.output, 25));
	spend_price_for(core.store, "openai", "gpt-5-pro", &p, key,
	                sizeof(key));
	CHECK(EQ(p.output, 120));
	spend_price_for(core.store, "zen", "opencode/big-pickle", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 0) && EQ(p.output, 0));
	/* Unknown: the highest of its provider, each kind. */
	spend_price_for(core.store, "anthropic", "claude-opus-9", &p, key,
	                sizeof(key));
	CHECK(strncmp(key, "*", 1) == 0);
	CHECK(EQ(p.input, 15) && EQ(p.output, 75) && EQ(p.cache_write, 18.75) &&
	      EQ(p.cache_read, 1.5));
	spend_price_for(core.store, "openai", "gpt-5-mini-turbo", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 15) && EQ(p.output, 120));
	/* A provider whose models we do not know: the highest of all. */
	spend_price_for(core.store, "compat", "mystery", &p, key, sizeof(key));
	CHECK(EQ(p.input, 15) && EQ(p.output, 120) && EQ(p.cache_write, 18.75));
	/* The operator's table wins: exact, "prefix*" by the longest, "*". */
	v = json("{\"claude-sonnet-4*\":{\"input\":1,\"output\":2},"
	         "\"claude-sonnet-4-5-x\":{\"input\":4,\"output\":4},"
	         "\"claude-haiku\":{\"input\":7,\"output\":7},"
	         "\"*\":{\"input\":9,\"output\":9}}");
	CHECK(spend_prices_set(core.store, v, why, sizeof(why)) == 0);
	jv_free(v);
	spend_price_for(core.store, "anthropic", "claude-sonnet-4-5", &p, key,
	                sizeof(key));
	CHECK_STR(key, "claude-sonnet-4*");
	CHECK(EQ(p.input, 1) && EQ(p.output, 2) && EQ(p.cache_read, 0));
	spend_price_for(core.store, "anthropic", "claude-sonnet-4-5-x", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 4));
	/* "claude-haiku" is exact: claude-haiku-4-5 is the built-in's. */
	spend_price_for(core.store, "anthropic", "claude-haiku-4-5", &p, key,
	                sizeof(key));
	CHECK_STR(key, "claude-haiku-4-5");
	spend_price_for(core.store, "anthropic", "mystery", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 9));
	v = json("{\"m\":{\"input\":-1,\"output\":2}}");
	CHECK(spend_prices_set(core.store, v, why, sizeof(why)) < 0);
	jv_free(v);
	v = json("{\"m\":{\"input\":1,\"output\":2,\"extra\":1}}");
	CHECK(spend_prices_set(core.store, v, why, sizeof(why)) < 0);
	jv_free(v);
	store_fixture_close(core.store);
	core.store = NULL;
}

static void
counts_and_checks(void)
{
	struct store_spend d = {.input = 600, .output = 400}, s;
	struct store_budget b = {.max_tokens = 1500, .max_micro = -1};
	char why[SPEND_REASON_MAX];
	struct app a = {0};

	CHECK((core.store = store_fixture_open()) != NULL);
	if (core.store == NULL)
		return;
	snprintf(a.id, sizeof(a.id), "01ARZ3NDEKTSV4RRFFQ69G5FAV");
	snprintf(a.owner, sizeof(a.owner), "t1");
	snprintf(a.name, sizeof(a.name), "shop");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	CHECK(store_app_insert(core.store, &a) == 0);
	CHECK(store_budget_set(core.store, "app", a.id, &b) == 0);
	CHECK(spend_check(core.store, a.id, "t1", why, sizeof(why)) == 0);
	CHECK(spend_record(core.store, "T1", a.id, "t1", "openai", "gpt-5", &d,
	                   why, sizeof(why)) == 0);
	/* 600 * 1.25 + 400 * 10 = 4750 millionths. */
	CHECK(store_spend_get(core.store, "task", "T1", &s) == 0);
	CHECK(s.input == 600 && s.output == 400 && s.cost_micro == 4750 &&
	      s.requests == 1);
	d = (struct store_spend){.input = 500};
	CHECK(spend_record(core.store, "T1", a.id, "t1", "openai", "gpt-5", &d,
	                   why, sizeof(why)) == 1);
	CHECK_STR(why, "budget reached: app shop spent 1500 of 1500 tokens");
	/* Another tenant's counts and budgets are its own. */
	CHECK(store_spend_get(core.store, "tenant", "t2", &s) == 0);
	CHECK(s.input == 0 && s.requests == 0);
	CHECK(spend_check(core.store, "", "t2", why, sizeof(why)) == 0);
	/* The instance default for tenants applies to t2 as well. */
	b = (struct store_budget){.max_tokens = -1, .max_micro = 1};
	CHECK(store_budget_set(core.store, "instance", "tenant", &b) == 0);
	CHECK(spend_check(core.store, "", "t2", why, sizeof(why)) == 0);
	CHECK(spend_check(core.store, "", "t1", why, sizeof(why)) == 1);
	CHECK(strncmp(why, "budget reached: tenant t1 spent $0.0", 36) == 0);
	/* Raised: the next call goes through. */
	CHECK(store_budget_set(core.store, "app", a.id, NULL) == 0);
	CHECK(store_budget_set(core.store, "instance", "tenant", NULL) == 0);
	CHECK(spend_check(core.store, a.id, "t1", why, sizeof(why)) == 0);
	store_fixture_close(core.store);
	core.store = NULL;
}

/* Calls under way hold their estimate: concurrent ones cannot pass a
 * budget together, and settling replaces the hold with the count. */
static void
holds(void)
{
	struct store_budget b = {.max_tokens = 1000, .max_micro = -1};
	struct spend_hold hs[3] = {0};
	struct spend_hold *h1 = &hs[0], *h2 = &hs[1], *h3 = &hs[2];
	struct store_spend d = {.input = 100, .output = 50}, s;
	char why[SPEND_REASON_MAX];
	struct app a = {0};

	CHECK((core.store = store_fixture_open()) != NULL);
	if (core.store == NULL)
		return;
	snprintf(a.id, sizeof(a.id), "01ARZ3NDEKTSV4RRFFQ69G5FAW");
	snprintf(a.owner, sizeof(a.owner), "t1");
	snprintf(a.name, sizeof(a.name), "bot");
	snprintf(a.tags_json, sizeof(a.tags_json), "[]");
	CHECK(store_app_insert(core.store, &a) == 0);
	CHECK(store_budget_set(core.store, "app", a.id, &b) == 0);
	for (int i = 0; i < 3; i++) {
		snprintf(hs[i].app, sizeof(hs[i].app), "%s", a.id);
		snprintf(hs[i].tenant, sizeof(hs[i].tenant), "t1");
	}
	CHECK(spend_reserve(core.store, h1, "openai", "gpt-5", 100, 300, why,
	                    sizeof(why)) == 0);
	CHECK(spend_reserve(core.store, h2, "openai", "gpt-5", 100, 300, why,
	                    sizeof(why)) == 0);
	/* 800 held: a third of 400 would pass the 1000. */
	CHECK(spend_reserve(core.store, h3, "openai", "gpt-5", 100, 300, why,
	                    sizeof(why)) == 1);
	CHECK(!h3->held);
	CHECK(strncmp(why,
	              "budget reached: app bot spent 0 of 1000 tokens; "
	              "calls under way hold 800",
	              72) == 0);
	/* Nothing is counted for a hold. */
	CHECK(spend_check(core.store, a.id, "t1", why, sizeof(why)) == 0);
	/* h1 settles at 150: 550 taken, the third fits. */
	CHECK(spend_settle(core.store, h1, "T9", "openai", "gpt-5", &d, why,
	                   sizeof(why)) == 0);
	CHECK(!h1->held);
	CHECK(store_spend_get(core.store, "app", a.id, &s) == 0);
	CHECK(s.input == 100 && s.output == 50 && s.requests == 1);
	CHECK(spend_reserve(core.store, h3, "openai", "gpt-5", 100, 300, why,
	                    sizeof(why)) == 0);
	spend_release(h2);
	spend_release(h2); /* idempotent */
	spend_release(h3);
	/* An app's own calls: their budget too, and their own row. */
	b = (struct store_budget){.max_tokens = 200, .max_micro = -1};
	CHECK(store_budget_set(core.store, SPEND_APP_CALLS, a.id, &b) == 0);
	h1->own = true;
	CHECK(spend_reserve(core.store, h1, "openai", "gpt-5", 100, 300, why,
	                    sizeof(why)) == 1);
	CHECK(strstr(why, "app bot (its own calls) spent 0 of 200") != NULL);
	CHECK(spend_reserve(core.store, h1, "openai", "gpt-5", 50, 100, why,
	                    sizeof(why)) == 0);
	d = (struct store_spend){.input = 50, .output = 60};
	CHECK(spend_settle(core.store, h1, "", "openai", "gpt-5", &d, why,
	                   sizeof(why)) == 0);
	CHECK(store_spend_get(core.store, SPEND_APP_CALLS, a.id, &s) == 0);
	CHECK(s.input == 50 && s.output == 60);
	CHECK(spend_budget_applies(core.store, a.id, "t1", true));
	CHECK(!spend_budget_applies(core.store, "", "t2", false));
	store_fixture_close(core.store);
	core.store = NULL;
}

static const struct unit_test tests[] = {
    {"costs in millionths of a dollar", costs},
    {"budgets from the API", budgets},
    {"prices: exact, the operator's, unknown at the highest", prices},
    {"counts, budgets reached and raised, tenants apart", counts_and_checks},
    {"holds of the calls under way", holds},
};

int
main(void)
{
	return UNIT_RUN("spend", tests);
}
