/*
 * Trash rows (migration 12): an app deleted with a retention kept as its
 * app row (trashed_at set) and one trash row that copies what its
 * sandbox row held, so a restore can make the sandbox row again under
 * the same id (the workspace path, the task history and the event logs
 * are keyed by it).  Each step of a move is one transaction here; the
 * order of the steps and the files between them is trash/trash.c's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define TRASH_COLS                                                             \
	"t.id, t.owner, t.app_id, a.name, t.state, t.sandbox_id, t.bytes, "    \
	"t.restore_name, t.deleted_at, t.purge_at, t.kind"
#define TRASH_FROM " FROM trash t JOIN app a ON a.id = t.app_id "

static const char *const state_names[] = {
    [TRASH_DELETING] = "deleting",
    [TRASH_TRASHED] = "trashed",
    [TRASH_RESTORING] = "restoring",
    [TRASH_PURGING] = "purging",
};

const char *
trash_state_name(enum trash_state st)
{
	if ((unsigned)st >= sizeof(state_names) / sizeof(state_names[0]))
		return NULL;
	return state_names[st];
}

static int
trash_from_row(sqlite3_stmt *st, void *out)
{
	struct trash_entry *t = out;
	char state[16];

	memset(t, 0, sizeof(*t));
	store_col_text(st, 0, t->id, sizeof(t->id));
	store_col_text(st, 1, t->owner, sizeof(t->owner));
	store_col_text(st, 2, t->app_id, sizeof(t->app_id));
	store_col_text(st, 3, t->name, sizeof(t->name));
	store_col_text(st, 4, state, sizeof(state));
	t->state = TRASH_TRASHED;
	for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]);
	     i++)
		if (strcmp(state, state_names[i]) == 0)
			t->state = (enum trash_state)i;
	store_col_text(st, 5, t->sandbox_id, sizeof(t->sandbox_id));
	t->bytes = sqlite3_column_int64(st, 6);
	store_col_text(st, 7, t->restore_name, sizeof(t->restore_name));
	t->deleted_at = sqlite3_column_int64(st, 8);
	t->purge_at = sqlite3_column_int64(st, 9);
	store_col_text(st, 10, state, sizeof(state));
	t->sandbox_only = strcmp(state, "sandbox") == 0;
	return 0;
}

int
store_trash_begin(struct store *s, const char *trash_id, const char *app_id,
                  int64_t now, int64_t purge_at)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(
		    s,
		    store_prep(s,
		               "INSERT INTO trash (id, owner, app_id, state, "
		               "sandbox_id, sb_image, sb_ports, "
		               "sb_idle_policy, sb_preset, sb_created_at, "
		               "deleted_at, purge_at) "
		               "SELECT ?1, a.owner, a.id, 'deleting', "
		               "COALESCE(s.id, ''), COALESCE(s.image, ''), "
		               "COALESCE(s.ports, ''), "
		               "COALESCE(s.idle_policy, 'sleep'), "
		               "COALESCE(s.preset, ''), "
		               "COALESCE(s.created_at, 0), ?3, ?4 "
		               "FROM app a LEFT JOIN sandbox s "
		               "ON s.app_id = a.id "
		               "WHERE a.id = ?2 AND a.trashed_at = 0",
		               "ssii", trash_id, app_id, now, purge_at));
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "UPDATE app SET trashed_at = ? "
		                             "WHERE id = ?",
		                             "is", now, app_id));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_trash_begin_sandbox(struct store *s, const char *trash_id,
                          const char *sandbox_id, int64_t now, int64_t purge_at)
{
	return store_exec(s,
	                  "INSERT INTO trash (id, owner, app_id, kind, state, "
	                  "sandbox_id, sb_image, sb_ports, sb_idle_policy, "
	                  "sb_preset, sb_created_at, deleted_at, purge_at) "
	                  "SELECT ?1, a.owner, a.id, 'sandbox', 'deleting', "
	                  "s.id, s.image, s.ports, s.idle_policy, s.preset, "
	                  "s.created_at, ?3, ?4 FROM sandbox s JOIN app a "
	                  "ON a.id = s.app_id WHERE s.id = ?2 AND "
	                  "a.trashed_at = 0",
	                  "ssii", trash_id, sandbox_id, now, purge_at);
}

int
store_trash_deleted(struct store *s, const char *trash_id,
                    const char *sandbox_id)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0 && sandbox_id[0]) {
		rc = store_run(s,
		               store_prep(s, "DELETE FROM sandbox WHERE id = ?",
		                          "s", sandbox_id));
		if (rc == STORE_NOT_FOUND)
			rc = 0;
	}
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "UPDATE trash SET state = "
		                             "'trashed' WHERE id = ?",
		                             "s", trash_id));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_trash_undo_begin(struct store *s, const char *trash_id,
                       const char *app_id)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "UPDATE app SET trashed_at = 0 "
		                             "WHERE id = ?",
		                             "s", app_id));
	if (rc == 0)
		rc =
		    store_run(s, store_prep(s, "DELETE FROM trash WHERE id = ?",
		                            "s", trash_id));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_trash_get(struct store *s, const char *owner, const char *id,
                struct trash_entry *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " TRASH_COLS TRASH_FROM
	                          "WHERE t.id = ?1 AND "
	                          "(?2 IS NULL OR t.owner = ?2)",
	                          "ss", id, owner),
	               trash_from_row, out);
	UNLOCK(s);
	return rc;
}

static int
list_where(struct store *s, const char *where, const char *owner, int64_t at,
           int limit, int (*fn)(const struct trash_entry *, void *), void *arg)
{
	char sql[1024];
	struct trash_entry *rows = NULL;
	size_t n = 0;
	int rc;

	snprintf(sql, sizeof(sql),
	         "SELECT " TRASH_COLS TRASH_FROM
	         "WHERE %s ORDER BY t.deleted_at DESC, t.id DESC LIMIT %d",
	         where, limit);
	LOCK(s);
	rc = store_collect(store_prep(s, sql, "si", owner, at), sizeof(*rows),
	                   trash_from_row, (void **)&rows, &n);
	UNLOCK(s);
	for (size_t i = 0; i < n; i++)
		if (fn(&rows[i], arg) != 0)
			break;
	free(rows);
	return rc;
}

int
store_trash_list(struct store *s, const char *owner,
                 int (*fn)(const struct trash_entry *, void *), void *arg)
{
	return list_where(s, "(?1 IS NULL OR t.owner = ?1) AND ?2 = ?2", owner,
	                  0, owner ? TRASH_LIST_MAX : 1 << 30, fn, arg);
}

int
store_trash_due(struct store *s, int64_t now,
                int (*fn)(const struct trash_entry *, void *), void *arg)
{
	return list_where(s,
	                  "?1 IS NULL AND t.state = 'trashed' AND "
	                  "(t.purge_at <= ?2 OR t.bytes < 0)",
	                  NULL, now, TRASH_LIST_MAX, fn, arg);
}

int
store_trash_set_state(struct store *s, const char *id, enum trash_state st,
                      const char *restore_name)
{
	return store_exec(s,
	                  "UPDATE trash SET state = ?, restore_name = ? "
	                  "WHERE id = ?",
	                  "sss", trash_state_name(st), restore_name, id);
}

int
store_trash_claim(struct store *s, const char *id, enum trash_state to,
                  const char *restore_name)
{
	return store_exec(s,
	                  "UPDATE trash SET state = ?, restore_name = ? "
	                  "WHERE id = ? AND state = 'trashed'",
	                  "sss", trash_state_name(to), restore_name, id);
}

int
store_trash_set_bytes(struct store *s, const char *id, int64_t bytes)
{
	return store_exec(s, "UPDATE trash SET bytes = ? WHERE id = ?", "is",
	                  bytes, id);
}

int
store_trash_usage(struct store *s, const char *owner, int64_t *entries,
                  int64_t *bytes)
{
	sqlite3_stmt *st;
	int rc = -1;

	*entries = *bytes = 0;
	LOCK(s);
	st = store_prep(s,
	                "SELECT count(*), COALESCE(sum(max(bytes, 0)), 0) "
	                "FROM trash WHERE (?1 IS NULL OR owner = ?1)",
	                "s", owner);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		*entries = sqlite3_column_int64(st, 0);
		*bytes = sqlite3_column_int64(st, 1);
		rc = 0;
	}
	sqlite3_finalize(st);
	UNLOCK(s);
	return rc;
}

int
store_trash_restored(struct store *s, const char *id, int64_t now)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(
		    s, store_prep(s,
		                  "INSERT INTO sandbox (id, app_id, status, "
		                  "status_reason, image, ports, idle_policy, "
		                  "preset, created_at, updated_at, "
		                  "last_active_at, stopped_at) "
		                  "SELECT sandbox_id, app_id, 'stopped', "
		                  "'restored', sb_image, sb_ports, "
		                  "sb_idle_policy, sb_preset, sb_created_at, "
		                  "?2, ?2, ?2 FROM trash "
		                  "WHERE id = ?1 AND sandbox_id != ''",
		                  "si", id, now));
	if (rc == STORE_NOT_FOUND)
		rc = 0; /* an app that had no sandbox */
	if (rc == 0)
		rc = store_run(
		    s, store_prep(
		           s,
		           "UPDATE app SET trashed_at = 0, updated_at = ?2, "
		           "name = CASE (SELECT restore_name FROM trash "
		           "WHERE id = ?1) WHEN '' THEN name ELSE "
		           "(SELECT restore_name FROM trash WHERE id = ?1) "
		           "END WHERE id = (SELECT app_id FROM trash "
		           "WHERE id = ?1)",
		           "si", id, now));
	if (rc == 0)
		rc =
		    store_run(s, store_prep(s, "DELETE FROM trash WHERE id = ?",
		                            "s", id));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

/* The app's config and its sealed values, the app and the entry. */
int
store_trash_purged(struct store *s, const char *id, const char *app_id,
                   bool sandbox_only)
{
	int rc;

	if (sandbox_only)
		return store_exec(s, "DELETE FROM trash WHERE id = ?", "s", id);
	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app_config WHERE "
		                             "app_id = ?",
		                             "s", app_id));
	if (rc == 0 || rc == STORE_NOT_FOUND)
		rc = store_run(
		    s, store_prep(s,
		                  "DELETE FROM secret WHERE kind = ? "
		                  "AND owner = ?",
		                  "ss", STORE_SECRET_APP_CONFIG, app_id));
	if (rc == 0 || rc == STORE_NOT_FOUND)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app_event WHERE "
		                             "app_id = ?",
		                             "s", app_id));
	if (rc == 0 || rc == STORE_NOT_FOUND)
		rc =
		    store_run(s, store_prep(s, "DELETE FROM trash WHERE id = ?",
		                            "s", id));
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app WHERE id = ? AND "
		                             "trashed_at != 0",
		                             "s", app_id));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_app_name_taken(struct store *s, const char *owner, const char *name,
                     const char *except_id)
{
	sqlite3_stmt *st;
	int rc = -1;

	LOCK(s);
	st = store_prep(s,
	                "SELECT 1 FROM app WHERE owner = ? AND name = ? AND "
	                "id != ? AND trashed_at = 0 LIMIT 1",
	                "sss", owner, name, except_id);
	if (st) {
		int r = sqlite3_step(st);
		rc = r == SQLITE_ROW ? 1 : r == SQLITE_DONE ? 0 : -1;
	}
	sqlite3_finalize(st);
	UNLOCK(s);
	return rc;
}
