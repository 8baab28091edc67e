/*
 * API keys.  Only the SHA-256 of a key is stored; a lookup is an equality
 * on that hash, which leaks nothing useful by its timing since the hash
 * of a guess says nothing about the stored key.
 */
#include <stdint.h>
#include <stdlib.h>

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
store_apikey_lookup(struct store *s, const char *key_hash, char *name,
                    size_t len)
{
	struct store_text n = {name, len};
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT name FROM api_key WHERE key_hash = ?",
	                          "s", key_hash),
	               store_fill_text, &n);
	/* At most one write a minute per key, not one per request. */
	if (rc == 0)
		store_run(s, store_prep(s,
		                        "UPDATE api_key SET last_used_at = ?1 "
		                        "WHERE key_hash = ?2 AND "
		                        "coalesce(last_used_at, 0) < ?1 - 60",
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

static int
apikey_from_row(sqlite3_stmt *st, void *out)
{
	struct apikey *k = out;

	store_col_text(st, 0, k->name, sizeof(k->name));
	k->created_at = sqlite3_column_int64(st, 1);
	k->last_used_at = sqlite3_column_int64(st, 2);
	return 0;
}

STORE_CALLER(call_apikey, struct apikey)

static const struct store_rows apikey_rows = {
    sizeof(struct apikey), apikey_from_row, call_apikey, NULL};

int
store_apikey_list(struct store *s, int (*fn)(const struct apikey *, void *),
                  void *arg)
{
	return store_each(s, &apikey_rows, (store_any_fn *)fn, arg,
	                  "SELECT name, created_at, coalesce(last_used_at, 0) "
	                  "FROM api_key ORDER BY name",
	                  "") < 0
	           ? -1
	           : 0;
}

int
store_apikey_delete(struct store *s, const char *name)
{
	return store_exec(s, "DELETE FROM api_key WHERE name = ?", "s", name);
}
