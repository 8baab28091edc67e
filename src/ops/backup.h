/*
 * backup: `sandboxd backup DIR` and `sandboxd restore DIR`
 * (docs/operations.md).  A backup directory holds sandboxd.db (SQLite's
 * online backup: one committed state, taken while the daemon runs),
 * secret.key when the master key is that file, workspaces/ (and the
 * trash's kept workspaces, trash-kept/) with --workspaces, and manifest.json,
 * written last: a directory without it is an unfinished backup.  Restore checks
 * the manifest, the checksums and PRAGMA integrity_check before it touches the
 * data directory, and never runs next to a daemon on it.
 */
#ifndef OPS_BACKUP_H
#define OPS_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/config.h"
#include "docker/docker.h"
#include "store/backup.h"
#include "vault/vault.h"

#define BACKUP_FORMAT         1
#define BACKUP_MANIFEST_BYTES 65536 /* a manifest is under 2 KiB */
#define BACKUP_FILES          3

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
	int64_t workspaces_count;
	int64_t workspaces_bytes;
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

/* Whether name may be a file of a backup (no paths, a fixed list). */
bool backup_file_known(const char *name);
/* Parses and checks a manifest; 0 or -1 with err. */
int backup_manifest_parse(const char *text, size_t len,
                          struct backup_manifest *m, char *err, size_t errlen);
int backup_manifest_dump(const struct backup_manifest *m, struct buf *out);

#endif
