/* Spend: prices, costs, budgets and the counts in a real store. */
#include <stdio.h>

#include "sandbox/core.h"
#include "spend/spend.h"
#include "store_fixture.h"
#include "unit.h"

/* Prices here are whole or exact in binary: compare as integers. */
#define EQ(d, n) ((long long)((d)*1000) == (long long)(n)*1000)

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
	spend_price_for(core.store, "anthropic/claude-sonnet-4-5", &p, key,
	                sizeof(key));
	CHECK_STR(key, "claude-sonnet");
	CHECK(EQ(p.input, 3) && EQ(p.output, 15));
	spend_price_for(core.store, "claude-opus-4-1-2025", &p, key,
	                sizeof(key));
	CHECK_STR(key, "claude-opus-4-1");
	spend_price_for(core.store, "opencode/big-pickle", &p, key,
	                sizeof(key));
	CHECK(EQ(p.input, 0) && EQ(p.output, 0));
	spend_price_for(core.store, "mystery", &p, key, sizeof(key));
	CHECK_STR(key, "*");
	CHECK(EQ(p.input, 3));
	/* The operator's table wins, by the longest prefix; "*" too. */
	v = json("{\"claude-sonnet-4\":{\"input\":1,\"output\":2},"
	         "\"*\":{\"input\":9,\"output\":9}}");
	CHECK(spend_prices_set(core.store, v, why, sizeof(why)) == 0);
	jv_free(v);
	spend_price_for(core.store, "claude-sonnet-4-5", &p, key, sizeof(key));
	CHECK_STR(key, "claude-sonnet-4");
	CHECK(EQ(p.input, 1) && EQ(p.output, 2) && EQ(p.cache_read, 0));
	spend_price_for(core.store, "claude-haiku-4-5", &p, key, sizeof(key));
	CHECK_STR(key, "claude-haiku");
	spend_price_for(core.store, "mystery", &p, key, sizeof(key));
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
	CHECK(spend_record(core.store, "T1", a.id, "t1", "gpt-5", &d, why,
	                   sizeof(why)) == 0);
	/* 600 * 1.25 + 400 * 10 = 4750 millionths. */
	CHECK(store_spend_get(core.store, "task", "T1", &s) == 0);
	CHECK(s.input == 600 && s.output == 400 && s.cost_micro == 4750 &&
	      s.requests == 1);
	d = (struct store_spend){.input = 500};
	CHECK(spend_record(core.store, "T1", a.id, "t1", "gpt-5", &d, why,
	                   sizeof(why)) == 1);
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

static const struct unit_test tests[] = {
    {"costs in millionths of a dollar", costs},
    {"budgets from the API", budgets},
    {"prices: built in, the operator's, the default", prices},
    {"counts, budgets reached and raised, tenants apart", counts_and_checks},
};

int
main(void)
{
	return UNIT_RUN("spend", tests);
}
