/*
 * Git credential rows.  The token is a secret row (kind git_token, owner
 * the tenant, name the credential id) written and deleted in the same
 * transaction as the metadata row, so there is never a credential
 * without its token or a token without its credential.  Every lookup is
 * by owner: another tenant's id is simply not found.
 */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/store.h"

#define CRED_COLS "id, owner, name, host, username, created_at"

static int
cred_from_row(sqlite3_stmt *st, void *out)
{
	struct git_credential *c = out;

	store_col_text(st, 0, c->id, sizeof(c->id));
	store_col_text(st, 1, c->owner, sizeof(c->owner));
	store_col_text(st, 2, c->name, sizeof(c->name));
	store_col_text(st, 3, c->host, sizeof(c->host));
	store_col_text(st, 4, c->username, sizeof(c->username));
	c->created_at = sqlite3_column_int64(st, 5);
	return 0;
}

int
store_gitcred_insert(struct store *s, const struct git_credential *c,
                     const void *token, size_t len)
{
	char sid[ULID_LEN + 1];
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(
		    s, store_prep(s,
		                  "INSERT INTO git_credential (" CRED_COLS
		                  ") VALUES (?,?,?,?,?,?)",
		                  "sssssi", c->id, c->owner, c->name, c->host,
		                  c->username, c->created_at));
	if (rc == 0)
		rc = store_secret_write(s, STORE_SECRET_GIT_TOKEN, c->owner,
		                        c->id, token, len, sid);
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_gitcred_get(struct store *s, const char *owner, const char *id,
                  struct git_credential *out)
{
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT " CRED_COLS " FROM git_credential "
	                          "WHERE id = ? AND owner = ?",
	                          "ss", id, owner),
	               cred_from_row, out);
	UNLOCK(s);
	return rc;
}

STORE_CALLER(call_cred, struct git_credential)

static const struct store_rows cred_rows = {sizeof(struct git_credential),
                                            cred_from_row, call_cred, NULL};

int
store_gitcred_list(struct store *s, const char *owner,
                   int (*fn)(const struct git_credential *, void *), void *arg)
{
	return store_each(s, &cred_rows, (store_any_fn *)fn, arg,
	                  "SELECT " CRED_COLS " FROM git_credential "
	                  "WHERE owner = ? ORDER BY name",
	                  "s", owner) < 0
	           ? -1
	           : 0;
}

int
store_gitcred_delete(struct store *s, const char *owner, const char *id)
{
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_run(s, store_prep(s,
		                             "DELETE FROM git_credential WHERE "
		                             "id = ? AND owner = ?",
		                             "ss", id, owner));
	if (rc == 0) {
		rc = store_run(
		    s, store_prep(s,
		                  "DELETE FROM secret WHERE kind = ? "
		                  "AND owner = ? AND name = ?",
		                  "sss", STORE_SECRET_GIT_TOKEN, owner, id));
		if (rc == STORE_NOT_FOUND)
			rc = 0;
	}
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_gitcred_token(struct store *s, const char *owner, const char *id,
                    struct vault_secret *out)
{
	return store_secret_get(s, STORE_SECRET_GIT_TOKEN, owner, id, out);
}
