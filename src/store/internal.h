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

/*
 * The list functions' shape: rows collected under the lock, then a
 * callback for each row after it (so a callback may use the store).
 * A list's callback has its own row type; store_each() holds it as a
 * store_any_fn and the row type's call casts it back (a function
 * pointer converted and converted back calls as it was, which a cast
 * to int (*)(const void *, void *) would not).
 */
typedef void store_any_fn(void);
/* Calls fn (cast back) on one row: 0 to go on, non-zero to stop. */
typedef int store_call_fn(store_any_fn *fn, const void *row, void *arg);

struct store_rows {
	size_t size; /* of one row */
	store_fill_fn *fill;
	store_call_fn *call;
	void (*release)(void *row); /* what a row owns; NULL: nothing */
};

/* Defines name, the store_call_fn of callbacks int (*)(const type *,
 * void *): 1 when the callback returned non-zero. */
#define STORE_CALLER(name, type)                                               \
	static int name(store_any_fn *fn, const void *row, void *arg)          \
	{                                                                      \
		return ((int (*)(const type *, void *))fn)(row, arg) != 0;     \
	}

/*
 * Takes the lock, prepares sql (store_prep's fmt and arguments) and
 * collects its rows as t says, releases the lock; then t->call(fn, row,
 * arg) for each row until one returns non-zero.  Releases and frees
 * the rows.  0; what the call that stopped it returned; or -1 when the
 * rows could not all be read (no call made then).
 */
int store_each(struct store *s, const struct store_rows *t, store_any_fn *fn,
               void *arg, const char *sql, const char *fmt, ...);

#endif
