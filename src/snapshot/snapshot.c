/*
 * Snapshots: take, delete, recovery (snapshot.h).  Restore is
 * restore.c's, fork fork.c's.
 *
 * A take is journaled by its row and its directory's name:
 *   1. the row, "taking" (the per-app cap checked in its transaction);
 *   2. under the sandbox's lock, a running container paused (docker
 *      pause, the cgroup freezer: its processes stop where they are, so
 *      no file is half-written by them during the copy), the app's tree
 *      copied into <data>/snapshots/<id>.tmp/app, the container resumed
 *      at once: the pause covers the copy and nothing else;
 *   3. the copy synced (syncfs), renamed to <data>/snapshots/<id>;
 *   4. the row "ready" with its figures.
 * A crash before 4 leaves a .tmp directory or a "taking" row, both
 * removed at the next start (snapshot_recover); a failure (a full disk)
 * removes them at once.  The app's own files are only read.
 *
 * Rejected: a container checkpoint (CRIU) for the processes too (big,
 * fragile across images, and a restored process would hold stale
 * sockets); copying with the sandbox running unpaused (a file written
 * during the copy would be torn); tar archives (a restore would have to
 * unpack, and a hard link to the dependency store could not be kept).
 */
#include "snapshot/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "orch/orch.h"
#include "snapshot/internal.h"
#include "timeline/timeline.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"
#include "wsnode/wsnode.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"

void
snap_path(const struct core *c, const char *id, const char *suffix, char *out,
          size_t len)
{
	snprintf(out, len, "%s/%s/%s%s", c->cfg->data_dir, SNAPSHOT_DIR, id,
	         suffix);
}

void
snap_app_dir(const struct core *c, const char *sandbox_id, const char *leaf,
             char *out, size_t len)
{
	char ws[PATH_MAX];

	workspace_path(c->cfg->data_dir, sandbox_id, ws, sizeof(ws));
	snprintf(out, len, "%s/workspace/%s", ws, leaf);
}

void
snap_store_set(struct core *c, struct ws_inoset *set)
{
	char store[PATH_MAX];

	snprintf(store, sizeof(store), "%s/store", c->cfg->data_dir);
	ws_inoset_load(store, set);
}

int
snap_copy(struct core *c, const char *src, const char *dst,
          struct copytree_stats *st)
{
	struct ws_inoset set = {0};
	int rc;

	snap_store_set(c, &set);
	rc = copytree(src, dst, &set, st);
	ws_inoset_release(&set);
	return rc;
}

void
snap_note(struct core *c, const char *app_id, const char *type,
          const char *snapshot_id, const char *sandbox_id, struct jv *payload,
          const char *fmt, ...)
{
	char pl[STORE_EVENT_PAYLOAD_MAX + 1];
	struct tl_event ev = {
	    .app_id = app_id,
	    .type = type,
	    .snapshot_id = snapshot_id,
	    .sandbox_id = sandbox_id && *sandbox_id ? sandbox_id : NULL,
	    .payload_json = tl_payload(payload, pl, sizeof(pl)),
	};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ev.message, sizeof(ev.message), fmt, ap);
	va_end(ap);
	timeline_record(c->tl, &ev);
}

/* snapshot.taken with the snapshot's figures. */
static void
note_taken(struct core *c, const struct snapshot *sn)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "name", sn->name);
	jv_set_str(o, "reason", sn->reason);
	jv_set_str(o, "method", sn->method);
	jv_set_int(o, "files", sn->files);
	jv_set_int(o, "own_bytes", sn->own_bytes);
	jv_set_int(o, "pause_ms", sn->pause_ms);
	snap_note(c, sn->app_id, "snapshot.taken", sn->id,
	          sn->source_sandbox_id, o,
	          "Snapshot \"%.80s\" was taken (%lld files, paused %lld ms).",
	          sn->name, (long long)sn->files, (long long)sn->pause_ms);
}

int
snap_sync(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = syncfs(fd);
	close(fd);
	return rc;
}

static int
last_task(const struct task *t, void *arg)
{
	snprintf(arg, ULID_LEN + 1, "%s", t->id);
	return 1;
}

/* The row of a new snapshot, inserted "taking" (step 1). */
static int
begin(struct core *c, const struct app *app, const struct sandbox *sb,
      const char *name, const char *reason, const char *actor,
      struct snapshot *sn, struct err *e)
{
	char when[CLOCK_RFC3339_LEN];
	int rc;

	memset(sn, 0, sizeof(*sn));
	ulid_new(sn->id);
	sn->created_at = clock_now();
	clock_rfc3339(sn->created_at, when);
	snprintf(sn->name, sizeof(sn->name), "%s", name && *name ? name : when);
	snprintf(sn->owner, sizeof(sn->owner), "%s", app->owner);
	snprintf(sn->app_id, sizeof(sn->app_id), "%s", app->id);
	snprintf(sn->source_app_id, sizeof(sn->source_app_id), "%s", app->id);
	snprintf(sn->source_sandbox_id, sizeof(sn->source_sandbox_id), "%s",
	         sb->id);
	snprintf(sn->reason, sizeof(sn->reason), "%s", reason);
	snprintf(sn->status, sizeof(sn->status), "taking");
	snprintf(sn->method, sizeof(sn->method), "copy");
	snprintf(sn->base_image, sizeof(sn->base_image), "%s", sb->image);
	snprintf(sn->created_by, sizeof(sn->created_by), "%s",
	         actor && *actor ? actor : "system");
	snap_path(c, sn->id, "", sn->path, sizeof(sn->path));
	store_task_list(c->store, sb->id, 1, last_task, sn->task_id);
	rc = store_snapshot_insert(c->store, sn, c->cfg->snapshots_max);
	if (rc == STORE_TOO_MANY)
		return err_set(e, 409, "snapshot_limit",
		               "the app has %lld snapshots, as many as "
		               "SANDBOXD_SNAPSHOTS_MAX_PER_APP allows; delete "
		               "one (DELETE /v1/snapshots/{id}) first",
		               (long long)c->cfg->snapshots_max);
	if (rc != 0 && core_data_full(c, NULL))
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full; no snapshot was "
		               "taken");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	return 0;
}

/* Pauses a running, awake container: 1 paused, 0 not needed, -1. */
static int
pause_for_copy(struct core *c, const char *sandbox_id, struct err *e)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct sandbox sb;
	int rc;

	if (store_sandbox_get(c->store, sandbox_id, &sb) != 0 ||
	    sb.status != SANDBOX_RUNNING || sb.frozen)
		return 0;
	core_container_name(c, sandbox_id, name, sizeof(name));
	rc = orch_pause(c->orch, name, true, msg);
	if (rc == DOCKER_NOT_FOUND)
		return 0; /* gone meanwhile: nothing runs to pause */
	if (rc == DOCKER_DOWN)
		return ERR_DOCKER(e, "%s", msg);
	if (rc != DOCKER_OK) {
		/* Not running after all (the row a moment behind an exit):
		 * nothing writes, so the copy needs no pause. */
		log_warn("sandbox %s: not paused for a snapshot: %s",
		         sandbox_id, msg);
		return 0;
	}
	return 1;
}

/* Step 2, under the sandbox's lock. */
static int
copy_locked(struct core *c, struct snapshot *sn, struct err *e)
{
	char src[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX + 8];
	char name[128], msg[DOCKER_MSG_LEN];
	struct ws_inoset set = {0};
	struct copytree_stats st;
	struct sandbox sb;
	int64_t t0;
	int paused, rc, err;
	bool remote;

	snap_app_dir(c, sn->source_sandbox_id, "app", src, sizeof(src));
	snap_path(c, sn->id, ".tmp", tmp, sizeof(tmp));
	snprintf(dst, sizeof(dst), "%s/app", tmp);
	remote = store_sandbox_get(c->store, sn->source_sandbox_id, &sb) == 0 &&
	         wsnode_remote(&sb);
	if (!remote && access(src, F_OK) < 0)
		return ERR_CONFLICT(e, "the app has no files yet");
	if (mkdir(tmp, 0700) < 0)
		return snap_copy_err(errno, "no snapshot was taken", e);
	/* The store's inodes before the pause: reading them is not the
	 * copy. */
	snap_store_set(c, &set);
	core_sandbox_lock(c, sn->source_sandbox_id);
	paused = pause_for_copy(c, sn->source_sandbox_id, e);
	if (paused < 0) {
		core_sandbox_unlock(c, sn->source_sandbox_id);
		ws_inoset_release(&set);
		return -1;
	}
	t0 = clock_mono_ms();
	/* on another node: its tar stream, e filled on failure */
	rc = remote ? snap_fetch(c, &sb, tmp, dst, &st, e)
	            : copytree(src, dst, &set, &st);
	err = errno;
	if (paused) {
		core_container_name(c, sn->source_sandbox_id, name,
		                    sizeof(name));
		if (orch_pause(c->orch, name, false, msg) != DOCKER_OK)
			log_error("sandbox %s: cannot resume it after a "
			          "snapshot: %s",
			          sn->source_sandbox_id, msg);
		sn->pause_ms = clock_mono_ms() - t0;
	}
	core_sandbox_unlock(c, sn->source_sandbox_id);
	ws_inoset_release(&set);
	if (rc < 0)
		return remote ? -1
		              : snap_copy_err(err, "no snapshot was taken", e);
	sn->files = st.files;
	sn->size_bytes = st.size_bytes;
	sn->own_bytes = st.own_bytes;
	snprintf(sn->method, sizeof(sn->method), "%s",
	         st.reflinked ? "reflink" : "copy");
	return 0;
}

/* Step 3: the copy on disk for good, under its final name. */
static int
seal(struct core *c, const struct snapshot *sn, struct err *e)
{
	char tmp[PATH_MAX], dir[PATH_MAX];

	snap_path(c, sn->id, ".tmp", tmp, sizeof(tmp));
	snprintf(dir, sizeof(dir), "%s/%s", c->cfg->data_dir, SNAPSHOT_DIR);
	if (snap_sync(tmp) < 0 || rename(tmp, sn->path) < 0 ||
	    fileio_sync_dir(dir) < 0)
		return snap_copy_err(errno, "no snapshot was taken", e);
	return 0;
}

int
snapshot_take(struct core *c, const struct app *app, const char *name,
              const char *reason, const char *actor, struct snapshot *out,
              struct err *e)
{
	char tmp[PATH_MAX];
	struct sandbox sb;
	int rc = store_sandbox_by_app(c->store, app->id, &sb);

	if (rc == STORE_NOT_FOUND)
		return ERR_CONFLICT(e, "the app has no sandbox, so no files "
		                       "to snapshot");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (sb.status == SANDBOX_CREATING)
		return ERR_CONFLICT(e, "the sandbox is being created; try "
		                       "again when it runs");
	if (core_data_full(c, NULL))
		return err_set(e, 507, "insufficient_storage",
		               "the data filesystem is full; no snapshot was "
		               "taken");
	if (begin(c, app, &sb, name, reason, actor, out, e) < 0)
		return -1;
	if (copy_locked(c, out, e) < 0 || seal(c, out, e) < 0)
		goto fail;
	snap_head(out->path, out->head, sizeof(out->head));
	snprintf(out->status, sizeof(out->status), "ready");
	if (store_snapshot_finish(c->store, out) != 0) {
		ERR_INTERNAL(e, "database error");
		copytree_remove(out->path);
		goto fail;
	}
	note_taken(c, out);
	log_info("app %s: snapshot %s taken (%s, %lld files, %lld bytes own, "
	         "paused %lld ms)",
	         app->id, out->id, out->method, (long long)out->files,
	         (long long)out->own_bytes, (long long)out->pause_ms);
	return 0;
fail:
	snap_path(c, out->id, ".tmp", tmp, sizeof(tmp));
	copytree_remove(tmp);
	store_snapshot_delete(c->store, out->id);
	return -1;
}

int
snapshot_delete(struct core *c, const char *owner, const char *id,
                struct err *e)
{
	struct snapshot sn;
	int rc = store_snapshot_get(c->store, owner, id, &sn);

	if (rc == STORE_NOT_FOUND)
		return ERR_NOTFOUND(e, "no such snapshot");
	if (rc != 0)
		return ERR_INTERNAL(e, "database error");
	if (strcmp(sn.status, "taking") == 0 || sn.step[0])
		return err_set(e, 409, "snapshot_busy",
		               "the snapshot is being %s; try again",
		               sn.step[0] ? "restored" : "taken");
	if (copytree_remove(sn.path) < 0)
		return ERR_INTERNAL(e, "cannot remove the snapshot's files");
	if (store_snapshot_delete(c->store, id) < 0)
		return ERR_INTERNAL(e, "database error");
	snap_note(c, sn.app_id, "snapshot.deleted", sn.id, NULL, NULL,
	          "Snapshot \"%.80s\" was deleted.", sn.name);
	log_info("snapshot %s of app %s: deleted", sn.id, sn.app_id);
	return 0;
}

/* A take killed during its copy left the container paused: a sandbox
 * that is not frozen by its row is resumed (a no-op when it runs). */
static void
resume_source(struct core *c, const char *sandbox_id)
{
	char name[128], msg[DOCKER_MSG_LEN];
	struct sandbox sb;

	if (store_sandbox_get(c->store, sandbox_id, &sb) != 0 || sb.frozen)
		return;
	core_container_name(c, sandbox_id, name, sizeof(name));
	orch_pause(c->orch, name, false, msg);
}

static int
recover_one(const struct snapshot *sn, void *arg)
{
	struct core *c = arg;
	char path[PATH_MAX];

	if (sn->step[0]) {
		/* A restore stopped between its steps: workspace/app is
		 * whole (old or new: one rename swapped them), app.new is the
		 * other copy or half of one.  A sandbox on another node has
		 * neither here: its node's next restore removes app.new. */
		snap_app_dir(c, sn->step, "app.new", path, sizeof(path));
		log_warn("snapshot %s: a restore of sandbox %s was "
		         "interrupted; removing %s",
		         sn->id, sn->step, path);
		copytree_remove(path);
		store_snapshot_set_step(c->store, sn->id, "");
	}
	if (strcmp(sn->status, "ready") == 0 && access(sn->path, F_OK) < 0 &&
	    errno == ENOENT) {
		/* A backup restored without <data>/snapshots. */
		log_warn("snapshot %s: its files are gone (%s); forgetting it",
		         sn->id, sn->path);
		store_snapshot_delete(c->store, sn->id);
	} else if (strcmp(sn->status, "ready") != 0) {
		log_warn("snapshot %s: interrupted while %s; removing it",
		         sn->id, sn->status);
		resume_source(c, sn->source_sandbox_id);
		snap_path(c, sn->id, ".tmp", path, sizeof(path));
		copytree_remove(path);
		copytree_remove(sn->path);
		store_snapshot_delete(c->store, sn->id);
	}
	return 0;
}

/* Directories of <data>/snapshots no row names (a crash between the
 * rename of a .tmp and nothing else, or before its row). */
static void
remove_strays(struct core *c, const char *dir)
{
	struct dirent *de;
	struct snapshot sn;
	char path[PATH_MAX], id[ULID_LEN + 1];
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(id, sizeof(id), "%.*s", ULID_LEN, de->d_name);
		if (strlen(de->d_name) == ULID_LEN &&
		    store_snapshot_get(c->store, NULL, id, &sn) !=
		        STORE_NOT_FOUND)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		log_warn("snapshots: removing %s, left by a crash", path);
		copytree_remove(path);
	}
	closedir(d);
}

int
snap_fork_mark(struct core *c, const char *app_id, bool on)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int fd;

	snprintf(dir, sizeof(dir), "%s/%s/%s", c->cfg->data_dir, SNAPSHOT_DIR,
	         SNAP_FORKING);
	snprintf(path, sizeof(path), "%s/%s", dir, app_id);
	if (!on)
		return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	return fileio_sync_dir(dir);
}

/* The apps of forks a crash interrupted: deleted (a fork makes a whole
 * app or none). */
static void
recover_forks(struct core *c)
{
	char dir[PATH_MAX], id[ULID_LEN + 1];
	struct dirent *de;
	struct err e = {0};
	struct app a;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s/%s", c->cfg->data_dir, SNAPSHOT_DIR,
	         SNAP_FORKING);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!ulid_parse(de->d_name, id))
			continue;
		if (store_app_get(c->store, NULL, id, &a) == 0) {
			log_warn(
			    "app %s: its fork was interrupted; deleting it",
			    id);
			if (core_app_delete(c, &a, &e) < 0) {
				log_error("app %s: %s; the next start tries "
				          "again",
				          id, e.msg);
				continue;
			}
		}
		snap_fork_mark(c, id, false);
	}
	closedir(d);
}

void
snapshot_recover(struct core *c)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/%s", c->cfg->data_dir, SNAPSHOT_DIR);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		log_error("snapshots: cannot make %s: %s", dir,
		          strerror(errno));
	if (store_snapshot_list(c->store, NULL, NULL, recover_one, c) < 0)
		log_error("snapshots: cannot read the snapshots");
	remove_strays(c, dir);
	recover_forks(c);
}

static int
gone_one(const struct snapshot *sn, void *arg)
{
	struct err e = {0};

	if (snapshot_delete(arg, NULL, sn->id, &e) < 0)
		log_warn("snapshot %s: %s", sn->id, e.msg);
	return 0;
}

void
snapshot_app_gone(struct core *c, const char *app_id)
{
	store_snapshot_list(c->store, NULL, app_id, gone_one, c);
}

/*
 * At most max bytes of rel beneath the app directory dfd, NUL-ended,
 * trailing whitespace cut.  The repository is the app's (hostile): no
 * link is followed, nothing outside dfd is read (wsfs_openat).
 */
static int
read_small(int dfd, const char *rel, char *out, size_t max)
{
	ssize_t n;
	int fd = wsfs_openat(dfd, rel, O_RDONLY | O_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	n = read(fd, out, max - 1);
	close(fd);
	if (n < 0)
		return -1;
	while (n > 0 &&
	       (out[n - 1] == '\n' || out[n - 1] == ' ' || out[n - 1] == '\r'))
		n--;
	out[n] = '\0';
	return 0;
}

static bool
is_hex_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return (n == 40 || n == 64) && s[n] == '\0';
}

/* The sha of ref in packed-refs (a line "<sha> <ref>"). */
static void
packed_ref(int dfd, const char *ref, char *out, size_t len)
{
	char buf[65536], *line, *save = NULL;

	if (read_small(dfd, ".git/packed-refs", buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		if (sp && strcmp(sp + 1, ref) == 0) {
			*sp = '\0';
			if (is_hex_id(line))
				snprintf(out, len, "%s", line);
			return;
		}
	}
}

static void
head_of(int dfd, char *out, size_t len)
{
	char head[512], rel[600], sha[128];
	const char *ref;

	if (read_small(dfd, ".git/HEAD", head, sizeof(head)) < 0)
		return;
	if (is_hex_id(head)) {
		snprintf(out, len, "%s", head);
		return;
	}
	if (strncmp(head, "ref: refs/", 10) != 0 || strstr(head, ".."))
		return;
	ref = head + 5;
	snprintf(rel, sizeof(rel), ".git/%s", ref);
	if (read_small(dfd, rel, sha, sizeof(sha)) == 0 && is_hex_id(sha))
		snprintf(out, len, "%s", sha);
	else
		packed_ref(dfd, ref, out, len);
}

void
snap_head(const char *dir, char *out, size_t len)
{
	char app[PATH_MAX];
	int dfd;

	out[0] = '\0';
	snprintf(app, sizeof(app), "%s/app", dir);
	dfd = open(app, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	head_of(dfd, out, len);
	close(dfd);
}
