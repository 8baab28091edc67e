/*
 * The console's password and sign-in sessions.  One password (a single
 * row, id 1) for the operator; sessions keyed by the SHA-256 of their
 * cookie token, so the table holds nothing a browser could present.
 * Setting the first password is one INSERT that fails when a row
 * exists, so two racing setups cannot both win.  Changing it ends the
 * other sessions in the same transaction.  An expired row is never
 * found, and expired rows are deleted when a session is added: there
 * are few, and no reaper is needed.
 */
#include <stdio.h>

#include "lib/clock.h"
#include "store/internal.h"
#include "store/store.h"

int
store_console_password(struct store *s, char *hash, size_t len)
{
	return store_text_get(s,
	                      "SELECT hash FROM console_password WHERE id = ?",
	                      "1", hash, len);
}

int
store_console_password_init(struct store *s, const char *hash)
{
	return store_exec(s,
	                  "INSERT INTO console_password "
	                  "(id, hash, updated_at) VALUES (1, ?, ?)",
	                  "si", hash, clock_now());
}

int
store_console_password_change(struct store *s, const char *hash,
                              const char *keep_hash)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "UPDATE console_password SET hash "
		                             "= ?, updated_at = ? WHERE id = 1",
		                             "si", hash, clock_now()));
	if (rc == 0) {
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM console_session "
		                             "WHERE token_hash != ?",
		                             "s", keep_hash ? keep_hash : ""));
		if (rc == STORE_NOT_FOUND)
			rc = 0;
	}
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_session_add(struct store *s, const char *token_hash,
                  const struct store_session *ss)
{
	int rc;

	LOCK(s);
	/* Expired sessions go when a new one comes: a read is never a write. */
	store_run(s, store_prep(s,
	                        "DELETE FROM console_session WHERE "
	                        "expires_at <= ?",
	                        "i", clock_now()));
	rc = store_run(s,
	               store_prep(s,
	                          "INSERT INTO console_session (token_hash,"
	                          " csrf, created_at, renewed_at, expires_at)"
	                          " VALUES (?, ?, ?, ?, ?)",
	                          "ssiii", token_hash, ss->csrf, ss->created_at,
	                          ss->renewed_at, ss->expires_at));
	UNLOCK(s);
	return rc;
}

static int
fill_session(sqlite3_stmt *st, void *out)
{
	struct store_session *ss = out;

	store_col_text(st, 0, ss->csrf, sizeof(ss->csrf));
	ss->created_at = sqlite3_column_int64(st, 1);
	ss->renewed_at = sqlite3_column_int64(st, 2);
	ss->expires_at = sqlite3_column_int64(st, 3);
	return 0;
}

int
store_session_get(struct store *s, const char *token_hash, int64_t now,
                  struct store_session *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT csrf, created_at, renewed_at, "
	                          "expires_at FROM console_session WHERE "
	                          "token_hash = ? AND expires_at > ?",
	                          "si", token_hash, now),
	               fill_session, out);
	UNLOCK(s);
	return rc;
}

int
store_session_renew(struct store *s, const char *token_hash, int64_t now,
                    int64_t expires_at)
{
	return store_exec(s,
	                  "UPDATE console_session SET renewed_at = "
	                  "?, expires_at = ? WHERE token_hash = ?",
	                  "iis", now, expires_at, token_hash);
}

int
store_session_end(struct store *s, const char *token_hash)
{
	int rc;

	LOCK(s);
	if (token_hash)
		rc =
		    store_run(s, store_prep(s,
		                            "DELETE FROM console_session WHERE "
		                            "token_hash = ?",
		                            "s", token_hash));
	else
		rc = store_run(
		    s, store_prep(s, "DELETE FROM console_session", ""));
	UNLOCK(s);
	return rc == STORE_NOT_FOUND ? 0 : rc;
}
