/*
 * `sandboxd backup` and `restore` (backup.h).
 *
 * The backup's directory is made here (0700: it holds the master key), or
 * must be an empty directory of ours: never a link, another user's, or
 * one that holds anything, as whatever is there could be a link that a
 * write would follow.  Backup order: the database first (one committed
 * state), then the key, then the workspaces and the releases, then
 * manifest.json.  The workspaces (and the releases, made before their row
 * says "ready") come after the database because they only move forward: every
 * checkpoint and file a row of the copy names was already in its workspace when
 * the copy was taken, so a copy of the workspace made later holds it too. The
 * other order could give rows naming commits the copied workspace never had.  A
 * running sandbox is paused (cgroup freezer) while its workspace is copied, so
 * no file is copied half-written; a task in it waits meanwhile.  The key and
 * the database are taken under the shared secrets lock, so a `secrets rotate`
 * cannot change one between them.
 *
 * Restore writes nothing through a link: the data directory's own
 * directories (state, workspaces, trash, trash/kept) must not be links,
 * and the trees are copied by backup_tree.c, checked against their
 * lists.  It stages everything under *.restore-tmp names in the data
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
 * tree far better) and cp -a for the workspaces (it keeps devices,
 * FIFOs and set-id bits, and lists nothing a restore could check).
 */
#include "ops/backup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/jv.h"
#include "lib/ulid.h"
#include "ops/backup_tree.h"
#include "ws/workspace.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		snprintf(err, errlen, __VA_ARGS__);                            \
		goto fail;                                                     \
	} while (0)

/* The files of a backup, in the order they are copied: the database
 * first, then the key (and a rotation's next key). */
static const char *const known_files[] = {"sandboxd.db", VAULT_KEY_FILE,
                                          VAULT_NEXT_FILE};

int
backup_copy_file(const char *src, const char *dst, mode_t mode)
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

/* Around each workspace's copy: its sandbox paused, then resumed. */
struct pausing {
	struct running *r;
	struct docker *docker;
	FILE *out;
	const char *cid; /* paused now */
};

static void
pause_before(const char *name, void *arg)
{
	struct pausing *p = arg;
	const char *cid = container_of(p->r, name);
	char msg[DOCKER_MSG_LEN];

	p->cid = NULL;
	if (cid && docker_pause(p->docker, cid, true, msg) == DOCKER_OK)
		p->cid = cid;
	else if (cid)
		fprintf(p->out, "warning: %s: %s; copied running\n", name, msg);
}

static void
pause_after(const char *name, void *arg)
{
	struct pausing *p = arg;
	char msg[DOCKER_MSG_LEN];

	if (p->cid && docker_pause(p->docker, p->cid, false, msg) != DOCKER_OK)
		fprintf(p->out, "warning: %s did not resume: %s\n", name, msg);
	p->cid = NULL;
}

/* What a tree's copy left out, if anything. */
static void
say_left_out(FILE *out, const char *tree, const struct backup_tree_count *n)
{
	if (n->skipped)
		fprintf(out,
		        "%s: %lld sockets, FIFOs or devices left out (not "
		        "files; a sandbox makes its own again)\n",
		        tree, (long long)n->skipped);
	if (n->setid)
		fprintf(out,
		        "%s: set-id or sticky bits of %lld entries dropped\n",
		        tree, (long long)n->setid);
	if (n->too_deep)
		fprintf(out,
		        "warning: %s: %lld entries deeper than %d or with a "
		        "path over %d bytes left out\n",
		        tree, (long long)n->too_deep, BACKUP_TREE_DEPTH,
		        BACKUP_PATH_MAX);
	if (n->too_big)
		fprintf(out,
		        "warning: %s: %lld files larger than "
		        "SANDBOXD_WORKSPACE_MAX_MB left out\n",
		        tree, (long long)n->too_big);
}

/* src (a directory of the data directory) to the tree name of the backup. */
static int
copy_tree(const struct backup_opts *o, int bkfd, const char *src,
          const char *name, const char *list, struct backup_tree_hooks *h,
          struct backup_tree_count *n, char *err, size_t errlen)
{
	int64_t max = o->cfg->workspace_max_mb * 1024 * 1024;
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", src, strerror(errno));
		return -1;
	}
	rc = backup_tree_write(fd, bkfd, name, list, max, h, n, err, errlen);
	close(fd);
	return rc;
}

/* Each workspace into workspaces/ of the backup, its sandbox paused. */
static int
copy_workspaces(const struct backup_opts *o, int bkfd, const char *instance,
                struct backup_manifest *m, FILE *out, char *err, size_t errlen)
{
	char src[PATH_MAX + 16], msg[DOCKER_MSG_LEN];
	struct running *r = calloc(1, sizeof(*r));
	struct pausing p = {.r = r, .docker = o->docker, .out = out};
	struct backup_tree_hooks h = {pause_before, pause_after, &p};
	struct backup_tree_count n = {0};
	int rc;

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
	rc = copy_tree(o, bkfd, src, "workspaces", BACKUP_WS_LIST, &h, &n, err,
	               errlen);
	free(r);
	m->workspaces_count = n.top;
	m->workspaces_bytes = n.bytes;
	if (rc == 0)
		say_left_out(out, "workspaces", &n);
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
copy_trash(const struct backup_opts *o, int bkfd, struct backup_manifest *m,
           FILE *out, char *err, size_t errlen)
{
	char src[PATH_MAX + 32];
	struct backup_tree_count n = {0};
	struct dirent *de;
	int k = 0;
	DIR *d;

	snprintf(src, sizeof(src), "%s/trash/" WORKSPACE_KEPT_DIR,
	         o->cfg->data_dir);
	if ((d = opendir(src)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		k += de->d_name[0] != '.';
	closedir(d);
	if (k == 0)
		return 0;
	if (!o->workspaces) {
		fprintf(out,
		        "trash: not copied (no --workspaces): %d deleted "
		        "app%s in the trash would come back without files\n",
		        k, k == 1 ? "" : "s");
		return 0;
	}
	if (copy_tree(o, bkfd, src, BACKUP_TRASH_DIR, BACKUP_TRASH_LIST, NULL,
	              &n, err, errlen) < 0 ||
	    add_file(m, o->dir, BACKUP_TRASH_LIST) < 0)
		return -1;
	m->trash = true;
	say_left_out(out, "trash", &n);
	fprintf(out, "trash: %lld deleted app%s copied\n", (long long)n.top,
	        n.top == 1 ? "" : "s");
	return 0;
}

/*
 * The published apps' releases (<data>/releases, publish/publish.h):
 * always copied, with or without the workspaces, as they are what the
 * published apps serve and a release is never rebuilt from its row.
 * Their files do not change once built, so nothing is paused; a release
 * still building is copied as it is, and the start after a restore
 * fails it (its row says "building") and removes its directory.
 */
static int
copy_releases(const struct backup_opts *o, int bkfd, struct backup_manifest *m,
              FILE *out, char *err, size_t errlen)
{
	char src[PATH_MAX + 32];
	struct backup_tree_count n = {0};
	struct dirent *de;
	int k = 0;
	DIR *d;

	snprintf(src, sizeof(src), "%s/" BACKUP_REL_DIR, o->cfg->data_dir);
	if ((d = opendir(src)) == NULL && errno == ENOENT)
		return 0; /* nothing was ever published */
	while (d && (de = readdir(d)) != NULL)
		k += de->d_name[0] != '.';
	if (d)
		closedir(d);
	if (k == 0 && d)
		return 0; /* none kept */
	if (copy_tree(o, bkfd, src, BACKUP_REL_DIR, BACKUP_REL_LIST, NULL, &n,
	              err, errlen) < 0 ||
	    add_file(m, o->dir, BACKUP_REL_LIST) < 0)
		return -1;
	m->releases = true;
	m->releases_apps = n.top;
	m->releases_bytes = n.bytes;
	say_left_out(out, "releases", &n);
	fprintf(out, "releases: of %lld app%s, %lld bytes\n", (long long)n.top,
	        n.top == 1 ? "" : "s", (long long)n.bytes);
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

/* Whether the directory fd holds no entry; -1 when unreadable. */
static int
dir_empty(int fd)
{
	int dup_fd = dup(fd), empty = 1;
	struct dirent *de;
	DIR *d;

	if (dup_fd < 0 || (d = fdopendir(dup_fd)) == NULL) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -1;
	}
	while (empty && (de = readdir(d)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
		        strcmp(de->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/*
 * The backup's directory: made here, or an empty directory of ours (not
 * a link, nobody else's), 0700 either way.  Its descriptor, or -1.
 */
static int
open_target(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd = -1;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		FAIL("cannot make %s: %s", dir, strerror(errno));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
		FAIL("%s is a symbolic link: name a new directory (a backup "
		     "is never written through a link)",
		     dir);
	if (fd < 0)
		FAIL("%s: %s: name a new directory", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid())
		FAIL("%s belongs to uid %d, not to this user (uid %d): name a "
		     "new directory",
		     dir, (int)st.st_uid, (int)geteuid());
	if (faccessat(fd, "manifest.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		FAIL("%s already holds a backup: name a new directory", dir);
	if (dir_empty(fd) != 1)
		FAIL("%s is not empty: name a new directory, or an empty one",
		     dir);
	if (fchmod(fd, 0700) < 0) /* it holds the master key */
		FAIL("chmod %s: %s", dir, strerror(errno));
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The database and the keys into the backup. */
static int
copy_files(const struct backup_opts *o, struct backup_manifest *m, FILE *out,
           char *err, size_t errlen)
{
	const struct config *cfg = o->cfg;
	char src[PATH_MAX + 64], dst[PATH_MAX + 64], tmp[PATH_MAX + 64];
	struct stat st;

	snprintf(src, sizeof(src), "%s/state/sandboxd.db", cfg->data_dir);
	snprintf(tmp, sizeof(tmp), "%s/sandboxd.db.tmp", o->dir);
	snprintf(dst, sizeof(dst), "%s/sandboxd.db", o->dir);
	if (store_backup(src, tmp, &m->counts, err, errlen) < 0)
		goto fail;
	if (rename(tmp, dst) < 0)
		FAIL("rename %s: %s", tmp, strerror(errno));
	m->schema_version = m->counts.schema_version;
	if (add_file(m, o->dir, "sandboxd.db") < 0)
		FAIL("cannot read back %s", dst);
	fprintf(out,
	        "database: %lld apps, %lld sandboxes, %lld tasks, %lld "
	        "secrets (schema %d)\n",
	        (long long)m->counts.apps, (long long)m->counts.sandboxes,
	        (long long)m->counts.tasks, (long long)m->counts.secrets,
	        m->schema_version);
	for (size_t i = 1; !m->key_external && i < BACKUP_KEY_FILES; i++) {
		snprintf(src, sizeof(src), "%s/%s", cfg->data_dir,
		         known_files[i]);
		snprintf(dst, sizeof(dst), "%s/%s", o->dir, known_files[i]);
		if (lstat(src, &st) < 0 && i > 1)
			continue; /* no rotation under way */
		if (backup_copy_file(src, dst, 0600) < 0 ||
		    add_file(m, o->dir, known_files[i]) < 0)
			FAIL("cannot copy %s: %s", src, strerror(errno));
	}
	fprintf(out, "secrets key: %s\n",
	        m->key_external ? "SANDBOXD_SECRETS_KEY (external: keep it "
	                          "with the backup yourself)"
	                        : "secret.key copied");
	return 0;
fail:
	return -1;
}

int
backup_run(const struct backup_opts *o, FILE *out, char *err, size_t errlen)
{
	const struct config *cfg = o->cfg;
	struct backup_manifest m = {.format = BACKUP_FORMAT};
	int64_t t0 = clock_mono_ms();
	int bkfd, rc = -1;

	err[0] = '\0';
	if ((bkfd = open_target(o->dir, err, errlen)) < 0)
		return -1;
	snprintf(m.version, sizeof(m.version), "%s", SANDBOXD_VERSION);
	clock_rfc3339(clock_now(), m.created_at);
	snprintf(m.data_dir, sizeof(m.data_dir), "%s", cfg->data_dir);
	m.key_external = cfg->secrets_key != NULL;
	if (copy_files(o, &m, out, err, errlen) < 0)
		goto fail;
	if (o->workspaces) {
		if (copy_workspaces(o, bkfd, m.counts.instance, &m, out, err,
		                    errlen) < 0 ||
		    add_file(&m, o->dir, BACKUP_WS_LIST) < 0)
			goto fail;
		m.workspaces = true;
		fprintf(out, "workspaces: %lld copied, %lld bytes\n",
		        (long long)m.workspaces_count,
		        (long long)m.workspaces_bytes);
	}
	if (copy_trash(o, bkfd, &m, out, err, errlen) < 0 ||
	    copy_releases(o, bkfd, &m, out, err, errlen) < 0)
		goto fail;
	if (write_manifest(o->dir, &m) < 0)
		FAIL("cannot write %s/manifest.json: %s", o->dir,
		     strerror(errno));
	fprintf(out, "backup written to %s in %lld ms\n", o->dir,
	        (long long)(clock_mono_ms() - t0));
	rc = 0;
fail:
	if (rc < 0 && err[0] == '\0')
		snprintf(err, errlen, "writing %s failed", o->dir);
	close(bkfd);
	return rc;
}
