/*
 * The agent's stream ops that move bytes in bulk: a workspace out
 * (tar_out) or in (tar_in), and an image in (image_load).  Each hands
 * the nodelink server one end of a socketpair and works on the other
 * end in a worker thread (agent_spawn, capped).
 *
 * tar_in writes into <data>/workspaces/<id>.incoming (a stale one goes
 * to the trash first), through export/tar's hostile-archive reader,
 * stopped at bytes_max; then syncs the filesystem and renames it into
 * place (a workspace already there goes to the trash: it is the stale
 * copy of a sandbox that moved away and back).  The trailer line says
 * how it went, after the client's half-close.
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
	int sv[2];

	if (j == NULL)
		return ERR_INTERNAL(e, "out of memory");
	snprintf(j->id, sizeof(j->id), "%s", id ? id : "");
	j->a = a;
	j->max = jv_int(jv_get(req, "bytes_max"));
	j->exclude_deps = jv_is_true(jv_get(req, "exclude_deps"));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		free(j);
		return ERR_INTERNAL(e, "socketpair: %s", strerror(errno));
	}
	j->fd = sv[0];
	if (agent_spawn(a, fn, j) < 0) {
		close(sv[0]);
		close(sv[1]);
		free(j);
		return err_set(e, 429, "rate_limited",
		               "the node agent has as many streams as it may");
	}
	*fd = sv[1];
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
	struct agent *a = arg;
	char ws[PATH_MAX];
	struct stat st;

	(void)p;
	(void)ans;
	if (!agent_id_ok(jv_str(jv_get(req, "sandbox"))))
		return ERR_BAD(e, "not a sandbox id");
	agent_ws_path(a, jv_str(jv_get(req, "sandbox")), ws, sizeof(ws));
	if (lstat(ws, &st) < 0 || !S_ISDIR(st.st_mode))
		return ERR_NOTFOUND(e, "no workspace of %s on this node",
		                    jv_str(jv_get(req, "sandbox")));
	return job_start(a, req, tar_out_main, fd, e);
}

/* path to <data>/trash/nodes/<id>-<tag>-<ms>; missing is fine. */
static int
to_trash(struct agent *a, const char *path, const char *id, const char *tag,
         struct err *e)
{
	char dst[PATH_MAX + 128];

	snprintf(dst, sizeof(dst), "%s/trash/nodes", a->cfg->data_dir);
	(void)mkdir(dst, 0700);
	snprintf(dst, sizeof(dst), "%s/trash/nodes/%s-%s-%lld",
	         a->cfg->data_dir, id, tag, (long long)clock_now_ms());
	if (rename(path, dst) < 0 && errno != ENOENT)
		return ERR_INTERNAL(e, "cannot move %s to the trash: %s", path,
		                    strerror(errno));
	return 0;
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

static void *
tar_in_main(void *arg)
{
	struct job *j = arg;
	struct err e = {0};
	int64_t bytes = 0;

	if (tar_in_into(j, &bytes, &e) < 0)
		log_warn("node agent: tar_in %s: %s", j->id, e.msg);
	else
		log_info("node agent: workspace %s received (%lld bytes)",
		         j->id, (long long)bytes);
	agent_trailer(j->fd, &e, bytes);
	job_end(j);
	return NULL;
}

int
agent_op_tar_in(void *arg, const struct nl_peer *p, const struct jv *req,
                struct jv **ans, int *fd, struct err *e)
{
	int64_t max = jv_int(jv_get(req, "bytes_max"));

	(void)p;
	(void)ans;
	if (!agent_id_ok(jv_str(jv_get(req, "sandbox"))))
		return ERR_BAD(e, "not a sandbox id");
	if (max < 1 || max > AGENT_TAR_MAX)
		return ERR_BAD(e, "bytes_max: 1 to %lld",
		               (long long)AGENT_TAR_MAX);
	return job_start(arg, req, tar_in_main, fd, e);
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
