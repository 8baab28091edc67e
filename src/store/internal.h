/* Shared by the store's own files only. */
#ifndef STORE_INTERNAL_H
#define STORE_INTERNAL_H

#include <stdarg.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>

#include "lib/ulid.h"
#include "vault/vault.h"

struct store {
	sqlite3 *db;
	pthread_mutex_t mu;
	const struct vault *vault; /* seals secret rows; not owned */
};

#define LOCK(s)   pthread_mutex_lock(&(s)->mu)
#define UNLOCK(s) pthread_mutex_unlock(&(s)->mu)

/*
 * A write transaction, under the lock: store_begin() starts it,
 * store_end(s, rc) commits when rc is 0 and rolls back otherwise; it
 * returns rc, or -1 when the commit failed.
 */
int store_begin(struct store *s);
int store_end(struct store *s, int rc);

/*
 * Seals value into the secret row (kind, owner, name), inserting or
 * replacing it, and writes the row's id to id.  The caller holds the
 * lock (and usually a transaction).
 */
int store_secret_write(struct store *s, const char *kind, const char *owner,
                       const char *name, const void *value, size_t len,
                       char id[ULID_LEN + 1]);

/* Prepares sql and binds: 's' text (NULL binds NULL), 'i' int64, 'n' int. */
sqlite3_stmt *store_prep(struct store *s, const char *sql, const char *fmt,
                         ...);
sqlite3_stmt *store_vprep(struct store *s, const char *sql, const char *fmt,
                          va_list ap);
/* Steps and finalizes a statement that returns no rows. */
int store_run(struct store *s, sqlite3_stmt *st);
/* store_run(store_prep(...)) under the lock. */
int store_exec(struct store *s, const char *sql, const char *fmt, ...);
void store_col_text(sqlite3_stmt *st, int col, char *dst, size_t len);
/* A text destination for store_one(): fills buf from column 0. */
struct store_text {
	char *buf;
	size_t len;
};
int store_fill_text(sqlite3_stmt *st, void *out);
/* One text value by key (sql selects it with one '?'); takes the lock. */
int store_text_get(struct store *s, const char *sql, const char *key, char *val,
                   size_t len);
/*
 * A row reader: fills out from the statement's current row, 0; or -1
 * (logged) for a row it cannot represent, owning nothing then.
 */
typedef int store_fill_fn(sqlite3_stmt *st, void *out);

/*
 * Steps and finalizes a statement expected to return at most one row;
 * on a row calls fill(st, out).  0, STORE_NOT_FOUND, or -1 when st is
 * NULL or fill refused the row.  The caller holds the lock.
 */
int store_one(sqlite3_stmt *st, store_fill_fn *fill, void *out);

/*
 * Steps and finalizes st, filling one element of `size` bytes per row
 * into a new array (*rows, *n; free it and what its n elements own).
 * Callers collect under the lock and run their callbacks after it, so a
 * callback may use the store.  0, or -1 (st NULL, out of memory, a row
 * fill refused: the rows before it are in *rows).
 */
int store_collect(sqlite3_stmt *st, size_t size, store_fill_fn *fill,
                  void **rows, size_t *n);

#endif
