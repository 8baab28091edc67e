/*
 * wsnode: a sandbox's workspace, local or on another node.
 *
 * Local (the row's node is ""): the workspace directory is opened with
 * wsfs_open_dir and every path resolved beneath it by wsfs, as the
 * callers did before this module existed.  Remote: one nodelink unary op
 * per call to the node's agent (its address from the nodes table), which
 * resolves the path with the same wsfs on its own data dir.  Bytes cross
 * as base64 inside JSON: a read takes at most NL_WS_CHUNK per op (the
 * answer fits NL_ANS_MAX), a write WSNODE_WRITE_CHUNK (the request
 * header must fit NL_HDR_MAX), so a write larger than one chunk is a
 * truncate then appends, not atomic on the node (a reader there may see
 * it half-written; the files API documents it).
 *
 * Paths are relative to the workspace root (<data>/workspaces/<id>):
 * "workspace/app/…" for the app's files, ".sandboxd/…" for the
 * supervisor's.  Answers from an agent are bounded (nodelink) and
 * checked field by field here; a node is trusted with its own
 * sandboxes' bytes only, which are the sandbox's to forge anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "disk/copytree.h"
#include "lib/b64.h"
#include "lib/limits.h"
#include "nodelink/nodelink.h"
#include "wsnode/internal.h"
#include "ws/usage.h"
#include "ws/workspace.h"
#include "ws/wsfs.h"

int
wsnode_new(struct wsnode **out, const struct config *cfg, struct store *store)
{
	struct wsnode *w = calloc(1, sizeof(*w));
	char shadows[WORKSPACE_PATH_MAX];

	*out = NULL;
	if (w == NULL)
		return -1;
	w->cfg = cfg;
	w->store = store;
	atomic_init(&w->nl, NULL);
	/* A stage of a publish the daemon died in, say. */
	snprintf(shadows, sizeof(shadows), "%s/state/wsshadow", cfg->data_dir);
	copytree_remove(shadows);
	*out = w;
	return 0;
}

void
wsnode_free(struct wsnode *w)
{
	free(w);
}

void
wsnode_set_nodelink(struct wsnode *w, struct nodelink *nl)
{
	atomic_store(&w->nl, nl);
}

bool
wsnode_remote(const struct sandbox *sb)
{
	return sb->node[0] != '\0';
}

int
wsnode_guard(const struct sandbox *sb, const char *what, struct err *e)
{
	if (!wsnode_remote(sb))
		return 0;
	return err_set(e, 409, "sandbox_remote",
	               "%s: the sandbox is on node %s; this does not work "
	               "across nodes yet (drain or move it to use this)",
	               what, sb->node);
}

int
wsnode_guard_id(struct store *s, const char *id, const char *what,
                struct err *e)
{
	struct sandbox sb;

	if (id == NULL || id[0] == '\0' || store_sandbox_get(s, id, &sb) != 0)
		return 0;
	return wsnode_guard(&sb, what, e);
}

int
wsnode_addr(struct wsnode *w, const char *node, char addr[128], struct err *e)
{
	struct node_row row;

	addr[0] = '\0';
	if (atomic_load(&w->nl) == NULL)
		return err_set(e, 503, "node_down",
		               "node %s: no channel to other nodes (the "
		               "orchestrator is not swarm)",
		               node);
	if (store_node_get(w->store, node, &row) != 0)
		return err_set(e, 503, "node_down", "node %s is not known",
		               node);
	if (strcmp(row.status, "down") == 0 || row.addr[0] == '\0')
		return err_set(e, 503, "node_down",
		               "node %s does not answer (its status is %s)",
		               node, row.status[0] ? row.status : "unknown");
	snprintf(addr, 128, "%s", row.addr);
	return 0;
}

/* One unary op to sb's node: {"op": op, "sandbox": id} plus req's keys. */
int
wsnode_call(struct wsnode *w, const char *node, const char *op, struct jv *req,
            struct jv **ans, struct err *e)
{
	char addr[128];
	int rc;

	*ans = NULL;
	jv_set_str(req, "op", op);
	if (wsnode_addr(w, node, addr, e) < 0)
		rc = -1;
	else
		rc = nl_call(atomic_load(&w->nl), addr, NL_ROLE_NODE, req, ans,
		             NL_CALL_MS, e);
	jv_free(req);
	return rc;
}

int
wsnode_git_dial(struct wsnode *w, const struct sandbox *sb, int *fd,
                struct err *e)
{
	struct jv *req = jv_obj();
	char addr[128];
	int rc = -1;

	*fd = -1;
	jv_set_str(req, "op", "git");
	jv_set_str(req, "sandbox", sb->id);
	if (wsnode_addr(w, sb->node, addr, e) == 0)
		rc = nl_stream(atomic_load(&w->nl), addr, NL_ROLE_NODE, req,
		               NULL, fd, e);
	jv_free(req);
	return rc;
}

int
wsnode_git_dial_ref(void *ref, int *fd, struct err *e)
{
	const struct wsnode_ref *r = ref;

	return wsnode_git_dial(r->wn, r->sb, fd, e);
}

/* A request naming sb and path. */
static struct jv *
path_req(const struct sandbox *sb, const char *path)
{
	struct jv *o = jv_obj();

	jv_set_str(o, "sandbox", sb->id);
	jv_set_str(o, "path", path);
	return o;
}

int
wsnode_open_local(struct wsnode *w, const char *id, struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];

	workspace_path(w->cfg->data_dir, id, ws, sizeof(ws));
	return wsfs_open_dir(ws, ".", e);
}

/* ---- read ----------------------------------------------------------- */

static int
local_read(int dirfd, const char *path, int64_t off, size_t max,
           struct buf *out, bool *eof, struct err *e)
{
	struct stat st;
	int64_t left;
	size_t got = 0;
	ssize_t n;
	int fd = wsfs_open_file(dirfd, path, e);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return ERR_INTERNAL(e, "%s: %s", path, strerror(errno));
	}
	left = off < st.st_size ? st.st_size - off : 0;
	if ((int64_t)max > left)
		max = (size_t)left;
	while (got < max) {
		char chunk[65536];
		size_t want =
		    max - got < sizeof(chunk) ? max - got : sizeof(chunk);
		n = pread(fd, chunk, want, off + (int64_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return ERR_INTERNAL(e, "%s: %s", path, strerror(errno));
		}
		if (n == 0)
			break;
		if (buf_append(out, chunk, (size_t)n) < 0) {
			close(fd);
			return ERR_INTERNAL(e, "out of memory");
		}
		got += (size_t)n;
	}
	*eof = off + (int64_t)got >= (int64_t)st.st_size;
	close(fd);
	return 0;
}

/* Appends one ws_read answer's data to out. */
static int
remote_piece(const struct jv *ans, size_t max, struct buf *out, bool *eof,
             struct err *e)
{
	const struct jv *d = jv_get(ans, "data");
	unsigned char *raw;
	long n;

	if (d == NULL || jv_type(d) != JV_STRING ||
	    B64_DEC_MAX(jv_str_len(d)) > max + 3)
		return err_set(
		    e, 502, "sandbox_unavailable",
		    "the node's agent sent a malformed ws_read answer");
	raw = malloc(B64_DEC_MAX(jv_str_len(d)) + 1);
	if (raw == NULL)
		return ERR_INTERNAL(e, "out of memory");
	n = b64_decode(jv_str(d), jv_str_len(d), raw);
	if (n < 0 || (size_t)n > max || buf_append(out, raw, (size_t)n) < 0) {
		free(raw);
		return n < 0 || (size_t)n > max
		           ? err_set(e, 502, "sandbox_unavailable",
		                     "the node's agent sent bad data")
		           : ERR_INTERNAL(e, "out of memory");
	}
	free(raw);
	*eof = jv_is_true(jv_get(ans, "eof")) || n == 0;
	return (int)n;
}

static int
remote_read(struct wsnode *w, const struct sandbox *sb, const char *path,
            int64_t off, size_t max, struct buf *out, bool *eof, struct err *e)
{
	size_t got = 0;

	*eof = false;
	while (got < max && !*eof) {
		size_t want = max - got < NL_WS_CHUNK ? max - got : NL_WS_CHUNK;
		struct jv *req = path_req(sb, path), *ans;
		int n;

		jv_set_int(req, "off", off + (int64_t)got);
		jv_set_int(req, "max", (int64_t)want);
		if (wsnode_call(w, sb->node, "ws_read", req, &ans, e) < 0)
			return -1;
		n = remote_piece(ans, want, out, eof, e);
		jv_free(ans);
		if (n < 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

int
wsnode_read(struct wsnode *w, const struct sandbox *sb, const char *path,
            int64_t off, size_t max, struct buf *out, bool *eof, struct err *e)
{
	int dirfd, rc;

	*eof = false;
	if (off < 0)
		return ERR_BAD(e, "a read's offset is not negative");
	if (wsnode_remote(sb))
		return remote_read(w, sb, path, off, max, out, eof, e);
	if ((dirfd = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	rc = local_read(dirfd, path, off, max, out, eof, e);
	close(dirfd);
	return rc;
}

/* ---- write ---------------------------------------------------------- */

static int
remote_write(struct wsnode *w, const struct sandbox *sb, const char *path,
             const void *data, size_t len, unsigned mode, struct err *e)
{
	const unsigned char *p = data;
	size_t off = 0;
	char *text = malloc(B64_ENC_LEN(WSNODE_WRITE_CHUNK) + 1);

	if (text == NULL)
		return ERR_INTERNAL(e, "out of memory");
	do {
		size_t n = len - off < WSNODE_WRITE_CHUNK ? len - off
		                                          : WSNODE_WRITE_CHUNK;
		struct jv *req = path_req(sb, path), *ans;
		b64_encode(p + off, n, text);
		jv_set_str(req, "data", text);
		jv_set_int(req, "off", (int64_t)off);
		jv_set_int(req, "mode", (int64_t)mode);
		jv_set_bool(req, "truncate", off == 0);
		if (wsnode_call(w, sb->node, "ws_write", req, &ans, e) < 0) {
			free(text);
			return -1;
		}
		jv_free(ans);
		off += n;
	} while (off < len);
	free(text);
	return 0;
}

int
wsnode_write(struct wsnode *w, const struct sandbox *sb, const char *path,
             const void *data, size_t len, unsigned mode, struct err *e)
{
	int dirfd, rc;

	if (wsnode_remote(sb))
		return remote_write(w, sb, path, data, len, mode, e);
	if ((dirfd = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	/* 0600 is a secret's (a task's env); anything else the default */
	if ((mode & 0077) == 0)
		rc = wsfs_write_secret(dirfd, path, data, len, WORKSPACE_UID,
		                       WORKSPACE_GID, e);
	else
		rc = wsfs_write(dirfd, path, data, len, WORKSPACE_UID,
		                WORKSPACE_GID, e);
	close(dirfd);
	return rc;
}

/* ---- stat, delete, mkdir -------------------------------------------- */

static const char *
type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "link";
	return "other";
}

int
wsnode_stat(struct wsnode *w, const struct sandbox *sb, const char *path,
            char type[8], int64_t *size, int64_t *mtime, struct err *e)
{
	struct jv *ans;
	struct stat st;
	int dirfd, fd;

	if (wsnode_remote(sb)) {
		const char *t;
		if (wsnode_call(w, sb->node, "ws_stat", path_req(sb, path),
		                &ans, e) < 0)
			return -1;
		t = jv_str(jv_get(ans, "type"));
		snprintf(type, 8, "%s",
		         t && (strcmp(t, "file") == 0 ||
		               strcmp(t, "dir") == 0 || strcmp(t, "link") == 0)
		             ? t
		             : "other");
		*size = jv_int(jv_get(ans, "size"));
		*mtime = jv_int(jv_get(ans, "mtime"));
		jv_free(ans);
		return 0;
	}
	if ((dirfd = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	fd = wsfs_openat(dirfd, path, O_PATH | O_NOFOLLOW, 0);
	close(dirfd);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return errno == ENOENT || errno == ENOTDIR
		           ? ERR_NOTFOUND(e, "%s does not exist", path)
		           : ERR_BAD(e, "%s cannot be opened: %s", path,
		                     strerror(errno));
	}
	close(fd);
	snprintf(type, 8, "%s", type_name(st.st_mode));
	*size = st.st_size;
	*mtime = st.st_mtim.tv_sec;
	return 0;
}

/* A remote op answering {} on a path. */
static int
remote_simple(struct wsnode *w, const struct sandbox *sb, const char *op,
              const char *path, struct err *e)
{
	struct jv *ans;

	if (wsnode_call(w, sb->node, op, path_req(sb, path), &ans, e) < 0)
		return -1;
	jv_free(ans);
	return 0;
}

int
wsnode_delete(struct wsnode *w, const struct sandbox *sb, const char *path,
              struct err *e)
{
	int dirfd, rc;

	if (wsnode_remote(sb))
		return remote_simple(w, sb, "ws_delete", path, e);
	if ((dirfd = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	rc = wsfs_remove(dirfd, path, true, e);
	close(dirfd);
	return rc;
}

int
wsnode_mkdir(struct wsnode *w, const struct sandbox *sb, const char *path,
             struct err *e)
{
	int dirfd, rc;

	if (wsnode_remote(sb))
		return remote_simple(w, sb, "ws_mkdir", path, e);
	if ((dirfd = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	rc = wsfs_mkdirs(dirfd, path, WORKSPACE_UID, WORKSPACE_GID, e);
	close(dirfd);
	return rc;
}

int
wsnode_rename(struct wsnode *w, const struct sandbox *sb, const char *dir,
              const char *from, const char *to, struct err *e)
{
	struct jv *req, *ans;
	int root, rc;

	if (wsnode_remote(sb)) {
		req = jv_obj();
		jv_set_str(req, "sandbox", sb->id);
		jv_set_str(req, "dir", dir);
		jv_set_str(req, "from", from);
		jv_set_str(req, "to", to);
		if (wsnode_call(w, sb->node, "ws_rename", req, &ans, e) < 0)
			return -1;
		jv_free(ans);
		return 0;
	}
	if ((root = wsnode_open_local(w, sb->id, e)) < 0)
		return -1;
	rc = wsfs_move_in(root, dir, from, to, WORKSPACE_UID, WORKSPACE_GID, e);
	close(root);
	return rc;
}

int
wsnode_usage(struct wsnode *w, const struct sandbox *sb, int64_t *bytes,
             struct err *e)
{
	char ws[WORKSPACE_PATH_MAX];
	struct jv *req, *ans;

	if (!wsnode_remote(sb)) {
		workspace_path(w->cfg->data_dir, sb->id, ws, sizeof(ws));
		if ((*bytes = ws_usage(sb->id, ws)) < 0)
			return ERR_NOTFOUND(e, "the workspace does not exist");
		return 0;
	}
	req = jv_obj();
	jv_set_str(req, "sandbox", sb->id);
	if (wsnode_call(w, sb->node, "ws_usage", req, &ans, e) < 0)
		return -1;
	*bytes = jv_int(jv_get(ans, "bytes"));
	jv_free(ans);
	return 0;
}
