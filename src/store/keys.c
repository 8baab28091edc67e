/*
 * API keys.  Only the SHA-256 of a key is stored; a lookup is an equality
 * on that hash, which leaks nothing useful by its timing since the hash
 * of a guess says nothing about the stored key.
 */
#include <stdint.h>

#include "lib/clock.h"
#include "lib/ulid.h"
#include "store/internal.h"
#include "store/store.h"

int
store_apikey_count(struct store *s, int64_t *n)
{
	sqlite3_stmt *st;
	int rc = -1;

	LOCK(s);
	st = store_prep(s, "SELECT count(*) FROM api_key", "");
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		*n = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	UNLOCK(s);
	return rc;
}

int
store_apikey_insert(struct store *s, const char *name, const char *key_hash,
                    const char *prefix)
{
	char id[ULID_LEN + 1];
	int rc;

	ulid_new(id);
	LOCK(s);
	rc = store_run(s, store_prep(s,
	                             "INSERT INTO api_key (id, name, key_hash,"
	                             " prefix, created_at) VALUES (?,?,?,?,?)",
	                             "ssssi", id, name, key_hash, prefix,
	                             clock_now()));
	UNLOCK(s);
	return rc;
}

int
store_apikey_lookup(struct store *s, const char *key_hash, char *name,
                    size_t len)
{
	sqlite3_stmt *st;
	int rc = STORE_NOT_FOUND;

	LOCK(s);
	st = store_prep(s, "SELECT name FROM api_key WHERE key_hash = ?", "s",
	                key_hash);
	if (st == NULL)
		rc = -1;
	else if (sqlite3_step(st) == SQLITE_ROW) {
		store_col_text(st, 0, name, len);
		rc = 0;
	}
	sqlite3_finalize(st);
	if (rc == 0)
		store_run(s, store_prep(s,
		                        "UPDATE api_key SET last_used_at = ? "
		                        "WHERE key_hash = ?",
		                        "is", clock_now(), key_hash));
	UNLOCK(s);
	return rc;
}

int
store_apikey_replace(struct store *s, const char *name, const char *key_hash,
                     const char *prefix)
{
	char id[ULID_LEN + 1];
	int rc;

	ulid_new(id);
	LOCK(s);
	sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	store_run(
	    s, store_prep(s, "DELETE FROM api_key WHERE name = ?", "s", name));
	rc = store_run(s, store_prep(s,
	                             "INSERT INTO api_key (id, name, key_hash,"
	                             " prefix, created_at) VALUES (?,?,?,?,?)",
	                             "ssssi", id, name, key_hash, prefix,
	                             clock_now()));
	sqlite3_exec(s->db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
	UNLOCK(s);
	return rc;
}
