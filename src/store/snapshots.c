/*
 * Snapshot rows (migration 16).  The files are snapshot/snapshot.c's;
 * a row says where they are and how far they got.  The cap on rows per
 * app is checked in the insert's transaction, so two takes racing each
 * other cannot both pass it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define SNAP_COLS                                                              \
	"id, owner, app_id, name, source_app_id, source_sandbox_id, status, "  \
	"reason, size_bytes, own_bytes, files, method, pause_ms, task_id, "    \
	"head, base_image, path, created_by, created_at, step"

static int
snap_from_row(sqlite3_stmt *st, void *out)
{
	struct snapshot *sn = out;

	memset(sn, 0, sizeof(*sn));
	store_col_text(st, 0, sn->id, sizeof(sn->id));
	store_col_text(st, 1, sn->owner, sizeof(sn->owner));
	store_col_text(st, 2, sn->app_id, sizeof(sn->app_id));
	store_col_text(st, 3, sn->name, sizeof(sn->name));
	store_col_text(st, 4, sn->source_app_id, sizeof(sn->source_app_id));
	store_col_text(st, 5, sn->source_sandbox_id,
	               sizeof(sn->source_sandbox_id));
	store_col_text(st, 6, sn->status, sizeof(sn->status));
	store_col_text(st, 7, sn->reason, sizeof(sn->reason));
	sn->size_bytes = sqlite3_column_int64(st, 8);
	sn->own_bytes = sqlite3_column_int64(st, 9);
	sn->files = sqlite3_column_int64(st, 10);
	store_col_text(st, 11, sn->method, sizeof(sn->method));
	sn->pause_ms = sqlite3_column_int64(st, 12);
	store_col_text(st, 13, sn->task_id, sizeof(sn->task_id));
	store_col_text(st, 14, sn->head, sizeof(sn->head));
	store_col_text(st, 15, sn->base_image, sizeof(sn->base_image));
	store_col_text(st, 16, sn->path, sizeof(sn->path));
	store_col_text(st, 17, sn->created_by, sizeof(sn->created_by));
	sn->created_at = sqlite3_column_int64(st, 18);
	store_col_text(st, 19, sn->step, sizeof(sn->step));
	return 0;
}

static int
count_of(sqlite3_stmt *st, void *out)
{
	*(int64_t *)out = sqlite3_column_int64(st, 0);
	return 0;
}

int
store_snapshot_insert(struct store *s, const struct snapshot *sn, int64_t max)
{
	int64_t n = 0;
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_one(store_prep(s,
		                          "SELECT count(*) FROM snapshot "
		                          "WHERE app_id = ? AND status != "
		                          "'failed'",
		                          "s", sn->app_id),
		               count_of, &n);
	if (rc == 0 && n >= max)
		rc = STORE_TOO_MANY;
	if (rc == 0)
		rc = store_run(
		    s, store_prep(s,
		                  "INSERT INTO snapshot (id, owner, app_id, "
		                  "name, source_app_id, source_sandbox_id, "
		                  "status, reason, task_id, base_image, path, "
		                  "created_by, created_at) VALUES (?, ?, ?, ?, "
		                  "?, ?, 'taking', ?, ?, ?, ?, ?, ?)",
		                  "sssssssssssi", sn->id, sn->owner, sn->app_id,
		                  sn->name, sn->source_app_id,
		                  sn->source_sandbox_id, sn->reason,
		                  sn->task_id, sn->base_image, sn->path,
		                  sn->created_by, sn->created_at));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_snapshot_finish(struct store *s, const struct snapshot *sn)
{
	return store_exec(s,
	                  "UPDATE snapshot SET status = ?, size_bytes = ?, "
	                  "own_bytes = ?, files = ?, method = ?, "
	                  "pause_ms = ?, head = ? WHERE id = ?",
	                  "siiisiss", sn->status, sn->size_bytes, sn->own_bytes,
	                  sn->files, sn->method, sn->pause_ms, sn->head,
	                  sn->id);
}

int
store_snapshot_set_step(struct store *s, const char *id, const char *step)
{
	return store_exec(s, "UPDATE snapshot SET step = ? WHERE id = ?", "ss",
	                  step, id);
}

int
store_snapshot_get(struct store *s, const char *owner, const char *id,
                   struct snapshot *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " SNAP_COLS " FROM snapshot "
	                          "WHERE id = ?1 AND (?2 IS NULL OR owner = "
	                          "?2)",
	                          "ss", id, owner),
	               snap_from_row, out);
	UNLOCK(s);
	return rc;
}

int
store_snapshot_list(struct store *s, const char *owner, const char *app_id,
                    int (*fn)(const struct snapshot *, void *), void *arg)
{
	struct snapshot *rows = NULL;
	size_t n = 0;
	int rc;

	LOCK(s);
	rc = store_collect(store_prep(s,
	                              "SELECT " SNAP_COLS " FROM snapshot "
	                              "WHERE (?1 IS NULL OR owner = ?1) AND "
	                              "(?2 IS NULL OR app_id = ?2) "
	                              "ORDER BY created_at DESC, id DESC "
	                              "LIMIT ?3",
	                              "ssn", owner, app_id, SNAPSHOT_LIST_MAX),
	                   sizeof(*rows), snap_from_row, (void **)&rows, &n);
	UNLOCK(s);
	for (size_t i = 0; i < n; i++)
		if (fn(&rows[i], arg) != 0)
			break;
	free(rows);
	return rc;
}

int
store_snapshot_delete(struct store *s, const char *id)
{
	return store_exec(s, "DELETE FROM snapshot WHERE id = ?", "s", id);
}

struct usage {
	int64_t count, bytes;
};

static int
usage_of(sqlite3_stmt *st, void *out)
{
	struct usage *u = out;

	u->count = sqlite3_column_int64(st, 0);
	u->bytes = sqlite3_column_int64(st, 1);
	return 0;
}

int
store_snapshot_usage(struct store *s, const char *app_id, int64_t *count,
                     int64_t *own_bytes)
{
	struct usage u = {0};
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT count(*), COALESCE(sum(own_bytes), "
	                          "0) FROM snapshot WHERE app_id = ?",
	                          "s", app_id),
	               usage_of, &u);
	UNLOCK(s);
	*count = u.count;
	*own_bytes = u.bytes;
	return rc;
}
