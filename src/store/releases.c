/*
 * Release and publication rows (migration 17).  The files are
 * publish/'s; a release row says where they are, how the build went
 * and how the release runs.  "One release building per app" is a
 * partial unique index, so two publishes racing each other cannot both
 * insert; the number is the app's next, read in the insert's
 * transaction.  A publication's label is unique across tenants: the
 * upsert's conflict on it is STORE_CONFLICT, never a replacement of
 * another app's row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define REL_COLS                                                               \
	"id, owner, app_id, number, status, kind, source, source_ref, "        \
	"git_commit, recipe, image, command, port, health, spa, size_bytes, "  \
	"files, build_ms, error, path, created_by, created_at, finished_at"

static int
rel_from_row(sqlite3_stmt *st, void *out)
{
	struct release *r = out;

	memset(r, 0, sizeof(*r));
	store_col_text(st, 0, r->id, sizeof(r->id));
	store_col_text(st, 1, r->owner, sizeof(r->owner));
	store_col_text(st, 2, r->app_id, sizeof(r->app_id));
	r->number = sqlite3_column_int64(st, 3);
	store_col_text(st, 4, r->status, sizeof(r->status));
	store_col_text(st, 5, r->kind, sizeof(r->kind));
	store_col_text(st, 6, r->source, sizeof(r->source));
	store_col_text(st, 7, r->source_ref, sizeof(r->source_ref));
	store_col_text(st, 8, r->commit, sizeof(r->commit));
	store_col_text(st, 9, r->recipe, sizeof(r->recipe));
	store_col_text(st, 10, r->image, sizeof(r->image));
	store_col_text(st, 11, r->command, sizeof(r->command));
	r->port = sqlite3_column_int(st, 12);
	store_col_text(st, 13, r->health, sizeof(r->health));
	r->spa = sqlite3_column_int(st, 14) != 0;
	r->size_bytes = sqlite3_column_int64(st, 15);
	r->files = sqlite3_column_int64(st, 16);
	r->build_ms = sqlite3_column_int64(st, 17);
	store_col_text(st, 18, r->error, sizeof(r->error));
	store_col_text(st, 19, r->path, sizeof(r->path));
	store_col_text(st, 20, r->created_by, sizeof(r->created_by));
	r->created_at = sqlite3_column_int64(st, 21);
	r->finished_at = sqlite3_column_int64(st, 22);
	return 0;
}

static int
int_of(sqlite3_stmt *st, void *out)
{
	*(int64_t *)out = sqlite3_column_int64(st, 0);
	return 0;
}

int
store_release_insert(struct store *s, struct release *r)
{
	int64_t next = 0;
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_one(store_prep(s,
		                          "SELECT COALESCE(max(number), 0) + 1 "
		                          "FROM release WHERE app_id = ?",
		                          "s", r->app_id),
		               int_of, &next);
	if (rc == 0) {
		r->number = next;
		snprintf(r->status, sizeof(r->status), "building");
		rc = store_run(
		    s,
		    store_prep(s,
		               "INSERT INTO release (id, owner, app_id, "
		               "number, status, kind, source, source_ref, "
		               "recipe, image, path, created_by, created_at) "
		               "VALUES (?, ?, ?, ?, 'building', ?, ?, ?, ?, "
		               "?, ?, ?, ?)",
		               "sssisssssssi", r->id, r->owner, r->app_id,
		               r->number, r->kind, r->source, r->source_ref,
		               r->recipe, r->image, r->path, r->created_by,
		               r->created_at));
	}
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_release_finish(struct store *s, const struct release *r)
{
	return store_exec(
	    s,
	    "UPDATE release SET status = ?, kind = ?, git_commit = ?, "
	    "recipe = ?, image = ?, command = ?, port = ?, health = ?, "
	    "spa = ?, size_bytes = ?, files = ?, build_ms = ?, error = ?, "
	    "finished_at = ? WHERE id = ?",
	    "ssssssnsniiisis", r->status, r->kind, r->commit, r->recipe,
	    r->image, r->command, r->port, r->health, r->spa ? 1 : 0,
	    r->size_bytes, r->files, r->build_ms, r->error, r->finished_at,
	    r->id);
}

int
store_release_get(struct store *s, const char *owner, const char *id,
                  struct release *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " REL_COLS " FROM release "
	                          "WHERE id = ?1 AND (?2 IS NULL OR owner = "
	                          "?2)",
	                          "ss", id, owner),
	               rel_from_row, out);
	UNLOCK(s);
	return rc;
}

STORE_CALLER(call_release, struct release)

static const struct store_rows release_rows = {
    .size = sizeof(struct release),
    .fill = rel_from_row,
    .call = call_release,
};

int
store_release_list(struct store *s, const char *app_id,
                   int (*fn)(const struct release *, void *), void *arg)
{
	return store_each(s, &release_rows, (store_any_fn *)fn, arg,
	                  "SELECT " REL_COLS " FROM release WHERE app_id = ? "
	                  "ORDER BY number DESC",
	                  "s", app_id);
}

int
store_release_delete(struct store *s, const char *id)
{
	return store_exec(s, "DELETE FROM release WHERE id = ?", "s", id);
}

int
store_release_building(struct store *s,
                       int (*fn)(const struct release *, void *), void *arg)
{
	return store_each(s, &release_rows, (store_any_fn *)fn, arg,
	                  "SELECT " REL_COLS " FROM release "
	                  "WHERE status = 'building' ORDER BY id",
	                  "");
}

#define PUB_COLS                                                               \
	"app_id, owner, label, release_id, visibility, published_at, "         \
	"updated_at"

static int
pub_from_row(sqlite3_stmt *st, void *out)
{
	struct publication *p = out;

	memset(p, 0, sizeof(*p));
	store_col_text(st, 0, p->app_id, sizeof(p->app_id));
	store_col_text(st, 1, p->owner, sizeof(p->owner));
	store_col_text(st, 2, p->label, sizeof(p->label));
	store_col_text(st, 3, p->release_id, sizeof(p->release_id));
	store_col_text(st, 4, p->visibility, sizeof(p->visibility));
	p->published_at = sqlite3_column_int64(st, 5);
	p->updated_at = sqlite3_column_int64(st, 6);
	return 0;
}

int
store_publication_get(struct store *s, const char *app_id,
                      struct publication *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " PUB_COLS " FROM publication "
	                          "WHERE app_id = ?",
	                          "s", app_id),
	               pub_from_row, out);
	UNLOCK(s);
	return rc;
}

int
store_publication_put(struct store *s, const struct publication *p)
{
	const char *vis = p->visibility[0] ? p->visibility : "public";

	return store_exec(s,
	                  "INSERT INTO publication (" PUB_COLS ") VALUES "
	                  "(?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_id) DO "
	                  "UPDATE SET owner = excluded.owner, label = "
	                  "excluded.label, release_id = excluded.release_id, "
	                  "visibility = excluded.visibility, published_at = "
	                  "excluded.published_at, updated_at = "
	                  "excluded.updated_at",
	                  "sssssii", p->app_id, p->owner, p->label,
	                  p->release_id, vis, p->published_at, p->updated_at);
}

int
store_publication_delete(struct store *s, const char *app_id)
{
	return store_exec(s, "DELETE FROM publication WHERE app_id = ?", "s",
	                  app_id);
}

STORE_CALLER(call_publication, struct publication)

static const struct store_rows publication_rows = {
    .size = sizeof(struct publication),
    .fill = pub_from_row,
    .call = call_publication,
};

int
store_publication_each(struct store *s,
                       int (*fn)(const struct publication *, void *), void *arg)
{
	return store_each(
	    s, &publication_rows, (store_any_fn *)fn, arg,
	    "SELECT " PUB_COLS " FROM publication ORDER BY app_id", "");
}

int
store_publication_by_label(struct store *s, const char *label,
                           struct publication *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " PUB_COLS " FROM publication "
	                          "WHERE label = ?",
	                          "s", label),
	               pub_from_row, out);
	UNLOCK(s);
	return rc;
}
