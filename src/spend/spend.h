/*
 * Spend: prices, counts and budgets (spend/spend.c).  The credential
 * proxy records each model answer's tokens here and asks, before each
 * model call, whether a budget is reached; the API shows and edits
 * them.  Any thread; each call does a few store reads or one write.
 */
#ifndef SPEND_SPEND_H
#define SPEND_SPEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/jv.h"
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
 * The price of model (an agent's spelling: "anthropic/claude-…" and
 * "claude-…" are the same): the operator's table, then the built-in
 * one, each by the longest key that begins the name (the part after
 * the last '/' is tried as well); else the table's "*" entry, else the
 * built-in "*".  Writes the key that matched to key (len bytes).
 */
void spend_price_for(struct store *s, const char *model,
                     struct spend_price *out, char *key, size_t len);
/* millionths of a dollar for d's tokens at p (rounded up). */
int64_t spend_cost_micro(const struct spend_price *p,
                         const struct store_spend *d);
/*
 * Records one answer of model (d's tokens, cost filled in here) for
 * the task ("" when none), app and tenant.  Then whether a budget is
 * now reached: 1 with the reason in why, 0 not, -1 database trouble.
 */
int spend_record(struct store *s, const char *task_id, const char *app_id,
                 const char *tenant, const char *model, struct store_spend *d,
                 char *why, size_t len);
/*
 * Whether app_id's or tenant's budget (its own, else the instance
 * default for apps or tenants) is reached: 1 with the reason ("budget
 * reached: app NAME spent $5.01 of $5.00"), 0 not (also on database
 * trouble: counting must not stop the work).
 */
int spend_check(struct store *s, const char *app_id, const char *tenant,
                char *why, size_t len);

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
