/*
 * SQLite store.  One connection (opened FULLMUTEX) plus our own mutex so a
 * read-modify-write or a multi-statement transaction is atomic with
 * respect to other threads.  WAL mode keeps readers off the writer's back
 * and makes a crash at any point leave the last committed state;
 * synchronous=NORMAL is the WAL setting that never corrupts, at worst it
 * forgets the last transaction on power loss.  Rows map to fixed-size
 * structs: every text column has a bound enforced by the API layer, and
 * copies here truncate rather than overflow.
 */
#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "store/internal.h"
#include "store/migrations.h"

static int
exec_sql(struct store *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		log_error("sqlite: %s", msg ? msg : "unknown error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int
migrate(struct store *s)
{
	size_t n = sizeof(store_migrations) / sizeof(store_migrations[0]);

	if (exec_sql(s, "CREATE TABLE IF NOT EXISTS schema_migration ("
	                "version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
	                "applied_at INTEGER NOT NULL)") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct migration *m = &store_migrations[i];
		sqlite3_stmt *st;
		int have;

		sqlite3_prepare_v2(s->db,
		                   "SELECT 1 FROM schema_migration "
		                   "WHERE version = ?",
		                   -1, &st, NULL);
		sqlite3_bind_int(st, 1, m->version);
		have = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
		if (have)
			continue;
		if (exec_sql(s, "BEGIN IMMEDIATE") < 0)
			return -1;
		if (exec_sql(s, m->sql) < 0) {
			exec_sql(s, "ROLLBACK");
			return -1;
		}
		sqlite3_prepare_v2(
		    s->db, "INSERT INTO schema_migration VALUES (?,?,?)", -1,
		    &st, NULL);
		sqlite3_bind_int(st, 1, m->version);
		sqlite3_bind_text(st, 2, m->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, clock_now());
		sqlite3_step(st);
		sqlite3_finalize(st);
		if (exec_sql(s, "COMMIT") < 0)
			return -1;
		log_info("store: applied migration %04d_%s", m->version,
		         m->name);
	}
	return 0;
}

int
store_open(struct store **out, const char *path)
{
	struct store *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return -1;
	pthread_mutex_init(&s->mu, NULL);
	if (sqlite3_open_v2(path, &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                        SQLITE_OPEN_FULLMUTEX,
	                    NULL) != SQLITE_OK) {
		log_error("store: cannot open %s: %s", path,
		          sqlite3_errmsg(s->db));
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	if (exec_sql(s, "PRAGMA journal_mode=WAL") < 0 ||
	    exec_sql(s, "PRAGMA synchronous=NORMAL") < 0 ||
	    exec_sql(s, "PRAGMA foreign_keys=ON") < 0 || migrate(s) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
	return -1;
}

void
store_set_vault(struct store *s, const struct vault *v)
{
	s->vault = v;
}

int
store_derive_key(struct store *s, const char *context, unsigned char out[32])
{
	return vault_derive(s->vault, context, out);
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/*
 * Statement helpers.  prep() binds arguments from a format string:
 * 's' text (NULL binds NULL), 'i' int64, 'n' int.
 */
sqlite3_stmt *
store_vprep(struct store *s, const char *sql, const char *fmt, va_list ap)
{
	sqlite3_stmt *st;
	int i = 1;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("sqlite: prepare: %s", sqlite3_errmsg(s->db));
		return NULL;
	}
	for (const char *f = fmt; *f; f++, i++) {
		if (*f == 's')
			sqlite3_bind_text(st, i, va_arg(ap, const char *), -1,
			                  SQLITE_TRANSIENT);
		else if (*f == 'i')
			sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
		else
			sqlite3_bind_int(st, i, va_arg(ap, int));
	}
	return st;
}

sqlite3_stmt *
store_prep(struct store *s, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *st;
	va_list ap;

	va_start(ap, fmt);
	st = store_vprep(s, sql, fmt, ap);
	va_end(ap);
	return st;
}

int
store_exec(struct store *s, const char *sql, const char *fmt, ...)
{
	va_list ap;
	int rc;

	LOCK(s);
	va_start(ap, fmt);
	rc = store_run(s, store_vprep(s, sql, fmt, ap));
	va_end(ap);
	UNLOCK(s);
	return rc;
}

int
store_begin(struct store *s)
{
	return exec_sql(s, "BEGIN IMMEDIATE");
}

int
store_end(struct store *s, int rc)
{
	if (rc == 0 && exec_sql(s, "COMMIT") == 0)
		return 0;
	exec_sql(s, "ROLLBACK");
	return rc == 0 ? -1 : rc;
}

/* Steps a statement that returns no rows; maps constraint errors. */
int
store_run(struct store *s, sqlite3_stmt *st)
{
	int rc;

	if (st == NULL)
		return -1;
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return sqlite3_changes(s->db) > 0 ? 0 : STORE_NOT_FOUND;
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		return STORE_CONFLICT;
	log_error("sqlite: step: %s", sqlite3_errmsg(s->db));
	return -1;
}

int
store_one(sqlite3_stmt *st, store_fill_fn *fill, void *out)
{
	int rc = STORE_NOT_FOUND;

	if (st == NULL)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		rc = fill(st, out) == 0 ? 0 : -1;
	sqlite3_finalize(st);
	return rc;
}

int
store_fill_text(sqlite3_stmt *st, void *out)
{
	struct store_text *t = out;

	store_col_text(st, 0, t->buf, t->len);
	return 0;
}

void
store_col_text(sqlite3_stmt *st, int col, char *dst, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	snprintf(dst, len, "%s", t ? (const char *)t : "");
}

int
store_text_get(struct store *s, const char *sql, const char *key, char *val,
               size_t len)
{
	struct store_text t = {val, len};
	int rc;

	LOCK(s);
	rc = store_one(store_prep(s, sql, "s", key), store_fill_text, &t);
	UNLOCK(s);
	return rc;
}

int
store_meta_get(struct store *s, const char *key, char *val, size_t len)
{
	return store_text_get(s, "SELECT value FROM meta WHERE key = ?", key,
	                      val, len);
}

int
store_meta_set(struct store *s, const char *key, const char *val)
{
	return store_exec(s, "INSERT OR REPLACE INTO meta VALUES (?, ?)", "ss",
	                  key, val);
}

int
store_collect(sqlite3_stmt *st, size_t size, store_fill_fn *fill, void **rows,
              size_t *n)
{
	char *arr = NULL;
	size_t cap = 0;
	int rc = st ? 0 : -1;

	*n = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			char *p;
			cap = cap ? cap * 2 : 16;
			p = realloc(arr, cap * size);
			if (p == NULL) {
				rc = -1;
				break;
			}
			arr = p;
		}
		if (fill(st, arr + *n * size) < 0) {
			rc = -1;
			break;
		}
		++*n;
	}
	sqlite3_finalize(st);
	*rows = arr;
	return rc;
}

int
store_each(struct store *s, const struct store_rows *t, store_any_fn *fn,
           void *arg, const char *sql, const char *fmt, ...)
{
	char *rows;
	size_t n;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	LOCK(s);
	rc = store_collect(store_vprep(s, sql, fmt, ap), t->size, t->fill,
	                   (void **)&rows, &n);
	UNLOCK(s);
	va_end(ap);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = t->call(fn, rows + i * t->size, arg);
	for (size_t i = 0; t->release && i < n; i++)
		t->release(rows + i * t->size);
	free(rows);
	return rc;
}
