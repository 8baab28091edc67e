/*
 * wsnode_copy: a whole workspace from one node to another as a tar
 * stream relayed through the control plane (this process), so agents
 * never talk to each other and each holds one certificate-checked
 * channel, to us.
 *
 *   local  -> remote: tar_write_tree of the workspace into the target's
 *                     tar_in stream; its trailer says what it kept.
 *   remote -> local:  the source's tar_out stream read by tar_read_tree
 *                     into <data>/workspaces/<id>.incoming, synced, then
 *                     renamed into place.
 *   remote -> remote: tar_out pumped into tar_in, bytes counted.
 *
 * The target's copy is complete and durable before the source's moves
 * to its trash (local: renamed into <data>/trash, emptied at the next
 * start; remote: ws_trash), so a failure at any step leaves the source
 * whole.  Every read of a peer's stream has a deadline of inactivity.
 *
 * wsnode_put_app is a restore's: a local tree (a snapshot's app/) into
 * the node's app_in stream, which swaps it in for the app's files; the
 * node's answer for a full disk, a tree too large or a refused archive
 * is passed on (the restore answers as it would locally).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "export/tar.h"
#include "lib/clock.h"
#include "lib/limits.h"
#include "nodelink/nodelink.h"
#include "wsnode/internal.h"
#include "ws/workspace.h"

/* A stream that moves no byte this long is given up. */
#define COPY_IDLE_MS 120000

/* Waits until fd is readable; -1 with e past COPY_IDLE_MS. */
static int
wait_readable(int fd, struct err *e)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n;

	do
		n = poll(&p, 1, COPY_IDLE_MS);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return err_set(
		    e, 503, "node_down",
		    "a workspace copy: the node sent nothing for %d s",
		    COPY_IDLE_MS / 1000);
	return 0;
}

/* The trailer's error: with theirs, by its status when it is one a
 * caller answers with (a refused archive, no workspace, too large, a
 * full disk; the code ours, never the node's text), else 502. */
static int
trailer_err(const struct jv *t, bool theirs, struct err *e)
{
	const char *msg = jv_str(jv_get(t, "message"));
	int64_t st = theirs ? jv_int(jv_get(t, "status")) : 0;

	if (msg == NULL)
		msg = "no reason given";
	switch (st) {
	case 400:
		return ERR_BAD(e, "the node: %.200s", msg);
	case 404:
		return ERR_NOTFOUND(e, "the node: %.200s", msg);
	case 413:
		return err_set(e, 413, "too_large", "the node: %.200s", msg);
	case 507:
		return err_set(e, 507, "insufficient_storage",
		               "the node: %.200s", msg);
	default:
		return err_set(e, 502, "sandbox_unavailable",
		               "a workspace copy: the target node refused it: "
		               "%.200s",
		               msg);
	}
}

/* Reads tar_in's trailer {"ok":…,"bytes":N,"message":…}\n after our
 * half-close; 0 when ok (*bytes its count). */
static int
read_trailer(int fd, int64_t *bytes, bool theirs, struct err *e)
{
	char line[WSNODE_TRAILER_MAX + 1] = "", perr[128];
	size_t len = 0;
	struct jv *t;
	ssize_t n;
	int rc;

	while (len < WSNODE_TRAILER_MAX && memchr(line, '\n', len) == NULL) {
		if (wait_readable(fd, e) < 0)
			return -1;
		n = read(fd, line + len, WSNODE_TRAILER_MAX - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	line[len] = '\0';
	t = jv_parse(line, strcspn(line, "\n"), 4, perr, sizeof(perr));
	if (t == NULL || jv_type(t) != JV_OBJECT) {
		jv_free(t);
		return err_set(e, 502, "sandbox_unavailable",
		               "a workspace copy: the target node's agent sent "
		               "no trailer");
	}
	rc = jv_is_true(jv_get(t, "ok")) ? 0 : -1;
	if (rc == 0)
		*bytes = jv_int(jv_get(t, "bytes"));
	else
		trailer_err(t, theirs, e);
	jv_free(t);
	return rc;
}

/* A stalled peer fails the copy's blocking reads and writes (the tar
 * reader and writer block on these sockets) after COPY_IDLE_MS. */
static void
idle_deadline(int fd)
{
	struct timeval tv = {.tv_sec = COPY_IDLE_MS / 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Opens a stream op on node's agent about sandbox id: tar_in and
 * app_in read at most bytes_max, tar_out leaves out the dependency
 * trees when exclude_deps. */
static int
open_stream(struct wsnode *w, const char *node, const char *op, const char *id,
            bool exclude_deps, int64_t bytes_max, int *fd, struct err *e)
{
	struct jv *req = jv_obj();
	char addr[128];
	int rc = -1;

	*fd = -1;
	jv_set_str(req, "op", op);
	jv_set_str(req, "sandbox", id);
	if (strcmp(op, "tar_out") != 0)
		jv_set_int(req, "bytes_max", bytes_max);
	else
		jv_set_bool(req, "exclude_deps", exclude_deps);
	if (wsnode_addr(w, node, addr, e) == 0)
		rc = nl_stream(atomic_load(&w->nl), addr, NL_ROLE_NODE, req,
		               NULL, fd, e);
	if (rc == 0)
		idle_deadline(*fd);
	jv_free(req);
	return rc;
}

/* Copies src to dst until src's EOF; *bytes the count. */
static int
pump(int src, int dst, int64_t *bytes, struct err *e)
{
	char chunk[65536];
	ssize_t n, m;

	for (;;) {
		if (wait_readable(src, e) < 0)
			return -1;
		n = read(src, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_set(
			    e, 503, "node_down",
			    "a workspace copy: reading the source: %s",
			    strerror(errno));
		if (n == 0)
			return 0;
		if (*bytes + n > WSNODE_TAR_MAX)
			return err_set(e, 413, "too_large",
			               "a workspace copy: past %lld bytes",
			               (long long)WSNODE_TAR_MAX);
		for (ssize_t off = 0; off < n; off += m) {
			m = write(dst, chunk + off, (size_t)(n - off));
			if (m < 0 && errno == EINTR)
				m = 0;
			else if (m < 0)
				return err_set(e, 503, "node_down",
				               "a workspace copy: writing the "
				               "target: %s",
				               strerror(errno));
		}
		*bytes += n;
	}
}

/* Moves dir (a path) into <data>/trash under a fresh name. */
static int
to_trash(struct wsnode *w, const char *dir, const char *id, const char *tag,
         struct err *e)
{
	char dst[WORKSPACE_PATH_MAX];

	snprintf(dst, sizeof(dst), "%s/trash/%s-%s-%lld", w->cfg->data_dir, id,
	         tag, (long long)clock_now_ms());
	if (rename(dir, dst) < 0 && errno != ENOENT)
		return ERR_INTERNAL(e, "cannot move %s to the trash: %s", dir,
		                    strerror(errno));
	return 0;
}

/* remote -> local: into <id>.incoming, synced, renamed into place. */
static int
copy_in(struct wsnode *w, const char *id, int src, int64_t *bytes,
        struct err *e)
{
	char ws[WORKSPACE_PATH_MAX], inc[WORKSPACE_PATH_MAX + 16];
	int fd, rc;

	workspace_path(w->cfg->data_dir, id, ws, sizeof(ws));
	snprintf(inc, sizeof(inc), "%s.incoming", ws);
	if (to_trash(w, inc, id, "incoming", e) < 0)
		return -1;
	if (mkdir(inc, 0755) < 0)
		return ERR_INTERNAL(e, "cannot make %s: %s", inc,
		                    strerror(errno));
	if ((fd = open(inc, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return ERR_INTERNAL(e, "cannot open %s: %s", inc,
		                    strerror(errno));
	if (fchown(fd, WORKSPACE_UID, WORKSPACE_GID) < 0 && errno != EPERM) {
		close(fd);
		return ERR_INTERNAL(e, "cannot own %s: %s", inc,
		                    strerror(errno));
	}
	rc = tar_read_tree(src, fd, WSNODE_TAR_MAX, bytes, e);
	if (rc == 0 && syncfs(fd) < 0)
		rc =
		    ERR_INTERNAL(e, "cannot sync %s: %s", inc, strerror(errno));
	close(fd);
	if (rc == 0 && to_trash(w, ws, id, "replaced", e) < 0)
		rc = -1;
	if (rc == 0 && rename(inc, ws) < 0)
		rc = ERR_INTERNAL(e, "cannot move %s into place: %s", inc,
		                  strerror(errno));
	if (rc < 0) {
		struct err ignored = {0};
		to_trash(w, inc, id, "incoming", &ignored);
	}
	return rc;
}

/* local -> remote: the tree into the target's tar_in. */
static int
copy_out(struct wsnode *w, const char *id, int dst, int64_t *bytes,
         struct err *e)
{
	int64_t kept = 0;
	int dirfd = wsnode_open_local(w, id, e), rc;

	if (dirfd < 0)
		return -1;
	rc = tar_write_tree(dirfd, dst, false, bytes, e);
	close(dirfd);
	if (rc < 0)
		return -1;
	shutdown(dst, SHUT_WR);
	return read_trailer(dst, &kept, false, e);
}

static int
source_trash(struct wsnode *w, const char *id, const char *from, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];
	struct jv *req, *ans;

	if (from[0] == '\0') {
		workspace_path(w->cfg->data_dir, id, ws, sizeof(ws));
		return to_trash(w, ws, id, "moved", e);
	}
	req = jv_obj();
	jv_set_str(req, "sandbox", id);
	if (wsnode_call(w, from, "ws_trash", req, &ans, e) < 0)
		return -1;
	jv_free(ans);
	return 0;
}

static bool
id_ok(const char *id)
{
	size_t n = strlen(id);

	return n > 0 && n <= 64 &&
	       strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUV"
	                  "WXYZabcdefghijklmnopqrstuvwxyz") == n;
}

int
wsnode_copy(struct wsnode *w, const char *sandbox_id, const char *from,
            const char *to, bool keep_source, int64_t *bytes, struct err *e)
{
	int src = -1, dst = -1, rc = -1;
	int64_t kept = 0;

	*bytes = 0;
	if (!id_ok(sandbox_id))
		return ERR_BAD(e, "not a sandbox id: %.80s", sandbox_id);
	if (strcmp(from, to) == 0)
		return ERR_BAD(e, "a workspace copy from node \"%s\" to itself",
		               from);
	if (to[0] && open_stream(w, to, "tar_in", sandbox_id, false,
	                         WSNODE_TAR_MAX, &dst, e) < 0)
		goto out;
	if (from[0] == '\0') {
		rc = copy_out(w, sandbox_id, dst, bytes, e);
		goto out;
	}
	if (open_stream(w, from, "tar_out", sandbox_id, false, 0, &src, e) < 0)
		goto out;
	if (to[0] == '\0') {
		rc = copy_in(w, sandbox_id, src, bytes, e);
	} else if ((rc = pump(src, dst, bytes, e)) == 0) {
		shutdown(dst, SHUT_WR);
		rc = read_trailer(dst, &kept, false, e);
	}
out:
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	if (rc == 0 && !keep_source && source_trash(w, sandbox_id, from, e) < 0)
		return -1;
	return rc;
}

int
wsnode_fetch_max(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
                 int64_t max, int dirfd, int64_t *bytes, struct err *e)
{
	int src, rc;

	*bytes = 0;
	if (!wsnode_remote(sb))
		return ERR_BAD(e, "sandbox %s is on this host", sb->id);
	if (open_stream(w, sb->node, "tar_out", sb->id, exclude_deps, 0, &src,
	                e) < 0)
		return -1;
	rc = tar_read_tree(src, dirfd, max, bytes, e);
	close(src);
	return rc;
}

int
wsnode_fetch(struct wsnode *w, const struct sandbox *sb, bool exclude_deps,
             int dirfd, int64_t *bytes, struct err *e)
{
	return wsnode_fetch_max(w, sb, exclude_deps, WSNODE_TAR_MAX, dirfd,
	                        bytes, e);
}

/* app_swap on sb's node: app.new put in place, or only dropped. */
static int
app_swap(struct wsnode *w, const struct sandbox *sb, bool drop, struct err *e)
{
	struct jv *req = jv_obj(), *ans;

	jv_set_str(req, "sandbox", sb->id);
	jv_set_bool(req, "drop", drop);
	if (wsnode_call(w, sb->node, "app_swap", req, &ans, e) < 0)
		return -1;
	jv_free(ans);
	return 0;
}

int
wsnode_put_app(struct wsnode *w, const struct sandbox *sb, const char *srcdir,
               int64_t bytes_max, struct err *e)
{
	struct err werr = {0};
	int64_t bytes = 0, kept = 0;
	int src, dst, wrc, rc;

	if (!wsnode_remote(sb))
		return ERR_BAD(e, "sandbox %s is on this host", sb->id);
	if (bytes_max < 1)
		return ERR_BAD(e, "bytes_max: 1 or more");
	if (bytes_max > WSNODE_TAR_MAX)
		bytes_max = WSNODE_TAR_MAX;
	src = open(srcdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return ERR_INTERNAL(e, "cannot open %s: %s", srcdir,
		                    strerror(errno));
	if (open_stream(w, sb->node, "app_in", sb->id, false, bytes_max, &dst,
	                e) < 0) {
		close(src);
		return -1;
	}
	wrc = tar_write_tree(src, dst, false, &bytes, &werr);
	close(src);
	shutdown(dst, SHUT_WR);
	/* A node that refused the tree part way says why in its trailer:
	 * that is the answer then, rather than our broken write. */
	rc = read_trailer(dst, &kept, true, e);
	close(dst);
	if (rc < 0)
		return -1;
	if (wrc < 0) {
		/* the node holds less than the whole tree: never swapped */
		(void)app_swap(w, sb, true, &(struct err){0});
		*e = werr;
		return -1;
	}
	return app_swap(w, sb, false, e);
}
