/*
 * The releases' figures for GET /metrics (store.h): how many releases
 * are in each status and how many apps serve one, in one statement
 * under the lock.  Kept apart from releases.c, whose rows it only
 * counts.
 */
#include "store/store.h"

#include "store/internal.h"

static int
stats_of(sqlite3_stmt *st, void *out)
{
	struct release_stats *r = out;

	r->building = sqlite3_column_int64(st, 0);
	r->ready = sqlite3_column_int64(st, 1);
	r->failed = sqlite3_column_int64(st, 2);
	r->published = sqlite3_column_int64(st, 3);
	return 0;
}

int
store_release_stats(struct store *s, struct release_stats *out)
{
	int rc;

	*out = (struct release_stats){0};
	LOCK(s);
	rc = store_one(
	    store_prep(s,
	               "SELECT (SELECT count(*) FROM release WHERE status = "
	               "'building'), (SELECT count(*) FROM release WHERE "
	               "status = 'ready'), (SELECT count(*) FROM release "
	               "WHERE status = 'failed'), (SELECT count(*) FROM "
	               "publication WHERE release_id != '')",
	               ""),
	    stats_of, out);
	UNLOCK(s);
	return rc;
}
