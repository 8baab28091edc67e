/*
 * Spend: prices (spend/prices.c), counts, budgets and the holds of the
 * calls under way (spend/spend.c).  The credential proxy reserves an
 * estimate before each model call and settles it with the answer's
 * tokens; the API shows and edits them.  Any thread; each call does a
 * few store reads or one write.
 */
#ifndef SPEND_SPEND_H
#define SPEND_SPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/jv.h"
#include "lib/ulid.h"
#include "store/store.h"

#define SPEND_PRICES_MAX_BYTES 16384 /* the operator's price table */
#define SPEND_PRICES_MAX       64    /* models in it */
#define SPEND_MODEL_MAX        128
#define SPEND_REASON_MAX       256
#define SPEND_USD_MAX          1000000000.0 /* a budget in dollars */
#define SPEND_TOKENS_MAX       1000000000000000LL

/* US dollars per million tokens. */
struct spend_price {
	double input, output, cache_write, cache_read;
};

/*
 * The scope of an app's own model calls (made while none of its tasks
 * runs): their counts, and the budget whose presence is the app's
 * opt-in (PATCH /v1/apps/{id} "own_model_calls").
 */
#define SPEND_APP_CALLS  "app_calls"
#define SPEND_TENANT_MAX 63

/*
 * The price of model (an agent's spelling: "anthropic/claude-…" and
 * "claude-…" are the same) served by provider (the proxy's upstream
 * name, "" unknown): the operator's table (exact keys, or "prefix*"
 * keys, the longest wins), then the built-in one (exact names only);
 * else the table's "*" entry, else the highest price of the provider's
 * built-in models (of all of them for a provider we do not know).
 * Writes what matched to key (len bytes).
 */
void spend_price_for(struct store *s, const char *provider, const char *model,
                     struct spend_price *out, char *key, size_t len);
/* millionths of a dollar for d's tokens at p (rounded up). */
int64_t spend_cost_micro(const struct spend_price *p,
                         const struct store_spend *d);

/*
 * One model call's hold on the budgets while it is under way (the
 * caller's memory, zeroed, app and tenant filled in; own for an app's
 * own call, made while none of its tasks runs).  Held from
 * spend_reserve until spend_settle or spend_release; the memory must
 * stay until then.
 */
struct spend_hold {
	struct spend_hold *next, *prev; /* spend.c's list */
	char app[ULID_LEN + 1];
	char tenant[SPEND_TENANT_MAX + 1];
	bool own;
	int64_t tokens, micro; /* the estimate held */
	bool held;
};

/*
 * Holds in_tokens + out_tokens of model (at its price) for h, unless
 * what was spent, what the calls under way hold and this estimate would
 * pass a budget of h's app, tenant or (own) the app's own calls: then 1
 * with the reason in why ("budget reached: app NAME spent $4.90 of
 * $5.00; calls under way hold …"), nothing held.  0 held (also on
 * database trouble: counting must not stop the work).
 */
int spend_reserve(struct store *s, struct spend_hold *h, const char *provider,
                  const char *model, int64_t in_tokens, int64_t out_tokens,
                  char *why, size_t len);
/*
 * The answer came: records d's tokens of model (cost filled in here) for
 * the task (or, "" with h->own, the app's own calls), h's app and tenant,
 * and drops h's hold, in one step.  Then whether a budget is now
 * reached: 1 with the reason in why, 0 not, -1 database trouble.
 */
int spend_settle(struct store *s, struct spend_hold *h, const char *task_id,
                 const char *provider, const char *model, struct store_spend *d,
                 char *why, size_t len);
/* Drops h's hold, nothing recorded (a call that never went; idempotent). */
void spend_release(struct spend_hold *h);
/* spend_settle for a call that held nothing (task_id "": its own). */
int spend_record(struct store *s, const char *task_id, const char *app_id,
                 const char *tenant, const char *provider, const char *model,
                 struct store_spend *d, char *why, size_t len);
/*
 * Whether app_id's or tenant's budget (its own, else the instance
 * default for apps or tenants) is reached: 1 with the reason ("budget
 * reached: app NAME spent $5.01 of $5.00"), 0 not (also on database
 * trouble: counting must not stop the work).
 */
int spend_check(struct store *s, const char *app_id, const char *tenant,
                char *why, size_t len);
/* Whether any budget applies to a call of app_id and tenant (own: and
 * the app's own-calls budget). */
bool spend_budget_applies(struct store *s, const char *app_id,
                          const char *tenant, bool own);

/* JSON for the API. */
struct jv *spend_json(const struct store_spend *s);
/* {"tokens":N|null,"usd":X|null} or null for none. */
struct jv *spend_budget_json(const struct store_budget *b, bool set);
/*
 * A budget from the API: null (none), or an object with "tokens"
 * (integer 1..SPEND_TOKENS_MAX or null) and/or "usd" (number > 0 up
 * to SPEND_USD_MAX, or null), nothing else.  0, or -1 with why.
 */
int spend_budget_parse(const struct jv *v, struct store_budget *out, char *why,
                       size_t len);
/*
 * The i-th model of the built-in price table, and the proxy upstream
 * that serves it (*provider); NULL past the end.  For model lists.
 */
const char *spend_model_at(size_t i, const char **provider);
/* The effective price table as JSON (built-in merged with the operator's). */
struct jv *spend_prices_json(struct store *s);
/*
 * Checks a price table from the API (object of model -> {input, output,
 * cache_write?, cache_read?}, numbers 0..100000) and stores it as the
 * operator's (null: none).  0, or -1 with why (nothing stored).
 */
int spend_prices_set(struct store *s, const struct jv *v, char *why,
                     size_t len);

#endif
