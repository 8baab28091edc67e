/*
 * App rows.  current_sandbox_id is not stored on the app: it is read from
 * the sandbox table (an app has at most one sandbox, enforced by a UNIQUE
 * index), so the two can never disagree.  Deleting an app deletes its
 * config rows and their sealed values with it (appconfig.c).  An app in
 * the trash (trashed_at set, store/trash.c) is neither got nor listed.
 */
#include <stdint.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define APP_COLS                                                               \
	"a.id, a.owner, a.name, a.description, a.tags, a.runtime_preset, "     \
	"a.created_at, a.updated_at, "                                         \
	"(SELECT id FROM sandbox WHERE app_id = a.id), "                       \
	"a.git_repo_url, a.git_branch, a.git_credential_id, "                  \
	"a.last_import_at, "                                                   \
	"a.preview_visibility, a.preview_epoch"

static int
app_from_row(sqlite3_stmt *st, void *out)
{
	struct app *a = out;

	store_col_text(st, 0, a->id, sizeof(a->id));
	store_col_text(st, 1, a->owner, sizeof(a->owner));
	store_col_text(st, 2, a->name, sizeof(a->name));
	store_col_text(st, 3, a->description, sizeof(a->description));
	store_col_text(st, 4, a->tags_json, sizeof(a->tags_json));
	store_col_text(st, 5, a->runtime_preset, sizeof(a->runtime_preset));
	a->created_at = sqlite3_column_int64(st, 6);
	a->updated_at = sqlite3_column_int64(st, 7);
	store_col_text(st, 8, a->current_sandbox_id,
	               sizeof(a->current_sandbox_id));
	store_col_text(st, 9, a->git_repo_url, sizeof(a->git_repo_url));
	store_col_text(st, 10, a->git_branch, sizeof(a->git_branch));
	store_col_text(st, 11, a->git_credential_id,
	               sizeof(a->git_credential_id));
	a->last_import_at = sqlite3_column_int64(st, 12);
	store_col_text(st, 13, a->preview_visibility,
	               sizeof(a->preview_visibility));
	a->preview_epoch = sqlite3_column_int64(st, 14);
	return 0;
}

int
store_app_insert(struct store *s, const struct app *a)
{
	return store_exec(s,
	                  "INSERT INTO app (id, owner, name, "
	                  "description, tags, runtime_preset, "
	                  "created_at, updated_at, git_repo_url, "
	                  "git_branch, git_credential_id, "
	                  "preview_visibility) "
	                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
	                  "ssssssiissss", a->id, a->owner, a->name,
	                  a->description, a->tags_json, a->runtime_preset,
	                  a->created_at, a->updated_at, a->git_repo_url,
	                  a->git_branch, a->git_credential_id,
	                  a->preview_visibility);
}

int
store_app_set_preview(struct store *s, const struct app *a)
{
	return store_exec(s,
	                  "UPDATE app SET preview_visibility = ?, "
	                  "preview_epoch = ?, updated_at = ? WHERE id = ?",
	                  "siis", a->preview_visibility, a->preview_epoch,
	                  a->updated_at, a->id);
}

int
store_app_get(struct store *s, const char *owner, const char *id,
              struct app *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " APP_COLS " FROM app a WHERE "
	                          "a.id = ? AND (?2 IS NULL OR a.owner = ?2) "
	                          "AND a.trashed_at = 0",
	                          "ss", id, owner),
	               app_from_row, out);
	UNLOCK(s);
	return rc;
}

int
store_app_update(struct store *s, const struct app *a)
{
	return store_exec(s,
	                  "UPDATE app SET name = ?, description = ?,"
	                  " tags = ?, updated_at = ? WHERE id = ?",
	                  "sssis", a->name, a->description, a->tags_json,
	                  a->updated_at, a->id);
}

int
store_app_set_git(struct store *s, const struct app *a)
{
	return store_exec(s,
	                  "UPDATE app SET last_import_at = CASE git_repo_url "
	                  "WHEN ?1 THEN last_import_at ELSE 0 END, "
	                  "git_repo_url = ?1, git_branch = ?2, "
	                  "git_credential_id = ?3, updated_at = ?4 "
	                  "WHERE id = ?5",
	                  "sssis", a->git_repo_url, a->git_branch,
	                  a->git_credential_id, a->updated_at, a->id);
}

int
store_app_imported(struct store *s, const char *id, const char *branch,
                   int64_t at)
{
	return store_exec(s,
	                  "UPDATE app SET last_import_at = ?, "
	                  "git_branch = CASE git_branch WHEN '' "
	                  "THEN ? ELSE git_branch END WHERE id = ?",
	                  "iss", at, branch, id);
}

/* The app's config and its sealed values go in the same transaction. */
int
store_app_delete(struct store *s, const char *id)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app_config WHERE "
		                             "app_id = ?",
		                             "s", id));
	if (rc == 0 || rc == STORE_NOT_FOUND)
		rc =
		    store_run(s, store_prep(s,
		                            "DELETE FROM secret WHERE kind = ? "
		                            "AND owner = ?",
		                            "ss", STORE_SECRET_APP_CONFIG, id));
	if (rc == 0 || rc == STORE_NOT_FOUND)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM app_event WHERE "
		                             "app_id = ?",
		                             "s", id));
	if (rc == 0 || rc == STORE_NOT_FOUND)
		rc = store_run(
		    s, store_prep(s, "DELETE FROM app WHERE id = ?", "s", id));
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_app_list(struct store *s, const char *owner,
               int (*fn)(const struct app *, void *), void *arg)
{
	struct app a;
	sqlite3_stmt *st;
	int rc = 0;

	LOCK(s);
	st = store_prep(s,
	                "SELECT " APP_COLS " FROM app a "
	                "WHERE (?1 IS NULL OR a.owner = ?1) "
	                "AND a.trashed_at = 0 "
	                "ORDER BY a.created_at DESC, a.id DESC",
	                "s", owner);
	if (st == NULL)
		rc = -1;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		app_from_row(st, &a);
		if (fn(&a, arg) != 0)
			break;
	}
	sqlite3_finalize(st);
	UNLOCK(s);
	return rc;
}

static int
trashed_of(sqlite3_stmt *st, void *out)
{
	*(int *)out = sqlite3_column_int64(st, 0) != 0;
	return 0;
}

int
store_app_where(struct store *s, const char *id)
{
	int trashed = 0, rc;

	LOCK(s);
	rc = store_one(
	    store_prep(s, "SELECT trashed_at FROM app WHERE id = ?", "s", id),
	    trashed_of, &trashed);
	UNLOCK(s);
	return rc == 0 && trashed ? STORE_TRASHED : rc;
}
