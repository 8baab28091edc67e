/*
 * Custom domain rows (migration 17).  The host is the primary key, so a
 * name is one app's across every tenant: a second insert is
 * STORE_CONFLICT.  Verification (publish/verify.c) writes the status,
 * how it was verified and what is missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define DOM_COLS                                                               \
	"host, owner, app_id, status, method, reason, token, created_at, "     \
	"checked_at, verified_at"

static int
dom_from_row(sqlite3_stmt *st, void *out)
{
	struct domain *d = out;

	memset(d, 0, sizeof(*d));
	store_col_text(st, 0, d->host, sizeof(d->host));
	store_col_text(st, 1, d->owner, sizeof(d->owner));
	store_col_text(st, 2, d->app_id, sizeof(d->app_id));
	store_col_text(st, 3, d->status, sizeof(d->status));
	store_col_text(st, 4, d->method, sizeof(d->method));
	store_col_text(st, 5, d->reason, sizeof(d->reason));
	store_col_text(st, 6, d->token, sizeof(d->token));
	d->created_at = sqlite3_column_int64(st, 7);
	d->checked_at = sqlite3_column_int64(st, 8);
	d->verified_at = sqlite3_column_int64(st, 9);
	return 0;
}

int
store_domain_insert(struct store *s, const struct domain *d)
{
	const char *status = d->status[0] ? d->status : "pending";

	return store_exec(s,
	                  "INSERT INTO domain (" DOM_COLS ") VALUES (?, ?, ?, "
	                  "?, ?, ?, ?, ?, ?, ?)",
	                  "sssssssiii", d->host, d->owner, d->app_id, status,
	                  d->method, d->reason, d->token, d->created_at,
	                  d->checked_at, d->verified_at);
}

int
store_domain_update(struct store *s, const struct domain *d)
{
	return store_exec(s,
	                  "UPDATE domain SET status = ?, method = ?, reason = "
	                  "?, checked_at = ?, verified_at = ? WHERE host = ?",
	                  "sssiis", d->status, d->method, d->reason,
	                  d->checked_at, d->verified_at, d->host);
}

int
store_domain_get(struct store *s, const char *host, struct domain *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " DOM_COLS " FROM domain "
	                          "WHERE host = ?",
	                          "s", host),
	               dom_from_row, out);
	UNLOCK(s);
	return rc;
}

int
store_domain_delete(struct store *s, const char *host)
{
	return store_exec(s, "DELETE FROM domain WHERE host = ?", "s", host);
}

STORE_CALLER(call_domain, struct domain)

static const struct store_rows domain_rows = {
    .size = sizeof(struct domain),
    .fill = dom_from_row,
    .call = call_domain,
};

int
store_domain_list(struct store *s, const char *app_id,
                  int (*fn)(const struct domain *, void *), void *arg)
{
	return store_each(s, &domain_rows, (store_any_fn *)fn, arg,
	                  "SELECT " DOM_COLS " FROM domain WHERE (?1 IS NULL "
	                  "OR app_id = ?1) ORDER BY app_id, host",
	                  "s", app_id);
}
