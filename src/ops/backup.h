/*
 * backup: `sandboxd backup DIR` and `sandboxd restore DIR`
 * (docs/operations.md).  A backup directory holds sandboxd.db (SQLite's
 * online backup: one committed state, taken while the daemon runs),
 * secret.key when the master key is that file, workspaces/ (and the
 * trash's kept workspaces, trash-kept/) with --workspaces, each with its
 * list (workspaces.list, trash-kept.list: every entry's path, type, mode,
 * size and SHA-256), the published apps' releases (releases/, always:
 * what serves the apps, releases.list), and manifest.json, written last: a
 * directory without it is an unfinished backup.  Restore checks the manifest,
 * the checksums and PRAGMA integrity_check before it touches the data
 * directory, checks every entry of a tree against its list as it copies it, and
 * never runs next to a daemon on it.
 */
#ifndef OPS_BACKUP_H
#define OPS_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config/config.h"
#include "docker/docker.h"
#include "store/backup.h"
#include "vault/vault.h"

/*
 * Format 2 lists the workspace trees (backup_tree.h); format 1 (before
 * that) is still restored, its trees checked for links and special
 * files but against no list, with a warning.
 */
#define BACKUP_FORMAT         2
#define BACKUP_FORMAT_NOLIST  1
#define BACKUP_MANIFEST_BYTES 65536 /* a manifest is under 2 KiB */
#define BACKUP_FILES          6     /* the database, 2 keys, 3 lists */
#define BACKUP_KEY_FILES      3     /* the database and the keys */
#define BACKUP_WS_LIST        "workspaces.list"
#define BACKUP_TRASH_DIR      "trash-kept" /* the trash's kept workspaces */
#define BACKUP_TRASH_LIST     "trash-kept.list"
#define BACKUP_REL_DIR        "releases" /* <data>/releases, the same name */
#define BACKUP_REL_LIST       "releases.list"

struct backup_file {
	char name[32]; /* one of the names backup_file_known() takes */
	char sha256[VAULT_HASH_HEX + 1];
	int64_t bytes;
};

struct backup_manifest {
	int format;
	char version[32];
	int schema_version;
	char created_at[32];
	char data_dir[PATH_MAX];
	struct store_db_info counts;
	bool key_external; /* SANDBOXD_SECRETS_KEY: not in the backup */
	bool workspaces;
	bool trash; /* trash-kept/ is in the backup */
	int64_t workspaces_count;
	int64_t workspaces_bytes;
	bool releases; /* releases/ is in the backup (absent: none then) */
	int64_t releases_apps;
	int64_t releases_bytes;
	struct backup_file files[BACKUP_FILES];
	size_t nfiles;
};

struct backup_opts {
	const struct config *cfg;
	const char *dir;
	bool workspaces;       /* copy <data>/workspaces too */
	struct docker *docker; /* pauses running sandboxes during their copy */
};

/* 0, or -1 with err; progress lines go to out. */
int backup_run(const struct backup_opts *o, FILE *out, char *err,
               size_t errlen);
/*
 * Restores dir onto cfg's data directory, which must hold no database
 * unless force (then what was there is kept beside it, *.pre-restore-T).
 * The caller holds the secrets lock exclusively.
 */
int restore_run(const struct config *cfg, const char *dir, bool force,
                FILE *out, char *err, size_t errlen);

/*
 * The data directory's own directories restore writes into (state,
 * workspaces, trash, trash/kept, releases) are directories, not links: 0, or -1
 * with err.  Checked before anything is made there.
 */
int restore_target_check(const char *data_dir, char *err, size_t errlen);

/* src to a new file dst (mode), fsynced; 0 or -1 with errno. */
int backup_copy_file(const char *src, const char *dst, mode_t mode);

/* Whether name may be a file of a backup (no paths, a fixed list). */
bool backup_file_known(const char *name);
/* Parses and checks a manifest; 0 or -1 with err. */
int backup_manifest_parse(const char *text, size_t len,
                          struct backup_manifest *m, char *err, size_t errlen);
int backup_manifest_dump(const struct backup_manifest *m, struct buf *out);
/* Whether the manifest lists name among its files. */
bool backup_manifest_lists(const struct backup_manifest *m, const char *name);

#endif
