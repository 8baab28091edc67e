/*
 * `sandboxd restore` (backup.h).
 *
 * Restore reads the backup as input and writes nothing through a link:
 * the manifest and the files it lists are opened O_NOFOLLOW and checked
 * against their checksums, the data directory's own directories (state,
 * workspaces, trash, trash/kept, releases) must not be links, and the trees are
 * copied by backup_tree.c, every entry checked against its list.  It
 * stages everything under *.restore-tmp names in the data directory (the
 * same filesystem, so the renames are atomic) and renames the database
 * into place last: the moment it appears, the key and workspaces it
 * needs are there.  A database already there (with --force) is renamed
 * aside with its -wal and -shm, since a stale -wal beside a new database
 * would be replayed into it.  Restored onto another data directory than
 * the backup's, the copy forgets its instance id: the old daemon may
 * still run on the same engine, and its containers must not look like
 * the new one's; and its releases' rows name their directories under
 * the new data directory.
 *
 * A backup of format 1 (the release before the lists) is restored with
 * the same checks but against no list, and a warning: the upgrade path
 * restores the backup the release before took.
 */
#include "ops/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/fileio.h"
#include "ops/backup_tree.h"
#include "ws/workspace.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		goto fail;                                                     \
	} while (0)

/* The key files, in the order they are staged. */
static const char *const key_files[] = {VAULT_KEY_FILE, VAULT_NEXT_FILE};

/* Removes a tree this module made (a *.restore-tmp name); rm -rf follows
 * no link. */
static void
remove_tree(const char *path)
{
	char *const argv[] = {"rm", "-rf", "--", (char *)path, NULL};
	struct stat st;
	pid_t pid;
	int status;

	if (lstat(path, &st) < 0 ||
	    posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

int
restore_target_check(const char *data_dir, char *err, size_t errlen)
{
	static const char *const dirs[] = {"state", "workspaces",
	                                   "trash", "trash/" WORKSPACE_KEPT_DIR,
	                                   "log",   BACKUP_REL_DIR};
	char path[PATH_MAX + 32];
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", data_dir, dirs[i]);
		if (lstat(path, &st) < 0 && errno == ENOENT)
			continue;
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			FAIL("%s is %s: restore writes nothing through a "
			     "link; move it away and run restore again",
			     path,
			     S_ISLNK(st.st_mode) ? "a symbolic link"
			                         : "not a directory");
	}
	return 0;
fail:
	return -1;
}

static int
read_manifest(const char *dir, struct backup_manifest *m, char *err,
              size_t errlen)
{
	char path[PATH_MAX + 64], chunk[4096];
	struct buf b;
	ssize_t n;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen,
		         "%s: %s (not a backup, or an unfinished one)", path,
		         strerror(errno));
		return -1;
	}
	buf_init(&b, BACKUP_MANIFEST_BYTES);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (buf_append(&b, chunk, (size_t)n) < 0) {
			n = -1;
			break;
		}
	close(fd);
	if (n < 0)
		snprintf(err, errlen, "%s: unreadable or larger than %d bytes",
		         path, BACKUP_MANIFEST_BYTES);
	else
		rc = backup_manifest_parse(b.data ? b.data : "", b.len, m, err,
		                           errlen);
	buf_release(&b);
	return rc;
}

static int
verify(const char *dir, const struct backup_manifest *m, FILE *out, char *err,
       size_t errlen)
{
	char path[PATH_MAX + 64], hex[VAULT_HASH_HEX + 1];
	struct store_db_info info;
	int64_t bytes;

	for (size_t i = 0; i < m->nfiles; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, m->files[i].name);
		if (vault_sha256_file(path, hex, &bytes) < 0)
			FAIL("%s: %s", path, strerror(errno));
		if (strcmp(hex, m->files[i].sha256) != 0 ||
		    bytes != m->files[i].bytes)
			FAIL("%s does not match its checksum in the manifest",
			     path);
	}
	if (m->schema_version > store_schema_latest())
		FAIL("the backup's schema %d is newer than this sandboxd's "
		     "(%d): restore it with the version that made it (%s)",
		     m->schema_version, store_schema_latest(), m->version);
	snprintf(path, sizeof(path), "%s/sandboxd.db", dir);
	if (store_db_check(path, &info, err, errlen) < 0)
		goto fail;
	if (info.apps != m->counts.apps || info.tasks != m->counts.tasks ||
	    info.sandboxes != m->counts.sandboxes)
		FAIL("the database holds other counts than the manifest says");
	snprintf(path, sizeof(path), "%s/workspaces", dir);
	if (m->workspaces && access(path, F_OK) < 0)
		FAIL("the manifest lists workspaces but %s is missing", path);
	snprintf(path, sizeof(path), "%s/" BACKUP_REL_DIR, dir);
	if (m->releases && access(path, F_OK) < 0)
		FAIL("the manifest lists releases but %s is missing", path);
	fprintf(out,
	        "backup of %s: checksums and integrity_check ok; %lld "
	        "apps, %lld sandboxes, %lld tasks\n",
	        m->created_at, (long long)info.apps, (long long)info.sandboxes,
	        (long long)info.tasks);
	return 0;
fail:
	return -1;
}

static int
check_key(const struct config *cfg, const struct backup_manifest *m, char *err,
          size_t errlen)
{
	if (m->key_external && cfg->secrets_key == NULL)
		FAIL(
		    "the backup's secrets are sealed with SANDBOXD_SECRETS_KEY "
		    "(not in the backup): set it to the same key and run "
		    "restore again");
	if (!m->key_external && cfg->secrets_key)
		FAIL("the backup holds secret.key, but SANDBOXD_SECRETS_KEY is "
		     "set and would be used instead: unset it");
	return 0;
fail:
	return -1;
}

struct step {
	char staged[PATH_MAX + 64];
	char final[PATH_MAX + 64];
	bool dir;
};

/* Renames what is at final aside (with force), then staged into place. */
static int
commit(struct step *s, size_t n, const char *data_dir, bool force,
       const char *stamp, FILE *out, char *err, size_t errlen)
{
	static const char *const sidecars[] = {"", "-wal", "-shm"};
	char from[PATH_MAX + 80], to[PATH_MAX + 120];

	for (size_t i = 0; i < n; i++) {
		size_t nside = strstr(s[i].final, "sandboxd.db") ? 3 : 1;
		for (size_t k = 0; k < nside; k++) {
			snprintf(from, sizeof(from), "%s%s", s[i].final,
			         sidecars[k]);
			if (faccessat(AT_FDCWD, from, F_OK,
			              AT_SYMLINK_NOFOLLOW) < 0 ||
			    (s[i].dir && rmdir(from) == 0))
				continue; /* none, or an empty directory */
			if (!force && !s[i].dir)
				FAIL("%s exists (use --force)", from);
			snprintf(to, sizeof(to), "%s.pre-restore-%s", from,
			         stamp);
			if (rename(from, to) < 0)
				FAIL("rename %s: %s", from, strerror(errno));
			fprintf(out, "kept %s\n", to);
		}
		if (rename(s[i].staged, s[i].final) < 0)
			FAIL("rename %s: %s", s[i].staged, strerror(errno));
	}
	snprintf(from, sizeof(from), "%s/state", data_dir);
	fileio_sync_dir(from);
	fileio_sync_dir(data_dir);
	return 0;
fail:
	return -1;
}

/* Copies dir/name to <dd>/rel.restore-tmp, the step that renames it. */
static int
stage_file(struct step *s, const char *dir, const char *name, const char *dd,
           const char *rel, char *err, size_t errlen)
{
	char src[PATH_MAX + 64];

	s->dir = false;
	snprintf(src, sizeof(src), "%s/%s", dir, name);
	snprintf(s->final, sizeof(s->final), "%s/%s", dd, rel);
	snprintf(s->staged, sizeof(s->staged), "%s/%s.restore-tmp", dd, rel);
	unlink(s->staged);
	if (backup_copy_file(src, s->staged, 0600) < 0)
		FAIL("cannot copy %s: %s", src, strerror(errno));
	return 0;
fail:
	return -1;
}

/* A tree of the backup to <dd>/<parent>/<name>.restore-tmp, checked. */
struct tree {
	const char *name, *list;  /* in the backup */
	const char *parent, *dst; /* in the data directory */
	mode_t mode;
	enum backup_owner own;
};

static int
stage_tree(struct step *s, int bkfd, const struct backup_manifest *m,
           const struct tree *t, const char *dd, FILE *out, char *err,
           size_t errlen)
{
	const struct backup_file *f = NULL;
	struct backup_tree_count n = {0};
	char staged[64];
	int pfd = -1, rc = -1;

	for (size_t i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].name, t->list) == 0)
			f = &m->files[i];
	s->dir = true;
	snprintf(s->final, sizeof(s->final), "%s/%s/%s", dd, t->parent, t->dst);
	snprintf(s->staged, sizeof(s->staged), "%s.restore-tmp", s->final);
	snprintf(staged, sizeof(staged), "%s.restore-tmp", t->dst);
	remove_tree(s->staged);
	pfd = open(dd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0 && strcmp(t->parent, ".") != 0) {
		int fd =
		    openat(pfd, t->parent,
		           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(pfd);
		pfd = fd;
	}
	if (pfd < 0)
		FAIL("%s/%s: %s", dd, t->parent, strerror(errno));
	if (backup_tree_restore(bkfd, t->name, f ? t->list : NULL,
	                        f ? f->sha256 : NULL, pfd, staged, t->mode,
	                        t->own, &n, err, errlen) < 0)
		goto fail;
	fprintf(out, "%s: %lld entries, %lld bytes%s\n", t->name,
	        (long long)n.entries, (long long)n.bytes,
	        f ? ", each as its list says" : " (no list: format 1)");
	if (n.skipped)
		fprintf(out, "%s: %lld sockets or FIFOs left out\n", t->name,
		        (long long)n.skipped);
	if (n.setid)
		fprintf(out,
		        "%s: set-id or sticky bits of %lld entries dropped\n",
		        t->name, (long long)n.setid);
	rc = 0;
fail:
	if (pfd >= 0)
		close(pfd);
	return rc;
}

static const struct tree ws_tree = {.name = "workspaces",
                                    .list = BACKUP_WS_LIST,
                                    .parent = ".",
                                    .dst = "workspaces",
                                    .mode = 0711,
                                    .own = BACKUP_OWN_SANDBOX};
static const struct tree trash_tree = {.name = BACKUP_TRASH_DIR,
                                       .list = BACKUP_TRASH_LIST,
                                       .parent = "trash",
                                       .dst = WORKSPACE_KEPT_DIR,
                                       .mode = 0700,
                                       .own = BACKUP_OWN_SANDBOX};
/* Root's, as publish makes them, but for a server release's app/. */
static const struct tree rel_tree = {.name = BACKUP_REL_DIR,
                                     .list = BACKUP_REL_LIST,
                                     .parent = ".",
                                     .dst = BACKUP_REL_DIR,
                                     .mode = 0700,
                                     .own = BACKUP_OWN_RELEASES};

/* Stages each step but the database's, in the order they are committed. */
static int
stage_all(struct step *steps, size_t *n, const char *dir, int bkfd,
          const struct backup_manifest *m, const char *dd, FILE *out, char *err,
          size_t errlen)
{
	char path[PATH_MAX + 32];
	struct stat st;

	for (size_t i = 0; i < 2 && !m->key_external; i++)
		if (backup_manifest_lists(m, key_files[i]) &&
		    stage_file(&steps[(*n)++], dir, key_files[i], dd,
		               key_files[i], err, errlen) < 0)
			return -1;
	if (m->releases && stage_tree(&steps[(*n)++], bkfd, m, &rel_tree, dd,
	                              out, err, errlen) < 0)
		return -1;
	if (!m->workspaces)
		return 0;
	if (m->format == BACKUP_FORMAT_NOLIST)
		fprintf(out,
		        "warning: a backup of format %d lists no checksums of "
		        "its workspaces: they are checked for links, devices, "
		        "FIFOs and set-id bits, but not against a list; take a "
		        "new backup once restored\n",
		        BACKUP_FORMAT_NOLIST);
	if (stage_tree(&steps[(*n)++], bkfd, m, &ws_tree, dd, out, err,
	               errlen) < 0)
		return -1;
	if (!m->trash &&
	    (m->format != BACKUP_FORMAT_NOLIST ||
	     fstatat(bkfd, BACKUP_TRASH_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0))
		return 0;
	snprintf(path, sizeof(path), "%s/trash", dd);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make %s: %s", path,
		         strerror(errno));
		return -1;
	}
	return stage_tree(&steps[(*n)++], bkfd, m, &trash_tree, dd, out, err,
	                  errlen);
}

int
restore_run(const struct config *cfg, const char *dir, bool force, FILE *out,
            char *err, size_t errlen)
{
	const char *dd = cfg->data_dir;
	struct backup_manifest m;
	struct step steps[BACKUP_FILES + 2];
	char src[PATH_MAX + 64], stamp[32];
	size_t n = 0;
	struct tm tm;
	time_t now = time(NULL);
	int rc = -1, bkfd = -1;

	memset(steps, 0, sizeof(steps));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (read_manifest(dir, &m, err, errlen) < 0 ||
	    verify(dir, &m, out, err, errlen) < 0 ||
	    check_key(cfg, &m, err, errlen) < 0 ||
	    restore_target_check(dd, err, errlen) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s/state/sandboxd.db", dd);
	if (!force && access(src, F_OK) == 0)
		FAIL("%s holds a database: restore onto a fresh data "
		     "directory, or add --force to keep it aside as "
		     "*.pre-restore-%s",
		     dd, stamp);
	if ((bkfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		FAIL("%s: %s", dir, strerror(errno));
	/* Staged in the order they are committed: the database last. */
	if (stage_all(steps, &n, dir, bkfd, &m, dd, out, err, errlen) < 0 ||
	    stage_file(&steps[n++], dir, "sandboxd.db", dd, "state/sandboxd.db",
	               err, errlen) < 0)
		goto fail;
	if (strcmp(m.data_dir, dd) != 0 &&
	    (store_db_forget_instance(steps[n - 1].staged, err, errlen) < 0 ||
	     store_db_move_releases(steps[n - 1].staged, m.data_dir, dd, err,
	                            errlen) < 0))
		goto fail;
	if (commit(steps, n, dd, force, stamp, out, err, errlen) < 0)
		goto fail;
	if (workspace_init_dirs(dd) < 0)
		FAIL("cannot prepare %s", dd);
	fprintf(out, "restored onto %s%s\n", dd,
	        m.workspaces ? " (with workspaces)"
	                     : "; the backup holds no workspaces: put them in "
	                       "workspaces/ (restic restore) before serve");
	rc = 0;
fail:
	for (size_t i = 0; rc < 0 && i < n; i++) {
		if (steps[i].dir)
			remove_tree(steps[i].staged);
		else
			unlink(steps[i].staged);
	}
	if (bkfd >= 0)
		close(bkfd);
	return rc;
}
