/*
 * Secret rows.  The store keeps boxes (key id, nonce, ciphertext); the
 * vault seals and opens them.  Each box's associated data is the row's
 * identity, "sandboxd/secret/v1" NUL kind NUL owner NUL name: none of the
 * parts can hold a NUL, so two different rows never share it, and a box
 * copied into another row (by hand, or by a bug) does not open there.
 *
 * Values are opened outside the lock (they are copied out as boxes
 * first), except during a re-seal, which is one transaction by design.
 * Nothing here logs a value; errors name the row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "store/internal.h"
#include "store/store.h"

#define AAD_TAG "sandboxd/secret/v1"
#define AAD_MAX                                                                \
	(sizeof(AAD_TAG) + STORE_SECRET_KIND_MAX + STORE_SECRET_OWNER_MAX +    \
	 STORE_SECRET_NAME_MAX + 4)

/* A row as the re-seal and the check read it. */
struct secret_row {
	char id[ULID_LEN + 1];
	char kind[STORE_SECRET_KIND_MAX + 1];
	char owner[STORE_SECRET_OWNER_MAX + 1];
	char name[STORE_SECRET_NAME_MAX + 1];
	struct vault_box box;
};

/* The row's associated data; 0 when a part is too long. */
static size_t
aad_of(char out[AAD_MAX], const char *kind, const char *owner, const char *name)
{
	const char *part[4] = {AAD_TAG, kind, owner, name};
	size_t off = 0;

	if (strlen(kind) > STORE_SECRET_KIND_MAX ||
	    strlen(owner) > STORE_SECRET_OWNER_MAX ||
	    strlen(name) > STORE_SECRET_NAME_MAX)
		return 0;
	for (int i = 0; i < 4; i++) {
		size_t n = strlen(part[i]) + (i < 3); /* NUL between parts */
		memcpy(out + off, part[i], n);
		off += n;
	}
	return off;
}

/* Columns key_id, nonce, ciphertext from col on. */
static void
box_from(sqlite3_stmt *st, int col, struct vault_box *b)
{
	const void *nonce = sqlite3_column_blob(st, col + 1);
	const void *ct = sqlite3_column_blob(st, col + 2);
	int nlen = sqlite3_column_bytes(st, col + 1);
	int clen = sqlite3_column_bytes(st, col + 2);

	memset(b, 0, sizeof(*b));
	store_col_text(st, col, b->key_id, sizeof(b->key_id));
	if (nonce == NULL || nlen != VAULT_NONCE_BYTES || ct == NULL ||
	    clen <= 0)
		return; /* stays empty: it will not open */
	memcpy(b->nonce, nonce, VAULT_NONCE_BYTES);
	b->ct = malloc((size_t)clen);
	if (b->ct == NULL)
		return;
	memcpy(b->ct, ct, (size_t)clen);
	b->ct_len = (size_t)clen;
}

static int
fill_box(sqlite3_stmt *st, void *out)
{
	box_from(st, 0, out);
	return 0;
}

static int
fill_row(sqlite3_stmt *st, void *out)
{
	struct secret_row *r = out;

	store_col_text(st, 0, r->id, sizeof(r->id));
	store_col_text(st, 1, r->kind, sizeof(r->kind));
	store_col_text(st, 2, r->owner, sizeof(r->owner));
	store_col_text(st, 3, r->name, sizeof(r->name));
	box_from(st, 4, &r->box);
	return 0;
}

/* Binds a box to parameters key_id, nonce and ciphertext from i on. */
static void
bind_box(sqlite3_stmt *st, int i, const struct vault_box *b)
{
	if (st == NULL)
		return;
	sqlite3_bind_text(st, i, b->key_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_blob(st, i + 1, b->nonce, VAULT_NONCE_BYTES,
	                  SQLITE_TRANSIENT);
	sqlite3_bind_blob(st, i + 2, b->ct, (int)b->ct_len, SQLITE_TRANSIENT);
}

int
store_secret_write(struct store *s, const char *kind, const char *owner,
                   const char *name, const void *value, size_t len,
                   char id[ULID_LEN + 1])
{
	char aad[AAD_MAX];
	size_t alen = aad_of(aad, kind, owner, name);
	struct store_text t = {id, ULID_LEN + 1};
	struct vault_box box;
	sqlite3_stmt *st;
	int rc;

	if (alen == 0 ||
	    vault_seal(s->vault, aad, alen, value, len, &box) < 0) {
		log_error("store: cannot seal the %s secret %s/%s (%s)", kind,
		          owner, name, s->vault ? "too long" : "no key loaded");
		return -1;
	}
	ulid_new(id);
	st = store_prep(s,
	                "INSERT INTO secret (id, kind, owner, name, key_id, "
	                "nonce, ciphertext, created_at, updated_at) "
	                "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?8) "
	                "ON CONFLICT (kind, owner, name) DO UPDATE SET "
	                "key_id = excluded.key_id, nonce = excluded.nonce, "
	                "ciphertext = excluded.ciphertext, "
	                "updated_at = excluded.updated_at",
	                "ssss", id, kind, owner, name);
	bind_box(st, 5, &box);
	if (st)
		sqlite3_bind_int64(st, 8, clock_now());
	rc = store_run(s, st);
	vault_box_release(&box);
	if (rc != 0)
		return rc < 0 ? -1 : rc;
	return store_one(store_prep(s,
	                            "SELECT id FROM secret WHERE kind = ? AND "
	                            "owner = ? AND name = ?",
	                            "sss", kind, owner, name),
	                 store_fill_text, &t);
}

int
store_secret_put(struct store *s, const char *kind, const char *owner,
                 const char *name, const void *value, size_t len)
{
	char id[ULID_LEN + 1];
	int rc;

	LOCK(s);
	rc = store_secret_write(s, kind, owner, name, value, len, id);
	UNLOCK(s);
	return rc;
}

int
store_secret_get(struct store *s, const char *kind, const char *owner,
                 const char *name, struct vault_secret *out)
{
	char aad[AAD_MAX];
	size_t alen = aad_of(aad, kind, owner, name);
	struct vault_box box = {0};
	int rc;

	out->data = NULL;
	out->len = 0;
	if (alen == 0)
		return STORE_NOT_FOUND;
	LOCK(s);
	rc =
	    store_one(store_prep(s,
	                         "SELECT key_id, nonce, ciphertext FROM secret "
	                         "WHERE kind = ? AND owner = ? AND name = ?",
	                         "sss", kind, owner, name),
	              fill_box, &box);
	UNLOCK(s);
	if (rc == 0 && vault_open(s->vault, aad, alen, &box, out) < 0) {
		log_error("store: the %s secret %s/%s does not open (sealed "
		          "with key %s)",
		          kind, owner, name, box.key_id);
		rc = -1;
	}
	vault_box_release(&box);
	return rc;
}

int
store_secret_update(struct store *s, const char *kind, const char *owner,
                    const char *name, const void *value, size_t len)
{
	char aad[AAD_MAX];
	size_t alen = aad_of(aad, kind, owner, name);
	struct vault_box box;
	sqlite3_stmt *st;
	int rc;

	if (alen == 0 ||
	    vault_seal(s->vault, aad, alen, value, len, &box) < 0) {
		log_error("store: cannot seal the %s secret %s/%s", kind, owner,
		          name);
		return -1;
	}
	LOCK(s);
	st = store_prep(s,
	                "UPDATE secret SET key_id = ?, nonce = ?, "
	                "ciphertext = ?, updated_at = ? WHERE kind = ? AND "
	                "owner = ? AND name = ?",
	                "");
	bind_box(st, 1, &box);
	if (st) {
		sqlite3_bind_int64(st, 4, clock_now());
		sqlite3_bind_text(st, 5, kind, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 6, owner, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 7, name, -1, SQLITE_TRANSIENT);
	}
	rc = store_run(s, st);
	UNLOCK(s);
	vault_box_release(&box);
	return rc;
}

int
store_secret_exists(struct store *s, const char *kind, const char *owner,
                    const char *name)
{
	char id[ULID_LEN + 1];
	struct store_text t = {id, sizeof(id)};
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT id FROM secret WHERE kind = ? AND "
	                          "owner = ? AND name = ?",
	                          "sss", kind, owner, name),
	               store_fill_text, &t);
	UNLOCK(s);
	return rc;
}

int
store_secret_delete(struct store *s, const char *kind, const char *owner,
                    const char *name)
{
	return store_exec(s,
	                  "DELETE FROM secret WHERE kind = ? AND "
	                  "owner = ? AND name = ?",
	                  "sss", kind, owner, name);
}

static int
fill_usage(sqlite3_stmt *st, void *out)
{
	struct vault_usage *u = out;

	store_col_text(st, 0, u->key_id, sizeof(u->key_id));
	u->n = sqlite3_column_int64(st, 1);
	return 0;
}

int
store_secret_usage(struct store *s, struct vault_usage **out, size_t *n)
{
	int rc;

	LOCK(s);
	rc = store_collect(store_prep(s,
	                              "SELECT key_id, count(*) FROM secret "
	                              "GROUP BY key_id ORDER BY key_id",
	                              ""),
	                   sizeof(**out), fill_usage, (void **)out, n);
	UNLOCK(s);
	return rc;
}

/* Every row, boxes included; the caller holds the lock. */
static int
rows_all(struct store *s, struct secret_row **rows, size_t *n)
{
	return store_collect(
	    store_prep(s,
	               "SELECT id, kind, owner, name, key_id, nonce, "
	               "ciphertext FROM secret ORDER BY id",
	               ""),
	    sizeof(**rows), fill_row, (void **)rows, n);
}

static void
rows_free(struct secret_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		vault_box_release(&rows[i].box);
	free(rows);
}

/* Opens one row and seals it again with the sealing key. */
static int
reseal_one(struct store *s, const struct secret_row *r)
{
	char aad[AAD_MAX];
	size_t alen = aad_of(aad, r->kind, r->owner, r->name);
	struct vault_secret pt;
	struct vault_box box;
	sqlite3_stmt *st;
	int rc;

	if (vault_open(s->vault, aad, alen, &r->box, &pt) < 0) {
		log_error("store: the %s secret %s/%s does not open (sealed "
		          "with key %s); nothing was re-sealed",
		          r->kind, r->owner, r->name, r->box.key_id);
		return -1;
	}
	rc = vault_seal(s->vault, aad, alen, pt.data, pt.len, &box);
	vault_secret_free(&pt);
	if (rc < 0)
		return -1;
	st = store_prep(s,
	                "UPDATE secret SET key_id = ?, nonce = ?, "
	                "ciphertext = ?, updated_at = ? WHERE id = ?",
	                "");
	bind_box(st, 1, &box);
	if (st) {
		sqlite3_bind_int64(st, 4, clock_now());
		sqlite3_bind_text(st, 5, r->id, -1, SQLITE_TRANSIENT);
	}
	rc = store_run(s, st);
	vault_box_release(&box);
	return rc == 0 ? 0 : -1;
}

int
store_secret_reseal(struct store *s, int64_t *n)
{
	const char *to = vault_key_id(s->vault, 0);
	struct secret_row *rows = NULL;
	size_t nrows = 0;
	int rc;

	*n = 0;
	if (to == NULL)
		return -1;
	LOCK(s);
	/*
	 * WAL with synchronous=NORMAL may lose the last commit on power
	 * loss.  The caller renames the key file once this returns, so this
	 * one commit must be on disk first.
	 */
	rc = store_run(s, store_prep(s, "PRAGMA synchronous=FULL", ""));
	rc = rc == STORE_NOT_FOUND ? 0 : rc;
	if (rc == 0)
		rc = store_begin(s);
	if (rc == 0)
		rc = rows_all(s, &rows, &nrows);
	for (size_t i = 0; rc == 0 && i < nrows; i++) {
		if (strcmp(rows[i].box.key_id, to) == 0)
			continue;
		rc = reseal_one(s, &rows[i]);
		if (rc == 0)
			++*n;
	}
	rc = store_end(s, rc);
	store_run(s, store_prep(s, "PRAGMA synchronous=NORMAL", ""));
	UNLOCK(s);
	rows_free(rows, nrows);
	if (rc != 0)
		*n = 0;
	return rc;
}

int
store_secret_check(struct store *s, int64_t *ok, int64_t *bad)
{
	struct secret_row *rows = NULL;
	size_t n = 0;
	int rc;

	*ok = *bad = 0;
	LOCK(s);
	rc = rows_all(s, &rows, &n);
	UNLOCK(s);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char aad[AAD_MAX];
		size_t alen =
		    aad_of(aad, rows[i].kind, rows[i].owner, rows[i].name);
		struct vault_secret pt;

		if (vault_open(s->vault, aad, alen, &rows[i].box, &pt) == 0) {
			++*ok;
			vault_secret_free(&pt);
		} else {
			log_error("store: the %s secret %s/%s does not open "
			          "(sealed with key %s)",
			          rows[i].kind, rows[i].owner, rows[i].name,
			          rows[i].box.key_id);
			++*bad;
		}
	}
	rows_free(rows, n);
	return rc;
}

/* --- agent credentials ---------------------------------------------------- */

/*
 * Each scope, a tenant's name or "" for the instance, holds at most one
 * credential per agent; the rows of one scope never touch another's.
 */
int
store_agent_connect(struct store *s, const char *owner, const char *agent,
                    const char *kind, const void *value, size_t len)
{
	const char *other = strcmp(kind, STORE_SECRET_AGENT_API_KEY) == 0
	                        ? STORE_SECRET_AGENT_OAUTH
	                        : STORE_SECRET_AGENT_API_KEY;
	char id[ULID_LEN + 1];
	int rc;

	LOCK(s);
	rc = store_begin(s);
	if (rc == 0)
		rc = store_secret_write(s, kind, owner, agent, value, len, id);
	if (rc == 0) {
		rc =
		    store_run(s, store_prep(s,
		                            "DELETE FROM secret WHERE kind = ? "
		                            "AND owner = ? AND name = ?",
		                            "sss", other, owner, agent));
		rc = rc == STORE_NOT_FOUND ? 0 : rc;
	}
	rc = store_end(s, rc);
	UNLOCK(s);
	return rc;
}

int
store_agent_method(struct store *s, const char *owner, const char *agent,
                   char method[16])
{
	char kind[16];
	struct store_text t = {kind, sizeof(kind)};
	int rc;

	method[0] = '\0';
	LOCK(s);
	rc = store_one(
	    store_prep(s,
	               "SELECT kind FROM secret WHERE owner = ? "
	               "AND name = ? AND kind IN (?, ?) "
	               "ORDER BY kind = ? DESC LIMIT 1",
	               "sssss", owner, agent, STORE_SECRET_AGENT_API_KEY,
	               STORE_SECRET_AGENT_OAUTH, STORE_SECRET_AGENT_API_KEY),
	    store_fill_text, &t);
	UNLOCK(s);
	if (rc == 0)
		snprintf(method, 16, "%s",
		         strcmp(kind, STORE_SECRET_AGENT_API_KEY) == 0
		             ? "api_key"
		             : "oauth");
	return rc;
}

int
store_agent_source(struct store *s, const char *tenant, const char *agent,
                   char owner[STORE_SECRET_OWNER_MAX + 1])
{
	struct store_text t = {owner, STORE_SECRET_OWNER_MAX + 1};
	int rc;

	owner[0] = '\0';
	LOCK(s);
	rc = store_one(store_prep(s,
	                          "SELECT owner FROM secret WHERE name = ? "
	                          "AND kind IN (?, ?) AND owner IN (?, '') "
	                          "ORDER BY owner = '' LIMIT 1",
	                          "ssss", agent, STORE_SECRET_AGENT_API_KEY,
	                          STORE_SECRET_AGENT_OAUTH, tenant),
	               store_fill_text, &t);
	UNLOCK(s);
	if (rc != 0)
		owner[0] = '\0';
	return rc;
}

static int
fill_owner(sqlite3_stmt *st, void *out)
{
	struct store_owner *o = out;

	store_col_text(st, 0, o->name, sizeof(o->name));
	return 0;
}

int
store_agent_oauth_owners(struct store *s, const char *agent,
                         struct store_owner **out, size_t *n)
{
	int rc;

	*out = NULL;
	*n = 0;
	LOCK(s);
	rc = store_collect(store_prep(s,
	                              "SELECT owner FROM secret WHERE kind = ? "
	                              "AND name = ? ORDER BY owner",
	                              "ss", STORE_SECRET_AGENT_OAUTH, agent),
	                   sizeof(**out), fill_owner, (void **)out, n);
	UNLOCK(s);
	return rc;
}

int
store_agent_key(struct store *s, const char *owner, const char *agent,
                struct vault_secret *out)
{
	return store_secret_get(s, STORE_SECRET_AGENT_API_KEY, owner, agent,
	                        out);
}
