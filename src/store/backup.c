/*
 * The database side of `sandboxd backup` and `restore` (backup.h).
 *
 * The copy is sqlite3_backup_step(-1): all pages in one step, under one
 * read transaction of the source.  In WAL mode that transaction sees one
 * snapshot and blocks no writer, so the daemon and its tasks go on
 * writing; a step of a few pages at a time would restart whenever the
 * source changes and might never end under a busy writer.  Rejected: a
 * plain copy of the file (it misses what is still in the -wal file, and
 * a copy made mid-checkpoint is torn), and VACUUM INTO (it rebuilds
 * every index, slower for no gain here).
 */
#include "store/backup.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/migrations.h"

#define BACKUP_BUSY_RETRIES 100 /* 50 ms apart: 5 s of a locked source */

int
store_schema_latest(void)
{
	size_t n = sizeof(store_migrations) / sizeof(store_migrations[0]);

	return store_migrations[n - 1].version;
}

static int64_t
count(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int
read_info(sqlite3 *db, struct store_db_info *info, char *err, size_t errlen)
{
	int64_t v = count(db, "SELECT max(version) FROM schema_migration");
	sqlite3_stmt *st;

	info->apps = count(db, "SELECT count(*) FROM app");
	info->sandboxes = count(db, "SELECT count(*) FROM sandbox");
	info->tasks = count(db, "SELECT count(*) FROM task");
	info->secrets = count(db, "SELECT count(*) FROM secret");
	if (v <= 0 || info->apps < 0 || info->sandboxes < 0 ||
	    info->tasks < 0 || info->secrets < 0) {
		snprintf(err, errlen, "not a sandboxd database: %s",
		         sqlite3_errmsg(db));
		return -1;
	}
	info->schema_version = (int)v;
	info->instance[0] = '\0';
	if (sqlite3_prepare_v2(db,
	                       "SELECT value FROM meta WHERE key = "
	                       "'instance_id'",
	                       -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_text(st, 0))
			snprintf(info->instance, sizeof(info->instance), "%s",
			         (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	return 0;
}

static int
exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -1;
}

int
store_backup(const char *src, const char *dst, struct store_db_info *info,
             char *err, size_t errlen)
{
	sqlite3 *from = NULL, *to = NULL;
	sqlite3_backup *b;
	int rc = -1, step, tries = 0;

	if (access(dst, F_OK) == 0) {
		snprintf(err, errlen, "%s exists", dst);
		return -1;
	}
	/*
	 * Read-write (never created) only so that, when no daemon has it
	 * open, closing it as its last connection removes the -wal and
	 * -shm that opening a WAL database makes; nothing is written.
	 */
	if (sqlite3_open_v2(src, &from, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", src,
		         sqlite3_errmsg(from));
		goto out;
	}
	sqlite3_busy_timeout(from, 5000);
	if (sqlite3_open_v2(dst, &to,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
	                    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "cannot create %s: %s", dst,
		         sqlite3_errmsg(to));
		goto out;
	}
	b = sqlite3_backup_init(to, "main", from, "main");
	if (b == NULL) {
		snprintf(err, errlen, "backup: %s", sqlite3_errmsg(to));
		goto out;
	}
	while ((step = sqlite3_backup_step(b, -1)) == SQLITE_BUSY ||
	       step == SQLITE_LOCKED) {
		if (++tries > BACKUP_BUSY_RETRIES)
			break;
		sqlite3_sleep(50);
	}
	sqlite3_backup_finish(b);
	if (step != SQLITE_DONE) {
		snprintf(err, errlen, "backup: %s", sqlite3_errstr(step));
		goto out;
	}
	/* One file, no -wal beside it, whatever mode the source was in. */
	if (exec(to, "PRAGMA journal_mode=DELETE", err, errlen) < 0 ||
	    read_info(to, info, err, errlen) < 0)
		goto out;
	rc = 0;
out:
	sqlite3_close(from);
	if (sqlite3_close(to) != SQLITE_OK && rc == 0) {
		snprintf(err, errlen, "closing %s failed", dst);
		rc = -1;
	}
	return rc;
}

static int
integrity_row(void *arg, int n, char **val, char **col)
{
	char *first = arg;

	(void)col;
	if (n > 0 && val[0] && first[0] == '\0')
		snprintf(first, 256, "%s", val[0]);
	return 0;
}

int
store_db_check(const char *path, struct store_db_info *info, char *err,
               size_t errlen)
{
	sqlite3 *db = NULL;
	char first[256] = "", *msg = NULL;
	int rc = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		         sqlite3_errmsg(db));
		goto out;
	}
	if (sqlite3_exec(db, "PRAGMA integrity_check", integrity_row, first,
	                 &msg) != SQLITE_OK) {
		snprintf(err, errlen, "integrity_check: %s",
		         msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		goto out;
	}
	if (strcmp(first, "ok") != 0) {
		snprintf(err, errlen, "integrity_check: %s", first);
		goto out;
	}
	rc = read_info(db, info, err, errlen);
out:
	sqlite3_close(db);
	return rc;
}

int
store_db_forget_instance(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int rc = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		         sqlite3_errmsg(db));
		goto out;
	}
	rc =
	    exec(db, "DELETE FROM meta WHERE key = 'instance_id'", err, errlen);
out:
	sqlite3_close(db);
	return rc;
}

int
store_db_peek(const char *path, struct store_db_info *info, char *err,
              size_t errlen)
{
	sqlite3 *db = NULL;
	int rc = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK) {
		sqlite3_busy_timeout(db, 2000);
		rc = read_info(db, info, err, errlen);
	} else {
		snprintf(err, errlen, "cannot open %s: %s", path,
		         sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	return rc;
}

int
store_db_app_ids(const char *path, void (*fn)(const char *id, void *arg),
                 void *arg, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1, step;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		         sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_busy_timeout(db, 2000);
	if (sqlite3_prepare_v2(db, "SELECT id FROM app", -1, &st, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		goto out;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		if (id)
			fn(id, arg);
	}
	if (step != SQLITE_DONE)
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
	else
		rc = 0;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

int
store_db_move_releases(const char *path, const char *from, const char *to,
                       char *err, size_t errlen)
{
	static const char sql[] =
	    "UPDATE release SET path = ?2 || substr(path, length(?1) + 1) "
	    "WHERE substr(path, 1, length(?1) + 1) = ?1 || '/'";
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1, has = 0;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		         sqlite3_errmsg(db));
		goto out;
	}
	/* A database from before publishing has no release table. */
	if (sqlite3_prepare_v2(db,
	                       "SELECT count(*) FROM sqlite_master WHERE "
	                       "type = 'table' AND name = 'release'",
	                       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		goto fail;
	has = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (!has) {
		rc = 0;
		goto out;
	}
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_bind_text(st, 1, from, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, to, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	rc = 0;
	goto out;
fail:
	snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}
