/*
 * The agent's stream ops that move bytes in bulk: a workspace out
 * (tar_out) or in (tar_in), and an image in (image_load).  Each hands
 * the nodelink server one end of a socketpair and works on the other
 * end in a worker thread (agent_stream_start: agent_spawn, capped).
 *
 * tar_in writes into <data>/workspaces/<id>.incoming (a stale one goes
 * to the trash first), through export/tar's hostile-archive reader,
 * stopped at bytes_max; then syncs the filesystem and renames it into
 * place (a workspace already there goes to the trash: it is the stale
 * copy of a sandbox that moved away and back).  The trailer line says
 * how it went, after the client's half-close.
 *
 * app_in and app_swap are a restore's two halves on this node.  app_in
 * reads the snapshot's app tree, sent by the control plane, into
 * workspace/app.new (by the same reader, stopped at bytes_max) and syncs
 * it; app_swap, called once the control plane knows it wrote the whole
 * tree, exchanges app.new with workspace/app in one rename (renameat2
 * RENAME_EXCHANGE).  So the app is on its old files or its new ones,
 * never a mix: an archive that merely stops (the control plane gone
 * between two entries reads as a shorter tree) is never put in place.
 * The other tree (the old files, or a refused copy) goes to the trash
 * and is removed there at once; so does a stale app.new a crash left
 * (app_in removes it first).  Every step is relative to the workspace/
 * directory opened beneath the workspace (wsfs): a link the sandbox
 * planted is never followed.
 *
 * Rejected: one stream doing both (the reader cannot tell a whole tree
 * from one cut at an entry's end, so the commit must come afterwards).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker/swarm.h"
#include "export/tar.h"
#include "disk/copytree.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "nodeagent/internal.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

struct job {
	struct agent *a;
	int fd;
	char id[80];
	int64_t max;
	bool exclude_deps;
};

void
agent_trailer(int fd, const struct err *e, int64_t bytes)
{
	struct jv *o = jv_obj();
	struct buf b;
	char drop[4096];
	int64_t end = clock_mono_ms() + AGENT_DRAIN_MS;

	jv_set_bool(o, "ok", e->status == 0);
	jv_set_int(o, "bytes", bytes);
	if (e->status) {
		jv_set_int(o, "status", e->status);
		jv_set_str(o, "code", e->code);
		jv_set_str(o, "message", e->msg);
	}
	buf_init(&b, 8192);
	if (jv_dump(o, &b) == 0 && buf_append(&b, "\n", 1) == 0)
		(void)fileio_send_all(fd, b.data, b.len);
	buf_release(&b);
	jv_free(o);
	shutdown(fd, SHUT_WR);
	/* A refused stream's sender may still be writing: read it to its
	 * half-close, so it gets to read the trailer. */
	for (int64_t now; (now = clock_mono_ms()) < end;) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, (int)(end - now)) != 1 ||
		    read(fd, drop, sizeof(drop)) <= 0)
			break;
	}
}

static int
job_start(struct agent *a, const struct jv *req, void *(*fn)(void *), int *fd,
          struct err *e)
{
	struct job *j = calloc(1, sizeof(*j));
	const char *id = jv_str(jv_get(req, "sandbox"));

	if (j == NULL)
		return ERR_INTERNAL(e, "out of memory");
	snprintf(j->id, sizeof(j->id), "%s", id ? id : "");
	j->a = a;
	j->max = jv_int(jv_get(req, "bytes_max"));
	j->exclude_deps = jv_is_true(jv_get(req, "exclude_deps"));
	if (agent_stream_start(a, fn, j, &j->fd, fd, e) < 0) {
		free(j);
		return -1;
	}
	return 0;
}

static void
job_end(struct job *j)
{
	close(j->fd);
	agent_worker_done(j->a);
	free(j);
}

static void *
tar_out_main(void *arg)
{
	struct job *j = arg;
	char ws[PATH_MAX];
	struct err e = {0};
	int64_t bytes = 0;
	int dirfd;

	agent_ws_path(j->a, j->id, ws, sizeof(ws));
	if ((dirfd = wsfs_open_dir(ws, ".", &e)) >= 0) {
		if (tar_write_tree(dirfd, j->fd, j->exclude_deps, &bytes, &e) <
		    0)
			log_warn("node agent: tar_out %s: %s", j->id, e.msg);
		close(dirfd);
	} else {
		log_warn("node agent: tar_out %s: %s", j->id, e.msg);
	}
	/* An error shows as a short archive: the reader refuses it. */
	shutdown(j->fd, SHUT_WR);
	job_end(j);
	return NULL;
}

int
agent_op_tar_out(void *arg, const struct nl_peer *p, const struct jv *req,
                 struct jv **ans, int *fd, struct err *e)
{
	char ws[PATH_MAX];

	(void)p;
	(void)ans;
	if (agent_ws_find(arg, jv_str(jv_get(req, "sandbox")), ws, sizeof(ws),
	                  e) < 0)
		return -1;
	return job_start(arg, req, tar_out_main, fd, e);
}

/* path (beneath dirfd) to <data>/trash/nodes/<id>-<tag>-<ms>, whose
 * name goes to dst when given; missing is fine (dst then ""). */
static int
trash_at(struct agent *a, int dirfd, const char *path, const char *id,
         const char *tag, char dst[PATH_MAX + 128], struct err *e)
{
	char to[PATH_MAX + 128];

	snprintf(to, sizeof(to), "%s/trash/nodes", a->cfg->data_dir);
	(void)mkdir(to, 0700);
	snprintf(to, sizeof(to), "%s/trash/nodes/%s-%s-%lld", a->cfg->data_dir,
	         id, tag, (long long)clock_now_ms());
	if (dst != NULL)
		dst[0] = '\0';
	if (renameat(dirfd, path, AT_FDCWD, to) < 0)
		return errno == ENOENT
		           ? 0
		           : ERR_INTERNAL(e, "cannot move %s to the trash: %s",
		                          path, strerror(errno));
	if (dst != NULL)
		snprintf(dst, PATH_MAX + 128, "%s", to);
	return 0;
}

static int
to_trash(struct agent *a, const char *path, const char *id, const char *tag,
         struct err *e)
{
	return trash_at(a, AT_FDCWD, path, id, tag, NULL, e);
}

/* Reads the tar into <ws>.incoming, then renames it into place. */
static int
tar_in_into(struct job *j, int64_t *bytes, struct err *e)
{
	char ws[PATH_MAX], inc[PATH_MAX + 16];
	int fd, rc;

	agent_ws_path(j->a, j->id, ws, sizeof(ws));
	snprintf(inc, sizeof(inc), "%s.incoming", ws);
	if (to_trash(j->a, inc, j->id, "incoming", e) < 0)
		return -1;
	if (mkdir(inc, 0700) < 0 ||
	    (fd = open(inc, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
	        0)
		return ERR_INTERNAL(e, "cannot make %s: %s", inc,
		                    strerror(errno));
	if (fchown(fd, WORKSPACE_UID, WORKSPACE_GID) < 0 && errno != EPERM) {
		close(fd);
		return ERR_INTERNAL(e, "cannot own %s: %s", inc,
		                    strerror(errno));
	}
	rc = tar_read_tree(j->fd, fd, j->max, bytes, e);
	if (rc == 0 && syncfs(fd) < 0)
		rc =
		    ERR_INTERNAL(e, "cannot sync %s: %s", inc, strerror(errno));
	close(fd);
	if (rc < 0) {
		struct err ignored = {0};
		(void)to_trash(j->a, inc, j->id, "refused", &ignored);
		return -1;
	}
	if (to_trash(j->a, ws, j->id, "replaced", e) < 0)
		return -1;
	if (rename(inc, ws) < 0)
		return ERR_INTERNAL(e, "cannot move %s into place: %s", inc,
		                    strerror(errno));
	ws_usage_forget(j->id);
	return 0;
}

/*
 * A tree read in by fn (tar_in's, app_in's), logged as op's failure or
 * as "<what> <id> <done>", then the trailer: the job's whole life on
 * its worker.
 */
static void
read_in(struct job *j, int (*fn)(struct job *, int64_t *, struct err *),
        const char *op, const char *what, const char *done)
{
	struct err e = {0};
	int64_t bytes = 0;

	if (fn(j, &bytes, &e) < 0)
		log_warn("node agent: %s %s: %s", op, j->id, e.msg);
	else
		log_info("node agent: %s %s %s (%lld bytes)", what, j->id, done,
		         (long long)bytes);
	agent_trailer(j->fd, &e, bytes);
	job_end(j);
}

static void *
tar_in_main(void *arg)
{
	read_in(arg, tar_in_into, "tar_in", "workspace", "received");
	return NULL;
}

/* A request's bytes_max: 1 to AGENT_TAR_MAX; -1 with e. */
static int
max_ok(const struct jv *req, struct err *e)
{
	int64_t max = jv_int(jv_get(req, "bytes_max"));

	if (max < 1 || max > AGENT_TAR_MAX)
		return ERR_BAD(e, "bytes_max: 1 to %lld",
		               (long long)AGENT_TAR_MAX);
	return 0;
}

int
agent_op_tar_in(void *arg, const struct nl_peer *p, const struct jv *req,
                struct jv **ans, int *fd, struct err *e)
{
	(void)p;
	(void)ans;
	if (!agent_id_ok(jv_str(jv_get(req, "sandbox"))))
		return ERR_BAD(e, "not a sandbox id");
	if (max_ok(req, e) < 0)
		return -1;
	return job_start(arg, req, tar_in_main, fd, e);
}

struct remover {
	struct agent *a;
	char path[PATH_MAX + 128];
};

static void *
remover_main(void *arg)
{
	struct remover *r = arg;
	struct agent *a = r->a;

	if (copytree_remove(r->path) < 0)
		log_warn("node agent: cannot remove %s (emptied at the next "
		         "start)",
		         r->path);
	free(r);
	agent_worker_done(a);
	return NULL;
}

/*
 * name beneath wfd (workspace/) to the trash, then removed from there
 * (a path of the agent's own, which the sandbox cannot lead elsewhere):
 * at once, or by a worker thread when later (a unary op must answer
 * within the caller's deadline; past the worker cap it stays in the
 * trash until the next start).
 */
static int
drop_at(struct agent *a, int wfd, const char *name, const char *id, bool later,
        struct err *e)
{
	struct remover *r;
	char dst[PATH_MAX + 128];

	if (trash_at(a, wfd, name, id, name, dst, e) < 0)
		return -1;
	if (dst[0] == '\0')
		return 0;
	if (!later) {
		if (copytree_remove(dst) < 0)
			log_warn("node agent: cannot remove %s (emptied at "
			         "the next start)",
			         dst);
		return 0;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return 0;
	r->a = a;
	snprintf(r->path, sizeof(r->path), "%s", dst);
	if (agent_spawn(a, remover_main, r) < 0)
		free(r);
	return 0;
}

/* A step's errno as the trailer's error: 507 for a full disk. */
static int
app_err(int err, const char *what, struct err *e)
{
	if (err == ENOSPC || err == EDQUOT)
		return err_set(e, 507, "insufficient_storage",
		               "the disk is full (%s)", what);
	return ERR_INTERNAL(e, "%s: %s", what, strerror(err));
}

/* The tar into app.new beneath wfd (made here, synced); -1 with e. */
static int
app_read(struct job *j, int wfd, int64_t *bytes, struct err *e)
{
	int fd, rc;

	if (mkdirat(wfd, "app.new", 0755) < 0 ||
	    (fd = openat(wfd, "app.new",
	                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return app_err(errno, "cannot make app.new", e);
	if (fchown(fd, WORKSPACE_UID, WORKSPACE_GID) < 0 && errno != EPERM)
		rc = app_err(errno, "cannot own app.new", e);
	else
		rc = tar_read_tree(j->fd, fd, j->max, bytes, e);
	if (rc == 0 && syncfs(fd) < 0)
		rc = app_err(errno, "cannot sync app.new", e);
	close(fd);
	return rc;
}

/* The workspace/ directory of sandbox id, opened beneath its workspace
 * (no link followed) for reading: every app step is relative to it. */
static int
open_wsdir(struct agent *a, const char *id, struct err *e)
{
	char ws[PATH_MAX];
	int pfd, wfd;

	agent_ws_path(a, id, ws, sizeof(ws));
	if ((pfd = wsfs_open_dir(ws, "workspace", e)) < 0)
		return -1;
	wfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(pfd);
	if (wfd < 0)
		return ERR_INTERNAL(e, "workspace/: %s", strerror(errno));
	return wfd;
}

/* A stale app.new removed, the tar read into a new one; a refused copy
 * removed too. */
static int
app_stage(struct job *j, int64_t *bytes, struct err *e)
{
	int wfd = open_wsdir(j->a, j->id, e), rc;

	if (wfd < 0)
		return -1;
	rc = drop_at(j->a, wfd, "app.new", j->id, false, e);
	if (rc == 0 && (rc = app_read(j, wfd, bytes, e)) < 0)
		(void)drop_at(j->a, wfd, "app.new", j->id, false,
		              &(struct err){0});
	close(wfd);
	return rc;
}

static void *
app_in_main(void *arg)
{
	read_in(arg, app_stage, "app_in", "app of", "staged");
	return NULL;
}

/* app.new exchanged with app beneath wfd, the directory synced. */
static int
app_exchange(int wfd, struct err *e)
{
	struct stat st;

	if (fstatat(wfd, "app.new", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode))
		return ERR_CONFLICT(e, "no app.new staged (app_in first)");
	if (renameat2(wfd, "app.new", wfd, "app", RENAME_EXCHANGE) < 0 &&
	    (errno != ENOENT || renameat(wfd, "app.new", wfd, "app") < 0))
		return app_err(errno, "cannot put the files in place", e);
	if (fsync(wfd) < 0)
		return app_err(errno, "cannot sync workspace/", e);
	return 0;
}

/*
 * The second half of a restore: app.new (app_in's, complete: the
 * control plane wrote the whole tree) exchanged with app, the old tree
 * removed.  With drop, app.new is only removed (the control plane's
 * side of the copy failed).
 */
int
agent_op_app_swap(void *arg, const struct nl_peer *p, const struct jv *req,
                  struct jv **ans, struct err *e)
{
	const char *id = jv_str(jv_get(req, "sandbox"));
	int wfd, rc = 0;

	(void)p;
	if (!agent_id_ok(id))
		return ERR_BAD(e, "not a sandbox id");
	if ((wfd = open_wsdir(arg, id, e)) < 0)
		return -1;
	if (!jv_is_true(jv_get(req, "drop")))
		rc = app_exchange(wfd, e);
	/* the old tree now, or the copy dropped: a failure here leaves
	 * only a stale app.new, which the next app_in removes */
	if (rc == 0)
		(void)drop_at(arg, wfd, "app.new", id, true, &(struct err){0});
	close(wfd);
	ws_usage_forget(id);
	if (rc == 0) {
		*ans = jv_obj();
		log_info("node agent: app of %s %s", id,
		         jv_is_true(jv_get(req, "drop")) ? "left as it was"
		                                         : "replaced");
	}
	return rc;
}

int
agent_op_app_in(void *arg, const struct nl_peer *p, const struct jv *req,
                struct jv **ans, int *fd, struct err *e)
{
	char ws[PATH_MAX];

	(void)p;
	(void)ans;
	if (!agent_id_ok(jv_str(jv_get(req, "sandbox"))))
		return ERR_BAD(e, "not a sandbox id");
	if (max_ok(req, e) < 0 ||
	    agent_ws_find(arg, jv_str(jv_get(req, "sandbox")), ws, sizeof(ws),
	                  e) < 0)
		return -1;
	return job_start(arg, req, app_in_main, fd, e);
}

static void *
image_load_main(void *arg)
{
	struct job *j = arg;
	char msg[DOCKER_MSG_LEN], got[80];
	struct err e = {0};
	int64_t bytes = 0;
	int rc = docker_image_load(j->a->d, j->fd, &bytes, msg);

	if (rc != DOCKER_OK)
		err_set(&e, 502, "docker_error", "image load: %s", msg);
	else if (docker_image_id(j->a->d, j->id, got, msg) != DOCKER_OK ||
	         strcmp(got, j->id) != 0)
		err_set(&e, 502, "docker_error",
		        "image load: %s is not there after it", j->id);
	else
		log_info("node agent: image %.19s loaded (%lld bytes)", j->id,
		         (long long)bytes);
	agent_trailer(j->fd, &e, bytes);
	job_end(j);
	return NULL;
}

int
agent_op_image_load(void *arg, const struct nl_peer *p, const struct jv *req,
                    struct jv **ans, int *fd, struct err *e)
{
	const char *id = jv_str(jv_get(req, "id"));
	struct jv *copy = jv_obj();
	int rc;

	(void)p;
	(void)ans;
	if (id == NULL || strncmp(id, "sha256:", 7) != 0 || strlen(id) != 71 ||
	    strspn(id + 7, "0123456789abcdef") != 64) {
		jv_free(copy);
		return ERR_BAD(e, "id: sha256:<64 hex>");
	}
	jv_set_str(copy, "sandbox", id); /* the job's id field */
	rc = job_start(arg, copy, image_load_main, fd, e);
	jv_free(copy);
	return rc;
}
