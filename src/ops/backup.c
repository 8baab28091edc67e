/*
 * `sandboxd backup` and `restore` (backup.h).
 *
 * Backup order: the database first (one committed state), then the key,
 * then the workspaces, then manifest.json.  The workspaces come after
 * the database because they only move forward: every checkpoint and
 * file a row of the copy names was already in its workspace when the
 * copy was taken, so a copy of the workspace made later holds it too.
 * The other order could give rows naming commits the copied workspace
 * never had.  A running sandbox is paused (cgroup freezer) while its
 * workspace is copied, so no file is copied half-written; a task in it
 * waits meanwhile.  The key and the database are taken under the shared
 * secrets lock, so a `secrets rotate` cannot change one between them.
 *
 * Restore stages everything under *.restore-tmp names in the data
 * directory (the same filesystem, so the renames are atomic) and
 * renames the database into place last: the moment it appears, the key
 * and workspaces it needs are there.  A database already there (with
 * --force) is renamed aside with its -wal and -shm, since a stale -wal
 * beside a new database would be replayed into it.  Restored onto
 * another data directory than the backup's, the copy forgets its
 * instance id: the old daemon may still run on the same engine, and its
 * containers must not look like the new one's.
 *
 * Rejected: tar archives (restic and the like deduplicate a plain
 * tree far better) and copying workspaces with our own tree walk (cp -a
 * keeps owners, modes, times, symlinks and sparse files, all of which a
 * workspace has).
 */
#include "ops/backup.h"

#include <dirent.h>
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
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/jv.h"
#include "lib/ulid.h"
#include "ws/usage.h"
#include "ws/workspace.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		goto fail;                                                     \
	} while (0)

/* The kept workspaces of the trash, beside workspaces/ (copy_trash). */
#define BACKUP_TRASH_DIR "trash-kept"

/* The files of a backup, in the order they are copied: the database
 * first, then the key (and a rotation's next key). */
static const char *const known_files[] = {"sandboxd.db", VAULT_KEY_FILE,
                                          VAULT_NEXT_FILE};

/* src to a new file dst (mode), fsynced. */
static int
copy_file(const char *src, const char *dst, mode_t mode)
{
	char chunk[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), out = -1;
	ssize_t n = 0;
	int rc = -1;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0)
		goto out;
	while ((n = read(in, chunk, sizeof(chunk))) > 0)
		if (fileio_write_all(out, chunk, (size_t)n) < 0)
			goto out;
	if (n == 0 && fsync(out) == 0)
		rc = 0;
out:
	explicit_bzero(chunk, sizeof(chunk));
	if (out >= 0)
		close(out);
	close(in);
	return rc;
}

/* Runs argv (a fixed program and our own paths) and waits; 0 on exit 0. */
static int
run(char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int
copy_tree(const char *src, const char *dst)
{
	char *const argv[] = {
	    "cp", "-a", "--reflink=auto", "--", (char *)src, (char *)dst, NULL};

	return run(argv);
}

/* Removes a tree this module made (a *.restore-tmp or *.tmp name). */
static void
remove_tree(const char *path)
{
	char *const argv[] = {"rm", "-rf", "--", (char *)path, NULL};

	if (access(path, F_OK) == 0)
		run(argv);
}

/* --- backup -------------------------------------------------------------- */

static int
add_file(struct backup_manifest *m, const char *dir, const char *name)
{
	struct backup_file *f = &m->files[m->nfiles];
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(f->name, sizeof(f->name), "%s", name);
	if (vault_sha256_file(path, f->sha256, &f->bytes) < 0)
		return -1;
	m->nfiles++;
	return 0;
}

/* Sandboxes past it are copied running, with a warning. */
#define BACKUP_PAUSE_MAX 1024

struct running {
	const char *instance;
	char ids[BACKUP_PAUSE_MAX][ULID_LEN + 1]; /* their container runs */
	char cids[BACKUP_PAUSE_MAX][72];
	size_t n;
	bool more; /* some did not fit */
};

static void
note_running(const struct docker_container *c, void *arg)
{
	struct running *r = arg;

	if (strcmp(c->instance, r->instance) != 0 ||
	    strcmp(c->state, "running") != 0 || c->sandbox[0] == '\0')
		return;
	if (r->n == BACKUP_PAUSE_MAX) {
		r->more = true;
		return;
	}
	snprintf(r->ids[r->n], sizeof(r->ids[0]), "%s", c->sandbox);
	snprintf(r->cids[r->n], sizeof(r->cids[0]), "%s", c->id);
	r->n++;
}

static const char *
container_of(const struct running *r, const char *sid)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->ids[i], sid) == 0)
			return r->cids[i];
	return NULL;
}

/* Each workspace of src into dst (made here), its sandbox paused. */
static int
copy_workspaces(const struct backup_opts *o, const char *instance,
                const char *dst, struct backup_manifest *m, FILE *out)
{
	char src[PATH_MAX + 16], from[PATH_MAX + 64], msg[DOCKER_MSG_LEN];
	struct running *r = calloc(1, sizeof(*r));
	struct dirent *de;
	DIR *d;
	int rc = -1;

	if (r == NULL)
		return -1;
	r->instance = instance;
	if (o->docker &&
	    docker_containers_all(o->docker, note_running, r, msg) != DOCKER_OK)
		fprintf(out,
		        "warning: %s; running sandboxes are copied "
		        "without a pause\n",
		        msg);
	if (r->more)
		fprintf(
		    out,
		    "warning: more than %d sandboxes run; those past it are "
		    "copied without a pause\n",
		    BACKUP_PAUSE_MAX);
	snprintf(src, sizeof(src), "%s/workspaces", o->cfg->data_dir);
	if (mkdir(dst, 0711) < 0 || (d = opendir(src)) == NULL)
		goto out;
	rc = 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		const char *cid;
		bool paused = false, partial;
		int64_t bytes;

		if (de->d_name[0] == '.')
			continue;
		snprintf(from, sizeof(from), "%s/%s", src, de->d_name);
		cid = container_of(r, de->d_name);
		if (cid && docker_pause(o->docker, cid, true, msg) == DOCKER_OK)
			paused = true;
		else if (cid)
			fprintf(out, "warning: %s: %s; copied running\n",
			        de->d_name, msg);
		rc = copy_tree(from, dst);
		if (paused &&
		    docker_pause(o->docker, cid, false, msg) != DOCKER_OK)
			fprintf(out, "warning: %s did not resume: %s\n",
			        de->d_name, msg);
		bytes = ws_usage_walk(from, &partial);
		m->workspaces_count++;
		m->workspaces_bytes += bytes > 0 ? bytes : 0;
	}
	closedir(d);
out:
	free(r);
	return rc;
}

/*
 * The trash (<data>/trash/kept, trash/trash.h): with the workspaces, its
 * kept workspaces are copied to trash-kept/ (nothing runs in them, so
 * nothing is paused), and restore puts them back, so a deleted app can
 * still be restored after a restore of the backup.  Without the
 * workspaces neither is copied, and the output says so.  Their rows are
 * in the database copy either way.
 */
static int
copy_trash(const struct backup_opts *o, FILE *out)
{
	char src[PATH_MAX + 32], dst[PATH_MAX + 32];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(src, sizeof(src), "%s/trash/" WORKSPACE_KEPT_DIR,
	         o->cfg->data_dir);
	if ((d = opendir(src)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	if (n == 0)
		return 0;
	if (!o->workspaces) {
		fprintf(out,
		        "trash: not copied (no --workspaces): %d deleted "
		        "app%s in the trash would come back without files\n",
		        n, n == 1 ? "" : "s");
		return 0;
	}
	snprintf(dst, sizeof(dst), "%s/" BACKUP_TRASH_DIR, o->dir);
	if (copy_tree(src, dst) < 0)
		return -1;
	fprintf(out, "trash: %d deleted app%s copied\n", n, n == 1 ? "" : "s");
	return 0;
}

static int
write_manifest(const char *dir, const struct backup_manifest *m)
{
	char tmp[PATH_MAX + 64], path[PATH_MAX + 64];
	struct buf b;
	int fd, rc = -1;

	buf_init(&b, BACKUP_MANIFEST_BYTES);
	snprintf(tmp, sizeof(tmp), "%s/manifest.json.tmp", dir);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if (backup_manifest_dump(m, &b) < 0)
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	if (write(fd, b.data, b.len) == (ssize_t)b.len && fsync(fd) == 0)
		rc = 0;
	close(fd);
	if (rc == 0 && (rename(tmp, path) < 0 || fileio_sync_dir(dir) < 0))
		rc = -1;
out:
	buf_release(&b);
	return rc;
}

int
backup_run(const struct backup_opts *o, FILE *out, char *err, size_t errlen)
{
	const struct config *cfg = o->cfg;
	struct backup_manifest m = {.format = BACKUP_FORMAT};
	char src[PATH_MAX + 64], dst[PATH_MAX + 64], tmp[PATH_MAX + 64];
	int64_t t0 = clock_mono_ms();
	struct stat st;

	snprintf(dst, sizeof(dst), "%s/manifest.json", o->dir);
	if (access(dst, F_OK) == 0)
		FAIL("%s already holds a backup: name a new directory", o->dir);
	if (mkdir(o->dir, 0700) < 0 && errno != EEXIST)
		FAIL("cannot make %s: %s", o->dir, strerror(errno));
	chmod(o->dir, 0700); /* it holds the master key */
	snprintf(m.version, sizeof(m.version), "%s", SANDBOXD_VERSION);
	clock_rfc3339(clock_now(), m.created_at);
	snprintf(m.data_dir, sizeof(m.data_dir), "%s", cfg->data_dir);
	m.key_external = cfg->secrets_key != NULL;

	snprintf(src, sizeof(src), "%s/state/sandboxd.db", cfg->data_dir);
	snprintf(tmp, sizeof(tmp), "%s/sandboxd.db.tmp", o->dir);
	snprintf(dst, sizeof(dst), "%s/sandboxd.db", o->dir);
	unlink(tmp);
	if (access(dst, F_OK) == 0)
		FAIL("%s exists: name a new directory", dst);
	if (store_backup(src, tmp, &m.counts, err, errlen) < 0)
		goto fail;
	if (rename(tmp, dst) < 0)
		FAIL("rename %s: %s", tmp, strerror(errno));
	m.schema_version = m.counts.schema_version;
	if (add_file(&m, o->dir, "sandboxd.db") < 0)
		FAIL("cannot read back %s", dst);
	fprintf(out,
	        "database: %lld apps, %lld sandboxes, %lld tasks, %lld "
	        "secrets (schema %d)\n",
	        (long long)m.counts.apps, (long long)m.counts.sandboxes,
	        (long long)m.counts.tasks, (long long)m.counts.secrets,
	        m.schema_version);

	for (size_t i = 1; !m.key_external && i < BACKUP_FILES; i++) {
		snprintf(src, sizeof(src), "%s/%s", cfg->data_dir,
		         known_files[i]);
		snprintf(dst, sizeof(dst), "%s/%s", o->dir, known_files[i]);
		if (lstat(src, &st) < 0 && i > 1)
			continue; /* no rotation under way */
		if (copy_file(src, dst, 0600) < 0 ||
		    add_file(&m, o->dir, known_files[i]) < 0)
			FAIL("cannot copy %s: %s", src, strerror(errno));
	}
	fprintf(out, "secrets key: %s\n",
	        m.key_external ? "SANDBOXD_SECRETS_KEY (external: keep it "
	                         "with the backup yourself)"
	                       : "secret.key copied");

	if (o->workspaces) {
		snprintf(dst, sizeof(dst), "%s/workspaces", o->dir);
		snprintf(tmp, sizeof(tmp), "%s/workspaces.tmp", o->dir);
		remove_tree(tmp);
		if (access(dst, F_OK) == 0)
			FAIL("%s exists: name a new directory", dst);
		if (copy_workspaces(o, m.counts.instance, tmp, &m, out) < 0 ||
		    rename(tmp, dst) < 0)
			FAIL("copying the workspaces into %s failed", tmp);
		m.workspaces = true;
		fprintf(out, "workspaces: %lld copied, %lld bytes\n",
		        (long long)m.workspaces_count,
		        (long long)m.workspaces_bytes);
	}
	if (copy_trash(o, out) < 0)
		FAIL("copying the trash into %s/" BACKUP_TRASH_DIR " failed",
		     o->dir);
	if (write_manifest(o->dir, &m) < 0)
		FAIL("cannot write %s/manifest.json: %s", o->dir,
		     strerror(errno));
	fprintf(out, "backup written to %s in %lld ms\n", o->dir,
	        (long long)(clock_mono_ms() - t0));
	return 0;
fail:
	return -1;
}

/* --- restore ------------------------------------------------------------- */

static int
read_manifest(const char *dir, struct backup_manifest *m, char *err,
              size_t errlen)
{
	char path[PATH_MAX + 64], chunk[4096];
	struct buf b;
	ssize_t n;
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
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
			if (access(from, F_OK) < 0 ||
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

static bool
listed(const struct backup_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].name, name) == 0)
			return true;
	return false;
}

/* Copies dir/name to <dd>/rel.restore-tmp, the step that renames it. */
static int
stage(struct step *s, const char *dir, const char *name, const char *dd,
      const char *rel, bool tree, char *err, size_t errlen)
{
	char src[PATH_MAX + 64];

	s->dir = tree;
	snprintf(src, sizeof(src), "%s/%s", dir, name);
	snprintf(s->final, sizeof(s->final), "%s/%s", dd, rel);
	snprintf(s->staged, sizeof(s->staged), "%s/%s.restore-tmp", dd, rel);
	if (tree) {
		remove_tree(s->staged);
		if (copy_tree(src, s->staged) < 0)
			FAIL("copying %s failed", src);
	} else {
		unlink(s->staged);
		if (copy_file(src, s->staged, 0600) < 0)
			FAIL("cannot copy %s: %s", src, strerror(errno));
	}
	return 0;
fail:
	return -1;
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
	int rc = -1;

	memset(steps, 0, sizeof(steps));
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if (read_manifest(dir, &m, err, errlen) < 0 ||
	    verify(dir, &m, out, err, errlen) < 0 ||
	    check_key(cfg, &m, err, errlen) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s/state/sandboxd.db", dd);
	if (!force && access(src, F_OK) == 0)
		FAIL("%s holds a database: restore onto a fresh data "
		     "directory, or add --force to keep it aside as "
		     "*.pre-restore-%s",
		     dd, stamp);
	/* Staged in the order they are committed: the database last. */
	for (size_t i = 1; i < BACKUP_FILES && !m.key_external; i++)
		if (listed(&m, known_files[i]) &&
		    stage(&steps[n++], dir, known_files[i], dd, known_files[i],
		          false, err, errlen) < 0)
			goto fail;
	if (m.workspaces && stage(&steps[n++], dir, "workspaces", dd,
	                          "workspaces", true, err, errlen) < 0)
		goto fail;
	snprintf(src, sizeof(src), "%s/" BACKUP_TRASH_DIR, dir);
	if (m.workspaces && access(src, F_OK) == 0) {
		snprintf(src, sizeof(src), "%s/trash", dd);
		if (mkdir(src, 0755) < 0 && errno != EEXIST)
			FAIL("cannot make %s: %s", src, strerror(errno));
		if (stage(&steps[n++], dir, BACKUP_TRASH_DIR, dd,
		          "trash/" WORKSPACE_KEPT_DIR, true, err, errlen) < 0)
			goto fail;
	}
	if (stage(&steps[n++], dir, "sandboxd.db", dd, "state/sandboxd.db",
	          false, err, errlen) < 0)
		goto fail;
	if (strcmp(m.data_dir, dd) != 0 &&
	    store_db_forget_instance(steps[n - 1].staged, err, errlen) < 0)
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
	return rc;
}
