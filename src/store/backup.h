/*
 * store/backup: a consistent copy of the database while the daemon runs
 * (SQLite's online backup), and the check a restore makes of a copy.
 * Both work on paths, with their own connections: neither needs the
 * daemon's store, and neither runs migrations on what it reads.
 */
#ifndef STORE_BACKUP_H
#define STORE_BACKUP_H

#include <stddef.h>
#include <stdint.h>

/* What a database holds, as the manifest records it. */
struct store_db_info {
	int schema_version; /* the highest applied migration */
	int64_t apps;
	int64_t sandboxes;
	int64_t tasks;
	int64_t secrets;
	char instance[32]; /* meta instance_id, "" when none */
};

/* The schema version this build migrates to. */
int store_schema_latest(void);

/*
 * Copies the live database at src to dst (which must not exist) in one
 * read transaction, so the copy is one committed state even while other
 * connections write; dst is left in rollback-journal mode, one
 * self-contained file.  info gets what the copy holds.  0, or -1 with
 * err.
 */
int store_backup(const char *src, const char *dst, struct store_db_info *info,
                 char *err, size_t errlen);

/*
 * Opens the database at path read-only, runs PRAGMA integrity_check and
 * counts what it holds.  0 when it says "ok"; -1 with err (the first
 * problem it names) otherwise.
 */
int store_db_check(const char *path, struct store_db_info *info, char *err,
                   size_t errlen);

/* What the database at path holds, read-only, without a check. */
int store_db_peek(const char *path, struct store_db_info *info, char *err,
                  size_t errlen);

/*
 * Every app id of the database at path, read-only in one read
 * transaction (apps in the trash too: their rows stay), each given to
 * fn.  0, or -1 with err (fn may have had some ids then).
 */
int store_db_app_ids(const char *path, void (*fn)(const char *id, void *arg),
                     void *arg, char *err, size_t errlen);

/*
 * Drops the copy's instance id, so the daemon that opens it makes a new
 * one and never takes the containers of the instance it was copied from
 * (which may still run on the same engine) for its own.
 */
int store_db_forget_instance(const char *path, char *err, size_t errlen);

/*
 * The releases' directories (release.path, under <data>/releases) of a
 * copy restored onto another data directory: from's prefix becomes
 * to's, so a release is served from the restored files, never from the
 * directory the backup was taken of.  A database without releases is
 * left as it is.  0, or -1 with err.
 */
int store_db_move_releases(const char *path, const char *from, const char *to,
                           char *err, size_t errlen);

#endif
