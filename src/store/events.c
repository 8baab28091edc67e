/*
 * Activity timeline rows (migration 15).  An event is written once and
 * never changed; its ULID id orders the timeline and is the cursor of a
 * page (before: newest first below it) and of a follower's replay
 * (after: oldest first above it).  The app's owner is copied in the
 * insert itself (INSERT ... SELECT), so an event of an app that is gone
 * is never written and tenancy needs no join.  Pruning is by age and by
 * a cap per app, both as one statement each.
 */
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define EVENT_COLS                                                             \
	"id, app_id, owner, type, severity, message, sandbox_id, task_id, "    \
	"snapshot_id, actor, payload, created_at"

static int
event_from_row(sqlite3_stmt *st, void *out)
{
	struct app_event *ev = out;

	memset(ev, 0, sizeof(*ev));
	store_col_text(st, 0, ev->id, sizeof(ev->id));
	store_col_text(st, 1, ev->app_id, sizeof(ev->app_id));
	store_col_text(st, 2, ev->owner, sizeof(ev->owner));
	store_col_text(st, 3, ev->type, sizeof(ev->type));
	store_col_text(st, 4, ev->severity, sizeof(ev->severity));
	store_col_text(st, 5, ev->message, sizeof(ev->message));
	store_col_text(st, 6, ev->sandbox_id, sizeof(ev->sandbox_id));
	store_col_text(st, 7, ev->task_id, sizeof(ev->task_id));
	store_col_text(st, 8, ev->snapshot_id, sizeof(ev->snapshot_id));
	store_col_text(st, 9, ev->actor, sizeof(ev->actor));
	store_col_text(st, 10, ev->payload, sizeof(ev->payload));
	ev->created_at = sqlite3_column_int64(st, 11);
	return 0;
}

STORE_CALLER(call_event, struct app_event)

static const struct store_rows event_rows = {sizeof(struct app_event),
                                             event_from_row, call_event, NULL};

int
store_event_insert(struct store *s, struct app_event *ev)
{
	int rc;

	LOCK(s);
	rc = store_run(s, store_prep(s,
	                             "INSERT INTO app_event (" EVENT_COLS ") "
	                             "SELECT ?1, a.id, a.owner, ?2, ?3, ?4, "
	                             "?5, ?6, ?7, ?8, ?9, ?10 FROM app a "
	                             "WHERE a.id = ?11",
	                             "sssssssssis", ev->id, ev->type,
	                             ev->severity, ev->message, ev->sandbox_id,
	                             ev->task_id, ev->snapshot_id, ev->actor,
	                             ev->payload, ev->created_at, ev->app_id));
	if (rc == 0)
		rc = store_one(
		    store_prep(s,
		               "SELECT owner FROM app_event "
		               "WHERE id = ?",
		               "s", ev->id),
		    store_fill_text,
		    &(struct store_text){ev->owner, sizeof(ev->owner)});
	UNLOCK(s);
	return rc;
}

int
store_event_list(struct store *s, const char *app_id, const char *before,
                 const char *after, const char *type_prefix, int max,
                 int (*fn)(const struct app_event *, void *), void *arg)
{
	const char *p = type_prefix ? type_prefix : "";

	if (before != NULL || after == NULL)
		return store_each(s, &event_rows, (store_any_fn *)fn, arg,
		                  "SELECT " EVENT_COLS " FROM app_event "
		                  "WHERE app_id = ?1 AND (?2 IS NULL OR "
		                  "id < ?2) AND substr(type, 1, length(?3)) "
		                  "= ?3 ORDER BY id DESC LIMIT ?4",
		                  "sssn", app_id, before, p, max);
	return store_each(s, &event_rows, (store_any_fn *)fn, arg,
	                  "SELECT " EVENT_COLS " FROM app_event "
	                  "WHERE app_id = ?1 AND id > ?2 AND "
	                  "substr(type, 1, length(?3)) = ?3 "
	                  "ORDER BY id LIMIT ?4",
	                  "sssn", app_id, after, p, max);
}

int
store_event_prune(struct store *s, int64_t older_than, int64_t max_per_app,
                  int64_t *deleted)
{
	int rc = 0;

	*deleted = 0;
	LOCK(s);
	if (older_than > 0) {
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app_event WHERE "
		                             "created_at < ?",
		                             "i", older_than));
		if (rc == 0)
			*deleted += sqlite3_changes(s->db);
	}
	if ((rc == 0 || rc == STORE_NOT_FOUND) && max_per_app > 0) {
		/* Only apps over the cap are ranked: the inner GROUP BY walks
		 * the (app_id, id) index, the window only their rows. */
		rc = store_run(
		    s, store_prep(s,
		                  "DELETE FROM app_event WHERE rowid IN ("
		                  "SELECT rowid FROM (SELECT rowid, "
		                  "row_number() OVER (PARTITION BY app_id "
		                  "ORDER BY id DESC) AS n FROM app_event "
		                  "WHERE app_id IN (SELECT app_id FROM "
		                  "app_event GROUP BY app_id HAVING count(*) > "
		                  "?1)) WHERE n > ?1)",
		                  "i", max_per_app));
		if (rc == 0)
			*deleted += sqlite3_changes(s->db);
	}
	UNLOCK(s);
	return rc == STORE_NOT_FOUND ? 0 : rc;
}
