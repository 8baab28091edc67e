/*
 * Spend rows and budgets (see store.h).  One answer's count is added to
 * its task's (or its app's own calls'), app's and tenant's rows in one
 * transaction (an upsert each), so the three never disagree and a crash keeps
 * all or none of it.  Budgets are plain rows; NULL is "no limit".
 */
#include <sqlite3.h>
#include <string.h>

#include "lib/clock.h"
#include "store/internal.h"
#include "store/store.h"

static int
add_one(struct store *s, const char *scope, const char *id,
        const struct store_spend *d, int64_t now)
{
	return store_run(
	    s, store_prep(s,
	                  "INSERT INTO spend (scope, id, input, output, "
	                  "cache_write, cache_read, cost_micro, requests, "
	                  "updated_at) VALUES (?,?,?,?,?,?,?,?,?) "
	                  "ON CONFLICT (scope, id) DO UPDATE SET "
	                  "input = input + excluded.input, "
	                  "output = output + excluded.output, "
	                  "cache_write = cache_write + excluded.cache_write, "
	                  "cache_read = cache_read + excluded.cache_read, "
	                  "cost_micro = cost_micro + excluded.cost_micro, "
	                  "requests = requests + excluded.requests, "
	                  "updated_at = excluded.updated_at",
	                  "ssiiiiiii", scope, id, d->input, d->output,
	                  d->cache_write, d->cache_read, d->cost_micro,
	                  d->requests, now));
}

int
store_spend_add(struct store *s, const char *scope, const char *id,
                const char *app_id, const char *tenant,
                const struct store_spend *d)
{
	int64_t now = clock_now_ms();
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0 && scope[0] && id[0])
		rc = add_one(s, scope, id, d, now);
	if (rc == 0 && app_id[0])
		rc = add_one(s, "app", app_id, d, now);
	if (rc == 0)
		rc = add_one(s, "tenant", tenant, d, now);
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

static int
spend_from_row(sqlite3_stmt *st, void *out)
{
	struct store_spend *o = out;

	o->input = sqlite3_column_int64(st, 0);
	o->output = sqlite3_column_int64(st, 1);
	o->cache_write = sqlite3_column_int64(st, 2);
	o->cache_read = sqlite3_column_int64(st, 3);
	o->cost_micro = sqlite3_column_int64(st, 4);
	o->requests = sqlite3_column_int64(st, 5);
	o->updated_at = sqlite3_column_int64(st, 6);
	return 0;
}

int
store_spend_get(struct store *s, const char *scope, const char *id,
                struct store_spend *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT input, output, cache_write, "
	                          "cache_read, cost_micro, requests, "
	                          "updated_at FROM spend WHERE scope = ? AND "
	                          "id = ?",
	                          "ss", scope, id),
	               spend_from_row, out);
	UNLOCK(s);
	return rc == STORE_NOT_FOUND ? 0 : rc;
}

static int
budget_from_row(sqlite3_stmt *st, void *out)
{
	struct store_budget *b = out;

	b->max_tokens = sqlite3_column_type(st, 0) == SQLITE_NULL
	                    ? -1
	                    : sqlite3_column_int64(st, 0);
	b->max_micro = sqlite3_column_type(st, 1) == SQLITE_NULL
	                   ? -1
	                   : sqlite3_column_int64(st, 1);
	return 0;
}

int
store_budget_get(struct store *s, const char *scope, const char *id,
                 struct store_budget *out)
{
	int rc;

	out->max_tokens = out->max_micro = -1;
	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT max_tokens, max_micro FROM budget "
	                          "WHERE scope = ? AND id = ?",
	                          "ss", scope, id),
	               budget_from_row, out);
	UNLOCK(s);
	return rc;
}

int
store_budget_set(struct store *s, const char *scope, const char *id,
                 const struct store_budget *b)
{
	if (b == NULL || (b->max_tokens < 0 && b->max_micro < 0))
		return store_exec(
		    s, "DELETE FROM budget WHERE scope = ? AND id = ?", "ss",
		    scope, id);
	return store_exec(
	    s,
	    "INSERT OR REPLACE INTO budget (scope, id, max_tokens, max_micro, "
	    "updated_at) VALUES (?, ?, NULLIF(?, -1), NULLIF(?, -1), ?)",
	    "ssiii", scope, id, b->max_tokens, b->max_micro, clock_now_ms());
}
